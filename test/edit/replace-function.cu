// replace-function: a good rewrite of a kernel replaces its definition
// (template header included), is checked for every launched instantiation,
// and leaves everything else byte for byte. A list adds a helper first.
// RUN: cp %s %t.cu
// RUN: echo '{"kind":"replace-function","target":"scale","params":{"code":"template <typename T>\n__global__ void scale(T *p, T s, int n) {\n  for (int i = threadIdx.x; i < n; i += blockDim.x)\n    p[i] *= s;\n}"}}' > %t.json
// RUN: clang-optiml apply %t.cu --edit %t.json --diff -- %mock_args | FileCheck --match-full-lines --check-prefix=DIFF %s
// RUN: clang-optiml apply %t.cu --edit %t.json -o %t.out.cu -- %mock_args
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs %t.out.cu -o %t.o %}
// RUN: echo '{"kind":"replace-function","target":"scale","params":{"code":"template <typename T>\n__global__ void scale(T *p, T s, int n) {\n  p[threadIdx.x] = s.x;\n}"}}' > %t.bad.json
// RUN: not clang-optiml apply %t.cu --edit %t.bad.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=INST %s
// RUN: echo '[{"kind":"add-device-function","target":"scale","params":{"code":"template <typename T>\n__device__ __forceinline__ T twice(T v) { return v + v; }"}},{"kind":"replace-function","target":"scale","params":{"code":"template <typename T>\n__global__ void scale(T *p, T s, int n) {\n  if (threadIdx.x < n)\n    p[threadIdx.x] = twice(p[threadIdx.x]) * s;\n}"}}]' > %t.list.json
// RUN: clang-optiml apply %t.cu --edit %t.list.json -o %t.list.cu -- %mock_args
// RUN: FileCheck --match-full-lines --check-prefix=LIST %s < %t.list.cu
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -I%inputs %t.list.cu -o %t.list.o %}

#include "cuda_mock.h"
template <typename T>
__global__ void scale(T *p, T s, int n) {
  int i = threadIdx.x;
  if (i < n)
    p[i] *= s;
}
void run(float *f, double *d, int n) {
  scale<<<1, 128>>>(f, 2.0f, n);
  scale<<<1, 128>>>(d, 2.0, n);
}

// DIFF:      --- a/{{(.*/)?}}replace-function.cu.tmp.cu
// DIFF-NEXT: +++ b/{{(.*/)?}}replace-function.cu.tmp.cu
// DIFF-NEXT: @@ -{{[0-9]+}},8 +{{[0-9]+}},7 @@
// DIFF-NEXT:  #include "cuda_mock.h"
// DIFF-NEXT:  template <typename T>
// DIFF-NEXT:  __global__ void scale(T *p, T s, int n) {
// DIFF-NEXT: -  int i = threadIdx.x;
// DIFF-NEXT: -  if (i < n)
// DIFF-NEXT: +  for (int i = threadIdx.x; i < n; i += blockDim.x)
// DIFF-NEXT:      p[i] *= s;
// DIFF-NEXT:  }
// DIFF-NEXT:  void run(float *f, double *d, int n) {
// INST: clang-optiml: error: replace-function scale rejected: {{.*}}: [type-checks] (host side) member reference base type 'float' is not a structure or union; note: in instantiation of function template specialization 'scale<float>' requested here
// LIST:      template <typename T>
// LIST-NEXT: __device__ __forceinline__ T twice(T v) { return v + v; }
// LIST-EMPTY:
// LIST-NEXT: template <typename T>
// LIST-NEXT: __global__ void scale(T *p, T s, int n) {
// LIST-NEXT:   if (threadIdx.x < n)
// LIST-NEXT:     p[threadIdx.x] = twice(p[threadIdx.x]) * s;
// LIST-NEXT: }
