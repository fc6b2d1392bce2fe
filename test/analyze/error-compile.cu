// Compile errors: clang's diagnostics first, then a one-line summary; exit 1.
// RUN: cp %s %t.cu
// RUN: not clang-optiml analyze %t.cu -- %mock_args 2>&1 | FileCheck --match-full-lines %s

#include "cuda_mock.h"

__global__ void broken(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  p[i] = undeclared_value;
  p[i] += 1.0f
}

// CHECK:      {{.*}}.cu:9:10: error: use of undeclared identifier 'undeclared_value'
// CHECK-NEXT: {{.*}}.cu:10:15: error: expected ';' after expression
// CHECK-NEXT: clang-optiml: error: 2 compile errors in '{{.*}}.cu'; fix them first
