#include "CatalogTesting.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &launchConfig() {
  static auto T = createLaunchConfigTransform();
  return *T;
}

const char *Scale = R"(__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = a * x[i];
}
)";

TEST(CatalogLaunchConfigTest, RescalesCeilDivGrid) {
  std::string Src = std::string(Scale) + R"(void run(float *x, int n) {
  scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n);
  scale<<<(n + (128 - 1)) / 128, dim3(128)>>>(x, 3.0f, n);
}
)";
  Applicability A = prepareOn(launchConfig(), Src, "scale/launch0");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Suggestions.size(), 2u); // 128 and 512; 256 is the current
  EXPECT_EQ(A.PriorScale, 1);          // one row per warp already
  EXPECT_EQ(applyTo(launchConfig(), Src,
                    makeEdit("launch-config", "scale/launch0",
                             {{"block", int64_t(128)}})),
            std::string(Scale) + R"(void run(float *x, int n) {
  scale<<<(n + 127) / 128, 128>>>(x, 2.0f, n);
  scale<<<(n + (128 - 1)) / 128, dim3(128)>>>(x, 3.0f, n);
}
)");
  EXPECT_EQ(applyTo(launchConfig(), Src,
                    makeEdit("launch-config", "scale/launch1",
                             {{"block", int64_t(512)}})),
            std::string(Scale) + R"(void run(float *x, int n) {
  scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n);
  scale<<<(n + 511) / 512, dim3(512)>>>(x, 3.0f, n);
}
)");
}

TEST(CatalogLaunchConfigTest, Dim3VariablesOf2DLaunch) {
  std::string Kernel =
      R"(__global__ void sgemm(int m, int n, int k, const float *A, const float *B, float *C) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float sum = 0.f;
    for (int p = 0; p < k; ++p) sum += A[row * k + p] * B[p * n + col];
    C[row * n + col] = sum;
  }
}
)";
  std::string Src =
      Kernel +
      R"(void run(const float *A, const float *B, float *C, int M, int N, int K) {
  dim3 threads(16, 16), blocks((N + 15) / 16, (M + 15) / 16);
  sgemm<<<blocks, threads>>>(M, N, K, A, B, C);
}
)";
  EXPECT_EQ(
      applyTo(launchConfig(), Src,
              makeEdit("launch-config", "sgemm/launch0",
                       {{"block_x", int64_t(32)}, {"block_y", int64_t(8)}})),
      Kernel +
          R"(void run(const float *A, const float *B, float *C, int M, int N, int K) {
  dim3 threads(16, 16), blocks((N + 15) / 16, (M + 15) / 16);
  sgemm<<<dim3((N + 31) / 32, (M + 7) / 8), dim3(32, 8)>>>(M, N, K, A, B, C);
}
)");
}

TEST(CatalogLaunchConfigTest, ThreeDStencilWithShiftedBounds) {
  std::string Kernel =
      R"(__global__ void st(int n, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x > 0 && x < n - 1 && y > 0 && y <= n - 2 && z > 0 && z < n - 1)
    out[(z * n + y) * n + x] = in[(z * n + y) * n + x - 1];
}
)";
  std::string Src = Kernel + R"(void run(const float *in, float *out, int n) {
  dim3 t(8, 8, 8), b((n + 7) / 8, (n + 7) / 8, (n + 7) / 8);
  st<<<b, t>>>(n, in, out);
}
)";
  Applicability A = prepareOn(launchConfig(), Src, "st/launch0");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("'y <= n - 2'"), std::string::npos) << A.Reason;
  ASSERT_EQ(A.Suggestions.size(), 3u);
  for (const Edit &S : A.Suggestions)
    EXPECT_TRUE(S.getInt("block_z").has_value());
  // 8 threads wide: a warp reads four row segments; tried early.
  EXPECT_EQ(A.PriorScale, 2);
  EXPECT_NE(A.PriorWhy.find("blocks 8 threads wide"), std::string::npos)
      << A.PriorWhy;
  EXPECT_EQ(applyTo(launchConfig(), Src,
                    makeEdit("launch-config", "st/launch0",
                             {{"block_x", int64_t(16)},
                              {"block_y", int64_t(8)},
                              {"block_z", int64_t(4)}})),
            Kernel + R"(void run(const float *in, float *out, int n) {
  dim3 t(8, 8, 8), b((n + 7) / 8, (n + 7) / 8, (n + 7) / 8);
  st<<<dim3((n + 15) / 16, (n + 7) / 8, (n + 3) / 4), dim3(16, 8, 4)>>>(n, in, out);
}
)");
  // A z dimension above 64 is refused.
  EXPECT_NE(applyTo(launchConfig(), Src,
                    makeEdit("launch-config", "st/launch0",
                             {{"block_x", int64_t(1)},
                              {"block_y", int64_t(1)},
                              {"block_z", int64_t(128)}}))
                .rfind("error: ", 0),
            std::string::npos);
}

