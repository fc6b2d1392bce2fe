// warp-reduce on trees that stop at s > 32 and finish with a warp-
// synchronous tail on volatile shared memory: written inline through a
// volatile alias (with __syncwarp between steps), or in a __device__ helper
// called as warp_reduce(sdata, tid). Both tails go with the loop.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"warp-reduce","target":"tail_inline","params":{"changes_precision":false}}' > %t.1.json
// RUN: clang-optiml apply %t.cu --edit %t.1.json -o %t.1.cu -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=SUMMARY %s
// RUN: FileCheck --match-full-lines --check-prefix=INLINE %s < %t.1.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.1.cu %}
// RUN: echo '{"kind":"warp-reduce","target":"tail_helper"}' > %t.2.json
// RUN: clang-optiml apply %t.cu --edit %t.2.json -o %t.2.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=HELPER %s < %t.2.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.2.cu %}

#include "cuda_mock.h"

__global__ void tail_inline(const unsigned *in, unsigned *out, int n) {
  __shared__ unsigned sdata[512];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * (blockDim.x * 2) + tid;
  unsigned x = 0;
  if (i < n)
    x = in[i];
  if (i + blockDim.x < n)
    x += in[i + blockDim.x];
  sdata[tid] = x;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    volatile unsigned *vs = sdata;
    vs[tid] += vs[tid + 32];
    __syncwarp();
    vs[tid] += vs[tid + 16];
    __syncwarp();
    vs[tid] += vs[tid + 8];
    __syncwarp();
    vs[tid] += vs[tid + 4];
    __syncwarp();
    vs[tid] += vs[tid + 2];
    __syncwarp();
    vs[tid] += vs[tid + 1];
  }
  if (tid == 0)
    out[blockIdx.x] = sdata[0];
}

__device__ void warp_reduce(volatile int *sdata, int tid) {
  sdata[tid] += sdata[tid + 32];
  sdata[tid] += sdata[tid + 16];
  sdata[tid] += sdata[tid + 8];
  sdata[tid] += sdata[tid + 4];
  sdata[tid] += sdata[tid + 2];
  sdata[tid] += sdata[tid + 1];
}

__global__ void tail_helper(const int *in, int *out, int n) {
  __shared__ int sdata[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? in[i] : 0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32)
    warp_reduce(sdata, tid);
  if (tid == 0)
    atomicAdd(out, sdata[0]);
}

void run(const unsigned *u, unsigned *uo, const int *in, int *out, int n) {
  tail_inline<<<(n + 1023) / 1024, 512>>>(u, uo, n);
  tail_helper<<<(n + 255) / 256, 256>>>(in, out, n);
}

// SUMMARY: applied: warp-reduce tail_inline changes_precision=false

// INLINE:      __global__ void tail_inline(const unsigned *in, unsigned *out, int n) {
// INLINE-NEXT:   __shared__ unsigned sdata[512 / 32];
// INLINE-NEXT:   unsigned tid = threadIdx.x;
// INLINE-NEXT:   unsigned i = blockIdx.x * (blockDim.x * 2) + tid;
// INLINE-NEXT:   unsigned x = 0;
// INLINE-NEXT:   if (i < n)
// INLINE-NEXT:     x = in[i];
// INLINE-NEXT:   if (i + blockDim.x < n)
// INLINE-NEXT:     x += in[i + blockDim.x];
// INLINE-NEXT:   unsigned v = x;
// INLINE-NEXT:   for (int off = 16; off > 0; off /= 2)
// INLINE-NEXT:     v += __shfl_down_sync(0xffffffff, v, off);
// INLINE-NEXT:   if (tid % 32 == 0)
// INLINE-NEXT:     sdata[tid / 32] = v;
// INLINE-NEXT:   __syncthreads();
// INLINE-NEXT:   if (tid < 32) {
// INLINE-NEXT:     v = tid < blockDim.x / 32 ? sdata[tid] : 0;
// INLINE-NEXT:     for (int off = 16; off > 0; off /= 2)
// INLINE-NEXT:       v += __shfl_down_sync(0xffffffff, v, off);
// INLINE-NEXT:   }
// INLINE-NEXT:   if (tid == 0)
// INLINE-NEXT:     out[blockIdx.x] = v;
// INLINE-NEXT: }

// HELPER:      __global__ void tail_helper(const int *in, int *out, int n) {
// HELPER-NEXT:   __shared__ int sdata[256 / 32];
// HELPER-NEXT:   int tid = threadIdx.x;
// HELPER-NEXT:   int i = blockIdx.x * blockDim.x + threadIdx.x;
// HELPER-NEXT:   int v = (i < n) ? in[i] : 0;
// HELPER-NEXT:   for (int off = 16; off > 0; off /= 2)
// HELPER-NEXT:     v += __shfl_down_sync(0xffffffff, v, off);
// HELPER-NEXT:   if (tid % 32 == 0)
// HELPER-NEXT:     sdata[tid / 32] = v;
// HELPER-NEXT:   __syncthreads();
// HELPER-NEXT:   if (tid < 32) {
// HELPER-NEXT:     v = tid < blockDim.x / 32 ? sdata[tid] : 0;
// HELPER-NEXT:     for (int off = 16; off > 0; off /= 2)
// HELPER-NEXT:       v += __shfl_down_sync(0xffffffff, v, off);
// HELPER-NEXT:   }
// HELPER-NEXT:   if (tid == 0)
// HELPER-NEXT:     atomicAdd(out, v);
// HELPER-NEXT: }
