// Five guard-free stream kernels (copy, mul, add, triad, nstream) over 2^25
// floats, each launched 10 times, grid exactly n / 256 blocks of 256; the
// program checks a sample of elements against the CPU.
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>
#include <cuda_runtime.h>

#define TBSIZE 256
#define SCALAR 0.4f

template <class T>
__global__ void copy_kernel(const T *__restrict__ a, T *__restrict__ c) {
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  c[i] = a[i];
}
template <class T>
__global__ void mul_kernel(T *__restrict__ b, const T *__restrict__ c) {
  const T scalar = SCALAR;
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  b[i] = scalar * c[i];
}
template <class T>
__global__ void add_kernel(const T *__restrict__ a, const T *__restrict__ b,
                           T *__restrict__ c) {
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  c[i] = a[i] + b[i];
}
template <class T>
__global__ void triad_kernel(T *__restrict__ a, const T *__restrict__ b,
                             const T *__restrict__ c) {
  const T scalar = SCALAR;
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  a[i] = b[i] + scalar * c[i];
}
template <class T>
__global__ void nstream_kernel(T *__restrict__ a, const T *__restrict__ b,
                               const T *__restrict__ c) {
  const T scalar = SCALAR;
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  a[i] += b[i] + scalar * c[i];
}

int main() {
  const int n = 1 << 25;
  float *a, *b, *c;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&c, n * sizeof(float));
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i)
    h[i] = 0.1f + (i % 1000) * 0.001f;
  cudaMemcpy(a, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(b, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(c, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  for (int r = 0; r < 10; ++r) {
    copy_kernel<float><<<n / TBSIZE, TBSIZE>>>(a, c);
    mul_kernel<float><<<n / TBSIZE, TBSIZE>>>(b, c);
    add_kernel<float><<<n / TBSIZE, TBSIZE>>>(a, b, c);
    triad_kernel<float><<<n / TBSIZE, TBSIZE>>>(a, b, c);
    nstream_kernel<float><<<n / TBSIZE, TBSIZE>>>(a, b, c);
  }
  if (cudaDeviceSynchronize() != cudaSuccess) {
    printf("FAIL: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  // The same steps on the CPU for a sample of elements.
  std::vector<float> ga(n);
  cudaMemcpy(ga.data(), a, n * sizeof(float), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; i += 4099) {
    float x = h[i], y = h[i], z = h[i];
    for (int r = 0; r < 10; ++r) {
      z = x;
      y = SCALAR * z;
      z = x + y;
      x = y + SCALAR * z;
      x += y + SCALAR * z;
    }
    float d = ga[i] - x;
    if (d > 1e-3f * (x < 0 ? -x : x) + 1e-3f || -d > 1e-3f * (x < 0 ? -x : x) + 1e-3f)
      ++bad;
  }
  printf("%s\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
