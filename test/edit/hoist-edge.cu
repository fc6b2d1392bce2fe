// hoist edge cases. Nested loops: the target loop decides where the locals
// go (just before it), and invariance is judged against it: 'row * n' leaves
// the outer loop, and the inner loop's 'a[i * m + row]' leaves the inner one
// only. Templates: a value-dependent expression ('alpha / B') is hoisted with
// its concrete type, the macro use 'SCALE(n)' stays. A loop with
// '#pragma unroll' keeps the pragma next to it; a loop that is the body of an
// 'if' is wrapped in braces with its locals.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"hoist","target":"nested/loop0"}' > %t.1.json
// RUN: clang-optiml apply %t.cu --edit %t.1.json -o %t.1.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=OUTER %s < %t.1.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.1.cu %}
// RUN: echo '{"kind":"hoist","target":"nested/loop0.0"}' > %t.2.json
// RUN: clang-optiml apply %t.cu --edit %t.2.json -o %t.2.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=INNER %s < %t.2.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.2.cu %}
// RUN: echo '{"kind":"hoist","target":"tmpl/loop0"}' > %t.3.json
// RUN: clang-optiml apply %t.cu --edit %t.3.json -o %t.3.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=TMPL %s < %t.3.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.3.cu %}
// RUN: echo '{"kind":"hoist","target":"pragma/loop0"}' > %t.4.json
// RUN: clang-optiml apply %t.cu --edit %t.4.json -o %t.4.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=PRAGMA %s < %t.4.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.4.cu %}
// RUN: echo '{"kind":"hoist","target":"ifbody/loop0"}' > %t.5.json
// RUN: clang-optiml apply %t.cu --edit %t.5.json -o %t.5.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=IFBODY %s < %t.5.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.5.cu %}

#include "cuda_mock.h"

#define SCALE(x) ((x) * 2)

__global__ void nested(const float *__restrict__ a, float *out, int n, int m) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = 0; i < m; ++i) {
    float s = 0.0f;
    for (int k = 0; k < n; ++k)
      s += a[row * n + k] * a[i * m + row];
    out[i * n + row] = s;
  }
}

template <int B>
__global__ void tmpl(const float *a, float *out, int n, float alpha) {
  int t = threadIdx.x;
  for (int k = t; k < n; k += B) {
    out[k] = a[k] * (alpha / B) + SCALE(n);
  }
}

__global__ void pragma(float *out, int w, int h) {
  float s = 0.0f;
#pragma unroll 4
  for (int k = 0; k < 64; ++k)
    s += out[k] * (float)(w * h);
  out[threadIdx.x] = s;
}

__global__ void ifbody(float *out, int n, int w) {
  if (threadIdx.x == 0)
    for (int k = 0; k < n; ++k)
      out[k] = k + w * blockIdx.x;
}

void run(const float *a, float *out, int n) {
  nested<<<1, 32>>>(a, out, n, n);
  tmpl<64><<<1, 64>>>(a, out, n, 2.0f);
  pragma<<<1, 64>>>(out, n, n);
  ifbody<<<4, 32>>>(out, n, n);
}

// OUTER:      __global__ void nested(const float *__restrict__ a, float *out, int n, int m) {
// OUTER-NEXT:   int row = blockIdx.x * blockDim.x + threadIdx.x;
// OUTER-NEXT:   const int optiml_h0 = row * n;
// OUTER-NEXT:   for (int i = 0; i < m; ++i) {
// OUTER-NEXT:     float s = 0.0f;
// OUTER-NEXT:     for (int k = 0; k < n; ++k)
// OUTER-NEXT:       s += a[optiml_h0 + k] * a[i * m + row];
// OUTER-NEXT:     out[i * n + row] = s;
// OUTER-NEXT:   }
// OUTER-NEXT: }

// INNER:      __global__ void nested(const float *__restrict__ a, float *out, int n, int m) {
// INNER-NEXT:   int row = blockIdx.x * blockDim.x + threadIdx.x;
// INNER-NEXT:   for (int i = 0; i < m; ++i) {
// INNER-NEXT:     float s = 0.0f;
// INNER-NEXT:     const int optiml_h0 = row * n;
// INNER-NEXT:     const float optiml_h1 = (0 < n) ? a[i * m + row] : static_cast<float>(0);
// INNER-NEXT:     for (int k = 0; k < n; ++k)
// INNER-NEXT:       s += a[optiml_h0 + k] * optiml_h1;
// INNER-NEXT:     out[i * n + row] = s;
// INNER-NEXT:   }
// INNER-NEXT: }

// TMPL:      __global__ void tmpl(const float *a, float *out, int n, float alpha) {
// TMPL-NEXT:   int t = threadIdx.x;
// TMPL-NEXT:   const float optiml_h0 = alpha / B;
// TMPL-NEXT:   for (int k = t; k < n; k += B) {
// TMPL-NEXT:     out[k] = a[k] * (optiml_h0) + SCALE(n);
// TMPL-NEXT:   }
// TMPL-NEXT: }

// PRAGMA:      __global__ void pragma(float *out, int w, int h) {
// PRAGMA-NEXT:   float s = 0.0f;
// PRAGMA-NEXT:   const float optiml_h0 = (float)(w * h);
// PRAGMA-NEXT: #pragma unroll 4
// PRAGMA-NEXT:   for (int k = 0; k < 64; ++k)
// PRAGMA-NEXT:     s += out[k] * optiml_h0;
// PRAGMA-NEXT:   out[threadIdx.x] = s;
// PRAGMA-NEXT: }

// IFBODY:      __global__ void ifbody(float *out, int n, int w) {
// IFBODY-NEXT:   if (threadIdx.x == 0)
// IFBODY-NEXT:     {
// IFBODY-NEXT:     const unsigned int optiml_h0 = w * blockIdx.x;
// IFBODY-NEXT:     for (int k = 0; k < n; ++k)
// IFBODY-NEXT:       out[k] = k + optiml_h0;
// IFBODY-NEXT:     }
// IFBODY-NEXT: }
