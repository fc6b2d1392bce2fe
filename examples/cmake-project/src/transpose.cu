#include "transpose.cuh"
#include <cuda_runtime.h>

// Transposes the rows x cols matrix in (device memory) into out.
cudaError_t runTranspose(float *out, const float *in, int rows, int cols) {
  dim3 block(16, 16);
  dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
  transpose<<<grid, block>>>(out, in, rows, cols);
  return cudaGetLastError();
}
