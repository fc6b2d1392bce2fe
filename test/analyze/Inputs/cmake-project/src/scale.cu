#include "cuda_mock.h"
#include "config.h"

#ifndef SCALE
#error "SCALE must come from the compilation database"
#endif

__global__ void scale_kernel(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < TILE; ++j)
    if (i * TILE + j < n)
      p[i * TILE + j] *= SCALE;
}
