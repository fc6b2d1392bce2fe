// -i and -o onto a symbolic link write the file the link points to; the
// link stays a link and no temporary file is left behind.
// RUN: rm -rf %t && mkdir -p %t/real
// RUN: cp %s %t/real/k.cu && ln -s real/k.cu %t/link.cu
// RUN: echo '{"kind":"unroll","target":"k/loop0"}' > %t/e.json
// RUN: clang-optiml apply %t/link.cu --edit %t/e.json -i -- %mock_args
// RUN: test -L %t/link.cu
// RUN: FileCheck --match-full-lines %s < %t/real/k.cu
// RUN: cp %s %t/real/out.cu && ln -s %t/real/out.cu %t/out-link.cu
// RUN: clang-optiml apply %s --edit %t/e.json -o %t/out-link.cu -- %mock_args
// RUN: test -L %t/out-link.cu
// RUN: FileCheck --match-full-lines %s < %t/real/out.cu
// RUN: ls %t/real | FileCheck --match-full-lines --check-prefix=FILES %s

#include "cuda_mock.h"

__global__ void k(float *p) {
  for (int j = 0; j < 4; ++j)
    p[j] = 0;
}

// CHECK:      __global__ void k(float *p) {
// CHECK-NEXT: #pragma unroll
// CHECK-NEXT:   for (int j = 0; j < 4; ++j)
// FILES:      k.cu
// FILES-NEXT: out.cu
// FILES-EMPTY:
