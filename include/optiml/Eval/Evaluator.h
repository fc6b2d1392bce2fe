//===- Evaluator.h - Build, verify, time and profile a candidate -*- C++
//-*-===//
//
// The judge every candidate faces (docs/eval.md):
//   1. build the candidate (and the original) with nvcc;
//   2. reference run: the original, probe in Reference mode, snapshots saved;
//   3. self-check: the original again in Candidate mode against its own
//      snapshots, which calibrates float tolerances and detects a
//      nondeterministic program (which buffer);
//   4. candidate run in Candidate mode: launch-by-launch comparison on the
//      GPU, plus the program's exit status and stdout hash;
//   5. Time run (replays timed with events) and Metrics run (range
//      profiler), each a separate process;
//   6. compute-sanitizer memcheck and racecheck restricted to the targets.
// Runs go one at a time per GPU; with several GPUs independent runs
// proceed in parallel.
//
// Steps 2 and 3 depend on the original only. A caller that judges many
// candidates against one original (the search) makes them once with
// prepareReference() and hands the result to every evaluate(): each
// candidate then costs its own runs alone. The original's timing run is
// separate (EvalOptions::TimeOriginal, retimeOriginal()), so the caller
// chooses how often the baseline is measured again.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_EVAL_EVALUATOR_H
#define OPTIML_EVAL_EVALUATOR_H

#include "optiml/Eval/Builder.h"
#include "optiml/Eval/ProbeProtocol.h"
#include "optiml/Eval/Runner.h"
#include "optiml/Frontend/KernelModel.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace optiml {

/// The metrics asked of the range profiler (9 replay passes on an H200).
extern const char *const DefaultMetrics[6];

struct EvalOptions {
  /// Target kernels by qualified name; empty: every launched kernel.
  std::vector<std::string> Kernels;
  unsigned VerifyFirst = 3;
  bool VerifyLast = true;
  unsigned Replays = 20;
  unsigned TimeLaunches = 1;
  bool FlushL2 = false;
  bool Metrics = true;
  /// How the metrics run isolates one profiled launch from another
  /// (docs/eval.md, "Clean L2"). FreshProfiler (on): the probe sets the
  /// range profiler up anew for every profiled launch; without it a launch
  /// profiled after another counted about half its DRAM bytes written
  /// (measured on the H200, docs/benchmarks.md). MetricsPerKernel (off):
  /// one metrics run per target kernel, each profiling that kernel alone,
  /// at the cost of one program run per extra kernel.
  /// applyMetricsEnvironment() sets them from OPTIML_PROBE_FRESH_PROFILER
  /// and OPTIML_METRICS_PER_KERNEL.
  bool MetricsPerKernel = false;
  bool FreshProfiler = true;
  bool Sanitize = true;
  /// The candidate comes from an edit that may change float results: the
  /// tolerances are widened (10x the type's defaults).
  bool PrecisionChanging = false;
  /// Where configs, results and snapshots go; empty: a temporary directory
  /// removed at the end (unless KeepRunDir).
  std::string RunDir;
  bool KeepRunDir = false;
  RunnerOptions Runner;
  /// GPUs to use (nvidia-smi indices); empty: all that are present.
  std::vector<unsigned> Devices;
  /// The GPUs present, when the caller already asked (else queried).
  std::optional<GpuQuery> Gpus;
  /// Peak DRAM bandwidth for the verdict, GB/s; 0: known GPUs only.
  double PeakDramGBs = 0;
  /// Progress notes ("reference run...") go here when set.
  llvm::raw_ostream *Log = nullptr;
  /// Time the original alongside the candidate (with an original only).
  bool TimeOriginal = true;
  /// Verify the candidate against the original (with an original only);
  /// off for timing rounds of a candidate already verified.
  bool VerifyCandidate = true;
  /// With a prepared reference (a search): time the candidate in its
  /// verification run instead of a run of its own, and give a candidate
  /// that fails verification no metrics or sanitizer runs.
  bool TimeInVerification = false;
};

struct EvalInput {
  std::string CandidatePath;
  /// The candidate's text; empty: the file at CandidatePath.
  std::string CandidateSource;
  std::vector<std::string> CandidateFlags;
  /// The original program; empty: the candidate is checked against itself.
  std::string OriginalPath;
  /// The candidate's kernel model (targets and element types).
  const KernelModel *Model = nullptr;
};

