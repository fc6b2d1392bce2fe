// launch-bounds: added before the kernel's name when every launch uses a
// constant block size (int or dim3) within max_threads; an existing
// __launch_bounds__ is replaced; a template kernel gets it on its pattern.
// RUN: cp %s %t.cu
// RUN: echo '[{"kind":"launch-bounds","target":"add","params":{"max_threads":256,"min_blocks":2}},{"kind":"launch-bounds","target":"change","params":{"max_threads":512}},{"kind":"launch-bounds","target":"tmpl","params":{"max_threads":128}}]' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=OUT %s < %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs %t.out.cu -o %t.o %}

#include "cuda_mock.h"

__global__ void add(float *p) { p[threadIdx.x] += 1; }

__global__ void __launch_bounds__(1024) change(float *p) { p[threadIdx.x] = 0; }

template <typename T>
__global__ void tmpl(T *p) { p[threadIdx.x] *= 2; }

void run(float *p) {
  add<<<4, 256>>>(p);
  add<<<8, dim3(16, 16)>>>(p);
  change<<<1, 512>>>(p);
  tmpl<<<2, 128>>>(p);
}

// OUT:      __global__ void __launch_bounds__(256, 2) add(float *p) { p[threadIdx.x] += 1; }
// OUT-EMPTY:
// OUT-NEXT: __global__ void __launch_bounds__(512) change(float *p) { p[threadIdx.x] = 0; }
// OUT-EMPTY:
// OUT-NEXT: template <typename T>
// OUT-NEXT: __global__ void __launch_bounds__(128) tmpl(T *p) { p[threadIdx.x] *= 2; }
