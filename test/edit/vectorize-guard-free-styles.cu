// vectorize on maps without a bounds guard, written the ways people write
// them (BabelStream's copy, mul, add, triad and nstream with a const index
// and __restrict__; a template over the element type run for float and
// double; a body with a local and two statements; an unsigned
// index with the block first; a block from a #define; Rodinia's dim3 grid
// and block variables): every launch runs exactly the elements, so each
// block keeps its elements (blocks: "keep") and its threads take W
// consecutive ones; launched also on pointers one element off (the
// unaligned fallback). Refused with the reason: an access under a
// condition, an access in a loop, an early return, threadIdx.x in the body. The edits
// applied one after another compile with nvcc and the input is left as it
// was. The program checks each kernel against the CPU, so the GPU check
// runs `eval` on the result.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: clang-optiml transforms -v %t/k.cu | FileCheck --check-prefix=NOT %s
// RUN: sed -n 's|^// EDIT: ||p' %s > %t/edits.jsonl
// RUN: while read -r e; do \
// RUN:   echo "$e" > %t/e.json && \
// RUN:   clang-optiml apply %t/all.cu --edit %t/e.json -o %t/next.cu && mv %t/next.cu %t/all.cu || exit 1; \
// RUN: done < %t/edits.jsonl
// RUN: grep -v '^//' %t/all.cu | FileCheck --check-prefix=OUT %s
// RUN: %if nvcc %{ %nvcc -c -std=c++17 -arch=sm_90 -o %t/all.o %t/all.cu %}
// RUN: python3 %inputs/edit/host-run.py %t/k.cu | FileCheck --check-prefix=HOST %s
// RUN: python3 %inputs/edit/host-run.py %t/all.cu | FileCheck --check-prefix=HOST %s
// RUN: cmp %s %t/k.cu
// Its kernels run on the host (host-run.py), before the edits and after:
// every check passes.
// HOST-NOT: FAIL
// HOST: {{^PASS$}}

#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "CUDA error %s at line %d\n", cudaGetErrorString(e_),    \
              __LINE__);                                                       \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

#define TBSIZE 256
#define SCALAR 0.4f

// WHY: vectorize copy_kernel: map kernel without a bounds guard (its grid is all elements): every block keeps its elements, its threads take W consecutive ones (a, c)
__global__ void copy_kernel(const float *__restrict__ a, float *__restrict__ c) {
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  c[i] = a[i];
}
// OUT: int first = (blockDim.x * 4) * blockIdx.x + (threadIdx.x * 4);
// OUT: full = full && static_cast<unsigned long long>(i) ==
// OUT: float4 a_v = reinterpret_cast<const float4 *>(a + first)[0];
// OUT: c_v.w = a_v.w;
// OUT: reinterpret_cast<float4 *>(c + first)[0] = c_v;
// OUT: } else {
// OUT: c[i] = a[i];

// WHY: vectorize mul_kernel: map kernel without a bounds guard
__global__ void mul_kernel(float *__restrict__ b, const float *__restrict__ c) {
  const float scalar = SCALAR;
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  b[i] = scalar * c[i];
}

// WHY: vectorize add_kernel: map kernel without a bounds guard
__global__ void add_kernel(const float *__restrict__ a,
                           const float *__restrict__ b,
                           float *__restrict__ c) {
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  c[i] = a[i] + b[i];
}

// WHY: vectorize triad_kernel: map kernel without a bounds guard
__global__ void triad_kernel(float *__restrict__ a, const float *__restrict__ b,
                             const float *__restrict__ c, float scalar) {
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  a[i] = b[i] + scalar * c[i];
}

// WHY: vectorize nstream_kernel: map kernel without a bounds guard
__global__ void nstream_kernel(float *a, const float *b, const float *c,
                               float scalar) {
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  float t = b[i] + scalar * c[i];
  a[i] += t;
}
// OUT: a_v.y += t;

// A template over the element type, instantiated for float and double
// (BabelStream's own kernels): the vector path for float, every
// instantiation's threads take W elements.
// WHY: vectorize scale_t: map kernel without a bounds guard (its grid is all elements): every block keeps its elements, its threads take W consecutive ones (b, c); vector path for scale_t<float>, other instantiations take their elements one by one
template <class T>
__global__ void scale_t(T *__restrict__ b, const T *__restrict__ c) {
  const T scalar = SCALAR;
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  b[i] = scalar * c[i];
}
// OUT: if constexpr (std::is_same<T, float>::value) {
// OUT: float4 c_v = reinterpret_cast<const float4 *>(c + first)[0];
// OUT: } else {
// OUT: for (int k = 0; k < 4; ++k) {
// OUT: b[i] = scalar * c[i];

