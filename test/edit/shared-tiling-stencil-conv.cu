// shared-tiling on a convolution written with loops over the filter (a
// 3x3 filter through macros, zero padding by a guard on each read) and an
// early-return bounds guard: the staging goes before the early return so
// every thread reaches the barrier; a slot is loaded when the read's own
// guard admits it, as in the original.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"shared-tiling","target":"conv"}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.out.cu %}
// RUN: clang-optiml transforms %t.cu -- %mock_args | FileCheck --check-prefix=WHY %s
#include "cuda_mock.h"

#define K 3
#define RAD (K / 2)

__global__ void conv(int h, int w, const float *in, const float *filt, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  float sum = 0.f;
  for (int ky = 0; ky < K; ++ky)
    for (int kx = 0; kx < K; ++kx) {
      int iy = y + ky - RAD, ix = x + kx - RAD;
      if (iy >= 0 && iy < h && ix >= 0 && ix < w) sum += in[(size_t)iy * w + ix] * filt[ky * K + kx];
    }
  out[(size_t)y * w + x] = sum;
}

void run(int h, int w, const float *in, const float *filt, float *out) {
  dim3 threads(16, 16), blocks((w + 15) / 16, (h + 15) / 16);
  conv<<<blocks, threads>>>(h, w, in, filt, out);
}

// CHECK:      __global__ void conv(int h, int w, const float *in, const float *filt, float *out) {
// CHECK-NEXT:   int x = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT:   int y = blockIdx.y * blockDim.y + threadIdx.y;
// CHECK-NEXT:   __shared__ float inTile[18][18];
// CHECK-NEXT:   for (int slot = threadIdx.y * 16 + threadIdx.x; slot < 324; slot += 256) {
// CHECK-NEXT:     int ty = slot / 18, tx = slot % 18;
// CHECK-NEXT:     int gy = (int)(blockIdx.y * 16) - 1 + ty, gx = (int)(blockIdx.x * 16) - 1 + tx;
// CHECK-NEXT:     if (gy - 1 < h && gx - 1 < w && gy >= 0 && gy < h && gx >= 0 && gx < w)
// CHECK-NEXT:       inTile[ty][tx] = in[(size_t)gy * w + gx];
// CHECK-NEXT:   }
// CHECK-NEXT:   __syncthreads();
// CHECK-NEXT:   if (x >= w || y >= h)
// CHECK-NEXT:     return;
// CHECK-NEXT:   float sum = 0.f;
// CHECK-NEXT:   for (int ky = 0; ky < K; ++ky)
// CHECK-NEXT:     for (int kx = 0; kx < K; ++kx) {
// CHECK-NEXT:       int iy = y + ky - RAD, ix = x + kx - RAD;
// CHECK-NEXT:       if (iy >= 0 && iy < h && ix >= 0 && ix < w) sum += inTile[threadIdx.y + ky][threadIdx.x + kx] * filt[ky * K + kx];
// CHECK-NEXT:     }
// CHECK-NEXT:   out[(size_t)y * w + x] = sum;
// CHECK-NEXT: }
// WHY: shared-tiling conv: 2D stencil: 1 read of 'in' at rows y - 1..y + 1, columns x - 1..x + 1; its launches use 16x16 blocks: each block can stage its 18x18 tile with the halo in shared memory
