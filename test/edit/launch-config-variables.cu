// launch-config where the launch's grid and block are local variables, as
// people often write them (issue 20: it applied at 1 of 179 real launch
// sites because a block variable used anywhere else was refused). The
// variables are left alone, so their other uses keep their value; the new
// configuration is written out in the launch. The block size may be a
// local constant in the grid's (n + threads - 1) / threads. Refused: a
// variable assigned after its declaration, and a grid whose initializer
// names something another declaration hides at the launch.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"launch-config","target":"scale/launch0","params":{"block":128}}' > %t.1.json
// RUN: clang-optiml apply %t.cu --edit %t.1.json -o %t.out.cu -- %mock_args
// RUN: FileCheck --check-prefix=OUT %s < %t.out.cu
// RUN: clang-optiml transforms -v %t.cu -- %mock_args | FileCheck --check-prefix=WHY %s
// RUN: cmp %s %t.cu

#include "cuda_mock.h"

__global__ void scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= 2;
}

int run(float *x, int n) {
  int threads = 256;
  int blocks = (n + threads - 1) / threads;
  scale<<<blocks, threads>>>(x, n);
  return blocks * threads;
}
// OUT:      int threads = 256;
// OUT-NEXT: int blocks = (n + threads - 1) / threads;
// OUT-NEXT: scale<<<(n + 127) / 128, 128>>>(x, n);
// OUT-NEXT: return blocks * threads;

void reassigned(float *x, int n) {
  int threads = 256;
  threads = 512;
  scale<<<(n + 511) / 512, threads>>>(x, n);
}
// WHY: not launch-config scale/launch1: the block variable 'threads' is assigned after its declaration in 'reassigned'

void shadowed(float *x, int n) {
  int threads = 256;
  int blocks = (n + threads - 1) / threads;
  {
    int n = 3;
    scale<<<blocks, threads>>>(x, n);
  }
}
// WHY: not launch-config scale/launch2: the grid variable 'blocks' is computed from 'n', which another declaration hides at the launch
