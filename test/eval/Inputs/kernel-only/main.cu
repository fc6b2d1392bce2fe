// The host side of kernels.cu: main() and nothing on the GPU of its own.
#include <cstdio>

void launchScale(int n, float a, float *y);

int main() {
  const int N = 1 << 16;
  float *Y;
  cudaMalloc(&Y, N * sizeof(float));
  cudaMemset(Y, 0, N * sizeof(float));
  launchScale(N, 2.0f, Y);
  std::printf("done\n");
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
