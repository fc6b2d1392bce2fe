// Loops: stable ids with nesting, induction variables, constant trip counts,
// unroll pragmas, thread-dependent bounds (grid-stride).
// RUN: clang-optiml analyze %s -- %mock_args | FileCheck --match-full-lines %s
// RUN: clang-optiml analyze --json %s -- %mock_args | FileCheck --check-prefix=JSON %s

#include "cuda_mock.h"

__global__ void loops(float *out, const float *in, int n) {
  const int K = 8;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x) {
    float acc = 0;
#pragma unroll 4
    for (int k = 0; k < K; ++k)
      for (int j = 10; j > 0; j -= 3)
        acc += in[i] * k * j;
    out[i] = acc;
  }
  int t = 0;
  while (t < n)
    t += 2;
  for (int s = 0; s <= 6; s += 2)
    out[s] = 0;
}

// CHECK:        loops:
// CHECK-NEXT:     loops/loop0 (for, line 10, over i)
// CHECK-NEXT:       loops/loop0.0 (for, line 14, over k, 8 trips, #pragma unroll)
// CHECK-NEXT:         loops/loop0.0.0 (for, line 15, over j, 4 trips)
// CHECK-NEXT:     loops/loop1 (while, line 20)
// CHECK-NEXT:     loops/loop2 (for, line 22, over s, 4 trips)

// JSON:      "id": "loops/loop0",
// JSON-NEXT: "kind": "for",
// JSON-NEXT: "line": 10,
// JSON-NEXT: "parent": null,
// JSON-NEXT: "depth": 0,
// JSON-NEXT: "induction_var": "i",
// JSON-NEXT: "init": "blockIdx.x * blockDim.x + threadIdx.x",
// JSON-NEXT: "bound": "n",
// JSON-NEXT: "step": "i += blockDim.x * gridDim.x",
// JSON-NEXT: "trip_count": null,
// JSON-NEXT: "unroll_pragma": false,
// JSON-NEXT: "thread_dependent_bounds": true
// JSON:      "id": "loops/loop0.0.0",
// JSON-NEXT: "kind": "for",
// JSON-NEXT: "line": 15,
// JSON-NEXT: "parent": "loops/loop0.0",
// JSON-NEXT: "depth": 2,
// JSON:      "trip_count": 4,