TEST(CatalogLaunchConfigTest, CoarsenedIndexAndDim3Components) {
  // Each thread covers 4 points along x from x0 (a vectorized or hand-
  // coarsened kernel); the launch divides the x grid by 8 * 4 and reads
  // y from the grid variable's component.
  std::string Kernel =
      R"(__global__ void k(int n, int m, const float *in, float *out) {
  int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (y < m && x0 < n) {
    for (int w = 0; w < 4; ++w) {
      int x = x0 + w;
      if (x < n)
        out[y * n + x] = 2.0f * in[y * n + x];
    }
  }
}
)";
  std::string Src =
      Kernel + R"(void run(const float *in, float *out, int n, int m) {
  dim3 t(8, 8), b((n + 7) / 8, (m + 7) / 8);
  k<<<dim3((n + 31) / 32, b.y), t>>>(n, m, in, out);
}
)";
  Applicability A = prepareOn(launchConfig(), Src, "k/launch0");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("'x0 < n' (4 points a thread)"), std::string::npos)
      << A.Reason;
  EXPECT_NE(A.Reason.find("'b.y' covers 'y < m'"), std::string::npos)
      << A.Reason;
  // 8 threads of 4 points: 32 points, a warp's row segment is whole.
  EXPECT_EQ(A.PriorScale, 1);
  ASSERT_FALSE(A.Suggestions.empty());
  EXPECT_EQ(A.Suggestions.front().getInt("block_x"), 16);
  EXPECT_EQ(
      applyTo(launchConfig(), Src,
              makeEdit("launch-config", "k/launch0",
                       {{"block_x", int64_t(16)}, {"block_y", int64_t(16)}})),
      Kernel + R"(void run(const float *in, float *out, int n, int m) {
  dim3 t(8, 8), b((n + 7) / 8, (m + 7) / 8);
  k<<<dim3((n + 63) / 64, (m + 15) / 16), dim3(16, 16)>>>(n, m, in, out);
}
)");
}

TEST(CatalogLaunchConfigTest, RefusesCoarsenedIndicesItCannotFollow) {
  auto Kernel = [](const char *Index) {
    return std::string("__global__ void k(float *x, int n, int s) {\n"
                       "  int i = ") +
           Index +
           ";\n"
           "  if (i < n)\n"
           "    for (int w = 0; w < 2 && i + w < n; ++w)\n"
           "      x[i + w] = 0.f;\n"
           "}\n";
  };
  // The grid was not divided by the 2 points a thread covers.
  std::string Src = Kernel("(blockIdx.x * blockDim.x + threadIdx.x) * 2") +
                    "void run(float *x, int n) {\n"
                    "  k<<<(n + 255) / 256, 256>>>(x, n, 2);\n"
                    "}\n";
  Applicability A = prepareOn(launchConfig(), Src, "k/launch0");
  EXPECT_FALSE(A.Applies);
  EXPECT_NE(A.Reason.find("times the 2 points a thread covers"),
            std::string::npos)
      << A.Reason;
  // A stride that is not a constant.
  Src = Kernel("(blockIdx.x * blockDim.x + threadIdx.x) * s") +
        "void run(float *x, int n) {\n"
        "  k<<<(n + 511) / 512, 256>>>(x, n, 2);\n"
        "}\n";
  A = prepareOn(launchConfig(), Src, "k/launch0");
  EXPECT_FALSE(A.Applies);
  EXPECT_NE(A.Reason.find("outside a global index"), std::string::npos)
      << A.Reason;
  // The grid variable whose component is read changes before the launch.
  Src = Kernel("blockIdx.x * blockDim.x + threadIdx.x") +
        "void run(float *x, int n) {\n"
        "  dim3 g((n + 255) / 256);\n"
        "  g.x += 1;\n"
        "  k<<<g.x, 256>>>(x, n, 2);\n"
        "}\n";
  A = prepareOn(launchConfig(), Src, "k/launch0");
  EXPECT_FALSE(A.Applies);
  EXPECT_NE(A.Reason.find("'g' is assigned after its declaration"),
            std::string::npos)
      << A.Reason;
}

