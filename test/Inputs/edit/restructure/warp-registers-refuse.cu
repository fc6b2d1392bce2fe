#include "cuda_mock.h"
#define LONG 4096

__global__ void runtime_cols(const float *in, float *out, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float s = 0.f;
    for (int j = 0; j < cols; ++j)
      s += in[row * cols + j];
    const float *x = in + row * cols;
    float t = 0.f;
    for (int j = 0; j < cols; ++j)
      t += x[j] * x[j];
    for (int j = 0; j < cols; ++j)
      out[row * cols + j] = x[j] * s / t;
  }
}

__global__ void long_rows(const float *in, float *out, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    const float *x = in + row * LONG;
    float m = 0.f;
    for (int j = 0; j < LONG; ++j)
      m = fmaxf(m, x[j]);
    for (int j = 0; j < LONG; ++j)
      out[row * LONG + j] = x[j] / m;
  }
}

__global__ void one_pass(const float *x, float *y, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float s = 0.f;
    for (int j = 0; j < 64; ++j)
      s += x[row * 64 + j];
    y[row] = s;
  }
}

__global__ void written_between(const float *in, float *out, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    const float *x = in + row * 64;
    float *y = out + row * 64;
    for (int j = 0; j < 64; ++j)
      y[j] = 2.f * x[j];
    float s = 0.f;
    for (int j = 0; j < 64; ++j)
      s += x[j];
    out[row] = s;
  }
}

__global__ void from_begin(const int *begin, const float *x, float *y,
                           int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float m = 0.f;
    for (int k = begin[row]; k < 64; ++k)
      m = fmaxf(m, x[k]);
    float s = 0.f;
    for (int k = begin[row]; k < 64; ++k)
      s += x[k] - m;
    y[row] = s;
  }
}

void run(const float *a, float *b, int *beg, int rows, int cols) {
  runtime_cols<<<(rows + 255) / 256, 256>>>(a, b, rows, cols);
  long_rows<<<(rows + 255) / 256, 256>>>(a, b, rows);
  one_pass<<<(rows + 255) / 256, 256>>>(a, b, rows);
  written_between<<<(rows + 255) / 256, 256>>>(a, b, rows);
  from_begin<<<(rows + 255) / 256, 256>>>(beg, a, b, rows);
}
