//===- CatalogSharedTilingRowsTest.cpp - shared-tiling rows, 2D stencils --===//
//-===//
//
// Several output rows per thread, the input window in registers
// (SharedTilingRows.cpp), and its interior form (SharedTilingWindow.cpp).
//
//===----------------------------------------------------------------------===//
#include "CatalogTesting.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &sharedTiling() {
  static auto T = createSharedTilingTransform();
  return *T;
}

// A weighted 5x5 filter: the sums per row become arrays, the loop over
// the reads' row is driven by the input rows, and the read in a local's
// initializer keeps its `if` in the load's condition.
const char *WeightedFilter = R"(#include "cuda_mock.h"
__global__ void wf(const float *img, const float *wts, float *res, int W,
                   int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  float num = 0.f, den = 0.f;
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 5; j++) {
      int yy = y + i - 2, xx = x + j - 2;
      if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
        float v = img[yy * W + xx];
        num += v * wts[i * 5 + j];
        den += wts[i * 5 + j];
      }
    }
  res[y * W + x] = num / den;
}
int main() {
  float *a = 0;
  int W = 100, H = 100;
  dim3 g((W + 31) / 32, (H + 7) / 8);
  wf<<<g, dim3(32, 8)>>>(a, a, a, W, H);
}
)";

TEST(CatalogSharedTilingTest, RowsStreamTheInputRowByRow) {
  // Its reads move along one loop over the window's rows: it streams, and
  // rows 8 is offered before the plain tile (after the column forms).
  Applicability A = prepareOn(sharedTiling(), WeightedFilter, "wf");
  ASSERT_TRUE(A.Applies) << A.Reason;
  ASSERT_EQ(A.Suggestions.size(), 4u);
  EXPECT_EQ(A.Suggestions[2].getInt("rows"), int64_t(8));
  EXPECT_FALSE(A.Suggestions[2].getInt("cols"));
  EXPECT_FALSE(A.Suggestions[3].getInt("rows"));
  std::string Out =
      applyTo(sharedTiling(), WeightedFilter,
              makeEdit("shared-tiling", "wf", {{"rows", int64_t(4)}}));
  EXPECT_NE(
      Out.find("    bool run[4];\n    float num[4];\n    float den[4];\n"),
      std::string::npos)
      << Out;
  EXPECT_NE(Out.find("      num[f1] = 0.f; den[f1] = 0.f;\n"),
            std::string::npos)
      << Out;
  // Which rows need window row r, once per window row; then each element.
  EXPECT_NE(Out.find("    for (int r = 0; r < 8; ++r) {\n"
                     "      const int gy = yBase + r - 2;\n"
                     "      bool rowNeed = false;\n"
                     "      #pragma unroll\n"
                     "      for (int f1 = 0; f1 < 4; ++f1) {\n"
                     "        const int yr = yBase + f1;\n"
                     "        rowNeed = rowNeed || (r - f1 >= 0 && r - f1 <= 4 "
                     "&& yr < H && x < W);\n"
                     "      }\n"
                     "      float win[5];\n"),
            std::string::npos)
      << Out;
  // Loaded only inside the image: the read's `if` reaches the load.
  EXPECT_NE(Out.find("const bool need = (gy >= 0 && gy < H && gx >= 0 && "
                     "gx < W && c >= 0 && c <= 4 && rowNeed);"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("        const int i = r - f1;\n"
                     "        if (run[f1] && i >= 0 && i <= 4) {\n"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("float v = win[j];"), std::string::npos) << Out;
  EXPECT_NE(Out.find("res[y * W + x] = num[f1] / den[f1];"), std::string::npos)
      << Out;
  EXPECT_NE(Out.find("wf<<<dim3(g.x, (g.y + 3) / 4, g.z), dim3(32, 8)>>>"),
            std::string::npos)
      << Out;
}

TEST(CatalogSharedTilingTest, RowsInteriorWritesTheBoundsTestsValues) {
  std::string Out =
      applyTo(sharedTiling(), WeightedFilter,
              makeEdit("shared-tiling", "wf", {{"rows", int64_t(4)}}));
  // Each bound once, where it is tightest: the guard's `y < H` at the last
  // row, the reads' `yy >= 0` at the first row's least offset and `yy < H`
  // at the last row's greatest, the columns likewise.
  size_t If = Out.find("  if (yBase + 3 < H && x < W && yBase - 2 >= 0 && "
                       "yBase + 5 < H && x - 2 >= 0 && x + 2 < W) {\n");
  ASSERT_NE(If, std::string::npos) << Out;
  size_t Else = Out.find("  } else {\n", If);
  ASSERT_NE(Else, std::string::npos) << Out;
  std::string Inside = Out.substr(If, Else - If), Outside = Out.substr(Else);
  // Inside, the guard and the read's `if` are the values they have there,
  // and the loads test only which rows and columns the reads reach.
  EXPECT_NE(Inside.find("run[f1] = true;"), std::string::npos) << Inside;
  // The read's `if` goes (its block stays), and so do the locals only the
  // tests read: `yy` and `xx`, and the row index in the window's loop.
  EXPECT_NE(Inside.find("          for (int j = 0; j < 5; j++) {\n"
                        "            {\n"
                        "              float v = win[j];\n"),
            std::string::npos)
      << Inside;
  EXPECT_EQ(Inside.find("if (true)"), std::string::npos) << Inside;
  EXPECT_EQ(Inside.find("xx"), std::string::npos) << Inside;
  EXPECT_EQ(Inside.find("const int y = yBase + f1;\n        const int i"),
            std::string::npos)
      << Inside;
  EXPECT_NE(Outside.find("const int y = yBase + f1;\n        const int i"),
            std::string::npos)
      << Outside;
  EXPECT_NE(Inside.find("rowNeed1 = rowNeed1 || (r - f1 >= 0 && r - f1 <= 4);"),
            std::string::npos)
      << Inside;
  EXPECT_NE(Inside.find("const bool need = (c >= 0 && c <= 4 && rowNeed1);"),
            std::string::npos)
      << Inside;
  EXPECT_EQ(Inside.find("yr"), std::string::npos) << Inside;
  EXPECT_EQ(Inside.find("yy >= 0"), std::string::npos) << Inside;
  // Elsewhere, every test as before.
  EXPECT_NE(Outside.find("run[f1] = !(x >= W || y >= H);"), std::string::npos)
      << Outside;
  EXPECT_NE(Outside.find("if (yy >= 0 && yy < H && xx >= 0 && xx < W) {"),
            std::string::npos)
      << Outside;
  EXPECT_NE(Outside.find("const bool need = (gy >= 0 && gy < H && gx >= 0 && "
                         "gx < W && c >= 0 && c <= 4 && rowNeed);"),
            std::string::npos)
      << Outside;
}

TEST(CatalogSharedTilingTest, RowsRefuseASumDeclaredBeforeTheGuard) {
  std::string Src = R"(#include "cuda_mock.h"
__global__ void carry(int n, const float *a, float *b) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  float s = 0.f;
  if (x > 0 && x < n - 1 && y > 0 && y < n - 1) {
    s += a[(y - 1) * n + x] + a[(y + 1) * n + x];
    b[y * n + x] = s;
  }
}
int main() {
  float *a = 0;
  int n = 64;
  carry<<<dim3((n + 15) / 16, (n + 15) / 16), dim3(16, 16)>>>(n, a, a);
}
)";
  std::string Out =
      applyTo(sharedTiling(), Src,
              makeEdit("shared-tiling", "carry", {{"rows", int64_t(2)}}));
  EXPECT_NE(Out.find("'s' is declared outside the guarded code and written"),
            std::string::npos)
      << Out;
  Applicability A = prepareOn(sharedTiling(), Src, "carry");
  for (const Edit &E : A.Suggestions)
    EXPECT_FALSE(E.getInt("rows").has_value()) << "rows offered";
}

} // namespace

