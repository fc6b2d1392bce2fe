/* Minimal half-precision declarations for hermetic tests, beside
   cuda_mock.h (include that first). Under nvcc, or clang with the real SDK,
   it includes the real cuda_fp16.h, so the same input compiles with nvcc. */
#ifndef OPTIML_TEST_CUDA_FP16_MOCK_H
#define OPTIML_TEST_CUDA_FP16_MOCK_H
#if defined(__NVCC__) || defined(__CLANG_CUDA_RUNTIME_WRAPPER_H__)
#include <cuda_fp16.h>
#else
struct __attribute__((aligned(2))) __half {
  unsigned short __x;
};
struct __attribute__((aligned(4))) __half2 {
  __half x, y;
};
typedef __half half;
typedef __half2 half2;
__device__ __half operator+(const __half &a, const __half &b);
__device__ __half operator-(const __half &a, const __half &b);
__device__ __half operator*(const __half &a, const __half &b);
__device__ bool operator<(const __half &a, const __half &b);
__host__ __device__ __half __float2half(float f);
__host__ __device__ float __half2float(__half h);
#endif
#endif
