// Builds only with an include path to include/, -DAPP_N, a pre-included
// pre.h and libhelper linked from lib/. nvcc alone (__NVCC__) needs them:
// the tests give them with --build-arg only, so that the build succeeds
// only if nvcc gets them right, however they are spelled.
#ifdef __NVCC__
#include "params.h"
#ifndef PRE_INCLUDED
#error "build with -include pre.h"
#endif
#else
#define APP_N 4096
#define SCALE 2.0f
#endif
#include <cstdio>
#include <vector>

double helperSum(const float *V, int N);

__global__ void scale(int n, float a, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * y[i];
}

int main() {
  std::vector<float> H(APP_N, 1.0f);
  float *Y;
  cudaMalloc(&Y, APP_N * sizeof(float));
  cudaMemcpy(Y, H.data(), APP_N * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<(APP_N + 255) / 256, 256>>>(APP_N, SCALE, Y);
  cudaMemcpy(H.data(), Y, APP_N * sizeof(float), cudaMemcpyDeviceToHost);
  std::printf("sum %.1f\n", helperSum(H.data(), APP_N));
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
