#include "cuda_mock.h"
// Matrix-vector product where every thread of a block reads the whole
// vector x; the guard wraps the loop and the store.
__global__ void matvec(const float *A, const float *x, float *y, int rows,
                       int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  bool active = row < rows;
  float sum = 0.f;
  __shared__ float x_tile[256];
  for (int base = 0; base < cols; base += 256) {
    for (int t = threadIdx.x; t < 256 && base + t < cols; t += blockDim.x)
      x_tile[t] = x[base + t];
    __syncthreads();
    if (active)
      for (int k = base; k < base + 256 && k < cols; k++)
        sum += A[row * cols + k] * x_tile[k - base];
    __syncthreads();
  }
  if (active) {
    y[row] = sum;
  }
}
