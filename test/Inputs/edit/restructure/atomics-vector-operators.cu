#include "cuda_mock.h"
// Operator overloads in scope (as cuda_fp16.h declares them) make `k < n`
// and `k += ...` operator calls in the template; the loop is the same.
struct Half { unsigned short bits; };
__device__ bool operator<(Half a, Half b);
__device__ Half &operator+=(Half &a, Half b);
template <typename Size>
__global__ void hist(const unsigned char *data, unsigned *bins, Size n) {
  for (Size k = blockIdx.x * blockDim.x + threadIdx.x; k < n;
       k += blockDim.x * gridDim.x) {
    unsigned char c = data[k];
    atomicAdd(&bins[c >> 4], 1u);
  }
}
void run(const unsigned char *d, unsigned *b, long n) {
  hist<<<512, 256>>>(d, b, n);
}
