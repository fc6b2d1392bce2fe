// A float block reduction with a warp-synchronous tail and a per-block
// store (the classic "reduce5" shape), as a whole program for GPU
// evaluation of warp-reduce (scripts/gpu-warp-reduce.sh).
#include <cmath>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

__global__ void block_sums(const float *in, float *out, int n) {
  __shared__ float sdata[512 / 32];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + tid;
  float v = i < n ? in[i] : 0.0f;
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffff, v, off);
  if (tid % 32 == 0)
    sdata[tid / 32] = v;
  __syncthreads();
  if (tid < 32) {
    v = tid < blockDim.x / 32 ? sdata[tid] : 0;
    for (int off = 16; off > 0; off /= 2)
      v += __shfl_down_sync(0xffffffff, v, off);
  }
  if (tid == 0)
    out[blockIdx.x] = v;
}

int main() {
  const int n = 1 << 24, block = 512, blocks = (n + block - 1) / block;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i)
    h[i] = (float)((i * 7919) % 1000) / 1000.0f;
  float *in, *out;
  if (cudaMalloc(&in, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&out, blocks * sizeof(float)) != cudaSuccess)
    return 1;
  cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  block_sums<<<blocks, block>>>(in, out, n);
  std::vector<float> got(blocks);
  cudaMemcpy(got.data(), out, blocks * sizeof(float), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int b = 0; b < blocks; ++b) {
    double want = 0;
    for (int j = b * block; j < (b + 1) * block && j < n; ++j)
      want += h[j];
    bad += std::fabs(got[b] - want) > 1e-3 * (1 + std::fabs(want));
  }
  cudaFree(in);
  cudaFree(out);
  std::printf("block_sums: %s (%d of %d blocks off)\n", bad ? "FAIL" : "PASS",
              bad, blocks);
  return bad ? 1 : 0;
}
