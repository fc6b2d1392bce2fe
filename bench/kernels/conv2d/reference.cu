// conv2d (reference, hand-optimized): the filter lives in constant memory; a
// 32x8 thread block stages a (32+K-1) x (32+K-1) input tile in shared memory
// and each thread computes 4 outputs down a column, reusing the filter row
// and the staged input from registers/shared memory.
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

static const int H = 8192, W = 8192;  // problem size: image height, width
#define K 7                            // filter size
#define RAD (K / 2)
#define TW 32
#define TH 32
#define TY 8
#define PER (TH / TY)

__constant__ float c_filt[K * K];

__global__ void __launch_bounds__(TW * TY) conv2d_tiled(int h, int w, const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tile[TH + K - 1][TW + K - 1 + 1];
  int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
  int tid = threadIdx.y * TW + threadIdx.x;
  const int tw = TW + K - 1, th = TH + K - 1;
  for (int idx = tid; idx < tw * th; idx += TW * TY) {
    int ty = idx / tw, tx = idx % tw;
    int iy = y0 + ty - RAD, ix = x0 + tx - RAD;
    tile[ty][tx] = (iy >= 0 && iy < h && ix >= 0 && ix < w) ? __ldg(&in[(size_t)iy * w + ix]) : 0.f;
  }
  __syncthreads();
  int tx = threadIdx.x, ty0 = threadIdx.y * PER;
  float acc[PER];
  #pragma unroll
  for (int p = 0; p < PER; ++p) acc[p] = 0.f;
  #pragma unroll
  for (int r = 0; r < PER + K - 1; ++r) {
    float row[K];
    #pragma unroll
    for (int kx = 0; kx < K; ++kx) row[kx] = tile[ty0 + r][tx + kx];
    #pragma unroll
    for (int p = 0; p < PER; ++p) {
      int ky = r - p;
      if (ky >= 0 && ky < K) {
        #pragma unroll
        for (int kx = 0; kx < K; ++kx) acc[p] += row[kx] * c_filt[ky * K + kx];
      }
    }
  }
  int x = x0 + tx;
  #pragma unroll
  for (int p = 0; p < PER; ++p) {
    int y = y0 + ty0 + p;
    if (x < w && y < h) out[(size_t)y * w + x] = acc[p];
  }
}

int main() {
  const size_t cells = (size_t)H * W;
  std::vector<float> hin(cells), hf(K * K);
  for (size_t i = 0; i < cells; ++i) hin[i] = frand(i, 110) * 2.f - 1.f;
  for (int i = 0; i < K * K; ++i) hf[i] = frand(i, 111) - 0.5f;
  float *in, *out;
  CK(cudaMalloc(&in, sizeof(float) * cells));
  CK(cudaMalloc(&out, sizeof(float) * cells));
  CK(cudaMemcpy(in, hin.data(), sizeof(float) * cells, cudaMemcpyHostToDevice));
  CK(cudaMemcpyToSymbol(c_filt, hf.data(), sizeof(float) * K * K));
  dim3 threads(TW, TY), blocks((W + TW - 1) / TW, (H + TH - 1) / TH);
  bench("conv2d", "reference", "8192x8192x7x7", [&] { conv2d_tiled<<<blocks, threads>>>(H, W, in, out); });
  std::vector<float> got(cells);
  CK(cudaMemcpy(got.data(), out, sizeof(float) * cells, cudaMemcpyDeviceToHost));
  // Check 64 sampled full rows plus the first and last rows.
  double err = 0;
  for (int s = 0; s < 66; ++s) {
    int y = s == 64 ? 0 : s == 65 ? H - 1 : (int)(frand(s, 112) * H);
    for (int x = 0; x < W; ++x) {
      double sum = 0;
      for (int ky = 0; ky < K; ++ky)
        for (int kx = 0; kx < K; ++kx) {
          int iy = y + ky - RAD, ix = x + kx - RAD;
          if (iy >= 0 && iy < H && ix >= 0 && ix < W) sum += (double)hin[(size_t)iy * W + ix] * hf[ky * K + kx];
        }
      err = std::max(err, fabs(got[(size_t)y * W + x] - sum));
    }
  }
  return report(err < 1e-4, err);
}
