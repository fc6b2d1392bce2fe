// Kernels defined by a macro: found, named, marked as coming from a macro
// expansion (edits refuse to rewrite text inside macros), with their accesses.
// RUN: clang-optiml analyze --json %s -- %mock_args | FileCheck %s
// RUN: clang-optiml analyze %s -- %mock_args | FileCheck --check-prefix=TEXT --match-full-lines %s

#include "cuda_mock.h"

#define DEFINE_UNARY(NAME, EXPR)                                               \
  __global__ void NAME(float *out, const float *in, int n) {                   \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                             \
    if (i < n) {                                                               \
      float v = in[i];                                                         \
      out[i] = (EXPR);                                                         \
    }                                                                          \
  }

DEFINE_UNARY(square, v * v)
DEFINE_UNARY(twice, v + v)

void run(float *o, const float *i, int n) {
  square<<<n / 128, 128>>>(o, i, n);
  twice<<<n / 128, 128>>>(o, i, n);
}

// CHECK:      "name": "square",
// CHECK:      "in_macro": true,
// CHECK:      "id": "square/launch0",
// CHECK:      "name": "twice",
// CHECK:      "in_macro": true,
// CHECK:      "id": "twice/launch0",

// TEXT:      kernel square ({{.*}}:17) [map: each thread reads and writes its own elements]
// TEXT:        memory accesses:
// TEXT-NEXT:     read global in[i] line 17: coalesced
// TEXT-NEXT:     write global out[i] line 17: coalesced
// TEXT:      kernel twice ({{.*}}:18) [map: each thread reads and writes its own elements]
