#include "cuda_mock.h"

__device__ float square(float v) { return v * v; }
float hostScale(float v) { return v * 2.0f; }
__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

__global__ void other(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = square(p[i]);
}

int main() {
  int n = 1 << 20;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
  other<<<(n + 255) / 256, 256>>>(y, n);
  cudaDeviceSynchronize();
  return 0;
}
