//===- RestructurePrivatizeAtomicsTest.cpp - privatize-atomics -----------===//

#include "RestructureTesting.h"

using namespace optiml;
using namespace optiml::restructure_testing;

namespace {

const Transform &privatize() {
  static auto T = createPrivatizeAtomicsTransform();
  return *T;
}

TEST(RestructurePrivatizeAtomicsTest, ByteHistogramPerBlock) {
  Applicability A = prepareOn(privatize(), "atomics-histogram", "histogram");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason, "1 atomicAdd into 'bins' (256 unsigned int elements, "
                      "bounded by the index); rewrite: a private copy per "
                      "block in shared memory, merged once per block, "
                      "grid-stride loop, grid capped at 1056");
  expectRewrite(privatize(), "atomics-histogram",
                makeEdit("privatize-atomics", "histogram"));
}

TEST(RestructurePrivatizeAtomicsTest, ByteHistogramPerWarp) {
  Applicability A = prepareOn(privatize(), "atomics-histogram", "histogram");
  ASSERT_TRUE(A.Applies);
  expectRewrite(privatize(), "atomics-histogram-warp",
                makeEdit("privatize-atomics", "histogram",
                         {{"copies", std::string("warp")},
                          {"max_blocks", int64_t(528)}}));
}

TEST(RestructurePrivatizeAtomicsTest, GridStrideMaskPointerOffset) {
  // 4-byte keys: no wide-load suggestion (the copies are the gain).
  Applicability A = prepareOn(privatize(), "atomics-buckets", "bucket_sizes");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Suggestions.size(), 2u);
  for (const Edit &S : A.Suggestions)
    EXPECT_FALSE(S.getInt("vector_bytes"));
  expectRewrite(privatize(), "atomics-buckets",
                makeEdit("privatize-atomics", "bucket_sizes"));
}

TEST(RestructurePrivatizeAtomicsTest, GivenBinsGuardTheRest) {
  expectRefusal(privatize(), "atomics-weighted",
                makeEdit("privatize-atomics", "weighted"),
                "the size of 'total' is not known at compile time: the index "
                "'c' is not bounded");
  expectRewrite(
      privatize(), "atomics-weighted",
      makeEdit("privatize-atomics", "weighted", {{"bins", int64_t(32)}}));
}

TEST(RestructurePrivatizeAtomicsTest, NearMisses) {
  const Transform &T = privatize();
  auto E = [](const char *K) { return makeEdit("privatize-atomics", K); };
  expectRefusal(T, "atomics-refuse", E("unknown_bins"),
                "is not known at compile time");
  expectRefusal(T, "atomics-refuse", E("too_large"),
                "need 400000 bytes of shared memory");
  expectRefusal(T, "atomics-refuse", E("uses_old"), "is used");
  expectRefusal(T, "atomics-refuse", E("also_read"),
                "'bins' is also read, written or passed on");
  expectRefusal(T, "atomics-refuse", E("maximum"),
                "atomicMax on 'best' at 21:14 cannot be privatized");
}

} // namespace

namespace {

// Wide loads: three differently written inputs.

TEST(RestructurePrivatizeAtomicsTest, ByteHistogramLaneColumnsSixteenBytes) {
  // prepare() puts 16-byte words and lane columns first for byte input.
  Applicability A = prepareOn(privatize(), "atomics-vector-lane", "histogram");
  ASSERT_TRUE(A.Applies) << A.Reason;
  ASSERT_EQ(A.Suggestions.size(), 3u);
  EXPECT_EQ(A.Suggestions[0].getInt("vector_bytes"), int64_t(16));
  EXPECT_EQ(A.Suggestions[0].getString("copies"), std::string("lane"));
  EXPECT_FALSE(A.Suggestions[1].getInt("vector_bytes"));
  expectRewrite(privatize(), "atomics-vector-lane",
                makeEdit("privatize-atomics", "histogram",
                         {{"copies", std::string("lane")},
                          {"vector_bytes", int64_t(16)}}));
}

TEST(RestructurePrivatizeAtomicsTest, TemplateGridStrideShortsEightBytes) {
  Applicability A =
      prepareOn(privatize(), "atomics-vector-shorts", "sample_hist");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Suggestions[0].getInt("vector_bytes"), int64_t(16));
  expectRewrite(privatize(), "atomics-vector-shorts",
                makeEdit("privatize-atomics", "sample_hist",
                         {{"vector_bytes", int64_t(8)}}));
}

