#include "cuda_mock.h"
// Weighted float histogram with an early-return guard; the bin comes from
// data (no bound in its type), so the edit is told the number of bins.
__global__ void weighted(const int *cls, const float *w, float *total,
                         int count) {
  __shared__ float total_private[32];
  for (int bin1 = threadIdx.x; bin1 < 32; bin1 += blockDim.x)
    total_private[bin1] = 0;
  __syncthreads();
  for (int idx = threadIdx.x + blockIdx.x * blockDim.x; idx < count; idx += blockDim.x * gridDim.x) {
    int c = cls[idx];
    ((size_t)c < 32 ? atomicAdd(&total_private[c], w[idx]) : atomicAdd(&total[c], w[idx]));
  }
  __syncthreads();
  for (int bin1 = threadIdx.x; bin1 < 32; bin1 += blockDim.x)
    if (total_private[bin1] != 0)
      atomicAdd(&total[bin1], total_private[bin1]);
}
void run(const int *cls, const float *w, float *total, int count) {
  weighted<<<((count + 511) / 512) < 1056 ? ((count + 511) / 512) : 1056, 512>>>(cls, w, total, count);
}
