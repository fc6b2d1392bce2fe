#include "cuda_mock.h"
// A grid-stride loop written by hand in a template: 16-bit samples, the bin
// from a local, 64 bins from the shift.
template <typename Size>
__global__ void sample_hist(const unsigned short *samples, int *hist, Size n) {
  __shared__ int hist_private[64];
  for (int bin1 = threadIdx.x; bin1 < 64; bin1 += blockDim.x)
    hist_private[bin1] = 0;
  __syncthreads();
  Size scalar_from = 0;
  if (reinterpret_cast<unsigned long long>(samples) % 8 == 0) {
    scalar_from = n / 4 * 4;
    for (Size v = blockIdx.x * blockDim.x + threadIdx.x; v < n / 4; v += blockDim.x * gridDim.x) {
      uint2 samples_v = reinterpret_cast<const uint2 *>(samples)[v];
      const unsigned short *samples_e = reinterpret_cast<const unsigned short *>(&samples_v);
      #pragma unroll
      for (int e = 0; e < 4; ++e) {
        unsigned short s = samples_e[e];
        int b = s >> 10;
        atomicAdd(hist_private + b, 1);
      }
    }
  }
  for (Size k = scalar_from + blockIdx.x * blockDim.x + threadIdx.x; k < n; k += blockDim.x * gridDim.x) {
    unsigned short s = samples[k];
    int b = s >> 10;
    atomicAdd(hist_private + b, 1);
  }
  __syncthreads();
  for (int bin1 = threadIdx.x; bin1 < 64; bin1 += blockDim.x)
    if (hist_private[bin1] != 0)
      atomicAdd(&hist[bin1], hist_private[bin1]);
}
void run(const unsigned short *s, int *h, int n, long big) {
  sample_hist<<<1056, 128>>>(s, h, n);
  sample_hist<<<1056, 128>>>(s, h, big);
}
