// coarsen: each thread handles `factor` blocks' worth of elements (still
// coalesced per step); every launch's grid is divided by the factor. A
// template kernel is rewritten once, for all its instantiations.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"coarsen","target":"shift","params":{"factor":4}}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.out.cu %}

#include "cuda_mock.h"

template <typename T>
__global__ void shift(const T *in, T *out, T d, int n) {
  const int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i >= n) return;
  out[i] = in[i] + d;
}

void run(const float *a, float *b, const int *c, int *e, int n, int blocks) {
  shift<<<(n + 255) / 256, 256>>>(a, b, 1.0f, n);
  shift<int><<<blocks, 128>>>(c, e, 2, n);
}

// CHECK:      template <typename T>
// CHECK-NEXT: __global__ void shift(const T *in, T *out, T d, int n) {
// CHECK-NEXT:   #pragma unroll
// CHECK-NEXT:   for (int k = 0; k < 4; ++k) {
// CHECK-NEXT:     const int i = (blockIdx.x * 4 + k) * blockDim.x + threadIdx.x;
// CHECK-NEXT:     if (i >= n) return;
// CHECK-NEXT:     out[i] = in[i] + d;
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: void run(const float *a, float *b, const int *c, int *e, int n, int blocks) {
// CHECK-NEXT:   shift<<<(n + 1023) / 1024, 256>>>(a, b, 1.0f, n);
// CHECK-NEXT:   shift<int><<<(blocks + 3) / 4, 128>>>(c, e, 2, n);
// CHECK-NEXT: }
