#include "CatalogTesting.h"
#include "Transforms/Restructure/SharedTilingInternal.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &sharedTiling() {
  static auto T = createSharedTilingTransform();
  return *T;
}

TEST(CatalogSharedTilingTest, TilesClassicMatmul) {
  std::string Src =
      R"(__global__ void matmul(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float sum = 0.0f;
    for (int k = 0; k < n; ++k)
      sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
  }
}
void run(const float *A, const float *B, float *C, int n) {
  dim3 block(16, 16);
  dim3 grid((n + 15) / 16, (n + 15) / 16);
  matmul<<<grid, block>>>(A, B, C, n);
}
)";
  Applicability A = prepareOn(sharedTiling(), Src, "matmul");
  EXPECT_TRUE(A.Applies) << A.Reason;
  // 16 x 16 launches: the register tile first, then the plain tiles.
  ASSERT_EQ(A.Suggestions.size(), 2u);
  EXPECT_EQ(A.Suggestions[0].getInt("tile"), 16);
  EXPECT_EQ(A.Suggestions[0].getInt("micro"), 8);
  EXPECT_EQ(A.Suggestions[1].getInt("tile"), 16);
  EXPECT_FALSE(A.Suggestions[1].getInt("micro").has_value());
  EXPECT_EQ(
      applyTo(sharedTiling(), Src,
              makeEdit("shared-tiling", "matmul", {{"tile", int64_t(16)}})),
      R"(__global__ void matmul(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float As[16][16];
  __shared__ float Bs[16][16];
  float sum = 0.0f;
  for (int kTile = 0; kTile < n; kTile += 16) {
    int aCol = kTile + threadIdx.x;
    int bRow = kTile + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = row < n && aCol < n ? A[row * n + aCol] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = bRow < n && col < n ? B[bRow * n + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < 16; ++k)
      sum += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) {
    C[row * n + col] = sum;
  }
}
void run(const float *A, const float *B, float *C, int n) {
  dim3 block(16, 16);
  dim3 grid((n + 15) / 16, (n + 15) / 16);
  matmul<<<grid, block>>>(A, B, C, n);
}
)");
}

TEST(CatalogSharedTilingTest, SeparateDimsEarlyReturnAndAlpha) {
  std::string Src =
      R"(__global__ void gemm(int m, int n, int k, float alpha, const double *X, int ldx,
                     const double *Y, int ldy, double *Z) {
  int c = threadIdx.x + blockDim.x * blockIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= m || c >= n) return;
  double acc = 0;
  for (int p = 0; p < k; p++) {
    acc += X[(size_t)r * ldx + p] * Y[(size_t)p * ldy + c];
  }
  Z[(size_t)r * n + c] = alpha * acc;
}
void run(const double *X, const double *Y, double *Z) {
  gemm<<<dim3(64, 64), dim3(8, 8)>>>(512, 512, 300, 2.0f, X, 300, Y, 512, Z);
}
)";
  EXPECT_EQ(
      applyTo(sharedTiling(), Src, makeEdit("shared-tiling", "gemm")),
      R"(__global__ void gemm(int m, int n, int k, float alpha, const double *X, int ldx,
                     const double *Y, int ldy, double *Z) {
  int c = threadIdx.x + blockDim.x * blockIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  __shared__ double As[8][8];
  __shared__ double Bs[8][8];
  double acc = 0;
  for (int kTile = 0; kTile < k; kTile += 8) {
    int aCol = kTile + threadIdx.x;
    int bRow = kTile + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = r < m && aCol < k ? X[(size_t)r * ldx + aCol] : 0.0;
    Bs[threadIdx.y][threadIdx.x] = bRow < k && c < n ? Y[(size_t)bRow * ldy + c] : 0.0;
    __syncthreads();
    for (int p = 0; p < 8; p++) {
      acc += As[threadIdx.y][p] * Bs[p][threadIdx.x];
    }
    __syncthreads();
  }
  if (r < m && c < n) {
    Z[(size_t)r * n + c] = alpha * acc;
  }
}
void run(const double *X, const double *Y, double *Z) {
  gemm<<<dim3(64, 64), dim3(8, 8)>>>(512, 512, 300, 2.0f, X, 300, Y, 512, Z);
}
)");
}

