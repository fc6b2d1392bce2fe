#include "cuda_mock.h"
// Softmax, one thread per row: three passes (max, sum of exponentials,
// normalized write) over a row whose length need not be a multiple of 32.
__global__ void softmax_rows(int rows, int cols, const float *in, float *out) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (row < rows) {
    const float *x = in + (size_t)row * cols;
    float *y = out + (size_t)row * cols;
    float m = -3.402823466e38f;
    for (int j = lane; j < cols; j += 32) m = fmaxf(m, x[j]);
    for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    float s = 0.f;
    for (int j = lane; j < cols; j += 32) s += expf(x[j] - m);
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
    for (int j = lane; j < cols; j += 32) y[j] = expf(x[j] - m) / s;
  }
}
void run(const float *in, float *out, int rows, int cols) {
  int threads = 128, blocks = (rows + threads - 1) / threads;
  softmax_rows<<<(rows + 7) / 8, 256>>>(rows, cols, in, out);
}
