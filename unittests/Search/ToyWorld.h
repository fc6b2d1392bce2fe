//===- ToyWorld.h - A scripted program space for search tests ---*- C++ -*-===//
//
// A "program" is the text "// via <order>\nprogram <letters>" where letters
// are the applied edits, sorted: applying a then b and b then a gives the
// same program (after normalization: the comment and the spacing differ),
// which is what the transposition table must notice. Each letter scales
// the kernel time by a factor; some letters break the program.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_UNITTESTS_SEARCH_TOYWORLD_H
#define OPTIML_UNITTESTS_SEARCH_TOYWORLD_H

#include "optiml/Search/CandidateEvaluator.h"
#include "optiml/Search/Policy.h"
#include <algorithm>
#include <map>
#include <string>

namespace optiml {
namespace toy {

inline std::string letters(llvm::StringRef Code) {
  size_t P = Code.find("program ");
  if (P == llvm::StringRef::npos)
    return "";
  return Code.drop_front(P + 8).trim().str();
}

inline std::string order(llvm::StringRef Code) {
  if (!Code.starts_with("// via "))
    return "";
  return Code.drop_front(7).split('\n').first.str();
}

inline std::string program(llvm::StringRef Letters, llvm::StringRef Order) {
  std::string L = Letters.str();
  std::sort(L.begin(), L.end());
  // Spacing depends on the order too: only normalization makes them equal.
  return "// via " + Order.str() + "\nprogram" +
         std::string(1 + Order.size() % 3, ' ') + L + "\n";
}

inline Edit edit(char C) { return Edit{"add", std::string(1, C), {}}; }

/// Applies "add <letter>"; "add !" fails a check.
class Applier : public EditApplier {
public:
  ApplyOutcome apply(llvm::StringRef Code, const Edit &E) override {
    ++Applies;
    ApplyOutcome R;
    R.Summary = "add " + E.Target;
    if (E.Target == "!") {
      R.Failures.push_back({"signature", "toy.cu", 1, 1, "renames the kernel"});
      return R;
    }
    std::string L = letters(Code);
    if (L.find(E.Target) != std::string::npos) {
      R.Error = "already applied";
      return R;
    }
    R.Applied = true;
    R.NewCode = program(L + E.Target, order(Code) + E.Target);
    R.Diff = "-" + L + "\n+" + letters(R.NewCode) + "\n";
    if (E.Target == "f") {
      R.ChangesPrecision = true;
      R.ExtraNvccFlags.push_back("-use_fast_math");
    }
    return R;
  }
  std::string diff(llvm::StringRef Old, llvm::StringRef New) override {
    return "-" + letters(Old) + "\n+" + letters(New) + "\n";
  }
  unsigned Applies = 0;
};

/// Proposes "add <c>" for each letter of the alphabet not yet applied,
/// with the given priors (default 1).
class ScriptedPolicy : public Policy {
public:
  explicit ScriptedPolicy(std::string Alphabet) : Alphabet(Alphabet) {}
  llvm::StringRef name() const override { return "scripted"; }
  llvm::Expected<std::vector<Action>>
  propose(const PolicyContext &Ctx) override {
    ++Calls;
    std::vector<Action> Out;
    std::string Have = letters(Ctx.Source);
    for (char C : Alphabet) {
      if (Have.find(C) != std::string::npos)
        continue;
      // Not offered once the letter it must precede is applied, nor before
      // the letter it must follow.
      if (auto It = NotAfter.find(C);
          It != NotAfter.end() && Have.find(It->second) != std::string::npos)
        continue;
      if (auto It = OnlyAfter.find(C);
          It != OnlyAfter.end() && Have.find(It->second) == std::string::npos)
        continue;
      Action A;
      A.E = edit(C);
      auto It = Priors.find(C);
      A.Prior = It == Priors.end() ? 1 : It->second;
      A.Origin = "scripted";
      Out.push_back(A);
    }
    return Out;
  }
  std::string Alphabet;
  std::map<char, double> Priors;
  /// Letters offered only before another ('l' before 'v'), or only after
  /// one ('u' after 'v').
  std::map<char, char> NotAfter, OnlyAfter;
  unsigned Calls = 0;
};

/// Time = 10 ms / product of the letters' factors; letters without a
/// factor are 1.0 (within noise). 'x' does not compile, 'y' gives wrong
/// results.
struct World {
  std::map<char, double> Factor;
  double BaseMs = 10;
  double NoisePct = 1;

  StandInEvaluator::Script outcome(llvm::StringRef Source) const {
    std::string L = letters(Source);
    if (L.find('x') != std::string::npos)
      return {StandInEvaluator::compileFailure("error: 'x' undeclared"),
              std::nullopt, true};
    if (L.find('y') != std::string::npos)
      return {StandInEvaluator::verifyFailure(
                  "buffer 'out' differs at [3]: 1 vs 2"),
              std::nullopt, true};
    double Ms = BaseMs;
    for (char C : L) {
      auto It = Factor.find(C);
      if (It != Factor.end())
        Ms /= It->second;
    }
    return {StandInEvaluator::passing(Ms, NoisePct), std::nullopt, true};
  }

  void install(StandInEvaluator &E) const {
    World W = *this;
    E.setFallback([W](llvm::StringRef S) { return W.outcome(S); });
  }
};

inline std::string original() { return program("", ""); }

} // namespace toy
} // namespace optiml

#endif
