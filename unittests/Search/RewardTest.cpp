//===- RewardTest.cpp - Reward and guardrails -----------------------------===//

#include "optiml/Search/Reward.h"
#include "gtest/gtest.h"
#include <cmath>

using namespace optiml;

namespace {

Timing t(double Ms, double Noise) {
  Timing T;
  T.Available = true;
  T.MedianMs = Ms;
  T.NoisePct = Noise;
  return T;
}

EvalOutcome ok(double Ms, double Noise = 1) {
  EvalOutcome O;
  O.Compiled = O.Verified = true;
  O.Time = t(Ms, Noise);
  return O;
}

TEST(RewardTest, SpeedupCountsOnlyBeyondBothNoiseBands) {
  // 10 ms +-1% vs 9.8 ms +-1%: the bands [9.9, 10.1] and [9.702, 9.898]
  // do not overlap.
  auto A = assessSpeedup(t(10, 1), t(9.8, 1), 0);
  EXPECT_EQ(A.Cmp, Comparison::Faster);
  EXPECT_NEAR(A.Counted, 10 / 9.8, 1e-12);
  // The candidate's own band overlaps the original's: not counted.
  A = assessSpeedup(t(10, 1), t(9.8, 2), 0);
  EXPECT_EQ(A.Cmp, Comparison::WithinNoise);
  EXPECT_EQ(A.Counted, 1);
  // The original's band alone is wide enough to swallow it.
  A = assessSpeedup(t(10, 3), t(9.8, 0.1), 0);
  EXPECT_EQ(A.Cmp, Comparison::WithinNoise);
  // The floor applies even to a perfectly steady measurement.
  A = assessSpeedup(t(10, 0), t(9.9, 0), 1.0);
  EXPECT_EQ(A.Cmp, Comparison::WithinNoise);
}

TEST(RewardTest, RewardIsLogCountedSpeedup) {
  RewardOptions O;
  auto R = computeReward(ok(10), ok(5), O);
  EXPECT_NEAR(R.Total, std::log(2.0), 1e-12);
  EXPECT_TRUE(R.Expandable);
  EXPECT_FALSE(R.Failed);
  // Within noise: log(1) = 0, still expandable.
  R = computeReward(ok(10), ok(9.95), O);
  EXPECT_EQ(R.Total, 0);
  EXPECT_TRUE(R.Expandable);
}

TEST(RewardTest, FailuresGetTheMinimumAndAreNotExpandable) {
  RewardOptions O;
  O.Weights.MinReward = -3;
  EvalOutcome NoCompile;
  NoCompile.Failure = "error";
  auto R = computeReward(ok(10), NoCompile, O);
  EXPECT_EQ(R.Total, -3);
  EXPECT_TRUE(R.Failed);
  EXPECT_FALSE(R.Expandable);
  EvalOutcome Wrong = ok(1);
  Wrong.Verified = false; // fast but wrong
  R = computeReward(ok(10), Wrong, O);
  EXPECT_EQ(R.Total, -3);
  EXPECT_FALSE(R.Expandable);
  EXPECT_EQ(rejectedReward(O, "checks").Total, -3);
}

TEST(RewardTest, RegressionBeyondNoiseIsNotExpandedButStaysAboveFailures) {
  RewardOptions O;
  auto R = computeReward(ok(10), ok(100), O); // 10x slower
  EXPECT_FALSE(R.Expandable);
  EXPECT_FALSE(R.Failed);
  EXPECT_GT(R.Total, O.Weights.MinReward);
  EXPECT_EQ(R.Speed.Cmp, Comparison::Slower);
}

TEST(RewardTest, MemoryBoundProxyFollowsDramBytes) {
  RewardOptions O;
  EvalOutcome Orig = ok(10), C = ok(9.99);
  Orig.Bound = "memory-bound";
  Orig.Metrics["dram__bytes_read.sum"] = 2e9;
  Orig.Metrics["dram__bytes_write.sum"] = 1e9;
  C.Metrics["dram__bytes_read.sum"] = 1e9;
  C.Metrics["dram__bytes_write.sum"] = 1e9;
  auto R = computeReward(Orig, C, O);
  EXPECT_EQ(R.SpeedTerm, 0); // within noise
  EXPECT_NEAR(R.ProxyTerm, 0.2 * std::log(3.0 / 2.0), 1e-12);
  EXPECT_NE(R.Evidence.find("dram bytes -33%"), std::string::npos)
      << R.Evidence;
  // The cap: a proxy never outweighs a measured speedup.
  O.Weights.DramBytes = 10;
  R = computeReward(Orig, C, O);
  EXPECT_NEAR(R.ProxyTerm, O.Weights.ProxyCap, 1e-12);
}

TEST(RewardTest, LatencyAndComputeProxies) {
  RewardOptions O;
  EvalOutcome Orig = ok(10), C = ok(10);
  Orig.Bound = "latency-bound";
  Orig.Metrics["sm__warps_active.avg.pct_of_peak_sustained_active"] = 20;
  C.Metrics["sm__warps_active.avg.pct_of_peak_sustained_active"] = 60;
  EXPECT_NEAR(computeReward(Orig, C, O).ProxyTerm, 0.04, 1e-12);
  Orig.Bound = "compute-bound";
  Orig.Metrics["sm__throughput.avg.pct_of_peak_sustained_elapsed"] = 50;
  C.Metrics["sm__throughput.avg.pct_of_peak_sustained_elapsed"] = 40;
  EXPECT_NEAR(computeReward(Orig, C, O).ProxyTerm, -0.01, 1e-12);
}

TEST(RewardTest, WeightsParse) {
  RewardWeights W;
  ASSERT_FALSE(llvm::errorToBool(
      parseRewardWeights("speedup=2, dram-bytes=0.5,min=-4", W)));
  EXPECT_EQ(W.Speedup, 2);
  EXPECT_EQ(W.DramBytes, 0.5);
  EXPECT_EQ(W.MinReward, -4);
  auto E = parseRewardWeights("speed=1", W);
  EXPECT_NE(llvm::toString(std::move(E)).find("unknown weight 'speed'"),
            std::string::npos);
  EXPECT_TRUE(llvm::errorToBool(parseRewardWeights("speedup=fast", W)));
}

} // namespace
