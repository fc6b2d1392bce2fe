// stencil3d7 (naive): one application of the 3D 7-point stencil on an N^3
// grid (interior points); one thread per point, 8x8x8 blocks.
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

static const int N = 512;  // problem size: grid is N x N x N
#define C0 0.4f
#define C1 0.1f

__global__ void stencil(int n, const float* in, float* out) {
  int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x0 < n - 1 && y > 0 && y < n - 1 && z > 0 && z < n - 1) {
    bool ok[4];
    #pragma unroll
    for (int w = 0; w < 4; ++w) {
      int x = x0 + w;
      ok[w] = x > 0 && x < n - 1 && y > 0 && y < n - 1 && z > 0 && z < n - 1;
    }
    const bool all = ok[0] && ok[1] && ok[2] && ok[3];
    if (ok[0] || ok[1] || ok[2] || ok[3]) {
      int x = x0;
      size_t c = ((size_t)z * n + y) * n + x;
      size_t sy = n, sz = (size_t)n * n;
      if (reinterpret_cast<unsigned long long>(&out[c]) % 16 == 0 &&
          reinterpret_cast<unsigned long long>(&in[c]) % 16 == 0 &&
          reinterpret_cast<unsigned long long>(&in[c - sy]) % 16 == 0 &&
          reinterpret_cast<unsigned long long>(&in[c + sy]) % 16 == 0 &&
          reinterpret_cast<unsigned long long>(&in[c - sz]) % 16 == 0 &&
          reinterpret_cast<unsigned long long>(&in[c + sz]) % 16 == 0) {
        const float r0sm1 = (ok[0]) ? __ldg(&in[c - 1]) : float();
        float4 r0v0;
        if (all)
          r0v0 = __ldg(reinterpret_cast<const float4 *>(&in[c]));
        else {
          r0v0.x = (ok[1] || ok[0]) ? __ldg(&in[c]) : float();
          r0v0.y = (ok[2] || ok[1] || ok[0]) ? __ldg(&in[c + 1]) : float();
          r0v0.z = (ok[3] || ok[2] || ok[1]) ? __ldg(&in[c + 2]) : float();
          r0v0.w = (ok[3] || ok[2]) ? __ldg(&in[c + 3]) : float();
        }
        const float r0s4 = (ok[3]) ? __ldg(&in[c + 4]) : float();
        float4 r1v0;
        if (all)
          r1v0 = __ldg(reinterpret_cast<const float4 *>(&in[c - sy]));
        else {
          r1v0.x = (ok[0]) ? __ldg(&in[c - sy]) : float();
          r1v0.y = (ok[1]) ? __ldg(&in[c - sy + 1]) : float();
          r1v0.z = (ok[2]) ? __ldg(&in[c - sy + 2]) : float();
          r1v0.w = (ok[3]) ? __ldg(&in[c - sy + 3]) : float();
        }
        float4 r2v0;
        if (all)
          r2v0 = __ldg(reinterpret_cast<const float4 *>(&in[c + sy]));
        else {
          r2v0.x = (ok[0]) ? __ldg(&in[c + sy]) : float();
          r2v0.y = (ok[1]) ? __ldg(&in[c + sy + 1]) : float();
          r2v0.z = (ok[2]) ? __ldg(&in[c + sy + 2]) : float();
          r2v0.w = (ok[3]) ? __ldg(&in[c + sy + 3]) : float();
        }
        float4 r3v0;
        if (all)
          r3v0 = __ldg(reinterpret_cast<const float4 *>(&in[c - sz]));
        else {
          r3v0.x = (ok[0]) ? __ldg(&in[c - sz]) : float();
          r3v0.y = (ok[1]) ? __ldg(&in[c - sz + 1]) : float();
          r3v0.z = (ok[2]) ? __ldg(&in[c - sz + 2]) : float();
          r3v0.w = (ok[3]) ? __ldg(&in[c - sz + 3]) : float();
        }
        float4 r4v0;
        if (all)
          r4v0 = __ldg(reinterpret_cast<const float4 *>(&in[c + sz]));
        else {
          r4v0.x = (ok[0]) ? __ldg(&in[c + sz]) : float();
          r4v0.y = (ok[1]) ? __ldg(&in[c + sz + 1]) : float();
          r4v0.z = (ok[2]) ? __ldg(&in[c + sz + 2]) : float();
          r4v0.w = (ok[3]) ? __ldg(&in[c + sz + 3]) : float();
        }
        float4 o;
        o.x = ok[0] ? (C0 * r0v0.x + C1 * (r0sm1 + r0v0.y + r1v0.x + r2v0.x + r3v0.x + r4v0.x)) : float();
        o.y = ok[1] ? (C0 * r0v0.y + C1 * (r0v0.x + r0v0.z + r1v0.y + r2v0.y + r3v0.y + r4v0.y)) : float();
        o.z = ok[2] ? (C0 * r0v0.z + C1 * (r0v0.y + r0v0.w + r1v0.z + r2v0.z + r3v0.z + r4v0.z)) : float();
        o.w = ok[3] ? (C0 * r0v0.w + C1 * (r0v0.z + r0s4 + r1v0.w + r2v0.w + r3v0.w + r4v0.w)) : float();
        if (all) {
          *reinterpret_cast<float4 *>(&out[c]) = o;
        } else {
          if (ok[0])
            (&out[c])[0] = o.x;
          if (ok[1])
            (&out[c])[1] = o.y;
          if (ok[2])
            (&out[c])[2] = o.z;
          if (ok[3])
            (&out[c])[3] = o.w;
        }
      } else {
        #pragma unroll
        for (int w = 0; w < 4; ++w) {
          int x = x0 + w;
          if (x > 0 && x < n - 1 && y > 0 && y < n - 1 && z > 0 && z < n - 1) {
            size_t c = ((size_t)z * n + y) * n + x;
            size_t sy = n, sz = (size_t)n * n;
            out[c] = C0 * in[c] + C1 * (in[c - 1] + in[c + 1] + in[c - sy] + in[c + sy] + in[c - sz] + in[c + sz]);
          }
        }
      }
    }
  }
}

