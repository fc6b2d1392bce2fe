// A coarse class per kernel, with the reason.
// RUN: clang-optiml analyze %s -- %mock_args | FileCheck --match-full-lines %s

#include "cuda_mock.h"

// CHECK: kernel add ({{.*}}:[[@LINE+1]]) [map: each thread reads and writes its own elements]
__global__ void add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// CHECK: kernel rowsum ({{.*}}:[[@LINE+1]]) [reduction: a loop accumulates values read from memory]
__global__ void rowsum(const float *m, float *s, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float acc = 0;
  for (int c = 0; c < cols; ++c) acc += m[r * cols + c];
  s[r] = acc;
}

// CHECK: kernel jacobi ({{.*}}:[[@LINE+1]]) [stencil: u is read at 5 neighbouring indexes]
__global__ void jacobi(const float *u, float *v, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (x < n - 1 && y < n - 1)
    v[y * n + x] = 0.2f * (u[y * n + x] + u[y * n + x - 1] + u[y * n + x + 1] +
                           u[(y - 1) * n + x] + u[(y + 1) * n + x]);
}

// CHECK: kernel gemv ({{.*}}:[[@LINE+1]]) [matmul-like: multiply-accumulate of A * x in a loop]
__global__ void gemv(const float *A, const float *x, float *y, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  float s = 0;
  for (int c = 0; c < n; ++c) s += A[r * n + c] * x[c];
  y[r] = s;
}

// CHECK: kernel spmv ({{.*}}:[[@LINE+1]]) [gather-scatter: index of x[col[j]] is loaded from memory]
__global__ void spmv(const int *rowptr, const int *col, const float *val,
                     const float *x, float *y, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0;
  for (int j = rowptr[r]; j < rowptr[r + 1]; ++j) s += val[j] * x[col[j]];
  y[r] = s;
}

// CHECK: kernel tree ({{.*}}:[[@LINE+1]]) [reduction: tree combination in shared memory buf (loop tree/loop0)]
__global__ void tree(const float *in, float *out) {
  __shared__ float buf[256];
  int t = threadIdx.x;
  buf[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = buf[0];
}
