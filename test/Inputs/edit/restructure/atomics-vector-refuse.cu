#include "cuda_mock.h"
// Near misses for privatize-atomics with wide loads.
__global__ void strided(const unsigned char *d, unsigned *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[d[2 * i]], 1u);
}
__global__ void index_used(const unsigned char *d, unsigned *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[(d[i] + i) & 255], 1u);
}
struct Pixel { unsigned char r, g, b; };
__global__ void pixels(const Pixel *px, unsigned *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[px[i].r], 1u);
}
__global__ void wide(const unsigned long long *key, unsigned *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[key[i] & 255], 1u);
}
__global__ void writes(const unsigned char *d, unsigned *bins,
                       unsigned char *seen, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(&bins[d[i]], 1u);
    seen[i] = 1;
  }
}
__global__ void counts(const unsigned char *d, unsigned *bins, int n) {
  int hits = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x) {
    atomicAdd(&bins[d[i]], 1u);
    hits += d[i] == 0;
  }
}
template <typename T>
__global__ void generic(const T *d, unsigned *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned b = d[i] & 255;
    atomicAdd(&bins[b], 1u);
  }
}
__global__ void sliding(const unsigned char *d, unsigned *bins, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 32)
    atomicAdd(&bins[d[i]], 1u);
}
void run(const unsigned char *d, unsigned *bins, int n) {
  generic<<<n / 256, 256>>>(d, bins, n);
}
