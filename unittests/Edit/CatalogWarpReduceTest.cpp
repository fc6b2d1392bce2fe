#include "CatalogTesting.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &warpReduce() {
  static auto T = createWarpReduceTransform();
  return *T;
}

TEST(CatalogWarpReduceTest, AtomicPerThreadBecomesOnePerWarp) {
  std::string Src = R"(__global__ void sum(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, x[i]);
}
void run(const float *x, float *out, int n) {
  int threads = 256;
  sum<<<(n + threads - 1) / threads, threads>>>(x, out, n);
}
)";
  EXPECT_TRUE(warpReduce().changesPrecision(makeEdit("warp-reduce", "sum")));
  EXPECT_EQ(applyTo(warpReduce(), Src, makeEdit("warp-reduce", "sum")),
            R"(__global__ void sum(const float *x, float *out, int n) {
  float warp_sum = 0;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    warp_sum += x[i];
  for (int off = 16; off > 0; off /= 2)
    warp_sum += __shfl_down_sync(0xffffffffu, warp_sum, off);
  if (threadIdx.x % 32 == 0)
    atomicAdd(out, warp_sum);
}
void run(const float *x, float *out, int n) {
  int threads = 256;
  sum<<<(n + threads - 1) / threads, threads>>>(x, out, n);
}
)");
}

TEST(CatalogWarpReduceTest, GridStrideCountWithConversion) {
  std::string Src = R"(__global__ void count(const float *x, int *hits, int n, float t) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    if (x[i] > t) atomicAdd(&hits[0], 1);
    if (x[i] < -t) atomicAdd(&hits[0], x[i] < -2 * t ? 2 : 1);
  }
}
void run(const float *x, int *hits, int n) {
  count<<<528, dim3(128)>>>(x, hits, n, 0.5f);
}
)";
  EXPECT_EQ(applyTo(warpReduce(), Src, makeEdit("warp-reduce", "count")),
            R"(__global__ void count(const float *x, int *hits, int n, float t) {
  int warp_sum = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    if (x[i] > t) warp_sum += 1;
    if (x[i] < -t) warp_sum += x[i] < -2 * t ? 2 : 1;
  }
  for (int off = 16; off > 0; off /= 2)
    warp_sum += __shfl_down_sync(0xffffffffu, warp_sum, off);
  if (threadIdx.x % 32 == 0)
    atomicAdd(&hits[0], warp_sum);
}
void run(const float *x, int *hits, int n) {
  count<<<528, dim3(128)>>>(x, hits, n, 0.5f);
}
)");
}

TEST(CatalogWarpReduceTest, RefusesNearMisses) {
  struct Case {
    const char *Src, *Why;
  } Cases[] = {
      {R"(__global__ void k(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(out, x[i]);
}
void run(const float *x, float *out, int n) { k<<<1, 256>>>(x, out, n); }
)",
       "returns early"},
      {R"(__global__ void k(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&out[i % 16], x[i]);
}
void run(const float *x, float *out, int n) { k<<<1, 256>>>(x, out, n); }
)",
       "is not the same for every thread"},
      {R"(__global__ void k(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, x[i]);
}
void run(const float *x, float *out, int n) { k<<<1, 100>>>(x, out, n); }
)",
       "uses blocks of 100 threads, not a multiple of 32"},
      {R"(__global__ void k(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, x[i]);
}
void run(const float *x, float *out, int n, int b) { k<<<1, b>>>(x, out, n); }
)",
       "is not a one-dimensional constant"},
      {R"(__global__ void k(const int *x, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicMax(out, x[i]);
}
void run(const int *x, int *out, int n) { k<<<1, 256>>>(x, out, n); }
)",
       "only atomicAdd is combined"},
      {R"(__global__ void k(const float *x, float *out, int n) {
  __shared__ float s[256];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
)",
       "no shared-memory tree loop"},
  };
  for (const Case &C : Cases) {
    Applicability A = prepareOn(warpReduce(), C.Src, "k");
    EXPECT_FALSE(A.Applies) << C.Src;
    EXPECT_NE(A.Reason.find(C.Why), std::string::npos)
        << "reason: " << A.Reason << "\nexpected: " << C.Why;
  }
}

} // namespace
