//===- Reward.cpp - Composite reward, noise bands, guardrails -------------===//

#include "optiml/Search/Reward.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cmath>

using namespace llvm;

namespace optiml {

const char *toString(Comparison C) {
  switch (C) {
  case Comparison::Faster:
    return "faster";
  case Comparison::WithinNoise:
    return "within noise";
  case Comparison::Slower:
    return "slower";
  }
  return "?";
}

Error parseRewardWeights(StringRef Spec, RewardWeights &W) {
  SmallVector<StringRef, 8> Items;
  Spec.split(Items, ',', -1, /*KeepEmpty=*/false);
  for (StringRef Item : Items) {
    auto [Name, Value] = Item.split('=');
    Name = Name.trim();
    double V;
    if (Value.trim().getAsDouble(V))
      return createStringError("--reward-weights: '%s' is not NAME=NUMBER",
                               Item.str().c_str());
    double *Slot = StringSwitch<double *>(Name)
                       .Case("speedup", &W.Speedup)
                       .Case("dram-bytes", &W.DramBytes)
                       .Case("bandwidth", &W.Bandwidth)
                       .Case("sm-throughput", &W.SmThroughput)
                       .Case("occupancy", &W.Occupancy)
                       .Case("proxy-cap", &W.ProxyCap)
                       .Case("min", &W.MinReward)
                       .Default(nullptr);
    if (!Slot)
      return createStringError(
          "--reward-weights: unknown weight '%s' (expected speedup, "
          "dram-bytes, bandwidth, sm-throughput, occupancy, proxy-cap, min)",
          Name.str().c_str());
    *Slot = V;
  }
  return Error::success();
}

SpeedupAssessment assessSpeedup(const Timing &O, const Timing &C,
                                double MinNoisePct) {
  SpeedupAssessment A;
  if (!O.Available || !C.Available || O.MedianMs <= 0 || C.MedianMs <= 0)
    return A;
  double NO = std::max(O.NoisePct, MinNoisePct) / 100;
  double NC = std::max(C.NoisePct, MinNoisePct) / 100;
  A.Raw = O.MedianMs / C.MedianMs;
  if (C.MedianMs * (1 + NC) < O.MedianMs * (1 - NO)) {
    A.Cmp = Comparison::Faster;
    A.Counted = A.Raw;
  } else if (C.MedianMs * (1 - NC) > O.MedianMs * (1 + NO)) {
    A.Cmp = Comparison::Slower;
    A.Counted = A.Raw;
  }
  return A;
}

static std::optional<double> metric(const EvalOutcome &O, StringRef Name) {
  auto It = O.Metrics.find(Name.str());
  if (It == O.Metrics.end())
    return std::nullopt;
  return It->second;
}

static std::optional<double> dramBytes(const EvalOutcome &O) {
  auto R = metric(O, "dram__bytes_read.sum");
  auto W = metric(O, "dram__bytes_write.sum");
  if (!R && !W)
    return std::nullopt;
  return R.value_or(0) + W.value_or(0);
}

static std::optional<double> bandwidth(const EvalOutcome &O) {
  auto B = dramBytes(O);
  auto T = metric(O, "gpu__time_duration.sum");
  if (!B || !T || *T <= 0)
    return std::nullopt;
  return *B / *T;
}

static std::string percentChange(double From, double To) {
  long P = std::lround((To / From - 1) * 100);
  return (P >= 0 ? "+" : "") + std::to_string(P) + "%";
}

RewardBreakdown rejectedReward(const RewardOptions &Opts, StringRef Why) {
  RewardBreakdown R;
  R.Total = Opts.Weights.MinReward;
  R.Failed = true;
  R.Why = Why.str();
  return R;
}

RewardBreakdown computeReward(const EvalOutcome &Orig, const EvalOutcome &C,
                              const RewardOptions &Opts) {
  const RewardWeights &W = Opts.Weights;
  if (!C.Compiled)
    return rejectedReward(Opts, "did not compile");
  if (!C.Verified)
    return rejectedReward(Opts, "failed verification");
  if (!C.Time.Available)
    return rejectedReward(Opts, "no timing");

  RewardBreakdown R;
  R.Speed = assessSpeedup(Orig.Time, C.Time, Opts.MinNoisePct);
  R.SpeedTerm = W.Speedup * std::log(R.Speed.Counted);

  // The proxy follows the original's bottleneck.
  R.Bound = Orig.Bound;
  double Proxy = 0;
  std::vector<std::string> Evidence;
  if (Orig.Bound == "memory-bound") {
    auto BO = dramBytes(Orig), BC = dramBytes(C);
    if (BO && BC && *BO > 0 && *BC > 0) {
      Proxy += W.DramBytes * std::log(*BO / *BC);
      Evidence.push_back("dram bytes " + percentChange(*BO, *BC));
    }
    auto WO = bandwidth(Orig), WC = bandwidth(C);
    if (WO && WC && *WO > 0 && *WC > 0) {
      Proxy += W.Bandwidth * std::log(*WC / *WO);
      Evidence.push_back("achieved bandwidth " + percentChange(*WO, *WC));
    }
  } else if (Orig.Bound == "compute-bound") {
    const char *M = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
    auto SO = metric(Orig, M), SC = metric(C, M);
    if (SO && SC) {
      Proxy += W.SmThroughput * (*SC - *SO) / 100;
      Evidence.push_back(formatv("SM throughput {0:F1}% -> {1:F1}%", *SO, *SC));
    }
  } else if (Orig.Bound == "latency-bound") {
    const char *M = "sm__warps_active.avg.pct_of_peak_sustained_active";
    auto OO = metric(Orig, M), OC = metric(C, M);
    if (OO && OC) {
      Proxy += W.Occupancy * (*OC - *OO) / 100;
      Evidence.push_back(
          formatv("achieved occupancy {0:F1}% -> {1:F1}%", *OO, *OC));
    }
  }
  R.ProxyTerm = std::clamp(Proxy, -W.ProxyCap, W.ProxyCap);
  R.Evidence = join(Evidence, ", ");
  // Never as low as a failure: a slow correct program is still better.
  R.Total = std::max(R.SpeedTerm + R.ProxyTerm, W.MinReward + 1e-3);
  R.Expandable = R.Speed.Cmp != Comparison::Slower;
  if (!R.Expandable)
    R.Why = formatv("slower beyond noise ({0:F2}x)", R.Speed.Raw).str();
  return R;
}

} // namespace optiml
