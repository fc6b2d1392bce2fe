// warp-per-row with registers: a row length fixed by a macro (100, not a
// multiple of 32) lets each lane load its 4 elements once; the max, the sum
// and the normalizing write then run from registers (the last element of
// each lane's range is guarded by the original bound).
// RUN: rm -rf %t.d && split-file %inputs/edit/restructure/warp.cases %t.d && cp %t.d/warp-registers-macro.cu %t.cu
// RUN: echo '{"kind":"warp-per-row","target":"softmax_rows","params":{"registers":true}}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.out.cu %}

// CHECK:      __global__ void softmax_rows(const float *in, float *out, int rows) {
// CHECK-NEXT:   int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
// CHECK-NEXT:   int lane = threadIdx.x % 32;
// CHECK-NEXT:   if (row < rows) {
// CHECK-NEXT:     const float *x = in + row * COLS;
// CHECK-NEXT:     float m = -3.402823466e38f;
// CHECK-NEXT:     float x_reg[4];
// CHECK-NEXT:     #pragma unroll
// CHECK-NEXT:     for (int k = 0; k < 4; ++k) if (int j = lane + k * 32; j < COLS) x_reg[k] = x[j];
// CHECK-NEXT:     #pragma unroll
// CHECK-NEXT:     for (int k = 0; k < 4; ++k) if (int j = lane + k * 32; j < COLS)
// CHECK-NEXT:       m = fmaxf(m, x_reg[k]);
// CHECK-NEXT:     for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
// CHECK-NEXT:     float s = 0.f;
// CHECK-NEXT:     #pragma unroll
// CHECK-NEXT:     for (int k = 0; k < 4; ++k) if (int j = lane + k * 32; j < COLS)
// CHECK-NEXT:       s += expf(x_reg[k] - m);
// CHECK-NEXT:     for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
// CHECK-NEXT:     #pragma unroll
// CHECK-NEXT:     for (int k = 0; k < 4; ++k) if (int j = lane + k * 32; j < COLS)
// CHECK-NEXT:       out[row * COLS + j] = expf(x_reg[k] - m) / s;
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK:        softmax_rows<<<(rows + 7) / 8, 256>>>(in, out, rows);
