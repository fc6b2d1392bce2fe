#include "cuda_mock.h"
// Row lengths the suggestions can see: a constexpr (short rows), a template
// parameter (long rows, two instantiations), and a launch constant.
constexpr int kTaps = 12;

__global__ void short_rows(const float *in, float *out, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.f;
    for (int j = 0; j < kTaps; ++j)
      s += in[r * kTaps + j];
    out[r] = s;
  }
}

template <int C>
__global__ void long_rows(const float *in, float *out, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    const float *x = in + (size_t)r * C;
    float m = -3.402823466e38f;
    for (int j = 0; j < C; ++j)
      m = fmaxf(m, x[j]);
    for (int j = 0; j < C; ++j)
      out[(size_t)r * C + j] = x[j] - m;
  }
}

__global__ void mid_rows(const float *in, float *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    const float *x = in + r * cols;
    float s = 0.f;
    for (int j = 0; j < cols; ++j)
      s += x[j] * x[j];
    for (int j = 0; j < cols; ++j)
      out[r * cols + j] = x[j] / s;
  }
}

static const int kCols = 300;

void run(const float *in, float *out, int rows) {
  short_rows<<<(rows + 255) / 256, 256>>>(in, out, rows);
  long_rows<2048><<<(rows + 255) / 256, 256>>>(in, out, rows);
  long_rows<4096><<<(rows + 255) / 256, 256>>>(in, out, rows);
  mid_rows<<<(rows + 255) / 256, 256>>>(in, out, rows, kCols);
}
