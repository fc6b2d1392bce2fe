// coarsen refuses when a launch's grid cannot be divided (a dim3 variable,
// a launch written in a macro) and when the factor is out of range.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"coarsen","target":"k","params":{"factor":2}}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=GRID %s
// RUN: echo '{"kind":"coarsen","target":"m","params":{"factor":2}}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=MACRO %s
// RUN: echo '{"kind":"coarsen","target":"k","params":{"factor":64}}' > %t.3.json
// RUN: not clang-optiml apply %t.cu --edit %t.3.json -- %mock_args 2>&1 | FileCheck --check-prefix=RANGE %s
// RUN: cmp %s %t.cu

#include "cuda_mock.h"

__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0;
}

__global__ void m(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 1;
}

#define LAUNCH_M(x, n) m<<<(n + 255) / 256, 256>>>(x, n)

void run(float *x, int n) {
  dim3 grid((n + 255) / 256);
  k<<<grid, 256>>>(x, n);
  LAUNCH_M(x, n);
}

// GRID: clang-optiml: error: coarsen k rejected: {{.*}}[not-applicable] the grid of k/launch0 ('grid') is not a one-dimensional integer expression: its grid could not be divided by the factor
// MACRO: clang-optiml: error: coarsen m rejected: {{.*}}[not-applicable] launch m/launch0 is written inside a macro: its grid could not be divided by the factor
// RANGE: factor