TEST(CatalogSharedTilingTest, FreshNamesAndOperandOrder) {
  // B written first in the product; names As/kTile already taken.
  std::string Src =
      R"(__global__ void mm(const float *As, const float *B, float *C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col < N && M > row) {
    float kTile = 0.0f;
    for (int k = 0; k < K; k += 1)
      kTile += B[k * N + col] * As[row * K + k];
    C[row * N + col] = kTile;
  }
}
void run(const float *A, const float *B, float *C) {
  const int t = 32;
  dim3 threads(t, t);
  mm<<<dim3(4, 4), threads>>>(A, B, C, 128, 128, 64);
}
)";
  std::string Out =
      applyTo(sharedTiling(), Src,
              makeEdit("shared-tiling", "mm", {{"tile", int64_t(32)}}));
  EXPECT_NE(
      Out.find(
          "  __shared__ float As1[32][32];\n  __shared__ float Bs[32][32];\n"),
      std::string::npos)
      << Out;
  EXPECT_NE(Out.find("for (int kTile1 = 0; kTile1 < K; kTile1 += 32) {"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("As1[threadIdx.y][threadIdx.x] = row < M && aCol < K ? "
                     "As[row * K + aCol] : 0.0f;"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("kTile += Bs[k][threadIdx.x] * As1[threadIdx.y][k];"),
            std::string::npos)
      << Out;
  EXPECT_NE(
      Out.find(
          "  if (col < N && M > row) {\n    C[row * N + col] = kTile;\n  }"),
      std::string::npos)
      << Out;
}

TEST(CatalogSharedTilingTest, RefusesNearMisses) {
  const char *Launch =
      "void run(const float *A, const float *B, float *C, int n) {\n"
      "  k<<<dim3(8, 8), dim3(16, 16)>>>(A, B, C, n);\n}\n";
  struct Case {
    std::string Src;
    const char *Why;
  } Cases[] = {
      // The block is not square.
      {R"(__global__ void k(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += A[row * n + i] * B[i * n + col];
    C[row * n + col] = s;
  }
}
void run(const float *A, const float *B, float *C, int n) {
  k<<<dim3(8, 8), dim3(32, 8)>>>(A, B, C, n);
}
)",
       "the block of k/launch0 ('dim3(32, 8)') is 32x8x1, not 8x8, 16x16 or "
       "32x32x1"},
      // A block that is not a constant.
      {R"(__global__ void k(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += A[row * n + i] * B[i * n + col];
    C[row * n + col] = s;
  }
}
void run(const float *A, const float *B, float *C, int n, int t) {
  k<<<dim3(8, 8), dim3(t, t)>>>(A, B, C, n);
}
)",
       "is not a constant"},
      // Not a product of loads.
      {std::string(
           R"(__global__ void k(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += A[row * n + i] + B[i * n + col];
    C[row * n + col] = s;
  }
}
)") + Launch,
       "the loop body is not 's += A[...] * B[...];'"},
      // An operand indexed by both row and col.
      {std::string(
           R"(__global__ void k(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += A[row * n + col + i] * B[i * n + col];
    C[row * n + col] = s;
  }
}
)") + Launch,
       "does not depend on 'i' and exactly one of 'row', 'col'"},
      // The loop does not start at 0.
      {std::string(
           R"(__global__ void k(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float s = 0;
    for (int i = 1; i < n; ++i) s += A[row * n + i] * B[i * n + col];
    C[row * n + col] = s;
  }
}
)") + Launch,
       "the loop is not 'for (int k = 0; k < K; ++k)'"},
      // The accumulator starts from a load.
      {std::string(
           R"(__global__ void k(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float s = C[row * n + col];
    for (int i = 0; i < n; ++i) s += A[row * n + i] * B[i * n + col];
    C[row * n + col] = s;
  }
}
)") + Launch,
       "starts from a value that is not the same for every thread"},
      // A guard on one index only.
      {std::string(
           R"(__global__ void k(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += A[row * n + i] * B[i * n + col];
    C[row * n + col] = s;
  }
}
)") + Launch,
       "the guard 'if (row < n)' is not"},
      // Already synchronizes.
      {std::string(
           R"(__global__ void k(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += A[row * n + i] * B[i * n + col];
    __syncthreads();
    C[row * n + col] = s;
  }
}
)") + Launch,
       "already synchronizes threads"},
      // A one-dimensional kernel.
      {std::string(
           R"(__global__ void k(const float *A, const float *B, float *C, int n) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col < n) C[col] = A[col] * B[col];
}
)") + Launch,
       "the body does not start with a row index"},
      // Never launched.
      {R"(__global__ void k(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += A[row * n + i] * B[i * n + col];
    C[row * n + col] = s;
  }
}
)",
       "is never launched in this file"},
  };
  for (const Case &C : Cases) {
    Applicability A = prepareOn(sharedTiling(), C.Src, "k");
    EXPECT_FALSE(A.Applies) << C.Src;
    EXPECT_NE(A.Reason.find(C.Why), std::string::npos)
        << "reason: " << A.Reason << "\nexpected: " << C.Why;
    std::string Out =
        applyTo(sharedTiling(), C.Src, makeEdit("shared-tiling", "k"));
    EXPECT_EQ(Out.rfind("error: ", 0), 0u) << Out;
  }
}

