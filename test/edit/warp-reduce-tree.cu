// warp-reduce on a shared-memory tree (the shape of examples/reduction.cu):
// the value stays in a register, warps fold with shuffles, one partial per
// warp goes through shared memory (BLOCK / 32 slots), the first warp folds
// those, and thread 0 runs the original atomicAdd on the result, with its
// cast. Integer sums are exact: transforms says changes_precision false.
// RUN: cp %s %t.cu
// RUN: clang-optiml transforms %t.cu --json -- %mock_args | FileCheck --check-prefix=LIST %s
// RUN: echo '{"kind":"warp-reduce","target":"block_sum"}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.out.cu %}

#include "cuda_mock.h"

#define BLOCK 256

__global__ void block_sum(const int *in, unsigned long long *total, int n) {
  __shared__ int partial[BLOCK];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    atomicAdd(total, (unsigned long long)partial[0]);
}

void run(const int *in, unsigned long long *total, int n) {
  block_sum<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(in, total, n);
}

// LIST:      "kind": "warp-reduce",
// LIST-NEXT: "target": "block_sum",
// LIST-NEXT: "reason": "shared-memory tree reduction (+) of int in 'partial': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement",
// LIST-NEXT: "changes_precision": false,

// CHECK:      __global__ void block_sum(const int *in, unsigned long long *total, int n) {
// CHECK-NEXT:   __shared__ int partial[BLOCK / 32];
// CHECK-NEXT:   int tid = threadIdx.x;
// CHECK-NEXT:   int i = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT:   int v = i < n ? in[i] : 0;
// CHECK-NEXT:   for (int off = 16; off > 0; off /= 2)
// CHECK-NEXT:     v += __shfl_down_sync(0xffffffff, v, off);
// CHECK-NEXT:   if (tid % 32 == 0)
// CHECK-NEXT:     partial[tid / 32] = v;
// CHECK-NEXT:   __syncthreads();
// CHECK-NEXT:   if (tid < 32) {
// CHECK-NEXT:     v = tid < blockDim.x / 32 ? partial[tid] : 0;
// CHECK-NEXT:     for (int off = 16; off > 0; off /= 2)
// CHECK-NEXT:       v += __shfl_down_sync(0xffffffff, v, off);
// CHECK-NEXT:   }
// CHECK-NEXT:   if (tid == 0)
// CHECK-NEXT:     atomicAdd(total, (unsigned long long)v);
// CHECK-NEXT: }
