// Memory accesses: base, index, read/write/atomic, and how consecutive
// threads address memory (coalesced, uniform, strided, unknown/indirect).
// RUN: clang-optiml analyze %s -- %mock_args | FileCheck --match-full-lines %s
// RUN: clang-optiml analyze --json %s -- %mock_args | FileCheck --check-prefix=JSON %s

#include "cuda_mock.h"

__global__ void acc(float *out, const float *in, const int *idx, int *hist,
                    int n, int ld) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  const float *row = in + y * ld;
  out[y * ld + x] = row[x] + in[x * ld + y] + in[2 * x] + in[0] + in[idx[x]];
  atomicAdd(&hist[idx[x] % 16], 1);
}

// CHECK:        memory accesses:
// CHECK-NEXT:     write global out[y * ld + x] line 13: coalesced
// CHECK-NEXT:     read global in[(y * ld) + x] line 13: coalesced
// CHECK-NEXT:     read global in[x * ld + y] line 13: strided
// CHECK-NEXT:     read global in[2 * x] line 13: strided (stride 2)
// CHECK-NEXT:     read global in[0] line 13: uniform
// CHECK-NEXT:     read global in[idx[x]] line 13: unknown, indirect
// CHECK-NEXT:     read global idx[x] line 13: coalesced
// CHECK-NEXT:     atomic global hist[idx[x] % 16] line 14: unknown, indirect
// CHECK-NEXT:     read global idx[x] line 14: coalesced

// JSON:      "space": "global",
// JSON-NEXT: "base": "out",
// JSON-NEXT: "param": 0,
// JSON-NEXT: "index": "y * ld + x",
// JSON-NEXT: "read": false,
// JSON-NEXT: "write": true,
// JSON-NEXT: "atomic": false,
// JSON-NEXT: "pattern": "coalesced",
// JSON-NEXT: "coalesced": true,
// JSON-NEXT: "stride": 1,
// JSON-NEXT: "indirect": false,
// JSON-NEXT: "loop": null,
