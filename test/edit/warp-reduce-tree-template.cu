// warp-reduce on a templated tree: the element type T and the block size BS
// are template parameters; the per-warp array is BS / 32 slots of T, the
// register is a T, and the loop's start BS / 2 is the array's size / 2
// (noted in the reason). The result may be float: changes_precision true.
// RUN: cp %s %t.cu
// RUN: clang-optiml transforms %t.cu -- %mock_args | FileCheck --match-full-lines --check-prefix=LIST %s
// RUN: echo '{"kind":"warp-reduce","target":"tsum"}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.out.cu %}

#include "cuda_mock.h"

template <typename T, int BS>
__global__ void tsum(const T *in, T *out, int n) {
  __shared__ T buf[BS];
  int tid = threadIdx.x;
  int i = blockIdx.x * BS + tid;
  buf[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  for (int s = BS / 2; s > 0; s >>= 1) {
    if (tid < s)
      buf[tid] += buf[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = buf[0];
}

void run(const float *x, float *out, const int *y, int *yout, int n) {
  tsum<float, 256><<<(n + 255) / 256, 256>>>(x, out, n);
  tsum<int, 128><<<(n + 127) / 128, 128>>>(y, yout, n);
}

// LIST:      kernel tsum:
// LIST:        warp-reduce tsum: shared-memory tree reduction (+) of T in 'buf': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement; note: the loop starts at 'BS / 2': blocks must have BS threads
// LIST-NEXT:     param changes_precision (boolean, optional)
// LIST-NEXT:     param grid_stride (boolean, optional)
// LIST-NEXT:     param max_blocks (integer 1..1048576, optional)
// LIST-NEXT:     try {"kind":"warp-reduce","target":"tsum","params":{"changes_precision":true}}

// CHECK:      template <typename T, int BS>
// CHECK-NEXT: __global__ void tsum(const T *in, T *out, int n) {
// CHECK-NEXT:   __shared__ T buf[BS / 32];
// CHECK-NEXT:   int tid = threadIdx.x;
// CHECK-NEXT:   int i = blockIdx.x * BS + tid;
// CHECK-NEXT:   T v = i < n ? in[i] : T(0);
// CHECK-NEXT:   for (int off = 16; off > 0; off /= 2)
// CHECK-NEXT:     v += __shfl_down_sync(0xffffffff, v, off);
// CHECK-NEXT:   if (tid % 32 == 0)
// CHECK-NEXT:     buf[tid / 32] = v;
// CHECK-NEXT:   __syncthreads();
// CHECK-NEXT:   if (tid < 32) {
// CHECK-NEXT:     v = tid < blockDim.x / 32 ? buf[tid] : 0;
// CHECK-NEXT:     for (int off = 16; off > 0; off /= 2)
// CHECK-NEXT:       v += __shfl_down_sync(0xffffffff, v, off);
// CHECK-NEXT:   }
// CHECK-NEXT:   if (tid == 0)
// CHECK-NEXT:     out[blockIdx.x] = v;
// CHECK-NEXT: }
