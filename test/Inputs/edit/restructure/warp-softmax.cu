#include "cuda_mock.h"
// Softmax, one thread per row: three passes (max, sum of exponentials,
// normalized write) over a row whose length need not be a multiple of 32.
__global__ void softmax_rows(int rows, int cols, const float *in, float *out) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    const float *x = in + (size_t)row * cols;
    float *y = out + (size_t)row * cols;
    float m = -3.402823466e38f;
    for (int j = 0; j < cols; ++j) m = fmaxf(m, x[j]);
    float s = 0.f;
    for (int j = 0; j < cols; ++j) s += expf(x[j] - m);
    for (int j = 0; j < cols; ++j) y[j] = expf(x[j] - m) / s;
  }
}
void run(const float *in, float *out, int rows, int cols) {
  int threads = 128, blocks = (rows + threads - 1) / threads;
  softmax_rows<<<blocks, threads>>>(rows, cols, in, out);
}
