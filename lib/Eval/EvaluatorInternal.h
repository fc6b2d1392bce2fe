//===- EvaluatorInternal.h - The evaluation, in stages ----------*- C++ -*-===//
//
// Private to lib/Eval. evaluate() and prepareReference() (Evaluator.cpp) run
// an Evaluation: its setup stages and the helpers the stages share are in
// Evaluation.cpp, its runs and verdicts in EvaluationRuns.cpp; the judging of
// probe results is in EvalJudge.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EVAL_EVALUATORINTERNAL_H
#define OPTIML_LIB_EVAL_EVALUATORINTERNAL_H

#include "optiml/Eval/Evaluator.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace optiml {

struct StageClock {
  std::mutex Mu;
  std::vector<std::pair<std::string, double>> Stages;
  void add(llvm::StringRef Name, double S) {
    std::lock_guard<std::mutex> L(Mu);
    Stages.emplace_back(Name.str(), S);
  }
};

double secondsSince(std::chrono::steady_clock::time_point T);
RunSummary summarize(const ProgramRun &R);
/// Runs tasks one per GPU at a time; in parallel when several GPUs.
void runTasks(std::vector<std::function<void(unsigned)>> Tasks,
              DevicePool &Pool);
BuildSummary toSummary(llvm::StringRef Path, const BuildResult &R);
/// The first launch of kernel Name in a metrics run that has metrics.
const LaunchRecord *firstProfiled(const ProbeResult &R, llvm::StringRef Name);

/// What a stage of an evaluation says: go on, or the report is final (a
/// build failed, there is no GPU, the reference run failed).
enum class Next { Continue, Finish };

/// A run that ended without an exit status (killed, timed out, not started).
bool runFailed(const ProgramRun &R);
/// \p Tol widened to the widest tolerance calibration may reach for the
/// targets' floating-point buffers: the self-check measures noise under it.
Tolerance widenToNoiseCeiling(Tolerance Tol,
                              llvm::ArrayRef<ProbeKernel> Targets);
/// The tolerance a candidate is verified under: the calibrated one, widened
/// for edits that declare precision changes.
Tolerance candidateTolerance(Tolerance Tol, llvm::ArrayRef<ProbeKernel> Targets,
                             bool PrecisionChanging);
/// Kernel \p K's replay times in timing run \p R (the number of its
/// launches in \p Launches when given), or why there are none.
TimingReport timingOf(const std::optional<ProgramRun> &R, const ProbeKernel &K,
                      unsigned *Launches);

/// The parameter, and which of its buffers, as reports name it: "'c'
/// (parameter 2, float *)", "..., the buffer its element 3 points into",
/// "..., the buffer its element 3's 'c' points into" (EvalJudge.cpp).
std::string bufferName(const KernelModel *Model, const ProbeKernel *K,
                       const BufferCheck &B);

/// The reference against itself: calibrated tolerance, or the buffer that
/// makes the program nondeterministic (EvalJudge.cpp).
void judgeSelfCheck(const ProbeResult &Self,
                    llvm::ArrayRef<ProbeKernel> Targets,
                    const KernelModel *Model, VerifyReport &V,
                    Tolerance &Calibrated);
/// The candidate's verified launches against the reference's (EvalJudge.cpp).
void judgeCandidate(const ProbeResult &Ref, const ProbeResult &Cand,
                    llvm::ArrayRef<ProbeKernel> Targets,
                    const KernelModel *Model, VerifyReport &V);

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

  llvm::Expected<EvalReport> run();

private:
  // The stages, in the order run() calls them.
  llvm::Error findTargets();
  llvm::Expected<Next> build();
  llvm::Expected<Next> findDevices();
  void decideReuse();
  llvm::Error makeRunDir();
  void planRuns();
  llvm::Expected<Next> runReference();
  void runIndependent();
  bool judgeAndVerify();
  void judgeSelfCheckRun();
  void captureReference();
  bool verifyCandidate();
  void collectTimesAndMetrics();

  // What the stages share.
  std::optional<ProgramRun> runProgram(llvm::StringRef Binary, ProbeConfig C,
                                       llvm::StringRef Label, unsigned Dev);
  void runSanitizerTool(const char *Tool,
                        llvm::ArrayRef<std::string> KernelNames, unsigned Dev);
  void addMetricsTasks(std::vector<std::function<void(unsigned)>> &Tasks);
  void addSanitizerTasks(std::vector<std::function<void(unsigned)>> &Tasks);
  void cleanup();
  llvm::Error setupFailed();
  EvalReport finish();

  const EvalInput &In;
  Builder &B;
  const EvalOptions &Opts;
  const OriginalReference *Reuse;
  OriginalReference *Capture;
  llvm::raw_ostream *Log;

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
  llvm::SmallString<128> SnapDir;
  ProbeConfig Base;
  bool SelfOnly = false;
  bool VerifyFirstRun = false;

  // The runs. Mu guards Rep and the runs while tasks run in parallel.
  std::mutex Mu;
  std::optional<llvm::Error>
      SetupError; ///< the first run that could not be set up
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

} // namespace optiml

#endif // OPTIML_LIB_EVAL_EVALUATORINTERNAL_H
