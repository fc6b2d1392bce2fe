#include "hostile.h"

#define N_ELEMS (1 << 16)
#define CHECK(call) (call)
#define SCALE 2.0f

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
  const int n = N_ELEMS;
  static float hx[N_ELEMS], hy[N_ELEMS];
  for (int i = 0; i < n; ++i) {
    hx[i] = (float)(i % 17);
    hy[i] = (float)(i % 5);
  }
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMemcpy(x, hx, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(y, hy, n * sizeof(float), cudaMemcpyHostToDevice);
  saxpy<<<(n + 255) / 256, 256>>>(n, SCALE, x, y);
  other<<<(n + 255) / 256, 256>>>(y, n);
  CHECK(cudaDeviceSynchronize());
  cudaMemcpy(hy, y, n * sizeof(float), cudaMemcpyDeviceToHost);
  double sum = 0;
  for (int i = 0; i < n; ++i)
    sum += hy[i];
  printf("checksum %.1f\n", sum);
  cudaFree(x);
  cudaFree(y);
  return 0;
}
