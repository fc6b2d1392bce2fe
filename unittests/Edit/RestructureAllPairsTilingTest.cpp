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

TEST(RestructureAllPairsTilingTest, WhileUnderTemplateBlockGuard) {
  // A counting while, a guard on 'blockIdx.x * BLOCK + threadIdx.x', the
  // own point built by a constructor, ys[i] read inside the loop.
  Applicability A = prepareOn(tiling(), "tiling-while", "neighbours/loop0");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason, "every thread of a block walks j over [0, n) reading "
                      "'xs[j]', 'ys[j]', 'w[j]'; rewrite: stage tiles of 256 "
                      "elements in shared memory (threads outside the "
                      "bounds help copy)");
  expectRewrite(tiling(), "tiling-while",
                makeEdit("all-pairs-tiling", "neighbours/loop0",
                         {{"tile", int64_t(64)}}));
}

TEST(RestructureAllPairsTilingTest, LookAlikes) {
  const Transform &T = tiling();
  auto E = [](const char *L) { return makeEdit("all-pairs-tiling", L); };
  const char *C = "tiling-lookalike";
  expectRefusal(T, C, E("gather/loop0"),
                "'pos' is used in loop gather/loop0 other than as 'pos[j]' "
                "or at an index the loop does not change");
  expectRefusal(T, C, E("logged/loop0"), "calls 'record' at 52:5");
  expectRefusal(T, C, E("printed/loop0"), "calls 'printf' at 64:5");
  expectRefusal(T, C, E("ldg/loop0"),
                "'x[j]' is used at 78:16 other than for its value");
  expectRefusal(T, C, E("pairs/loop0"),
                "'x[j]' is used at 88:22 other than for its value");
  expectRefusal(T, C, E("lane_exit/loop0"),
                "the statement at 112:3 before the loop");
  expectRefusal(T, C, E("half_exit/loop0"), "the kernel leaves early at 126:7");
  expectRefusal(T, C, E("until/loop0"),
                "loop until/loop0 leaves early at 144:7; a tile would end it");
  expectRefusal(T, C, E("down/loop0"), "it counts down");
  // Some threads of a block leave before the guard (if-block form).
  expectRefusal(T, C, E("some_exit/loop0"), "the kernel leaves early at");
  // A row pointer differs between threads: its reads stay global ones.
  // A whole float4 assigned through operator= after the loop; sincosf
  // writing through its pointers inside it.
  expectRefusal(T, C, E("moved/loop0"), "'pos' is written at 231:3");
  expectRefusal(T, C, E("angles/loop0"), "calls 'sincosf' at 240:5");
  expectRefusal(T, C, E("row_sum/loop0"),
                "reads no array at '[j]' that points to the same data in "
                "every thread");
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
