#include "cuda_mock.h"
// Weighted histogram with an early-return guard: two 4-byte inputs read at
// the thread's element, the bin count given.
__global__ void weighted(const int *cls, const float *w, float *total,
                         int count) {
  __shared__ float total_private[8][32];
  for (int bin1 = threadIdx.x; bin1 < 256; bin1 += blockDim.x)
    total_private[bin1 / 32][bin1 % 32] = 0;
  __syncthreads();
  int scalar_from = 0;
  if (reinterpret_cast<unsigned long long>(cls) % 16 == 0 &&
      reinterpret_cast<unsigned long long>(w) % 16 == 0) {
    scalar_from = count / 4 * 4;
    for (int v = threadIdx.x + blockIdx.x * blockDim.x; v < count / 4; v += blockDim.x * gridDim.x) {
      uint4 cls_v = reinterpret_cast<const uint4 *>(cls)[v];
      const int *cls_e = reinterpret_cast<const int *>(&cls_v);
      uint4 w_v = reinterpret_cast<const uint4 *>(w)[v];
      const float *w_e = reinterpret_cast<const float *>(&w_v);
      #pragma unroll
      for (int e = 0; e < 4; ++e) {
        int c = cls_e[e];
        ((size_t)c < 32 ? atomicAdd(&total_private[threadIdx.x / 32][c], w_e[e]) : atomicAdd(&total[c], w_e[e]));
      }
    }
  }
  for (int idx = scalar_from + threadIdx.x + blockIdx.x * blockDim.x; idx < count; idx += blockDim.x * gridDim.x) {
    int c = cls[idx];
    ((size_t)c < 32 ? atomicAdd(&total_private[threadIdx.x / 32][c], w[idx]) : atomicAdd(&total[c], w[idx]));
  }
  __syncthreads();
  for (int bin1 = threadIdx.x; bin1 < 32; bin1 += blockDim.x) {
    float sum = 0;
    for (int w1 = 0; w1 < 8; ++w1)
      sum += total_private[w1][bin1];
    if (sum != 0)
      atomicAdd(&total[bin1], sum);
  }
}
void run(const int *cls, const float *w, float *total, int count) {
  weighted<<<((count + 511) / 512) < 1056 ? ((count + 511) / 512) : 1056, 256>>>(cls, w, total, count);
}
