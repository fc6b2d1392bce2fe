#include "cuda_mock.h"
// Byte histogram, one thread per input byte: the bins are bounded by the
// index's type (unsigned char).
__global__ void histogram(int n, const unsigned char *data, unsigned *bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[data[i]], 1u);
}
void run(int n, const unsigned char *d, unsigned *bins) {
  int threads = 256, blocks = (n + threads - 1) / threads;
  histogram<<<blocks, threads>>>(n, d, bins);
}
