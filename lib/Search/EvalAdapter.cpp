//===- EvalAdapter.cpp - CandidateEvaluator over the Eval library ---------===//

#include "optiml/Search/EvalAdapter.h"
#include "optiml/Eval/DeviceCode.h"
#include "optiml/Search/Search.h"
#include "optiml/Support/FileUtil.h"
#include "optiml/Support/Process.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>

using namespace llvm;

namespace optiml {

GpuEvaluator::~GpuEvaluator() {
  for (auto &F : Pending)
    if (F.valid())
      F.wait();
  if (OwnRefDir && Ref && !Ref->RunDir.empty())
    (void)sys::fs::remove_directories(Ref->RunDir, /*IgnoreErrors=*/true);
}

Timing timingFromReport(const EvalReport &R, bool Original) {
  Timing T;
  double Sum = 0, Noise = 0;
  unsigned Replays = 0;
  for (const KernelReport &K : R.Kernels) {
    const TimingReport *TR = &K.Time;
    if (Original)
      TR = K.OriginalTime ? &*K.OriginalTime : nullptr;
    if (!TR || !TR->Available)
      continue;
    T.Available = true;
    Sum += TR->MedianMs;
    // SpreadPct is the interquartile range over the median: half of it on
    // each side of the median is the noise band.
    Noise = std::max(Noise, TR->SpreadPct / 2);
    Replays = std::max(Replays, TR->Samples);
  }
  if (T.Available) {
    T.MedianMs = Sum;
    T.NoisePct = Noise;
    T.Replays = Replays;
  }
  return T;
}

EvalOutcome outcomeFromReport(const EvalReport &R, bool SelfCheck) {
  EvalOutcome O;
  O.Seconds = R.WallSeconds;
  O.Stages = R.Stages;
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
    O.Failure = std::string(toString(R.Verify.Status)) + ": " + R.Verify.Detail;
  for (const SanitizerReport &S : R.Sanitizers)
    if (S.Ran && !S.clean()) {
      O.Verified = false;
      O.Failure = S.Tool + ": " + S.FirstError;
    }

  O.Time = timingFromReport(R);
  if (!O.Time.Available && O.Verified) {
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
  return optiml::evaluate(In, B, EO, AgainstOriginal && Ref ? &*Ref : nullptr);
}

Error GpuEvaluator::ensureReference() {
  // Made once: an unusable reference is not retried for every candidate
  // (evaluate() then runs the original in full and says why).
  if (Ref)
    return Error::success();
  EvalOptions EO = Opts.Eval;
  EO.Sanitize = false;
  OwnRefDir = EO.RunDir.empty() || !EO.KeepRunDir;
  if (!EO.RunDir.empty()) {
    // Beside the candidates' runs, never overwritten by them.
    SmallString<256> D(EO.RunDir);
    sys::path::append(D, "original");
    EO.RunDir = std::string(D);
  }
  // The original as the file on disk: the same build every comparison uses.
  EvalInput In;
  In.CandidatePath = Opts.OriginalPath;
  In.Model = Opts.Model;
  auto R = prepareReference(In, B, EO);
  if (!R)
    return R.takeError();
  Ref = std::move(*R);
  ++References;
  if (Error E = dropNoisyLast(In, EO))
    return E;
  if (!Ref->Report.GpuAvailable)
    return createStringError("a CUDA GPU is needed to measure '%s' (%s)",
                             Opts.OriginalPath.c_str(),
                             Ref->Report.GpuProblem.c_str());
  Timing T = timingFromReport(Ref->Report);
  if (T.Available) {
    Baseline = T;
    ++Timings;
  }
  SinceRetime = 0;
  // Candidates are timed in their verification run: the baseline too, so
  // that every speedup compares two measurements made the same way.
  if (T.Available && Ref->usable())
    return retime(Opts.Eval.Replays);
  return Error::success();
}

/// The note that says the last launch was dropped, what disagreed there
/// and what it means.
static std::string dropLastNote(const SelfCheckDisagreement &D,
                                unsigned VerifyFirst) {
  return formatv("two runs of the original disagree only at the last launch "
                 "of its targets ({0}), float noise grown over many "
                 "iterations; its first {1} launch(es) of each target agree, "
                 "so verification covers those alone from here on, as with "
                 "--verify-last=false (a candidate's last launch is not "
                 "compared; --verify-last=true keeps it verified and refuses "
                 "this original)",
                 D.Detail, VerifyFirst)
      .str();
}

/// With DropNoisyLast, a reference whose self-check failed only at the last
/// launch of its targets is made again with the last launch unverified
/// (exactly as --verify-last=false would have made it), and every later
/// evaluation and the final check verify the same launches.
Error GpuEvaluator::dropNoisyLast(const EvalInput &In, EvalOptions &EO) {
  if (!Opts.DropNoisyLast || !Opts.Eval.VerifyLast ||
      !Ref->Report.GpuAvailable || Ref->usable())
    return Error::success();
  auto D = disagreesOnlyAtLastLaunch(Ref->SelfCheck, Opts.Eval.VerifyFirst);
  if (!D)
    return Error::success();
  Opts.Eval.VerifyLast = EO.VerifyLast = false;
  Opts.LastDropped = D->Detail;
  // The strict reference's snapshots (its last launch's among them) go.
  (void)sys::fs::remove_directories(Ref->RunDir, /*IgnoreErrors=*/true);
  Ref.reset();
  auto R = prepareReference(In, B, EO);
  if (!R)
    return R.takeError();
  Ref = std::move(*R);
  ++References;
  if (Opts.OnDropLast)
    Opts.OnDropLast(dropLastNote(*D, Opts.Eval.VerifyFirst));
  return Error::success();
}

Error GpuEvaluator::retime(unsigned Replays) {
  EvalOptions EO = Opts.Eval;
  EO.Replays = Replays;
  // The baseline is timed as candidates are (GpuEvaluator::evaluate).
  EO.TimeInVerification = true;
  auto R = retimeOriginal(*Ref, EO);
  if (!R)
    return R.takeError();
  Timing T = timingFromReport(*R);
  ++Timings;
  SinceRetime = 0;
  // A failed timing run keeps the previous baseline.
  if (T.Available)
    Baseline = T;
  return Error::success();
}

Expected<EvalOutcome>
GpuEvaluator::evaluateOriginal(const CandidateSpec &Original) {
  (void)Original; // the file on disk is what every candidate is compared with
  if (Ref && OwnRefDir)
    (void)sys::fs::remove_directories(Ref->RunDir, /*IgnoreErrors=*/true);
  Ref.reset();
  if (Error E = ensureReference())
    return std::move(E);
  EvalOutcome O = outcomeFromReport(Ref->Report, /*SelfCheck=*/true);
  if (O.passed())
    O.Baseline = Baseline;
  return O;
}

Expected<EvalOutcome> GpuEvaluator::evaluate(const CandidateSpec &C) {
  // A resumed search skips evaluateOriginal: the reference is made here.
  if (Error E = ensureReference())
    return std::move(E);
  EvalOptions EO = Opts.Eval;
  EO.Sanitize = false; // the final check sanitizes the winner
  EO.TimeOriginal = false;
  EO.TimeInVerification = true;
  auto R = run(C, /*AgainstOriginal=*/true, EO);
  if (!R)
    return R.takeError();
  EvalOutcome O = outcomeFromReport(*R, /*SelfCheck=*/false);
  if (!R->ReusedReference)
    O.Notes.push_back("the original was run again for this candidate (its "
                      "prepared reference did not apply)");
  ++SinceRetime;
  bool Leader = O.passed() && (FastestMs <= 0 || O.Time.MedianMs < FastestMs) &&
                Baseline.Available && O.Time.MedianMs < Baseline.MedianMs;
  if (O.passed())
    FastestMs =
        FastestMs <= 0 ? O.Time.MedianMs : std::min(FastestMs, O.Time.MedianMs);
  bool Due = Opts.RetimeEvery && SinceRetime >= Opts.RetimeEvery;
  if ((Leader || Due) && Ref->usable()) {
    if (Error E = retime(Opts.Eval.Replays))
      return std::move(E);
    O.Notes.push_back(formatv("original re-timed ({0}): {1:F4} ms",
                              Leader ? "fastest candidate yet" : "periodic",
                              Baseline.MedianMs)
                          .str());
  }
  if (Baseline.Available)
    O.Baseline = Baseline;
  return O;
}

std::string GpuEvaluator::cacheContext() const {
  std::string S;
  raw_string_ostream OS(S);
  auto Text = readFile(Opts.OriginalPath);
  SHA256 H;
  H.update(Text ? StringRef(*Text) : StringRef(Opts.OriginalPath));
  if (!Text)
    consumeError(Text.takeError());
  OS << "original-sha256=" << toHex(H.final(), /*LowerCase=*/true) << "\n";
  const EvalOptions &E = Opts.Eval;
  OS << "kernels=";
  for (const std::string &K : E.Kernels)
    OS << K << ";";
  OS << "\nargs=";
  for (const std::string &A : E.Runner.ProgramArgs)
    OS << A.size() << ":" << A << ";";
  // Only when set, so that keys written before --workdir existed still match.
  if (!E.Runner.ProgramWorkDir.empty())
    OS << "\nworkdir=" << E.Runner.ProgramWorkDir;
  OS << "\nverify-first=" << E.VerifyFirst << " verify-last=" << E.VerifyLast
     << " replays=" << E.Replays << " time-launches=" << E.TimeLaunches
     << " flush-l2=" << E.FlushL2 << " metrics=" << E.Metrics
     << " timeout=" << E.Runner.TimeoutSeconds << " timed-in-verification=1"
     << " precision-scaled-tolerance=1\n";
  OS << "metrics-per-kernel=" << E.MetricsPerKernel
     << " fresh-profiler=" << E.FreshProfiler << "\n";
  OS << "nvcc=" << B.nvccVersion() << "\nnvcc-flags=";
  for (const std::string &F : B.flags())
    OS << F << ";";
  // The program's other sources, by content (only when there are some, so
  // that single-file contexts stay as they were).
  for (const std::string &P : B.extraSources()) {
    SHA256 SH;
    auto SrcText = readFile(P);
    SH.update(SrcText ? StringRef(*SrcText) : StringRef("<unreadable>"));
    if (!SrcText)
      consumeError(SrcText.takeError());
    OS << "\nsource=" << P
       << " sha256=" << toHex(SH.final(), /*LowerCase=*/true);
  }
  OS << "\ngpu=";
  if (E.Gpus && !E.Gpus->Gpus.empty())
    OS << E.Gpus->Gpus.front().Name << " " << E.Gpus->Gpus.front().Arch;
  OS << "\n";
  return S;
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
  // The original's side is a timing run (its reference and self-check
  // were made once); the candidate is verified again in every round.
  if (Error E = ensureReference())
    return std::move(E);
  if (!Ref->usable())
    return createStringError(
        "cannot re-measure against '%s': the original does not pass its own "
        "evaluation (%s)",
        Opts.OriginalPath.c_str(), Ref->SelfCheck.Detail.c_str());
  std::vector<Timing> O, Cand;
  Remeasurement Out;
  for (unsigned I = 0; I < std::max(1u, RO.Rounds); ++I) {
    EvalOptions EO = Opts.Eval;
    EO.Replays = RO.Replays;
    EO.Metrics = false;
    EO.Sanitize = false;
    EO.TimeOriginal = false;
    auto RO1 = retimeOriginal(*Ref, EO);
    if (!RO1)
      return RO1.takeError();
    O.push_back(timingFromReport(*RO1));
    ++Timings;
    bool Last = I + 1 == std::max(1u, RO.Rounds);
    EO.Sanitize = Last && RO.Sanitize;
    // Verified in the first round; later rounds only time it.
    EO.VerifyCandidate = I == 0;
    auto RC = run(C, /*AgainstOriginal=*/true, EO);
    if (!RC)
      return RC.takeError();
    EvalOutcome CO = outcomeFromReport(*RC, false);
    Cand.push_back(CO.Time);
    bool VerifyOk =
        RC->Candidate.Succeeded && RC->GpuAvailable &&
        (!EO.VerifyCandidate || RC->Verify.Status == VerifyStatus::Verified);
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

BuildRequest GpuEvaluator::request(const CandidateSpec &C) const {
  BuildRequest R;
  R.SourcePath = Opts.OriginalPath;
  R.Source = C.Source;
  R.ExtraFlags = C.ExtraNvccFlags;
  return R;
}

static bool ready(const std::shared_future<void> &F) {
  return F.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

void GpuEvaluator::prefetch(ArrayRef<CandidateSpec> Next) {
  std::vector<BuildRequest> Reqs;
  std::vector<std::string> Keys;
  for (const CandidateSpec &C : Next) {
    Reqs.push_back(request(C));
    Keys.push_back(B.cacheKey(Reqs.back(), C.Source));
  }
  // Finished prefetches are dropped; the builder is thread-safe.
  std::lock_guard<std::mutex> Lock(PendingMutex);
  Pending.erase(std::remove_if(Pending.begin(), Pending.end(), ready),
                Pending.end());
  for (auto It = Building.begin(); It != Building.end();)
    It = ready(It->second) ? Building.erase(It) : std::next(It);
  std::shared_future<void> F = std::async(std::launch::async, [this, Reqs] {
                                 for (auto &R : B.buildAll(Reqs))
                                   if (!R)
                                     consumeError(R.takeError());
                               }).share();
  Pending.push_back(F);
  for (const std::string &K : Keys)
    Building[K] = F;
}

std::optional<std::string> GpuEvaluator::codeKey(const CandidateSpec &C) {
  // Without the cache, evaluate() would build the candidate a second time.
  if (!B.options().UseCache)
    return std::nullopt;
  if (!Cuobjdump)
    Cuobjdump = findCuobjdump(B.nvccPath());
  if (Cuobjdump->empty())
    return std::nullopt;
  std::optional<std::string> Host = hostProgramText(C.Source);
  if (!Host)
    return std::nullopt;
  BuildRequest R = request(C);
  // The original is built from its file (evaluateOriginal's build).
  if (C.ExtraNvccFlags.empty()) {
    auto Text = readFile(Opts.OriginalPath);
    if (Text && *Text == C.Source)
      R.Source.clear();
    else if (!Text)
      consumeError(Text.takeError());
  }
  // A prefetch of this build under way is waited for, not repeated.
  std::shared_future<void> InFlight;
  {
    std::lock_guard<std::mutex> Lock(PendingMutex);
    auto It = Building.find(B.cacheKey(R, C.Source));
    if (It != Building.end())
      InFlight = It->second;
  }
  if (InFlight.valid())
    InFlight.wait();
  auto Built = B.build(R);
  if (!Built) {
    consumeError(Built.takeError());
    return std::nullopt;
  }
  if (!Built->Succeeded)
    return std::nullopt;
  auto Code = deviceCode(*Cuobjdump, Built->Binary);
  if (!Code) {
    consumeError(Code.takeError());
    return std::nullopt;
  }
  return compiledCodeKey(*Code, *Host, C.ExtraNvccFlags);
}

std::string GpuEvaluator::describe() const {
  std::string S = "GPU evaluator (nvcc " + B.nvccVersion().str() + ")";
  if (Opts.Eval.Gpus && !Opts.Eval.Gpus->Gpus.empty())
    S += ", GPU " + std::to_string(Opts.Eval.Gpus->Gpus.front().Index) + ": " +
         Opts.Eval.Gpus->Gpus.front().Name;
  if (!Opts.Eval.VerifyLast)
    S += formatv("; verifies the first {0} launch(es) of each target, not the "
                 "last ({1})",
                 Opts.Eval.VerifyFirst,
                 Opts.LastDropped.empty()
                     ? "--verify-last=false"
                     : "dropped: the original's two runs disagree there")
             .str();
  return S;
}

} // namespace optiml
