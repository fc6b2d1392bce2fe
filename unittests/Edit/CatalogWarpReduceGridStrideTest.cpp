#include "CatalogTesting.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &warpReduce() {
  static auto T = createWarpReduceTransform();
  return *T;
}

Edit gridStride(llvm::StringRef Target, int64_t MaxBlocks = 1056) {
  return makeEdit("warp-reduce", Target,
                  {{"grid_stride", true}, {"max_blocks", MaxBlocks}});
}

/// A tree over `s` fed by \p Leaf (statements before the barrier), combined
/// by \p Final, launched with \p Launch.
std::string tree(const std::string &Leaf, const std::string &Final,
                 const std::string &Launch = "k<<<(n + 255) / 256, 256>>>(x, "
                                             "w, out, n);",
                 const std::string &Elem = "float") {
  return "__global__ void k(const " + Elem + " *x, const " + Elem + " *w, " +
         Elem + " *out, int n) {\n  __shared__ " + Elem +
         " s[256];\n  int tid = threadIdx.x;\n  int i = blockIdx.x * "
         "blockDim.x + threadIdx.x;\n" +
         Leaf +
         "\n  __syncthreads();\n  for (int st = blockDim.x / 2; st > 0; st >>= "
         "1) {\n    if (tid < st)\n      s[tid] += s[tid + st];\n    "
         "__syncthreads();\n  }\n  if (tid == 0)\n    " +
         Final + "\n}\nvoid run(const " + Elem + " *x, const " + Elem +
         " *w, " + Elem + " *out, int n) { " + Launch + " }\n";
}

TEST(CatalogWarpReduceGridStrideTest, DotBecomesGridStrideLoopAndCappedGrid) {
  std::string Src =
      tree("  s[tid] = (i < n) ? x[i] * w[i] : 0.f;", "atomicAdd(out, s[0]);");
  EXPECT_TRUE(warpReduce().changesPrecision(gridStride("k")));
  EXPECT_EQ(
      applyTo(warpReduce(), Src, gridStride("k", 264)),
      R"(__global__ void k(const float *x, const float *w, float *out, int n) {
  __shared__ float s[256 / 32];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = 0.f;
  for (int j = i; j < n; j += gridDim.x * blockDim.x)
    v += x[j] * w[j];
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffff, v, off);
  if (tid % 32 == 0)
    s[tid / 32] = v;
  __syncthreads();
  if (tid < 32) {
    v = tid < blockDim.x / 32 ? s[tid] : 0;
    for (int off = 16; off > 0; off /= 2)
      v += __shfl_down_sync(0xffffffff, v, off);
  }
  if (tid == 0)
    atomicAdd(out, v);
}
void run(const float *x, const float *w, float *out, int n) { k<<<(n + 255) / 256 < 264 ? (n + 255) / 256 : 264, 256>>>(x, w, out, n); }
)");
}

TEST(CatalogWarpReduceGridStrideTest, LoadsThroughLdg) {
  std::string Out =
      applyTo(warpReduce(),
              tree("  s[tid] = (i < n) ? __ldg(&x[i]) * __ldg(&w[i]) : 0.f;",
                   "atomicAdd(out, s[0]);"),
              gridStride("k"));
  EXPECT_NE(Out.find("    v += __ldg(&x[j]) * __ldg(&w[j]);\n"),
            std::string::npos)
      << Out;
  EXPECT_NE(applyTo(warpReduce(),
                    tree("  s[tid] = (i < n) ? __ldg(&x[i + 1]) : 0.f;",
                         "atomicAdd(out, s[0]);"),
                    gridStride("k"))
                .find("reads 'x[i + 1]' at an index other than 'i'"),
            std::string::npos);
}

TEST(CatalogWarpReduceGridStrideTest, PrepareSuggestsItOnlyWhenTheLeafIsFound) {
  Applicability A = prepareOn(
      warpReduce(),
      tree("  s[tid] = (i < n) ? x[i] : 0.f;", "atomicAdd(out, s[0]);"), "k");
  ASSERT_TRUE(A.Applies) << A.Reason;
  ASSERT_EQ(A.Suggestions.size(), 2u);
  EXPECT_FALSE(A.Suggestions[0].getBool("grid_stride").has_value());
  EXPECT_EQ(A.Suggestions[1].getBool("grid_stride"), true);
  EXPECT_EQ(A.Suggestions[1].getInt("max_blocks"), 1056);
  EXPECT_EQ(A.Suggestions[1].getBool("changes_precision"), true);

  Applicability B = prepareOn(
      warpReduce(),
      tree("  s[tid] = (i < n) ? x[i] : 0.f;", "out[blockIdx.x] = s[0];"), "k");
  ASSERT_TRUE(B.Applies) << B.Reason;
  EXPECT_EQ(B.Suggestions.size(), 1u);
}

