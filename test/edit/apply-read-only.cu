// apply -i on a read-only file is refused: the file keeps its bytes and
// its permissions (before, it was replaced, as root or as the owner of its
// directory), and so is -o onto one.
// RUN: rm -rf %t && mkdir -p %t
// RUN: cp %s %t/k.cu && chmod a-w %t/k.cu
// RUN: echo '{"kind":"unroll","target":"k/loop0"}' > %t/e.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/e.json -i -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=INPLACE %s
// RUN: cmp %s %t/k.cu
// RUN: stat -c %%a %t/k.cu | FileCheck --check-prefix=MODE %s
// RUN: cp %s %t/out.cu && chmod a-w %t/out.cu
// RUN: not clang-optiml apply %s --edit %t/e.json -o %t/out.cu -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=OUT %s
// RUN: cmp %s %t/out.cu
// RUN: chmod u+w %t/k.cu %t/out.cu

#include "cuda_mock.h"

__global__ void k(float *p) {
  for (int j = 0; j < 4; ++j)
    p[j] = 0;
}

// INPLACE: clang-optiml: error: cannot write '{{.*}}k.cu': it is read-only; it is left unchanged
// MODE: 444
// OUT: clang-optiml: error: cannot write '{{.*}}out.cu': it is read-only; it is left unchanged
