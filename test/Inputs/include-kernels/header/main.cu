// A program whose kernels live in a project header found through -Iinclude,
// as many real projects keep them (Rodinia's hotspot-like stencil and a
// scaling pass).
#include "cuda_mock.h"
#include "kernels.cuh"
#include <stdio.h>
#include <stdlib.h>

int main() {
  const int n = 256, steps = 4;
  size_t bytes = sizeof(float) * n * n;
  float *t = (float *)malloc(bytes), *p = (float *)malloc(bytes);
  for (int i = 0; i < n * n; ++i) {
    t[i] = 300.0f + (i % 17);
    p[i] = 0.5f * (i % 5);
  }
  float *d_t, *d_p, *d_out;
  cudaMalloc((void **)&d_t, bytes);
  cudaMalloc((void **)&d_p, bytes);
  cudaMalloc((void **)&d_out, bytes);
  cudaMemcpy(d_t, t, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(d_p, p, bytes, cudaMemcpyHostToDevice);
  for (int s = 0; s < steps; ++s) {
    heat_step<<<(n * n + 255) / 256, 256>>>(d_t, d_p, d_out, n);
    float *tmp = d_t;
    d_t = d_out;
    d_out = tmp;
  }
  scale_power<<<(n * n + 255) / 256, 256>>>(d_p, n * n, 0.9f);
  cudaMemcpy(t, d_t, bytes, cudaMemcpyDeviceToHost);
  double sum = 0;
  for (int i = 0; i < n * n; ++i)
    sum += t[i];
  printf("checksum %.3f\n", sum);
  cudaFree(d_t);
  cudaFree(d_p);
  cudaFree(d_out);
  free(t);
  free(p);
  return 0;
}