TEST(CatalogWarpReduceGridStrideTest, IntegerMinWithTypeMaximum) {
  std::string Src =
      "__global__ void k(const int *x, int *out, int n) {\n"
      "  __shared__ int s[128];\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  s[threadIdx.x] = i < n ? x[i] - 1 : 2147483647;\n"
      "  __syncthreads();\n"
      "  for (int h = 64; h > 0; h >>= 1) {\n"
      "    if (threadIdx.x < h)\n"
      "      s[threadIdx.x] = min(s[threadIdx.x + h], s[threadIdx.x]);\n"
      "    __syncthreads();\n"
      "  }\n"
      "  if (threadIdx.x == 0)\n"
      "    atomicMin(out, s[0]);\n"
      "}\n"
      "void run(const int *x, int *out) { k<<<5000, 128>>>(x, out, 640000); "
      "}\n";
  EXPECT_EQ(applyTo(warpReduce(), Src, gridStride("k")),
            R"(__global__ void k(const int *x, int *out, int n) {
  __shared__ int s[128 / 32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = 2147483647;
  for (int j = i; j < n; j += gridDim.x * blockDim.x)
    v = min(v, x[j] - 1);
  for (int off = 16; off > 0; off /= 2)
    v = min(v, __shfl_down_sync(0xffffffff, v, off));
  if (threadIdx.x % 32 == 0)
    s[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? s[threadIdx.x] : s[0];
    for (int off = 16; off > 0; off /= 2)
      v = min(v, __shfl_down_sync(0xffffffff, v, off));
  }
  if (threadIdx.x == 0)
    atomicMin(out, v);
}
void run(const int *x, int *out) { k<<<1056, 128>>>(x, out, 640000); }
)");
}

TEST(CatalogWarpReduceGridStrideTest, FloatMaxWithMacroIdentity) {
  std::string Src =
      "#define NEG_INF (-__builtin_huge_valf())\n"
      "__global__ void k(const float *x, float *out, int n) {\n"
      "  __shared__ float s[256];\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  s[threadIdx.x] = (i < n) ? x[i] : NEG_INF;\n"
      "  __syncthreads();\n"
      "  for (int h = blockDim.x / 2; h > 0; h >>= 1) {\n"
      "    if (threadIdx.x < h)\n"
      "      s[threadIdx.x] = fmaxf(s[threadIdx.x], s[threadIdx.x + h]);\n"
      "    __syncthreads();\n"
      "  }\n"
      "  if (threadIdx.x == 0)\n"
      "    atomicMaxFloat(out, s[0]);\n"
      "}\n";
  std::string Helper = "__device__ void atomicMaxFloat(float *p, float v);\n";
  std::string Out = applyTo(warpReduce(), Helper + Src, gridStride("k"));
  EXPECT_NE(Out.find("  float v = NEG_INF;\n"
                     "  for (int j = i; j < n; j += gridDim.x * blockDim.x)\n"
                     "    v = fmaxf(v, x[j]);\n"),
            std::string::npos)
      << Out;
  // The same tree with 0 for out-of-range threads is refused.
  std::string Zero = Src;
  Zero.replace(Zero.find(": NEG_INF"), 9, ": 0.f");
  EXPECT_NE(applyTo(warpReduce(), Helper + Zero, gridStride("k"))
                .find("out-of-range threads contribute '0.f', not the "
                      "identity of max"),
            std::string::npos);
}

TEST(CatalogWarpReduceGridStrideTest, GridWrittenWithMacroIsCappedAsWritten) {
  std::string Src =
      "#define BLOCK 256\n" +
      tree("  s[tid] = (i < n) ? x[i] : 0.f;", "atomicAdd(out, s[0]);",
           "k<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(x, w, out, n);");
  std::string Out = applyTo(warpReduce(), Src, gridStride("k"));
  EXPECT_NE(Out.find("k<<<(n + BLOCK - 1) / BLOCK < 1056 ? (n + BLOCK - 1) "
                     "/ BLOCK : 1056, BLOCK>>>(x, w, out, n);"),
            std::string::npos)
      << Out;
}

