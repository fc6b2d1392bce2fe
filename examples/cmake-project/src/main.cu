// The example project's program: a matrix product (kernel and launcher in
// the included matmul_kernel.cu) and a transpose (transpose.cu, kernel in
// transpose.cuh), each checked on the host; prints checksums and exits 0
// when both are right.
#include "matmul_kernel.cu"
#include "util.h"
#include <cmath>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

cudaError_t runTranspose(float *out, const float *in, int rows, int cols);

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                  \
                   cudaGetErrorString(err_));                                  \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main() {
  const int n = 2048;
  const size_t nn = (size_t)n * n;
  std::vector<float> a(nn), b(nn), c(nn), t(nn);
  fillValues(a, 1);
  fillValues(b, 2);
  float *A, *B, *C;
  CHECK(cudaMalloc(&A, nn * sizeof(float)));
  CHECK(cudaMalloc(&B, nn * sizeof(float)));
  CHECK(cudaMalloc(&C, nn * sizeof(float)));
  CHECK(cudaMemcpy(A, a.data(), nn * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(B, b.data(), nn * sizeof(float), cudaMemcpyHostToDevice));

  CHECK(runMatmul(A, B, C, n));
  CHECK(cudaMemcpy(c.data(), C, nn * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(runTranspose(C, A, n, n));
  CHECK(cudaMemcpy(t.data(), C, nn * sizeof(float), cudaMemcpyDeviceToHost));

  int bad = 0;
  for (int s = 0; s < 128; ++s) {
    int r = (s * 131) % n, col = (s * 977) % n;
    double want = 0;
    for (int k = 0; k < n; ++k)
      want += (double)a[(size_t)r * n + k] * b[(size_t)k * n + col];
    if (std::fabs(c[(size_t)r * n + col] - want) > 1e-3 * (1 + std::fabs(want)))
      ++bad;
    if (t[(size_t)col * n + r] != a[(size_t)r * n + col])
      ++bad;
  }
  std::printf("matmul checksum: %.6e\n", checksum(c));
  std::printf("transpose checksum: %.6e\n", checksum(t));
  std::printf("%s\n", bad ? "FAIL" : "PASS");
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  return bad ? 1 : 0;
}
