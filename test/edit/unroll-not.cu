// unroll does not apply: a runtime bound without a factor, a loop that
// already has a pragma, a loop written inside a macro, a trip count too
// large for a full unroll. The file is left untouched each time.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"unroll","target":"k/loop0"}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -i -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=BOUND %s
// RUN: echo '{"kind":"unroll","target":"k/loop1","params":{"factor":2}}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -i -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=PRAGMA %s
// RUN: echo '{"kind":"unroll","target":"k/loop2","params":{"factor":2}}' > %t.3.json
// RUN: not clang-optiml apply %t.cu --edit %t.3.json -i -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=MACRO %s
// RUN: echo '{"kind":"unroll","target":"k/loop3"}' > %t.4.json
// RUN: not clang-optiml apply %t.cu --edit %t.4.json -i -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=LARGE %s
// RUN: echo '{"kind":"unroll","target":"k/loop9"}' > %t.5.json
// RUN: not clang-optiml apply %t.cu --edit %t.5.json -i -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=NOLOOP %s
// RUN: cmp %s %t.cu

#include "cuda_mock.h"

#define EACH(i, n) for (int i = 0; i < (n); ++i)

__global__ void k(float *p, int n) {
  for (int j = 0; j < n; ++j)
    p[j] = 0;
#pragma unroll 4
  for (int j = 0; j < 16; ++j)
    p[j] += 1;
  EACH(j, 4) p[j] *= 2;
  for (int j = 0; j < 4096; ++j)
    p[j] -= 1;
}

// BOUND: clang-optiml: error: unroll k/loop0 rejected: {{.*}}:22:3: [not-applicable] loop k/loop0 has no constant trip count (bound 'n'); give params.factor for a partial unroll
// BOUND-NEXT: clang-optiml: nothing was written
// PRAGMA: clang-optiml: error: unroll k/loop1 rejected: {{.*}}: [not-applicable] loop k/loop1 already has an unroll pragma
// MACRO: clang-optiml: error: unroll k/loop2 rejected: {{.*}}[macro] loop k/loop2 is written inside a macro expansion
// LARGE: clang-optiml: error: unroll k/loop3 rejected: {{.*}}: [not-applicable] loop k/loop3 runs 4096 iterations, too many to unroll fully (at most 64); give params.factor
// NOLOOP: clang-optiml: error: edit.target: no loop 'k/loop9' (unroll targets a loop id (<kernel>/loop<N>); loops: k/loop0, k/loop1, k/loop2, k/loop3)