TEST(CatalogLaunchConfigTest, IndexPlusConstantBounds) {
  // `i + c < n` (c >= 0, signed) keeps every index below n - c.
  const char *Guards[] = {"i > 0 && i + 1 < n", "1 + i < n", "i + 1 <= n",
                          "n > i + 2"};
  for (const char *G : Guards) {
    std::string Src =
        std::string("__global__ void k(float *x, int n) {\n"
                    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "  if (") +
        G +
        ") x[i] = 0;\n}\n"
        "void run(float *x, int n) { k<<<(n + 255) / 256, 256>>>(x, n); }\n";
    Applicability A = prepareOn(launchConfig(), Src, "k/launch0");
    EXPECT_TRUE(A.Applies) << G << ": " << A.Reason;
    EXPECT_NE(applyTo(launchConfig(), Src,
                      makeEdit("launch-config", "k/launch0",
                               {{"block", int64_t(128)}}))
                  .find("k<<<(n + 127) / 128, 128>>>(x, n);"),
              std::string::npos)
        << G;
  }
  // The early-return form.
  std::string Src =
      "__global__ void k(float *x, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i + 2 >= n)\n"
      "    return;\n"
      "  x[i + 1] = 0;\n}\n"
      "void run(float *x, int n) { k<<<(n + 255) / 256, 256>>>(x, "
      "n); }\n";
  Applicability A = prepareOn(launchConfig(), Src, "k/launch0");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("covers 'i < n - 2'"), std::string::npos) << A.Reason;
}

