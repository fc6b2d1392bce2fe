// reduction-style: the sum of a large vector, with a shared-memory tree per
// block and one atomicAdd per block. Integers keep the check exact.
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                  \
                   cudaGetErrorString(err_));                                  \
      return 1;                                                                \
    }                                                                          \
  } while (0)

#define BLOCK 256

__global__ void block_sum(const int *in, unsigned long long *total, int n) {
  __shared__ unsigned long long total_private[1];
  for (int bin = threadIdx.x; bin < 1; bin += blockDim.x)
    total_private[bin] = 0;
  __syncthreads();
  __shared__ int partial[BLOCK];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    atomicAdd(total_private, (unsigned long long)partial[0]);
  __syncthreads();
  for (int bin = threadIdx.x; bin < 1; bin += blockDim.x)
    if (total_private[bin] != 0)
      atomicAdd(&total[bin], total_private[bin]);
}

int main() {
  const int n = 1 << 26;
  std::vector<int> h(n);
  unsigned long long want = 0;
  for (int i = 0; i < n; ++i) {
    h[i] = (int)(((long long)i * 37) % 101);
    want += h[i];
  }
  int *in;
  unsigned long long *total;
  CHECK(cudaMalloc(&in, n * sizeof(int)));
  CHECK(cudaMalloc(&total, sizeof(unsigned long long)));
  CHECK(cudaMemcpy(in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(total, 0, sizeof(unsigned long long)));
  block_sum<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(in, total, n);
  CHECK(cudaGetLastError());
  unsigned long long got = 0;
  CHECK(cudaMemcpy(&got, total, sizeof(got), cudaMemcpyDeviceToHost));
  cudaFree(in);
  cudaFree(total);
  bool ok = got == want;
  std::printf("reduction: %s (sum %llu, expected %llu)\n", ok ? "PASS" : "FAIL",
              got, want);
  return ok ? 0 : 1;
}
