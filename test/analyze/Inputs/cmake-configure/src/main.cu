// SCALE comes from the build (target_compile_definitions) and cfg.h from
// its include path: parsed without them, this file does not compile.
#include "cfg.h"

void step(float *x, int n);

__global__ void scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= SCALE;
}

int main() {
  float *x;
  cudaMalloc(&x, 1024 * sizeof(float));
  scale<<<1024 / BLOCK, BLOCK>>>(x, 1024);
  step(x, 1024);
  cudaDeviceSynchronize();
  return 0;
}
