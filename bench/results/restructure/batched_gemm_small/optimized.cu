// batched_gemm_small (naive): C[b] = A[b] * B[b] for BATCH row-major D x D
// matrices; one block per matrix, one thread per element of C.
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

static const int BATCH = 65536;  // problem size: number of matrices
#define D 32                     // matrix dimension

__global__ void batched_gemm(const float* A, const float* B, float* C) {
  size_t base = (size_t)blockIdx.x * D * D;
  // shared-tiling rows=8: 32 x 32 outputs per block, 8 rows per thread.
  __shared__ float As[32][32];
  __shared__ float Bs[32][32];
  int col = threadIdx.x;
  float accR[8];
  #pragma unroll
  for (int i = 0; i < 8; ++i)
    accR[i] = 0.f;
  for (int kTile = 0; kTile < D; kTile += 32) {
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int y1 = threadIdx.y + i * 4;
      int ar = y1;
      int ak = kTile + threadIdx.x;
      As[y1][threadIdx.x] = ak < D ? A[base + ar * D + ak] : 0.0f;
      int bk = kTile + y1;
      Bs[y1][threadIdx.x] = bk < D ? B[base + bk * D + col] : 0.0f;
    }
    __syncthreads();
    #pragma unroll
    for (int kk = 0; kk < 32; ++kk) {
      const float b = Bs[kk][threadIdx.x];
      #pragma unroll
      for (int i = 0; i < 8; ++i)
        accR[i] += As[threadIdx.y + i * 4][kk] * b;
    }
    __syncthreads();
  }
  #pragma unroll
  for (int i = 0; i < 8; ++i) {
    int r = threadIdx.y + i * 4;
    C[base + r * D + col] = accR[i];
  }
}

int main() {
  const size_t elems = (size_t)BATCH * D * D;
  std::vector<float> hA(elems), hB(elems), hC(elems);
  for (size_t i = 0; i < elems; ++i) { hA[i] = frand(i, 120) * 2.f - 1.f; hB[i] = frand(i, 121) * 2.f - 1.f; }
  float *A, *Bm, *C;
  CK(cudaMalloc(&A, sizeof(float) * elems));
  CK(cudaMalloc(&Bm, sizeof(float) * elems));
  CK(cudaMalloc(&C, sizeof(float) * elems));
  CK(cudaMemcpy(A, hA.data(), sizeof(float) * elems, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(Bm, hB.data(), sizeof(float) * elems, cudaMemcpyHostToDevice));
  dim3 threads(D, D);
  bench("batched_gemm_small", "optimized", "65536x32x32x32", [&] { batched_gemm<<<BATCH, dim3(threads.x, threads.y / 8)>>>(A, Bm, C); });
  CK(cudaMemcpy(hC.data(), C, sizeof(float) * elems, cudaMemcpyDeviceToHost));
  // Check 64 sampled matrices (and the last one) completely.
  double err = 0;
  for (int s = 0; s < 65; ++s) {
    size_t b = s == 64 ? BATCH - 1 : (size_t)(frand(s, 122) * BATCH);
    const float *a = &hA[b * D * D], *bb = &hB[b * D * D];
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) {
        double sum = 0, sa = 0;
        for (int p = 0; p < D; ++p) { double t = (double)a[i * D + p] * bb[p * D + j]; sum += t; sa += fabs(t); }
        err = std::max(err, fabs(hC[b * D * D + i * D + j] - sum) / (sa + 1e-30));
      }
  }
  return report(err < 2e-6, err);  // tight enough to reject TF32 rounding
}
