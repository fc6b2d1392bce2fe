// launch-bounds refuses when a launch's block size is not a constant, when a
// launch uses more threads than max_threads (it would fail at run time), and
// when the kernel is never launched; out-of-range parameters are refused
// before anything is parsed.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"launch-bounds","target":"dyn","params":{"max_threads":256}}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=DYN %s
// RUN: echo '{"kind":"launch-bounds","target":"big","params":{"max_threads":128}}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=BIG %s
// RUN: echo '{"kind":"launch-bounds","target":"unused","params":{"max_threads":128}}' > %t.3.json
// RUN: not clang-optiml apply %t.cu --edit %t.3.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=UNUSED %s
// RUN: echo '{"kind":"launch-bounds","target":"big","params":{"max_threads":2048}}' > %t.4.json
// RUN: not clang-optiml apply %t.cu --edit %t.4.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=RANGE %s
// RUN: clang-optiml transforms %t.cu -v -- %mock_args | FileCheck --match-full-lines --check-prefix=LIST %s
// RUN: cmp %s %t.cu

#include "cuda_mock.h"

__global__ void dyn(float *p) { p[threadIdx.x] = 1; }
__global__ void big(float *p) { p[threadIdx.x] = 2; }
__global__ void unused(float *p) { p[threadIdx.x] = 3; }

void run(float *p, int threads) {
  dyn<<<1, threads>>>(p);
  big<<<1, 256>>>(p);
}

// DYN: clang-optiml: error: launch-bounds dyn rejected: {{.*}}.cu:[[@LINE-4]]:12: [not-applicable] the block size 'threads' at dyn/launch0 is not a constant, so a bound cannot be shown to hold
// BIG: clang-optiml: error: launch-bounds big rejected: [not-applicable] a launch uses 256 threads per block, more than max_threads=128 (the launch would fail)
// UNUSED: clang-optiml: error: launch-bounds unused rejected: [not-applicable] kernel 'unused' is never launched in this file, so its block size is unknown
// RANGE: clang-optiml: error: in '{{.*}}.4.json': edit.params.max_threads: 2048 is out of range (between 32 and 1024)
// LIST: kernel dyn:
// LIST: not launch-bounds dyn: the block size 'threads' at dyn/launch0 is not a constant, so a bound cannot be shown to hold
// LIST: kernel big:
// LIST-NEXT: launch-bounds big: no __launch_bounds__ yet; every launch uses at most 256 threads per block
// LIST-NEXT: param max_threads (integer 32..1024, required)
// LIST-NEXT: param min_blocks (integer 1..32, optional)
// LIST-NEXT: try {"kind":"launch-bounds","target":"big","params":{"max_threads":256}}
// LIST: not launch-bounds unused: kernel 'unused' is never launched in this file, so its block size is unknown