TEST(CatalogSharedTilingTest, TileMustMatchTheLaunch) {
  std::string Src =
      R"(__global__ void k(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += A[row * n + i] * B[i * n + col];
    C[row * n + col] = s;
  }
}
void run(const float *A, const float *B, float *C, int n) {
  k<<<dim3(8, 8), dim3(16, 16)>>>(A, B, C, n);
}
)";
  std::string Out =
      applyTo(sharedTiling(), Src,
              makeEdit("shared-tiling", "k", {{"tile", int64_t(32)}}));
  EXPECT_NE(Out.find("is 16x16x1, not 32x32x1 (change it with launch-config "
                     "first)"),
            std::string::npos)
      << Out;
  Out = applyTo(sharedTiling(), Src,
                makeEdit("shared-tiling", "k", {{"tile", int64_t(12)}}));
  EXPECT_NE(Out.find("tile must be 8, 16 or 32 (got 12)"), std::string::npos)
      << Out;
}

} // namespace

namespace {

const char *Jacobi =
    R"(__global__ void jacobi(int n, const float *in, float *out) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i > 0 && i < n - 1 && j > 0 && j < n - 1)
    out[i * n + j] = 0.25f * (in[(i - 1) * n + j] + in[(i + 1) * n + j] + in[i * n + j - 1] + in[i * n + j + 1]);
}
void run(int n, const float *a, float *b) {
  BLOCK
  jacobi<<<dim3((n + 15) / 16, (n + 15) / 16), threads>>>(n, a, b);
}
)";

std::string withBlock(llvm::StringRef Block) {
  std::string S = Jacobi;
  S.replace(S.find("BLOCK"), 5, Block.str());
  return S;
}

TEST(CatalogSharedTilingTest, StagesAStencilTileWithItsHalo) {
  std::string Src = withBlock("dim3 threads(16, 16);");
  Applicability A = prepareOn(sharedTiling(), Src, "jacobi");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("2D stencil: 4 reads of 'in' at rows i - 1..i + 1, "
                          "columns j - 1..j + 1"),
            std::string::npos)
      << A.Reason;
  std::string Out =
      applyTo(sharedTiling(), Src, makeEdit("shared-tiling", "jacobi"));
  // The tile, one condition per read, the barrier, then the original guard.
  EXPECT_NE(Out.find("  __shared__ float inTile[18][18];\n"
                     "  for (int slot = threadIdx.y * 16 + threadIdx.x; "
                     "slot < 324; slot += 256) {\n"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("(gy + 1 > 0 && gy + 1 < (n - 1) && gx > 0 && gx < "
                     "(n - 1) && ty < 16 && tx >= 1 && tx < 17) ||"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("  __syncthreads();\n  if (i > 0 && i < n - 1 && j > 0 "
                     "&& j < n - 1)\n"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("0.25f * (inTile[threadIdx.y][threadIdx.x + 1] + "
                     "inTile[threadIdx.y + 2][threadIdx.x + 1] + "
                     "inTile[threadIdx.y + 1][threadIdx.x] + "
                     "inTile[threadIdx.y + 1][threadIdx.x + 2]);"),
            std::string::npos)
      << Out;
}

TEST(CatalogSharedTilingTest, StencilReadsThroughAnIndexHelper) {
  std::string Src = R"(__device__ inline size_t at(int x, int y, int w) {
  return (size_t)y * w + x;
}
__device__ int calls;
__device__ int counted(int x, int y, int w) {
  ++calls;
  return y * w + x;
}
__global__ void blur(int w, int h, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
    return;
  out[at(x, y, w)] = in[at(x - 1, y, w)] + in[at(x + 1, y + 1, w)];
}
__global__ void blur2(int w, int h, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
    return;
  out[y * w + x] = in[counted(x - 1, y, w)] + in[counted(x + 1, y, w)];
}
void run(int w, int h, const float *in, float *out) {
  blur<<<dim3((w + 15) / 16, (h + 15) / 16), dim3(16, 16)>>>(w, h, in, out);
  blur2<<<dim3((w + 15) / 16, (h + 15) / 16), dim3(16, 16)>>>(w, h, in, out);
}
)";
  // What the helper returns, its arguments in place: (y + 1) * w + x + 1.
  Applicability A = prepareOn(sharedTiling(), Src, "blur");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("2 reads of 'in' at rows y..y + 1, columns "
                          "x - 1..x + 1"),
            std::string::npos)
      << A.Reason;
  std::string Out =
      applyTo(sharedTiling(), Src, makeEdit("shared-tiling", "blur"));
  EXPECT_NE(Out.find("inTile[ty][tx] = in[(size_t)gy * w + gx];"),
            std::string::npos)
      << Out;
  // A helper that counts its calls is not an index.
  Applicability B = prepareOn(sharedTiling(), Src, "blur2");
  EXPECT_FALSE(B.Applies);
  EXPECT_NE(B.Reason.find("'in' is read at 'counted(x - 1, y, w)'"),
            std::string::npos)
      << B.Reason;
}

