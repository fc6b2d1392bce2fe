// The CUDA samples' first reduction, as they write it: dynamic shared
// memory through a SharedMemory<T> helper and barriers through cooperative
// groups. A complete program (its sum checked on the host), so `eval
// --against` can verify a rewrite on the GPU.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
namespace cg = cooperative_groups;

template <class T> struct SharedMemory {
  __device__ inline operator T *() {
    extern __shared__ int __smem[];
    return (T *)__smem;
  }
};

template <class T>
__global__ void reduce0(const T *g_idata, T *g_odata, unsigned int n) {
  cg::thread_block cta = cg::this_thread_block();
  T *sdata = SharedMemory<T>();
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? g_idata[i] : 0;
  cg::sync(cta);
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    cg::sync(cta);
  }
  if (tid == 0)
    g_odata[blockIdx.x] = sdata[0];
}

int main() {
  const unsigned n = 1 << 24, threads = 256, blocks = (n + threads - 1) / threads;
  std::vector<int> h(n);
  long long want = 0;
  for (unsigned k = 0; k < n; ++k) {
    h[k] = int(k % 7) - 3;
    want += h[k];
  }
  int *in, *partial;
  cudaMalloc(&in, n * sizeof(int));
  cudaMalloc(&partial, blocks * sizeof(int));
  cudaMemcpy(in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  for (int rep = 0; rep < 3; ++rep)
    reduce0<int><<<blocks, threads, threads * sizeof(int)>>>(in, partial, n);
  std::vector<int> p(blocks);
  cudaMemcpy(p.data(), partial, blocks * sizeof(int), cudaMemcpyDeviceToHost);
  long long got = 0;
  for (int v : p)
    got += v;
  printf("sum %lld (expected %lld)\n", got, want);
  cudaFree(in);
  cudaFree(partial);
  return got == want ? 0 : 1;
}
