#include "cuda_mock.h"
// The textbook transpose: reads coalesced, writes strided.
__global__ void transpose(int rows, int cols, const float *in, float *out) {
  __shared__ float tile[32][33];
  for (int k = threadIdx.y; k < 32; k += 8) {
    int c = blockIdx.x * 32 + threadIdx.x;
    int r = blockIdx.y * 32 + k;
    if (r < rows && c < cols)
      tile[k][threadIdx.x] = in[(size_t)r * cols + c];
  }
  __syncthreads();
  for (int k = threadIdx.y; k < 32; k += 8) {
    int c = blockIdx.x * 32 + k;
    int r = blockIdx.y * 32 + threadIdx.x;
    if (r < rows && c < cols)
      out[(size_t)c * rows + r] = tile[threadIdx.x][k];
  }
}
void run(int rows, int cols, const float *in, float *out) {
  dim3 threads(16, 16), blocks((cols + 15) / 16, (rows + 15) / 16);
  transpose<<<dim3((cols + 31) / 32, (rows + 31) / 32), dim3(32, 8)>>>(rows, cols, in, out);
}
