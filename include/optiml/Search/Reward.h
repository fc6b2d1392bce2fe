//===- Reward.h - The composite reward and its guardrails ------*- C++ -*-===//
//
// reward = Speedup * log(counted speedup) + proxy term, where the counted
// speedup is 1 unless the two measurements' noise bands do not overlap, and
// the proxy term rewards movement of the metric that matches the original's
// bottleneck (docs/optimize.md, "Reward"):
//   memory-bound:  DramBytes * log(bytes_orig / bytes_cand)
//                + Bandwidth * log(bw_cand / bw_orig)
//   compute-bound: SmThroughput * (sm%_cand - sm%_orig) / 100
//   latency-bound: Occupancy * (warps_active%_cand - warps_active%_orig) / 100
// clamped to +-ProxyCap, so a proxy never outweighs a measured speedup.
// Failed candidates get MinReward; others never go below it.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SEARCH_REWARD_H
#define OPTIML_SEARCH_REWARD_H

#include "optiml/Search/CandidateEvaluator.h"
#include <string>

namespace optiml {

struct RewardWeights {
  double Speedup = 1.0;
  double DramBytes = 0.2;
  double Bandwidth = 0.1;
  double SmThroughput = 0.1;
  double Occupancy = 0.1;
  double ProxyCap = 0.1;
  double MinReward = -1.0;
};

struct RewardOptions {
  RewardWeights Weights;
  /// Floor on every noise band, in percent of the median: even a perfectly
  /// steady measurement is not trusted below this.
  double MinNoisePct = 1.0;
  /// A speedup this many times the best so far is re-measured before it may
  /// lead the search.
  double SuspiciousFactor = 2.0;
};

/// Parses "speedup=1,dram-bytes=0.2,...,min=-1" (names as in docs/optimize.md).
llvm::Error parseRewardWeights(llvm::StringRef Spec, RewardWeights &W);

enum class Comparison { Faster, WithinNoise, Slower };
const char *toString(Comparison C);

struct SpeedupAssessment {
  double Raw = 1;     ///< median_orig / median_cand
  double Counted = 1; ///< Raw when beyond both noise bands, else 1
  Comparison Cmp = Comparison::WithinNoise;
};

/// Faster when cand * (1 + n_c) < orig * (1 - n_o), slower when
/// cand * (1 - n_c) > orig * (1 + n_o), with n = max(NoisePct, MinNoisePct).
SpeedupAssessment assessSpeedup(const Timing &Original, const Timing &Cand,
                                double MinNoisePct);

struct RewardBreakdown {
  double Total = 0;
  double SpeedTerm = 0;
  double ProxyTerm = 0;
  /// The bottleneck the proxy followed and what moved ("dram bytes -38%").
  std::string Bound;
  std::string Evidence;
  SpeedupAssessment Speed;
  /// The candidate failed (compile, check, verification): MinReward.
  bool Failed = false;
  /// May the search build on this candidate? Not when it failed or is
  /// slower beyond noise.
  bool Expandable = false;
  std::string Why; ///< why not expandable
};

RewardBreakdown computeReward(const EvalOutcome &Original,
                              const EvalOutcome &Cand,
                              const RewardOptions &Opts);

/// The reward of a candidate rejected before evaluation (failed checks).
RewardBreakdown rejectedReward(const RewardOptions &Opts, llvm::StringRef Why);

} // namespace optiml

#endif