TEST(CatalogSharedTilingTest, StencilNeedsAConstant2DBlock) {
  Applicability A =
      prepareOn(sharedTiling(), withBlock("int threads = 256;"), "jacobi");
  EXPECT_FALSE(A.Applies);
  EXPECT_NE(A.Reason.find("is 256x1x1: a 2D tile needs a 2D block"),
            std::string::npos)
      << A.Reason;
  // A tile parameter that disagrees with the launches.
  std::string Out =
      applyTo(sharedTiling(), withBlock("dim3 threads(16, 16);"),
              makeEdit("shared-tiling", "jacobi", {{"tile", int64_t(32)}}));
  EXPECT_NE(Out.find("the launches use 16x16x1 blocks, not 32x32x1"),
            std::string::npos)
      << Out;
}

} // namespace

namespace {

TEST(CatalogSharedTilingTest, StencilReadsMustRunWheneverTheGuardPasses) {
  struct Case {
    const char *Body, *Why;
  } Cases[] = {
      {"float s = 0.0f;\n    for (int k = 0; k < m; ++k)\n      s += in[(y "
       "- 1) * n + x] + in[(y + 1) * n + x];\n    out[y * n + x] = s;",
       "is inside a loop without a constant range"},
      {"if (in[y * n + x] < 0.0f)\n      return;\n    out[y * n + x] = in[(y "
       "- 1) * n + x] + in[(y + 1) * n + x];",
       "the guarded code leaves early at"},
      {"int lim = n - 1;\n    if (y + 1 < lim)\n      out[y * n + x] = in[(y "
       "+ 1) * n + x] + in[(y - 1) * n + x];",
       "uses 'lim', declared after the bounds guard"},
      // A `continue` is a read's bound only when it tests the read's row
      // or column, at the top of a constant loop's body.
      {"float s = 0.0f;\n    for (int k = 0; k < 3; ++k) {\n      if (k == "
       "1)\n        continue;\n      s += in[(y + k - 1) * n + x];\n    }\n  "
       "  out[y * n + x] = s;",
       "is guarded by 'k == 1', which does not bound its own row or column"},
      {"float s = 0.0f;\n    for (int k = 0; k < 3; ++k) {\n      if (s > "
       "0.0f) {\n        if (y + k > n)\n          continue;\n      }\n    "
       "  s += in[(y + k - 1) * n + x];\n    }\n    out[y * n + x] = s;",
       "the guarded code leaves early at"},
      // A row pointer into the input must only be read through.
      {"float s = 0.0f;\n    for (int k = 0; k < 3; ++k) {\n      float *r = "
       "(float *)in + (y + k - 1) * n;\n      s += r[x];\n    }\n    "
       "out[y * n + x] = s;",
       "no array is read at offsets"},
  };
  for (const Case &C : Cases) {
    std::string Src =
        std::string(
            R"(__global__ void st(int n, int m, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < n - 1 && y > 0 && y < n - 1) {
    )") +
        C.Body + R"(
  }
}
void run(int n, const float *a, float *b) {
  st<<<dim3(n / 16, n / 16), dim3(16, 16)>>>(n, 2, a, b);
}
)";
    Applicability A = prepareOn(sharedTiling(), Src, "st");
    EXPECT_FALSE(A.Applies) << Src;
    EXPECT_NE(A.Reason.find(C.Why), std::string::npos)
        << "reason: " << A.Reason << "\nexpected: " << C.Why;
  }
}

