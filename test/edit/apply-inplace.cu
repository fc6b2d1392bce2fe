// apply -i replaces the file only when every edit passes; a list that fails
// at its second edit writes nothing, names the edit, and the file keeps its
// bytes. -o, -i and --diff exclude each other.
// RUN: cp %s %t.cu
// RUN: echo '[{"kind":"unroll","target":"k/loop0"},{"kind":"unroll","target":"k/loop0"}]' > %t.bad.json
// RUN: not clang-optiml apply %t.cu --edit %t.bad.json -i -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=BAD %s
// RUN: cmp %s %t.cu
// RUN: not clang-optiml apply %t.cu --edit %t.bad.json -i --diff -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=MODES %s
// RUN: echo '{"kind":"unroll","target":"k/loop0"}' > %t.good.json
// RUN: clang-optiml apply %t.cu --edit %t.good.json -i -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=OUT %s < %t.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs %t.cu -o %t.o %}
// RUN: not clang-optiml apply %t.cu --edit %t.missing.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=NOEDIT %s

#include "cuda_mock.h"

__global__ void k(float *p) {
  for (int j = 0; j < 4; ++j)
    p[j] = 0;
}

// BAD:      clang-optiml: error: edits[1] unroll k/loop0 rejected: {{.*}}: [not-applicable] loop k/loop0 already has an unroll pragma
// BAD-NEXT: clang-optiml: nothing was written
// MODES: clang-optiml: error: -o, -i and --diff are mutually exclusive
// OUT:      __global__ void k(float *p) {
// OUT-NEXT: #pragma unroll
// OUT-NEXT:   for (int j = 0; j < 4; ++j)
// NOEDIT: clang-optiml: error: cannot read '{{.*}}.missing.json': {{.*}}
