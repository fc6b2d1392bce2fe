#include "cuda_mock.h"
// Operator overloads in scope (as cuda_fp16.h declares them) make `k < n`
// and `k += ...` operator calls in the template; the loop is the same.
struct Half { unsigned short bits; };
__device__ bool operator<(Half a, Half b);
__device__ Half &operator+=(Half &a, Half b);
template <typename Size>
__global__ void hist(const unsigned char *data, unsigned *bins, Size n) {
  __shared__ unsigned int bins_private[16];
  for (int bin = threadIdx.x; bin < 16; bin += blockDim.x)
    bins_private[bin] = 0;
  __syncthreads();
  Size scalar_from = 0;
  if (reinterpret_cast<unsigned long long>(data) % 4 == 0) {
    scalar_from = n / 4 * 4;
    for (Size v = blockIdx.x * blockDim.x + threadIdx.x; v < n / 4; v += blockDim.x * gridDim.x) {
      unsigned int data_v = reinterpret_cast<const unsigned int *>(data)[v];
      const unsigned char *data_e = reinterpret_cast<const unsigned char *>(&data_v);
      #pragma unroll
      for (int e = 0; e < 4; ++e) {
        unsigned char c = data_e[e];
        atomicAdd(&bins_private[c >> 4], 1u);
      }
    }
  }
  for (Size k = scalar_from + blockIdx.x * blockDim.x + threadIdx.x; k < n; k += blockDim.x * gridDim.x) {
    unsigned char c = data[k];
    atomicAdd(&bins_private[c >> 4], 1u);
  }
  __syncthreads();
  for (int bin = threadIdx.x; bin < 16; bin += blockDim.x)
    if (bins_private[bin] != 0)
      atomicAdd(&bins[bin], bins_private[bin]);
}
void run(const unsigned char *d, unsigned *b, long n) {
  hist<<<512, 256>>>(d, b, n);
}
