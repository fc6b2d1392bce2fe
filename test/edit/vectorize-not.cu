// vectorize refuses width 4 for __half (its vector type is __half2),
// and element types with no vector type here (bool, long long); the file
// is left as it was.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"vectorize","target":"hscale","params":{"width":4}}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=HALF4 %s
// RUN: echo '{"kind":"vectorize","target":"flags","params":{"width":2}}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=BOOL %s
// RUN: echo '{"kind":"vectorize","target":"big","params":{"width":2}}' > %t.3.json
// RUN: not clang-optiml apply %t.cu --edit %t.3.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=LONG %s
// RUN: cmp %s %t.cu

#include "cuda_mock.h"
#include "cuda_fp16_mock.h"

__global__ void hscale(const __half *x, __half *y, __half a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}

__global__ void flags(const bool *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] ? 1 : 0;
}

__global__ void big(const long long *in, long long *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1;
}

// HALF4: clang-optiml: error: vectorize hscale rejected: [not-applicable] kernel 'hscale': 'x' has element type '__half', whose vector type __half2 holds 2 elements; use width 2
// BOOL: clang-optiml: error: vectorize flags rejected: [not-applicable] kernel 'flags': 'in' has element type 'bool': only float, int, uint, short, ushort, char, uchar and __half have vector types here
// LONG: clang-optiml: error: vectorize big rejected: [not-applicable] kernel 'big': 'out' has element type 'long long': only float, int, uint, short, ushort, char, uchar and __half have vector types here
