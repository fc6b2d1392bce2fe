// An integer count of a predicate: the bound and the predicate share one
// guard, '(i < n && x[i] > t) ? 1 : 0'; the index is written
// threadIdx.x + blockIdx.x * blockDim.x; the grid is a local variable.
#include "cuda_mock.h"

__global__ void count_above(const float *x, int n, float t, int *hits) {
  __shared__ int c[256];
  int lane = threadIdx.x;
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  c[lane] = (i < n && x[i] > t) ? 1 : 0;
  __syncthreads();
  for (int s = blockDim.x >> 1; s > 0; s >>= 1) {
    if (lane < s)
      c[lane] += c[lane + s];
    __syncthreads();
  }
  if (lane == 0)
    atomicAdd(hits, c[0]);
}

void count(const float *x, int n, float t, int *hits) {
  int grid = (n + 255) / 256;
  count_above<<<grid, 256>>>(x, n, t, hits);
}
