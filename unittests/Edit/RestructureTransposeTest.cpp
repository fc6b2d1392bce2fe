//===- RestructureTransposeTest.cpp - transpose-through-shared -----------===//

#include "RestructureTesting.h"
#include "Transforms/TransformSupport.h"

using namespace optiml;
using namespace optiml::restructure_testing;

namespace {

const Transform &transpose() {
  static auto T = createTransposeThroughSharedTransform();
  return *T;
}

TEST(RestructureTransposeTest, ReadCoalescedWriteStrided) {
  Applicability A = prepareOn(transpose(), "transpose-basic", "transpose");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason, "2D copy 'out[(size_t)c * rows + r] = in[(size_t)r * "
                      "cols + c]': the read is unit-stride in 'c', the write "
                      "in 'r'; rewrite: 32x32 shared tile padded by 1, "
                      "blocks of 32x8");
  expectRewrite(transpose(), "transpose-basic",
                makeEdit("transpose-through-shared", "transpose"));
  // 32 x 32 tiles, 8 rows a pass, first; then 64 x 64, 4 rows a pass,
  // offered because its own analysis takes it.
  ASSERT_EQ(A.Suggestions.size(), 2u);
  EXPECT_EQ(A.Suggestions[0].getInt("tile"), int64_t(32));
  EXPECT_EQ(A.Suggestions[0].getInt("block_rows"), int64_t(8));
  EXPECT_EQ(A.Suggestions[1].getInt("tile"), int64_t(64));
  EXPECT_EQ(A.Suggestions[1].getInt("block_rows"), int64_t(4));
}

TEST(RestructureTransposeTest, ReverseOrientationEarlyReturn) {
  expectRewrite(transpose(), "transpose-gather",
                makeEdit("transpose-through-shared", "gather_t",
                         {{"tile", int64_t(16)},
                          {"block_rows", int64_t(16)},
                          {"padding", int64_t(2)}}));
}

TEST(RestructureTransposeTest, TemplatePointerOffsets) {
  expectRewrite(transpose(), "transpose-template",
                makeEdit("transpose-through-shared", "batch_transpose"));
}

TEST(RestructureTransposeTest, RowPointerAfterEarlyReturn) {
  Applicability A =
      prepareOn(transpose(), "transpose-rowptr", "transpose_rows");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason, "2D copy 'dst_col[row] = src_row[col]': the read is "
                      "unit-stride in 'col', the write in 'row'; rewrite: "
                      "32x32 shared tile padded by 1, blocks of 32x8");
  expectRewrite(transpose(), "transpose-rowptr",
                makeEdit("transpose-through-shared", "transpose_rows"));
}

TEST(RestructureTransposeTest, TemplateBlockSizesAndHelpers) {
  expectRewrite(transpose(), "transpose-scaled",
                makeEdit("transpose-through-shared", "tile_t"));
}

TEST(RestructureTransposeTest, BatchedFloat2WithConstantSizes) {
  Applicability A = prepareOn(transpose(), "transpose-batched", "batch_c");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason,
            "2D copy 'out[b * ROWS * COLS + c * ROWS + r] = in[b * ROWS * "
            "COLS + r * COLS + c]': the read is unit-stride in 'c', the "
            "write in 'r'; rewrite: 32x32 shared tile padded by 1, blocks of "
            "32x8");
  expectRewrite(transpose(), "transpose-batched",
                makeEdit("transpose-through-shared", "batch_c"));
}

