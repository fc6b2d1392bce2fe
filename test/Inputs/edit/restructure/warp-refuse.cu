#include "cuda_mock.h"
// Near misses for warp-per-row.
__global__ void prefix(const float *x, float *y, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float acc = 0.f;
    for (int j = 0; j < cols; ++j) {
      acc += x[row * cols + j];
      y[row * cols + j] = acc;
    }
  }
}
__global__ void every_other(const float *x, float *y, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float s = 0.f;
    for (int j = 0; j < cols; j += 2) s += x[row * cols + j];
    y[row] = s;
  }
}
__global__ void same_cell(const float *x, float *y, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    for (int j = 0; j < cols; ++j) y[row] += x[row * cols + j];
  }
}
__global__ void recurrence(float *y, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    for (int j = 1; j < cols; ++j)
      y[row * cols + j] = y[row * cols + j - 1] * 0.5f + y[row * cols + j];
  }
}
__global__ void first_negative(const float *x, int *pos, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    int p = -1;
    for (int j = 0; j < cols; ++j)
      if (x[row * cols + j] < 0.f) {
        p = j;
        break;
      }
    pos[row] = p;
  }
}
__global__ void no_guard(const float *x, float *y, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.f;
  for (int j = 0; j < cols; ++j) s += x[row * cols + j];
  y[row] = s;
}
__global__ void lane_aware(const float *x, float *y, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float s = 0.f;
    for (int j = 0; j < cols; ++j) s += x[row * cols + j] * threadIdx.x;
    y[row] = s;
  }
}
__global__ void no_loop(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.f * x[i];
}
