// warp-per-row with lanes: short rows share a warp. CSR rows (8 lanes, 4
// rows per warp; empty rows run no iteration and combine zeros) and short
// fixed rows behind an early return (4 lanes) whose lane-0 write a later
// pass reads. Shuffles and __syncwarp name only the group's lanes, so groups
// past the bound may leave early; grids count groups per block.
// RUN: rm -rf %t.d && split-file %inputs/edit/restructure/warp.cases %t.d && cp %t.d/warp-lanes.cu %t.cu
// RUN: echo '{"kind":"warp-per-row","target":"csr_rows","params":{"lanes":8}}' > %t.1.json
// RUN: clang-optiml apply %t.cu --edit %t.1.json -o %t.1.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=CSR %s < %t.1.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.1.cu %}
// RUN: echo '{"kind":"warp-per-row","target":"unit_rows","params":{"lanes":4,"block_size":128}}' > %t.2.json
// RUN: clang-optiml apply %t.cu --edit %t.2.json -o %t.2.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=UNIT %s < %t.2.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t.2.cu %}

// CSR:      __global__ void csr_rows(const int *row_ptr, const int *col, const float *val,
// CSR-NEXT:                          const float *x, float *y, int rows) {
// CSR-NEXT:   int row = blockIdx.x * (blockDim.x / 8) + threadIdx.x / 8;
// CSR-NEXT:   int lane = threadIdx.x % 8;
// CSR-NEXT:   unsigned group_mask = 0xffu << (threadIdx.x % 32 - lane);
// CSR-NEXT:   if (row < rows) {
// CSR-NEXT:     float acc = 0.f;
// CSR-NEXT:     for (int k = row_ptr[row] + lane; k < row_ptr[row + 1]; k += 8)
// CSR-NEXT:       acc += val[k] * x[col[k]];
// CSR-NEXT:     for (int offset = 4; offset > 0; offset /= 2) acc += __shfl_xor_sync(group_mask, acc, offset, 8);
// CSR-NEXT:     if (lane == 0) y[row] = acc;
// CSR-NEXT:   }
// CSR-NEXT: }
// CSR:        csr_rows<<<(n + 31) / 32, 256>>>(rp, c, v, x, y, n);
// CSR-NEXT:   unit_rows<<<(n + 255) / 256, 256>>>(x, nrm, o, n);

// UNIT:      __global__ void unit_rows(const float *in, float *norm, float *out, int rows) {
// UNIT-NEXT:   int r = blockIdx.x * (blockDim.x / 4) + threadIdx.x / 4;
// UNIT-NEXT:   int lane = threadIdx.x % 4;
// UNIT-NEXT:   unsigned group_mask = 0xfu << (threadIdx.x % 32 - lane);
// UNIT-NEXT:   if (r >= rows)
// UNIT-NEXT:     return;
// UNIT-NEXT:   float s = 0.f;
// UNIT-NEXT:   for (int j = lane; j < 12; j += 4)
// UNIT-NEXT:     s += in[r * 12 + j] * in[r * 12 + j];
// UNIT-NEXT:   for (int offset = 2; offset > 0; offset /= 2) s += __shfl_xor_sync(group_mask, s, offset, 4);
// UNIT-NEXT:   if (lane == 0) norm[r] = sqrtf(s);
// UNIT-NEXT:   __syncwarp(group_mask);
// UNIT-NEXT:   for (int j = lane; j < 12; j += 4)
// UNIT-NEXT:     out[r * 12 + j] = in[r * 12 + j] / norm[r];
// UNIT-NEXT: }
// UNIT:        csr_rows<<<(n + 255) / 256, 256>>>(rp, c, v, x, y, n);
// UNIT-NEXT:   unit_rows<<<(n + 31) / 32, 128>>>(x, nrm, o, n);
