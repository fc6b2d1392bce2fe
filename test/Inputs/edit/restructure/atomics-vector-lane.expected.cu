#include "cuda_mock.h"
// Byte histogram, one thread per input byte, launched from two places.
__global__ void histogram(int n, const unsigned char *data, unsigned *bins) {
  __shared__ unsigned int bins_private[256][32];
  for (int bin = threadIdx.x; bin < 8192; bin += blockDim.x)
    bins_private[bin / 32][bin % 32] = 0;
  __syncthreads();
  int scalar_from = 0;
  if (reinterpret_cast<unsigned long long>(data) % 16 == 0) {
    scalar_from = n / 16 * 16;
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n / 16; v += blockDim.x * gridDim.x) {
      uint4 data_v = reinterpret_cast<const uint4 *>(data)[v];
      const unsigned char *data_e = reinterpret_cast<const unsigned char *>(&data_v);
      #pragma unroll
      for (int e = 0; e < 16; ++e)
        atomicAdd(&bins_private[data_e[e]][threadIdx.x % 32], 1u);
    }
  }
  for (int i = scalar_from + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&bins_private[data[i]][threadIdx.x % 32], 1u);
  __syncthreads();
  for (int bin = threadIdx.x; bin < 256; bin += blockDim.x) {
    unsigned int sum = 0;
    for (int lane = 0; lane < 32; ++lane)
      sum += bins_private[bin][(lane + bin) % 32];
    if (sum != 0)
      atomicAdd(&bins[bin], sum);
  }
}
void run(int n, const unsigned char *d, unsigned *bins) {
  int threads = 256, blocks = (n + threads - 1) / threads;
  histogram<<<blocks < 1056 ? blocks : 1056, threads>>>(n, d, bins);
}
void run_tail(int n, const unsigned char *d, unsigned *bins) {
  // 13 bytes past a 16-byte boundary: the scalar path at run time.
  histogram<<<((n + 127) / 128) < 1056 ? ((n + 127) / 128) : 1056, 128>>>(n, d + 13, bins);
}
