// grid-stride: the guarded one-element-per-thread body becomes a grid-stride
// loop; 1D grids are capped at max_blocks; a dim3 grid variable is left alone.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"grid-stride","target":"scale","params":{"max_blocks":528}}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.out.cu %}

#include "cuda_mock.h"

__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = a * x[i];
}

void run(float *x, int n) {
  scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n);
  dim3 grid((n + 127) / 128);
  scale<<<grid, 128>>>(x, 3.0f, n);
}

// CHECK:      __global__ void scale(float *x, float a, int n) {
// CHECK-NEXT:   for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
// CHECK-NEXT:        i += blockDim.x * gridDim.x)
// CHECK-NEXT:     x[i] = a * x[i];
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: void run(float *x, int n) {
// CHECK-NEXT:   scale<<<(n + 255) / 256 < 528 ? (n + 255) / 256 : 528, 256>>>(x, 2.0f, n);
// CHECK-NEXT:   dim3 grid((n + 127) / 128);
// CHECK-NEXT:   scale<<<grid, 128>>>(x, 3.0f, n);
// CHECK-NEXT: }
