// restrict-const refuses __restrict__ when a launch passes the same buffer
// twice or a pointer that is not its own cudaMalloc allocation, and says
// which; const alone still applies. A template kernel gets const on T *.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"restrict-const","target":"axpy","params":{"restrict":true}}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=ALIAS %s
// RUN: echo '{"kind":"restrict-const","target":"copy","params":{"restrict":true}}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=OFFSET %s
// RUN: echo '[{"kind":"restrict-const","target":"axpy"},{"kind":"restrict-const","target":"tscale","params":{"restrict":false}}]' > %t.3.json
// RUN: clang-optiml apply %t.cu --edit %t.3.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=OUT %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs %t.out.cu -o %t.o %}
// RUN: echo '{"kind":"restrict-const","target":"inout","params":{"restrict":false}}' > %t.4.json
// RUN: not clang-optiml apply %t.cu --edit %t.4.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=WRITTEN %s

#include "cuda_mock.h"

__global__ void axpy(float *x, float *y) { y[threadIdx.x] += x[threadIdx.x]; }
__global__ void copy(float *src, float *dst) { dst[threadIdx.x] = src[threadIdx.x]; }
__global__ void inout(float *p, float *q) { p[0] = q[0]; q[0] = 1; p[1] = 2; }

template <typename T>
__global__ void tscale(T *out, T *in) { out[threadIdx.x] = in[threadIdx.x] * 2; }

int main() {
  float *a, *b;
  cudaMalloc(&a, 4096);
  cudaMalloc(&b, 4096);
  axpy<<<1, 32>>>(a, a);
  copy<<<1, 32>>>(a, a + 32);
  inout<<<1, 1>>>(a, b);
  tscale<<<1, 32>>>(a, b);
  return 0;
}

// ALIAS: clang-optiml: error: restrict-const axpy rejected: [not-applicable] __restrict__ refused: axpy/launch0 passes 'a' for two pointer parameters (they alias)
// OFFSET: clang-optiml: error: restrict-const copy rejected: [not-applicable] __restrict__ refused: copy/launch0 passes 'a + 32' for 'dst', not a local variable holding its own allocation
// OUT:      __global__ void axpy(const float *x, float *y) { y[threadIdx.x] += x[threadIdx.x]; }
// OUT:      __global__ void tscale(T *out, const T *in) { out[threadIdx.x] = in[threadIdx.x] * 2; }
// WRITTEN: clang-optiml: error: restrict-const inout rejected: [not-applicable] nothing to add: 'p' is written (or an element is passed by reference or its address taken) at {{[0-9]+}}:45; 'q' is written (or an element is passed by reference or its address taken) at {{[0-9]+}}:58