namespace {

TEST(CatalogSharedTilingTest, ColsLoadEachWindowRowAsVectors) {
  // A streamed stencil whose pitch is its column bound and which reads its
  // own point: rows 4 with four columns per thread is offered first, then
  // rows 8 with two.
  Applicability A = prepareOn(sharedTiling(), WeightedFilter, "wf");
  ASSERT_TRUE(A.Applies) << A.Reason;
  ASSERT_GE(A.Suggestions.size(), 2u);
  EXPECT_EQ(A.Suggestions[0].getInt("cols"), int64_t(4));
  EXPECT_EQ(A.Suggestions[0].getInt("rows"), int64_t(4));
  EXPECT_EQ(A.Suggestions[1].getInt("cols"), int64_t(2));
  EXPECT_EQ(A.Suggestions[1].getInt("rows"), int64_t(8));
  std::string Out =
      applyTo(sharedTiling(), WeightedFilter,
              makeEdit("shared-tiling", "wf",
                       {{"rows", int64_t(8)}, {"cols", int64_t(2)}}));
  // Both sums per row and column; the window row of 2 + 4 values rounded
  // out to three float2 loads; the grid halved along x, divided by 8 on y.
  EXPECT_NE(Out.find("float num[8][2];"), std::string::npos) << Out;
  EXPECT_NE(Out.find("float den[8][2];"), std::string::npos) << Out;
  EXPECT_NE(
      Out.find("reinterpret_cast<const float2 *>(&img[gy * W + xBase - 2])"),
      std::string::npos)
      << Out;
  EXPECT_NE(Out.find("for (int k = 0; k < 3; ++k)"), std::string::npos) << Out;
  EXPECT_NE(
      Out.find(
          "W % 2 == 0 && reinterpret_cast<size_t>(img) % sizeof(float2) == 0"),
      std::string::npos)
      << Out;
  EXPECT_NE(
      Out.find("wf<<<dim3((g.x + 1) / 2, (g.y + 7) / 8, g.z), dim3(32, 8)>>>"),
      std::string::npos)
      << Out;
}

TEST(CatalogSharedTilingTest, ColsEdgeThreadsRunTheRowsWithEveryTest) {
  // Threads outside the interior run the rows' tested form one column at a
  // time (a rolled loop, so that one column's window and sums are live at
  // once): each column streams its own 5-wide window, loaded element by
  // element where a read passes; not each output's reads one by one.
  std::string Out =
      applyTo(sharedTiling(), WeightedFilter,
              makeEdit("shared-tiling", "wf",
                       {{"rows", int64_t(8)}, {"cols", int64_t(2)}}));
  size_t Else = Out.find("} else {");
  ASSERT_NE(Else, std::string::npos) << Out;
  std::string Edge = Out.substr(Else);
  EXPECT_NE(Edge.find("#pragma unroll 1\n"
                      "    for (int cx = 0; cx < 2; ++cx) {\n"
                      "      const int x = xBase + cx;\n"),
            std::string::npos)
      << Edge;
  EXPECT_NE(Edge.find("float num[8];"), std::string::npos) << Edge;
  EXPECT_NE(Edge.find("run[f1] = !(x >= W || y >= H);"), std::string::npos)
      << Edge;
  EXPECT_NE(Edge.find("float win[5];"), std::string::npos) << Edge;
  EXPECT_NE(Edge.find("win[c] = need ? img[gy * W + gx] : float(0);"),
            std::string::npos)
      << Edge;
  EXPECT_NE(Edge.find("res[y * W + x] = num[f1] / den[f1];"), std::string::npos)
      << Edge;
  EXPECT_EQ(Edge.find("reinterpret_cast"), std::string::npos) << Edge;
  EXPECT_EQ(Edge.find("for (int f1 = 0; f1 < 8; ++f1) {\n"
                      "          const int x"),
            std::string::npos)
      << Edge;
}

} // namespace