// A row pointer into the input, a `continue` that skips the rows outside
// the grid and a constant pitch: the reads through the pointer are reads
// of 'in' at (y + k - 1) * 512 + x, the `continue` bounds their row.
TEST(CatalogSharedTilingTest, StencilReadsThroughRowPointersAfterAContinue) {
  std::string Src = R"(constexpr int N = 512;
__global__ void st(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < N && y < N) {
    float s = 0.0f;
    for (int k = 0; k < 3; ++k) {
      int r = y + k - 1;
      if (r < 0 || r >= N)
        continue;
      const float *row = in + r * N;
      s += row[x];
    }
    out[y * N + x] = s;
  }
}
void run(const float *a, float *b) {
  st<<<dim3(N / 16, N / 16), dim3(16, 16)>>>(a, b);
}
)";
  Applicability A = prepareOn(sharedTiling(), Src, "st");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("1 read of 'in' at rows y - 1..y + 1, columns x..x"),
            std::string::npos)
      << A.Reason;
  // rows takes it as well (N / 16 is ceil(N / 16) for N = 512): rows
  // first, the plain tile last.
  ASSERT_GE(A.Suggestions.size(), 2u);
  EXPECT_TRUE(A.Suggestions.front().getInt("rows").has_value());
  EXPECT_FALSE(A.Suggestions.back().getInt("rows").has_value());
}

// micro=8 on the early-return form, with unsigned indices, a rectangular
// product and two statements after the loop: the stores keep the original
// statements with the indices and the accumulator renamed, under the
// original bounds; an existing __launch_bounds__ stays as written.
TEST(CatalogSharedTilingTest, RegisterTileRenamesTheStores) {
  std::string Src =
      R"(__global__ void __launch_bounds__(256) gemm(int m, int n, int p, float alpha, const float *A, const float *B, float *C) {
  unsigned r0 = blockIdx.y * blockDim.y + threadIdx.y;
  unsigned c0 = blockIdx.x * blockDim.x + threadIdx.x;
  if (r0 >= m || c0 >= n)
    return;
  float acc = 0.0f;
  for (int q = 0; q < p; ++q)
    acc += B[q * n + c0] * A[r0 * p + q];
  float v = alpha * acc;
  C[r0 * n + c0] = v + C[r0 * n + c0];
}
void run(int m, int n, int p, const float *A, const float *B, float *C) {
  gemm<<<dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16)>>>(m, n, p, 2.0f, A, B, C);
}
)";
  std::string Out =
      applyTo(sharedTiling(), Src,
              makeEdit("shared-tiling", "gemm",
                       {{"tile", int64_t(16)}, {"micro", int64_t(8)}}));
  for (const char *Want :
       {"__global__ void __launch_bounds__(256) gemm(",
        "aNext[i] = ar < m && ak < p ? A[ar * p + ak] : 0.0f;",
        "bNext[i] = bk < p && bc < n ? B[bk * n + bc] : 0.0f;",
        "unsigned int r = rowBase +", "unsigned int c = colBase +",
        "if (r < m && c < n && r < gridDim.y * 16 && c < gridDim.x * 16) {",
        "float v = alpha * accR[i][j];", "C[r * n + c] = v + C[r * n + c];"})
    EXPECT_NE(Out.find(Want), std::string::npos) << Want << "\n" << Out;
  EXPECT_EQ(Out.find("r0"), std::string::npos) << Out;
  EXPECT_EQ(Out.find("__launch_bounds__(256, 2)"), std::string::npos) << Out;
}

} // namespace

