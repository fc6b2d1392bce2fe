//===- Unroll.cpp - #pragma unroll on a loop ------------------------------===//
//
// Inserts `#pragma unroll N` (or a full `#pragma unroll` when the trip count
// is a constant) on its own line before the loop. Unrolling never changes
// results, only code size and scheduling.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace optiml {
namespace {

/// Full unrolls beyond this many iterations bloat code for no gain.
constexpr int64_t MaxFullUnroll = 64;

class Unroll : public Transform {
public:
  /// Launch-independent: it neither reads nor rewrites the launches.
  bool readsLaunches() const override { return false; }
  StringRef kind() const override { return "unroll"; }
  StringRef description() const override {
    return "#pragma unroll N on a loop, or a full unroll when its trip "
           "count is a small constant";
  }
  TargetKind targetKind() const override { return TargetKind::Loop; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec::integer(
        "factor",
        "unroll factor; omit for a full unroll (constant trip "
        "counts only)",
        2, 1024)};
  }

  Error check(const EditContext &Ctx, const Edit &E, const LoopInfo &L,
              std::optional<int64_t> Factor) const {
    if (L.HasUnrollPragma)
      return reject(E, "not-applicable",
                    "loop " + L.Id + " already has an unroll pragma",
                    L.Range.Begin);
    if (L.Range.End.Offset == 0)
      return reject(E, "macro",
                    "loop " + L.Id + " is written inside a macro expansion",
                    L.Range.Begin);
    if (!Factor) {
      if (!L.TripCount)
        return reject(E, "not-applicable",
                      "loop " + L.Id + " has no constant trip count" +
                          (L.Bound.empty() ? std::string()
                                           : " (bound '" + L.Bound + "')") +
                          "; give params.factor for a partial unroll",
                      L.Range.Begin);
      if (*L.TripCount > MaxFullUnroll)
        return reject(E, "not-applicable",
                      "loop " + L.Id + " runs " + Twine(*L.TripCount) +
                          " iterations, too many to unroll fully (at most " +
                          Twine(MaxFullUnroll) + "); give params.factor",
                      L.Range.Begin);
    }
    return Error::success();
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    const LoopInfo *L = Ctx.Model.findLoop(Target.str());
    if (!L) {
      A.Reason = "no such loop";
      return A;
    }
    Edit E{"unroll", Target.str(), {}};
    auto R = resolveLoop(Ctx, E, Target);
    if (!R) {
      A.Reason = rejectionReason(R.takeError());
      return A;
    }
    if (R->S->getBeginLoc().isMacroID()) {
      A.Reason =
          "loop " + Target.str() + " is written inside a macro expansion";
      return A;
    }
    std::optional<int64_t> Factor;
    if (!L->TripCount || *L->TripCount > MaxFullUnroll)
      Factor = 4;
    if (Error Err = check(Ctx, E, *L, Factor)) {
      A.Reason = rejectionReason(std::move(Err));
      return A;
    }
    A.Applies = true;
    if (!Factor) {
      A.Reason = "constant trip count of " + std::to_string(*L->TripCount) +
                 ": can be unrolled fully";
      A.Suggestions.push_back(E);
      if (*L->TripCount > 4) {
        E.Params["factor"] = int64_t(4);
        A.Suggestions.push_back(E);
      }
      return A;
    }
    A.Reason = L->TripCount
                   ? "trip count " + std::to_string(*L->TripCount) +
                         " is too large for a full unroll; a partial one "
                         "applies"
                   : "trip count is not constant; a partial unroll applies";
    for (int64_t F : {4, 2, 8}) {
      E.Params["factor"] = F;
      A.Suggestions.push_back(E);
    }
    return A;
  }

  Expected<clang::tooling::Replacements> apply(const EditContext &Ctx,
                                               const Edit &E) const override {
    auto L = resolveLoop(Ctx, E, E.Target);
    if (!L)
      return L.takeError();
    if (L->S->getBeginLoc().isMacroID())
      return reject(E, "macro",
                    "loop " + E.Target + " is written inside a macro expansion",
                    L->Info->Range.Begin);
    std::optional<int64_t> Factor = E.getInt("factor");
    if (Error Err = check(Ctx, E, *L->Info, Factor))
      return std::move(Err);
    unsigned Begin = L->Info->Range.Begin.Offset;
    std::string Indent = indentationAt(Ctx.Code, Begin);
    size_t LineStart = Ctx.Code.rfind('\n', Begin ? Begin - 1 : 0);
    LineStart = LineStart == StringRef::npos || Begin == 0 ? 0 : LineStart + 1;
    bool OwnLine = Ctx.Code.slice(LineStart, Begin).trim().empty();
    std::string Pragma = "#pragma unroll";
    if (Factor)
      Pragma += " " + std::to_string(*Factor);
    std::string Text = OwnLine ? Pragma + "\n" + Indent
                               : "\n" + Indent + Pragma + "\n" + Indent;
    // Mid-line, the spaces before the loop give way to the new lines.
    unsigned From = Begin;
    while (!OwnLine && From > LineStart &&
           (Ctx.Code[From - 1] == ' ' || Ctx.Code[From - 1] == '\t'))
      --From;
    clang::tooling::Replacements Repls;
    if (Error Err = addReplacement(
            Repls,
            clang::tooling::Replacement(Ctx.FileName, From, Begin - From, Text),
            E))
      return std::move(Err);
    return Repls;
  }

  std::string summary(const Edit &E) const override {
    if (auto F = E.getInt("factor"))
      return "unroll " + E.Target + " by " + std::to_string(*F);
    return "unroll " + E.Target + " fully";
  }
};

} // namespace

std::unique_ptr<Transform> createUnrollTransform() {
  return std::make_unique<Unroll>();
}

} // namespace optiml
