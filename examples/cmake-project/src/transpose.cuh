// out = in^T for a rows x cols matrix: the kernel and its launcher, in a
// header that transpose.cu includes.
#pragma once
#include <cuda_runtime.h>

__global__ void transpose(float *out, const float *in, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[r * cols + c];
}

inline cudaError_t launchTranspose(float *out, const float *in, int rows,
                                   int cols) {
  dim3 block(16, 16);
  dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
  transpose<<<grid, block>>>(out, in, rows, cols);
  return cudaGetLastError();
}