namespace {

/// pointerAlias on statement \p At of kernel \p Name's body, its scope the
/// statements after it: the parameter and the number of offsets
/// ("A+2"), or "no: <why>".
std::string aliasAt(const Input &In, llvm::StringRef Name, size_t At) {
  const clang::FunctionDecl *FD =
      findKernelDecl(In.TU.AST->getASTContext(), Name);
  if (!FD || !FD->getBody())
    return "no kernel";
  const auto *CS = llvm::cast<clang::CompoundStmt>(FD->getBody());
  std::vector<const clang::Stmt *> Body(CS->body_begin(), CS->body_end());
  if (At >= Body.size())
    return "no statement";
  std::string WhyNot;
  auto A = sharedtiling::pointerAlias(llvm::dyn_cast<clang::DeclStmt>(Body[At]),
                                      llvm::ArrayRef(Body).drop_front(At + 1),
                                      FD, WhyNot);
  if (!A)
    return "no: " + WhyNot;
  return A->Param->getNameAsString() + "+" + std::to_string(A->Offsets.size());
}

// A local pointer declared once as a parameter plus integer offsets and
// only ever subscripted is an alias; stepped, passed on, offset by a value
// written later, read from memory, cast, chained or from a parameter the
// kernel moves, it is not.
TEST(CatalogSharedTilingTest, PointerAliasesNameAPlaceInAParameter) {
  Input In(R"(__device__ float use(const float *p) { return p[0]; }
__global__ void ok(int lda, const float *A, float *C) {
  int row = threadIdx.y;
  const float *a = A + row * lda + 2;
  float *c = &C[row * lda];
  int off = row;
  off = off * 2;
  const float *q = (size_t)off + A;
  c[1] = a[0] + q[3];
}
__global__ void stepped(int lda, const float *A, float *C) {
  int row = threadIdx.y;
  const float *s = A + row;
  s += lda;
  C[0] = s[0];
}
__global__ void passed(const float *A, float *C) {
  int row = threadIdx.y;
  const float *p = A + row;
  C[0] = use(p);
}
__global__ void later(const float *A, float *C) {
  int off = threadIdx.y;
  const float *q = A + off;
  off += 1;
  C[0] = q[0];
}
__global__ void loaded(const float *A, float *C, const int *idx) {
  const float *g = A + idx[threadIdx.x];
  C[0] = g[0];
}
__global__ void cast(const float *A, float *C) {
  const char *bytes = (const char *)A + threadIdx.x;
  C[0] = bytes[0];
}
__global__ void chained(const float *A, float *C) {
  const float *base = A + blockIdx.x;
  const float *row = base + threadIdx.y;
  C[0] = row[0];
}
__global__ void moved(const float *A, float *C) {
  A += blockIdx.x;
  const float *w = A + threadIdx.y;
  C[0] = w[0];
}
)");
  ASSERT_TRUE(In.Ctx);
  EXPECT_EQ(aliasAt(In, "ok", 1), "A+2");
  EXPECT_EQ(aliasAt(In, "ok", 2), "C+1");
  // 'off' is written before the pointer, not after it.
  EXPECT_EQ(aliasAt(In, "ok", 5), "A+1");
  EXPECT_EQ(aliasAt(In, "ok", 3), "no: it does not declare one pointer");
  EXPECT_EQ(aliasAt(In, "stepped", 1),
            "no: 's' changes after its declaration (it is reassigned, "
            "stepped or its address is taken)");
  EXPECT_EQ(aliasAt(In, "passed", 1),
            "no: 'p' is used other than as the base of 'p[i]' (passed on, "
            "compared or copied)");
  EXPECT_EQ(aliasAt(In, "later", 1),
            "no: 'q' is offset by a value that uses 'off', which is written "
            "after it");
  EXPECT_EQ(aliasAt(In, "loaded", 0),
            "no: 'g' is offset by a value that reads memory, calls a "
            "function or writes");
  EXPECT_EQ(aliasAt(In, "cast", 0),
            "no: 'bytes' is not a pointer parameter plus an offset ('P + e' "
            "or '&P[e]')");
  EXPECT_EQ(aliasAt(In, "chained", 1),
            "no: 'row' is not a pointer parameter plus an offset ('P + e' or "
            "'&P[e]')");
  EXPECT_EQ(aliasAt(In, "moved", 1),
            "no: 'w' is an offset from 'A', which the kernel changes");
}

// An accumulator of the template's type: each instantiation's variable is
// found at the pattern's place; every one must be arithmetic.
TEST(CatalogSharedTilingTest, TemplateAccumulatorsAreCheckedPerInstantiation) {
  // Member operators: a global one would make the pattern's `+=` a call.
  std::string Kernel = R"(struct Pair {
  float x;
  __host__ __device__ Pair(int v = 0) : x(v) {}
  __host__ __device__ Pair operator*(Pair b) const { return Pair(x * b.x); }
  __host__ __device__ void operator+=(Pair b) { x += b.x; }
};
template <typename T>
__global__ void prod(int n, const T *A, const T *B, T *C) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    T sum = T(0);
    for (int k = 0; k < n; ++k)
      sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
  }
}
)";
  auto Launches = [&](llvm::StringRef Types) {
    std::string Src = Kernel + "void run(int n) {\n";
    for (llvm::StringRef T : llvm::split(Types, ','))
      Src += "  prod<" + T.str() + "><<<dim3(n / 16, n / 16), dim3(16, " +
             "16)>>>(n, (const " + T.str() + " *)0, (const " + T.str() +
             " *)0, (" + T.str() + " *)0);\n";
    return Src + "}\n";
  };
  {
    Input In(Launches("float,double"));
    ASSERT_TRUE(In.Ctx);
    const clang::FunctionDecl *FD =
        findKernelDecl(In.TU.AST->getASTContext(), "prod");
    ASSERT_TRUE(FD);
    const auto *If = llvm::cast<clang::IfStmt>(
        llvm::cast<clang::CompoundStmt>(FD->getBody())->body_back());
    const auto *Sum = llvm::cast<clang::VarDecl>(
        llvm::cast<clang::DeclStmt>(
            llvm::cast<clang::CompoundStmt>(If->getThen())->body_front())
            ->getSingleDecl());
    std::vector<const clang::VarDecl *> Vars =
        sharedtiling::instantiatedVars(Sum, FD);
    ASSERT_EQ(Vars.size(), 2u);
    ASSERT_TRUE(Vars[0] && Vars[1]);
    EXPECT_EQ(Vars[0]->getType().getAsString(), "float");
    EXPECT_EQ(Vars[1]->getType().getAsString(), "double");
    EXPECT_EQ(sharedtiling::dependentAccumulatorProblem(Sum, FD), "");
  }
  std::string Pairs = applyTo(sharedTiling(), Launches("float,Pair"),
                              makeEdit("shared-tiling", "prod"));
  EXPECT_NE(Pairs.find("the accumulator 'sum' has type 'Pair' in "
                       "prod<Pair>, not an arithmetic type"),
            std::string::npos)
      << Pairs;
  std::string Never =
      applyTo(sharedTiling(), Kernel, makeEdit("shared-tiling", "prod"));
  EXPECT_NE(Never.find("the accumulator 'sum' has type 'T', which depends on "
                       "template parameters, and the kernel is never "
                       "instantiated in this file"),
            std::string::npos)
      << Never;
  std::string Doubles =
      applyTo(sharedTiling(), Launches("double"),
              makeEdit("shared-tiling", "prod", {{"tile", int64_t(16)}}));
  EXPECT_NE(Doubles.find("  __shared__ T As[16][16];\n  __shared__ T "
                         "Bs[16][16];\n  T sum = T(0);\n"),
            std::string::npos)
      << Doubles;
}

} // namespace