struct BuildSummary {
  std::string Path;
  bool Succeeded = false;
  bool CacheHit = false;
  double Seconds = 0;
  std::string Binary;
  /// The build's content hash (source, flags, nvcc): equal keys, equal
  /// binaries.
  std::string Key;
  std::string ErrorSummary;
  std::string Log;
  std::vector<KernelResources> Resources;
};

struct RunSummary {
  std::string Label;
  std::optional<unsigned> Device;
  std::string Outcome; ///< ProcessResult::describe()
  bool Succeeded = false;
  double WallSeconds = 0;
  std::string StdoutHash;
  std::string StderrTail;
  std::string ProbeProblem;
  std::vector<std::string> ProbeErrors;
};

enum class VerifyStatus {
  Verified,         ///< outputs, exit status and stdout agree
  Deterministic,    ///< self-check only: the program agrees with itself
  Mismatch,         ///< the candidate's results differ
  Nondeterministic, ///< the reference disagrees with itself
  Failed,           ///< the candidate crashed, hung or exited differently
  NotRun,           ///< no GPU, no probe, build failed...
};
const char *toString(VerifyStatus S);

/// A launch at which two runs of the original disagree beyond calibration
/// (the self-check): which kernel and launch, and the buffer and how much,
/// in words.
struct SelfCheckDisagreement {
  std::string Kernel; ///< base name
  unsigned Ordinal = 0;
  std::string Detail; ///< "scale launch 9: 'x' (parameter 2, float): ..."
};

struct VerifyReport {
  VerifyStatus Status = VerifyStatus::NotRun;
  /// First difference (or why not verified), in words.
  std::string Detail;
  unsigned LaunchesCompared = 0;
  unsigned BuffersCompared = 0;
  /// Calibration notes: float noise seen between two reference runs.
  std::vector<std::string> Notes;
  /// Self-check: every buffer of a verified launch at which the original's
  /// two runs disagree beyond calibration, in the order found (Detail names
  /// the first).
  std::vector<SelfCheckDisagreement> Disagreements;
  Tolerance CandidateTol;
  bool StdoutCompared = false;
  /// The original (or, alone, the program) failed in its reference run:
  /// nothing was compared.
  bool ReferenceFailed = false;
};

struct TimingReport {
  bool Available = false;
  std::string Problem;
  double MedianMs = 0, MinMs = 0, MaxMs = 0;
  /// Interquartile range over the median, in percent.
  double SpreadPct = 0;
  unsigned Samples = 0;
  /// Replays for a 95% confidence interval of +-1% of the mean.
  unsigned ReplaysFor1Pct = 0;
};

struct MetricsReport {
  bool Available = false;
  std::string Problem;
  std::map<std::string, double> Values;
  std::string Bound;   ///< memory-bound, compute-bound, latency-bound
  std::string Verdict; ///< one line
  double DramGBs = 0;
  double DramFraction = -1; ///< of peak, when the peak is known
  double SmPct = -1, MemPct = -1, WarpsActivePct = -1;
  /// How the values were collected, as ncu reports its replay mode: the
  /// probe's replays from a copy ("user") or CUPTI's ("kernel"), whether
  /// L2 was cleaned before every pass, how many launches the passes took
  /// (user replay), whether the range profiler was set up for this launch
  /// alone, and whether this kernel had a metrics run of its own.
  std::string Replay;
  bool L2Cleaned = false;
  unsigned Passes = 0;
  bool FreshProfiler = false;
  bool OwnRun = false;
};

struct KernelReport {
  std::string Name;
  std::vector<KernelResources> Resources;
  unsigned Launches = 0; ///< seen in the candidate's reference/time run
  TimingReport Time;
  std::optional<TimingReport> OriginalTime;
  MetricsReport Metrics;
};

struct EvalReport {
  std::string File, Against;
  BuildSummary Candidate;
  std::optional<BuildSummary> Original;
  bool GpuAvailable = false;
  std::string GpuProblem;
  std::string GpuName;
  VerifyReport Verify;
  std::vector<KernelReport> Kernels;
  std::vector<SanitizerReport> Sanitizers;
  std::vector<RunSummary> Runs;
  std::vector<std::string> Notes;
  std::string RunDir;
  double WallSeconds = 0;
  /// Wall time of each stage ("build", "reference", ...), seconds.
  std::vector<std::pair<std::string, double>> Stages;
  /// The original's reference run and self-check came from a prepared
  /// OriginalReference instead of being run again.
  bool ReusedReference = false;

  /// Compiles, verified (or deterministic), sanitizers clean where run.
  bool passed() const;
};

