#include "cuda_mock.h"
// No bounds guard (the grid is exact), a template, a window [begin, end)
// reached through a pointer offset, a helper function per pair.
__device__ float kernel_fn(float a, float b) { return a * b + 1.0f; }

template <typename T>
__global__ void pair_sum(const T *data, T *out, int offset, int begin,
                         int end) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const T *src = data + offset;
  T mine = data[i];
  T s = 0;
  __shared__ T src_tile[64];
  for (int base = begin; base < end; base += 64) {
    for (int t = threadIdx.x; t < 64 && base + t < end; t += blockDim.x)
      src_tile[t] = src[base + t];
    __syncthreads();
    for (int j = base; j < base + 64 && j < end; ++j)
      s += kernel_fn(mine, src_tile[j - base]);
    __syncthreads();
  }
  out[i] = s;
}
void run(const float *d, float *o, int n) {
  pair_sum<<<n / 128, 128>>>(d, o, 0, 0, n);
}
