// A small program for the eval tests: y = a*x + y over 1M floats, launched
// three times, with a checksum of the result on stdout.
#include <cstdio>
#include <vector>

__global__ void scale(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1) // seeded bug: misses the last element
    y[i] = a * x[i] + y[i];
}

int main() {
  const int N = 1 << 20;
  std::vector<float> H(N);
  for (int I = 0; I < N; ++I)
    H[I] = (I % 97) * 0.5f;
  float *X, *Y;
  cudaMalloc(&X, N * sizeof(float));
  cudaMalloc(&Y, N * sizeof(float));
  cudaMemcpy(X, H.data(), N * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(Y, H.data(), N * sizeof(float), cudaMemcpyHostToDevice);
  for (int It = 0; It < 3; ++It)
    scale<<<(N + 255) / 256, 256>>>(N, 2.0f, X, Y);
  cudaMemcpy(H.data(), Y, N * sizeof(float), cudaMemcpyDeviceToHost);
  double Sum = 0;
  for (float V : H)
    Sum += V;
  std::printf("checksum %.1f\n", Sum);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
