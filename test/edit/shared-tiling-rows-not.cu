// shared-tiling rows on 2D stencils: what is refused, each with the reason:
// a grid whose y extent does not provably cover exactly the rows below the
// guard's bound (rows it would add could pass the guard); the row index
// read before the guard; a window too large for registers (its loop over
// rows inside the loop over columns, so it cannot be streamed row by row);
// the row index declared together with the column index; and a sum
// declared before the guard, which would carry from one row to the next.
// RUN: echo '{"kind":"shared-tiling","target":"floor_grid","params":{"rows":4}}' > %t.1.json
// RUN: not clang-optiml apply %s --edit %t.1.json -- %mock_args 2>&1 | FileCheck --check-prefix=GRID %s
// RUN: echo '{"kind":"shared-tiling","target":"early_use","params":{"rows":4}}' > %t.2.json
// RUN: not clang-optiml apply %s --edit %t.2.json -- %mock_args 2>&1 | FileCheck --check-prefix=USE %s
// RUN: echo '{"kind":"shared-tiling","target":"wide","params":{"rows":8}}' > %t.3.json
// RUN: not clang-optiml apply %s --edit %t.3.json -- %mock_args 2>&1 | FileCheck --check-prefix=WIDE %s
// RUN: echo '{"kind":"shared-tiling","target":"shared_decl","params":{"rows":2}}' > %t.4.json
// RUN: not clang-optiml apply %s --edit %t.4.json -- %mock_args 2>&1 | FileCheck --check-prefix=DECL %s
// RUN: echo '{"kind":"shared-tiling","target":"carried","params":{"rows":4}}' > %t.5.json
// RUN: not clang-optiml apply %s --edit %t.5.json -- %mock_args 2>&1 | FileCheck --check-prefix=CARRY %s
// RUN: clang-optiml transforms %s -- %mock_args | FileCheck --check-prefix=SUGGEST %s

#include "cuda_mock.h"

// GRID: the grid of floor_grid/launch0 ('grid') is not a dim3 whose y extent is ceil(n / 16), so the rows it covers cannot be shown to be those below the guard's bound
// SUGGEST: shared-tiling floor_grid: 2D stencil
// SUGGEST-NOT: "rows":4
// SUGGEST: try {"kind":"shared-tiling","target":"floor_grid","params":{}}
__global__ void floor_grid(int n, const float *a, float *b) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < n - 1 && y > 0 && y < n - 1)
    b[y * n + x] = a[(y - 1) * n + x] + a[(y + 1) * n + x];
}

// USE: 'y' is used before the guard at {{[0-9]+}}:3
__global__ void early_use(int n, const float *a, float *b) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int at = y * n + x;
  if (x > 0 && x < n - 1 && y > 0 && y < n - 1)
    b[at] = a[(y - 1) * n + x] + a[(y + 1) * n + x];
}

// WIDE: the window of 8 rows would hold 330 values per thread (at most 128 fit in registers)
__global__ void wide(int h, int w, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float s = 0.f;
    for (int kx = 0; kx < 15; ++kx)
      for (int ky = 0; ky < 15; ++ky) {
        int iy = y + ky - 7, ix = x + kx - 7;
        if (iy >= 0 && iy < h && ix >= 0 && ix < w)
          s += in[iy * w + ix];
      }
    out[y * w + x] = s;
  }
}

// DECL: the row index 'y' shares its declaration; rows needs it alone
__global__ void shared_decl(int n, const float *a, float *b) {
  int x = blockIdx.x * blockDim.x + threadIdx.x,
      y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < n - 1 && y > 0 && y < n - 1)
    b[y * n + x] = a[(y - 1) * n + x] + a[(y + 1) * n + x];
}

// CARRY: 'sum' is declared outside the guarded code and written at {{[0-9]+}}:{{[0-9]+}}: with several rows per thread it would carry from one row to the next
// SUGGEST: shared-tiling carried: 2D stencil
// SUGGEST-NOT: "rows":4
// SUGGEST: try {"kind":"shared-tiling","target":"carried","params":{}}
__global__ void carried(int n, const float *a, float *b) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  float sum = 0.f;
  if (x > 0 && x < n - 1 && y > 0 && y < n - 1) {
    sum += a[(y - 1) * n + x] + a[(y + 1) * n + x];
    b[y * n + x] = sum;
  }
}

int main() {
  int n = 256;
  float *a = 0, *b = 0;
  dim3 grid(n / 16, n / 16), ok((n + 15) / 16, (n + 15) / 16);
  floor_grid<<<grid, dim3(16, 16)>>>(n, a, b);
  early_use<<<ok, dim3(16, 16)>>>(n, a, b);
  wide<<<ok, dim3(16, 16)>>>(n, n, a, b);
  shared_decl<<<ok, dim3(16, 16)>>>(n, a, b);
  carried<<<ok, dim3(16, 16)>>>(n, a, b);
  return 0;
}

