// warp-per-row with registers in the block form: the row length is a
// template parameter; the largest instantiation (1000) sets the values per
// thread (4 with 256 threads), and every pass of this layer norm (mean,
// variance, normalized write) after the load runs from registers. The
// early-return guard stays: the whole block shares the row.
// RUN: rm -rf %t.d && split-file %inputs/edit/restructure/warp.cases %t.d && cp %t.d/warp-registers-template.cu %t.cu
// RUN: echo '{"kind":"warp-per-row","target":"layer_norm","params":{"per":"block","block_size":256,"registers":true}}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.out.cu %}

// CHECK:      template <int N>
// CHECK-NEXT: __global__ void layer_norm(const float *in, const float *gain, float *out,
// CHECK-NEXT:                            int rows) {
// CHECK-NEXT:   int r = blockIdx.x;
// CHECK-NEXT:   int lane = threadIdx.x;
// CHECK-NEXT:   if (r >= rows)
// CHECK-NEXT:     return;
// CHECK-NEXT:   const float *x = in + r * N;
// CHECK-NEXT:   float mean = 0.f;
// CHECK-NEXT:   float x_reg[4];
// CHECK-NEXT:   #pragma unroll
// CHECK-NEXT:   for (int k = 0; k < 4; ++k) if (int c = lane + k * 256; c < N) x_reg[k] = x[c];
// CHECK-NEXT:   #pragma unroll
// CHECK-NEXT:   for (int k = 0; k < 4; ++k) if (int c = lane + k * 256; c < N)
// CHECK-NEXT:     mean += x_reg[k];
// CHECK-NEXT:   for (int offset = 16; offset > 0; offset /= 2) mean += __shfl_xor_sync(0xffffffffu, mean, offset);
// CHECK-NEXT:   {
// CHECK-NEXT:     __shared__ float mean_warps[8];
// CHECK-NEXT:     if (lane % 32 == 0) mean_warps[lane / 32] = mean;
// CHECK-NEXT:     __syncthreads();
// CHECK-NEXT:     mean = mean_warps[0];
// CHECK-NEXT:     for (int w = 1; w < 8; ++w) mean += mean_warps[w];
// CHECK-NEXT:   }
// CHECK-NEXT:   mean /= N;
// CHECK-NEXT:   float var = 0.f;
// CHECK-NEXT:   #pragma unroll
// CHECK-NEXT:   for (int k = 0; k < 4; ++k) if (int c = lane + k * 256; c < N)
// CHECK-NEXT:     var += (x_reg[k] - mean) * (x_reg[k] - mean);
// CHECK-NEXT:   for (int offset = 16; offset > 0; offset /= 2) var += __shfl_xor_sync(0xffffffffu, var, offset);
// CHECK-NEXT:   {
// CHECK-NEXT:     __shared__ float var_warps[8];
// CHECK-NEXT:     if (lane % 32 == 0) var_warps[lane / 32] = var;
// CHECK-NEXT:     __syncthreads();
// CHECK-NEXT:     var = var_warps[0];
// CHECK-NEXT:     for (int w = 1; w < 8; ++w) var += var_warps[w];
// CHECK-NEXT:   }
// CHECK-NEXT:   float inv = rsqrtf(var / N + 1e-5f);
// CHECK-NEXT:   #pragma unroll
// CHECK-NEXT:   for (int k = 0; k < 4; ++k) if (int c = lane + k * 256; c < N)
// CHECK-NEXT:     out[r * N + c] = (x_reg[k] - mean) * inv * gain[c];
// CHECK-NEXT: }
// CHECK:        layer_norm<512><<<rows, 256>>>(in, g, out, rows);
// CHECK-NEXT:   layer_norm<1000><<<rows, 256>>>(in, g, out, rows);
