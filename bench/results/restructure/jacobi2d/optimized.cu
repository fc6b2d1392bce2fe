// jacobi2d (naive): ITERS Jacobi sweeps of the 5-point average on an N x N
// grid with fixed boundary; one thread per grid point, 16x16 blocks.
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

static const int N = 8192;     // problem size: grid is N x N
static const int ITERS = 10;   // sweeps per solve (even, so the result ends in a)

__global__ void jacobi(int n, const float* in, float* out) {
  int j0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i > 0 && i < n - 1 && j0 < n - 1) {
    bool ok[4];
    #pragma unroll
    for (int w = 0; w < 4; ++w) {
      int j = j0 + w;
      ok[w] = i > 0 && i < n - 1 && j > 0 && j < n - 1;
    }
    const bool all = ok[0] && ok[1] && ok[2] && ok[3];
    if (ok[0] || ok[1] || ok[2] || ok[3]) {
      int j = j0;
      if (reinterpret_cast<unsigned long long>(&out[i * n + j]) % 16 == 0 &&
          reinterpret_cast<unsigned long long>(&in[(i - 1) * n + j]) % 16 == 0 &&
          reinterpret_cast<unsigned long long>(&in[(i + 1) * n + j]) % 16 == 0 &&
          reinterpret_cast<unsigned long long>(&in[i * n + j]) % 16 == 0) {
        float4 r0v0;
        if (all)
          r0v0 = __ldg(reinterpret_cast<const float4 *>(&in[(i - 1) * n + j]));
        else {
          r0v0.x = (ok[0]) ? __ldg(&in[(i - 1) * n + j]) : float();
          r0v0.y = (ok[1]) ? __ldg(&in[(i - 1) * n + j + 1]) : float();
          r0v0.z = (ok[2]) ? __ldg(&in[(i - 1) * n + j + 2]) : float();
          r0v0.w = (ok[3]) ? __ldg(&in[(i - 1) * n + j + 3]) : float();
        }
        float4 r1v0;
        if (all)
          r1v0 = __ldg(reinterpret_cast<const float4 *>(&in[(i + 1) * n + j]));
        else {
          r1v0.x = (ok[0]) ? __ldg(&in[(i + 1) * n + j]) : float();
          r1v0.y = (ok[1]) ? __ldg(&in[(i + 1) * n + j + 1]) : float();
          r1v0.z = (ok[2]) ? __ldg(&in[(i + 1) * n + j + 2]) : float();
          r1v0.w = (ok[3]) ? __ldg(&in[(i + 1) * n + j + 3]) : float();
        }
        const float r2sm1 = (ok[0]) ? __ldg(&in[i * n + j - 1]) : float();
        float4 r2v0;
        if (all)
          r2v0 = __ldg(reinterpret_cast<const float4 *>(&in[i * n + j]));
        else {
          r2v0.x = (ok[1]) ? __ldg(&in[i * n + j]) : float();
          r2v0.y = (ok[2] || ok[0]) ? __ldg(&in[i * n + j + 1]) : float();
          r2v0.z = (ok[3] || ok[1]) ? __ldg(&in[i * n + j + 2]) : float();
          r2v0.w = (ok[2]) ? __ldg(&in[i * n + j + 3]) : float();
        }
        const float r2s4 = (ok[3]) ? __ldg(&in[i * n + j + 4]) : float();
        float4 o;
        o.x = ok[0] ? (0.25f * (r0v0.x + r1v0.x + r2sm1 + r2v0.y)) : float();
        o.y = ok[1] ? (0.25f * (r0v0.y + r1v0.y + r2v0.x + r2v0.z)) : float();
        o.z = ok[2] ? (0.25f * (r0v0.z + r1v0.z + r2v0.y + r2v0.w)) : float();
        o.w = ok[3] ? (0.25f * (r0v0.w + r1v0.w + r2v0.z + r2s4)) : float();
        if (all) {
          *reinterpret_cast<float4 *>(&out[i * n + j]) = o;
        } else {
          if (ok[0])
            (&out[i * n + j])[0] = o.x;
          if (ok[1])
            (&out[i * n + j])[1] = o.y;
          if (ok[2])
            (&out[i * n + j])[2] = o.z;
          if (ok[3])
            (&out[i * n + j])[3] = o.w;
        }
      } else {
        #pragma unroll
        for (int w = 0; w < 4; ++w) {
          int j = j0 + w;
          if (i > 0 && i < n - 1 && j > 0 && j < n - 1)
            out[i * n + j] = 0.25f * (in[(i - 1) * n + j] + in[(i + 1) * n + j] + in[i * n + j - 1] + in[i * n + j + 1]);
        }
      }
    }
  }
}

int main() {
  const size_t cells = (size_t)N * N;
  std::vector<float> h0(cells);
  for (size_t i = 0; i < cells; ++i) h0[i] = frand(i, 30);
  float *a, *b;
  CK(cudaMalloc(&a, sizeof(float) * cells));
  CK(cudaMalloc(&b, sizeof(float) * cells));
  auto reset = [&] {
    CK(cudaMemcpy(a, h0.data(), sizeof(float) * cells, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, h0.data(), sizeof(float) * cells, cudaMemcpyHostToDevice));
  };
  reset();
  dim3 threads(16, 16), blocks((N + 15) / 16, (N + 15) / 16);
  auto solve = [&] {
    for (int it = 0; it < ITERS; ++it) {
      jacobi<<<dim3((N + 63) / 64, blocks.y, blocks.z), threads>>>(N, a, b);
      std::swap(a, b);
    }
  };
  bench("jacobi2d", "optimized", "8192x8192x10", solve);
  // Verify ITERS sweeps from the initial grid against the CPU.
  reset();
  solve();
  CK(cudaDeviceSynchronize());
  std::vector<float> got(cells);
  CK(cudaMemcpy(got.data(), a, sizeof(float) * cells, cudaMemcpyDeviceToHost));
  std::vector<float> p = h0, q = h0;
  for (int it = 0; it < ITERS; ++it) {
    for (int i = 1; i < N - 1; ++i)
      for (int j = 1; j < N - 1; ++j)
        q[(size_t)i * N + j] = 0.25f * (p[(size_t)(i - 1) * N + j] + p[(size_t)(i + 1) * N + j] +
                                        p[(size_t)i * N + j - 1] + p[(size_t)i * N + j + 1]);
    std::swap(p, q);
  }
  double err = 0;
  for (size_t i = 0; i < cells; ++i) err = std::max(err, (double)fabsf(got[i] - p[i]));
  return report(err < 1e-5, err);
}