TEST(RestructurePrivatizeAtomicsTest, TemplateLoopThroughOperatorCalls) {
  expectRewrite(
      privatize(), "atomics-vector-operators",
      makeEdit("privatize-atomics", "hist", {{"vector_bytes", int64_t(4)}}));
}

TEST(RestructurePrivatizeAtomicsTest, EarlyReturnTwoInputsGivenBins) {
  // 4-byte inputs: no wide-load suggestion, but the edit applies.
  Applicability A =
      prepareOn(privatize(), "atomics-vector-weighted", "weighted");
  EXPECT_FALSE(A.Applies);
  expectRewrite(privatize(), "atomics-vector-weighted",
                makeEdit("privatize-atomics", "weighted",
                         {{"bins", int64_t(32)},
                          {"copies", std::string("warp")},
                          {"vector_bytes", int64_t(16)}}));
}

TEST(RestructurePrivatizeAtomicsTest, WideLoadNearMisses) {
  const Transform &T = privatize();
  auto E = [](const char *K, int64_t Bytes = 16) {
    return makeEdit("privatize-atomics", K, {{"vector_bytes", Bytes}});
  };
  const char *Case = "atomics-vector-refuse";
  expectRefusal(T, Case, E("strided"),
                "params.vector_bytes 16: the load 'd[2 * i]' is not "
                "unit-stride in 'i'");
  expectRefusal(T, Case, E("index_used"),
                "'i' is used at 9:38 other than as the index of a load p[i]");
  expectRefusal(T, Case, E("pixels"),
                "'px' has element type 'Pixel', which has no vector form");
  expectRefusal(T, Case, E("wide", 4),
                "'key' has 8-byte elements, which do not fill a 4-byte word");
  expectRefusal(T, Case, E("writes"), "'seen' is written in the kernel");
  expectRefusal(T, Case, E("counts"),
                "the loop body updates 'hits', declared outside it");
  expectRefusal(T, Case, E("generic"),
                "the element type of 'd' depends on a template parameter");
  expectRefusal(T, Case, E("sliding"),
                "the loop at 45:3 is not 'for (i = blockIdx.x * blockDim.x + "
                "threadIdx.x; i < n; i += blockDim.x * gridDim.x)'");
  expectRefusal(T, Case, E("strided", 2),
                "params.vector_bytes must be 1, 4, 8 or 16");
  expectRefusal(T, Case,
                makeEdit("privatize-atomics", "strided",
                         {{"copies", std::string("thread")}}),
                "params.copies must be 'block', 'warp' or 'lane'");
  // The unit-stride input also passes with 8-byte elements in 16 bytes.
  Input In = caseInput(Case);
  ASSERT_TRUE(In.Ctx);
  auto R = T.apply(*In.Ctx, E("wide"));
  EXPECT_TRUE(bool(R)) << (R ? "" : rejectionReason(R.takeError()));
}

TEST(RestructurePrivatizeAtomicsTest, LaneColumnsNeedThirtyTwoCopies) {
  // 32 columns of 512 ints are 64 KB.
  expectRefusal(
      privatize(), "atomics-weighted",
      makeEdit("privatize-atomics", "weighted",
               {{"bins", int64_t(512)}, {"copies", std::string("lane")}}),
      "need 65536 bytes of shared memory (512 elements per lane)");
}

} // namespace
