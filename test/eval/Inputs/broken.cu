// Does not compile: nvcc's first error must be reported.
__global__ void scale(int n, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = undefined_q * 2;
}

int main() {
  scale<<<1, 1>>>(1, nullptr);
  return 0;
}
