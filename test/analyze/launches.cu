// Launch sites: grid/block/shared/stream as written, dim3 and integers,
// numbered per kernel in source order, with the calling function.
// RUN: clang-optiml analyze %s -- %mock_args | FileCheck --match-full-lines %s
// RUN: clang-optiml analyze --json %s -- %mock_args | FileCheck --check-prefix=JSON %s

#include "cuda_mock.h"

__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

void first(float *p, int n, cudaStream_t s) {
  fill<<<(n + 255) / 256, 256>>>(p, 1.0f, n);
  dim3 grid((n + 127) / 128), block(128);
  fill<<<grid, block, 64 * sizeof(float), s>>>(p, 2.0f, n);
}

void second(float *p, int n) { fill<<<dim3(n / 32, 1), dim3(32, 1, 1), 0>>>(p, 3.0f, n); }

// CHECK:      kernel fill ({{.*}}:8) [map: each thread reads and writes its own elements]
// CHECK:        launches:
// CHECK-NEXT:     fill/launch0 at line 14 in first: <<<(n + 255) / 256, 256>>>
// CHECK-NEXT:     fill/launch1 at line 16 in first: <<<grid, block, 64 * sizeof(float), s>>>
// CHECK-NEXT:     fill/launch2 at line 19 in second: <<<dim3(n / 32, 1), dim3(32, 1, 1), 0>>>

// JSON:      "id": "fill/launch1",
// JSON-NEXT: "caller": "first",
// JSON-NEXT: "line": 16,
// JSON-NEXT: "column": 3,
// JSON-NEXT: "grid": "grid",
// JSON-NEXT: "block": "block",
// JSON-NEXT: "shared": "64 * sizeof(float)",
// JSON-NEXT: "stream": "s",
// JSON-NEXT: "template_args": [],
// JSON-NEXT: "args": [
// JSON-NEXT:   "p",
// JSON-NEXT:   "2.0f",
// JSON-NEXT:   "n"
// JSON-NEXT: ],
// JSON-NEXT: "in_macro": false
// JSON:      "id": "fill/launch2",
// JSON:      "shared": "0",
// JSON-NEXT: "stream": null,
