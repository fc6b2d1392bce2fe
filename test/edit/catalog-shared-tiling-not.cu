// shared-tiling refuses a kernel launched with a block that is not TILE x
// TILE, and a kernel whose loop body is not a product of two loads; the file
// is not touched.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"shared-tiling","target":"rect","params":{"tile":16}}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=RECT %s
// RUN: echo '{"kind":"shared-tiling","target":"addmm"}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=ADD %s
// RUN: cmp %s %t.cu

#include "cuda_mock.h"

__global__ void rect(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float sum = 0.0f;
    for (int k = 0; k < n; ++k)
      sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
  }
}

__global__ void addmm(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float sum = 0.0f;
    for (int k = 0; k < n; ++k)
      sum += A[row * n + k] + B[k * n + col];
    C[row * n + col] = sum;
  }
}

void run(const float *A, const float *B, float *C, int n) {
  rect<<<dim3(n / 32, n / 8), dim3(32, 8)>>>(A, B, C, n);
  addmm<<<dim3(n / 16, n / 16), dim3(16, 16)>>>(A, B, C, n);
}

// RECT: clang-optiml: error: shared-tiling rect rejected: [not-applicable] kernel 'rect': the block of rect/launch0 ('dim3(32, 8)') is 32x8x1, not 16x16x1 (change it with launch-config first)
// ADD: clang-optiml: error: shared-tiling addmm rejected: [not-applicable] kernel 'addmm': not matmul-like (the loop body is not 'sum += A[...] * B[...];' (found 'sum += A[row * n + k] + B[k * n + col];')); not a block-sized product ('row' differs between threads but is not an index 'row = threadIdx.y' or 'col = threadIdx.x'); not a 2D stencil (the read 'A[row * n + k]' has an index that is not (y + dy) * pitch + (x + dx) with constant offsets)
