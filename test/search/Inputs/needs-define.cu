// A program that nvcc builds only when told its size (-DSIZE=N), as a
// program that needs a library needs -lNAME: what --build-arg is for.
#include <cstdio>
#if defined(__NVCC__) && !defined(SIZE)
#error "build with -DSIZE=N"
#endif
#ifndef SIZE
#define SIZE 4096
#endif

__global__ void twice(float *x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < SIZE)
    x[i] = 2.0f * x[i];
}

int main() {
  float *X;
  cudaMalloc(&X, SIZE * sizeof(float));
  cudaMemset(X, 0, SIZE * sizeof(float));
  twice<<<(SIZE + 255) / 256, 256>>>(X);
  float H = 1;
  cudaMemcpy(&H, X, sizeof(float), cudaMemcpyDeviceToHost);
  std::printf("%.1f\n", H);
  return 0;
}
