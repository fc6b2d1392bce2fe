// privatize-atomics refuses wide loads that are not unit-stride, elements
// with no vector form, and bins whose number is not known at compile time;
// the file is left as it was.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"privatize-atomics","target":"pairs","params":{"vector_bytes":16}}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=STRIDE %s
// RUN: echo '{"kind":"privatize-atomics","target":"rgb","params":{"vector_bytes":16}}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=STRUCT %s
// RUN: echo '{"kind":"privatize-atomics","target":"keys","params":{"vector_bytes":16}}' > %t.3.json
// RUN: not clang-optiml apply %t.cu --edit %t.3.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=BINS %s
// RUN: echo '{"kind":"privatize-atomics","target":"doubles","params":{"vector_bytes":4}}' > %t.4.json
// RUN: not clang-optiml apply %t.cu --edit %t.4.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=WIDE %s
// RUN: echo '{"kind":"privatize-atomics","target":"pairs","params":{"vector_bytes":3}}' > %t.5.json
// RUN: not clang-optiml apply %t.cu --edit %t.5.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=PARAM %s
// RUN: cmp %s %t.cu

#include "cuda_mock.h"

__global__ void pairs(const unsigned char *d, unsigned *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[d[2 * i + 1]], 1u);
}

struct Rgb { unsigned char r, g, b; };
__global__ void rgb(const Rgb *px, unsigned *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[px[i].g], 1u);
}

__global__ void keys(const int *key, unsigned *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[key[i]], 1u);
}

__global__ void doubles(const double *x, float *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[(unsigned char)x[i]], 1.0f);
}

// STRIDE: clang-optiml: error: privatize-atomics pairs rejected: [not-applicable] params.vector_bytes 16: the load 'd[2 * i + 1]' is not unit-stride in 'i'
// STRUCT: clang-optiml: error: privatize-atomics rgb rejected: [not-applicable] params.vector_bytes 16: 'px' has element type 'Rgb', which has no vector form (integers and floats have)
// BINS: clang-optiml: error: privatize-atomics keys rejected: [not-applicable] the size of 'bins' is not known at compile time: the index 'key[i]' is not bounded by its type, a constant mask or a modulus; give params.bins to privatize that many elements
// WIDE: clang-optiml: error: privatize-atomics doubles rejected: [not-applicable] params.vector_bytes 4: 'x' has 8-byte elements, which do not fill a 4-byte word
// PARAM: clang-optiml: error: privatize-atomics pairs rejected: [params] params.vector_bytes must be 1, 4, 8 or 16
