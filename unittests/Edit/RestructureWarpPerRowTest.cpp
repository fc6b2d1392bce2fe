//===- RestructureWarpPerRowTest.cpp - warp-per-row ----------------------===//

#include "RestructureTesting.h"

using namespace optiml;
using namespace optiml::restructure_testing;

namespace {

const Transform &warpPerRow() {
  static auto T = createWarpPerRowTransform();
  return *T;
}

TEST(RestructureWarpPerRowTest, SoftmaxThreePasses) {
  Applicability A = prepareOn(warpPerRow(), "warp-softmax", "softmax_rows");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason,
            "one thread per item 'row' (bound 'rows') with 3 inner loops: "
            "softmax_rows/loop0 (max of 'm') softmax_rows/loop1 (sum of 's') "
            "softmax_rows/loop2 (elementwise writes); rewrite: one warp per "
            "item, lanes stride the loops");
  expectRewrite(warpPerRow(), "warp-softmax",
                makeEdit("warp-per-row", "softmax_rows"));
}

TEST(RestructureWarpPerRowTest, CsrRowsEarlyReturnUnsigned) {
  expectRewrite(warpPerRow(), "warp-spmv",
                makeEdit("warp-per-row", "csr_mv",
                         {{"block_size", int64_t(128)}}));
}

TEST(RestructureWarpPerRowTest, TemplateHelperIndexPointerOffset) {
  expectRewrite(warpPerRow(), "warp-gemv-template",
                makeEdit("warp-per-row", "gemv_t"));
}

TEST(RestructureWarpPerRowTest, BlockPerRowSeveralAccumulators) {
  expectRewrite(warpPerRow(), "warp-layernorm-block",
                makeEdit("warp-per-row", "norm_rows",
                         {{"per", std::string("block")},
                          {"block_size", int64_t(128)}}));
}

TEST(RestructureWarpPerRowTest, NearMisses) {
  const Transform &T = warpPerRow();
  auto E = [](const char *K) { return makeEdit("warp-per-row", K); };
  expectRefusal(T, "warp-refuse", E("prefix"),
                "carries 'acc' from one element to the next");
  expectRefusal(T, "warp-refuse", E("every_other"),
                "does not step 'j' by one");
  expectRefusal(T, "warp-refuse", E("same_cell"),
                "writes 'y[row]', which does not depend on 'j'");
  expectRefusal(T, "warp-refuse", E("recurrence"),
                "a dependence between iterations");
  expectRefusal(T, "warp-refuse", E("first_negative"), "leaves early");
  expectRefusal(T, "warp-refuse", E("no_guard"), "not a bounds guard");
  expectRefusal(T, "warp-refuse", E("lane_aware"),
                "uses thread or block indices");
  expectRefusal(T, "warp-refuse", E("no_loop"), "no inner 'for' loop");
}

TEST(RestructureWarpPerRowTest, BadParams) {
  expectRefusal(warpPerRow(), "warp-softmax",
                makeEdit("warp-per-row", "softmax_rows",
                         {{"block_size", int64_t(100)}}),
                "multiple of 32");
}

} // namespace
