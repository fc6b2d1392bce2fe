// Kernels and the host function that launches them, but no main(): the
// program's main is in main.cu, which calls launchScale.
__global__ void scale(int n, float a, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * y[i];
}

void launchScale(int n, float a, float *y) {
  scale<<<(n + 255) / 256, 256>>>(n, a, y);
}
