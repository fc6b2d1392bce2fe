// shared-tiling: a classic matmul kernel launched with 16x16 blocks is
// rewritten to stage 16x16 tiles of A and B in shared memory (zero-filled at
// the edges, barriers reached by every thread, the store still guarded); the
// launch is left as it is.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"shared-tiling","target":"matmul","params":{"tile":16}}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.out.cu %}

#include "cuda_mock.h"

__global__ void matmul(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float sum = 0.0f;
    for (int k = 0; k < n; ++k)
      sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
  }
}

void run(const float *A, const float *B, float *C, int n) {
  dim3 block(16, 16);
  dim3 grid((n + 15) / 16, (n + 15) / 16);
  matmul<<<grid, block>>>(A, B, C, n);
}

// CHECK:      __global__ void matmul(const float *A, const float *B, float *C, int n) {
// CHECK-NEXT:   int row = blockIdx.y * blockDim.y + threadIdx.y;
// CHECK-NEXT:   int col = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT:   __shared__ float As[16][16];
// CHECK-NEXT:   __shared__ float Bs[16][16];
// CHECK-NEXT:   float sum = 0.0f;
// CHECK-NEXT:   for (int kTile = 0; kTile < n; kTile += 16) {
// CHECK-NEXT:     int aCol = kTile + threadIdx.x;
// CHECK-NEXT:     int bRow = kTile + threadIdx.y;
// CHECK-NEXT:     As[threadIdx.y][threadIdx.x] = row < n && aCol < n ? A[row * n + aCol] : 0.0f;
// CHECK-NEXT:     Bs[threadIdx.y][threadIdx.x] = bRow < n && col < n ? B[bRow * n + col] : 0.0f;
// CHECK-NEXT:     __syncthreads();
// CHECK-NEXT:     for (int k = 0; k < 16; ++k)
// CHECK-NEXT:       sum += As[threadIdx.y][k] * Bs[k][threadIdx.x];
// CHECK-NEXT:     __syncthreads();
// CHECK-NEXT:   }
// CHECK-NEXT:   if (row < n && col < n) {
// CHECK-NEXT:     C[row * n + col] = sum;
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: void run(const float *A, const float *B, float *C, int n) {
// CHECK-NEXT:   dim3 block(16, 16);
// CHECK-NEXT:   dim3 grid((n + 15) / 16, (n + 15) / 16);
// CHECK-NEXT:   matmul<<<grid, block>>>(A, B, C, n);
// CHECK-NEXT: }