TEST(RestructureTransposeTest, GridZAtEachLaunch) {
  Input In(R"(#include "cuda_mock.h"
__global__ void k(int *p) {}
#define GO(g, b) k<<<g, b>>>(p)
dim3 make(int n);
void run(int *p, int n) {
  dim3 g(4, 4, n);
  k<<<g, 32>>>(p);
  k<<<dim3(1, 2, n + 1), 32>>>(p);
  k<<<dim3(1, 2), 32>>>(p);
  k<<<n, 32>>>(p);
  k<<<make(n), 32>>>(p);
  GO(dim3(1, 2, n), 32);
}
)",
           casePath("grid-z"), hermeticConfig());
  ASSERT_TRUE(In.Ctx);
  const KernelInfo *K = In.Model.findKernel("k");
  ASSERT_TRUE(K);
  std::vector<std::string> Z;
  for (const LaunchSite &L : K->Launches)
    Z.push_back(gridZText(*In.Ctx, L));
  EXPECT_EQ(Z, (std::vector<std::string>{"g.z", "n + 1", "", "", "(make(n)).z",
                                         "n"}));
}

TEST(RestructureTransposeTest, LookAlikes) {
  const Transform &T = transpose();
  auto E = [](const char *K) {
    return makeEdit("transpose-through-shared", K);
  };
  const char *Case = "transpose-lookalikes";
  expectRefusal(T, Case, E("mirror"),
                "'r * cols + (cols - 1 - c)' and 'r * cols + c' are not of "
                "the form");
  expectRefusal(T, Case, E("in_place_row"),
                "the copy reads and writes the same array 'a'");
  expectRefusal(T, Case, E("cube"), "unexpected thread index 'z'");
  expectRefusal(T, Case, E("rows_only"),
                "the guard does not bound both 'c' and 'r'");
  expectRefusal(T, Case, E("twice"),
                "the guarded statement is not one element copy");
  expectRefusal(T, Case, E("ragged"), "the bounds differ between threads");
  expectRefusal(T, Case, E("block_tag"),
                "the copy depends on 'blockIdx.x', which the tiled launch "
                "changes (of the builtin variables only blockIdx.z and "
                "gridDim.z keep their values)");
  expectRefusal(T, Case, E("ticket"),
                "the declaration of 't' changes something, and the tiled "
                "launch runs it in fewer threads");
  expectRefusal(T, Case, E("counted"),
                "the copy calls 'Counted::operator=', which does more than "
                "copy the element");
  expectRefusal(T, Case, E("zeroed"),
                "'Zeroed' has a default constructor that does something");
  expectRefusal(T, Case, E("short_grid"),
                "launch short_grid/launch0 is not shown to run a thread for "
                "every x below the guard's bound 'cols'");
}

TEST(RestructureTransposeTest, NearMisses) {
  const Transform &T = transpose();
  auto E = [](const char *K) {
    return makeEdit("transpose-through-shared", K);
  };
  expectRefusal(T, "transpose-refuse", E("copy2d"),
                "both unit-stride in 'c': nothing to transpose");
  expectRefusal(T, "transpose-refuse", E("flat"), "no 2D thread index");
  expectRefusal(T, "transpose-refuse", E("two_reads"),
                "must write one array element and read one");
  expectRefusal(T, "transpose-refuse", E("scaled_mismatch"),
                "'c' counts blocks of '16' threads in x, but the block of "
                "scaled_mismatch/launch0 ('dim3(32, 8)') is not known to "
                "have that size there");
  expectRefusal(T, "transpose-refuse", E("row_loaded"),
                "the declaration 'const float *row = src[r]' before the copy "
                "reads memory");
  expectRefusal(T, "transpose-refuse", E("not_a_decl"),
                "the guarded statement is not one element copy");
  expectRefusal(T, "transpose-refuse", E("lane_helper"),
                "depends on per-thread values other than 'c' and 'r'");
  expectRefusal(T, "transpose-refuse", E("in_place"),
                "the copy reads and writes the same array 'a'");
  expectRefusal(T, "transpose-refuse", E("same_buffer"),
                "same_buffer/launch0 passes 'out' as both 'in' (read) and "
                "'out' (written): a transpose in place depends on the order "
                "threads run in");
  expectRefusal(T, "transpose-basic",
                makeEdit("transpose-through-shared", "transpose",
                         {{"tile", int64_t(32)}, {"block_rows", int64_t(5)}}),
                "block_rows dividing tile");
}

} // namespace
