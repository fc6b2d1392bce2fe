#include "cuda_mock.h"
// Near misses for all-pairs-tiling.
__global__ void triangle(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = 0.f;
    for (int j = i; j < n; ++j)
      s += x[j];
    y[i] = s;
  }
}
__global__ void written(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    for (int j = 0; j < n; ++j)
      x[j] += 1.f;
  }
}
__global__ void neighbour(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = 0.f;
    for (int j = 0; j < n - 1; ++j)
      s += x[j] * x[j + 1];
    y[i] = s;
  }
}
__global__ void own_row(const float *A, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = 0.f;
    for (int j = 0; j < n; ++j)
      s += A[i * n + j];
    y[i] = s;
  }
}
