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
  expectRewrite(privatize(), "atomics-buckets",
                makeEdit("privatize-atomics", "bucket_sizes"));
}

TEST(RestructurePrivatizeAtomicsTest, GivenBinsGuardTheRest) {
  expectRefusal(privatize(), "atomics-weighted",
                makeEdit("privatize-atomics", "weighted"),
                "the size of 'total' is not known at compile time: the index "
                "'c' is not bounded");
  expectRewrite(privatize(), "atomics-weighted",
                makeEdit("privatize-atomics", "weighted",
                         {{"bins", int64_t(32)}}));
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
