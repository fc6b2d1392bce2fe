//===- RestructureAllPairsTilingTest.cpp - all-pairs-tiling --------------===//

#include "RestructureTesting.h"

using namespace optiml;
using namespace optiml::restructure_testing;

namespace {

const Transform &tiling() {
  static auto T = createAllPairsTilingTransform();
  return *T;
}

TEST(RestructureAllPairsTilingTest, NBodyEarlyReturn) {
  Applicability A = prepareOn(tiling(), "tiling-nbody", "accel/loop0");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason, "every thread of a block walks j over [0, n) reading "
                      "'pos[j]'; rewrite: stage tiles of 256 elements in "
                      "shared memory (threads outside the bounds help copy)");
  expectRewrite(
      tiling(), "tiling-nbody",
      makeEdit("all-pairs-tiling", "accel/loop0", {{"tile", int64_t(128)}}));
}

TEST(RestructureAllPairsTilingTest, SharedVectorInsideGuard) {
  expectRewrite(tiling(), "tiling-gemv",
                makeEdit("all-pairs-tiling", "matvec/loop0"));
}

TEST(RestructureAllPairsTilingTest, TemplateWindowNoGuard) {
  expectRewrite(
      tiling(), "tiling-template",
      makeEdit("all-pairs-tiling", "pair_sum/loop0", {{"tile", int64_t(64)}}));
}

TEST(RestructureAllPairsTilingTest, NearMisses) {
  const Transform &T = tiling();
  auto E = [](const char *L) { return makeEdit("all-pairs-tiling", L); };
  expectRefusal(T, "tiling-refuse", E("triangle/loop0"),
                "differs between the threads of a block");
  expectRefusal(T, "tiling-refuse", E("written/loop0"),
                "'x' is written at 16:7; a staged copy would be stale");
  expectRefusal(T, "tiling-refuse", E("neighbour/loop0"),
                "'x' is used in loop neighbour/loop0 other than as 'x[j]'");
  expectRefusal(T, "tiling-refuse", E("own_row/loop0"),
                "reads no array at '[j]'");
}

} // namespace
