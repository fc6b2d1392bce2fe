#include "cuda_mock.h"
// A template over the element type with pointer offsets into a batch.
template <typename T>
__global__ void batch_transpose(const T *in, T *out, int n, int m,
                                int batch) {
  const T *a = in + (size_t)batch * n * m;
  T *b = out + (size_t)batch * n * m;
  __shared__ T tile[32][33];
  for (int k = threadIdx.y; k < 32; k += 8) {
    unsigned col = blockIdx.x * 32 + threadIdx.x;
    unsigned row = blockIdx.y * 32 + k;
    if (col < m && row < n)
      tile[k][threadIdx.x] = a[row * m + col];
  }
  __syncthreads();
  for (int k = threadIdx.y; k < 32; k += 8) {
    unsigned col = blockIdx.x * 32 + k;
    unsigned row = blockIdx.y * 32 + threadIdx.x;
    if (col < m && row < n)
      b[col * n + row] = tile[threadIdx.x][k];
  }
}
void run(const int *in, int *out, int n, int m) {
  batch_transpose<<<dim3((m + 31) / 32, (n + 31) / 32), dim3(32, 8)>>>(in, out, n, m, 0);
}
