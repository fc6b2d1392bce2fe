// launch-config refuses a kernel that hard-codes its block size and a launch
// whose grid is not sized from its block; the file is not touched.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"launch-config","target":"fixed/launch0","params":{"block":128}}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=FIXED %s
// RUN: echo '{"kind":"launch-config","target":"scale/launch0","params":{"block":128}}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=GRID %s
// RUN: cmp %s %t.cu

#include "cuda_mock.h"

__global__ void fixed(float *x, int n) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i < n) x[i] = 0;
}

__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

void run(float *x, int n) {
  fixed<<<(n + 255) / 256, 256>>>(x, n);
  scale<<<n / 256, 256>>>(x, 2.0f, n);
}

// FIXED: clang-optiml: error: launch-config fixed/launch0 rejected: [not-applicable] kernel 'fixed' uses a thread or block coordinate outside a global index 'blockIdx.x * blockDim.x + threadIdx.x' (in 'int i = blockIdx.x * 256 + threadIdx.x;'): its work may depend on the block size
// GRID: clang-optiml: error: launch-config scale/launch0 rejected: [not-applicable] the grid's x dimension ('n / 256') is not (E + 255) / 256 over the block
