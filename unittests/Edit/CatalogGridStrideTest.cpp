#include "CatalogTesting.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &gridStride() {
  static auto T = createGridStrideTransform();
  return *T;
}

TEST(CatalogGridStrideTest, RewritesGuardAndCapsGrid) {
  std::string Src = R"(__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = a * x[i];
}
void run(float *x, int n) {
  scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n);
}
)";
  EXPECT_EQ(
      applyTo(gridStride(), Src,
              makeEdit("grid-stride", "scale", {{"max_blocks", int64_t(528)}})),
      R"(__global__ void scale(float *x, float a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    x[i] = a * x[i];
}
void run(float *x, int n) {
  scale<<<(n + 255) / 256 < 528 ? (n + 255) / 256 : 528, 256>>>(x, 2.0f, n);
}
)");
}

TEST(CatalogGridStrideTest, EarlyReturnForm) {
  std::string Src =
      R"(__global__ void add(const float *a, const float *b, float *c, unsigned n) {
  unsigned i = threadIdx.x + blockDim.x * blockIdx.x;
  if (i >= n) return;
  float s = a[i] + b[i];
  c[i] = s;
}
void run(const float *a, const float *b, float *c, unsigned n) {
  add<<<(n + 255u) / 256u, 256>>>(a, b, c, n);
}
)";
  EXPECT_EQ(
      applyTo(gridStride(), Src, makeEdit("grid-stride", "add")),
      R"(__global__ void add(const float *a, const float *b, float *c, unsigned n) {
  for (unsigned i = threadIdx.x + blockDim.x * blockIdx.x; i < n;
       i += blockDim.x * gridDim.x) {
    float s = a[i] + b[i];
    c[i] = s;
  }
}
void run(const float *a, const float *b, float *c, unsigned n) {
  add<<<(n + 255u) / 256u < 1056 ? (n + 255u) / 256u : 1056, 256>>>(a, b, c, n);
}
)");
}

TEST(CatalogGridStrideTest, TemplateAndSeveralLaunches) {
  std::string Src = R"(template <typename T>
__global__ void fill(T *x, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    x[i] = v;
  }
}
#define LAUNCH(g) fill<<<g, 128>>>(p, 1.0f, n)
void run(float *p, int *q, int n) {
  const int blocks = (n + 127) / 128;
  fill<<<blocks, 128>>>(p, 1.0f, n);
  fill<int><<<dim3(blocks), 128>>>(q, 1, n);
  LAUNCH(blocks);
}
)";
  Applicability A = prepareOn(gridStride(), Src, "fill");
  EXPECT_TRUE(A.Applies) << A.Reason;
  // The macro's invocation spells the grid (an argument used once): it is
  // capped where it is written, like the others.
  EXPECT_EQ(A.Reason.find("macro"), std::string::npos) << A.Reason;
  EXPECT_EQ(
      applyTo(gridStride(), Src,
              makeEdit("grid-stride", "fill", {{"max_blocks", int64_t(1056)}})),
      R"(template <typename T>
__global__ void fill(T *x, T v, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x) {
    x[i] = v;
  }
}
#define LAUNCH(g) fill<<<g, 128>>>(p, 1.0f, n)
void run(float *p, int *q, int n) {
  const int blocks = (n + 127) / 128;
  fill<<<blocks < 1056 ? blocks : 1056, 128>>>(p, 1.0f, n);
  fill<int><<<dim3(blocks < 1056 ? blocks : 1056), 128>>>(q, 1, n);
  LAUNCH(blocks < 1056 ? blocks : 1056);
}
)");
}

TEST(CatalogGridStrideTest, RefusesNearMisses) {
  struct Case {
    const char *Src, *Why;
  } Cases[] = {
      {R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = threadIdx.x;
}
)",
       "uses a thread or block index directly"},
      {R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i < n) x[i] = 0;
}
)",
       "no index of the form"},
      {R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0;
  x[0] = 1;
}
)",
       "is not the last statement"},
      {R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0) x[i] = 0;
}
)",
       "is not a single comparison"},
      {R"(__global__ void k(float *x, int n) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { s[0] = x[i]; __syncthreads(); x[i] = s[0]; }
}
)",
       "synchronizes"},
      {R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { if (x[i] < 0) return; x[i] = 1; }
}
)",
       "returns early"},
      {R"(__global__ void k(float *x, int n) {
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = r;
}
)",
       "2D"},
  };
  for (const Case &C : Cases) {
    Applicability A = prepareOn(gridStride(), C.Src, "k");
    EXPECT_FALSE(A.Applies) << C.Src;
    EXPECT_NE(A.Reason.find(C.Why), std::string::npos)
        << "reason: " << A.Reason << "\nexpected: " << C.Why;
    std::string Out =
        applyTo(gridStride(), C.Src, makeEdit("grid-stride", "k"));
    EXPECT_EQ(Out.rfind("error: ", 0), 0u) << Out;
  }
}

