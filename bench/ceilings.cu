// Measures the ceilings the roofline uses, on the GPU the suite runs on:
//  - DRAM bandwidth: a grid-stride float4 copy of 2 GiB (bytes read + written),
//    and cudaMemcpy device-to-device for comparison; the larger is the ceiling.
//  - FP32 rate: a kernel of independent FMA chains (2 flops per FMA).
//  - Tensor-core rate (informational): cublasGemmEx in bf16, 8192^3.
// Prints one "CEILING key=value ..." line that bench/run.py reads.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#define CK(call)                                                              \
  do {                                                                        \
    cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) {                                                  \
      fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_),     \
              __FILE__, __LINE__);                                            \
      exit(2);                                                                \
    }                                                                         \
  } while (0)

__global__ void copy4(size_t n4, const float4* __restrict__ src, float4* __restrict__ dst) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) dst[i] = src[i];
}

#define CHAINS 8
__global__ void fma_chains(int iters, float a, float b, float* out) {
  float v[CHAINS];
  #pragma unroll
  for (int c = 0; c < CHAINS; ++c) v[c] = threadIdx.x * 1e-3f + c;
  for (int i = 0; i < iters; ++i) {
    #pragma unroll
    for (int c = 0; c < CHAINS; ++c) v[c] = fmaf(v[c], a, b);
  }
  float s = 0.f;
  #pragma unroll
  for (int c = 0; c < CHAINS; ++c) s += v[c];
  if (s == 12345.678f) out[0] = s;  // keeps the chains alive
}

template <class F>
static float median_ms(int runs, F op) {
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  op();
  op();
  std::vector<float> ms;
  for (int r = 0; r < runs; ++r) {
    CK(cudaEventRecord(t0));
    op();
    CK(cudaEventRecord(t1));
    CK(cudaEventSynchronize(t1));
    float t;
    CK(cudaEventElapsedTime(&t, t0, t1));
    ms.push_back(t);
  }
  CK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("GPU %s sm_%d%d SMs=%d L2=%dMB\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount,
         prop.l2CacheSize >> 20);

  // DRAM: 2 GiB source, 2 GiB destination.
  const size_t bytes = (size_t)2 << 30;
  float *src, *dst;
  CK(cudaMalloc(&src, bytes));
  CK(cudaMalloc(&dst, bytes));
  CK(cudaMemset(src, 1, bytes));
  size_t n4 = bytes / 16;
  int blocks = prop.multiProcessorCount * 8;
  float t_kernel = median_ms(20, [&] { copy4<<<blocks, 256>>>(n4, (const float4*)src, (float4*)dst); });
  float t_memcpy = median_ms(20, [&] { CK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice)); });
  double bw_kernel = 2.0 * bytes / (t_kernel * 1e-3) / 1e9;
  double bw_memcpy = 2.0 * bytes / (t_memcpy * 1e-3) / 1e9;
  CK(cudaFree(src));
  CK(cudaFree(dst));

  // FP32: 132 SMs x 8 blocks x 256 threads x CHAINS x iters FMAs.
  float* out;
  CK(cudaMalloc(&out, sizeof(float)));
  const int iters = 1 << 14;
  int fblocks = prop.multiProcessorCount * 16;
  float t_fma = median_ms(10, [&] { fma_chains<<<fblocks, 256>>>(iters, 0.999999f, 1e-6f, out); });
  double fp32 = 2.0 * fblocks * 256.0 * CHAINS * iters / (t_fma * 1e-3) / 1e9;

  // Tensor cores, bf16 in, fp32 accumulate (informational; no kernel of the suite uses it).
  double bf16 = 0;
  {
    const int n = 8192;
    __nv_bfloat16 *a, *b, *c;
    CK(cudaMalloc(&a, sizeof(__nv_bfloat16) * n * n));
    CK(cudaMalloc(&b, sizeof(__nv_bfloat16) * n * n));
    CK(cudaMalloc(&c, sizeof(__nv_bfloat16) * n * n));
    CK(cudaMemset(a, 0x3c, sizeof(__nv_bfloat16) * n * n));
    CK(cudaMemset(b, 0x3c, sizeof(__nv_bfloat16) * n * n));
    cublasHandle_t h;
    if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) {
      const float one = 1.f, zero = 0.f;
      bool ok = true;
      float t = median_ms(10, [&] {
        if (cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n, b, CUDA_R_16BF, n, &zero, c,
                         CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
          ok = false;
      });
      if (ok) bf16 = 2.0 * n * (double)n * n / (t * 1e-3) / 1e9;
      cublasDestroy(h);
    }
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(c));
  }
  printf("CEILING dram_GBps=%.1f dram_copy_kernel_GBps=%.1f dram_memcpy_GBps=%.1f fp32_GFLOPs=%.1f bf16_tc_GFLOPs=%.1f\n",
         std::max(bw_kernel, bw_memcpy), bw_kernel, bw_memcpy, fp32, bf16);
  return 0;
}
