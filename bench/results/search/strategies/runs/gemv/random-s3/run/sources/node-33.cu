// gemv (naive): y = A*x, A row-major M x N; one thread per output row.
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

static const int M = 16384, N = 16384;  // problem size: rows, columns

__global__ void gemv(int m, int n, const float* A, const float* x, float* y) {
  for (int row = blockIdx.x * blockDim.x + threadIdx.x; row < m;
       row += blockDim.x * gridDim.x) {
    float sum = 0.f;
    for (int j = 0; j < n; ++j) sum += A[(size_t)row * n + j] * x[j];
    y[row] = sum;
  }
}

int main() {
  size_t an = (size_t)M * N;
  std::vector<float> hA(an), hx(N);
  for (size_t i = 0; i < an; ++i) hA[i] = frand(i, 5) * 2.f - 1.f;
  for (int j = 0; j < N; ++j) hx[j] = frand(j, 6) * 2.f - 1.f;
  float *A, *x, *y;
  CK(cudaMalloc(&A, sizeof(float) * an));
  CK(cudaMalloc(&x, sizeof(float) * N));
  CK(cudaMalloc(&y, sizeof(float) * M));
  CK(cudaMemcpy(A, hA.data(), sizeof(float) * an, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(x, hx.data(), sizeof(float) * N, cudaMemcpyHostToDevice));
  int threads = 256, blocks = (M + threads - 1) / threads;
  bench("gemv", "naive", "16384x16384", [&] { gemv<<<blocks < 2112 ? blocks : 2112, threads>>>(M, N, A, x, y); });
  std::vector<float> hy(M);
  CK(cudaMemcpy(hy.data(), y, sizeof(float) * M, cudaMemcpyDeviceToHost));
  double err = 0;
  bool ok = true;
  for (int i = 0; i < M; ++i) {
    double s = 0, sa = 0;
    for (int j = 0; j < N; ++j) { double t = (double)hA[(size_t)i * N + j] * hx[j]; s += t; sa += fabs(t); }
    double e = fabs(hy[i] - s) / (sa + 1e-30);
    err = std::max(err, e);
    if (e > 1e-4) ok = false;
  }
  return report(ok, err);
}
