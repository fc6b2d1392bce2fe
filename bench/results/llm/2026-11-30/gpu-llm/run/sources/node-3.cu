// saxpy-style (map): y = a * x + y over a large vector, launched a few times.
// Self-check against a CPU computation; exit code 0 when correct.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                  \
                   cudaGetErrorString(err_));                                  \
      return 1;                                                                \
    }                                                                          \
  } while (0)

__global__ void saxpy(int n, float a, const float *x, float *y) {
  // Four elements per thread with 128-bit loads and stores; threads past
  // the last group return at once. cudaMalloc'd arrays are 16-byte aligned.
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (i + 3 < n) {
    float4 xv = *reinterpret_cast<const float4 *>(x + i);
    float4 yv = *reinterpret_cast<const float4 *>(y + i);
    yv.x = a * xv.x + yv.x;
    yv.y = a * xv.y + yv.y;
    yv.z = a * xv.z + yv.z;
    yv.w = a * xv.w + yv.w;
    *reinterpret_cast<float4 *>(y + i) = yv;
  } else {
    for (; i < n; ++i)
      y[i] = a * x[i] + y[i];
  }
}

int main() {
  const int n = 1 << 25;
  const int iters = 3;
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) {
    hx[i] = (float)(i % 1000) * 0.001f;
    hy[i] = (float)((i * 7) % 500) * 0.002f;
  }
  float *x, *y;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int it = 0; it < iters; ++it)
    saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
  CHECK(cudaGetLastError());
  std::vector<float> out(n);
  CHECK(cudaMemcpy(out.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    float want = hy[i];
    for (int it = 0; it < iters; ++it)
      want = 2.0f * hx[i] + want;
    if (std::fabs(out[i] - want) > 1e-4f * (1.0f + std::fabs(want)) && bad++ < 5)
      std::fprintf(stderr, "mismatch at %d: %f vs %f\n", i, out[i], want);
  }
  cudaFree(x);
  cudaFree(y);
  std::printf("saxpy: %s\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
