#include "cuda_mock.h"
// Byte histogram, one thread per input byte, launched from two places.
__global__ void histogram(int n, const unsigned char *data, unsigned *bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[data[i]], 1u);
}
void run(int n, const unsigned char *d, unsigned *bins) {
  int threads = 256, blocks = (n + threads - 1) / threads;
  histogram<<<blocks, threads>>>(n, d, bins);
}
void run_tail(int n, const unsigned char *d, unsigned *bins) {
  // 13 bytes past a 16-byte boundary: the scalar path at run time.
  histogram<<<(n + 127) / 128, 128>>>(n, d + 13, bins);
}
