//===- Policy.cpp - Policy plumbing shared by every policy ----------------===//

#include "optiml/Search/Policy.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace optiml {

Policy::~Policy() = default;
EditApplier::~EditApplier() = default;

std::string ApplyOutcome::reason() const {
  if (!Error.empty())
    return Error;
  if (Failures.empty())
    return Applied ? "" : "rejected";
  std::string S = Failures.front().Check + ": " + Failures.front().Message;
  if (Failures.size() > 1)
    S += " (+" + std::to_string(Failures.size() - 1) + " more)";
  return S;
}

static void printParam(raw_ostream &OS, const ParamValue &V) {
  if (auto *I = std::get_if<int64_t>(&V))
    OS << *I;
  else if (auto *D = std::get_if<double>(&V))
    OS << *D;
  else if (auto *B = std::get_if<bool>(&V))
    OS << (*B ? "true" : "false");
  else if (auto *S = std::get_if<std::string>(&V))
    OS << '"' << *S << '"';
  else if (auto *L = std::get_if<std::vector<std::string>>(&V))
    OS << '[' << join(*L, ",") << ']';
}

std::string editKey(const Edit &E) {
  std::string S;
  raw_string_ostream OS(S);
  OS << E.Kind << ' ' << E.Target;
  for (const auto &[Name, V] : E.Params) { // std::map: sorted
    OS << ' ' << Name << '=';
    printParam(OS, V);
  }
  return S;
}

Expected<std::vector<Action>> MixedPolicy::propose(const PolicyContext &Ctx) {
  std::vector<Action> All;
  for (auto &[P, Weight] : Parts) {
    auto As = P->propose(Ctx);
    if (!As)
      return As.takeError();
    for (Action &A : *As) {
      A.Prior *= Weight;
      All.push_back(std::move(A));
    }
  }
  return All;
}

bool MixedPolicy::canProposeMore() const {
  for (auto &Part : Parts)
    if (Part.first->canProposeMore())
      return true;
  return false;
}

} // namespace optiml