TEST(CatalogWarpReduceGridStrideTest, RefusesNarrowSumIntoWiderTotal) {
  // examples/reduction.cu: int partials, an unsigned long long total.
  std::string Src =
      "__global__ void k(const int *x, unsigned long long *total, int n) {\n"
      "  __shared__ int s[256];\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  s[threadIdx.x] = i < n ? x[i] : 0;\n"
      "  __syncthreads();\n"
      "  for (int h = blockDim.x / 2; h > 0; h >>= 1) {\n"
      "    if (threadIdx.x < h)\n"
      "      s[threadIdx.x] += s[threadIdx.x + h];\n"
      "    __syncthreads();\n"
      "  }\n"
      "  if (threadIdx.x == 0)\n"
      "    atomicAdd(total, (unsigned long long)s[0]);\n"
      "}\n";
  EXPECT_NE(applyTo(warpReduce(), Src, gridStride("k"))
                .find("the block's sum is 'int' but the total is 'unsigned "
                      "long long': with grid_stride each block sums many more "
                      "elements and could overflow"),
            std::string::npos);
}

/// tree() with the index computed by \p Index (helpers in \p Helpers before
/// the kernel), launched with \p Launch.
std::string indexedTree(const std::string &Helpers, const std::string &Index,
                        const std::string &Launch,
                        const std::string &Final = "atomicAdd(out, s[0]);") {
  std::string Src =
      tree("  s[tid] = (i < n) ? x[i] * w[i] : 0.f;", Final, Launch);
  std::string Old = "int i = blockIdx.x * blockDim.x + threadIdx.x;";
  Src.replace(Src.find(Old), Old.size(), Index);
  return Helpers + Src;
}

