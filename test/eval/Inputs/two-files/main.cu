// A program in two files: the kernel and main here, the checksum in
// checksum.cpp (host code), which nvcc must build and link with it.
#include <cstdio>
#include <vector>

double checksum(const std::vector<float> &V);

__global__ void scale(int n, float a, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * y[i];
}

int main() {
  const int N = 1 << 16;
  std::vector<float> H(N, 1.0f);
  float *Y;
  cudaMalloc(&Y, N * sizeof(float));
  cudaMemcpy(Y, H.data(), N * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<(N + 255) / 256, 256>>>(N, 3.0f, Y);
  cudaMemcpy(H.data(), Y, N * sizeof(float), cudaMemcpyDeviceToHost);
  std::printf("checksum %.1f\n", checksum(H));
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
