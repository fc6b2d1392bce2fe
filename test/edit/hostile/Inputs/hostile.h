/* Declarations the hostile-edit corpus needs beyond cuda_mock.h, so that
   its base programs parse hermetically with clang (-nocudainc) and compile
   as they are with nvcc, whose real headers are used instead. */
#ifndef OPTIML_TEST_HOSTILE_H
#define OPTIML_TEST_HOSTILE_H
#include "cuda_mock.h"
#include <stdio.h>
#include <stdlib.h>
#if !defined(__NVCC__) && !defined(__CLANG_CUDA_RUNTIME_WRAPPER_H__)
extern "C" __device__ int printf(const char *, ...);
extern "C" __device__ void *malloc(size_t);
extern "C" __device__ void free(void *);
extern "C" __device__ void __trap();
extern "C" __device__ void __nanosleep(unsigned);
extern "C" cudaError_t cudaLaunchKernel(const void *f, dim3 g, dim3 b,
                                        void **args, size_t shared,
                                        cudaStream_t s);
#define cudaSuccess 0
#endif
#endif
