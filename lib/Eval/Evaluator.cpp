//===- Evaluator.cpp - The judge: build, verify, time, profile ------------===//

#include "optiml/Eval/Evaluator.h"
#include "EvaluatorInternal.h"
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
  case VerifyStatus::Verified:
    return "verified";
  case VerifyStatus::Deterministic:
    return "deterministic";
  case VerifyStatus::Mismatch:
    return "mismatch";
  case VerifyStatus::Nondeterministic:
    return "nondeterministic";
  case VerifyStatus::Failed:
    return "failed";
  case VerifyStatus::NotRun:
    return "not-run";
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
      bool Instance = Par.ElementSize == 0 && Par.InstanceElementSize != 0;
      PP.ElementType = Instance ? Par.InstanceElementType
                       : Par.CanonicalElementType.empty()
                           ? Par.ElementType
                           : Par.CanonicalElementType;
      PP.ElementSize = Instance ? Par.InstanceElementSize : Par.ElementSize;
      PP.Float = Instance ? Par.InstanceIsFloat : Par.IsFloat;
      PP.PointerArray = Par.ElementIsPointer;
      PP.InnerElementType = Par.InnerElementType;
      PP.InnerElementSize = Par.InnerElementSize;
      PP.InnerFloat = Par.InnerIsFloat;
      for (const PointerField &F : Par.ElementPointerFields)
        PP.PointerFields.push_back(
            {F.Offset, F.Name, F.InnerType, F.InnerSize, F.InnerIsFloat});
      PP.PointerArray |= !PP.PointerFields.empty();
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
  T.SpreadPct =
      T.MedianMs > 0
          ? 100 * (percentile(S, 0.75) - percentile(S, 0.25)) / T.MedianMs
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
  double MemSide =
      std::max(R.MemPct, R.DramFraction >= 0 ? 100 * R.DramFraction : -1);
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

Expected<OriginalReference> prepareReference(const EvalInput &In, Builder &B,
                                             const EvalOptions &Opts) {
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
      KR.Time.Problem =
          !R->Probe
              ? "the timing run " + R->Process.describe() +
                    (R->ProbeProblem.empty() ? "" : "; " + R->ProbeProblem)
          : KR.Launches ? "the probe returned no replay times"
                        : "the kernel was not launched";
    Rep.Kernels.push_back(std::move(KR));
  }
  Rep.Verify = Ref.SelfCheck;
  Rep.Stages.emplace_back("time-original", R->Process.WallSeconds);
  Rep.WallSeconds = secondsSince(Start);
  return Rep;
}

} // namespace optiml
