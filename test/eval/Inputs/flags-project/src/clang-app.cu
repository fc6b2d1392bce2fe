// Builds only with an include path to include/ and -DN: the flags must
// reach nvcc as well as the parse.
#include "params.h"
#include <cstdio>

__global__ void scale(int n, float a, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * y[i];
}

int main() {
  float *Y;
  cudaMalloc(&Y, APP_N * sizeof(float));
  cudaMemset(Y, 0, APP_N * sizeof(float));
  scale<<<(APP_N + 255) / 256, 256>>>(APP_N, SCALE, Y);
  std::printf("done\n");
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