/// The original's side of every comparison, made once by
/// prepareReference(): its build, the reference run (snapshots on disk under
/// RunDir, launch records, exit status, stdout hash), and the self-check's
/// verdict with the calibrated tolerance. It stays valid while RunDir
/// exists; nothing but prepareReference() writes there.
struct OriginalReference {
  std::string Path; ///< the original's source file
  /// Build key of the original when the reference was made.
  std::string BuildKey;
  /// Everything the snapshots depend on besides the binary (targets,
  /// verified launches, program arguments and directory, probe).
  std::string Setup;
  std::string RunDir, SnapshotDir;
  std::vector<ProbeKernel> Targets;
  std::vector<unsigned> Devices;
  ProgramRun Reference;
  /// Deterministic (with its notes) when the reference is usable.
  VerifyReport SelfCheck;
  Tolerance Calibrated;
  bool StdoutStable = false;
  /// The original's own evaluation (self-check, time, metrics).
  EvalReport Report;

  /// The original ran, agreed with itself and verified some launch.
  bool usable() const {
    return Report.GpuAvailable && Reference.Probe &&
           SelfCheck.Status == VerifyStatus::Deterministic;
  }
};

/// The GPU-side work needs a GPU; the CPU-side work (builds) is done
/// regardless and reported. Errors are for setup failures only: a
/// candidate that does not compile, crashes or differs is a report.
///
/// With \p Reuse (made by prepareReference for In.OriginalPath) the
/// reference run and self-check are not repeated, provided the original
/// builds to the same binary and the probe setup is the same; otherwise
/// they are run again and a note says why.
llvm::Expected<EvalReport> evaluate(const EvalInput &In, Builder &B,
                                    const EvalOptions &Opts,
                                    const OriginalReference *Reuse = nullptr);

/// Evaluates the original against itself (In.CandidatePath is the original;
/// In.OriginalPath must be empty) and keeps what every later comparison
/// needs. The run directory (Opts.RunDir, else a new temporary one) is kept:
/// the caller removes it when done. Check usable() before reusing it.
llvm::Expected<OriginalReference>
prepareReference(const EvalInput &In, Builder &B, const EvalOptions &Opts);

/// One timing run of the original with the reference's setup: the baseline
/// measured again, nothing else. The report's kernels hold the times.
llvm::Expected<EvalReport> retimeOriginal(const OriginalReference &Ref,
                                          const EvalOptions &Opts);

/// What a reference depends on besides the original's binary.
std::string referenceSetup(llvm::ArrayRef<ProbeKernel> Targets,
                           const EvalOptions &Opts);

/// Probe kernels (names and param element types) for the targets: the
/// named ones, or every launched kernel of the model.
llvm::Expected<std::vector<ProbeKernel>>
targetKernels(const KernelModel &Model, llvm::ArrayRef<std::string> Names);

/// Whether a self-check that found the original nondeterministic would
/// pass with the last launch of each target left unverified (as with
/// VerifyLast off): every disagreement is at a launch verified only because
/// of VerifyLast (ordinal \p VerifyFirst or later), so the first
/// \p VerifyFirst launches of every target agree within the calibrated
/// tolerance. Returns the first such disagreement (for a note), or none:
/// the self-check passed, it failed for another reason (exit status, no
/// launch verified), or some first launch disagrees too.
std::optional<SelfCheckDisagreement>
disagreesOnlyAtLastLaunch(const VerifyReport &SelfCheck, unsigned VerifyFirst);

/// Median, IQR spread, and replays needed, from replay times.
TimingReport summarizeTimes(llvm::ArrayRef<double> TimesMs);

/// Sets EvalOptions' metrics isolation (MetricsPerKernel, FreshProfiler:
/// "1" sets, "0" clears) from the environment; unset or anything else
/// leaves them.
void applyMetricsEnvironment(EvalOptions &Opts);

/// Bottleneck verdict from the range profiler's metrics and the kernel's
/// time; PeakDramGBs 0 leaves the DRAM fraction unknown.
MetricsReport classifyMetrics(const std::map<std::string, double> &Metrics,
                              double PeakDramGBs);

/// Peak DRAM bandwidth in GB/s for a GPU by name (measured copy rate for
/// the H200), or 0 when unknown.
double knownPeakDramGBs(llvm::StringRef GpuName);

void printReport(llvm::raw_ostream &OS, const EvalReport &R);
std::string reportToJSON(const EvalReport &R);

} // namespace optiml

#endif
