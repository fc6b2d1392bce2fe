// transpose-style (2D, uncoalesced writes): out = in^T for a square matrix.
// Self-check against a CPU transpose; exit code 0 when correct.
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

__global__ void transpose(float *__restrict__ out, const float *__restrict__ in, int rows, int cols) {
  __shared__ float tile[32][33];
  for (int k = threadIdx.y; k < 32; k += 8) {
    int c = blockIdx.x * 32 + threadIdx.x;
    int r = blockIdx.y * 32 + k;
    if (r < rows && c < cols)
      tile[k][threadIdx.x] = in[r * cols + c];
  }
  __syncthreads();
  for (int k = threadIdx.y; k < 32; k += 8) {
    int c = blockIdx.x * 32 + k;
    int r = blockIdx.y * 32 + threadIdx.x;
    if (r < rows && c < cols)
      out[c * rows + r] = tile[threadIdx.x][k];
  }
}

int main() {
  const int rows = 8192, cols = 8192;
  const size_t n = (size_t)rows * cols;
  std::vector<float> h(n);
  for (size_t i = 0; i < n; ++i)
    h[i] = (float)(i % 4099);
  float *in, *out;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  CHECK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  dim3 block(16, 16);
  dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
  transpose<<<dim3((cols + 31) / 32, (rows + 31) / 32), dim3(32, 8)>>>(out, in, rows, cols);
  CHECK(cudaGetLastError());
  std::vector<float> t(n);
  CHECK(cudaMemcpy(t.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      if (t[(size_t)c * rows + r] != h[(size_t)r * cols + c] && bad++ < 5)
        std::fprintf(stderr, "mismatch at (%d, %d)\n", r, c);
  cudaFree(in);
  cudaFree(out);
  std::printf("transpose: %s\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