namespace {

// Zero padding through conditional expressions: a read in the true arm runs
// when the condition holds, as under an `if`, and `x > 0` bounds the
// column of the read at x - 1 from below by -1.
const char *TernaryPad = R"(#include "cuda_mock.h"
__global__ void pad3(int h, int w, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float s = 0.f;
    for (int dy = -1; dy <= 1; ++dy) {
      const int yy = y + dy;
      const float l = (yy >= 0 && yy < h && x > 0) ? in[yy * w + x - 1] : 0.f;
      const float r = (yy >= 0 && yy < h && x + 1 < w) ? in[yy * w + x + 1] : 0.f;
      s += l + r;
    }
    out[y * w + x] = s;
  }
}
int main() {
  float *a = 0;
  int w = 64, h = 64;
  dim3 g((w + 15) / 16, (h + 15) / 16);
  pad3<<<g, dim3(16, 16)>>>(h, w, a, a);
}
)";

TEST(CatalogSharedTilingTest, ReadsInAConditionalTakeItsBounds) {
  Applicability A = prepareOn(sharedTiling(), TernaryPad, "pad3");
  ASSERT_TRUE(A.Applies) << A.Reason;
  std::string Out =
      applyTo(sharedTiling(), TernaryPad,
              makeEdit("shared-tiling", "pad3", {{"rows", int64_t(4)}}));
  // The interior: the left read's bound at the least column it reads, the
  // right one's at the greatest.
  EXPECT_NE(Out.find("x - 1 > (0) - 1 && x + 1 < w"), std::string::npos) << Out;
  EXPECT_NE(Out.find("const float l = true ? win[0] : 0.f;"), std::string::npos)
      << Out;
  // A read in the false arm runs when the condition fails: refused.
  std::string FalseArm = TernaryPad;
  size_t At =
      FalseArm.find("(yy >= 0 && yy < h && x > 0) ? in[yy * w + x - 1] : 0.f");
  ASSERT_NE(At, std::string::npos);
  FalseArm.replace(At, 55,
                   "(yy < 0 || yy >= h || x <= 0) ? 0.f : in[yy * w + x - 1]");
  Applicability B = prepareOn(sharedTiling(), FalseArm, "pad3");
  EXPECT_FALSE(B.Applies);
  EXPECT_NE(B.Reason.find("is in the false arm of a conditional expression"),
            std::string::npos)
      << B.Reason;
}

} // namespace