// The original computes only the elements its grid reaches; the loop
// computes every one below the bound. A grid that may stop short of the
// bound is refused at the launch that has it.
TEST(CatalogGridStrideTest, RefusesGridsNotShownToCoverTheBound) {
  const std::string Kernel = R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 2.0f * x[i];
}
)";
  struct Case {
    const char *Run, *Why;
  } Cases[] = {
      // Half of the elements on purpose.
      {"void run(float *x, int n) { k<<<n / 256 / 2, 256>>>(x, n); }",
       "launch k/launch0 is not shown to run a thread for every element "
       "below the guard's bound 'n': its grid ('n / 256 / 2') is not "
       "ceil(n / block)"},
      // A grid from another, smaller count.
      {"void run(float *x, int n, int m) {\n"
       "  int blocks = (m + 255) / 256;\n"
       "  k<<<blocks, 256>>>(x, n);\n}",
       "its grid is sized from 'm' but the kernel's bound 'n' is 'n'"},
      {"void run(float *x, int n, int blocks) { k<<<blocks, 256>>>(x, n); }",
       "its grid ('blocks') is not ceil(n / block)"},
      {"void run(float *x) { k<<<2, 256>>>(x, 100000); }",
       "its grid runs 2 x 256 threads along x, fewer than 100000"},
      {"int ceil_div(int a, int b) { return (a + b - 1) / b; }\n"
       "void run(float *x, int n) { k<<<ceil_div(n, 512), 256>>>(x, n); }",
       "its grid divides by 512, which is not shown to be at most its "
       "block's 256 threads"},
      // The second launch stops short.
      {"void run(float *x, int n) {\n"
       "  k<<<(n + 255) / 256, 256>>>(x, n);\n"
       "  k<<<(n + 255) / 256, 128>>>(x, n);\n}",
       "launch k/launch1 is not shown"},
      {"", "it is never launched in this file"},
  };
  for (const Case &C : Cases) {
    std::string Src = Kernel + C.Run + "\n";
    Applicability A = prepareOn(gridStride(), Src, "k");
    EXPECT_FALSE(A.Applies) << Src;
    EXPECT_NE(A.Reason.find(C.Why), std::string::npos)
        << "reason: " << A.Reason << "\nexpected: " << C.Why;
    EXPECT_NE(A.Reason.find("the original only those its threads reach"),
              std::string::npos)
        << A.Reason;
    std::string Out = applyTo(gridStride(), Src, makeEdit("grid-stride", "k"));
    EXPECT_EQ(Out.rfind("error: ", 0), 0u) << Out;
  }
}

// Grids shown to cover the bound stay offered; those that cannot be
// rewritten in place (a helper's call counts as a side effect, a macro)
// keep their grid, which the loop handles as it is.
TEST(CatalogGridStrideTest, CoveringGridsStayOffered) {
  std::string Src = R"(#define DIV_UP(a, b) (((a) + (b) - 1) / (b))
__host__ __device__ inline int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}
__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 2.0f * x[i];
}
void run(float *x, int n) {
  k<<<ceil_div(n, 256), 256>>>(x, n);
  k<<<DIV_UP(n, 128), 128>>>(x, n);
  k<<<(n + 255) / 256 + 1, 256>>>(x, n);
  k<<<40, 256>>>(x, 10000);
}
)";
  Applicability A = prepareOn(gridStride(), Src, "k");
  EXPECT_TRUE(A.Applies) << A.Reason;
  // A call is left as it is; a function-like macro is capped whole.
  EXPECT_NE(A.Reason.find("grids left as they are: the grid of k/launch0 "
                          "has side effects"),
            std::string::npos)
      << A.Reason;
  EXPECT_EQ(A.Reason.find("k/launch1"), std::string::npos) << A.Reason;
  std::string Out =
      applyTo(gridStride(), Src,
              makeEdit("grid-stride", "k", {{"max_blocks", int64_t(528)}}));
  EXPECT_NE(Out.find(R"(void run(float *x, int n) {
  k<<<ceil_div(n, 256), 256>>>(x, n);
  k<<<DIV_UP(n, 128) < 528 ? DIV_UP(n, 128) : 528, 128>>>(x, n);
  k<<<(n + 255) / 256 + 1 < 528 ? (n + 255) / 256 + 1 : 528, 256>>>(x, n);
  k<<<40 < 528 ? 40 : 528, 256>>>(x, 10000);
}
)"),
            std::string::npos)
      << Out;
}

} // namespace
