#include "CatalogTesting.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &coarsen() {
  static auto T = createCoarsenTransform();
  return *T;
}

TEST(CatalogCoarsenTest, LoopsOverKBlocksAndDividesGrids) {
  std::string Src =
      R"(__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
void run(int n, const float *x, float *y) {
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
  saxpy<<<n / 128 + 1, 128>>>(n, 2.0f, x, y);
}
)";
  EXPECT_EQ(applyTo(coarsen(), Src,
                    makeEdit("coarsen", "saxpy", {{"factor", int64_t(4)}})),
            R"(__global__ void saxpy(int n, float a, const float *x, float *y) {
  #pragma unroll
  for (int k = 0; k < 4; ++k) {
    int i = (blockIdx.x * 4 + k) * blockDim.x + threadIdx.x;
    if (i < n)
      y[i] = a * x[i] + y[i];
  }
}
void run(int n, const float *x, float *y) {
  saxpy<<<(n + 1023) / 1024, 256>>>(n, 2.0f, x, y);
  saxpy<<<((n / 128 + 1) + 3) / 4, 128>>>(n, 2.0f, x, y);
}
)");
}

TEST(CatalogCoarsenTest, EarlyReturnAndFreshStepName) {
  std::string Src = R"(template <int k>
__global__ void shift(const int *in, int *out, int n) {
  const int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i >= n) return;
  out[i] = in[i] + k;
}
void run(const int *in, int *out, int n) {
  shift<3><<<(n + 127) / 128, 128>>>(in, out, n);
}
)";
  EXPECT_EQ(applyTo(coarsen(), Src,
                    makeEdit("coarsen", "shift", {{"factor", int64_t(2)}})),
            R"(template <int k>
__global__ void shift(const int *in, int *out, int n) {
  #pragma unroll
  for (int k1 = 0; k1 < 2; ++k1) {
    const int i = (blockIdx.x * 2 + k1) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = in[i] + k;
  }
}
void run(const int *in, int *out, int n) {
  shift<3><<<(n + 255) / 256, 128>>>(in, out, n);
}
)");
}

TEST(CatalogCoarsenTest, RefusesUnrewritableGridAndBadFactor) {
  std::string Src = R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0;
}
void run(float *x, int n) {
  dim3 grid((n + 255) / 256);
  k<<<grid, 256>>>(x, n);
}
)";
  Applicability A = prepareOn(coarsen(), Src, "k");
  EXPECT_FALSE(A.Applies);
  EXPECT_NE(A.Reason.find("the grid of k/launch0 ('grid') is not a "
                          "one-dimensional integer expression"),
            std::string::npos)
      << A.Reason;
  std::string Ok = R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0;
}
)";
  EXPECT_TRUE(prepareOn(coarsen(), Ok, "k").Applies);
  EXPECT_EQ(applyTo(coarsen(), Ok,
                    makeEdit("coarsen", "k", {{"factor", int64_t(1)}})),
            "error: coarsen k rejected: [params] factor must be an integer "
            "from 2 to 16");
  std::string Atomic = R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = blockIdx.x;
}
)";
  A = prepareOn(coarsen(), Atomic, "k");
  EXPECT_FALSE(A.Applies);
  EXPECT_NE(A.Reason.find("uses a thread or block index directly"),
            std::string::npos)
      << A.Reason;
}

// The divided grid ceil(G / K) runs up to K - 1 blocks past the original
// one: a grid that stops short of the bound (rounded down, a fixed count, or
// sized from another variable) would have the loop compute elements the
// original left alone, so such launches are refused; a grid that covers the
// bound (ceil, or floor + 1) is divided.
TEST(CatalogCoarsenTest, RefusesGridsThatStopShortOfTheBound) {
  for (const char *Grid : {"n / 256", "8", "(m + 255) / 256", "blocks"}) {
    std::string Src = std::string(R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 2.f * x[i];
}
void run(float *x, int n, int m, int blocks) {
  k<<<)") + Grid + R"(, 256>>>(x, n);
}
)";
    Applicability A = prepareOn(coarsen(), Src, "k");
    EXPECT_FALSE(A.Applies) << Grid;
    EXPECT_NE(A.Reason.find("launch k/launch0 is not shown to run a thread "
                            "for every element below the guard's bound 'n'"),
              std::string::npos)
        << A.Reason;
  }
  std::string Covers = R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 2.f * x[i];
}
void run(float *x, int n) {
  k<<<n / 256 + 1, 256>>>(x, n);
}
)";
  EXPECT_TRUE(prepareOn(coarsen(), Covers, "k").Applies);
}

// A helper that reads the thread's coordinates means something else once a
// thread computes K elements: refused like the coordinate written in the
// body. A helper that reads none is fine.
TEST(CatalogCoarsenTest, RefusesHelpersReadingThreadCoordinates) {
  std::string Src = R"(__device__ int lane() { return threadIdx.x % 32; }
__device__ int twice(int v) { return 2 * v; }
__global__ void k(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = lane();
}
__global__ void ok(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = twice(i);
}
void run(int *x, int n) {
  k<<<(n + 255) / 256, 256>>>(x, n);
  ok<<<(n + 255) / 256, 256>>>(x, n);
}
)";
  Applicability A = prepareOn(coarsen(), Src, "k");
  EXPECT_FALSE(A.Applies);
  EXPECT_NE(A.Reason.find("the body calls 'lane', whose result depends on "
                          "the thread that runs it"),
            std::string::npos)
      << A.Reason;
  EXPECT_TRUE(prepareOn(coarsen(), Src, "ok").Applies);
}

} // namespace
