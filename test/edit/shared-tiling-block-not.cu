// shared-tiling's block-sized products: look-alikes, each refused with the
// reason: the store reads threadIdx.y itself; an index reads blockDim,
// which the new block would change; a launch whose block is not square; a
// triangular loop whose bound differs between threads; a macro that names
// the indices; an accumulator that starts from the thread's own output;
// and rows with a kernel that spans the grid.
// RUN: clang-optiml transforms -v %s -- %mock_args 2>&1 | FileCheck %s
// RUN: echo '{"kind":"shared-tiling","target":"grid","params":{"rows":4}}' > %t.json
// RUN: not clang-optiml apply %s --edit %t.json -- %mock_args 2>&1 | FileCheck --check-prefix=GRID %s
// RUN: echo '{"kind":"shared-tiling","target":"ok","params":{"rows":3}}' > %t.3.json
// RUN: not clang-optiml apply %s --edit %t.3.json -- %mock_args 2>&1 | FileCheck --check-prefix=THREE %s

#include "cuda_mock.h"

#define N 32
#define AT(i, j) A[base + (i) * N + (j)]

// CHECK: not shared-tiling own_tid: {{.*}}not a block-sized product (the code after the loop reads threadIdx or blockDim)
__global__ void own_tid(const float *A, const float *B, float *C) {
  size_t base = (size_t)blockIdx.x * N * N;
  int row = threadIdx.y, col = threadIdx.x;
  float sum = 0.f;
  for (int k = 0; k < N; ++k)
    sum += A[base + row * N + k] * B[base + k * N + col];
  C[base + threadIdx.y * N + col] = sum;
}

// CHECK: not shared-tiling dim_index: {{.*}}not a block-sized product (a factor of the product is not a plain load at an index computed from the indices and values the same for every thread)
__global__ void dim_index(const float *A, const float *B, float *C) {
  size_t base = (size_t)blockIdx.x * N * N;
  int row = threadIdx.y, col = threadIdx.x;
  float sum = 0.f;
  for (int k = 0; k < N; ++k)
    sum += A[base + row * blockDim.x + k] * B[base + k * N + col];
  C[base + row * N + col] = sum;
}

// CHECK: not shared-tiling flat: kernel 'flat': the block of flat/launch0 ('dim3(32, 16)') is 32x16x1, not 8x8, 16x16 or 32x32x1
__global__ void flat(const float *A, const float *B, float *C) {
  size_t base = (size_t)blockIdx.x * N * N;
  int row = threadIdx.y, col = threadIdx.x;
  float sum = 0.f;
  for (int k = 0; k < N; ++k)
    sum += A[base + row * N + k] * B[base + k * N + col];
  C[base + row * N + col] = sum;
}

// CHECK: not shared-tiling triangle: {{.*}}not a block-sized product (the loop bound is not the same for every thread)
__global__ void triangle(const float *A, const float *B, float *C) {
  size_t base = (size_t)blockIdx.x * N * N;
  int row = threadIdx.y, col = threadIdx.x;
  float sum = 0.f;
  for (int k = 0; k < row + 1; ++k)
    sum += A[base + row * N + k] * B[base + k * N + col];
  C[base + row * N + col] = sum;
}

// CHECK: not shared-tiling macro_index: {{.*}}not a block-sized product (its body uses macros other than constants)
__global__ void macro_index(const float *A, const float *B, float *C) {
  size_t base = (size_t)blockIdx.x * N * N;
  int row = threadIdx.y, col = threadIdx.x;
  float sum = 0.f;
  for (int k = 0; k < N; ++k)
    sum += AT(row, k) * B[base + k * N + col];
  C[base + row * N + col] = sum;
}

// CHECK: not shared-tiling accumulate: {{.*}}not a block-sized product (the accumulator 'sum' starts from a value that differs between threads)
__global__ void accumulate(const float *A, const float *B, float *C) {
  size_t base = (size_t)blockIdx.x * N * N;
  int row = threadIdx.y, col = threadIdx.x;
  float sum = C[base + row * N + col];
  for (int k = 0; k < N; ++k)
    sum += A[base + row * N + k] * B[base + k * N + col];
  C[base + row * N + col] = sum;
}

// CHECK: shared-tiling ok: block-sized product
__global__ void ok(const float *A, const float *B, float *C) {
  size_t base = (size_t)blockIdx.x * N * N;
  int row = threadIdx.y, col = threadIdx.x;
  float sum = 0.f;
  for (int k = 0; k < N; ++k)
    sum += A[base + row * N + k] * B[base + k * N + col];
  C[base + row * N + col] = sum;
}

__global__ void grid(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float acc = 0.f;
    for (int k = 0; k < n; ++k)
      acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
  }
}
// GRID: rows applies to block-sized products (row = threadIdx.y); this matmul spans the grid (use micro)
// THREE: rows must be 1, 2, 4 or 8 (got 3)

int main() {
  float *A = 0, *B = 0, *C = 0;
  dim3 sq(N, N);
  own_tid<<<64, sq>>>(A, B, C);
  dim_index<<<64, sq>>>(A, B, C);
  flat<<<64, dim3(32, 16)>>>(A, B, C);
  triangle<<<64, sq>>>(A, B, C);
  macro_index<<<64, sq>>>(A, B, C);
  accumulate<<<64, sq>>>(A, B, C);
  ok<<<64, sq>>>(A, B, C);
  grid<<<dim3(4, 4), dim3(16, 16)>>>(A, B, C, 64);
  return 0;
}
