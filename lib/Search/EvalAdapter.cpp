//===- EvalAdapter.cpp - CandidateEvaluator over the Eval library ---------===//

#include "optiml/Search/EvalAdapter.h"
#include "optiml/Support/Process.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>

using namespace llvm;

namespace optiml {

GpuEvaluator::~GpuEvaluator() {
  for (auto &F : Pending)
    if (F.valid())
      F.wait();
}

EvalOutcome outcomeFromReport(const EvalReport &R, bool SelfCheck) {
  EvalOutcome O;
  O.Seconds = R.WallSeconds;
  O.Compiled = R.Candidate.Succeeded;
  O.CompileLog = lastLines(R.Candidate.Log, 20);
  O.Notes = R.Notes;
  if (!O.Compiled) {
    O.Failure = "nvcc: " + lastLines(R.Candidate.ErrorSummary, 5);
    return O;
  }
  if (!R.GpuAvailable) {
    O.Failure = "no GPU: " + R.GpuProblem;
    return O;
  }
  VerifyStatus Want =
      SelfCheck ? VerifyStatus::Deterministic : VerifyStatus::Verified;
  O.Verified = R.Verify.Status == Want ||
               (SelfCheck && R.Verify.Status == VerifyStatus::Verified);
  if (!O.Verified)
    O.Failure = std::string(toString(R.Verify.Status)) + ": " +
                R.Verify.Detail;
  for (const SanitizerReport &S : R.Sanitizers)
    if (S.Ran && !S.clean()) {
      O.Verified = false;
      O.Failure = S.Tool + ": " + S.FirstError;
    }

  double Sum = 0, Noise = 0;
  unsigned Replays = 0;
  bool Any = false;
  for (const KernelReport &K : R.Kernels) {
    if (!K.Time.Available)
      continue;
    Any = true;
    Sum += K.Time.MedianMs;
    // SpreadPct is the interquartile range over the median: half of it on
    // each side of the median is the noise band.
    Noise = std::max(Noise, K.Time.SpreadPct / 2);
    Replays = std::max(Replays, K.Time.Samples);
  }
  if (Any) {
    O.Time.Available = true;
    O.Time.MedianMs = Sum;
    O.Time.NoisePct = Noise;
    O.Time.Replays = Replays;
  } else if (O.Verified) {
    O.Failure = R.Kernels.empty() || R.Kernels.front().Time.Problem.empty()
                    ? "no timing of the target kernels"
                    : "no timing: " + R.Kernels.front().Time.Problem;
  }
  if (!R.Kernels.empty() && R.Kernels.front().Metrics.Available) {
    const MetricsReport &M = R.Kernels.front().Metrics;
    O.Metrics = M.Values;
    O.Bound = M.Bound;
    O.Verdict = M.Verdict;
  } else if (!R.Kernels.empty() && !R.Kernels.front().Metrics.Problem.empty()) {
    O.Notes.push_back("metrics unavailable: " +
                      R.Kernels.front().Metrics.Problem);
  }
  return O;
}

Expected<EvalReport> GpuEvaluator::run(const CandidateSpec &C,
                                       bool AgainstOriginal, EvalOptions EO) {
  EvalInput In;
  In.CandidatePath = Opts.OriginalPath;
  In.CandidateSource = C.Source;
  In.CandidateFlags = C.ExtraNvccFlags;
  if (AgainstOriginal)
    In.OriginalPath = Opts.OriginalPath;
  In.Model = Opts.Model;
  EO.PrecisionChanging = C.ChangesPrecision;
  return optiml::evaluate(In, B, EO);
}

Expected<EvalOutcome>
GpuEvaluator::evaluateOriginal(const CandidateSpec &Original) {
  EvalOptions EO = Opts.Eval;
  EO.Sanitize = false;
  auto R = run(Original, /*AgainstOriginal=*/false, EO);
  if (!R)
    return R.takeError();
  if (!R->GpuAvailable)
    return createStringError("a CUDA GPU is needed to measure '%s' (%s)",
                             Opts.OriginalPath.c_str(),
                             R->GpuProblem.c_str());
  return outcomeFromReport(*R, /*SelfCheck=*/true);
}

Expected<EvalOutcome> GpuEvaluator::evaluate(const CandidateSpec &C) {
  EvalOptions EO = Opts.Eval;
  EO.Sanitize = false; // the final check sanitizes the winner
  auto R = run(C, /*AgainstOriginal=*/true, EO);
  if (!R)
    return R.takeError();
  return outcomeFromReport(*R, /*SelfCheck=*/false);
}

static Timing combine(const std::vector<Timing> &Rounds) {
  Timing T;
  std::vector<double> M;
  double Noise = 0;
  for (const Timing &R : Rounds)
    if (R.Available) {
      M.push_back(R.MedianMs);
      Noise = std::max(Noise, R.NoisePct);
      T.Replays += R.Replays;
    }
  if (M.empty())
    return T;
  std::sort(M.begin(), M.end());
  T.Available = true;
  T.MedianMs = M[M.size() / 2];
  // Drift between rounds is noise too.
  double HalfRange = (M.back() - M.front()) / 2 / T.MedianMs * 100;
  T.NoisePct = std::max(Noise, HalfRange);
  return T;
}

Expected<Remeasurement> GpuEvaluator::remeasure(const CandidateSpec &C,
                                                const RemeasureOptions &RO) {
  // Interleaved: original, candidate, original, candidate... so that a
  // change of clock or temperature hits both alike.
  std::vector<Timing> O, Cand;
  Remeasurement Out;
  CandidateSpec Orig{"", {}, false};
  for (unsigned I = 0; I < std::max(1u, RO.Rounds); ++I) {
    EvalOptions EO = Opts.Eval;
    EO.Replays = RO.Replays;
    EO.Metrics = false;
    EO.Sanitize = false;
    // The original, self-checked (its text is the file on disk).
    auto RO1 = run(Orig, /*AgainstOriginal=*/false, EO);
    if (!RO1)
      return RO1.takeError();
    O.push_back(outcomeFromReport(*RO1, true).Time);
    bool Last = I + 1 == std::max(1u, RO.Rounds);
    EO.Sanitize = Last && RO.Sanitize;
    auto RC = run(C, /*AgainstOriginal=*/true, EO);
    if (!RC)
      return RC.takeError();
    EvalOutcome CO = outcomeFromReport(*RC, false);
    Cand.push_back(CO.Time);
    bool VerifyOk = RC->Candidate.Succeeded && RC->GpuAvailable &&
                    RC->Verify.Status == VerifyStatus::Verified;
    if (!VerifyOk && Out.Verified) {
      Out.Verified = false;
      Out.Failure = CO.Failure;
    }
    if (EO.Sanitize) {
      for (const SanitizerReport &S : RC->Sanitizers) {
        if (!S.Ran)
          continue;
        Out.SanitizerRan = true;
        if (!S.clean()) {
          Out.SanitizerClean = false;
          Out.SanitizerDetail = S.Tool + ": " + S.FirstError;
        }
      }
      if (!Out.SanitizerRan)
        Out.SanitizerDetail = Opts.Eval.Runner.ComputeSanitizer.empty()
                                  ? "compute-sanitizer not found"
                                  : "compute-sanitizer did not run";
    }
  }
  Out.Original = combine(O);
  Out.Candidate = combine(Cand);
  return Out;
}

void GpuEvaluator::prefetch(ArrayRef<CandidateSpec> Next) {
  std::vector<BuildRequest> Reqs;
  for (const CandidateSpec &C : Next) {
    BuildRequest R;
    R.SourcePath = Opts.OriginalPath;
    R.Source = C.Source;
    R.ExtraFlags = C.ExtraNvccFlags;
    Reqs.push_back(std::move(R));
  }
  // Finished prefetches are dropped; the builder is thread-safe.
  Pending.erase(std::remove_if(Pending.begin(), Pending.end(),
                               [](std::future<void> &F) {
                                 return F.wait_for(std::chrono::seconds(0)) ==
                                        std::future_status::ready;
                               }),
                Pending.end());
  Pending.push_back(std::async(std::launch::async, [this, Reqs] {
    for (auto &R : B.buildAll(Reqs))
      if (!R)
        consumeError(R.takeError());
  }));
}

std::string GpuEvaluator::describe() const {
  std::string S = "GPU evaluator (nvcc " + B.nvccVersion().str() + ")";
  if (Opts.Eval.Gpus && !Opts.Eval.Gpus->Gpus.empty())
    S += ", GPU " + std::to_string(Opts.Eval.Gpus->Gpus.front().Index) +
         ": " + Opts.Eval.Gpus->Gpus.front().Name;
  return S;
}

} // namespace optiml
