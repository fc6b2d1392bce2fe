// A templated kernel in a namespace, launched twice with different
// configurations through a macro: both launch sites with their expressions and
// instantiations, the loops with ids, and the accesses with coalescing marked.
// RUN: clang-optiml analyze --json %s -- %mock_args | FileCheck %s
// RUN: clang-optiml analyze %s -- %mock_args | FileCheck --check-prefix=TEXT --match-full-lines %s

#include "cuda_mock.h"

#define LAUNCH_SCALE(T, BLOCK, n, ...)                                         \
  ops::scale<T, BLOCK><<<((n) + (BLOCK) - 1) / (BLOCK), BLOCK>>>(__VA_ARGS__)

namespace ops {
template <typename T, int ITEMS>
__global__ void scale(T *__restrict__ out, const T *in, T a, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * ITEMS;
  for (int j = 0; j < ITEMS; ++j)
    if (base + j < n)
      out[base + j] = a * in[base + j];
}
} // namespace ops

void run(float *out, const float *in, double *dout, const double *din, int n) {
  LAUNCH_SCALE(float, 128, n, out, in, 2.0f, n);
  LAUNCH_SCALE(double, 256, n, dout, din, 0.5, n);
}

// CHECK:      "name": "scale",
// CHECK-NEXT: "qualified_name": "ops::scale",
// CHECK:      "is_template": true,
// CHECK-NEXT: "template_params": [
// CHECK-NEXT:   "T",
// CHECK-NEXT:   "ITEMS"
// CHECK-NEXT: ],
// CHECK-NEXT: "instantiations": [
// CHECK-NEXT:   "ops::scale<float, 128>",
// CHECK-NEXT:   "ops::scale<double, 256>"
// CHECK-NEXT: ],
// CHECK:      "id": "ops::scale/launch0",
// CHECK-NEXT: "caller": "run",
// CHECK-NEXT: "line": 23,
// CHECK:      "grid": "((n) + (128) - 1) / (128)",
// CHECK-NEXT: "block": "128",
// CHECK:      "template_args": [
// CHECK-NEXT:   "float",
// CHECK-NEXT:   "128"
// CHECK-NEXT: ],
// CHECK:      "in_macro": true
// CHECK:      "id": "ops::scale/launch1",
// CHECK-NEXT: "caller": "run",
// CHECK-NEXT: "line": 24,
// CHECK:      "grid": "((n) + (256) - 1) / (256)",
// CHECK-NEXT: "block": "256",
// CHECK:      "template_args": [
// CHECK-NEXT:   "double",
// CHECK-NEXT:   "256"
// CHECK-NEXT: ],
// CHECK:      "id": "ops::scale/loop0",
// CHECK-NEXT: "kind": "for",
// CHECK:      "induction_var": "j",
// CHECK:      "base": "out",
// CHECK-NEXT: "param": 0,
// CHECK-NEXT: "index": "base + j",
// CHECK-NEXT: "read": false,
// CHECK-NEXT: "write": true,
// CHECK-NEXT: "atomic": false,
// CHECK-NEXT: "pattern": "strided",
// CHECK-NEXT: "coalesced": false,
// CHECK-NEXT: "stride": null,
// CHECK:      "loop": "ops::scale/loop0",

// The element count ITEMS is a template parameter, so the stride in
// threadIdx.x is symbolic: strided, not coalesced.
// TEXT:      kernel ops::scale ({{.*}}:14) [map: each thread reads and writes its own elements]
// TEXT-NEXT:   template <T, ITEMS>; launched as: ops::scale<float, 128>, ops::scale<double, 256>
// TEXT-NEXT:   params:
// TEXT-NEXT:     out: T *__restrict (T; written)
// TEXT-NEXT:     in: const T * (T; read)
// TEXT-NEXT:     a: T
// TEXT-NEXT:     n: int
// TEXT-NEXT:   launches:
// TEXT-NEXT:     ops::scale/launch0 at line 23 in run: <<<((n) + (128) - 1) / (128), 128>>> with <float, 128>
// TEXT-NEXT:     ops::scale/launch1 at line 24 in run: <<<((n) + (256) - 1) / (256), 256>>> with <double, 256>
// TEXT-NEXT:   loops:
// TEXT-NEXT:     ops::scale/loop0 (for, line 16, over j)
