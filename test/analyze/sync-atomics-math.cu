// __syncthreads, atomics, math functions, warp primitives, __device__ helpers
// and shared memory (static and dynamic).
// RUN: clang-optiml analyze %s -- %mock_args | FileCheck --match-full-lines %s

#include "cuda_mock.h"

__device__ float gelu(float v) { return 0.5f * v * (1.0f + tanhf(0.79788456f * v)); }

__global__ void softsum(const float *in, float *out, float *total, int n) {
  __shared__ float tile[128];
  extern __shared__ float scratch[];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  float v = i < n ? expf(in[i]) : 0.0f;
  tile[t] = gelu(v);
  scratch[t] = sqrtf(v);
  __syncthreads();
  float w = tile[t] + __shfl_down_sync(0xffffffffu, tile[t], 1);
  if (t == 0)
    atomicAdd(total, w);
  __syncthreads();
  out[i] = scratch[t];
}

// CHECK:      kernel softsum ({{.*}}:9) [reduction: atomic accumulation into total[0]]
// CHECK:        shared float[128] tile (512 B)
// CHECK-NEXT:   shared float[] scratch (dynamic)
// CHECK-NEXT:   __syncthreads: __syncthreads (line 17), __syncthreads (line 21)
// CHECK-NEXT:   atomics: atomicAdd (line 20)
// CHECK-NEXT:   math: expf (line 14), sqrtf (line 16)
// CHECK-NEXT:   warp primitives: __shfl_down_sync (line 18)
// CHECK-NEXT:   calls: gelu (line 15)
