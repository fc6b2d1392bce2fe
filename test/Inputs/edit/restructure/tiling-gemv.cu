#include "cuda_mock.h"
// Matrix-vector product where every thread of a block reads the whole
// vector x; the guard wraps the loop and the store.
__global__ void matvec(const float *A, const float *x, float *y, int rows,
                       int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float sum = 0.f;
    for (int k = 0; k < cols; k++)
      sum += A[row * cols + k] * x[k];
    y[row] = sum;
  }
}
