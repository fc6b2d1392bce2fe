#include "cuda_mock.h"
// CSR sparse matrix-vector product, early-return guard, data-dependent row
// lengths (empty rows included), unsigned index written in another order.
__global__ void csr_mv(const int *row_ptr, const int *col_idx,
                       const float *val, const float *x, float *y,
                       unsigned num_rows) {
  unsigned r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (r >= num_rows)
    return;
  int begin = row_ptr[r];
  int end = row_ptr[r + 1];
  float dot = 0.0f;
  for (int k = begin + lane; k < end; k += 32)
    dot = dot + val[k] * x[col_idx[k]];
  for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
  if (lane == 0) y[r] = dot;
}
void spmv(const int *rp, const int *ci, const float *v, const float *x,
          float *y, unsigned n) {
  csr_mv<<<(n + 3) / 4, 128>>>(rp, ci, v, x, y, n);
}
