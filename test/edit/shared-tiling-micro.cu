// shared-tiling micro=8: a matmul kernel launched with 16x16 blocks becomes
// the register-blocked product, 128 x 128 outputs per block and an 8 x 8
// register tile per thread, K in double-buffered steps of 8, declared
// __launch_bounds__(256, 2) (128 registers, no spills). The indices
// and the guard are replaced; the store is the original statement with its
// indices and accumulator renamed, under the original bounds and the
// launch's grid; the launch is left as it is. The plain tiles are still
// the other suggestion; micro is refused where it cannot apply.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"shared-tiling","target":"matmul","params":{"tile":16,"micro":8}}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args 2>&1 | FileCheck --check-prefix=APPLIED %s
// RUN: FileCheck --match-full-lines %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.out.cu %}
// RUN: clang-optiml transforms %t.cu -- %mock_args | FileCheck --check-prefix=SUGGEST %s
// RUN: echo '{"kind":"shared-tiling","target":"matmul","params":{"micro":4}}' > %t.bad.json
// RUN: not clang-optiml apply %t.cu --edit %t.bad.json -- %mock_args 2>&1 | FileCheck --check-prefix=BADMICRO %s
// RUN: echo '{"kind":"shared-tiling","target":"matmul","params":{"tile":8,"micro":8}}' > %t.bad8.json
// RUN: not clang-optiml apply %t.cu --edit %t.bad8.json -- %mock_args 2>&1 | FileCheck --check-prefix=BADTILE %s
// RUN: sed 's/dim3 block(16, 16);/dim3 block(32, 32);/' %s > %t.32.cu
// RUN: echo '{"kind":"shared-tiling","target":"matmul","params":{"micro":8}}' > %t.m8.json
// RUN: not clang-optiml apply %t.32.cu --edit %t.m8.json -- %mock_args 2>&1 | FileCheck --check-prefix=BLOCK32 %s
// RUN: sed 's/target":"matmul/target":"jacobi/' %t.m8.json > %t.st.json
// RUN: not clang-optiml apply %S/shared-tiling-stencil-jacobi.cu --edit %t.st.json -- %mock_args 2>&1 | FileCheck --check-prefix=STENCIL %s

#include "cuda_mock.h"

__global__ void matmul(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float sum = 0.0f;
    for (int k = 0; k < n; ++k)
      sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = 2.0f * sum;
  }
}

void run(const float *A, const float *B, float *C, int n) {
  dim3 block(16, 16);
  dim3 grid((n + 15) / 16, (n + 15) / 16);
  matmul<<<grid, block>>>(A, B, C, n);
}

// APPLIED: applied: shared-tiling matmul micro=8 tile=16

// CHECK:      __global__ void __launch_bounds__(256, 2) matmul(const float *A, const float *B, float *C, int n) {
// CHECK-NEXT:   // shared-tiling micro=8: 128 x 128 outputs per block, 8 x 8 per thread.
// CHECK-NEXT:   __shared__ float As[2][8][132];
// CHECK-NEXT:   __shared__ float Bs[2][8][128];
// CHECK-NEXT:   const int tid = threadIdx.y * 16 + threadIdx.x;
// CHECK-NEXT:   const int rowBase = blockIdx.y * 128;
// CHECK-NEXT:   const int colBase = blockIdx.x * 128;
// CHECK-NEXT:   if (rowBase >= gridDim.y * 16 || colBase >= gridDim.x * 16)
// CHECK-NEXT:     return;
// CHECK-NEXT:   float accR[8][8];
// CHECK:            accR[i][j] = 0.0f;
// CHECK:          int ar = rowBase + tid / 8 + 32 * i;
// CHECK-NEXT:     int ak = 0 + tid % 8;
// CHECK-NEXT:     aNext[i] = ar < n && ak < n ? A[ar * n + ak] : 0.0f;
// CHECK-NEXT:     int bk = 0 + tid / 128 + 2 * i;
// CHECK-NEXT:     int bc = colBase + tid % 128;
// CHECK-NEXT:     bNext[i] = bk < n && bc < n ? B[bk * n + bc] : 0.0f;
// CHECK:        for (int k0 = 0; k0 < n; k0 += 8) {
// CHECK:              int ak = k0 + 8 + tid % 8;
// CHECK:          accR[i][j] += ra[i] * rb[j];
// CHECK:          __syncthreads();
// CHECK:          if (r < n && c < n && r < gridDim.y * 16 && c < gridDim.x * 16) {
// CHECK-NEXT:       C[r * n + c] = 2.0f * accR[i][j];
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: void run(const float *A, const float *B, float *C, int n) {
// CHECK-NEXT:   dim3 block(16, 16);
// CHECK-NEXT:   dim3 grid((n + 15) / 16, (n + 15) / 16);
// CHECK-NEXT:   matmul<<<grid, block>>>(A, B, C, n);

// SUGGEST: try {"kind":"shared-tiling","target":"matmul","params":{"micro":8,"tile":16}}
// SUGGEST-NEXT: try {"kind":"shared-tiling","target":"matmul","params":{"tile":16}}
// BADMICRO: micro must be 1 or 8 (got 4)
// BADTILE: micro 8 works on 16 x 16 blocks: tile must be 16 (got 8)
// BLOCK32: micro 8 needs 16 x 16 blocks; its launches use 32x32
// STENCIL: micro applies to products; this kernel is a 2D stencil
