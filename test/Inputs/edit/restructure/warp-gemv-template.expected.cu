#include "cuda_mock.h"
// Matrix-vector product as a template, the index from a helper function,
// the row reached through a pointer offset, the result scaled and stored.
__device__ int global_thread() { return blockIdx.x * blockDim.x + threadIdx.x; }

template <typename T>
__global__ void gemv_t(const T *A, const T *x, T *y, int m, int n, T alpha) {
  int i = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (i < m) {
    const T *a = A + (size_t)i * n;
    T acc = 0;
    for (int k = lane; k < n; k += 32)
      acc += a[k] * x[k];
    for (int offset1 = 16; offset1 > 0; offset1 /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, offset1);
    if (lane == 0) y[i] = alpha * acc;
  }
}
void run(const float *A, const float *x, float *y, int m, int n) {
  gemv_t<<<(m + 7) / 8, 256>>>(A, x, y, m, n, 2.0f);
}