int main() {
  const size_t cells = (size_t)N * N * N;
  std::vector<float> hin(cells);
  for (size_t i = 0; i < cells; ++i) hin[i] = frand(i, 31);
  float *in, *out;
  CK(cudaMalloc(&in, sizeof(float) * cells));
  CK(cudaMalloc(&out, sizeof(float) * cells));
  CK(cudaMemcpy(in, hin.data(), sizeof(float) * cells, cudaMemcpyHostToDevice));
  CK(cudaMemset(out, 0, sizeof(float) * cells));
  dim3 threads(8, 8, 8), blocks((N + 7) / 8, (N + 7) / 8, (N + 7) / 8);
  bench("stencil3d7", "optimized", "512x512x512", [&] { stencil<<<dim3((N + 31) / 32, blocks.y, blocks.z), threads>>>(N, in, out); });
  std::vector<float> got(cells);
  CK(cudaMemcpy(got.data(), out, sizeof(float) * cells, cudaMemcpyDeviceToHost));
  double err = 0;
  const size_t sy = N, sz = (size_t)N * N;
  for (int z = 1; z < N - 1; ++z)
    for (int y = 1; y < N - 1; ++y)
      for (int x = 1; x < N - 1; ++x) {
        size_t c = z * sz + y * sy + x;
        float want = C0 * hin[c] + C1 * (hin[c - 1] + hin[c + 1] + hin[c - sy] + hin[c + sy] + hin[c - sz] + hin[c + sz]);
        err = std::max(err, (double)fabsf(got[c] - want));
      }
  return report(err < 1e-5, err);
}
