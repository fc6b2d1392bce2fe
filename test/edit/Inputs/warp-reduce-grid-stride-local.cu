// A dot product spelled differently: the value goes through a local set by
// 'if (idx < count)', a __device__ helper computes it, doubles, an unsigned
// index written threadIdx.x + blockDim.x * blockIdx.x, a constant grid.
#include "cuda_mock.h"

__device__ double mul(double a, double b) { return a * b; }

__global__ void inner(const double *a, const double *b, double *out,
                      unsigned count) {
  __shared__ double cache[128];
  unsigned t = threadIdx.x;
  unsigned idx = threadIdx.x + blockDim.x * blockIdx.x;
  double prod = 0.0;
  if (idx < count)
    prod = mul(a[idx], b[idx]);
  cache[t] = prod;
  __syncthreads();
  for (unsigned h = 64; h > 0; h /= 2) {
    if (t < h)
      cache[t] = cache[t] + cache[t + h];
    __syncthreads();
  }
  if (t == 0) {
    atomicAdd(out, cache[0]);
  }
}

void launch(const double *a, const double *b, double *out) {
  inner<<<4096, 128>>>(a, b, out, 4096u * 128u);
}
