// unroll: a constant trip count unrolls fully; a loop with a runtime bound
// takes a factor; a loop that starts mid-line gets its pragma on a new line.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"unroll","target":"dot/loop0"}' > %t.full.json
// RUN: clang-optiml apply %t.cu --edit %t.full.json -o %t.full.cu -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=MSG %s
// RUN: FileCheck --match-full-lines --check-prefix=FULL %s < %t.full.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs %t.full.cu -o %t.full.o %}
// RUN: echo '[{"kind":"unroll","target":"dot/loop1","params":{"factor":4}},{"kind":"unroll","target":"dot/loop2","params":{"factor":2}}]' > %t.part.json
// RUN: clang-optiml apply %t.cu --edit %t.part.json -o %t.part.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=PART %s < %t.part.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs %t.part.cu -o %t.part.o %}

#include "cuda_mock.h"

__global__ void dot(const float *a, float *out, int n) {
  float acc = 0;
  for (int k = 0; k < 8; ++k)
    acc += a[k];
  for (int j = 0; j < n; ++j)
    acc += a[j] * 2.0f;
  if (n > 4) for (int j = 0; j < n; j += 2) acc -= a[j];
  out[threadIdx.x] = acc;
}

// MSG: applied: unroll dot/loop0 fully

// FULL:      __global__ void dot(const float *a, float *out, int n) {
// FULL-NEXT:   float acc = 0;
// FULL-NEXT: #pragma unroll
// FULL-NEXT:   for (int k = 0; k < 8; ++k)
// FULL-NEXT:     acc += a[k];
// FULL-NEXT:   for (int j = 0; j < n; ++j)

// PART:      __global__ void dot(const float *a, float *out, int n) {
// PART-NEXT:   float acc = 0;
// PART-NEXT:   for (int k = 0; k < 8; ++k)
// PART-NEXT:     acc += a[k];
// PART-NEXT: #pragma unroll 4
// PART-NEXT:   for (int j = 0; j < n; ++j)
// PART-NEXT:     acc += a[j] * 2.0f;
// PART-NEXT:   if (n > 4)
// PART-NEXT:   #pragma unroll 2
// PART-NEXT:   for (int j = 0; j < n; j += 2) acc -= a[j];
// PART-NEXT:   out[threadIdx.x] = acc;
