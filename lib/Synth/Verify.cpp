//===- Verify.cpp - Building and running candidate programs ---------------===//

#include "optiml/Eval/Builder.h"
#include "optiml/Synth/Synthesize.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>

using namespace llvm;

namespace optiml {
namespace synth {

std::vector<std::string> VerifyCase::args() const {
  std::vector<std::string> A;
  for (const auto &[Name, Value] : Sizes)
    A.push_back(Name + "=" + std::to_string(Value));
  A.push_back("seed=" + std::to_string(Seed));
  return A;
}

/// An edge size for \p V: odd (so no multiple of a block size) and at most
/// 333, so that the host reference stays quick.
static int64_t oddSize(int64_t V) {
  if (V <= 2)
    return V;
  if (V > 333)
    return 333;
  return V % 2 ? V : V - 1;
}

std::vector<VerifyCase> verificationCases(const Spec &S, unsigned Seeds) {
  std::vector<VerifyCase> Cases;
  for (unsigned I = 0; I < std::max(Seeds, 1u); ++I)
    Cases.push_back({"spec sizes, seed " + std::to_string(S.Seed + I), S.Sizes,
                     S.Seed + I});
  auto Add = [&](std::string Label,
                 std::vector<std::pair<std::string, int64_t>> Sizes) {
    if (any_of(Cases, [&](const VerifyCase &C) { return C.Sizes == Sizes; }))
      return;
    Cases.push_back({std::move(Label), std::move(Sizes), S.Seed});
  };
  auto Ones = S.Sizes, Odd = S.Sizes;
  for (auto &P : Ones)
    P.second = 1;
  for (auto &P : Odd)
    P.second = oddSize(P.second);
  Add("edge: every size 1", Ones);
  Add("edge: odd sizes", Odd);
  if (S.Sizes.size() > 1) {
    auto Mixed = Odd;
    Mixed.front().second = 1;
    Add("edge: " + S.Sizes.front().first + "=1", Mixed);
  }
  return Cases;
}

bool Verification::passed() const {
  return Built && !Runs.empty() &&
         all_of(Runs, [](const VerifyRun &R) { return R.Passed; });
}

/// The program's last "optiml-synth: PASS|FAIL" line.
static std::string verdictLine(StringRef Stdout) {
  SmallVector<StringRef, 16> Lines;
  Stdout.split(Lines, '\n');
  for (StringRef L : reverse(Lines))
    if (L.starts_with("optiml-synth: PASS") ||
        L.starts_with("optiml-synth: FAIL"))
      return L.str();
  return "";
}

std::string explainFailure(const Verification &V) {
  if (!V.Built)
    return "it does not compile";
  auto Bad = find_if(V.Runs, [](const VerifyRun &R) { return !R.Passed; });
  if (Bad == V.Runs.end())
    return "it passed every run";
  auto IsSpec = [](const VerifyRun &R) {
    return StringRef(R.Case.Label).starts_with("spec sizes");
  };
  bool EarlierPassed = Bad != V.Runs.begin();
  std::string Run = Bad->Case.Label + " (" + join(Bad->Case.args(), " ") + ")";
  std::string Why;
  if (IsSpec(*Bad) && EarlierPassed)
    Why = "right at the first seed, wrong at " + Run +
          ": its results do not follow the inputs (answers hard-coded, or "
          "state kept between runs)";
  else if (!IsSpec(*Bad) && EarlierPassed) // the spec's sizes come first
    Why = "right at the spec's sizes, wrong at " + Run +
          ": sizes other than the spec's (1, odd sizes) are not all handled";
  else
    Why = "wrong at " + Run;
  std::string Out = Why + "\n" + Bad->Verdict;
  if (!Bad->Output.empty())
    Out += "\n" + Bad->Output;
  return Out;
}

Expected<Verification> verifyProgram(Builder &B, StringRef Path,
                                     StringRef Source, const Spec &S,
                                     const VerifyOptions &Opts) {
  Verification V;
  BuildRequest Req;
  Req.SourcePath = Path.str();
  Req.Source = Source.str();
  auto Built = B.build(Req);
  if (!Built)
    return Built.takeError();
  if (!Built->Succeeded) {
    V.BuildErrors = Built->ErrorSummary.empty() ? lastLines(Built->Log, 20)
                                                : Built->ErrorSummary;
    return V;
  }
  V.Built = true;
  V.Binary = Built->Binary;
  for (VerifyCase &C : verificationCases(S, Opts.Seeds)) {
    RunnerOptions RO = Opts.Runner;
    RO.ProgramArgs = C.args();
    auto Run = runPlain(V.Binary, "synthesize", Opts.Device, RO);
    if (!Run)
      return Run.takeError();
    VerifyRun R;
    R.Case = std::move(C);
    R.Seconds = Run->Process.WallSeconds;
    R.Verdict = verdictLine(Run->Process.Stdout);
    R.Passed = Run->Process.succeeded() &&
               StringRef(R.Verdict).starts_with("optiml-synth: PASS");
    if (R.Verdict.empty() || !R.Passed) {
      if (R.Verdict.empty())
        R.Verdict =
            "the program " + Run->Process.describe() + " without a verdict";
      R.Output = lastLines(Run->Process.Stdout + "\n" + Run->Process.Stderr, 8);
    }
    if (Opts.Log)
      *Opts.Log << "  " << (R.Passed ? "pass" : "FAIL") << "  " << R.Case.Label
                << ": " << join(R.Case.args(), " ") << " ("
                << format("%.1f", R.Seconds) << " s)\n";
    bool Stop = !R.Passed;
    V.Runs.push_back(std::move(R));
    if (Stop)
      break;
  }
  return V;
}

} // namespace synth
} // namespace optiml
