#include "hostile.h"

#define BLOCK 256

__global__ void blockSum(const float *in, float *out, int n) {
  __shared__ float s[BLOCK];
  int t = threadIdx.x;
  int i = blockIdx.x * BLOCK + t;
  s[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
#pragma unroll
  for (int w = BLOCK / 2; w > 0; w /= 2) {
    if (t < w)
      s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0)
    out[blockIdx.x] = s[0];
}

int main() {
  const int n = 1 << 16, blocks = n / BLOCK;
  static float h[1 << 16], o[(1 << 16) / BLOCK];
  for (int i = 0; i < n; ++i)
    h[i] = (float)(i % 7);
  float *in, *out;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, blocks * sizeof(float));
  cudaMemcpy(in, h, n * sizeof(float), cudaMemcpyHostToDevice);
  blockSum<<<blocks, BLOCK>>>(in, out, n);
  cudaDeviceSynchronize();
  cudaMemcpy(o, out, blocks * sizeof(float), cudaMemcpyDeviceToHost);
  double sum = 0;
  for (int i = 0; i < blocks; ++i)
    sum += o[i];
  printf("sum %.1f\n", sum);
  cudaFree(in);
  cudaFree(out);
  return 0;
}
