#include "cuda_mock.h"
// Byte histogram, one thread per input byte: the bins are bounded by the
// index's type (unsigned char).
__global__ void histogram(int n, const unsigned char *data, unsigned *bins) {
  __shared__ unsigned int bins_private[8][256];
  for (int bin = threadIdx.x; bin < 2048; bin += blockDim.x)
    bins_private[bin / 256][bin % 256] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&bins_private[threadIdx.x / 32][data[i]], 1u);
  __syncthreads();
  for (int bin = threadIdx.x; bin < 256; bin += blockDim.x) {
    unsigned int sum = 0;
    for (int w = 0; w < 8; ++w)
      sum += bins_private[w][bin];
    if (sum != 0)
      atomicAdd(&bins[bin], sum);
  }
}
void run(int n, const unsigned char *d, unsigned *bins) {
  int threads = 256, blocks = (n + threads - 1) / threads;
  histogram<<<blocks < 528 ? blocks : 528, 256>>>(n, d, bins);
}
