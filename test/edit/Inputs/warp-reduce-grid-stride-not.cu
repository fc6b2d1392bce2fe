// Trees grid_stride refuses: each one differs from a dot product in one
// way that a grid-stride leaf or a capped grid would get wrong.
#include "cuda_mock.h"


// One result per block: a capped grid has fewer blocks.
__global__ void per_block(const float *x, float *out, int n) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[tid] = (i < n) ? x[i] : 0.f;
  __syncthreads();
  for (int st = blockDim.x / 2; st > 0; st >>= 1) {
    if (tid < st)
      s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0];
}

// A neighbour's element, not the thread's own.
__global__ void shifted(const float *x, float *out, int n) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[tid] = (i < n) ? x[i + 1] - x[i] : 0.f;
  __syncthreads();
  for (int st = blockDim.x / 2; st > 0; st >>= 1) {
    if (tid < st)
      s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid == 0)
    atomicAdd(out, s[0]);
}

// Out-of-range threads add 1.
__global__ void wrong_identity(const float *x, float *out, int n) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[tid] = (i < n) ? x[i] : 1.f;
  __syncthreads();
  for (int st = blockDim.x / 2; st > 0; st >>= 1) {
    if (tid < st)
      s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid == 0)
    atomicAdd(out, s[0]);
}

// max with 0 for out-of-range threads: right only for non-negative data.
__global__ void max_zero(const int *x, int *out, int n) {
  __shared__ int s[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[tid] = (i < n) ? x[i] : 0;
  __syncthreads();
  for (int st = blockDim.x / 2; st > 0; st >>= 1) {
    if (tid < st)
      s[tid] = max(s[tid], s[tid + st]);
    __syncthreads();
  }
  if (tid == 0)
    atomicMax(out, s[0]);
}

// The bound changes in the kernel.
__global__ void bound_written(const float *x, float *out, int n, int lim) {
  __shared__ float s[256];
  if (n > lim)
    n = lim;
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[tid] = (i < n) ? x[i] : 0.f;
  __syncthreads();
  for (int st = blockDim.x / 2; st > 0; st >>= 1) {
    if (tid < st)
      s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid == 0)
    atomicAdd(out, s[0]);
}

// Each thread also writes its own element.
__global__ void also_writes(float *x, float *out, int n) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[tid] = (i < n) ? x[i] : 0.f;
  if (i < n)
    x[i] = 0.f;
  __syncthreads();
  for (int st = blockDim.x / 2; st > 0; st >>= 1) {
    if (tid < st)
      s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid == 0)
    atomicAdd(out, s[0]);
}

// Launched on a 2D grid.
__global__ void grid2d(const float *x, float *out, int n) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[tid] = (i < n) ? x[i] : 0.f;
  __syncthreads();
  for (int st = blockDim.x / 2; st > 0; st >>= 1) {
    if (tid < st)
      s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid == 0)
    atomicAdd(out, s[0]);
}

void run(float *x, const int *y, float *out, int *iout, int n) {
  per_block<<<(n + 255) / 256, 256>>>(x, out, n);
  shifted<<<(n + 255) / 256, 256>>>(x, out, n);
  wrong_identity<<<(n + 255) / 256, 256>>>(x, out, n);
  max_zero<<<(n + 255) / 256, 256>>>(y, iout, n);
  bound_written<<<(n + 255) / 256, 256>>>(x, out, n, 1 << 20);
  also_writes<<<(n + 255) / 256, 256>>>(x, out, n);
  grid2d<<<dim3((n + 255) / 256 / 2, 2), 256>>>(x, out, n);
}