namespace {

// A flat index over 1D blocks of 64 threads, decoded into the matrix, the
// row and the column of an 8 x 8 product: flatIndices names each, and the
// rewrite makes the block 8 x 8 (rows 1 too) without guards where no
// thread returns.
TEST(CatalogSharedTilingTest, FlatIndicesDecodeOneMatrixPerBlock) {
  std::string Src = R"(#define D 8
__device__ int rowOf(size_t g) { return (int)((g / D) % D); }
__device__ int col0() { return threadIdx.x % D; }
__global__ void bmm(const double *A, const double *B, double *C) {
  int unused = 3;
  size_t g = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  unsigned m = g / (D * D);
  const size_t base = m * (D * D);
  int r = rowOf(g), c = g % D;
  double s = 0;
  for (int k = 0; k < D; ++k)
    s += A[base + r * D + k] * B[base + k * D + c];
  C[base + r * D + c] = s;
}
void run(const double *A, const double *B, double *C, int batch) {
  bmm<<<batch, dim3(64)>>>(A, B, C);
}
)";
  {
    Input In(Src);
    ASSERT_TRUE(In.Ctx);
    Edit E = makeEdit("shared-tiling", "bmm");
    auto K = resolveKernel(*In.Ctx, E, "bmm");
    ASSERT_TRUE(bool(K)) << llvm::toString(K.takeError());
    const auto *Body = llvm::cast<clang::CompoundStmt>(K->Decl->getBody());
    std::vector<const clang::Stmt *> Stmts(Body->body_begin(),
                                           Body->body_end());
    size_t At = 1;
    std::string Why;
    auto F =
        sharedtiling::flatIndices(*In.Ctx, *K, Stmts, At, std::nullopt, Why);
    ASSERT_TRUE(F.has_value()) << Why;
    EXPECT_EQ(F->Threads, 64);
    EXPECT_EQ(F->D, 8);
    EXPECT_EQ(F->Gid->getName(), "g");
    ASSERT_EQ(F->Blocks.size(), 1u);
    EXPECT_EQ(F->Blocks[0]->getName(), "m");
    EXPECT_EQ(F->Row->getName(), "r");
    EXPECT_EQ(F->Col->getName(), "c");
    EXPECT_EQ(F->Return, nullptr);
    // g, m, base (uniform once m is blockIdx.x), then r and c.
    EXPECT_EQ(F->Decls.size(), 4u);
    EXPECT_EQ(At, 5u);
    // Starting at the uniform declaration: not a flat index at all.
    At = 0;
    EXPECT_FALSE(
        sharedtiling::flatIndices(*In.Ctx, *K, Stmts, At, std::nullopt, Why));
    EXPECT_EQ(Why, "");
    // A tile other than the decoded matrix's.
    At = 1;
    EXPECT_FALSE(
        sharedtiling::flatIndices(*In.Ctx, *K, Stmts, At, int64_t(16), Why));
    EXPECT_EQ(Why, "the launches use blocks of 64 threads, one 8x8 matrix "
                   "per block: tile must be 8 (got 16)");
    // rowOf computes from its argument alone.
    EXPECT_TRUE(sharedtiling::plainIndexCalls(F->Row->getInit(),
                                              In.TU.AST->getASTContext()));
  }
  std::string Out =
      applyTo(sharedTiling(), Src, makeEdit("shared-tiling", "bmm", {}));
  EXPECT_NE(Out.find("  int unused = 3;\n"
                     "  // shared-tiling rows=1: 8 x 8 outputs per block, 1 "
                     "rows per thread.\n"
                     "  __shared__ double As[8][8];\n"
                     "  __shared__ double Bs[8][8];\n"
                     "  unsigned int m = blockIdx.x;\n"
                     "  const size_t base = m * (D * D);\n"
                     "  int c = threadIdx.x;\n"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("As[y][threadIdx.x] = ak < D ? A[base + ar * D + ak] : "
                     "0.0;\n"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("  bmm<<<batch, dim3(8, 8)>>>(A, B, C);\n"),
            std::string::npos)
      << Out;
  EXPECT_EQ(Out.find("threadIdx.x / "), std::string::npos) << Out;

  // An index helper that reads threadIdx itself is not an index of the
  // row or the column: the factor is refused.
  std::string Own = Src;
  Own.replace(Own.find("B[base + k * D + c]"), 19, "B[base + k * D + col0()]");
  std::string Refused =
      applyTo(sharedTiling(), Own, makeEdit("shared-tiling", "bmm"));
  EXPECT_NE(Refused.find("a factor of the product is not a plain load"),
            std::string::npos)
      << Refused;
}

// Window loops over a template radius (also through a constexpr local)
// take the range every instantiation gives them, R pinned to its value.
TEST(CatalogSharedTilingTest, TemplateWindowLoopsReadPerInstantiation) {
  Input In(R"(template <int R>
__global__ void win(const float *in, float *out, int w) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  constexpr int D = 2 * R + 1;
  for (int dy = -R; dy < D - R; ++dy)
    out[y * w + x] += in[(y + dy) * w + x];
}
void run(const float *in, float *out, int w) { win<2><<<1, 1>>>(in, out, w); }
)");
  ASSERT_TRUE(In.Ctx);
  const auto *FD = findKernelDecl(In.TU.AST->getASTContext(), "win");
  ASSERT_TRUE(FD);
  const auto *Loop = llvm::cast<clang::ForStmt>(
      llvm::cast<clang::CompoundStmt>(FD->getBody())->body_back());
  const auto *Read = llvm::cast<clang::ArraySubscriptExpr>(
      llvm::cast<clang::BinaryOperator>(Loop->getBody())
          ->getRHS()
          ->IgnoreImpCasts());
  std::map<const clang::ValueDecl *, std::pair<int64_t, int64_t>> Loops;
  std::vector<sharedtiling::TemplatePin> Pins;
  EXPECT_EQ(sharedtiling::templateLoopRanges(*In.Ctx, FD, {Read}, Loops, Pins),
            "");
  ASSERT_EQ(Loops.size(), 1u);
  EXPECT_EQ(Loops.begin()->second, std::make_pair(int64_t(-2), int64_t(2)));
  EXPECT_EQ(sharedtiling::pinsNote(Pins),
            " with R = 2 (win<2>), the value every instantiation in this "
            "file gives (the rewrite asserts it)");
}

} // namespace
