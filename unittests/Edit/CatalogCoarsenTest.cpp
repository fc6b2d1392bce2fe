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
void run(int n, const float *x, float *y, int blocks) {
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
  saxpy<<<blocks + 1, 256>>>(n, 2.0f, x, y);
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
void run(int n, const float *x, float *y, int blocks) {
  saxpy<<<(n + 1023) / 1024, 256>>>(n, 2.0f, x, y);
  saxpy<<<((blocks + 1) + 3) / 4, 256>>>(n, 2.0f, x, y);
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

} // namespace
