// A file with no kernels: says so and exits 0. JSON gives an empty list.
// RUN: clang-optiml analyze %s -- %mock_args | FileCheck --match-full-lines %s
// RUN: clang-optiml analyze --json %s -- %mock_args | FileCheck --check-prefix=JSON %s

#include "cuda_mock.h"

__device__ float helper(float v) { return v * 2.0f; }
int host_only(int a) { return a + 1; }

// CHECK: {{.*}}no-kernels.cu: no CUDA kernels (__global__ functions) found
// JSON: "kernels": []
