// shared-tiling refuses, with the reason, stencils it cannot stage exactly:
// a read at an offset that is not a constant, a 1D block launch where a 2D
// tile is needed, a kernel that writes into the array it reads at
// neighbouring points, and a read behind a guard that does not bound its
// own row or column; the file is not touched.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"shared-tiling","target":"shifted"}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=SHIFTED %s
// RUN: echo '{"kind":"shared-tiling","target":"flat"}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=FLAT %s
// RUN: echo '{"kind":"shared-tiling","target":"inplace"}' > %t.3.json
// RUN: not clang-optiml apply %t.cu --edit %t.3.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=INPLACE %s
// RUN: echo '{"kind":"shared-tiling","target":"odd"}' > %t.4.json
// RUN: not clang-optiml apply %t.cu --edit %t.4.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=ODD %s
// RUN: cmp %s %t.cu

#include "cuda_mock.h"

__global__ void shifted(int n, int k, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < n - 1 && y > 0 && y < n - 1)
    out[y * n + x] = in[y * n + x + k] + in[(y - 1) * n + x];
}

__global__ void flat(int n, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < n - 1 && y > 0 && y < n - 1)
    out[y * n + x] = in[y * n + x - 1] + in[y * n + x + 1];
}

__global__ void inplace(int n, float *a) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < n - 1 && y > 0 && y < n - 1)
    a[y * n + x] = 0.5f * (a[y * n + x - 1] + a[y * n + x + 1]);
}

__global__ void odd(int n, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < n - 1 && y > 0 && y < n - 1) {
    float s = in[y * n + x];
    if (s > 0.0f)
      s += in[y * n + x + 1];
    out[y * n + x] = s;
  }
}

void run(int n, int k, const float *in, float *out) {
  shifted<<<dim3(n / 16, n / 16), dim3(16, 16)>>>(n, k, in, out);
  flat<<<dim3(n / 256, n), 256>>>(n, in, out);
  inplace<<<dim3(n / 16, n / 16), dim3(16, 16)>>>(n, out);
  odd<<<dim3(n / 16, n / 16), dim3(16, 16)>>>(n, in, out);
}

// SHIFTED: clang-optiml: error: shared-tiling shifted rejected: [not-applicable] kernel 'shifted': not matmul-like ({{.*}}); not a block-sized product ({{.*}}); not a 2D stencil (the read 'in[y * n + x + k]' is at an offset 'k' that is not a constant (only constant offsets, or loop variables with constant ranges, can be staged))
// FLAT: clang-optiml: error: shared-tiling flat rejected: [not-applicable] kernel 'flat': the block of flat/launch0 ('256') is 256x1x1: a 2D tile needs a 2D block (BX x BY x 1, BY > 1; change it with launch-config first)
// INPLACE: clang-optiml: error: shared-tiling inplace rejected: [not-applicable] kernel 'inplace': not matmul-like ({{.*}}); not a block-sized product ({{.*}}); not a 2D stencil (the kernel writes into the array 'a' it reads at neighbouring points (at 37:5): a staged copy would be stale)
// ODD: clang-optiml: error: shared-tiling odd rejected: [not-applicable] kernel 'odd': not matmul-like ({{.*}}); not a block-sized product ({{.*}}); not a 2D stencil (the read 'in[y * n + x + 1]' is guarded by 's > 0.0f', which does not bound its own row or column)
