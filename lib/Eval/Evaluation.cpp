//===- Evaluation.cpp - The evaluation: setup stages and shared helpers ---===//

#include "EvaluatorInternal.h"
#include "optiml/Eval/Compare.h"
#include "optiml/Eval/Evaluator.h"
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
const LaunchRecord *firstProfiled(const ProbeResult &R, StringRef Name) {
  for (const LaunchRecord &L : R.Launches)
    if (kernelNameMatches(Name, kernelBaseName(L.Kernel)) && !L.Metrics.empty())
      return &L;
  return nullptr;
}

/// A run that ended without an exit status (killed, timed out, not started).
bool runFailed(const ProgramRun &R) {
  return !R.Process.succeeded() && !R.Process.ExitCode.has_value();
}

/// The element types of the buffers \p P reaches: its own, and those its
/// array's pointers (or its structs' pointer members) point to.
static SmallVector<ElementType, 4> reachedTypes(const ProbeParam &P) {
  SmallVector<ElementType, 4> Out;
  if (!P.Pointer)
    return Out;
  Out.push_back(elementTypeFor(P));
  if (P.PointerArray)
    for (unsigned E = 1; E <= std::max<size_t>(1, P.PointerFields.size()); ++E)
      Out.push_back(elementTypeFor(P, E));
  return Out;
}

/// \p Tol widened to the widest tolerance calibration may reach for the
/// targets' floating-point buffers: the self-check measures noise under it.
Tolerance widenToNoiseCeiling(Tolerance Tol, ArrayRef<ProbeKernel> Targets) {
  for (const ProbeKernel &K : Targets)
    for (const ProbeParam &P : K.Params)
      for (ElementType T : reachedTypes(P)) {
        if (!T.isFloatingPoint())
          continue;
        Tolerance Ceil = noiseCeiling(T.Kind);
        Tol.RelTol = std::max(Tol.RelTol, Ceil.RelTol);
        Tol.AbsTol = std::max(Tol.AbsTol, Ceil.AbsTol);
        Tol.ScaleRelTol = std::max(Tol.ScaleRelTol, Ceil.ScaleRelTol);
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
    for (const ProbeParam &P : K.Params)
      for (ElementType T : reachedTypes(P)) {
        if (!T.isFloatingPoint())
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
                                 "GPU %u is not present (%zu GPU(s) found)", D,
                                 Q.Gpus.size());
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
      Rep.Notes.push_back("the reference's snapshots ('" + Reuse->SnapshotDir +
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
    if (std::error_code EC = sys::fs::create_directories(SnapDir))
      return createStringError(EC, "cannot create '%s': %s", SnapDir.c_str(),
                               EC.message().c_str());
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
    (void)sys::fs::remove_directories(RunDir, /*IgnoreErrors=*/true);
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

} // namespace optiml
