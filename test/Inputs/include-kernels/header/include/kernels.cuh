// Kernels of main.cu, in a project header.
#ifndef KERNELS_CUH
#define KERNELS_CUH

__global__ void heat_step(const float *temp, const float *power, float *out,
                          int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n * n)
    return;
  int r = i / n, c = i % n;
  float center = temp[i];
  float sum = 0;
  for (int d = 0; d < 4; ++d) {
    int rr = r + (d == 0) - (d == 1), cc = c + (d == 2) - (d == 3);
    sum += (rr >= 0 && rr < n && cc >= 0 && cc < n) ? temp[rr * n + cc]
                                                     : center;
  }
  out[i] = center + 0.1f * (sum - 4 * center) + 0.01f * power[i];
}

__global__ void scale_power(float *power, int n, float f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    power[i] = power[i] * f;
}

#endif
