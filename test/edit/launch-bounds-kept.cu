// Transforms that set a launch's block size keep it within the kernel's
// __launch_bounds__ (a larger block makes every launch fail): their
// defaults and suggestions shrink to the bound, and a larger size given
// explicitly is refused with the reason. warp-per-row (every form),
// transpose-through-shared (tile x block_rows threads) and
// privatize-atomics (copies=warp sets the block) on kernels bounded at
// 128 threads; each suggestion applied compiles.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu
// RUN: clang-optiml transforms %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: echo '{"kind":"warp-per-row","target":"csr","params":{"block_size":256}}' > %t/w.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/w.json 2>&1 | FileCheck --check-prefix=WARP %s
// RUN: echo '{"kind":"transpose-through-shared","target":"transpose","params":{"tile":32,"block_rows":8}}' > %t/t.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/t.json 2>&1 | FileCheck --check-prefix=TILE %s
// RUN: echo '{"kind":"privatize-atomics","target":"hist","params":{"copies":"warp","block_size":256}}' > %t/p.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/p.json 2>&1 | FileCheck --check-prefix=PRIV %s
// RUN: echo '[{"kind":"warp-per-row","target":"csr","params":{"block_size":128,"lanes":4,"per":"stream"}},{"kind":"transpose-through-shared","target":"transpose","params":{"block_rows":4,"padding":1,"tile":32}},{"kind":"privatize-atomics","target":"hist","params":{"copies":"warp"}}]' > %t/all.json
// RUN: clang-optiml apply %t/k.cu --edit %t/all.json -o %t/all.cu
// RUN: grep -v '^//' %t/all.cu | FileCheck --check-prefix=OUT %s
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -Werror all-warnings -o %t/all.o %t/all.cu %}
// RUN: cmp %s %t/k.cu

// WHY: try {"kind":"transpose-through-shared","target":"transpose","params":{"block_rows":4,"padding":1,"tile":32}}
// WHY-NEXT: try {"kind":"transpose-through-shared","target":"transpose","params":{"block_rows":2,"padding":1,"tile":64}}
// WHY: try {"kind":"privatize-atomics","target":"hist","params":{"copies":"warp"}}
// WHY: try {"kind":"warp-per-row","target":"csr","params":{"block_size":128,"lanes":4,"per":"stream"}}
// WHY-NEXT: try {"kind":"warp-per-row","target":"csr","params":{"block_size":128,"lanes":8,"per":"warp"}}
// WHY-NEXT: try {"kind":"warp-per-row","target":"csr","params":{"block_size":128,"lanes":4,"per":"warp"}}
// WHY-NEXT: try {"kind":"warp-per-row","target":"csr","params":{"block_size":128,"lanes":32,"per":"warp"}}
// WHY-NEXT: try {"kind":"warp-per-row","target":"csr","params":{"block_size":128,"per":"block"}}
// WHY-NOT: "block_size":256

// WARP: params.block_size 256 exceeds the kernel's __launch_bounds__(128): its launches would fail
// TILE: params: tile * block_rows = 256 threads exceed the kernel's __launch_bounds__(128): its launches would fail
// PRIV: params.block_size 256 exceeds the kernel's __launch_bounds__(128): its launches would fail

// OUT: transpose<<<{{.*}}, dim3(32, 4)>>>(b, a, rows, cols);
// OUT: hist<<<256, 128>>>(in, n, bins);
// OUT: csr<<<(n + 31) / 32, 128>>>(n, p, a, b);

#include <cuda_runtime.h>

__global__ void __launch_bounds__(128)
transpose(float *out, const float *in, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[r * cols + c];
}

__global__ void __launch_bounds__(128)
hist(const int *in, int n, int *bins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    atomicAdd(&bins[in[i] & 63], 1);
}

__global__ void __launch_bounds__(128)
csr(int n, const int *p, const float *v, float *y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    float sum = 0.f;
    for (int k = p[r]; k < p[r + 1]; ++k)
      sum += v[k];
    y[r] = sum;
  }
}

int main() {
  int rows = 512, cols = 512, n = 1 << 20;
  float *a, *b;
  int *in, *bins, *p;
  cudaMalloc(&a, sizeof(float) * rows * cols);
  cudaMalloc(&b, sizeof(float) * rows * cols);
  cudaMalloc(&in, sizeof(int) * n);
  cudaMalloc(&bins, sizeof(int) * 64);
  cudaMalloc(&p, sizeof(int) * (n + 1));
  dim3 block(16, 8), grid((cols + 15) / 16, (rows + 7) / 8);
  transpose<<<grid, block>>>(b, a, rows, cols);
  hist<<<256, 128>>>(in, n, bins);
  csr<<<(n + 127) / 128, 128>>>(n, p, a, b);
  cudaDeviceSynchronize();
  return 0;
}
