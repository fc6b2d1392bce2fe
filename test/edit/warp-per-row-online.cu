// warp-per-row with online: the max pass and the pass summing exp(e - max)
// become one pass carrying a running max and a sum rescaled whenever the
// max grows; lanes (and, in the block form, warps) combine their pairs the
// same way, and the sum pass becomes `s += s_run` (so a sum starting from 1
// keeps it). Shown in the warp form, in the block form with the row in
// registers (the fused pass reads them), and with 16-lane groups behind an
// early return. Refused with the reason when no max pass is followed by
// such a sum, or when something between them writes memory.
// RUN: rm -rf %t.d && split-file %inputs/edit/restructure/warp.cases %t.d && cp %t.d/warp-online.cu %t.cu
// RUN: echo '{"kind":"warp-per-row","target":"softmax_rows","params":{"online":true}}' > %t.1.json
// RUN: clang-optiml apply %t.cu --edit %t.1.json -o %t.1.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=WARP %s < %t.1.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.1.cu %}
// RUN: echo '{"kind":"warp-per-row","target":"softmax_wide","params":{"online":true,"registers":true,"per":"block","block_size":256}}' > %t.2.json
// RUN: clang-optiml apply %t.cu --edit %t.2.json -o %t.2.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=BLOCK %s < %t.2.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.2.cu %}
// RUN: echo '{"kind":"warp-per-row","target":"log_sum_exp","params":{"online":true,"lanes":16,"block_size":128}}' > %t.3.json
// RUN: clang-optiml apply %t.cu --edit %t.3.json -o %t.3.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=LSE %s < %t.3.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.3.cu %}
// RUN: echo '{"kind":"warp-per-row","target":"max_then_mean","params":{"online":true}}' > %t.4.json
// RUN: not clang-optiml apply %t.cu --edit %t.4.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=NOEXP %s
// RUN: echo '{"kind":"warp-per-row","target":"max_store_sum","params":{"online":true}}' > %t.5.json
// RUN: not clang-optiml apply %t.cu --edit %t.5.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=BETWEEN %s

// WARP:      __global__ void softmax_rows(const float *in, float *out, int rows, int cols) {
// WARP-NEXT:   int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
// WARP-NEXT:   int lane = threadIdx.x % 32;
// WARP-NEXT:   if (row < rows) {
// WARP-NEXT:     const float *x = in + (size_t)row * cols;
// WARP-NEXT:     float m = -3.402823466e38f;
// WARP-NEXT:     float s_run = 0;
// WARP-NEXT:     for (int j = lane; j < cols; j += 32) {
// WARP-NEXT:       float elem = x[j];
// WARP-NEXT:       float m_new = fmaxf(m, elem);
// WARP-NEXT:       s_run = s_run * (m == m_new ? 1 : expf(m - m_new)) + expf(elem - m_new);
// WARP-NEXT:       m = m_new;
// WARP-NEXT:     }
// WARP-NEXT:     for (int offset = 16; offset > 0; offset /= 2) {
// WARP-NEXT:       float m_other = __shfl_xor_sync(0xffffffffu, m, offset);
// WARP-NEXT:       float s_run_other = __shfl_xor_sync(0xffffffffu, s_run, offset);
// WARP-NEXT:       float m_new = fmaxf(m, m_other);
// WARP-NEXT:       s_run = s_run * (m == m_new ? 1 : expf(m - m_new)) + s_run_other * (m_other == m_new ? 1 : expf(m_other - m_new));
// WARP-NEXT:       m = m_new;
// WARP-NEXT:     }
// WARP-NEXT:     float s = 0.f;
// WARP-NEXT:     s += s_run;
// WARP-NEXT:     for (int j = lane; j < cols; j += 32)
// WARP-NEXT:       out[(size_t)row * cols + j] = expf(x[j] - m) / s;
// WARP-NEXT:   }
// WARP-NEXT: }
// WARP:        softmax_rows<<<(rows + 7) / 8, 256>>>(in, out, rows, cols);

