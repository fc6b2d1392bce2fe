// grid-stride refuses kernels whose body uses a thread index directly, and
// kernels whose guard is not the last statement; the file is not touched.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"grid-stride","target":"tid"}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=TID %s
// RUN: echo '{"kind":"grid-stride","target":"after"}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=AFTER %s
// RUN: cmp %s %t.cu

#include "cuda_mock.h"

__global__ void tid(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = threadIdx.x;
}

__global__ void after(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0;
  x[0] = 1;
}

// TID: clang-optiml: error: grid-stride tid rejected: [not-applicable] kernel 'tid': the body uses a thread or block index directly ('x[i] = threadIdx.x;'): its meaning would change
// AFTER: clang-optiml: error: grid-stride after rejected: [not-applicable] kernel 'after': the guard 'if (i < n)' is not the last statement of the kernel