TEST(CatalogWarpReduceGridStrideTest, IndexOverTheRowsOfA2DGrid) {
  // Written out: the stride counts every block of the grid, a dim3 of
  // constants becomes their capped product.
  std::string Out = applyTo(
      warpReduce(),
      indexedTree("",
                  "int i = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x "
                  "+ tid;",
                  "k<<<dim3(64, 64), 256>>>(x, w, out, 1048576);"),
      gridStride("k", 264));
  EXPECT_NE(Out.find("  for (int j = i; j < n; j += gridDim.x * gridDim.y * "
                     "blockDim.x)\n    v += x[j] * w[j];\n"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("k<<<264, 256>>>(x, w, out, 1048576);"), std::string::npos)
      << Out;
  // Through a helper, a dim3 of expressions whose z is kept: 64 columns of
  // ceil(ceil(n / 256) / 64) rows cover n.
  Out = applyTo(
      warpReduce(),
      indexedTree("__device__ int row_major() { return gridDim.x * blockIdx.y "
                  "+ blockIdx.x; }\n",
                  "int i = blockDim.x * row_major() + threadIdx.x;",
                  "k<<<dim3(64, ((n + 255) / 256 + 63) / 64, n % 3), "
                  "256>>>(x, w, out, n);"),
      gridStride("k"));
  EXPECT_NE(Out.find("k<<<dim3(1ull * 64 * (((n + 255) / 256 + 63) / 64) < "
                     "1056 ? 64 * (((n + 255) / 256 + 63) / 64) : 1056, 1, "
                     "n % 3), 256>>>"),
            std::string::npos)
      << Out;
  // A 1D index through a helper steps by the 1D grid.
  Out = applyTo(warpReduce(),
                indexedTree("__device__ int gid() { return blockIdx.x * "
                            "blockDim.x + threadIdx.x; }\n",
                            "int i = gid();",
                            "k<<<(n + 255) / 256, 256>>>(x, w, out, n);"),
                gridStride("k"));
  EXPECT_NE(Out.find("j += gridDim.x * blockDim.x)"), std::string::npos) << Out;
}

TEST(CatalogWarpReduceGridStrideTest, RowsLookAlikesAreRefused) {
  const char *Rows = "__device__ unsigned rows() { return blockIdx.y * "
                     "gridDim.x + blockIdx.x; }\n";
  struct Case {
    std::string Src;
    const char *Why;
  } Cases[] = {
      // Columns first: not the row-by-row count.
      {indexedTree("",
                   "int i = (blockIdx.x * gridDim.y + blockIdx.y) * "
                   "blockDim.x + tid;",
                   "k<<<dim3(4, 4), 256>>>(x, w, out, n);"),
       "the leaf's guard compares 'i', not a local index"},
      // A helper with a parameter is not read through.
      {indexedTree("__device__ int lin(int g) { return blockIdx.y * g + "
                   "blockIdx.x; }\n",
                   "int i = lin(gridDim.x) * blockDim.x + tid;",
                   "k<<<dim3(4, 4), 256>>>(x, w, out, n);"),
       "the leaf's guard compares 'i', not a local index"},
      // The block's row read again, through the helper, outside the index.
      {indexedTree(Rows,
                   "int i = rows() * blockDim.x + tid;\n  unsigned r = "
                   "rows();\n  (void)r;",
                   "k<<<dim3(4, 4), 256>>>(x, w, out, n);"),
       "reads 'rows()' at"},
      // A lane too narrow for the thread index is not read through.
      {indexedTree(Rows,
                   "signed char lane = threadIdx.x;\n  int i = rows() * "
                   "blockDim.x + lane;",
                   "k<<<dim3(4, 4), 256>>>(x, w, out, n);"),
       "the leaf's guard compares 'i', not a local index"},
      // A 2D grid for a 1D index.
      {indexedTree("", "int i = blockIdx.x * blockDim.x + tid;",
                   "k<<<dim3(4, 4), 256>>>(x, w, out, n);"),
       "is not a one-dimensional integer expression"},
      // Blocks of two dimensions.
      {indexedTree(Rows, "int i = rows() * blockDim.x + tid + threadIdx.y;",
                   "k<<<4, 256>>>(x, w, out, n);"),
       "uses 2D thread indices"},
  };
  for (const Case &C : Cases) {
    std::string Out = applyTo(warpReduce(), C.Src, gridStride("k"));
    EXPECT_NE(Out.find(C.Why), std::string::npos) << C.Src << "\n" << Out;
    EXPECT_EQ(Out.rfind("error: ", 0), 0u) << Out;
  }
}

TEST(CatalogWarpReduceGridStrideTest, Refusals) {
  struct Case {
    std::string Src;
    const char *Why;
  } Cases[] = {
      {tree("  s[tid] = (i < n) ? x[i] * w[tid] : 0.f;",
            "atomicAdd(out, s[0]);"),
       "reads 'w[tid]' at an index other than 'i'"},
      {tree("  s[tid] = (i < n) ? x[2 * i] : 0.f;", "atomicAdd(out, s[0]);"),
       "reads 'x[2 * i]' at an index other than 'i'"},
      {tree("  s[tid] = (i < n) ? *x : 0.f;", "atomicAdd(out, s[0]);"),
       "reads through the pointer '*x'"},
      {tree("  s[tid] = x[i];", "atomicAdd(out, s[0]);"),
       "is not guarded by the index's bound"},
      {tree("  s[tid] = (i < n) ? x[i] : 0.f;", "atomicAdd(&out[tid], s[0]);"),
       "differs between blocks"},
      {tree("  s[tid] = (i < n) ? x[i] : 0.f;",
            "atomicAdd(&out[blockIdx.x % 4], s[0]);"),
       "differs between blocks"},
      {tree("  s[tid] = (tid < n) ? x[tid] : 0.f;", "atomicAdd(out, s[0]);"),
       "not a local index 'i = blockIdx.x * blockDim.x + threadIdx.x'"},
      {tree("  float v = 0.f;\n  if (i < n) v = x[i];\n  v *= 2.f;\n  s[tid] "
            "= v;",
            "atomicAdd(out, s[0]);"),
       "comes from 'v', which is used at"},
      {tree("  s[tid] = (i < n) ? x[i] : 0.f;", "atomicAdd(out, s[0]);",
            "dim3 g(4, 4); k<<<g, 256>>>(x, w, out, n);"),
       "grid_stride must cap the grid of every launch"},
      {"__global__ void k(const float *x, float *out, int n) {\n"
       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  if (i < n) atomicAdd(out, x[i]);\n"
       "}\n",
       "grid_stride applies to shared-memory tree reductions only"},
  };
  for (const Case &C : Cases) {
    std::string Out = applyTo(warpReduce(), C.Src, gridStride("k"));
    EXPECT_NE(Out.find(C.Why), std::string::npos) << C.Src << "\n" << Out;
    EXPECT_EQ(Out.rfind("error: ", 0), 0u) << Out;
  }
  EXPECT_NE(
      applyTo(warpReduce(),
              tree("  s[tid] = (i < n) ? x[i] : 0.f;", "atomicAdd(out, s[0]);"),
              gridStride("k", 0))
          .find("max_blocks must be at least 1"),
      std::string::npos);
}

} // namespace
