// transforms lists, per kernel, the catalog edits that apply with a reason,
// their parameters and edits worth trying; -v adds why the others don't;
// --kernel narrows to one kernel (an unknown one is an error naming those
// that exist); --json is machine-readable.
// RUN: cp %s %t.cu
// RUN: clang-optiml transforms %t.cu --kernel ns::scale -- %mock_args | FileCheck --match-full-lines --check-prefix=TEXT %s
// RUN: clang-optiml transforms %t.cu --kernel ns::scale -v -- %mock_args 2>/dev/null | FileCheck --match-full-lines --check-prefix=VERBOSE %s
// RUN: clang-optiml transforms %t.cu --json -- %mock_args | FileCheck --check-prefix=JSON %s
// RUN: not clang-optiml transforms %t.cu --kernel nope -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=NOPE %s

#include "cuda_mock.h"

namespace ns {
template <typename T>
__global__ void scale(T *p, T s, int n) {
  for (int k = 0; k < 4; ++k)
    p[threadIdx.x * 4 + k] *= s;
}
} // namespace ns

__global__ void act(const float *in, float *out) {
  out[threadIdx.x] = expf(in[threadIdx.x]);
}

void run(float *a, float *b) {
  ns::scale<<<2, 64>>>(a, 2.0f, 256);
  act<<<1, 128>>>(a, b);
}

// TEXT:      kernel ns::scale:
// TEXT-NEXT:   launch-bounds ns::scale: no __launch_bounds__ yet; every launch uses at most 64 threads per block
// TEXT-NEXT:     param max_threads (integer 32..1024, required)
// TEXT-NEXT:     param min_blocks (integer 1..32, optional)
// TEXT-NEXT:     try {"kind":"launch-bounds","target":"ns::scale","params":{"max_threads":64}}
// TEXT-NEXT:     try {"kind":"launch-bounds","target":"ns::scale","params":{"max_threads":64,"min_blocks":2}}
// TEXT-NEXT:     try {"kind":"launch-bounds","target":"ns::scale","params":{"max_threads":64,"min_blocks":4}}
// TEXT-NEXT:   unroll ns::scale/loop0: constant trip count of 4: can be unrolled fully
// TEXT-NEXT:     param factor (integer 2..1024, optional)
// TEXT-NEXT:     try {"kind":"unroll","target":"ns::scale/loop0","params":{}}
// TEXT-NOT:  not {{.*}}
// TEXT-NOT:  kernel act:

// VERBOSE: kernel ns::scale:
// VERBOSE: not restrict-const ns::scale: 'p' is written (or an element is passed by reference or its address taken) at 17:5; no __restrict__: the kernel has fewer than two pointer parameters
// VERBOSE: not read-only-cache ns::scale: no read-only loads: 'p': element type 'T' has no __ldg overload (a template parameter)
// VERBOSE: not fast-math ns::scale: the kernel calls none of expf, logf, sinf, cosf, powf

// JSON:      "kernel": "ns::scale",
// JSON:      "kernel": "act",
// JSON:      "kind": "read-only-cache",
// JSON-NEXT: "target": "act",
// JSON-NEXT: "reason": "read-only loads: 1 from 'in'",
// JSON:      "kind": "fast-math",
// JSON-NEXT: "target": "act",
// JSON-NEXT: "reason": "1 call of expf can use fast intrinsics (changes precision)",
// JSON-NEXT: "changes_precision": true,

// NOPE: clang-optiml: error: no kernel named 'nope' in '{{.*}}.cu' (kernels: 'ns::scale', 'act')
