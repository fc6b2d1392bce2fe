// vectorize on __half arrays: __half2 loads and stores (4-byte alignment),
// a scalar tail for odd n, the scalar loop for unaligned pointers. Elements
// of class type are assigned through operator=, which still counts as a
// write (the store after the lane copies).
// RUN: rm -rf %t && split-file %s %t
// RUN: echo '{"kind":"vectorize","target":"haxpy","params":{"width":2}}' > %t/edit.json
// RUN: clang-optiml apply %t/input.cu --edit %t/edit.json -o %t/out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t/out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/out.cu %}

// CHECK:      __global__ void haxpy(int n, __half a, const __half *x, half *y) {
// CHECK-NEXT:   int tid = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT:   if (reinterpret_cast<unsigned long long>(x) % 4 == 0 &&
// CHECK-NEXT:       reinterpret_cast<unsigned long long>(y) % 4 == 0) {
// CHECK-NEXT:     for (int v = tid; v < n / 2; v += blockDim.x * gridDim.x) {
// CHECK-NEXT:       __half2 x_v = reinterpret_cast<const __half2 *>(x)[v];
// CHECK-NEXT:       __half2 y_v = reinterpret_cast<__half2 *>(y)[v];
// CHECK-NEXT:       y_v.x = a * x_v.x + y_v.x;
// CHECK-NEXT:       y_v.y = a * x_v.y + y_v.y;
// CHECK-NEXT:       reinterpret_cast<__half2 *>(y)[v] = y_v;
// CHECK-NEXT:     }
// CHECK-NEXT:     for (int i = n / 2 * 2 + tid; i < n; i += blockDim.x * gridDim.x) {
// CHECK-NEXT:       y[i] = a * x[i] + y[i];
// CHECK-NEXT:     }
// CHECK-NEXT:   } else {
// CHECK-NEXT:     for (int i = tid; i < n; i += blockDim.x * gridDim.x) {
// CHECK-NEXT:       y[i] = a * x[i] + y[i];
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: void run(int n, const __half *x, __half *y) {
// CHECK-NEXT:   haxpy<<<(n + 511) / 512, 256>>>(n, __float2half(2.0f), x, y);
// CHECK-NEXT: }

//--- input.cu
#include "cuda_mock.h"
#include "cuda_fp16_mock.h"

__global__ void haxpy(int n, __half a, const __half *x, half *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

void run(int n, const __half *x, __half *y) {
  haxpy<<<(n + 255) / 256, 256>>>(n, __float2half(2.0f), x, y);
}
