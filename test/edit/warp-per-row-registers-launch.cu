// warp-per-row with registers: the row length is a kernel parameter that
// every launch passes as a compile-time constant (a `static const` and a
// literal; the larger, 48, counts). Two arrays are read by both passes, so
// both stay in registers (2 values each per lane), loaded by one loop;
// passes with braces keep their bodies.
// RUN: rm -rf %t.d && split-file %inputs/edit/restructure/warp.cases %t.d && cp %t.d/warp-registers-launch.cu %t.cu
// RUN: echo '{"kind":"warp-per-row","target":"centered_dot","params":{"registers":true,"block_size":128}}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.out.cu %}

// CHECK:      __global__ void centered_dot(const float *a, const float *b, float *out,
// CHECK-NEXT:                              unsigned n, int d) {
// CHECK-NEXT:   unsigned i = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
// CHECK-NEXT:   int lane = threadIdx.x % 32;
// CHECK-NEXT:   if (i < n) {
// CHECK-NEXT:     const float *p = a + i * d;
// CHECK-NEXT:     const float *q = b + i * d;
// CHECK-NEXT:     float sp = 0.f;
// CHECK-NEXT:     float sq = 0.f;
// CHECK-NEXT:     float p_reg[2];
// CHECK-NEXT:     float q_reg[2];
// CHECK-NEXT:     #pragma unroll
// CHECK-NEXT:     for (int k = 0; k < 2; ++k) if (int j = lane + k * 32; j < d) { p_reg[k] = p[j]; q_reg[k] = q[j]; }
// CHECK-NEXT:     #pragma unroll
// CHECK-NEXT:     for (int k = 0; k < 2; ++k) if (int j = lane + k * 32; j < d) {
// CHECK-NEXT:       sp += p_reg[k];
// CHECK-NEXT:       sq += q_reg[k];
// CHECK-NEXT:     }
// CHECK-NEXT:     for (int offset = 16; offset > 0; offset /= 2) {
// CHECK-NEXT:       sp += __shfl_xor_sync(0xffffffffu, sp, offset);
// CHECK-NEXT:       sq += __shfl_xor_sync(0xffffffffu, sq, offset);
// CHECK-NEXT:     }
// CHECK-NEXT:     float mp = sp / d;
// CHECK-NEXT:     float mq = sq / d;
// CHECK-NEXT:     float dot = 0.f;
// CHECK-NEXT:     #pragma unroll
// CHECK-NEXT:     for (int k = 0; k < 2; ++k) if (int j = lane + k * 32; j < d) {
// CHECK-NEXT:       float u = p_reg[k] - mp;
// CHECK-NEXT:       float v = q_reg[k] - mq;
// CHECK-NEXT:       dot += u * v;
// CHECK-NEXT:     }
// CHECK-NEXT:     for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
// CHECK-NEXT:     if (lane == 0) out[i] = dot;
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK:        centered_dot<<<(n + 3) / 4, 128>>>(a, b, out, n, D);
// CHECK-NEXT:   centered_dot<<<(n + 3) / 4, 128>>>(a, b, out, n, 40);
