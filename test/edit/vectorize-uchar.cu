// vectorize on bytes in a template kernel launched twice: uchar4 loads and
// stores (4-byte alignment), float4 for the float output (16-byte
// alignment), both launch grids divided by 4.
// RUN: rm -rf %t && split-file %s %t
// RUN: echo '{"kind":"vectorize","target":"to_unit","params":{"width":4}}' > %t/edit.json
// RUN: clang-optiml apply %t/input.cu --edit %t/edit.json -o %t/out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t/out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/out.cu %}

// CHECK:      template <int Bias>
// CHECK-NEXT: __global__ void to_unit(const unsigned char *in, unsigned char *clamped,
// CHECK-NEXT:                         float *unit, int n) {
// CHECK-NEXT:   int tid = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT:   if (reinterpret_cast<unsigned long long>(in) % 4 == 0 &&
// CHECK-NEXT:       reinterpret_cast<unsigned long long>(clamped) % 4 == 0 &&
// CHECK-NEXT:       reinterpret_cast<unsigned long long>(unit) % 16 == 0) {
// CHECK-NEXT:     for (int v = tid; v < n / 4; v += blockDim.x * gridDim.x) {
// CHECK-NEXT:       uchar4 in_v = reinterpret_cast<const uchar4 *>(in)[v];
// CHECK-NEXT:       uchar4 clamped_v;
// CHECK-NEXT:       float4 unit_v;
// CHECK-NEXT:       {
// CHECK-NEXT:         int c = in_v.x + Bias;
// CHECK-NEXT:         clamped_v.x = c > 255 ? 255 : c;
// CHECK-NEXT:         unit_v.x = in_v.x * (1.0f / 255.0f);
// CHECK-NEXT:       }
// CHECK-NEXT:       {
// CHECK-NEXT:         int c = in_v.y + Bias;
// CHECK-NEXT:         clamped_v.y = c > 255 ? 255 : c;
// CHECK-NEXT:         unit_v.y = in_v.y * (1.0f / 255.0f);
// CHECK-NEXT:       }
// CHECK-NEXT:       {
// CHECK-NEXT:         int c = in_v.z + Bias;
// CHECK-NEXT:         clamped_v.z = c > 255 ? 255 : c;
// CHECK-NEXT:         unit_v.z = in_v.z * (1.0f / 255.0f);
// CHECK-NEXT:       }
// CHECK-NEXT:       {
// CHECK-NEXT:         int c = in_v.w + Bias;
// CHECK-NEXT:         clamped_v.w = c > 255 ? 255 : c;
// CHECK-NEXT:         unit_v.w = in_v.w * (1.0f / 255.0f);
// CHECK-NEXT:       }
// CHECK-NEXT:       reinterpret_cast<uchar4 *>(clamped)[v] = clamped_v;
// CHECK-NEXT:       reinterpret_cast<float4 *>(unit)[v] = unit_v;
// CHECK-NEXT:     }
// CHECK-NEXT:     for (int i = n / 4 * 4 + tid; i < n; i += blockDim.x * gridDim.x) {
// CHECK-NEXT:       int c = in[i] + Bias;
// CHECK-NEXT:       clamped[i] = c > 255 ? 255 : c;
// CHECK-NEXT:       unit[i] = in[i] * (1.0f / 255.0f);
// CHECK-NEXT:     }
// CHECK-NEXT:   } else {
// CHECK-NEXT:     for (int i = tid; i < n; i += blockDim.x * gridDim.x) {
// CHECK-NEXT:       int c = in[i] + Bias;
// CHECK-NEXT:       clamped[i] = c > 255 ? 255 : c;
// CHECK-NEXT:       unit[i] = in[i] * (1.0f / 255.0f);
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: void run(const unsigned char *in, unsigned char *c, float *u, int n) {
// CHECK-NEXT:   to_unit<0><<<(n + 1023) / 1024, 256>>>(in, c, u, n);
// CHECK-NEXT:   to_unit<16><<<(n + 511) / 512, 128>>>(in, c, u, n);
// CHECK-NEXT: }

//--- input.cu
#include "cuda_mock.h"

template <int Bias>
__global__ void to_unit(const unsigned char *in, unsigned char *clamped,
                        float *unit, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int c = in[i] + Bias;
  clamped[i] = c > 255 ? 255 : c;
  unit[i] = in[i] * (1.0f / 255.0f);
}

void run(const unsigned char *in, unsigned char *c, float *u, int n) {
  to_unit<0><<<(n + 255) / 256, 256>>>(in, c, u, n);
  to_unit<16><<<(n + 127) / 128, 128>>>(in, c, u, n);
}
