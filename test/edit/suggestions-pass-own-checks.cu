// Every suggestion `transforms` offers passes `apply` (issue 20's findings):
// launch-bounds on kernels launched with 16 and 1 threads suggested 16 and
// 1, below the parameter's floor of 32, which its own validator refused;
// restrict-const turned a read-only `float **` into `const float **`, which
// the caller's `float **` does not convert to. Now the bound is 32 and the
// pointer-to-pointer keeps its type (said in the reason).
// RUN: %python %S/Inputs/apply_every_suggestion.py clang-optiml %s -- %mock_args | FileCheck %s
// RUN: clang-optiml transforms -v %s -- %mock_args | FileCheck --check-prefix=WHY %s

#include "cuda_mock.h"

__global__ void tiny(float *p) { p[threadIdx.x] *= 2; }
__global__ void single(float *p) { p[0] += 1; }
__global__ void rows(float **pp, float *out, int n) {
  int i = threadIdx.x;
  float s = 0;
  for (int j = 0; j < n; ++j)
    s += pp[i][j];
  out[i] = s;
}

void run(float *p, float **pp, int n) {
  tiny<<<4, 16>>>(p);
  single<<<1, 1>>>(p);
  rows<<<1, 32>>>(pp, p, n);
}

// CHECK-DAG: ok launch-bounds tiny {"max_threads": 32}
// CHECK-DAG: ok launch-bounds single {"max_threads": 32}
// CHECK-NOT: REFUSED
// CHECK: 0 refused
// WHY: 'pp' points to a pointer: a 'const' there would not accept the caller's argument