TEST(CatalogLaunchConfigTest, ConstantBounds) {
  // Sizes known when compiling (a constexpr, a macro, a literal): the
  // grid's E, known at the launch, must reach the first index the guard
  // stops.
  struct Case {
    const char *Index, *Guard, *Grid;
    bool Applies;
  };
  const Case Cases[] = {
      {"int", "i < N", "(N + 255) / 256", true},
      {"int", "i < LEN", "(5000 + 255) / 256", true},
      {"int", "i < 4096", "4096 / 256", true},
      {"int", "i + 1 < N - 1", "N / 256 + (N % 256 != 0)", true},
      {"int", "i <= N - 1", "(N + 255) / 256", true},
      {"int", "i < M", "(N + 255) / 256", true}, // the grid reaches past M
      {"unsigned", "i < N", "(N + 255) / 256", true},
      // The grid stops short of the bound: a wider block could drop the
      // last indices the guard lets through.
      {"int", "i < N", "(M + 255) / 256", false},
      {"int", "i <= N", "(N + 255) / 256", false},
      {"unsigned", "i + 1 < N", "(N + 255) / 256", false}, // wraps at the top
      {"int", "i < g", "(N + 255) / 256", false}, // a variable of the device
      // A constant macro in the grid and the guard: its text is what the
      // compiler saw, rescaled in place.
      {"int", "i < LEN", "(LEN + 255) / 256", true},
      {"int", "i < LEN", "LEN / 256", false}, // 19 blocks: stops short
  };
  for (const Case &C : Cases) {
    std::string Src = std::string("constexpr int N = 4096, M = 4000;\n"
                                  "#define LEN 5000\n"
                                  "__device__ int g;\n"
                                  "__global__ void k(float *x) {\n  ") +
                      C.Index +
                      " i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                      "  if (" +
                      C.Guard +
                      ") x[i] = 0;\n}\n"
                      "void run(float *x) { k<<<" +
                      C.Grid + ", 256>>>(x); }\n";
    Applicability A = prepareOn(launchConfig(), Src, "k/launch0");
    EXPECT_EQ(A.Applies, C.Applies)
        << C.Guard << " / " << C.Grid << ": " << A.Reason;
  }
  std::string Src = "constexpr int N = 4096;\n"
                    "__global__ void k(float *x) {\n"
                    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "  if (i < N) x[i] = 0;\n}\n"
                    "void run(float *x) { k<<<N / 256 + (N % 256 != 0), "
                    "256>>>(x); }\n";
  Applicability A = prepareOn(launchConfig(), Src, "k/launch0");
  EXPECT_NE(A.Reason.find("covers 'i < N'"), std::string::npos) << A.Reason;
  EXPECT_NE(
      applyTo(launchConfig(), Src,
              makeEdit("launch-config", "k/launch0", {{"block", int64_t(128)}}))
          .find("k<<<(N + 127) / 128, 128>>>(x);"),
      std::string::npos);
}

TEST(CatalogLaunchConfigTest, TemplateParameterBounds) {
  // A size that is a template parameter is read per launch, in the
  // instantiation the launch calls: launch0's grid reaches Dim - 1 = 4095,
  // launch1's (4096 threads for Dim = 8192) does not.
  std::string Src = "template <typename T, int Dim>\n"
                    "__global__ void k(T *x) {\n"
                    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "  if (i < Dim - 1) x[i] = 0;\n}\n"
                    "void run(float *x) {\n"
                    "  k<float, 4096><<<(4096 + 255) / 256, 256>>>(x);\n"
                    "  k<float, 8192><<<(4096 + 255) / 256, 256>>>(x);\n}\n";
  Applicability A = prepareOn(launchConfig(), Src, "k/launch0");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("covers 'i < Dim - 1'"), std::string::npos)
      << A.Reason;
  EXPECT_NE(
      applyTo(launchConfig(), Src,
              makeEdit("launch-config", "k/launch0", {{"block", int64_t(128)}}))
          .find("k<float, 4096><<<(4096 + 127) / 128, 128>>>(x);"),
      std::string::npos);
  Applicability B = prepareOn(launchConfig(), Src, "k/launch1");
  EXPECT_FALSE(B.Applies);
  EXPECT_NE(B.Reason.find("not from at least the 8191 values"),
            std::string::npos)
      << B.Reason;
}

TEST(CatalogLaunchConfigTest, RefusesBoundsThatLetThreadsThrough) {
  // Each guard lets an index at or past the grid's size through for some
  // n: the threads past the data would do work.
  const char *Guards[] = {
      "i < n - 1u",   // unsigned: wraps for n = 0
      "i <= n",       // index n itself
      "i < n - (-1)", // a negative constant
      "i <= n - 0",   // inclusive with nothing subtracted
      "i < n - m",    // not a constant
      "i - 1 < n",    // index n itself
      "i + 0 <= n",   // inclusive with nothing added
      "i + (-2) < n", // a negative constant
      "i + 1u < n",   // unsigned: wraps at the top
  };
  for (const char *G : Guards) {
    std::string Src =
        std::string("__global__ void k(float *x, int n, int m) {\n"
                    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "  if (") +
        G +
        ") x[i] = 0;\n}\n"
        "void run(float *x, int n) { k<<<(n + 255) / 256, 256>>>(x, n, 1); "
        "}\n";
    EXPECT_FALSE(prepareOn(launchConfig(), Src, "k/launch0").Applies) << G;
    std::string Out = applyTo(
        launchConfig(), Src,
        makeEdit("launch-config", "k/launch0", {{"block", int64_t(128)}}));
    EXPECT_NE(Out.find("guarded at once by a parameter bound"),
              std::string::npos)
        << G << ": " << Out;
  }
}