// WHY: vectorize shift_u: map kernel without a bounds guard
__global__ void shift_u(const unsigned *in, unsigned *out, unsigned s) {
  unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;
  out[idx] = (in[idx] << s) ^ idx;
}

// WHY: vectorize init_flux: map kernel without a bounds guard
__global__ void init_flux(float *flux, const float *area, float v) {
  const int i = (blockDim.x * blockIdx.x + threadIdx.x);
  flux[i] = v * area[i];
}

// NOT: not vectorize cond_copy: kernel 'cond_copy': no bounds guard, and 'a[i]' is accessed under a condition: without a guard the vector path may touch only what every thread of the original touched
__global__ void cond_copy(float *a, const float *b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (b[i] > 0.5f)
    a[i] = b[i];
}

// A bound spelled `n > i` is a guard: the usual grid-stride form.
// WHY: vectorize reversed_bound: map kernel: every global access is at the thread's own element (a, b)
__global__ void reversed_bound(float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (n > i)
    a[i] = b[i];
}

// NOT: not vectorize looped: kernel 'looped': no bounds guard, and 'a[i]' is accessed under a condition
__global__ void looped(float *a, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = 0; r < reps; ++r)
    a[i] += 1.0f;
}

// NOT: not vectorize lane_mix: kernel 'lane_mix': the body reads 'threadIdx.x', which may appear only in the index
__global__ void lane_mix(float *a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = threadIdx.x % 32;
}

static int failures = 0;

template <typename T>
static void expect(const char *name, const std::vector<T> &got,
                   const std::vector<T> &want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) {
      printf("FAIL %s at %zu\n", name, i);
      ++failures;
      return;
    }
  printf("ok %s\n", name);
}

template <typename T> static std::vector<T> values(size_t n, unsigned seed) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = T((i * 2654435761u + seed * 40503u) % 1000) / T(8);
  return v;
}

