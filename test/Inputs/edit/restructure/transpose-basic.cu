#include "cuda_mock.h"
// The textbook transpose: reads coalesced, writes strided.
__global__ void transpose(int rows, int cols, const float *in, float *out) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}
void run(int rows, int cols, const float *in, float *out) {
  dim3 threads(16, 16), blocks((cols + 15) / 16, (rows + 15) / 16);
  transpose<<<blocks, threads>>>(rows, cols, in, out);
}
