// shared-tiling on a 3x3 box stencil written out as nine reads (32x8
// blocks, other index names, guard bounds in any order): the reads form one
// box, so the tile's load condition is one test of the guard.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"shared-tiling","target":"blur"}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.out.cu %}
// RUN: clang-optiml transforms %t.cu -- %mock_args | FileCheck --check-prefix=WHY %s
#include "cuda_mock.h"

__global__ void blur(const float *__restrict__ src, float *__restrict__ dst, int width, int height) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= 1 && col >= 1 && row < height - 1 && col < width - 1) {
    float c = src[row * width + col];
    float s = src[(row - 1) * width + col - 1] + src[(row - 1) * width + col] + src[(row - 1) * width + col + 1] +
              src[row * width + col - 1] + src[row * width + col + 1] +
              src[(row + 1) * width + col - 1] + src[(row + 1) * width + col] + src[(row + 1) * width + col + 1];
    dst[row * width + col] = 0.5f * c + 0.0625f * s;
  }
}

void run(const float *src, float *dst, int width, int height) {
  blur<<<dim3((width + 31) / 32, (height + 7) / 8), dim3(32, 8)>>>(src, dst, width, height);
}

// CHECK:      __global__ void blur(const float *__restrict__ src, float *__restrict__ dst, int width, int height) {
// CHECK-NEXT:   int row = blockIdx.y * blockDim.y + threadIdx.y;
// CHECK-NEXT:   int col = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT:   __shared__ float srcTile[10][34];
// CHECK-NEXT:   for (int slot = threadIdx.y * 32 + threadIdx.x; slot < 340; slot += 256) {
// CHECK-NEXT:     int ty = slot / 34, tx = slot % 34;
// CHECK-NEXT:     int gy = (int)(blockIdx.y * 8) - 1 + ty, gx = (int)(blockIdx.x * 32) - 1 + tx;
// CHECK-NEXT:     if (gy + 1 >= 1 && gy - 1 < (height - 1) && gx + 1 >= 1 && gx - 1 < (width - 1))
// CHECK-NEXT:       srcTile[ty][tx] = src[gy * width + gx];
// CHECK-NEXT:   }
// CHECK-NEXT:   __syncthreads();
// CHECK-NEXT:   if (row >= 1 && col >= 1 && row < height - 1 && col < width - 1) {
// CHECK-NEXT:     float c = srcTile[threadIdx.y + 1][threadIdx.x + 1];
// CHECK-NEXT:     float s = srcTile[threadIdx.y][threadIdx.x] + srcTile[threadIdx.y][threadIdx.x + 1] + srcTile[threadIdx.y][threadIdx.x + 2] +
// CHECK-NEXT:               srcTile[threadIdx.y + 1][threadIdx.x] + srcTile[threadIdx.y + 1][threadIdx.x + 2] +
// CHECK-NEXT:               srcTile[threadIdx.y + 2][threadIdx.x] + srcTile[threadIdx.y + 2][threadIdx.x + 1] + srcTile[threadIdx.y + 2][threadIdx.x + 2];
// CHECK-NEXT:     dst[row * width + col] = 0.5f * c + 0.0625f * s;
// CHECK-NEXT:   }
// CHECK-NEXT: }
// WHY: shared-tiling blur: 2D stencil: 9 reads of 'src' at rows row - 1..row + 1, columns col - 1..col + 1; its launches use 32x8 blocks: each block can stage its 10x34 tile with the halo in shared memory
