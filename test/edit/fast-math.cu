// fast-math: precise math calls become intrinsics in a kernel and in a
// template kernel (dependent calls included); calls inside macros are left
// alone; the edit is reported as changing floating-point results.
// RUN: cp %s %t.cu
// RUN: echo '[{"kind":"fast-math","target":"act"},{"kind":"fast-math","target":"tact","params":{"functions":["expf"]}}]' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=MSG %s
// RUN: FileCheck --match-full-lines --check-prefix=OUT %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs %t.out.cu -o %t.o %}
// RUN: clang-optiml apply %t.cu --edit %t.json --json -- %mock_args 2>/dev/null | FileCheck --check-prefix=JSON %s
// RUN: echo '{"kind":"fast-math","target":"none"}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=NONE %s

#include "cuda_mock.h"

#define SAFE_EXP(x) expf(x)

__global__ void act(float *p) {
  float v = p[threadIdx.x];
  p[threadIdx.x] = expf(v) + logf(v) * sinf(v) + powf(v, 2.0f) + SAFE_EXP(v);
}

template <typename T>
__global__ void tact(T *p) { p[threadIdx.x] = expf(p[threadIdx.x]) + cosf(p[0]); }

__global__ void none(float *p) { p[0] = sqrtf(p[0]); }

void run(float *p) {
  act<<<1, 32>>>(p);
  tact<<<1, 32>>>(p);
  none<<<1, 1>>>(p);
}

// MSG:      applied: fast-math act (may change floating-point results)
// MSG-NEXT: applied: fast-math tact functions=expf (may change floating-point results)
// OUT:      __global__ void act(float *p) {
// OUT-NEXT:   float v = p[threadIdx.x];
// OUT-NEXT:   p[threadIdx.x] = __expf(v) + __logf(v) * __sinf(v) + __powf(v, 2.0f) + SAFE_EXP(v);
// OUT:      __global__ void tact(T *p) { p[threadIdx.x] = __expf(p[threadIdx.x]) + cosf(p[0]); }
// JSON: "changes_precision": true,
// NONE: clang-optiml: error: fast-math none rejected: [not-applicable] kernel 'none' has no expf/logf/sinf/cosf/powf calls outside macros to replace
