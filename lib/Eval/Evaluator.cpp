//===- Evaluator.cpp - The judge: build, verify, time, profile ------------===//

#include "optiml/Eval/Evaluator.h"
#include "optiml/Eval/Compare.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

using namespace llvm;

namespace optiml {

using nlohmann::json;

const char *const DefaultMetrics[6] = {
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active"};

const char *toString(VerifyStatus S) {
  switch (S) {
  case VerifyStatus::Verified: return "verified";
  case VerifyStatus::Deterministic: return "deterministic";
  case VerifyStatus::Mismatch: return "mismatch";
  case VerifyStatus::Nondeterministic: return "nondeterministic";
  case VerifyStatus::Failed: return "failed";
  case VerifyStatus::NotRun: return "not-run";
  }
  return "unknown";
}

bool EvalReport::passed() const {
  if (!Candidate.Succeeded || (Original && !Original->Succeeded))
    return false;
  if (Verify.Status != VerifyStatus::Verified &&
      Verify.Status != VerifyStatus::Deterministic)
    return false;
  for (const SanitizerReport &S : Sanitizers)
    if (S.Ran && !S.clean())
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Targets, statistics, verdicts
//===----------------------------------------------------------------------===//

Expected<std::vector<ProbeKernel>> targetKernels(const KernelModel &Model,
                                                 ArrayRef<std::string> Names) {
  auto ToProbe = [](const KernelInfo &K) {
    ProbeKernel P;
    P.Name = K.QualifiedName;
    for (const ParamInfo &Par : K.Params) {
      ProbeParam PP;
      PP.Index = Par.Index;
      PP.Pointer = Par.IsPointer;
      PP.ElementType = Par.ElementType;
      PP.ElementSize = Par.ElementSize;
      PP.Float = Par.IsFloat;
      P.Params.push_back(std::move(PP));
    }
    return P;
  };
  std::vector<ProbeKernel> Out;
  if (Names.empty()) {
    for (const KernelInfo &K : Model.Kernels)
      if (!K.Launches.empty())
        Out.push_back(ToProbe(K));
    if (Out.empty())
      return createStringError(
          inconvertibleErrorCode(),
          "'%s' launches no kernel of its own (no <<<...>>> launch of a "
          "__global__ function defined in it); name one with --kernel",
          Model.File.c_str());
    return Out;
  }
  for (const std::string &N : Names) {
    const KernelInfo *Found = nullptr;
    for (const KernelInfo &K : Model.Kernels)
      if (K.QualifiedName == N || K.Name == N) {
        Found = &K;
        break;
      }
    if (!Found) {
      std::string Known;
      for (const KernelInfo &K : Model.Kernels)
        Known += (Known.empty() ? "" : ", ") + K.QualifiedName;
      return createStringError(inconvertibleErrorCode(),
                               "no kernel '%s' in '%s' (kernels: %s)",
                               N.c_str(), Model.File.c_str(),
                               Known.empty() ? "none" : Known.c_str());
    }
    Out.push_back(ToProbe(*Found));
  }
  return Out;
}

static double percentile(std::vector<double> Sorted, double P) {
  if (Sorted.empty())
    return 0;
  double Pos = P * (Sorted.size() - 1);
  size_t Lo = static_cast<size_t>(std::floor(Pos));
  size_t Hi = std::min(Lo + 1, Sorted.size() - 1);
  double F = Pos - Lo;
  return Sorted[Lo] * (1 - F) + Sorted[Hi] * F;
}

TimingReport summarizeTimes(ArrayRef<double> TimesMs) {
  TimingReport T;
  std::vector<double> S;
  for (double X : TimesMs)
    if (std::isfinite(X) && X > 0)
      S.push_back(X);
  if (S.empty()) {
    T.Problem = "no replay times";
    return T;
  }
  llvm::sort(S);
  T.Available = true;
  T.Samples = S.size();
  T.MedianMs = percentile(S, 0.5);
  T.MinMs = S.front();
  T.MaxMs = S.back();
  T.SpreadPct = T.MedianMs > 0
                    ? 100 * (percentile(S, 0.75) - percentile(S, 0.25)) /
                          T.MedianMs
                    : 0;
  double Mean = 0;
  for (double X : S)
    Mean += X;
  Mean /= S.size();
  double Var = 0;
  for (double X : S)
    Var += (X - Mean) * (X - Mean);
  double Sd = S.size() > 1 ? std::sqrt(Var / (S.size() - 1)) : 0;
  double N = Mean > 0 ? std::pow(1.96 * Sd / (0.01 * Mean), 2) : 0;
  T.ReplaysFor1Pct = std::max(1u, static_cast<unsigned>(std::ceil(N)));
  return T;
}

double knownPeakDramGBs(StringRef GpuName) {
  // Measured device-to-device copy rates (bytes read + written), not the
  // data sheet: they are what a kernel can reach (docs/eval.md).
  if (GpuName.contains("H200"))
    return 4300;
  return 0;
}

void applyMetricsEnvironment(EvalOptions &Opts) {
  auto Read = [](const char *Name, bool &Flag) {
    if (const char *V = std::getenv(Name)) {
      if (StringRef(V) == "1")
        Flag = true;
      else if (StringRef(V) == "0")
        Flag = false;
    }
  };
  Read("OPTIML_METRICS_PER_KERNEL", Opts.MetricsPerKernel);
  Read("OPTIML_PROBE_FRESH_PROFILER", Opts.FreshProfiler);
}

MetricsReport classifyMetrics(const std::map<std::string, double> &M,
                              double PeakDramGBs) {
  MetricsReport R;
  R.Values = M;
  auto Get = [&](const char *Name) -> std::optional<double> {
    auto It = M.find(Name);
    if (It == M.end() || !std::isfinite(It->second))
      return std::nullopt;
    return It->second;
  };
  auto TimeNs = Get("gpu__time_duration.sum");
  auto Rd = Get("dram__bytes_read.sum"), Wr = Get("dram__bytes_write.sum");
  auto Sm = Get("sm__throughput.avg.pct_of_peak_sustained_elapsed");
  auto Mem =
      Get("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
  auto Warps = Get("sm__warps_active.avg.pct_of_peak_sustained_active");
  if (!Sm && !Mem && !(TimeNs && (Rd || Wr))) {
    R.Problem = "the profiler returned none of the throughput metrics";
    return R;
  }
  R.Available = true;
  if (TimeNs && *TimeNs > 0 && (Rd || Wr))
    R.DramGBs = (Rd.value_or(0) + Wr.value_or(0)) / *TimeNs; // B/ns = GB/s
  if (PeakDramGBs > 0 && R.DramGBs > 0)
    R.DramFraction = R.DramGBs / PeakDramGBs;
  R.SmPct = Sm.value_or(-1);
  R.MemPct = Mem.value_or(-1);
  R.WarpsActivePct = Warps.value_or(-1);

  // Memory throughput counts every level (L1, L2, DRAM); the DRAM fraction
  // is the stricter test when the peak is known.
  double MemSide = std::max(R.MemPct, R.DramFraction >= 0 ? 100 * R.DramFraction : -1);
  if (MemSide >= 60 && MemSide >= R.SmPct)
    R.Bound = "memory-bound";
  else if (R.SmPct >= 60)
    R.Bound = "compute-bound";
  else
    R.Bound = "latency-bound";

  std::string Line = R.Bound;
  // Memory throughput is the busiest memory unit's; with DRAM at less than
  // half of it, the unit that limits is on chip (L1/shared memory or L2),
  // which changes what helps (fewer or better-ordered cache accesses rather
  // than fewer DRAM bytes).
  if (R.Bound == "memory-bound" && R.DramFraction >= 0 &&
      100 * R.DramFraction < 0.5 * R.MemPct)
    Line += " (on chip: L1/shared memory or L2, not DRAM)";
  Line += ":";
  raw_string_ostream OS(Line);
  if (R.DramGBs > 0) {
    OS << " DRAM " << formatv("{0:F2}", R.DramGBs / 1000) << " TB/s";
    if (R.DramFraction >= 0)
      OS << " (" << formatv("{0:F0}", 100 * R.DramFraction) << "% of "
         << formatv("{0:F1}", PeakDramGBs / 1000) << " TB/s)";
    OS << ",";
  }
  if (R.MemPct >= 0)
    OS << " memory throughput " << formatv("{0:F0}", R.MemPct) << "% of peak,";
  if (R.SmPct >= 0)
    OS << " SM throughput " << formatv("{0:F0}", R.SmPct) << "% of peak,";
  if (R.WarpsActivePct >= 0)
    OS << " warps active " << formatv("{0:F0}", R.WarpsActivePct) << "%,";
  OS.flush();
  if (!Line.empty() && Line.back() == ',')
    Line.pop_back();
  R.Verdict = Line;
  return R;
}

//===----------------------------------------------------------------------===//
// Judging probe results
//===----------------------------------------------------------------------===//

namespace {

const ProbeKernel *findTarget(ArrayRef<ProbeKernel> Targets,
                              StringRef Demangled) {
  std::string Base = kernelBaseName(Demangled);
  for (const ProbeKernel &K : Targets)
    if (kernelNameMatches(K.Name, Base))
      return &K;
  return nullptr;
}

const ProbeParam *findParam(const ProbeKernel *K, unsigned Index) {
  if (!K)
    return nullptr;
  for (const ProbeParam &P : K->Params)
    if (P.Index == Index)
      return &P;
  return nullptr;
}

std::string paramName(const KernelModel *Model, const ProbeKernel *K,
                      unsigned Index) {
  std::string Name;
  if (Model && K)
    if (const KernelInfo *KI = Model->findKernel(K->Name))
      for (const ParamInfo &P : KI->Params)
        if (P.Index == Index)
          Name = P.Name;
  std::string Type;
  if (const ProbeParam *P = findParam(K, Index))
    Type = P->ElementType;
  std::string Out = "parameter " + std::to_string(Index);
  if (!Type.empty())
    Out += ", " + Type;
  return Name.empty() ? Out : "'" + Name + "' (" + Out + ")";
}

/// One line on a buffer that failed its check.
std::string describeBuffer(const LaunchRecord &L, const BufferCheck &B,
                           const KernelModel *Model, const ProbeKernel *K) {
  std::string S;
  raw_string_ostream OS(S);
  OS << kernelBaseName(L.Kernel) << " launch " << L.Ordinal << ": "
     << paramName(Model, K, B.Param);
  if (B.Word)
    OS << " word " << B.Word;
  OS << ": ";
  if (B.UnexpectedWrite && B.Status == "ok")
    OS << "changed, though the original does not write it (input mutation "
          "or a stray write)";
  else if (B.Status == "mismatch") {
    OS << B.Mismatches << " element(s) differ";
    if (B.FirstDiffIndex)
      OS << ", first at [" << *B.FirstDiffIndex << "]: expected "
         << B.Expected << ", got " << B.Actual;
    if (B.MaxAbsErr > 0)
      OS << " (max abs err " << format("%.3g", B.MaxAbsErr) << ")";
  } else if (B.Status == "size-mismatch")
    OS << "the buffer's size differs from the original's";
  else if (B.Status == "missing-snapshot")
    OS << "the original made no such launch (no reference snapshot)";
  else if (B.Status == "stale-output")
    OS << "right only because the buffer already held the answer (with it "
          "poisoned the result differs)";
  else
    OS << B.Status;
  if (!B.Detail.empty())
    OS << " [" << B.Detail << "]";
  return S;
}

bool bufferFailed(const BufferCheck &B) {
  return B.Status != "ok" || B.UnexpectedWrite;
}

} // namespace

/// The reference against itself: calibrated tolerance, or the buffer that
/// makes the program nondeterministic.
static void judgeSelfCheck(const ProbeResult &Self,
                           ArrayRef<ProbeKernel> Targets,
                           const KernelModel *Model, VerifyReport &V,
                           Tolerance &Calibrated) {
  for (const LaunchRecord &L : Self.Launches) {
    if (!L.Verified)
      continue;
    const ProbeKernel *K = findTarget(Targets, L.Kernel);
    ++V.LaunchesCompared;
    for (const BufferCheck &B : L.Buffers) {
      ++V.BuffersCompared;
      const ProbeParam *P = findParam(K, B.Param);
      ElementType T = P ? elementTypeFor(*P) : ElementType();
      if (B.Status != "ok" && B.Status != "mismatch") {
        if (V.Status != VerifyStatus::Nondeterministic) {
          V.Status = VerifyStatus::Nondeterministic;
          V.Detail = "two runs of the original disagree: " +
                     describeBuffer(L, B, Model, K);
        }
        continue;
      }
      CompareResult Noise;
      Noise.Mismatches = B.Mismatches;
      Noise.FirstDiffIndex = B.FirstDiffIndex;
      Noise.MaxAbsErr = B.MaxAbsErr;
      Noise.MaxRelErr = B.MaxRelErr;
      Noise.Expected = B.Expected;
      Noise.Actual = B.Actual;
      if (B.UnexpectedWrite && !Noise.Mismatches)
        Noise.Mismatches = 1;
      Calibration C = calibrate(T, Tolerance(), Noise);
      if (C.Nondeterministic) {
        if (V.Status != VerifyStatus::Nondeterministic) {
          V.Status = VerifyStatus::Nondeterministic;
          V.Detail = kernelBaseName(L.Kernel) + " launch " +
                     std::to_string(L.Ordinal) + ": " +
                     paramName(Model, K, B.Param) + ": " + C.Reason;
        }
        continue;
      }
      if (B.MaxAbsErr > 0 || B.MaxRelErr > 0)
        V.Notes.push_back(formatv("float noise between two runs of the "
                                  "original in {0} ({1}): max abs {2:G3}, max "
                                  "rel {3:G3}",
                                  kernelBaseName(L.Kernel),
                                  paramName(Model, K, B.Param), B.MaxAbsErr,
                                  B.MaxRelErr)
                              .str());
      Calibrated.RelTol = std::max(Calibrated.RelTol, C.Tol.RelTol);
      Calibrated.AbsTol = std::max(Calibrated.AbsTol, C.Tol.AbsTol);
    }
  }
}

static void judgeCandidate(const ProbeResult &Ref, const ProbeResult &Cand,
                           ArrayRef<ProbeKernel> Targets,
                           const KernelModel *Model, VerifyReport &V) {
  unsigned Failures = 0;
  std::string First;
  std::map<std::pair<std::string, unsigned>, bool> Seen;
  for (const LaunchRecord &L : Cand.Launches) {
    if (!L.Verified)
      continue;
    Seen[{kernelBaseName(L.Kernel), L.Ordinal}] = true;
    const ProbeKernel *K = findTarget(Targets, L.Kernel);
    ++V.LaunchesCompared;
    for (const BufferCheck &B : L.Buffers) {
      ++V.BuffersCompared;
      if (!bufferFailed(B))
        continue;
      if (!Failures++)
        First = describeBuffer(L, B, Model, K);
    }
  }
  for (const LaunchRecord &L : Ref.Launches)
    if (L.Verified && !Seen.count({kernelBaseName(L.Kernel), L.Ordinal}) &&
        !Failures++)
      First = "the candidate never made launch " + std::to_string(L.Ordinal) +
              " of " + kernelBaseName(L.Kernel) + ", which the original made";
  if (Failures) {
    V.Status = VerifyStatus::Mismatch;
    V.Detail = First;
    if (Failures > 1)
      V.Detail += formatv(" (and {0} more)", Failures - 1).str();
    return;
  }
  if (V.LaunchesCompared == 0) {
    V.Status = VerifyStatus::Failed;
    V.Detail = "no launch of the target kernels was verified (does the "
               "program launch them?)";
    return;
  }
  V.Status = VerifyStatus::Verified;
}

//===----------------------------------------------------------------------===//
// The evaluation
//===----------------------------------------------------------------------===//

namespace {

struct StageClock {
  std::mutex Mu;
  std::vector<std::pair<std::string, double>> Stages;
  void add(StringRef Name, double S) {
    std::lock_guard<std::mutex> L(Mu);
    Stages.emplace_back(Name.str(), S);
  }
};

double secondsSince(std::chrono::steady_clock::time_point T) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - T)
      .count();
}

RunSummary summarize(const ProgramRun &R) {
  RunSummary S;
  S.Label = R.Label;
  S.Device = R.Device;
  S.Outcome = R.Process.describe();
  S.Succeeded = R.Process.succeeded();
  S.WallSeconds = R.Process.WallSeconds;
  S.StdoutHash = R.Process.StdoutHash;
  S.StderrTail = lastLines(R.Process.Stderr, 5);
  S.ProbeProblem = R.ProbeProblem;
  if (R.Probe)
    S.ProbeErrors = R.Probe->Errors;
  return S;
}

/// Runs tasks one per GPU at a time; in parallel when several GPUs.
void runTasks(std::vector<std::function<void(unsigned)>> Tasks,
              DevicePool &Pool) {
  if (Pool.size() <= 1) {
    for (auto &T : Tasks) {
      unsigned D = Pool.acquire();
      T(D);
      Pool.release(D);
    }
    return;
  }
  std::vector<std::thread> Threads;
  for (auto &T : Tasks)
    Threads.emplace_back([&Pool, &T] {
      unsigned D = Pool.acquire();
      T(D);
      Pool.release(D);
    });
  for (std::thread &Th : Threads)
    Th.join();
}

BuildSummary toSummary(StringRef Path, const BuildResult &R) {
  BuildSummary S;
  S.Path = Path.str();
  S.Succeeded = R.Succeeded;
  S.CacheHit = R.CacheHit;
  S.Seconds = R.Seconds;
  S.Binary = R.Binary;
  S.Key = R.Key;
  S.ErrorSummary = R.ErrorSummary;
  S.Log = R.Log;
  S.Resources = R.Resources;
  return S;
}

} // namespace

std::string referenceSetup(ArrayRef<ProbeKernel> Targets,
                           const EvalOptions &Opts) {
  ProbeConfig C;
  C.Kernels.assign(Targets.begin(), Targets.end());
  C.VerifyFirst = Opts.VerifyFirst;
  C.VerifyLast = Opts.VerifyLast;
  std::string S = writeProbeConfig(C);
  raw_string_ostream OS(S);
  OS << "\nprobe=" << Opts.Runner.ProbeLibrary
     << "\ncuda=" << Opts.Runner.CudaPath
     << "\nworkdir=" << Opts.Runner.ProgramWorkDir << "\nargs=";
  for (const std::string &A : Opts.Runner.ProgramArgs)
    OS << A.size() << ":" << A << ";";
  return S;
}

/// The first launch of kernel Name in a metrics run that has metrics.
static const LaunchRecord *firstProfiled(const ProbeResult &R, StringRef Name) {
  for (const LaunchRecord &L : R.Launches)
    if (kernelNameMatches(Name, kernelBaseName(L.Kernel)) && !L.Metrics.empty())
      return &L;
  return nullptr;
}

namespace {

/// What a stage of an evaluation says: go on, or the report is final (a
/// build failed, there is no GPU, the reference run failed).
enum class Next { Continue, Finish };

/// A run that ended without an exit status (killed, timed out, not started).
bool runFailed(const ProgramRun &R) {
  return !R.Process.succeeded() && !R.Process.ExitCode.has_value();
}

/// \p Tol widened to the widest tolerance calibration may reach for the
/// targets' floating-point buffers: the self-check measures noise under it.
Tolerance widenToNoiseCeiling(Tolerance Tol, ArrayRef<ProbeKernel> Targets) {
  for (const ProbeKernel &K : Targets)
    for (const ProbeParam &P : K.Params)
      if (P.Pointer) {
        ElementType T = elementTypeFor(P);
        if (!T.isFloatingPoint())
          continue;
        Tolerance Ceil = noiseCeiling(T.Kind);
        Tol.RelTol = std::max(Tol.RelTol, Ceil.RelTol);
        Tol.AbsTol = std::max(Tol.AbsTol, Ceil.AbsTol);
      }
  return Tol;
}

/// The tolerance a candidate is verified under: the calibrated one, widened
/// for edits that declare precision changes.
Tolerance candidateTolerance(Tolerance Tol, ArrayRef<ProbeKernel> Targets,
                             bool PrecisionChanging) {
  if (!PrecisionChanging)
    return Tol;
  for (const ProbeKernel &K : Targets)
    for (const ProbeParam &P : K.Params) {
      ElementType T = elementTypeFor(P);
      if (!P.Pointer || !T.isFloatingPoint())
        continue;
      Tolerance D = defaultTolerance(T.Kind);
      Tol.RelTol = std::max(Tol.RelTol, 10 * D.RelTol);
      Tol.AbsTol = std::max(Tol.AbsTol, 10 * D.AbsTol);
      // Reordered sums: rounding error relative to the buffer's largest
      // value, not to each (possibly cancelled) result.
      Tol.ScaleRelTol = std::max(Tol.ScaleRelTol, 10 * D.RelTol);
    }
  return Tol;
}

/// Kernel \p K's replay times in timing run \p R (the number of its
/// launches in \p Launches when given), or why there are none.
TimingReport timingOf(const std::optional<ProgramRun> &R, const ProbeKernel &K,
                      unsigned *Launches) {
  TimingReport T;
  if (!R) {
    T.Problem = "not run";
    return T;
  }
  if (!R->Probe) {
    T.Problem = "the timing run " + R->Process.describe() +
                (R->ProbeProblem.empty() ? "" : "; " + R->ProbeProblem);
    return T;
  }
  std::vector<double> All;
  unsigned N = 0;
  for (const LaunchRecord &L : R->Probe->Launches)
    if (kernelNameMatches(K.Name, kernelBaseName(L.Kernel))) {
      ++N;
      All.insert(All.end(), L.TimesMs.begin(), L.TimesMs.end());
    }
  if (Launches)
    *Launches = N;
  T = summarizeTimes(All);
  if (!T.Available)
    T.Problem =
        N ? "the probe returned no replay times" +
                (R->Probe->Errors.empty() ? std::string()
                                          : ": " + R->Probe->Errors.front())
          : "the kernel was not launched";
  return T;
}

/// One evaluation (evaluate() and prepareReference()), in named stages. The
/// members are what the stages hand each other; run() says their order, and
/// so the order of the child processes:
///
///   build -> findDevices -> decideReuse -> makeRunDir -> planRuns
///   -> runReference -> [self-check, timing, metrics, sanitizers]
///   -> judgeSelfCheckRun -> captureReference -> verifyCandidate
///   -> collectTimesAndMetrics -> report
///
/// With a prepared reference whose self-check passed (and timing in the
/// verification run asked for), verifyCandidate comes before the other runs:
/// its run times the candidate too, and a candidate that fails it gets no
/// metrics or sanitizer runs.
class Evaluation {
public:
  /// \p Reuse skips the original's reference run and self-check; \p Capture
  /// keeps them (self-only).
  Evaluation(const EvalInput &In, Builder &B, const EvalOptions &Opts,
             const OriginalReference *Reuse, OriginalReference *Capture)
      : In(In), B(B), Opts(Opts), Reuse(Reuse), Capture(Capture),
        Log(Opts.Log) {}

  Expected<EvalReport> run();

private:
  // The stages, in the order run() calls them.
  Error findTargets();
  Expected<Next> build();
  Expected<Next> findDevices();
  void decideReuse();
  Error makeRunDir();
  void planRuns();
  Expected<Next> runReference();
  void runIndependent();
  bool judgeAndVerify();
  void judgeSelfCheckRun();
  void captureReference();
  bool verifyCandidate();
  void collectTimesAndMetrics();

  // What the stages share.
  std::optional<ProgramRun> runProgram(StringRef Binary, ProbeConfig C,
                                       StringRef Label, unsigned Dev);
  void runSanitizerTool(const char *Tool, ArrayRef<std::string> KernelNames,
                        unsigned Dev);
  void addMetricsTasks(std::vector<std::function<void(unsigned)>> &Tasks);
  void addSanitizerTasks(std::vector<std::function<void(unsigned)>> &Tasks);
  void cleanup();
  Error setupFailed();
  EvalReport finish();

  const EvalInput &In;
  Builder &B;
  const EvalOptions &Opts;
  const OriginalReference *Reuse;
  OriginalReference *Capture;
  raw_ostream *Log;

  std::chrono::steady_clock::time_point Start;
  EvalReport Rep;
  StageClock Clock;
  std::vector<ProbeKernel> Targets;

  // Devices and reuse (findDevices, decideReuse).
  std::vector<unsigned> Devices;
  std::optional<DevicePool> Pool;
  std::string Setup; ///< referenceSetup() of this evaluation
  bool Reusing = false;

  // The run directory and the probe's base configuration (makeRunDir,
  // planRuns).
  std::string RunDir;
  bool OwnRunDir = false;
  SmallString<128> SnapDir;
  ProbeConfig Base;
  bool SelfOnly = false;
  bool VerifyFirstRun = false;

  // The runs. Mu guards Rep and the runs while tasks run in parallel.
  std::mutex Mu;
  std::optional<Error> SetupError; ///< the first run that could not be set up
  std::optional<ProgramRun> Ref, Self, CandTime, OrigTime;
  /// One metrics run for all targets, or one per target (MetricsPerKernel).
  std::vector<std::optional<ProgramRun>> MetricsRuns;

  // The self-check's verdict.
  Tolerance Calibrated;
  bool StdoutStable = false;

  const std::string &candidateBinary() const { return Rep.Candidate.Binary; }
  const std::string &referenceBinary() const {
    return Rep.Original ? Rep.Original->Binary : Rep.Candidate.Binary;
  }
};

Expected<EvalReport> Evaluation::run() {
  Start = std::chrono::steady_clock::now();
  Rep.File = In.CandidatePath;
  Rep.Against = In.OriginalPath;
  if (Error E = findTargets())
    return std::move(E);

  // CPU: the builds.
  Expected<Next> N = build();
  if (!N)
    return N.takeError();
  if (*N == Next::Finish)
    return finish();

  // GPU: the reference run, then the others.
  N = findDevices();
  if (!N)
    return N.takeError();
  if (*N == Next::Finish)
    return finish();
  decideReuse();
  if (Error E = makeRunDir())
    return std::move(E);
  planRuns();
  N = runReference();
  if (!N)
    return N.takeError();
  if (*N == Next::Finish)
    return finish();

  if (VerifyFirstRun) {
    if (!judgeAndVerify())
      return setupFailed();
    runIndependent();
  } else {
    runIndependent();
    if (SetupError)
      return setupFailed();
    if (!judgeAndVerify())
      return setupFailed();
  }
  if (SetupError)
    return setupFailed();
  llvm::sort(Rep.Sanitizers,
             [](const SanitizerReport &A, const SanitizerReport &B) {
               return A.Tool < B.Tool;
             });

  collectTimesAndMetrics();
  cleanup();
  return finish();
}

/// The target kernels, from the kernel model (none without one).
Error Evaluation::findTargets() {
  if (!In.Model)
    return Error::success();
  auto T = targetKernels(*In.Model, Opts.Kernels);
  if (!T)
    return T.takeError();
  Targets = std::move(*T);
  return Error::success();
}

/// Builds the candidate and (with --against) the original with nvcc, and
/// records each target's resources. A program that does not compile ends
/// the evaluation with a report.
Expected<Next> Evaluation::build() {
  auto T0 = std::chrono::steady_clock::now();
  std::vector<BuildRequest> Reqs(1);
  Reqs[0].SourcePath = In.CandidatePath;
  Reqs[0].Source = In.CandidateSource;
  Reqs[0].ExtraFlags = In.CandidateFlags;
  if (!In.OriginalPath.empty()) {
    Reqs.emplace_back();
    Reqs[1].SourcePath = In.OriginalPath;
  }
  if (Log)
    *Log << "building " << Reqs.size() << " program(s) with nvcc...\n";
  auto Built = B.buildAll(Reqs);
  for (auto &E : Built)
    if (!E)
      return E.takeError();
  Rep.Candidate = toSummary(In.CandidatePath, *Built[0]);
  if (Built.size() > 1)
    Rep.Original = toSummary(In.OriginalPath, *Built[1]);
  Clock.add("build", secondsSince(T0));
  for (const ProbeKernel &K : Targets) {
    KernelReport KR;
    KR.Name = K.Name;
    for (const KernelResources *R :
         findResources(Rep.Candidate.Resources, K.Name))
      KR.Resources.push_back(*R);
    Rep.Kernels.push_back(std::move(KR));
  }
  if (!Rep.Candidate.Succeeded) {
    Rep.Verify.Detail = "the candidate does not compile";
    return Next::Finish;
  }
  if (Rep.Original && !Rep.Original->Succeeded) {
    Rep.Verify.Detail =
        "the original ('" + In.OriginalPath + "') does not compile";
    return Next::Finish;
  }
  return Next::Continue;
}

/// The GPUs to run on: those asked for (an error if one is missing), else
/// all there are. Without a GPU the evaluation ends with a report.
Expected<Next> Evaluation::findDevices() {
  Devices = Opts.Devices;
  GpuQuery Q = Opts.Gpus ? *Opts.Gpus : queryGpus();
  if (!Devices.empty()) {
    for (unsigned D : Devices)
      if (!llvm::any_of(Q.Gpus, [D](const GpuInfo &G) { return G.Index == D; }))
        return createStringError(inconvertibleErrorCode(),
                                 "GPU %u is not present (%zu GPU(s) found)",
                                 D, Q.Gpus.size());
    Rep.GpuName = Q.Gpus.front().Name;
  } else {
    if (Q.Gpus.empty()) {
      Rep.GpuProblem = Q.Problem;
      Rep.Verify.Detail = "a CUDA GPU is needed to run the program";
      return Next::Finish;
    }
    for (const GpuInfo &G : Q.Gpus)
      Devices.push_back(G.Index);
    Rep.GpuName = Q.Gpus.front().Name;
    if (Q.Gpus.size() > 1)
      Rep.GpuName += " (x" + std::to_string(Q.Gpus.size()) + ")";
  }
  Rep.GpuAvailable = true;
  Pool.emplace(Devices);
  return Next::Continue;
}

/// Whether the prepared reference can stand in for the original's
/// reference run and self-check. It holds only for the same original binary
/// and the same probe setup; anything else runs the original again, and a
/// note says why.
void Evaluation::decideReuse() {
  Setup = referenceSetup(Targets, Opts);
  Reusing = false;
  if (Reuse && Rep.Original) {
    if (!Reuse->usable())
      Rep.Notes.push_back("the prepared reference of the original is not "
                          "usable: the original is run again");
    else if (Reuse->Path != In.OriginalPath ||
             Reuse->BuildKey != Rep.Original->Key)
      Rep.Notes.push_back("the original's build differs from the one its "
                          "reference was made with: the original is run "
                          "again");
    else if (Reuse->Setup != Setup)
      Rep.Notes.push_back("the probe setup (kernels, verified launches, "
                          "program arguments) differs from the reference's: "
                          "the original is run again");
    else if (!sys::fs::is_directory(Reuse->SnapshotDir))
      Rep.Notes.push_back("the reference's snapshots ('" +
                          Reuse->SnapshotDir +
                          "') are gone: the original is run again");
    else
      Reusing = true;
  }
  Rep.ReusedReference = Reusing;
}

/// The run directory (the one asked for, or a fresh one removed at the
/// end unless kept), as an absolute path, and the snapshot directory in it
/// (or the prepared reference's).
Error Evaluation::makeRunDir() {
  RunDir = Opts.RunDir;
  if (RunDir.empty()) {
    SmallString<128> D;
    if (std::error_code EC = sys::fs::createUniqueDirectory("optiml-eval", D))
      return createStringError(EC, "cannot create a run directory: %s",
                               EC.message().c_str());
    RunDir = std::string(D);
    OwnRunDir = true;
  } else if (std::error_code EC = sys::fs::create_directories(RunDir)) {
    return createStringError(EC,
                             "internal error: the tool could not create its "
                             "run directory '%s': %s",
                             RunDir.c_str(), EC.message().c_str());
  }
  // The probe is told where its configuration, result and snapshots are
  // while the program runs elsewhere: only an absolute path means the same
  // there.
  SmallString<256> Abs(RunDir);
  if (std::error_code EC = sys::fs::make_absolute(Abs))
    return createStringError(EC,
                             "internal error: the tool could not make the "
                             "run directory '%s' absolute: %s",
                             RunDir.c_str(), EC.message().c_str());
  RunDir = std::string(Abs);
  Rep.RunDir = RunDir;
  SnapDir = RunDir;
  if (Reusing) {
    SnapDir = Reuse->SnapshotDir;
  } else {
    sys::path::append(SnapDir, "snapshots");
    sys::fs::create_directories(SnapDir);
  }
  return Error::success();
}

/// The probe configuration every run starts from, and which runs there
/// will be.
void Evaluation::planRuns() {
  SelfOnly = !Rep.Original;
  Base.Kernels = Targets;
  Base.VerifyFirst = Opts.VerifyFirst;
  Base.VerifyLast = Opts.VerifyLast;
  Base.SnapshotDir = std::string(SnapDir);
  Base.Replays = Opts.Replays;
  Base.TimeLaunches = Opts.TimeLaunches;
  Base.FlushL2 = Opts.FlushL2;
  // With a prepared reference the self-check's verdict is known before any
  // run. Then (when asked) the candidate's verification run comes first and
  // times the candidate too, sparing one program run, and a candidate that
  // fails it gets no metrics or sanitizer runs.
  VerifyFirstRun = Reusing && Opts.TimeInVerification && Opts.VerifyCandidate &&
                   !SelfOnly &&
                   Reuse->SelfCheck.Status == VerifyStatus::Deterministic;
  MetricsRuns.resize(
      Opts.MetricsPerKernel && Targets.size() > 1 ? Targets.size() : 1);
}

/// The original's reference run, which saves the snapshots every other run
/// is compared with (or the prepared one). If it fails, nothing can be
/// verified: the evaluation ends with a report that says how it failed.
Expected<Next> Evaluation::runReference() {
  if (Reusing) {
    Ref = Reuse->Reference;
  } else {
    ProbeConfig C = Base;
    C.Mode = ProbeMode::Reference;
    runTasks({[&](unsigned D) {
               Ref = runProgram(referenceBinary(), C, "reference", D);
             }},
             *Pool);
  }
  if (SetupError)
    return setupFailed();
  if (!runFailed(*Ref) && Ref->Probe)
    return Next::Continue;
  Rep.Verify.Status = VerifyStatus::Failed;
  Rep.Verify.ReferenceFailed = true;
  // A program that failed by itself left no probe result; saying so again
  // adds nothing.
  bool Redundant =
      !Ref->Process.succeeded() &&
      StringRef(Ref->ProbeProblem).starts_with("the probe wrote no result");
  Rep.Verify.Detail =
      (SelfOnly ? "the program " : "the original program ") +
      Ref->Process.describe() + " in the reference run" +
      (Ref->ProbeProblem.empty() || Redundant ? "" : "; " + Ref->ProbeProblem);
  std::string Tail = StringRef(lastLines(Ref->Process.Stderr, 3)).rtrim().str();
  if (!Tail.empty())
    Rep.Verify.Detail += ":\n" + Tail;
  cleanup();
  return Next::Finish;
}

/// The runs that do not depend on each other: the original's second run
/// (the self-check), the timing runs, the metrics runs and the sanitizers,
/// one per GPU at a time, in that order.
void Evaluation::runIndependent() {
  std::vector<std::function<void(unsigned)>> Tasks;
  if (!Reusing) {
    ProbeConfig C = Base;
    C.Mode = ProbeMode::Candidate;
    // Noise is measured under the widest tolerance calibration may reach.
    C.Tol = widenToNoiseCeiling(C.Tol, Targets);
    Tasks.push_back([this, C](unsigned D) {
      Self = runProgram(referenceBinary(), C, "self-check", D);
    });
  }
  // A candidate that failed its verification run (which timed it) needs
  // nothing more.
  bool Failed = VerifyFirstRun && Rep.Verify.Status != VerifyStatus::Verified;
  if (Failed)
    Rep.Notes.push_back("the candidate failed verification: not profiled");
  ProbeConfig C = Base;
  C.Mode = ProbeMode::Time;
  if (!VerifyFirstRun)
    Tasks.push_back([this, C](unsigned D) {
      CandTime = runProgram(candidateBinary(), C, "time", D);
    });
  if (!SelfOnly && Opts.TimeOriginal)
    Tasks.push_back([this, C](unsigned D) {
      OrigTime = runProgram(referenceBinary(), C, "time-original", D);
    });
  if (Opts.Metrics && !Failed)
    addMetricsTasks(Tasks);
  else if (!Opts.Metrics)
    Rep.Notes.push_back("metrics not collected (--no-metrics)");
  // Sanitizers only add to a verdict already reached.
  if (!Failed)
    addSanitizerTasks(Tasks);
  runTasks(std::move(Tasks), *Pool);
}

/// One metrics run for all targets, or one per target.
void Evaluation::addMetricsTasks(
    std::vector<std::function<void(unsigned)>> &Tasks) {
  ProbeConfig C = Base;
  C.Mode = ProbeMode::Metrics;
  C.Metrics.assign(std::begin(DefaultMetrics), std::end(DefaultMetrics));
  C.FreshProfiler = Opts.FreshProfiler;
  if (MetricsRuns.size() == 1) {
    Tasks.push_back([this, C](unsigned D) {
      MetricsRuns[0] = runProgram(candidateBinary(), C, "metrics", D);
    });
    return;
  }
  for (size_t I = 0; I < Targets.size(); ++I) {
    ProbeConfig One = C;
    One.Kernels = {Targets[I]};
    // Labels name files: the kernel's index, not its name.
    Tasks.push_back([this, One, I](unsigned D) {
      MetricsRuns[I] = runProgram(candidateBinary(), One,
                                  "metrics-" + std::to_string(I + 1), D);
    });
  }
}

/// compute-sanitizer's memcheck and racecheck on the target kernels, where
/// compute-sanitizer is found.
void Evaluation::addSanitizerTasks(
    std::vector<std::function<void(unsigned)>> &Tasks) {
  if (!Opts.Sanitize)
    return;
  if (Opts.Runner.ComputeSanitizer.empty()) {
    Rep.Notes.push_back("compute-sanitizer not found: out-of-bounds accesses "
                        "and races are caught only through outputs");
    return;
  }
  std::vector<std::string> KernelNames;
  for (const ProbeKernel &K : Targets)
    KernelNames.push_back(K.Name);
  for (const char *Tool : {"memcheck", "racecheck"})
    Tasks.push_back([this, Tool, KernelNames](unsigned D) {
      runSanitizerTool(Tool, KernelNames, D);
    });
}

/// Judges the self-check, keeps it for prepareReference(), then (with an
/// original) verifies the candidate; false: a run could not be set up
/// (SetupError).
bool Evaluation::judgeAndVerify() {
  judgeSelfCheckRun();
  if (Capture)
    captureReference();
  return verifyCandidate();
}

/// The self-check's verdict (or the prepared one): two runs of the original
/// agree within calibrated tolerances, exit alike, and verify some launch;
/// whether its stdout is stable enough to compare.
void Evaluation::judgeSelfCheckRun() {
  VerifyReport &V = Rep.Verify;
  if (Reusing) {
    V = Reuse->SelfCheck;
    Calibrated = Reuse->Calibrated;
    StdoutStable = Reuse->StdoutStable;
    return;
  }
  if (!Self || !Self->Probe) {
    V.Status = VerifyStatus::Failed;
    V.Detail = "the second run of the original " +
               (Self ? Self->Process.describe() + "; " + Self->ProbeProblem
                     : std::string("did not run"));
    return;
  }
  V.Status = VerifyStatus::Deterministic;
  judgeSelfCheck(*Self->Probe, Targets, In.Model, V, Calibrated);
  if (V.Status == VerifyStatus::Deterministic &&
      Self->Process.ExitCode != Ref->Process.ExitCode) {
    V.Status = VerifyStatus::Nondeterministic;
    V.Detail = "two runs of the original exit differently (" +
               Ref->Process.describe() + ", then " + Self->Process.describe() +
               ")";
  }
  StdoutStable = Self->Process.StdoutHash == Ref->Process.StdoutHash &&
                 !Ref->Process.stdoutTruncated();
  if (!StdoutStable)
    V.Notes.push_back("the program's stdout differs between two runs (it "
                      "may print timings): stdout is not compared");
  if (V.Status == VerifyStatus::Deterministic && V.LaunchesCompared == 0) {
    V.Status = VerifyStatus::Failed;
    V.Detail = "no launch of the target kernels was verified (does the "
               "program launch them?)";
  }
}

/// Keeps what prepareReference() returns: the reference run, its
/// snapshots and the self-check's verdict.
void Evaluation::captureReference() {
  Capture->Path = In.CandidatePath;
  Capture->BuildKey = Rep.Candidate.Key;
  Capture->Setup = Setup;
  Capture->RunDir = RunDir;
  Capture->SnapshotDir = std::string(SnapDir);
  Capture->Targets = Targets;
  Capture->Devices = Devices;
  Capture->Reference = *Ref;
  Capture->SelfCheck = Rep.Verify;
  Capture->Calibrated = Calibrated;
  Capture->StdoutStable = StdoutStable;
}

/// The candidate against the reference (only with --against, and only when
/// the original agreed with itself): its verification run compares each
/// verified launch's buffers on the GPU, then exit status and stdout are
/// compared. False: the run could not be set up (SetupError).
bool Evaluation::verifyCandidate() {
  VerifyReport &V = Rep.Verify;
  if (SelfOnly) {
    V.CandidateTol = Calibrated;
    V.StdoutCompared = StdoutStable;
    return true;
  }
  if (V.Status != VerifyStatus::Deterministic)
    return true;
  if (!Opts.VerifyCandidate) {
    Rep.Notes.push_back("the candidate was timed, not verified, in this "
                        "evaluation");
    return true;
  }
  VerifyReport CV;
  CV.Notes = V.Notes;
  Tolerance Tol =
      candidateTolerance(Calibrated, Targets, Opts.PrecisionChanging);
  CV.CandidateTol = Tol;
  ProbeConfig C = Base;
  C.Mode = ProbeMode::Candidate;
  C.Tol = Tol;
  C.TimeVerified = VerifyFirstRun;
  std::optional<ProgramRun> Cand;
  runTasks({[&](unsigned D) {
             Cand = runProgram(candidateBinary(), C, "candidate", D);
           }},
           *Pool);
  if (SetupError)
    return false;
  if (VerifyFirstRun)
    CandTime = Cand;
  if (runFailed(*Cand) || !Cand->Probe) {
    CV.Status = VerifyStatus::Failed;
    CV.Detail = "the candidate " + Cand->Process.describe() +
                (Cand->ProbeProblem.empty() ? "" : "; " + Cand->ProbeProblem);
    std::string Tail = lastLines(Cand->Process.Stderr, 3);
    if (!Tail.empty())
      CV.Detail += ":\n" + Tail;
    V = std::move(CV);
    return true;
  }
  judgeCandidate(*Ref->Probe, *Cand->Probe, Targets, In.Model, CV);
  if (Cand->Process.ExitCode != Ref->Process.ExitCode &&
      (CV.Status == VerifyStatus::Verified || CV.LaunchesCompared == 0 ||
       !Cand->Probe->Errors.empty())) {
    // A candidate that failed at run time: say how, with the probe's first
    // error (e.g. an illegal address after the launch).
    CV.Status = VerifyStatus::Failed;
    CV.Detail = "the candidate " + Cand->Process.describe() +
                ", the original " + Ref->Process.describe();
    if (!Cand->Probe->Errors.empty())
      CV.Detail += ": " + Cand->Probe->Errors.front();
  }
  if (StdoutStable) {
    CV.StdoutCompared = true;
    if (CV.Status == VerifyStatus::Verified &&
        Cand->Process.StdoutHash != Ref->Process.StdoutHash) {
      CV.Status = VerifyStatus::Mismatch;
      CV.Detail = "the program's output (stdout) differs from the "
                  "original's";
    }
  }
  V = std::move(CV);
  return true;
}

/// Per target kernel: the candidate's (and the original's) replay times,
/// and the hardware metrics of its first profiled launch with the
/// bottleneck they point to; notes for what could not be measured.
void Evaluation::collectTimesAndMetrics() {
  double Peak = Opts.PeakDramGBs > 0 ? Opts.PeakDramGBs
                                     : knownPeakDramGBs(Rep.GpuName);
  std::string DirtyL2; ///< kernels profiled without a clean L2
  for (size_t I = 0; I < Targets.size(); ++I) {
    KernelReport &KR = Rep.Kernels[I];
    KR.Time = timingOf(CandTime, Targets[I], &KR.Launches);
    if (!SelfOnly && Opts.TimeOriginal)
      KR.OriginalTime = timingOf(OrigTime, Targets[I], nullptr);
    if (!Opts.Metrics)
      continue;
    const std::optional<ProgramRun> &Metrics =
        MetricsRuns[MetricsRuns.size() == 1 ? 0 : I];
    if (!Metrics || !Metrics->Probe) {
      KR.Metrics.Problem =
          Metrics ? "the metrics run " + Metrics->Process.describe() +
                        (Metrics->ProbeProblem.empty()
                             ? ""
                             : "; " + Metrics->ProbeProblem)
                  : "not run";
      continue;
    }
    if (!Metrics->Probe->MetricsUnavailable.empty()) {
      KR.Metrics.Problem = Metrics->Probe->MetricsUnavailable;
      continue;
    }
    const LaunchRecord *Found = firstProfiled(*Metrics->Probe, Targets[I].Name);
    if (!Found) {
      KR.Metrics.Problem = "the profiler returned no metrics for this kernel";
      continue;
    }
    KR.Metrics = classifyMetrics(Found->Metrics, Peak);
    KR.Metrics.Replay = Found->Replay;
    KR.Metrics.L2Cleaned = Found->L2Cleaned;
    KR.Metrics.Passes = Found->Passes;
    KR.Metrics.FreshProfiler = Opts.FreshProfiler;
    KR.Metrics.OwnRun = MetricsRuns.size() > 1;
    if (!Found->Replay.empty() && !Found->L2Cleaned)
      DirtyL2 += (DirtyL2.empty() ? "" : ", ") + Targets[I].Name;
  }
  if (!DirtyL2.empty())
    Rep.Notes.push_back("DRAM bytes written by " + DirtyL2 +
                        " may include write-backs of earlier work: L2 was not "
                        "clean for every profiled pass (see the metrics run's "
                        "probe errors)");
  for (const KernelReport &KR : Rep.Kernels)
    if (!KR.Metrics.Available && Opts.Metrics) {
      Rep.Notes.push_back("hardware metrics unavailable (" +
                          KR.Metrics.Problem + "): timing alone");
      break;
    }
}

/// One program run under the probe, timed as a stage and summarized in the
/// report; none when it could not be set up (the first such error is kept
/// in SetupError). Called from the tasks, so it locks Mu.
std::optional<ProgramRun> Evaluation::runProgram(StringRef Binary,
                                                 ProbeConfig C, StringRef Label,
                                                 unsigned Dev) {
  auto T = std::chrono::steady_clock::now();
  if (Log) {
    std::lock_guard<std::mutex> L(Mu);
    *Log << Label << " run on GPU " << Dev << "...\n";
  }
  auto R = runWithProbe(Binary, std::move(C), RunDir, Label, Dev, Opts.Runner);
  Clock.add(Label, secondsSince(T));
  std::lock_guard<std::mutex> L(Mu);
  if (!R) {
    if (!SetupError)
      SetupError = R.takeError();
    else
      consumeError(R.takeError());
    return std::nullopt;
  }
  Rep.Runs.push_back(summarize(*R));
  return std::move(*R);
}

/// One compute-sanitizer tool on the candidate; a tool that could not run
/// is reported as such.
void Evaluation::runSanitizerTool(const char *Tool,
                                  ArrayRef<std::string> KernelNames,
                                  unsigned Dev) {
  auto T = std::chrono::steady_clock::now();
  if (Log) {
    std::lock_guard<std::mutex> L(Mu);
    *Log << Tool << " run on GPU " << Dev << "...\n";
  }
  auto S = runSanitizer(Tool, candidateBinary(), KernelNames, Dev, Opts.Runner);
  Clock.add(Tool, secondsSince(T));
  std::lock_guard<std::mutex> L(Mu);
  if (!S) {
    SanitizerReport R;
    R.Tool = Tool;
    R.Problem = toString(S.takeError());
    Rep.Sanitizers.push_back(std::move(R));
    return;
  }
  Rep.Sanitizers.push_back(std::move(*S));
}

/// Removes a run directory this evaluation made, unless asked to keep it.
void Evaluation::cleanup() {
  if (OwnRunDir && !Opts.KeepRunDir) {
    sys::fs::remove_directories(RunDir, /*IgnoreErrors=*/true);
    Rep.RunDir.clear();
  }
}

/// A run could not be set up: the evaluation is an error, not a report.
Error Evaluation::setupFailed() {
  cleanup();
  Error E = std::move(*SetupError);
  return E;
}

/// The report, with the stages' times.
EvalReport Evaluation::finish() {
  Rep.Stages = std::move(Clock.Stages);
  Rep.WallSeconds = secondsSince(Start);
  return std::move(Rep);
}

} // namespace

static Expected<EvalReport> evaluateImpl(const EvalInput &In, Builder &B,
                                         const EvalOptions &Opts,
                                         const OriginalReference *Reuse,
                                         OriginalReference *Capture) {
  return Evaluation(In, B, Opts, Reuse, Capture).run();
}

Expected<EvalReport> evaluate(const EvalInput &In, Builder &B,
                              const EvalOptions &Opts,
                              const OriginalReference *Reuse) {
  return evaluateImpl(In, B, Opts, Reuse, nullptr);
}

Expected<OriginalReference>
prepareReference(const EvalInput &In, Builder &B, const EvalOptions &Opts) {
  if (!In.OriginalPath.empty())
    return createStringError(inconvertibleErrorCode(),
                             "prepareReference: the original is evaluated "
                             "against itself (no OriginalPath)");
  EvalOptions O = Opts;
  O.KeepRunDir = true; // the snapshots outlive this call
  O.Sanitize = false;
  OriginalReference Ref;
  auto R = evaluateImpl(In, B, O, nullptr, &Ref);
  if (!R)
    return R.takeError();
  Ref.Path = In.CandidatePath;
  Ref.Report = std::move(*R);
  return std::move(Ref);
}

Expected<EvalReport> retimeOriginal(const OriginalReference &Ref,
                                    const EvalOptions &Opts) {
  auto Start = std::chrono::steady_clock::now();
  EvalReport Rep;
  Rep.File = Rep.Against = Ref.Path;
  if (Ref.Report.Original)
    Rep.Original = Ref.Report.Original;
  Rep.Candidate = Ref.Report.Candidate;
  Rep.GpuAvailable = Ref.Report.GpuAvailable;
  Rep.GpuName = Ref.Report.GpuName;
  Rep.ReusedReference = true;
  if (!Ref.usable())
    return createStringError(inconvertibleErrorCode(),
                             "cannot time '%s' again: its reference run is "
                             "not usable",
                             Ref.Path.c_str());
  ProbeConfig C;
  C.Mode = ProbeMode::Time;
  if (Opts.TimeInVerification) {
    // Timed the way candidates are: after verifying (against its own
    // reference), in the same run.
    C.Mode = ProbeMode::Candidate;
    C.TimeVerified = true;
    C.Tol = Ref.Calibrated;
  }
  C.Kernels = Ref.Targets;
  C.VerifyFirst = Opts.VerifyFirst;
  C.VerifyLast = Opts.VerifyLast;
  C.SnapshotDir = Ref.SnapshotDir;
  C.Replays = Opts.Replays;
  C.TimeLaunches = Opts.TimeLaunches;
  C.FlushL2 = Opts.FlushL2;
  std::vector<unsigned> Devices =
      Opts.Devices.empty() ? Ref.Devices : Opts.Devices;
  DevicePool Pool(Devices.empty() ? std::vector<unsigned>{0} : Devices);
  unsigned D = Pool.acquire();
  if (Opts.Log)
    *Opts.Log << "time-original run on GPU " << D << "...\n";
  auto R = runWithProbe(Ref.Report.Candidate.Binary, C, Ref.RunDir,
                        "time-original", D, Opts.Runner);
  Pool.release(D);
  if (!R)
    return R.takeError();
  Rep.Runs.push_back(summarize(*R));
  for (const ProbeKernel &K : Ref.Targets) {
    KernelReport KR;
    KR.Name = K.Name;
    std::vector<double> All;
    if (R->Probe)
      for (const LaunchRecord &L : R->Probe->Launches)
        if (kernelNameMatches(K.Name, kernelBaseName(L.Kernel))) {
          ++KR.Launches;
          All.insert(All.end(), L.TimesMs.begin(), L.TimesMs.end());
        }
    KR.Time = summarizeTimes(All);
    if (!KR.Time.Available)
      KR.Time.Problem = !R->Probe ? "the timing run " + R->Process.describe() +
                                        (R->ProbeProblem.empty()
                                             ? ""
                                             : "; " + R->ProbeProblem)
                        : KR.Launches ? "the probe returned no replay times"
                                      : "the kernel was not launched";
    Rep.Kernels.push_back(std::move(KR));
  }
  Rep.Verify = Ref.SelfCheck;
  Rep.Stages.emplace_back("time-original", R->Process.WallSeconds);
  Rep.WallSeconds = secondsSince(Start);
  return Rep;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

static void printResources(raw_ostream &OS, ArrayRef<KernelResources> Rs,
                           StringRef Indent) {
  for (const KernelResources &R : Rs) {
    OS << Indent << R.Name << " [" << R.Arch << "]: " << R.Registers
       << " registers, " << R.SharedBytes << " B shared, " << R.StackBytes
       << " B stack";
    if (R.spills())
      OS << ", SPILLS " << R.SpillStoreBytes << " B stores / "
         << R.SpillLoadBytes << " B loads";
    else
      OS << ", no spills";
    OS << "\n";
  }
}

void printReport(raw_ostream &OS, const EvalReport &R) {
  auto PrintBuild = [&](const BuildSummary &B) {
    OS << B.Path << ": ";
    if (!B.Succeeded) {
      OS << "does not compile\n";
      std::string Summary = B.ErrorSummary;
      OS << Summary;
      return;
    }
    OS << "compiles";
    if (B.CacheHit)
      OS << " (cached)";
    else
      OS << formatv(" (nvcc {0:F1} s)", B.Seconds);
    OS << "\n";
  };
  if (R.Original)
    PrintBuild(*R.Original);
  PrintBuild(R.Candidate);
  for (const KernelReport &K : R.Kernels)
    printResources(OS, K.Resources, "  ");
  if (!R.Candidate.Succeeded || (R.Original && !R.Original->Succeeded))
    return;
  if (!R.GpuAvailable) {
    OS << "not run: a CUDA GPU is needed to verify and time it";
    if (!R.GpuProblem.empty())
      OS << " (" << R.GpuProblem << ")";
    OS << "\n";
    return;
  }
  OS << "GPU: " << R.GpuName << "\n";
  const VerifyReport &V = R.Verify;
  switch (V.Status) {
  case VerifyStatus::Verified:
    OS << "verified against " << R.Against << ": " << V.LaunchesCompared
       << " launch(es), " << V.BuffersCompared
       << " buffer(s) agree; exit status "
       << (V.StdoutCompared ? "and stdout match" : "matches") << "\n";
    break;
  case VerifyStatus::Deterministic:
    OS << "deterministic: two runs agree on " << V.LaunchesCompared
       << " launch(es), " << V.BuffersCompared << " buffer(s)"
       << (V.StdoutCompared ? ", exit status and stdout" : "") << "\n";
    break;
  default:
    OS << "NOT VERIFIED (" << toString(V.Status) << "): " << V.Detail << "\n";
    break;
  }
  for (const std::string &N : V.Notes)
    OS << "  note: " << N << "\n";
  for (const KernelReport &K : R.Kernels) {
    OS << K.Name << ": ";
    if (K.Time.Available) {
      OS << formatv("{0:F4} ms median (spread {1:F2}%, {2} replays of {3} "
                    "launch(es), min {4:F4}, max {5:F4})",
                    K.Time.MedianMs, K.Time.SpreadPct, K.Time.Samples,
                    K.Launches ? std::min<unsigned>(K.Launches, 1000) : 0,
                    K.Time.MinMs, K.Time.MaxMs);
      if (K.OriginalTime && K.OriginalTime->Available &&
          K.Time.MedianMs > 0)
        OS << formatv("; original {0:F4} ms: {1:F2}x{2}",
                      K.OriginalTime->MedianMs,
                      K.OriginalTime->MedianMs / K.Time.MedianMs,
                      V.Status == VerifyStatus::Verified
                          ? ""
                          : " (not a speedup: not verified)");
    } else {
      OS << "not timed";
      if (!K.Time.Problem.empty())
        OS << " (" << K.Time.Problem << ")";
    }
    OS << "\n";
    if (K.Metrics.Available)
      OS << "  " << K.Metrics.Verdict << "\n";
  }
  for (const SanitizerReport &S : R.Sanitizers) {
    OS << S.Tool << ": ";
    if (S.clean())
      OS << "clean\n";
    else if (S.Ran)
      OS << *S.Errors << " error(s): " << S.FirstError << "\n";
    else
      OS << "not run (" << S.Problem << ")\n";
  }
  for (const std::string &N : R.Notes)
    OS << "note: " << N << "\n";
  if (R.ReusedReference)
    OS << "note: the original's reference run and self-check were reused\n";
  OS << formatv("evaluation took {0:F1} s (", R.WallSeconds);
  bool First = true;
  for (const auto &[Name, S] : R.Stages) {
    OS << (First ? "" : ", ") << Name << formatv(" {0:F2}", S);
    First = false;
  }
  OS << ")\n";
}

// nlohmann/json writes paths and the output of nvcc, the program and the
// sanitizer, which may hold any bytes: the dump replaces those that are not
// UTF-8 with U+FFFD rather than throwing.

static json toJSON(const TimingReport &T) {
  json O = json::object();
  O["available"] = T.Available;
  if (!T.Available) {
    O["problem"] = T.Problem;
    return O;
  }
  O["median_ms"] = T.MedianMs;
  O["min_ms"] = T.MinMs;
  O["max_ms"] = T.MaxMs;
  O["spread_pct"] = T.SpreadPct;
  O["replays"] = T.Samples;
  O["replays_for_1pct"] = T.ReplaysFor1Pct;
  return O;
}

static json toJSON(const BuildSummary &B) {
  json O = json::object();
  O["path"] = B.Path;
  O["compiles"] = B.Succeeded;
  O["cached"] = B.CacheHit;
  O["seconds"] = B.Seconds;
  if (!B.Succeeded)
    O["errors"] = B.ErrorSummary;
  json Rs = json::array();
  for (const KernelResources &R : B.Resources) {
    json RO = json::object();
    RO["kernel"] = R.Name;
    RO["mangled"] = R.Mangled;
    RO["arch"] = R.Arch;
    RO["registers"] = R.Registers;
    RO["spill_stores"] = R.SpillStoreBytes;
    RO["spill_loads"] = R.SpillLoadBytes;
    RO["shared_bytes"] = R.SharedBytes;
    RO["stack_bytes"] = R.StackBytes;
    Rs.push_back(std::move(RO));
  }
  O["resources"] = std::move(Rs);
  return O;
}

static json toJSON(const VerifyReport &V) {
  json O = json::object();
  O["status"] = toString(V.Status);
  O["launches"] = V.LaunchesCompared;
  O["buffers"] = V.BuffersCompared;
  O["stdout_compared"] = V.StdoutCompared;
  O["rel_tol"] = V.CandidateTol.RelTol;
  O["abs_tol"] = V.CandidateTol.AbsTol;
  O["scale_rel_tol"] = V.CandidateTol.ScaleRelTol;
  if (!V.Detail.empty())
    O["detail"] = V.Detail;
  O["notes"] = V.Notes;
  return O;
}

static json toJSON(const MetricsReport &M) {
  json O = json::object();
  O["available"] = M.Available;
  if (M.Available) {
    O["bound"] = M.Bound;
    O["verdict"] = M.Verdict;
    O["dram_gbs"] = M.DramGBs;
    if (M.DramFraction >= 0)
      O["dram_fraction"] = M.DramFraction;
    json Vals = json::object();
    for (const auto &[Name, Val] : M.Values)
      Vals[Name] = Val;
    O["values"] = std::move(Vals);
    json C = json::object();
    C["replay"] = M.Replay;
    C["l2_cleaned"] = M.L2Cleaned;
    C["passes"] = M.Passes;
    C["profiler"] = M.FreshProfiler ? "per launch" : "shared";
    C["run"] = M.OwnRun ? "own" : "shared";
    O["collection"] = std::move(C);
  } else if (!M.Problem.empty()) {
    O["problem"] = M.Problem;
  }
  return O;
}

static json toJSON(const SanitizerReport &S) {
  json O = json::object();
  O["tool"] = S.Tool;
  O["ran"] = S.Ran;
  O["clean"] = S.clean();
  if (S.Errors)
    O["errors"] = *S.Errors;
  if (!S.FirstError.empty())
    O["first_error"] = S.FirstError;
  if (!S.Problem.empty())
    O["problem"] = S.Problem;
  return O;
}

static json toJSON(const RunSummary &S) {
  json O = json::object();
  O["label"] = S.Label;
  O["outcome"] = S.Outcome;
  O["seconds"] = S.WallSeconds;
  O["stdout_sha256"] = S.StdoutHash;
  if (S.Device)
    O["gpu"] = *S.Device;
  if (!S.ProbeProblem.empty())
    O["probe_problem"] = S.ProbeProblem;
  if (!S.ProbeErrors.empty())
    O["probe_errors"] = S.ProbeErrors;
  return O;
}

std::string reportToJSON(const EvalReport &R) {
  json O = json::object();
  O["file"] = R.File;
  O["passed"] = R.passed();
  if (!R.Against.empty())
    O["against"] = R.Against;
  O["build"] = toJSON(R.Candidate);
  if (R.Original)
    O["original_build"] = toJSON(*R.Original);
  O["gpu"] = R.GpuAvailable ? json(R.GpuName) : json(nullptr);
  if (!R.GpuProblem.empty())
    O["gpu_problem"] = R.GpuProblem;
  O["verify"] = toJSON(R.Verify);
  json Ks = json::array();
  for (const KernelReport &K : R.Kernels) {
    json KO = json::object();
    KO["name"] = K.Name;
    KO["launches"] = K.Launches;
    KO["time"] = toJSON(K.Time);
    if (K.OriginalTime)
      KO["original_time"] = toJSON(*K.OriginalTime);
    KO["metrics"] = toJSON(K.Metrics);
    Ks.push_back(std::move(KO));
  }
  O["kernels"] = std::move(Ks);
  json Ss = json::array();
  for (const SanitizerReport &S : R.Sanitizers)
    Ss.push_back(toJSON(S));
  O["sanitizers"] = std::move(Ss);
  json Runs = json::array();
  for (const RunSummary &S : R.Runs)
    Runs.push_back(toJSON(S));
  O["runs"] = std::move(Runs);
  json St = json::object();
  for (const auto &[Name, S] : R.Stages)
    St[Name] = S;
  O["stages_seconds"] = std::move(St);
  O["wall_seconds"] = R.WallSeconds;
  O["reference_reused"] = R.ReusedReference;
  O["notes"] = R.Notes;
  return O.dump(2, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

} // namespace optiml
