// privatize-atomics with 16-byte input words and one column per lane: the
// byte loop reads uint4 words when the input is 16-byte aligned, a scalar
// loop takes the tail (n % 16) and every byte of an unaligned input; both
// launches get the grid cap, and their blocks stay.
// The input is split off so that the names below do not count as taken.
// RUN: rm -rf %t && split-file %s %t
// RUN: echo '{"kind":"privatize-atomics","target":"histogram","params":{"copies":"lane","vector_bytes":16,"max_blocks":528}}' > %t/edit.json
// RUN: clang-optiml apply %t/input.cu --edit %t/edit.json -o %t/out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t/out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/out.cu %}

// CHECK:      __global__ void histogram(const unsigned char *in, unsigned *count, int len) {
// CHECK-NEXT:   __shared__ unsigned int count_private[256][32];
// CHECK-NEXT:   for (int bin = threadIdx.x; bin < 8192; bin += blockDim.x)
// CHECK-NEXT:     count_private[bin / 32][bin % 32] = 0;
// CHECK-NEXT:   __syncthreads();
// CHECK-NEXT:   int scalar_from = 0;
// CHECK-NEXT:   if (reinterpret_cast<unsigned long long>(in) % 16 == 0) {
// CHECK-NEXT:     scalar_from = len / 16 * 16;
// CHECK-NEXT:     for (int v = threadIdx.x + blockDim.x * blockIdx.x; v < len / 16; v += blockDim.x * gridDim.x) {
// CHECK-NEXT:       uint4 in_v = reinterpret_cast<const uint4 *>(in)[v];
// CHECK-NEXT:       const unsigned char *in_e = reinterpret_cast<const unsigned char *>(&in_v);
// CHECK-NEXT:       #pragma unroll
// CHECK-NEXT:       for (int e = 0; e < 16; ++e) {
// CHECK-NEXT:         unsigned char c = in_e[e];
// CHECK-NEXT:         atomicAdd(&count_private[c][threadIdx.x % 32], 1u);
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   for (int t = scalar_from + threadIdx.x + blockDim.x * blockIdx.x; t < len; t += blockDim.x * gridDim.x) {
// CHECK-NEXT:     unsigned char c = in[t];
// CHECK-NEXT:     atomicAdd(&count_private[c][threadIdx.x % 32], 1u);
// CHECK-NEXT:   }
// CHECK-NEXT:   __syncthreads();
// CHECK-NEXT:   for (int bin = threadIdx.x; bin < 256; bin += blockDim.x) {
// CHECK-NEXT:     unsigned int sum = 0;
// CHECK-NEXT:     for (int lane = 0; lane < 32; ++lane)
// CHECK-NEXT:       sum += count_private[bin][(lane + bin) % 32];
// CHECK-NEXT:     if (sum != 0)
// CHECK-NEXT:       atomicAdd(&count[bin], sum);
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: void run(const unsigned char *in, unsigned *count, int len) {
// CHECK-NEXT:   histogram<<<((len + 255) / 256) < 528 ? ((len + 255) / 256) : 528, 256>>>(in, count, len);
// CHECK-NEXT:   histogram<<<(len / 64 + 1) < 528 ? (len / 64 + 1) : 528, 64>>>(in + 1, count, len - 1);
// CHECK-NEXT: }

//--- input.cu
#include "cuda_mock.h"

__global__ void histogram(const unsigned char *in, unsigned *count, int len) {
  int t = threadIdx.x + blockDim.x * blockIdx.x;
  if (t >= len) return;
  unsigned char c = in[t];
  atomicAdd(&count[c], 1u);
}

void run(const unsigned char *in, unsigned *count, int len) {
  histogram<<<(len + 255) / 256, 256>>>(in, count, len);
  histogram<<<len / 64 + 1, 64>>>(in + 1, count, len - 1);
}
