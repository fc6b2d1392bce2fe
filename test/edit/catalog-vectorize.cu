// vectorize: float4 loads/stores when x and y are 16-byte aligned, a scalar
// tail for n % 4, the scalar loop otherwise; the launch grid is divided by 4.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"vectorize","target":"saxpy","params":{"width":4}}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.out.cu %}

#include "cuda_mock.h"

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

void run(int n, const float *x, float *y) {
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
}

// CHECK:      __global__ void saxpy(int n, float a, const float *x, float *y) {
// CHECK-NEXT:   int tid = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT:   if (reinterpret_cast<unsigned long long>(x) % 16 == 0 &&
// CHECK-NEXT:       reinterpret_cast<unsigned long long>(y) % 16 == 0) {
// CHECK-NEXT:     for (int v = tid; v < n / 4; v += blockDim.x * gridDim.x) {
// CHECK-NEXT:       float4 x_v = reinterpret_cast<const float4 *>(x)[v];
// CHECK-NEXT:       float4 y_v = reinterpret_cast<float4 *>(y)[v];
// CHECK-NEXT:       y_v.x = a * x_v.x + y_v.x;
// CHECK-NEXT:       y_v.y = a * x_v.y + y_v.y;
// CHECK-NEXT:       y_v.z = a * x_v.z + y_v.z;
// CHECK-NEXT:       y_v.w = a * x_v.w + y_v.w;
// CHECK-NEXT:       reinterpret_cast<float4 *>(y)[v] = y_v;
// CHECK-NEXT:     }
// CHECK-NEXT:     for (int i = n / 4 * 4 + tid; i < n; i += blockDim.x * gridDim.x) {
// CHECK-NEXT:       y[i] = a * x[i] + y[i];
// CHECK-NEXT:     }
// CHECK-NEXT:   } else {
// CHECK-NEXT:     for (int i = tid; i < n; i += blockDim.x * gridDim.x) {
// CHECK-NEXT:       y[i] = a * x[i] + y[i];
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: void run(int n, const float *x, float *y) {
// CHECK-NEXT:   saxpy<<<(n + 1023) / 1024, 256>>>(n, 2.0f, x, y);
// CHECK-NEXT: }
