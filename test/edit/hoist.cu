// hoist: invariant arithmetic, a math call and a load move out of a loop
// into typed locals declared just before it; every use is replaced. The load
// is guarded by the loop's entry condition (the loop may run zero times), and
// the floating-point product added to 's' stays in place (hoisting it would
// stop nvcc's FMA contraction). A second kernel with a constant trip count
// and a const pointer that the loop does not store through gets an unguarded
// load.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"hoist","target":"rowsum/loop0"}' > %t.1.json
// RUN: clang-optiml apply %t.cu --edit %t.1.json -o %t.1.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=ROWSUM %s < %t.1.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.1.cu %}
// RUN: echo '{"kind":"hoist","target":"poly/loop0"}' > %t.2.json
// RUN: clang-optiml apply %t.cu --edit %t.2.json -o %t.2.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=POLY %s < %t.2.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.2.cu %}
// RUN: clang-optiml transforms %t.cu -- %mock_args | FileCheck --check-prefix=WHY %s

#include "cuda_mock.h"

__global__ void rowsum(const float *a, float *out, int n, float alpha, float beta, float scale) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n)
    return;
  float s = 0.0f;
  for (int k = 0; k < n; ++k) {
    s += a[row * n + k] * (alpha * beta) + expf(scale) * a[row];
  }
  out[row] = s;
}

__global__ void poly(const float *coef, float *y, int n, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int d = 0; d < 8; d++) {
    acc = acc * 0.5f + coef[blockIdx.y] * (float)(d + 1);
    y[i * stride + d] = acc + n / 4;
  }
}

void run(const float *a, float *out, int n) {
  rowsum<<<(n + 255) / 256, 256>>>(a, out, n, 1.0f, 2.0f, 0.5f);
  poly<<<dim3(n / 256, 4), 256>>>(a, out, n, 8);
}

// ROWSUM:      __global__ void rowsum(const float *a, float *out, int n, float alpha, float beta, float scale) {
// ROWSUM-NEXT:   int row = blockIdx.x * blockDim.x + threadIdx.x;
// ROWSUM-NEXT:   if (row >= n)
// ROWSUM-NEXT:     return;
// ROWSUM-NEXT:   float s = 0.0f;
// ROWSUM-NEXT:   const int optiml_h0 = row * n;
// ROWSUM-NEXT:   const float optiml_h1 = alpha * beta;
// ROWSUM-NEXT:   const float optiml_h2 = expf(scale);
// ROWSUM-NEXT:   const float optiml_h3 = (0 < n) ? a[row] : static_cast<float>(0);
// ROWSUM-NEXT:   for (int k = 0; k < n; ++k) {
// ROWSUM-NEXT:     s += a[optiml_h0 + k] * (optiml_h1) + optiml_h2 * optiml_h3;
// ROWSUM-NEXT:   }
// ROWSUM-NEXT:   out[row] = s;
// ROWSUM-NEXT: }

// POLY:      __global__ void poly(const float *coef, float *y, int n, int stride) {
// POLY-NEXT:   int i = blockIdx.x * blockDim.x + threadIdx.x;
// POLY-NEXT:   float acc = 0.0f;
// POLY-NEXT:   const float optiml_h0 = coef[blockIdx.y];
// POLY-NEXT:   const int optiml_h1 = i * stride;
// POLY-NEXT:   const int optiml_h2 = n / 4;
// POLY-NEXT:   for (int d = 0; d < 8; d++) {
// POLY-NEXT:     acc = acc * 0.5f + optiml_h0 * (float)(d + 1);
// POLY-NEXT:     y[optiml_h1 + d] = acc + optiml_h2;
// POLY-NEXT:   }
// POLY-NEXT: }

// WHY: hoist rowsum/loop0: hoists 'row * n': uses only 'row' (a local not assigned in the loop), 'n' (a parameter not assigned in the loop); 'alpha * beta': {{.*}}; 'expf(scale)': uses only 'scale' (a parameter not assigned in the loop); 'a[row]': {{.*}}; loads: the loop stores through no pointer
// WHY: hoist poly/loop0: hoists {{.*}}'coef[blockIdx.y]': uses only 'coef' (a parameter not assigned in the loop), blockIdx.y; loads: 'coef' is const and the loop does not store through it
