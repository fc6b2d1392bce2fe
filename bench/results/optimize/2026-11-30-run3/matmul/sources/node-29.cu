// matmul-style: C = A * B for square FP32 matrices, one thread per element of
// C. Self-check on sampled elements against a CPU dot product.
#include <cmath>
#include <cstdio>
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

__global__ void matmul(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float As[16][16];
  __shared__ float Bs[16][16];
  float sum = 0.0f;
  #pragma unroll 2
  for (int kTile = 0; kTile < n; kTile += 16) {
    int aCol = kTile + threadIdx.x;
    int bRow = kTile + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = row < n && aCol < n ? A[row * n + aCol] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = bRow < n && col < n ? B[bRow * n + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < 16; ++k)
      sum += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) {
    C[row * n + col] = sum;
  }
}

int main() {
  const int n = 2048;
  const size_t nn = (size_t)n * n;
  std::vector<float> a(nn), b(nn);
  for (size_t i = 0; i < nn; ++i) {
    a[i] = (float)((i * 13) % 17) / 17.0f - 0.5f;
    b[i] = (float)((i * 7) % 23) / 23.0f - 0.5f;
  }
  float *A, *B, *C;
  CHECK(cudaMalloc(&A, nn * sizeof(float)));
  CHECK(cudaMalloc(&B, nn * sizeof(float)));
  CHECK(cudaMalloc(&C, nn * sizeof(float)));
  CHECK(cudaMemcpy(A, a.data(), nn * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(B, b.data(), nn * sizeof(float), cudaMemcpyHostToDevice));
  dim3 block(16, 16);
  dim3 grid((n + 15) / 16, (n + 15) / 16);
  matmul<<<grid, block>>>(A, B, C, n);
  CHECK(cudaGetLastError());
  std::vector<float> c(nn);
  CHECK(cudaMemcpy(c.data(), C, nn * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int s = 0; s < 256; ++s) {
    int r = (s * 131) % n, col = (s * 977) % n;
    double want = 0;
    for (int k = 0; k < n; ++k)
      want += (double)a[(size_t)r * n + k] * b[(size_t)k * n + col];
    float got = c[(size_t)r * n + col];
    if (std::fabs(got - want) > 1e-3 * (1.0 + std::fabs(want)) && bad++ < 5)
      std::fprintf(stderr, "mismatch at (%d, %d): %f vs %f\n", r, col, got, want);
  }
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  std::printf("matmul: %s\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
