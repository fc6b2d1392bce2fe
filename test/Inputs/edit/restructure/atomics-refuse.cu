#include "cuda_mock.h"
// Near misses for privatize-atomics.
__global__ void unknown_bins(const int *key, int *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[key[i]], 1);
}
__global__ void too_large(const unsigned *key, unsigned *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[key[i] % 100000u], 1u);
}
__global__ void uses_old(const unsigned char *key, int *bins, int *slot, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) slot[i] = atomicAdd(&bins[key[i]], 1);
}
__global__ void also_read(const unsigned char *key, int *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && bins[0] < 1000) atomicAdd(&bins[key[i]], 1);
}
__global__ void maximum(const unsigned char *key, int *best, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicMax(&best[key[i] & 7], i);
}
