// read-only-cache: loads through pointers the kernel never writes become
// __ldg(&...); written pointers and loads inside macros are left alone. An
// element type that depends on a template parameter is taken from the
// instantiations in the file: each must have an __ldg overload (float and
// double do; a struct does not), and a template never instantiated is
// refused. A load in an arm of a conditional whose arms are both lvalues
// (`best = m[i] > best ? m[i] : best`) is a load; the same conditional
// assigned to is a write.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"read-only-cache","target":"stencil"}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=OUT %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs %t.out.cu -o %t.o %}
// RUN: echo '{"kind":"read-only-cache","target":"tcopy"}' > %t.2.json
// RUN: clang-optiml apply %t.cu --edit %t.2.json -o %t.tmpl.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=TMPL %s < %t.tmpl.cu
// RUN: %if nvcc %{ %nvcc -c -std=c++17 -arch=sm_90 -I%inputs %t.tmpl.cu -o %t.tmpl.o %}
// RUN: echo '{"kind":"read-only-cache","target":"tnever"}' > %t.4.json
// RUN: not clang-optiml apply %t.cu --edit %t.4.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=TNEVER %s
// RUN: echo '{"kind":"read-only-cache","target":"tpoints"}' > %t.5.json
// RUN: not clang-optiml apply %t.cu --edit %t.5.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=TSTRUCT %s
// RUN: echo '{"kind":"read-only-cache","target":"tclear"}' > %t.6.json
// RUN: not clang-optiml apply %t.cu --edit %t.6.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=TDISCARDED %s
// RUN: echo '{"kind":"read-only-cache","target":"runmax"}' > %t.7.json
// RUN: clang-optiml apply %t.cu --edit %t.7.json -o %t.max.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=MAX %s < %t.max.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs %t.max.cu -o %t.max.o %}
// RUN: echo '{"kind":"read-only-cache","target":"pickwrite"}' > %t.8.json
// RUN: not clang-optiml apply %t.cu --edit %t.8.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=PICK %s
// RUN: echo '{"kind":"read-only-cache","target":"inplace"}' > %t.3.json
// RUN: not clang-optiml apply %t.cu --edit %t.3.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=WRITTEN %s

#include "cuda_mock.h"

#define AT(p, i) p[i]

__global__ void stencil(const float *in, float *out, const int *idx, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1)
    out[i] = in[i - 1] + in[i] + *(in + i + 1) + AT(in, idx[i]);
}

template <typename T>
__global__ void tcopy(const T *in, T *out) { out[threadIdx.x] = in[threadIdx.x]; }

template <typename T>
__global__ void tnever(const T *in, T *out) { out[threadIdx.x] = in[threadIdx.x]; }

// The float instantiation discards the write to 'in': another one would not.
template <typename T>
__global__ void tclear(T *in, T *out) {
  if constexpr (sizeof(T) == 8)
    in[threadIdx.x] = 0;
  out[threadIdx.x] = in[threadIdx.x];
}

struct Point { float x, y, z; };

template <typename T>
__global__ void tpoints(const T *in, T *out) { out[threadIdx.x] = in[threadIdx.x]; }

__global__ void inplace(float *p) { p[threadIdx.x] = p[threadIdx.x] * 2; }

__global__ void runmax(const float *m, float *out, int n) {
  float best = -1e30f;
  for (int i = threadIdx.x; i < n; i += 32)
    best = m[i] > best ? m[i] : (best);
  out[threadIdx.x] = best;
}

__global__ void pickwrite(float *m, float *out, int n) {
  float spare = 0;
  (n > 4 ? m[threadIdx.x] : spare) = 1.f;
  out[threadIdx.x] = spare;
}

void run(float *a, float *b, int *c, double *d, Point *p) {
  stencil<<<1, 32>>>(a, b, c, 32);
  tcopy<<<1, 32>>>(a, b);
  tcopy<<<1, 32>>>(d, d);
  tclear<<<1, 32>>>(a, b);
  tpoints<<<1, 32>>>(a, b);
  tpoints<<<1, 32>>>(p, p);
  inplace<<<1, 32>>>(a);
  runmax<<<1, 32>>>(a, b, 32);
  pickwrite<<<1, 32>>>(a, b, 32);
}

// OUT:      __global__ void stencil(const float *in, float *out, const int *idx, int n) {
// OUT-NEXT:   int i = blockIdx.x * blockDim.x + threadIdx.x;
// OUT-NEXT:   if (i > 0 && i < n - 1)
// OUT-NEXT:     out[i] = __ldg(&in[i - 1]) + __ldg(&in[i]) + __ldg(&*(in + i + 1)) + AT(in, idx[i]);
// TMPL:      __global__ void tcopy(const T *in, T *out) { out[threadIdx.x] = __ldg(&in[threadIdx.x]); }
// TNEVER: clang-optiml: error: read-only-cache tnever rejected: [not-applicable] no read-only loads to route through __ldg: 'in': element type 'const T' depends on a template parameter and the template is never instantiated in this file; 'out': element type 'T' depends on a template parameter and the template is never instantiated in this file
// TSTRUCT: clang-optiml: error: read-only-cache tpoints rejected: [not-applicable] no read-only loads to route through __ldg: 'in': element type 'const T' is 'const Point' in tpoints<Point>, which has no __ldg overload; 'out': element type 'T' is 'Point' in tpoints<Point>, which has no __ldg overload
// WRITTEN: clang-optiml: error: read-only-cache inplace rejected: [not-applicable] no read-only loads to route through __ldg: 'p' is written (or an element is passed by reference or its address taken) at {{[0-9]+}}:37
// TDISCARDED: clang-optiml: error: read-only-cache tclear rejected: [not-applicable] no read-only loads to route through __ldg: 'in' has uses that are not compiled in tclear<float> (a discarded 'if constexpr' branch); they cannot be followed; 'out' is written (or an element is passed by reference or its address taken) at {{[0-9]+}}:3 in tclear<float>
// MAX:     best = __ldg(&m[i]) > best ? __ldg(&m[i]) : (best);
// PICK: clang-optiml: error: read-only-cache pickwrite rejected: [not-applicable] no read-only loads to route through __ldg: 'm' is written (or an element is passed by reference or its address taken) at {{[0-9]+}}:12; 'out' is written (or an element is passed by reference or its address taken) at {{[0-9]+}}:3
