#include "cuda_mock.h"
// Layer normalization with a row bias: two reductions into the same
// accumulators, a start value that is not zero, a min, and a write pass.
__global__ void norm_rows(const float *in, const float *bias, float *out,
                          float *lo, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    const float *x = in + row * cols;
    float mean = bias[row];
    float sq = 0.f;
    for (int j = 0; j < cols; ++j) {
      float v = x[j];
      mean += v;
      sq += v * v;
    }
    mean = mean / cols;
    float var = sq / cols - mean * mean;
    float least = 3.402823466e38f;
    for (int j = 0; j < cols; ++j) least = fminf(x[j], least);
    lo[row] = least;
    float inv = rsqrtf(var + 1e-5f);
    for (int j = 0; j < cols; ++j)
      out[row * cols + j] = (x[j] - mean) * inv;
  }
}
void run(const float *in, const float *b, float *out, float *lo, int r,
         int c) {
  norm_rows<<<(r + 63) / 64, 64>>>(in, b, out, lo, r, c);
}
