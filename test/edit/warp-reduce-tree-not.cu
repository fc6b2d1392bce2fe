// warp-reduce refuses trees it cannot rewrite faithfully, naming why: a
// launch whose block is not a power of two, the array read after the loop
// by threads other than thread 0, a loop without __syncthreads (its steps
// race), an array not indexed by threadIdx.x, a constant start that does
// not match the launch, and a warp tail too small for its block. The input
// is left alone.
// RUN: cp %s %t.cu
// RUN: clang-optiml transforms -v %t.cu -- %mock_args 2>/dev/null | FileCheck --match-full-lines %s
// RUN: echo '{"kind":"warp-reduce","target":"odd_block"}' > %t.json
// RUN: not clang-optiml apply %t.cu --edit %t.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=APPLY %s
// RUN: cmp %s %t.cu

#include "cuda_mock.h"

__global__ void odd_block(const int *in, int *out, int n) {
  __shared__ int partial[1024];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  partial[tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    atomicAdd(out, partial[0]);
}

__global__ void read_after(const float *in, float *out, int n) {
  __shared__ float partial[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  partial[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (i < n)
    out[i] = in[i] / partial[0];
}

__global__ void no_sync(const float *in, float *out, int n) {
  __shared__ float partial[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  partial[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      partial[tid] += partial[tid + s];
  }
  if (tid == 0)
    out[blockIdx.x] = partial[0];
}

__global__ void not_tid(const float *in, float *out, int n) {
  __shared__ float partial[256];
  int tid = threadIdx.x;
  int j = 255 - tid;
  int i = blockIdx.x * blockDim.x + tid;
  partial[j] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = partial[0];
}

__global__ void half_start(const float *in, float *out, int n) {
  __shared__ float partial[256];
  int tid = threadIdx.x;
  partial[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (int s = 64; s > 0; s >>= 1) {
    if (tid < s)
      partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = partial[0];
}

__global__ void small_tail(const int *in, int *out) {
  __shared__ int sdata[64];
  int tid = threadIdx.x;
  sdata[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    volatile int *v = sdata;
    v[tid] += v[tid + 32];
    v[tid] += v[tid + 16];
    v[tid] += v[tid + 8];
    v[tid] += v[tid + 4];
    v[tid] += v[tid + 2];
    v[tid] += v[tid + 1];
  }
  if (tid == 0)
    out[blockIdx.x] = sdata[0];
}

void run(const int *a, int *ao, const float *f, float *fo, int n) {
  odd_block<<<(n + 767) / 768, 768>>>(a, ao, n);
  read_after<<<(n + 255) / 256, 256>>>(f, fo, n);
  no_sync<<<(n + 255) / 256, 256>>>(f, fo, n);
  not_tid<<<(n + 255) / 256, 256>>>(f, fo, n);
  half_start<<<n / 256, 256>>>(f, fo, n);
  small_tail<<<n / 32, 32>>>(a, ao);
}

// CHECK: not warp-reduce odd_block: kernel 'odd_block': launch odd_block/launch0 uses blocks of 768 threads: the tree needs a power of two, the shuffles a multiple of 32
// CHECK: not warp-reduce read_after: kernel 'read_after': 'partial' is read at 41:3 after the loop by threads other than thread 0 (only 'if (tid == 0) ... partial[0] ...' is rewritten)
// CHECK: not warp-reduce no_sync: kernel 'no_sync': the tree loop at 51:3 has no __syncthreads() after its step: its steps race
// CHECK: not warp-reduce not_tid: kernel 'not_tid': 'partial' is written at 64:3 with index 'j', not threadIdx.x
// CHECK: not warp-reduce half_start: kernel 'half_start': launch half_start/launch0 uses blocks of 256 threads but the loop starts at 64, which reduces 128 values
// CHECK: not warp-reduce small_tail: kernel 'small_tail': launch small_tail/launch0 uses blocks of 32 threads; the warp tail reads sdata[tid + 32], which needs at least 64

// APPLY: clang-optiml: error: warp-reduce odd_block rejected: [not-applicable] kernel 'odd_block': launch odd_block/launch0 uses blocks of 768 threads: the tree needs a power of two, the shuffles a multiple of 32
