// hoist refuses, with the reason, a loop where nothing is invariant, a load
// that may alias a store in the loop, a load across a barrier, a call to a
// function that may have side effects, and an invariant load when
// params.loads is false; the file is not touched.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"hoist","target":"nothing/loop0"}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=NOTHING %s
// RUN: echo '{"kind":"hoist","target":"alias/loop0"}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=ALIAS %s
// RUN: echo '{"kind":"hoist","target":"barrier/loop0"}' > %t.3.json
// RUN: not clang-optiml apply %t.cu --edit %t.3.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=BARRIER %s
// RUN: echo '{"kind":"hoist","target":"calls/loop0"}' > %t.4.json
// RUN: not clang-optiml apply %t.cu --edit %t.4.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=CALLS %s
// RUN: echo '{"kind":"hoist","target":"noloads/loop0","params":{"loads":false}}' > %t.5.json
// RUN: not clang-optiml apply %t.cu --edit %t.5.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=NOLOADS %s
// RUN: echo '{"kind":"hoist","target":"noloads/loop0"}' > %t.6.json
// RUN: clang-optiml apply %t.cu --edit %t.6.json -- %mock_args | FileCheck --check-prefix=LOADS %s
// RUN: cmp %s %t.cu

#include "cuda_mock.h"

__global__ void nothing(float *out, int n) {
  float s = 0.0f;
  for (int k = 0; k < n; ++k)
    s = s * 0.5f + k;
  out[threadIdx.x] = s;
}

__global__ void alias(float *a, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < n; ++k)
    out[k * n + i] = a[i] + k;
}

__global__ void barrier(const float *a, float *out, int n) {
  __shared__ float t[256];
  for (int k = 0; k < n; ++k) {
    t[threadIdx.x] = a[blockIdx.x] + k;
    __syncthreads();
    out[k] = t[(threadIdx.x + k) % 256];
  }
}

__device__ float counter(float x) { return x + 1.0f; }
__global__ void calls(float *out, int n, float x) {
  for (int k = 0; k < n; ++k)
    out[k] = counter(x) + k;
}

__global__ void noloads(const float *a, float *out, int n) {
  for (int k = 0; k < n; ++k)
    out[k] = a[0] + k;
}

// NOTHING: clang-optiml: error: hoist nothing/loop0 rejected: {{.*}}: [not-applicable] loop nothing/loop0: nothing in it is loop-invariant and worth hoisting (every expression uses a variable assigned in the loop)
// ALIAS: clang-optiml: error: hoist alias/loop0 rejected: {{.*}}: [not-applicable] loop alias/loop0: nothing in it is loop-invariant and worth hoisting (the load 'a[i]' may alias the store to 'out[k * n + i]' at 32:5 ('a' is neither const-qualified nor __restrict__))
// BARRIER: clang-optiml: error: hoist barrier/loop0 rejected: {{.*}}: [not-applicable] loop barrier/loop0: nothing in it is loop-invariant and worth hoisting (the load 'a[blockIdx.x]' may change between iterations: the loop calls '__syncthreads' at 39:5, after which other threads' stores can be visible ('a' is not both __restrict__ and read-only))
// CALLS: clang-optiml: error: hoist calls/loop0 rejected: {{.*}}: [not-applicable] loop calls/loop0: nothing in it is loop-invariant and worth hoisting ('counter(x)' calls 'counter', which is not a known side-effect-free math function)
// NOLOADS: clang-optiml: error: hoist noloads/loop0 rejected: {{.*}}: [not-applicable] loop noloads/loop0: nothing in it is loop-invariant and worth hoisting (the load 'a[0]' is invariant, but params.loads is false)
// LOADS: const float optiml_h0 = (0 < n) ? a[0] : static_cast<float>(0);
