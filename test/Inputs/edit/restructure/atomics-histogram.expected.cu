#include "cuda_mock.h"
// Byte histogram, one thread per input byte: the bins are bounded by the
// index's type (unsigned char).
__global__ void histogram(int n, const unsigned char *data, unsigned *bins) {
  __shared__ unsigned int bins_private[256];
  for (int bin = threadIdx.x; bin < 256; bin += blockDim.x)
    bins_private[bin] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&bins_private[data[i]], 1u);
  __syncthreads();
  for (int bin = threadIdx.x; bin < 256; bin += blockDim.x)
    if (bins_private[bin] != 0)
      atomicAdd(&bins[bin], bins_private[bin]);
}
void run(int n, const unsigned char *d, unsigned *bins) {
  int threads = 256, blocks = (n + threads - 1) / threads;
  histogram<<<blocks < 1056 ? blocks : 1056, threads>>>(n, d, bins);
}
