// A max reduction of |x[i]|: out-of-range threads contribute -INFINITY
// through a local, the steps call fmaxf, the blocks combine with an
// atomicMax helper; the grid is written (n + 511) / 512.
#include "cuda_mock.h"
#if !defined(__NVCC__) && !defined(__CLANG_CUDA_RUNTIME_WRAPPER_H__)
#define INFINITY __builtin_huge_valf()
__device__ int __float_as_int(float);
__device__ unsigned __float_as_uint(float);
__device__ unsigned atomicMin(unsigned *a, unsigned v);
#endif

__device__ void atomicMaxFloat(float *addr, float v) {
  if (v >= 0)
    atomicMax((int *)addr, __float_as_int(v));
  else
    atomicMin((unsigned *)addr, __float_as_uint(v));
}

__global__ void abs_max(const float *x, float *m, int n) {
  __shared__ float best[512];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  float a = i < n ? fabsf(x[i]) : -INFINITY;
  best[tid] = a;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      best[tid] = fmaxf(best[tid], best[tid + s]);
    __syncthreads();
  }
  if (tid == 0)
    atomicMaxFloat(m, best[0]);
}

void run(const float *x, float *m, int n) {
  abs_max<<<(n + 511) / 512, 512>>>(x, m, n);
}
