// warp-reduce: per-thread atomicAdd into one address becomes a register sum,
// warp shuffles, and one atomicAdd per warp (blocks are whole warps).
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"warp-reduce","target":"sum"}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.out.cu %}

#include "cuda_mock.h"

__global__ void sum(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, x[i]);
}

void run(const float *x, float *out, int n) {
  int threads = 256;
  sum<<<(n + threads - 1) / threads, threads>>>(x, out, n);
}

// CHECK:      __global__ void sum(const float *x, float *out, int n) {
// CHECK-NEXT:   float warp_sum = 0;
// CHECK-NEXT:   int i = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT:   if (i < n)
// CHECK-NEXT:     warp_sum += x[i];
// CHECK-NEXT:   for (int off = 16; off > 0; off /= 2)
// CHECK-NEXT:     warp_sum += __shfl_down_sync(0xffffffffu, warp_sum, off);
// CHECK-NEXT:   if (threadIdx.x % 32 == 0)
// CHECK-NEXT:     atomicAdd(out, warp_sum);
// CHECK-NEXT: }
