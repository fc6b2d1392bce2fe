// Library reference for the spec histogram-134m (bench/synthesize/specs.json):
// cub::DeviceHistogram::HistogramEven over 2^27 int samples in [0, 256),
// 256 bins, timed with CUDA events (median of the timed runs).
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(call)                                                               \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_),      \
              __FILE__, __LINE__);                                             \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

static const int N = 1 << 27;
static const int Bins = 256;

int main() {
  std::vector<int> h(N);
  unsigned s = 12345u;
  for (int i = 0; i < N; ++i) {
    s = s * 1664525u + 1013904223u;
    h[i] = (int)(s >> 24);
  }
  int *d = nullptr, *counts = nullptr;
  CK(cudaMalloc(&d, sizeof(int) * N));
  CK(cudaMalloc(&counts, sizeof(int) * Bins));
  CK(cudaMemcpy(d, h.data(), sizeof(int) * N, cudaMemcpyHostToDevice));
  void *temp = nullptr;
  size_t bytes = 0;
  CK(cub::DeviceHistogram::HistogramEven(temp, bytes, d, counts, Bins + 1, 0,
                                         Bins, N));
  CK(cudaMalloc(&temp, bytes));
  auto op = [&] {
    CK(cub::DeviceHistogram::HistogramEven(temp, bytes, d, counts, Bins + 1,
                                           0, Bins, N));
  };
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  for (int r = 0; r < 3; ++r)
    op();
  std::vector<float> ms;
  for (int r = 0; r < 30; ++r) {
    float t = 0;
    CK(cudaEventRecord(t0));
    op();
    CK(cudaEventRecord(t1));
    CK(cudaEventSynchronize(t1));
    CK(cudaEventElapsedTime(&t, t0, t1));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  std::vector<int> got(Bins), want(Bins, 0);
  CK(cudaMemcpy(got.data(), counts, sizeof(int) * Bins, cudaMemcpyDeviceToHost));
  for (int i = 0; i < N; ++i)
    ++want[h[i]];
  bool ok = got == want;
  printf("REF spec=histogram-134m ms=%.5f min_ms=%.5f check=%s\n",
         ms[ms.size() / 2], ms[0], ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
