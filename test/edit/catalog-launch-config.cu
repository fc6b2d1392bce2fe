// launch-config: the block of a 2D launch held in dim3 variables becomes
// 32x8 and the grid is resized to match, both written in the launch (host
// code other than launch configurations may not change); the other launch
// is left alone.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"launch-config","target":"matmul/launch0","params":{"block_x":32,"block_y":8}}' > %t.json
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
  matmul<<<dim3((n + 15) / 16, (n + 15) / 16), dim3(16, 16)>>>(A, B, C, n);
}

// CHECK:      void run(const float *A, const float *B, float *C, int n) {
// CHECK-NEXT:   dim3 block(16, 16);
// CHECK-NEXT:   dim3 grid((n + 15) / 16, (n + 15) / 16);
// CHECK-NEXT:   matmul<<<dim3((n + 31) / 32, (n + 7) / 8), dim3(32, 8)>>>(A, B, C, n);
// CHECK-NEXT:   matmul<<<dim3((n + 15) / 16, (n + 15) / 16), dim3(16, 16)>>>(A, B, C, n);
// CHECK-NEXT: }
