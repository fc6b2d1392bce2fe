// vectorize refuses accesses away from the thread's own element and element
// types without a vector type here; width must be 2 or 4.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"vectorize","target":"neighbor","params":{"width":4}}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=NEIGHBOR %s
// RUN: echo '{"kind":"vectorize","target":"dbl","params":{"width":2}}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=DOUBLE %s
// RUN: cmp %s %t.cu

#include "cuda_mock.h"

__global__ void neighbor(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i + 1];
}

__global__ void dbl(const double *x, double *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2 * x[i];
}

// NEIGHBOR: clang-optiml: error: vectorize neighbor rejected: [not-applicable] kernel 'neighbor': access 'x[i + 1]' is not at the thread's own element 'i'
// DOUBLE: clang-optiml: error: vectorize dbl rejected: [not-applicable] kernel 'dbl': 'y' has element type 'double': only float, int, uint, short, ushort, char, uchar and __half have vector types here