// BLOCK:      __global__ void softmax_wide(const float *in, float *out, int rows) {
// BLOCK-NEXT:   int row = blockIdx.x;
// BLOCK-NEXT:   int lane = threadIdx.x;
// BLOCK-NEXT:   if (row < rows) {
// BLOCK-NEXT:     const float *x = in + row * WIDTH;
// BLOCK-NEXT:     float mx = -3.402823466e38f;
// BLOCK-NEXT:     float x_reg[4];
// BLOCK-NEXT:     #pragma unroll
// BLOCK-NEXT:     for (int k1 = 0; k1 < 4; ++k1) if (int c = lane + k1 * 256; c < WIDTH) x_reg[k1] = x[c];
// BLOCK-NEXT:     float total_run = 0;
// BLOCK-NEXT:     #pragma unroll
// BLOCK-NEXT:     for (int k1 = 0; k1 < 4; ++k1) if (int c = lane + k1 * 256; c < WIDTH) {
// BLOCK-NEXT:       float elem = x_reg[k1] * 0.5f;
// BLOCK-NEXT:       float mx_new = fmaxf(mx, elem);
// BLOCK-NEXT:       total_run = total_run * (mx == mx_new ? 1 : expf(mx - mx_new)) + expf(elem - mx_new);
// BLOCK-NEXT:       mx = mx_new;
// BLOCK-NEXT:     }
// BLOCK-NEXT:     for (int offset = 16; offset > 0; offset /= 2) {
// BLOCK-NEXT:       float mx_other = __shfl_xor_sync(0xffffffffu, mx, offset);
// BLOCK-NEXT:       float total_run_other = __shfl_xor_sync(0xffffffffu, total_run, offset);
// BLOCK-NEXT:       float mx_new = fmaxf(mx, mx_other);
// BLOCK-NEXT:       total_run = total_run * (mx == mx_new ? 1 : expf(mx - mx_new)) + total_run_other * (mx_other == mx_new ? 1 : expf(mx_other - mx_new));
// BLOCK-NEXT:       mx = mx_new;
// BLOCK-NEXT:     }
// BLOCK-NEXT:     {
// BLOCK-NEXT:       __shared__ float mx_warps[8];
// BLOCK-NEXT:       __shared__ float total_run_warps[8];
// BLOCK-NEXT:       if (lane % 32 == 0) {
// BLOCK-NEXT:         mx_warps[lane / 32] = mx;
// BLOCK-NEXT:         total_run_warps[lane / 32] = total_run;
// BLOCK-NEXT:       }
// BLOCK-NEXT:       __syncthreads();
// BLOCK-NEXT:       mx = mx_warps[0];
// BLOCK-NEXT:       total_run = total_run_warps[0];
// BLOCK-NEXT:       for (int w = 1; w < 8; ++w) {
// BLOCK-NEXT:         float mx_new = fmaxf(mx, mx_warps[w]);
// BLOCK-NEXT:         total_run = total_run * (mx == mx_new ? 1 : expf(mx - mx_new)) + total_run_warps[w] * (mx_warps[w] == mx_new ? 1 : expf(mx_warps[w] - mx_new));
// BLOCK-NEXT:         mx = mx_new;
// BLOCK-NEXT:       }
// BLOCK-NEXT:     }
// BLOCK-NEXT:     float total = 0.f;
// BLOCK-NEXT:     total += total_run;
// BLOCK-NEXT:     #pragma unroll
// BLOCK-NEXT:     for (int k1 = 0; k1 < 4; ++k1) if (int c = lane + k1 * 256; c < WIDTH)
// BLOCK-NEXT:       out[row * WIDTH + c] = expf(x_reg[k1] * 0.5f - mx) / total;
// BLOCK-NEXT:   }
// BLOCK-NEXT: }
// BLOCK:        softmax_wide<<<rows, 256>>>(in, out, rows);

// LSE:      __global__ void log_sum_exp(const float *in, const float *bias, float *out,
// LSE-NEXT:                             int rows) {
// LSE-NEXT:   int r = blockIdx.x * (blockDim.x / 16) + threadIdx.x / 16;
// LSE-NEXT:   int lane = threadIdx.x % 16;
// LSE-NEXT:   unsigned group_mask = 0xffffu << (threadIdx.x % 32 - lane);
// LSE-NEXT:   if (r >= rows)
// LSE-NEXT:     return;
// LSE-NEXT:   float m = bias[r];
// LSE-NEXT:   float s_run = 0;
// LSE-NEXT:   for (int k = lane; k < 48; k += 16) {
// LSE-NEXT:     float elem = in[r * 48 + k];
// LSE-NEXT:     float m_new = fmaxf(m, elem);
// LSE-NEXT:     s_run = s_run * (m == m_new ? 1 : expf(m - m_new)) + expf(elem - m_new);
// LSE-NEXT:     m = m_new;
// LSE-NEXT:   }
// LSE-NEXT:   for (int offset = 8; offset > 0; offset /= 2) {
// LSE-NEXT:     float m_other = __shfl_xor_sync(group_mask, m, offset, 16);
// LSE-NEXT:     float s_run_other = __shfl_xor_sync(group_mask, s_run, offset, 16);
// LSE-NEXT:     float m_new = fmaxf(m, m_other);
// LSE-NEXT:     s_run = s_run * (m == m_new ? 1 : expf(m - m_new)) + s_run_other * (m_other == m_new ? 1 : expf(m_other - m_new));
// LSE-NEXT:     m = m_new;
// LSE-NEXT:   }
// LSE-NEXT:   float s = 1.f;
// LSE-NEXT:   s += s_run;
// LSE-NEXT:   if (lane == 0) out[r] = m + logf(s);
// LSE-NEXT: }
// LSE:        log_sum_exp<<<(rows + 7) / 8, 128>>>(in, b, out, rows);

// NOEXP: clang-optiml: error: warp-per-row max_then_mean rejected: [not-applicable] params.online: no pass computing a max ('m = fmaxf(m, e)') is followed by a pass over the same range that only sums 'expf(e - m)'
// BETWEEN: clang-optiml: error: warp-per-row max_store_sum rejected: [not-applicable] params.online: the statement at 67:5 between the max pass and the sum pass writes 'm' or memory
