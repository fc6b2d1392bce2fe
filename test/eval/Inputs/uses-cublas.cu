// A program that links cuBLAS: it builds only with -lcublas, which a
// compile database (compile commands, no link line) does not give.
#include <cstdio>
#include <cublas_v2.h>

__global__ void fill(int n, float v, float *x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = v;
}

int main() {
  const int N = 1 << 16;
  float *X, *Y;
  cudaMalloc(&X, N * sizeof(float));
  cudaMalloc(&Y, N * sizeof(float));
  fill<<<(N + 255) / 256, 256>>>(N, 1.0f, X);
  fill<<<(N + 255) / 256, 256>>>(N, 2.0f, Y);
  cublasHandle_t H;
  if (cublasCreate(&H) != CUBLAS_STATUS_SUCCESS)
    return 1;
  float Dot = 0;
  cublasSdot(H, N, X, 1, Y, 1, &Dot);
  cublasDestroy(H);
  std::printf("dot %.1f\n", Dot);
  return 0;
}
