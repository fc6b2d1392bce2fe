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
  for (int j = begin; j < end; ++j)
    s += kernel_fn(mine, src[j]);
  out[i] = s;
}
void run(const float *d, float *o, int n) {
  pair_sum<<<n / 128, 128>>>(d, o, 0, 0, n);
}
