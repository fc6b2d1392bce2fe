// constant-memory: look-alikes, each refused with the reason: an index
// that differs between threads; an array the kernel writes; a loop bound
// known only at run time; an array too large for constant memory; an
// index that may be negative; a launch that is not a statement of its own
// (no copy can precede it); an argument with a side effect (it would run
// twice); a kernel whose name is taken as a function pointer (a launch
// through it would get no copy); a template kernel one of whose
// instantiations reads too much; a row pointer into the array that is
// written through, and one that is stepped (its reads cannot be followed).
// RUN: clang-optiml transforms -v %s -- %mock_args 2>&1 | FileCheck %s
// RUN: echo '{"kind":"constant-memory","target":"unbraced"}' > %t.1.json
// RUN: not clang-optiml apply %s --edit %t.1.json -- %mock_args 2>&1 | FileCheck --check-prefix=STMT %s
// RUN: echo '{"kind":"constant-memory","target":"twice"}' > %t.2.json
// RUN: not clang-optiml apply %s --edit %t.2.json -- %mock_args 2>&1 | FileCheck --check-prefix=TWICE %s
// RUN: echo '{"kind":"constant-memory","target":"per_thread","params":{"param":"nope"}}' > %t.3.json
// RUN: not clang-optiml apply %s --edit %t.3.json -- %mock_args 2>&1 | FileCheck --check-prefix=PARAM %s

#include "cuda_mock.h"

// CHECK: not constant-memory per_thread: kernel 'per_thread': the index 'threadIdx.x % 16' at {{[0-9]+}}:{{[0-9]+}} is not built from constants and loops with constant bounds (the same for every thread)
// PARAM: kernel 'per_thread' has no parameter 'nope'
__global__ void per_thread(const float *lut, float *out) {
  out[threadIdx.x] = lut[threadIdx.x % 16];
}

// CHECK: not constant-memory written: kernel 'written': 'c' is written
__global__ void written(float *c, float *out) {
  float s = 0;
  for (int i = 0; i < 8; ++i)
    s += c[i];
  c[0] = s;
  out[threadIdx.x] = s;
}

// CHECK: not constant-memory runtime: kernel 'runtime': the index 'i' at {{[0-9]+}}:{{[0-9]+}} is not built from constants
__global__ void runtime(int n, const float *c, float *out) {
  float s = 0;
  for (int i = 0; i < n; ++i)
    s += c[i];
  out[threadIdx.x] = s;
}

// CHECK: not constant-memory big: kernel 'big': 'c' is read at up to 8192 elements; constant memory takes at most 16384 bytes here
__global__ void big(const float *c, float *out) {
  float s = 0;
  for (int i = 0; i < 8192; ++i)
    s += c[i];
  out[threadIdx.x] = s;
}

// CHECK: not constant-memory negative: kernel 'negative': the index 'i - 1' at {{[0-9]+}}:{{[0-9]+}} may be negative
__global__ void negative(const float *c, float *out) {
  float s = 0;
  for (int i = 0; i < 4; ++i)
    s += c[i - 1];
  out[threadIdx.x] = s;
}

// CHECK: not constant-memory unbraced: kernel 'unbraced': the launch unbraced/launch0 is not a statement of its own
// STMT: the launch unbraced/launch0 is not a statement of its own, so no copy can precede it
__global__ void unbraced(const float *c, float *out) {
  float s = 0;
  for (int i = 0; i < 4; ++i)
    s += c[i];
  out[threadIdx.x] = s;
}

// CHECK: not constant-memory twice: kernel 'twice': the argument of twice/launch0 for 'c' has side effects
// TWICE: the argument of twice/launch0 for 'c' has side effects or no place in the file; it would be evaluated twice
__global__ void twice(const float *c, float *out) {
  float s = 0;
  for (int i = 0; i < 4; ++i)
    s += c[i];
  out[threadIdx.x] = s;
}

// CHECK: not constant-memory pointer: the kernel's address is taken at line 124 (a function pointer): a launch through it is not seen and would be left as it is, and this transform depends on the kernel's launches
__global__ void pointer(const float *c, float *out) {
  float s = 0;
  for (int i = 0; i < 4; ++i)
    s += c[i];
  out[threadIdx.x] = s;
}

// CHECK: not constant-memory templ: kernel 'templ': 'c' is read at up to 8192 elements; constant memory takes at most 16384 bytes here in templ<8192>
template <int N> __global__ void templ(const float *c, float *out) {
  float s = 0;
  for (int i = 0; i < N; ++i)
    s += c[i];
  out[threadIdx.x] = s;
}

// CHECK: not constant-memory through_written: kernel 'through_written': 'w', a pointer into 'c', is written through at {{[0-9]+}}:{{[0-9]+}}
__global__ void through_written(float *c, float *out) {
  float *w = c + 2;
  float s = 0;
  for (int i = 0; i < 4; ++i)
    s += w[i];
  w[0] = s;
  out[threadIdx.x] = s;
}

// CHECK: not constant-memory stepped: kernel 'stepped': 'c' is bound to 'p' at {{[0-9]+}}:{{[0-9]+}}, which is not a row pointer to follow ('p' changes after its declaration
__global__ void stepped(const float *c, float *out) {
  const float *p = c + 1;
  float s = 0;
  for (int i = 0; i < 4; ++i) {
    s += p[0];
    ++p;
  }
  out[threadIdx.x] = s;
}

int main(int argc, char **) {
  float *c = 0, *out = 0;
  per_thread<<<1, 32>>>(c, out);
  written<<<1, 32>>>(c, out);
  runtime<<<1, 32>>>(argc, c, out);
  big<<<1, 32>>>(c, out);
  negative<<<1, 32>>>(c, out);
  if (argc > 1)
    unbraced<<<1, 32>>>(c, out);
  twice<<<1, 32>>>(c++, out);
  void (*fp)(const float *, float *) = pointer;
  pointer<<<1, 32>>>(c, out);
  (void)fp;
  templ<4><<<1, 32>>>(c, out);
  templ<8192><<<1, 32>>>(c, out);
  through_written<<<1, 32>>>(out, out);
  stepped<<<1, 32>>>(c, out);
}
