// warp-reduce on trees written other ways, two kernels in one file (each
// edit touches only its kernel): max with fmaxf, a constant start and
// `s /= 2`, threadIdx.x used directly, and a per-block store instead of an
// atomic; a float sum from blockDim.x >> 1 with `stride = stride >> 1` and
// a dim3 block; a dynamic (extern) shared array of doubles.
// RUN: cp %s %t.cu
// RUN: clang-optiml transforms %t.cu --json -- %mock_args | FileCheck --check-prefix=LIST %s
// RUN: echo '{"kind":"warp-reduce","target":"block_max"}' > %t.1.json
// RUN: clang-optiml apply %t.cu --edit %t.1.json -o %t.1.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=MAX %s < %t.1.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.1.cu %}
// RUN: echo '{"kind":"warp-reduce","target":"row_sums"}' > %t.2.json
// RUN: clang-optiml apply %t.cu --edit %t.2.json -o %t.2.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=SUM %s < %t.2.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.2.cu %}
// RUN: echo '{"kind":"warp-reduce","target":"dyn_sum"}' > %t.3.json
// RUN: clang-optiml apply %t.cu --edit %t.3.json -o %t.3.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=DYN %s < %t.3.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.3.cu %}

#include "cuda_mock.h"

__global__ void block_max(const float *x, float *out, int n) {
  __shared__ float sdata[256];
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[threadIdx.x] = i < n ? x[i] : -1e30f;
  __syncthreads();
  for (unsigned s = 128; s > 0; s /= 2) {
    if (threadIdx.x < s) {
      sdata[threadIdx.x] = fmaxf(sdata[threadIdx.x], sdata[threadIdx.x + s]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = sdata[0];
}

__global__ void row_sums(const float *a, float *sums, int cols) {
  __shared__ float cache[128];
  const int t = threadIdx.x;
  float acc = 0.0f;
  for (int c = t; c < cols; c += blockDim.x)
    acc += a[blockIdx.x * cols + c];
  cache[t] = acc;
  __syncthreads();
  int stride;
  for (stride = blockDim.x >> 1; stride >= 1; stride = stride >> 1) {
    if (t < stride) cache[t] = cache[t] + cache[t + stride];
    __syncthreads();
  }
  if (0 == t) {
    sums[blockIdx.x] = cache[0] / cols;
  }
}

__global__ void dyn_sum(const double *x, double *out, int n) {
  extern __shared__ double sh[];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  sh[tid] = i < n ? x[i] : 0.0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      sh[tid] += sh[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    atomicAdd(out, sh[0]);
}

void run(const float *x, float *out, const float *a, float *sums, int n,
         int rows, int cols, const double *d, double *dout) {
  block_max<<<(n + 255) / 256, 256>>>(x, out, n);
  dim3 block(128);
  row_sums<<<rows, block>>>(a, sums, cols);
  dyn_sum<<<(n + 127) / 128, 128, 128 * sizeof(double)>>>(d, dout, n);
}

// LIST-LABEL: "kernel": "block_max",
// LIST:       "kind": "warp-reduce",
// LIST-NEXT:  "target": "block_max",
// LIST-NEXT: "reason": "shared-memory tree reduction (max) of float in 'sdata': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement",
// LIST-NEXT: "changes_precision": false,
// LIST-LABEL: "kernel": "row_sums",
// LIST:       "kind": "warp-reduce",
// LIST-NEXT:  "target": "row_sums",
// LIST-NEXT: "reason": "shared-memory tree reduction (+) of float in 'cache': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement",
// LIST-NEXT: "changes_precision": true,
// LIST-LABEL: "kernel": "dyn_sum",
// LIST:       "kind": "warp-reduce",
// LIST-NEXT:  "target": "dyn_sum",
// LIST-NEXT: "reason": "shared-memory tree reduction (+) of double in 'sh': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement",
// LIST-NEXT: "changes_precision": true,

// MAX:      __global__ void block_max(const float *x, float *out, int n) {
// MAX-NEXT:   __shared__ float sdata[256 / 32];
// MAX-NEXT:   unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
// MAX-NEXT:   float v = i < n ? x[i] : -1e30f;
// MAX-NEXT:   for (int off = 16; off > 0; off /= 2)
// MAX-NEXT:     v = fmaxf(v, __shfl_down_sync(0xffffffff, v, off));
// MAX-NEXT:   if (threadIdx.x % 32 == 0)
// MAX-NEXT:     sdata[threadIdx.x / 32] = v;
// MAX-NEXT:   __syncthreads();
// MAX-NEXT:   if (threadIdx.x < 32) {
// MAX-NEXT:     v = threadIdx.x < blockDim.x / 32 ? sdata[threadIdx.x] : sdata[0];
// MAX-NEXT:     for (int off = 16; off > 0; off /= 2)
// MAX-NEXT:       v = fmaxf(v, __shfl_down_sync(0xffffffff, v, off));
// MAX-NEXT:   }
// MAX-NEXT:   if (threadIdx.x == 0)
// MAX-NEXT:     out[blockIdx.x] = v;
// MAX-NEXT: }
// MAX-EMPTY:
// MAX-NEXT: __global__ void row_sums(const float *a, float *sums, int cols) {
// MAX-NEXT:   __shared__ float cache[128];

// SUM:      __global__ void row_sums(const float *a, float *sums, int cols) {
// SUM-NEXT:   __shared__ float cache[128 / 32];
// SUM-NEXT:   const int t = threadIdx.x;
// SUM-NEXT:   float acc = 0.0f;
// SUM-NEXT:   for (int c = t; c < cols; c += blockDim.x)
// SUM-NEXT:     acc += a[blockIdx.x * cols + c];
// SUM-NEXT:   float v = acc;
// SUM-NEXT:   int stride;
// SUM-NEXT:   for (int off = 16; off > 0; off /= 2)
// SUM-NEXT:     v += __shfl_down_sync(0xffffffff, v, off);
// SUM-NEXT:   if (t % 32 == 0)
// SUM-NEXT:     cache[t / 32] = v;
// SUM-NEXT:   __syncthreads();
// SUM-NEXT:   if (t < 32) {
// SUM-NEXT:     v = t < blockDim.x / 32 ? cache[t] : 0;
// SUM-NEXT:     for (int off = 16; off > 0; off /= 2)
// SUM-NEXT:       v += __shfl_down_sync(0xffffffff, v, off);
// SUM-NEXT:   }
// SUM-NEXT:   if (0 == t) {
// SUM-NEXT:     sums[blockIdx.x] = v / cols;
// SUM-NEXT:   }
// SUM-NEXT: }

// DYN:      __global__ void dyn_sum(const double *x, double *out, int n) {
// DYN-NEXT:   __shared__ double sh[4];
// DYN-NEXT:   int tid = threadIdx.x;
// DYN-NEXT:   int i = blockIdx.x * blockDim.x + tid;
// DYN-NEXT:   double v = i < n ? x[i] : 0.0;
// DYN-NEXT:   for (int off = 16; off > 0; off /= 2)
// DYN-NEXT:     v += __shfl_down_sync(0xffffffff, v, off);
// DYN-NEXT:   if (tid % 32 == 0)
// DYN-NEXT:     sh[tid / 32] = v;
// DYN-NEXT:   __syncthreads();
// DYN-NEXT:   if (tid < 32) {
// DYN-NEXT:     v = tid < blockDim.x / 32 ? sh[tid] : 0;
// DYN-NEXT:     for (int off = 16; off > 0; off /= 2)
// DYN-NEXT:       v += __shfl_down_sync(0xffffffff, v, off);
// DYN-NEXT:   }
// DYN-NEXT:   if (tid == 0)
// DYN-NEXT:     atomicAdd(out, v);
// DYN-NEXT: }
