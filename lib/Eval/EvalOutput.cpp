//===- EvalOutput.cpp - The report as text and JSON -----------------------===//

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

using nlohmann::json;

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
      if (K.OriginalTime && K.OriginalTime->Available && K.Time.MedianMs > 0)
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
