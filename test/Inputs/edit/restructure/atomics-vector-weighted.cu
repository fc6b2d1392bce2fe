#include "cuda_mock.h"
// Weighted histogram with an early-return guard: two 4-byte inputs read at
// the thread's element, the bin count given.
__global__ void weighted(const int *cls, const float *w, float *total,
                         int count) {
  int idx = threadIdx.x + blockIdx.x * blockDim.x;
  if (idx >= count)
    return;
  int c = cls[idx];
  atomicAdd(&total[c], w[idx]);
}
void run(const int *cls, const float *w, float *total, int count) {
  weighted<<<(count + 511) / 512, 512>>>(cls, w, total, count);
}
