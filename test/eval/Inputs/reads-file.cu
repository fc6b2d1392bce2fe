// A program that reads its input from a file named on its command line
// (relative paths as a user would give them) and scales it on the GPU;
// exits 2 when the file cannot be opened.
#include <cstdio>
#include <vector>

__global__ void scale(int n, float a, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * y[i];
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s VALUES.txt\n", argv[0]);
    return 2;
  }
  std::FILE *F = std::fopen(argv[1], "r");
  if (!F) {
    std::fprintf(stderr, "cannot open '%s'\n", argv[1]);
    return 2;
  }
  std::vector<float> H;
  float V;
  while (std::fscanf(F, "%f", &V) == 1)
    H.push_back(V);
  std::fclose(F);
  int N = static_cast<int>(H.size());
  float *Y;
  cudaMalloc(&Y, N * sizeof(float));
  cudaMemcpy(Y, H.data(), N * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<(N + 255) / 256, 256>>>(N, 3.0f, Y);
  cudaMemcpy(H.data(), Y, N * sizeof(float), cudaMemcpyDeviceToHost);
  double Sum = 0;
  for (float X : H)
    Sum += X;
  std::printf("%d values, sum %.1f\n", N, Sum);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
