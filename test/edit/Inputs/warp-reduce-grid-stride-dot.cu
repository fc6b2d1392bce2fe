// The suite's dot product (bench/kernels/dot/naive.cu): one product per
// thread, a shared-memory tree, one atomicAdd per block.
#include "cuda_mock.h"

__global__ void dot(int n, const float* x, const float* y, float* result) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[tid] = (i < n) ? x[i] * y[i] : 0.f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(result, s[0]);
}

void run(int n, const float* x, const float* y, float* r) {
  int threads = 256, blocks = (n + threads - 1) / threads;
  dot<<<blocks, threads>>>(n, x, y, r);
}
