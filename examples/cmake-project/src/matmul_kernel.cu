// Included by main.cu: C = A * B for square matrices, one thread per element.
__global__ void matmul(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float sum = 0.0f;
    for (int k = 0; k < n; ++k)
      sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
  }
}
