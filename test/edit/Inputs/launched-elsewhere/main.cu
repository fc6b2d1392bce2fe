#include "cuda_mock.h"
#include "transpose.cuh"

int main() {
  const int rows = 1024, cols = 1024;
  float *in, *out;
  cudaMalloc(&in, rows * cols * sizeof(float));
  cudaMalloc(&out, rows * cols * sizeof(float));
  dim3 block(16, 16);
  dim3 grid((cols + 15) / 16, (rows + 15) / 16);
  transpose<<<grid, block>>>(out, in, rows, cols);
  cudaDeviceSynchronize();
  return 0;
}
