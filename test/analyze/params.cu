// Parameters: element types and sizes, const, __restrict__, read/written.
// RUN: clang-optiml analyze %s -- %mock_args | FileCheck --match-full-lines %s
// RUN: clang-optiml analyze --json %s -- %mock_args | FileCheck --check-prefix=JSON %s

#include "cuda_mock.h"

__global__ void k(const float *__restrict__ x, double *y, int *counts,
                  const char *flags, float4 *v, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && flags[i]) {
    y[i] = a * x[i];
    counts[i] += 1;
    v[i].x = 0.0f;
  }
}

// CHECK:      kernel k ({{.*}}:7) [map: each thread reads and writes its own elements]
// CHECK-NEXT:   params:
// CHECK-NEXT:     x: const float *__restrict (float, 4 B; read)
// CHECK-NEXT:     y: double * (double, 8 B; written)
// CHECK-NEXT:     counts: int * (int, 4 B; read-write)
// CHECK-NEXT:     flags: const char * (char, 1 B; read)
// CHECK-NEXT:     v: float4 * (float4, 16 B; written)
// CHECK-NEXT:     n: int
// CHECK-NEXT:     a: float

// JSON:      "name": "x",
// JSON-NEXT: "type": "const float *__restrict",
// JSON-NEXT: "pointer": true,
// JSON-NEXT: "element_type": "float",
// JSON-NEXT: "element_size": 4,
// JSON-NEXT: "const": true,
// JSON-NEXT: "restrict": true,
// JSON-NEXT: "floating_point": true,
// JSON-NEXT: "read": true,
// JSON-NEXT: "written": false
// JSON:      "name": "y",
// JSON:      "element_size": 8,
// JSON-NEXT: "const": false,
// JSON-NEXT: "restrict": false,
// JSON:      "name": "n",
// JSON-NEXT: "type": "int",
// JSON-NEXT: "pointer": false,
