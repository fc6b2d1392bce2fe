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

__global__ void __launch_bounds__(256) saxpy(int n, float a, const float *x, float *y) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (reinterpret_cast<unsigned long long>(x) % 16 == 0 &&
      reinterpret_cast<unsigned long long>(y) % 16 == 0) {
    for (int v = tid; v < n / 4; v += blockDim.x * gridDim.x) {
      float4 x_v = reinterpret_cast<const float4 *>(x)[v];
      float4 y_v = reinterpret_cast<float4 *>(y)[v];
      y_v.x = a * x_v.x + y_v.x;
      y_v.y = a * x_v.y + y_v.y;
      y_v.z = a * x_v.z + y_v.z;
      y_v.w = a * x_v.w + y_v.w;
      reinterpret_cast<float4 *>(y)[v] = y_v;
    }
    for (int i = n / 4 * 4 + tid; i < n; i += blockDim.x * gridDim.x) {
      y[i] = a * x[i] + y[i];
    }
  } else {
    for (int i = tid; i < n; i += blockDim.x * gridDim.x) {
      y[i] = a * x[i] + y[i];
    }
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
    saxpy<<<(n + 1023) / 1024, 256>>>(n, 2.0f, x, y);
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
