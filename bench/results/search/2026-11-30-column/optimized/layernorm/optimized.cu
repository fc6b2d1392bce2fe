// layernorm (naive): per-row layer normalization of an R x C matrix with
// gain and bias; one thread per row, passes for mean, variance, output.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
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

// Deterministic input generator (the same in every program of the suite).
static inline float frand(unsigned long long i, unsigned seed) {
  unsigned h = (unsigned)(i * 2654435761ULL) ^ (seed * 0x9E3779B9u);
  h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
  return (float)(h >> 8) * (1.0f / 16777216.0f);
}

// Times op() with CUDA events: two warm-up runs, then timed runs; prints the
// median as a BENCH line that bench/run.py reads.
template <class F>
static void bench(const char* name, const char* variant, const char* size, F op) {
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  float first = 0.f;
  for (int r = 0; r < 2; ++r) {
    CK(cudaEventRecord(t0));
    op();
    CK(cudaEventRecord(t1));
    CK(cudaEventSynchronize(t1));
    CK(cudaEventElapsedTime(&first, t0, t1));
  }
  CK(cudaGetLastError());
  int runs = first > 50.f ? 5 : (first > 5.f ? 10 : 30);
  std::vector<float> ms;
  for (int r = 0; r < runs; ++r) {
    float t = 0.f;
    CK(cudaEventRecord(t0));
    op();
    CK(cudaEventRecord(t1));
    CK(cudaEventSynchronize(t1));
    CK(cudaEventElapsedTime(&t, t0, t1));
    ms.push_back(t);
  }
  CK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  printf("BENCH name=%s variant=%s size=%s kernel_ms=%.5f min_ms=%.5f runs=%d\n",
         name, variant, size, ms[ms.size() / 2], ms[0], runs);
  CK(cudaEventDestroy(t0));
  CK(cudaEventDestroy(t1));
}

static int report(bool ok, double err) {
  printf("CHECK %s max_err=%.3e\n", ok ? "PASS" : "FAIL", err);
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

static const int R = 32768, C = 4096;  // problem size: rows, columns
#define EPS 1e-5f

__global__ void layernorm(int rows, int cols, const float* in, const float* gamma, const float* beta, float* out) {
  int row = blockIdx.x;
  int lane = threadIdx.x;
  if (row < rows) {
    const float* x = in + (size_t)row * cols;
    float* y = out + (size_t)row * cols;
    float mean = 0.f;
    float x_reg[16];
    #pragma unroll
    for (int k = 0; k < 16; ++k) if (int j = lane + k * 256; j < cols) x_reg[k] = x[j];
    #pragma unroll
    for (int k = 0; k < 16; ++k) if (int j = lane + k * 256; j < cols) mean += x_reg[k];
    for (int offset = 16; offset > 0; offset /= 2) mean += __shfl_xor_sync(0xffffffffu, mean, offset);
    {
      __shared__ float mean_warps[8];
      if (lane % 32 == 0) mean_warps[lane / 32] = mean;
      __syncthreads();
      mean = mean_warps[0];
      for (int w = 1; w < 8; ++w) mean += mean_warps[w];
    }
    mean /= cols;
    float var = 0.f;
    #pragma unroll
    for (int k = 0; k < 16; ++k) if (int j = lane + k * 256; j < cols) var += (x_reg[k] - mean) * (x_reg[k] - mean);
    for (int offset = 16; offset > 0; offset /= 2) var += __shfl_xor_sync(0xffffffffu, var, offset);
    {
      __shared__ float var_warps[8];
      if (lane % 32 == 0) var_warps[lane / 32] = var;
      __syncthreads();
      var = var_warps[0];
      for (int w = 1; w < 8; ++w) var += var_warps[w];
    }
    var /= cols;
    float inv = 1.f / sqrtf(var + EPS);
    #pragma unroll
    for (int k = 0; k < 16; ++k) if (int j = lane + k * 256; j < cols) y[j] = (x_reg[k] - mean) * inv * __ldg(&gamma[j]) + __ldg(&beta[j]);
  }
}

int main() {
  const size_t cells = (size_t)R * C;
  std::vector<float> hin(cells), hg(C), hbeta(C);
  for (size_t i = 0; i < cells; ++i) hin[i] = frand(i, 70) * 4.f - 1.f;
  for (int j = 0; j < C; ++j) { hg[j] = 0.5f + frand(j, 71); hbeta[j] = frand(j, 72) - 0.5f; }
  float *in, *out, *g, *b;
  CK(cudaMalloc(&in, sizeof(float) * cells));
  CK(cudaMalloc(&out, sizeof(float) * cells));
  CK(cudaMalloc(&g, sizeof(float) * C));
  CK(cudaMalloc(&b, sizeof(float) * C));
  CK(cudaMemcpy(in, hin.data(), sizeof(float) * cells, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(g, hg.data(), sizeof(float) * C, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hbeta.data(), sizeof(float) * C, cudaMemcpyHostToDevice));
  int threads = 256, blocks = (R + threads - 1) / threads;
  bench("layernorm", "naive", "32768x4096", [&] { layernorm<<<R, 256>>>(R, C, in, g, b, out); });
  std::vector<float> got(cells);
  CK(cudaMemcpy(got.data(), out, sizeof(float) * cells, cudaMemcpyDeviceToHost));
  double err = 0;
  for (int s = 0; s < 258; ++s) {
    int r = s == 256 ? 0 : s == 257 ? R - 1 : (int)(frand(s, 73) * R);
    const float* x = &hin[(size_t)r * C];
    double mean = 0, var = 0;
    for (int j = 0; j < C; ++j) mean += x[j];
    mean /= C;
    for (int j = 0; j < C; ++j) var += (x[j] - mean) * (x[j] - mean);
    var /= C;
    double inv = 1.0 / sqrt(var + 1e-5);
    for (int j = 0; j < C; ++j) {
      double want = (x[j] - mean) * inv * hg[j] + hbeta[j];
      err = std::max(err, fabs(got[(size_t)r * C + j] - want));
    }
  }
  return report(err < 1e-3, err);
}