template <typename T> static T *upload(const std::vector<T> &h) {
  T *d = nullptr;
  CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <typename T> static std::vector<T> download(const T *d, size_t n) {
  std::vector<T> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// BabelStream's kernels over 2^16 elements, then over 2^16 - 256 elements
// one element into each array (every vector unaligned).
static void stream(int off) {
  const int n = (1 << 16) - (off ? TBSIZE : 0);
  const int size = n + off;
  auto a = values<float>(size, 1), b = values<float>(size, 2),
       c = values<float>(size, 3);
  float *da = upload(a), *db = upload(b), *dc = upload(c);
  std::vector<float> wa(a), wb(b), wc(c);
  for (int i = off; i < size; ++i)
    wc[i] = wa[i];
  copy_kernel<<<n / TBSIZE, TBSIZE>>>(da + off, dc + off);
// OUT: copy_kernel<<<n / TBSIZE, TBSIZE / 4>>>(da + off, dc + off);
  CHECK(cudaGetLastError());
  expect(off ? "copy (offset)" : "copy", download(dc, size), wc);
  for (int i = off; i < size; ++i)
    wb[i] = SCALAR * wc[i];
  mul_kernel<<<n / TBSIZE, TBSIZE>>>(db + off, dc + off);
  CHECK(cudaGetLastError());
  expect(off ? "mul (offset)" : "mul", download(db, size), wb);
  for (int i = off; i < size; ++i)
    wc[i] = wa[i] + wb[i];
  add_kernel<<<n / TBSIZE, TBSIZE>>>(da + off, db + off, dc + off);
  CHECK(cudaGetLastError());
  expect(off ? "add (offset)" : "add", download(dc, size), wc);
  for (int i = off; i < size; ++i)
    wa[i] = wb[i] + SCALAR * wc[i];
  triad_kernel<<<n / TBSIZE, TBSIZE>>>(da + off, db + off, dc + off, SCALAR);
  CHECK(cudaGetLastError());
  expect(off ? "triad (offset)" : "triad", download(da, size), wa);
  for (int i = off; i < size; ++i)
    wa[i] += wb[i] + SCALAR * wc[i];
  nstream_kernel<<<n / TBSIZE, TBSIZE>>>(da + off, db + off, dc + off, SCALAR);
  CHECK(cudaGetLastError());
  expect(off ? "nstream (offset)" : "nstream", download(da, size), wa);
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
}

template <typename T> static void scaled(const char *name) {
  const int n = 1 << 14;
  auto c = values<T>(n, 7);
  std::vector<T> w(n);
  for (int i = 0; i < n; ++i)
    w[i] = T(SCALAR) * c[i];
  T *dc = upload(c), *db = upload(std::vector<T>(n, T(0)));
  scale_t<T><<<n / TBSIZE, TBSIZE>>>(db, dc);
// OUT: scale_t<T><<<n / TBSIZE, TBSIZE / 4>>>(db, dc);
  CHECK(cudaGetLastError());
  expect(name, download(db, n), w);
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
}

static void others() {
  scaled<float>("scale_t<float>");
  scaled<double>("scale_t<double>");
  const unsigned n = 128 * 96;
  std::vector<unsigned> in(n), want(n);
  for (unsigned i = 0; i < n; ++i) {
    in[i] = i * 2654435761u;
    want[i] = (in[i] << 3) ^ i;
  }
  unsigned *din = upload(in), *dout = upload(std::vector<unsigned>(n, 0u));
  shift_u<<<n / 128, 128>>>(din, dout, 3);
// OUT: shift_u<<<n / 128, 64>>>(din, dout, 3);
  CHECK(cudaGetLastError());
  expect("shift_u", download(dout, n), want);

  const int nelr = 192 * 40;
  auto area = values<float>(nelr, 4);
  std::vector<float> wf(nelr);
  for (int i = 0; i < nelr; ++i)
    wf[i] = 1.5f * area[i];
  float *darea = upload(area), *dflux = upload(std::vector<float>(nelr, 0.f));
  dim3 Dg(nelr / 192), Db(192);
  init_flux<<<Dg, Db>>>(dflux, darea, 1.5f);
// OUT: init_flux<<<Dg, dim3(Db.x / 2, Db.y, Db.z)>>>(dflux, darea, 1.5f);
  CHECK(cudaGetLastError());
  expect("init_flux", download(dflux, nelr), wf);
  CHECK(cudaFree(din));
  CHECK(cudaFree(dout));
  CHECK(cudaFree(darea));
  CHECK(cudaFree(dflux));
}

// The refused kernels run as written (reversed_bound, a guarded map, in
// the grid-stride form).
static void refused() {
  const int n = 1024;
  auto b = values<float>(n, 5);
  float *da = upload(std::vector<float>(n, 0.f)), *db = upload(b);
  cond_copy<<<n / 256, 256>>>(da, db);
  reversed_bound<<<n / 256, 256>>>(da, db, n);
// OUT: reversed_bound<<<(n / 256 + 3) / 4, 256>>>(da, db, n);
  looped<<<n / 256, 256>>>(da, 2);
  lane_mix<<<n / 256, 256>>>(da);
  CHECK(cudaGetLastError());
  std::vector<float> w(n);
  for (int i = 0; i < n; ++i)
    w[i] = float(i % 256 % 32);
  expect("refused kernels", download(da, n), w);
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
}

int main() {
  stream(0);
  stream(1);
  others();
  refused();
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// The edits, applied one after another by the RUN lines above and by the
// GPU check:
// EDIT: {"kind":"vectorize","target":"copy_kernel","params":{"blocks":"keep","width":4}}
// EDIT: {"kind":"vectorize","target":"mul_kernel","params":{"blocks":"keep","width":4}}
// EDIT: {"kind":"vectorize","target":"add_kernel","params":{"blocks":"keep","width":4}}
// EDIT: {"kind":"vectorize","target":"triad_kernel","params":{"blocks":"keep","width":4}}
// EDIT: {"kind":"vectorize","target":"nstream_kernel","params":{"blocks":"keep","width":2}}
// EDIT: {"kind":"vectorize","target":"scale_t","params":{"blocks":"keep","width":4}}
// EDIT: {"kind":"vectorize","target":"shift_u","params":{"blocks":"keep","width":2}}
// EDIT: {"kind":"vectorize","target":"init_flux","params":{"blocks":"keep","width":2}}
// EDIT: {"kind":"vectorize","target":"reversed_bound","params":{"width":4}}
