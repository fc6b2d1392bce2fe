// shared-tiling on a 5-point Jacobi stencil with an interior-only guard:
// before the guard, each 16x16 block stages the 18x18 tile of 'in' its
// threads read. A slot is loaded exactly when a thread of the block that
// passes the guard reads it (one condition per read; the tile's corners are
// never loaded), then __syncthreads(); the reads become tile reads and the
// guard and the edge handling stay as written.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"shared-tiling","target":"jacobi"}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.out.cu %}
// RUN: clang-optiml transforms %t.cu -- %mock_args | FileCheck --check-prefix=WHY %s
#include "cuda_mock.h"

__global__ void jacobi(int n, const float *in, float *out) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i > 0 && i < n - 1 && j > 0 && j < n - 1)
    out[i * n + j] = 0.25f * (in[(i - 1) * n + j] + in[(i + 1) * n + j] + in[i * n + j - 1] + in[i * n + j + 1]);
}

void run(int n, const float *a, float *b) {
  dim3 threads(16, 16), blocks((n + 15) / 16, (n + 15) / 16);
  jacobi<<<blocks, threads>>>(n, a, b);
}

// CHECK:      __global__ void jacobi(int n, const float *in, float *out) {
// CHECK-NEXT:   int j = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT:   int i = blockIdx.y * blockDim.y + threadIdx.y;
// CHECK-NEXT:   __shared__ float inTile[18][18];
// CHECK-NEXT:   for (int slot = threadIdx.y * 16 + threadIdx.x; slot < 324; slot += 256) {
// CHECK-NEXT:     int ty = slot / 18, tx = slot % 18;
// CHECK-NEXT:     int gy = (int)(blockIdx.y * 16) - 1 + ty, gx = (int)(blockIdx.x * 16) - 1 + tx;
// CHECK-NEXT:     if ((gy + 1 > 0 && gy + 1 < (n - 1) && gx > 0 && gx < (n - 1) && ty < 16 && tx >= 1 && tx < 17) ||
// CHECK-NEXT:         (gy - 1 > 0 && gy - 1 < (n - 1) && gx > 0 && gx < (n - 1) && ty >= 2 && tx >= 1 && tx < 17) ||
// CHECK-NEXT:         (gy > 0 && gy < (n - 1) && gx + 1 > 0 && gx + 1 < (n - 1) && ty >= 1 && ty < 17 && tx < 16) ||
// CHECK-NEXT:         (gy > 0 && gy < (n - 1) && gx - 1 > 0 && gx - 1 < (n - 1) && ty >= 1 && ty < 17 && tx >= 2))
// CHECK-NEXT:       inTile[ty][tx] = in[gy * n + gx];
// CHECK-NEXT:   }
// CHECK-NEXT:   __syncthreads();
// CHECK-NEXT:   if (i > 0 && i < n - 1 && j > 0 && j < n - 1)
// CHECK-NEXT:     out[i * n + j] = 0.25f * (inTile[threadIdx.y][threadIdx.x + 1] + inTile[threadIdx.y + 2][threadIdx.x + 1] + inTile[threadIdx.y + 1][threadIdx.x] + inTile[threadIdx.y + 1][threadIdx.x + 2]);
// CHECK-NEXT: }
// WHY: shared-tiling jacobi: 2D stencil: 4 reads of 'in' at rows i - 1..i + 1, columns j - 1..j + 1; its launches use 16x16 blocks: each block can stage its 18x18 tile with the halo in shared memory
