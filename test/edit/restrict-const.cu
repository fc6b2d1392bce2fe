// restrict-const: const on the pointer the kernel only reads, __restrict__ on
// every pointer since the only launch passes two distinct cudaMalloc buffers.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"restrict-const","target":"saxpy"}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=OUT %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs %t.out.cu -o %t.o %}
// RUN: clang-optiml transforms %t.cu --kernel saxpy -- %mock_args | FileCheck --match-full-lines --check-prefix=LIST %s

#include "cuda_mock.h"

__global__ void saxpy(int n, float a, float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

int main() {
  int n = 1024;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  saxpy<<<4, 256>>>(n, 2.0f, x, y);
  return 0;
}

// OUT: __global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y) {
// LIST: kernel saxpy:
// LIST: restrict-const saxpy: const for 'x'; __restrict__ for 'x', 'y' (every launch passes distinct cudaMalloc buffers)
