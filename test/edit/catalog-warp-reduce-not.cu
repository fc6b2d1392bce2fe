// warp-reduce refuses early returns (lanes would miss the shuffles) and
// blocks that are not whole warps.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"warp-reduce","target":"early"}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=EARLY %s
// RUN: echo '{"kind":"warp-reduce","target":"odd"}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=ODD %s
// RUN: cmp %s %t.cu

#include "cuda_mock.h"

__global__ void early(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(out, x[i]);
}

__global__ void odd(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, x[i]);
}

void run(const float *x, float *out, int n) {
  early<<<(n + 255) / 256, 256>>>(x, out, n);
  odd<<<(n + 99) / 100, 100>>>(x, out, n);
}

// EARLY: clang-optiml: error: warp-reduce early rejected: [not-applicable] kernel 'early': returns early: every lane of a warp must reach the shuffles
// ODD: clang-optiml: error: warp-reduce odd rejected: [not-applicable] kernel 'odd': launch odd/launch0 uses blocks of 100 threads, not a multiple of 32