TEST(CatalogLaunchConfigTest, RefusesWhatItCannotShow) {
  struct Case {
    std::string Src;
    std::map<std::string, ParamValue> Params;
    const char *Why;
  } Cases[] = {
      // The kernel hard-codes the block size.
      {R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i < n) x[i] = 0;
}
void run(float *x, int n) { k<<<(n + 255) / 256, 256>>>(x, n); }
)",
       {{"block", int64_t(128)}},
       "uses a thread or block coordinate outside a global index"},
      // A fixed-size shared array indexed by threadIdx.
      {R"(__global__ void k(float *x, int n) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0;
  if (i < n) x[i] = s[255 - threadIdx.x];
}
void run(float *x, int n) { k<<<(n + 255) / 256, 256>>>(x, n); }
)",
       {{"block", int64_t(512)}},
       "uses the __shared__ array 's'"},
      // __launch_bounds__ below the new block.
      {R"(__global__ void __launch_bounds__(256) k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0;
}
void run(float *x, int n) { k<<<(n + 255) / 256, 256>>>(x, n); }
)",
       {{"block", int64_t(512)}},
       "declares __launch_bounds__(256), fewer than the 512 threads"},
      // The grid is not sized from the block.
      {R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0;
}
void run(float *x, int n) { k<<<1024, 256>>>(x, n); }
)",
       {{"block", int64_t(128)}},
       "the grid's x dimension ('1024') is not (E + 255) / 256 over the "
       "block"},
      // The grid covers a different size than the guard.
      {R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0;
}
void run(float *x, int n, int m) { k<<<(m + 255) / 256, 256>>>(x, n); }
)",
       {{"block", int64_t(128)}},
       "is sized from 'm' but the kernel's x index is bounded by 'n' = 'n'"},
      // No guard: the extra threads would write.
      {R"(__global__ void k(float *x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  x[i] = 0;
}
void run(float *x, int n) { k<<<(n + 255) / 256, 256>>>(x); }
)",
       {{"block", int64_t(128)}},
       "guarded at once by a parameter bound"},
      // The block variable is shared with another launch.
      {R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0;
}
void run(float *x, int n) {
  int t = 128;
  t = 256;
  k<<<(n + 255) / 256, t>>>(x, n);
}
)",
       {{"block", int64_t(128)}},
       "the block variable 't' is assigned after its declaration in 'run'"},
  };
  for (const Case &C : Cases) {
    // prepare() only leaves out suggestions above __launch_bounds__.
    Applicability A = prepareOn(launchConfig(), C.Src, "k/launch0");
    if (C.Src.find("__launch_bounds__") == std::string::npos)
      EXPECT_FALSE(A.Applies) << C.Src;
    else
      for (const Edit &S : A.Suggestions)
        EXPECT_LE(S.getInt("block").value_or(0), 256);
    std::string Out = applyTo(launchConfig(), C.Src,
                              makeEdit("launch-config", "k/launch0", C.Params));
    EXPECT_EQ(Out.rfind("error: ", 0), 0u) << Out;
    EXPECT_NE(Out.find(C.Why), std::string::npos)
        << "got: " << Out << "\nexpected: " << C.Why;
  }
}

TEST(CatalogLaunchConfigTest, ParamErrors) {
  std::string Src = std::string(Scale) +
                    "void run(float *x, int n) { scale<<<(n + 255) / 256, "
                    "256>>>(x, 2.0f, n); }\n";
  EXPECT_NE(applyTo(launchConfig(), Src,
                    makeEdit("launch-config", "scale/launch0", {}))
                .find("give block"),
            std::string::npos);
  EXPECT_NE(applyTo(launchConfig(), Src,
                    makeEdit("launch-config", "scale/launch0",
                             {{"block", int64_t(64)}, {"block_y", int64_t(2)}}))
                .find("has no y dimension written out"),
            std::string::npos);
}

} // namespace
