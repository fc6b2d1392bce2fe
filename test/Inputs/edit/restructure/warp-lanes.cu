#include "cuda_mock.h"

__global__ void csr_rows(const int *row_ptr, const int *col, const float *val,
                         const float *x, float *y, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float acc = 0.f;
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k)
      acc += val[k] * x[col[k]];
    y[row] = acc;
  }
}

__global__ void unit_rows(const float *in, float *norm, float *out, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  float s = 0.f;
  for (int j = 0; j < 12; ++j)
    s += in[r * 12 + j] * in[r * 12 + j];
  norm[r] = sqrtf(s);
  for (int j = 0; j < 12; ++j)
    out[r * 12 + j] = in[r * 12 + j] / norm[r];
}

void run(const int *rp, const int *c, const float *v, const float *x, float *y,
         float *nrm, float *o, int n) {
  csr_rows<<<(n + 255) / 256, 256>>>(rp, c, v, x, y, n);
  unit_rows<<<(n + 255) / 256, 256>>>(x, nrm, o, n);
}
