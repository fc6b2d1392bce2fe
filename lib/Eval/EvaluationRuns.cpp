//===- EvaluationRuns.cpp - The evaluation: runs and verdicts -------------===//

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
  double Peak =
      Opts.PeakDramGBs > 0 ? Opts.PeakDramGBs : knownPeakDramGBs(Rep.GpuName);
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
      KR.Metrics.Problem = Metrics ? "the metrics run " +
                                         Metrics->Process.describe() +
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

} // namespace optiml
