// Launches written inside template host functions (dispatch code): the
// launch is found in the template's body, with its template arguments as
// written, and the instantiations its callers produce are listed.
// RUN: clang-optiml analyze %s -- %mock_args | FileCheck --match-full-lines %s

#include "cuda_mock.h"

template <typename T>
__global__ void fill(T *p, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

template <typename T, int BLOCK>
void launch_fill(T *p, T v, int n) {
  fill<T><<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(p, v, n);
}

void run(float *f, double *d, int n) {
  launch_fill<float, 128>(f, 1.0f, n);
  launch_fill<double, 256>(d, 2.0, n);
  fill<<<1, 32>>>(f, 3.0f, 32);
}

// CHECK:      kernel fill ({{.*}}:9) [map: each thread reads and writes its own elements]
// CHECK-NEXT:   template <T>; launched as: fill<float>, fill<double>
// CHECK:        launches:
// CHECK-NEXT:     fill/launch0 at line 16 in launch_fill: <<<(n + BLOCK - 1) / BLOCK, BLOCK>>> with <T>
// CHECK-NEXT:     fill/launch1 at line 22 in run: <<<1, 32>>> with <float>
