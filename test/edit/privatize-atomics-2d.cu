// privatize-atomics merges its private copies with threadIdx.x alone and
// copies=warp writes the block size as one number, so it is offered only
// for one-dimensional blocks. A Jacobi residual summed with atomicAdd under
// dim3 block(16, 16) came out 16x too large on the GPU when it was offered.
// RUN: cp %s %t.cu
// RUN: clang-optiml transforms %t.cu -- %mock_args | FileCheck --check-prefix=OFFERED %s
// RUN: echo '{"kind":"privatize-atomics","target":"residual2d","params":{}}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=KERNEL2D %s
// RUN: echo '{"kind":"privatize-atomics","target":"flat","params":{"copies":"warp"}}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=BLOCK2D %s
// RUN: echo '{"kind":"privatize-atomics","target":"widened","params":{}}' > %t.3.json
// RUN: not clang-optiml apply %t.cu --edit %t.3.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=CHANGED %s
// RUN: cmp %s %t.cu
// RUN: echo '{"kind":"privatize-atomics","target":"residual1d","params":{}}' > %t.4.json
// RUN: clang-optiml apply %t.cu --edit %t.4.json -o %t.out.cu -- %mock_args 2>&1 | FileCheck --check-prefix=APPLIED %s

#include "cuda_mock.h"

__global__ void residual2d(const float *a, const float *b, float *sum, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < n && y < n)
    atomicAdd(&sum[0], fabsf(a[y * n + x] - b[y * n + x]));
}

__global__ void flat(const float *a, float *sum, int n) {
  int i = (blockIdx.x * 256) + threadIdx.x;
  if (i < n)
    atomicAdd(&sum[0], a[i]);
}

__global__ void widened(const float *a, float *sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&sum[0], a[i]);
}

__global__ void residual1d(const float *a, const float *b, float *sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&sum[0], fabsf(a[i] - b[i]));
}

int main() {
  const int n = 1024;
  float *a, *b, *sum;
  cudaMalloc(&a, n * n * sizeof(float));
  cudaMalloc(&b, n * n * sizeof(float));
  cudaMalloc(&sum, sizeof(float));
  dim3 block(16, 16), grid(n / 16, n / 16);
  residual2d<<<grid, block>>>(a, b, sum, n);
  flat<<<n * n / 256, block>>>(a, sum, n * n);
  dim3 wide(256);
  wide.y = 2;
  widened<<<n * n / 512, wide>>>(a, sum, n * n);
  dim3 line(256);
  residual1d<<<(n * n + 255) / 256, line>>>(a, b, sum, n * n);
  cudaDeviceSynchronize();
  return 0;
}

// OFFERED-NOT: privatize-atomics residual2d
// OFFERED-NOT: privatize-atomics flat
// OFFERED-NOT: privatize-atomics widened
// OFFERED: privatize-atomics residual1d: 1 atomicAdd into 'sum'
// KERNEL2D: clang-optiml: error: privatize-atomics residual2d rejected: {{.*}}[launch] the kernel reads threadIdx or blockDim in y or z (written for blocks of more than one dimension); the private copies are indexed and merged in x alone
// KERNEL2D-NEXT: clang-optiml: nothing was written
// BLOCK2D: clang-optiml: error: privatize-atomics flat rejected: {{.*}}[launch] flat/launch0 launches blocks of 'block', not provably one-dimensional; the private copies are indexed and merged in x alone
// CHANGED: clang-optiml: error: privatize-atomics widened rejected: {{.*}}[launch] widened/launch0 launches blocks of 'wide', not provably one-dimensional; the private copies are indexed and merged in x alone
// APPLIED: applied: privatize-atomics residual1d
