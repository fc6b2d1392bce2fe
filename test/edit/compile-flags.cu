// compile-flags changes no text: it carries nvcc flags for the candidate;
// -use_fast_math marks it as changing precision. An edit with no flag is
// refused.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"compile-flags","target":"k","params":{"use_fast_math":true,"ptxas_o3":true,"maxrregcount":64,"dlcm_ca":true}}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=MSG %s
// RUN: cmp %s %t.out.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs -use_fast_math -Xptxas -O3 --maxrregcount=64 -Xptxas -dlcm=ca %t.out.cu -o %t.o %}
// RUN: echo '{"kind":"compile-flags","target":"k"}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=NONE %s
// RUN: echo '{"kind":"compile-flags","target":"k","params":{"maxrregcount":8}}' > %t.3.json
// RUN: not clang-optiml apply %t.cu --edit %t.3.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=RANGE %s

#include "cuda_mock.h"

__global__ void k(float *p) { p[threadIdx.x] = expf(p[threadIdx.x]); }

// MSG:      applied: compile k with -use_fast_math -Xptxas -O3 --maxrregcount=64 -Xptxas -dlcm=ca (may change floating-point results)
// MSG-NEXT: nvcc flags: -use_fast_math -Xptxas -O3 --maxrregcount=64 -Xptxas -dlcm=ca
// NONE: clang-optiml: error: compile-flags k rejected: [params] no flag chosen: set use_fast_math, ptxas_o3, maxrregcount or dlcm_ca
// RANGE: clang-optiml: error: in '{{.*}}.3.json': edit.params.maxrregcount: 8 is out of range (between 16 and 255)
