// launch-config on stencils (issue 20): 3D blocks (block_z) and guards
// whose bound is a parameter less a constant (`x < n - 1`, `j <= n - 2`,
// `i >= n - 1` before a return), with lower bounds beside them. A 3D
// 7-point stencil launched through dim3 variables in a timing lambda
// becomes 16x8x4; a 2D Jacobi sweep with an early return becomes 32x8; a
// 3D box whose block changes in z only. The program checks every output
// (the border too, which no thread may write) against the CPU, on odd
// sizes so that the last blocks are partial; it passes before and after
// on the host, thread by thread, and the result compiles with nvcc. The
// suggestions keep the block's dimensionality. Look-alikes refused with
// their reasons: an unsigned `n - 1` (wraps for n = 0 and lets every
// thread through), `x <= n`, and a 3D kernel whose z index is not
// guarded. Coarsened kernels, whose thread covers 4 points along x: the
// 7-point stencil after vectorize-stencil (its grid in x divided by 32, y
// and z read from the dim3 variable) becomes 16x8x4; a hand-written 2D
// kernel of 4 points a thread becomes 32x8. A forward difference whose
// one-term early return bounds `i + 1` becomes 128 wide; a 2D map whose
// grid is sized `w / 16 + (w % 16 != 0)` becomes 32x8; a kernel bounded
// by a constexpr and a macro becomes 32x4, one by a template parameter
// (read in the instantiation launched) 128 wide. Grids sized through the
// samples' iDivUp helper, a function-like macro (`DIV_UP(n, 64)`, replaced
// whole) and from the block's extents (`(w + block.x - 1) / block.x`)
// become 128 and 256 wide and 32x8. The input file is left as it was.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms -v %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: python3 %inputs/edit/host-run.py %t/k.cu | FileCheck --check-prefix=HOST %s
// RUN: echo '{"kind":"launch-config","target":"zfree/launch0","params":{"block_z":4}}' > %t/z.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/z.json -o %t/z.cu 2>&1 | FileCheck --check-prefix=ZFREE %s
// RUN: test ! -e %t/z.cu
// RUN: sed -n 's|^// EDIT: ||p' %s > %t/edits.jsonl
// RUN: while read -r e; do \
// RUN:   echo "$e" > %t/e.json && \
// RUN:   clang-optiml apply %t/all.cu --edit %t/e.json -o %t/next.cu && mv %t/next.cu %t/all.cu || exit 1; \
// RUN: done < %t/edits.jsonl
// RUN: grep -v '^//' %t/all.cu | FileCheck --check-prefix=OUT %s
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -Werror all-warnings -o %t/all.o %t/all.cu %}
// RUN: python3 %inputs/edit/host-run.py %t/all.cu | FileCheck --check-prefix=HOST %s
// RUN: cmp %s %t/k.cu

// HOST-NOT: FAIL
// HOST: PASS stencil7
// HOST: PASS jacobi
// HOST: PASS box
// HOST: PASS unsigned
// HOST: PASS inclusive
// HOST: PASS zfree
// HOST: PASS stencil7v
// HOST: PASS rows4
// HOST: PASS diff1
// HOST: PASS rem2d
// HOST: PASS csize
// HOST: PASS tshift
// HOST: PASS idiv
// HOST: PASS idiv_macro
// HOST: PASS bext
// HOST-NEXT: PASS

// WHY: launch-config stencil7/launch0: {{.*}}(x: '(n + 7) / 8' covers 'x < n - 1'; y: '(n + 7) / 8' covers 'y < n - 1'; z: '(n + 7) / 8' covers 'z < n - 1')
// WHY-NEXT: {{.*}}param block
// WHY: try {"kind":"launch-config","target":"stencil7/launch0","params":{"block_x":32,"block_y":4,"block_z":4}}
// WHY-NEXT: try {"kind":"launch-config","target":"stencil7/launch0","params":{"block_x":16,"block_y":8,"block_z":4}}
// WHY-NEXT: try {"kind":"launch-config","target":"stencil7/launch0","params":{"block_x":32,"block_y":8,"block_z":2}}
// WHY: launch-config jacobi/launch0: {{.*}}(x: '(n + 15) / 16' covers 'j <= n - 2'; y: '(n + 15) / 16' covers 'i < n - 1')
// WHY: try {"kind":"launch-config","target":"jacobi/launch0","params":{"block_x":32,"block_y":8}}
// WHY: launch-config box/launch0: {{.*}}z: '(d + 1) / 2' covers 'z < d - 1'
// WHY: launch-config rows4/launch0: {{.*}}(x: '(w + 63) / 64' covers 'x0 < w' (4 points a thread); y: '(h + 7) / 8' covers 'y < h')
// WHY: try {"kind":"launch-config","target":"rows4/launch0","params":{"block_x":16,"block_y":16}}
// WHY: launch-config diff1/launch0: {{.*}}(x: '(n + 255) / 256' covers 'i < n - 1')
// WHY: launch-config rem2d/launch0: {{.*}}(x: 'w / 16 + (w % 16 != 0)' covers 'x < w'; y: 'h / 16 + (h % 16 > 0)' covers 'y < h')
// WHY: launch-config csize/launch0: {{.*}}(x: '(CW + 15) / 16' covers 'x < CW'; y: '(ch + 15) / 16' covers 'y < CH - 1')
// WHY: launch-config tshift/launch0: {{.*}}(x: '(1000 + 255) / 256' covers 'i < Len - 1')
// WHY: launch-config idiv/launch0: {{.*}}(x: 'iDivUp(n, 256)' covers 'i < n')
// WHY: launch-config idiv/launch1: {{.*}}(x: 'DIV_UP(n, 64)' covers 'i < n')
// WHY: launch-config bext/launch0: {{.*}}(x: '(w + block.x - 1) / block.x' covers 'x < w'; y: '(h + block.y - 1) / block.y' covers 'y < h')
// WHY: not launch-config unsigned_/launch0: kernel 'unsigned_' has no global x index 'blockIdx.x * blockDim.x + threadIdx.x' guarded at once by a parameter bound; the threads past the data might do work
// WHY: not launch-config inclusive/launch0: kernel 'inclusive' has no global x index 'blockIdx.x * blockDim.x + threadIdx.x' guarded at once by a parameter bound; the threads past the data might do work
// ZFREE: clang-optiml: error: launch-config zfree/launch0 rejected: [not-applicable] kernel 'zfree' has no global z index 'blockIdx.z * blockDim.z + threadIdx.z' guarded at once by a parameter bound; the threads past the data might do work

// EDIT: {"kind":"launch-config","target":"stencil7/launch0","params":{"block_x":16,"block_y":8,"block_z":4}}
// EDIT: {"kind":"launch-config","target":"jacobi/launch0","params":{"block_x":32,"block_y":8}}
// EDIT: {"kind":"launch-config","target":"box/launch0","params":{"block_z":8}}
// EDIT: {"kind":"vectorize-stencil","target":"stencil7v"}
// EDIT: {"kind":"launch-config","target":"stencil7v/launch0","params":{"block_x":16,"block_y":8,"block_z":4}}
// EDIT: {"kind":"launch-config","target":"rows4/launch0","params":{"block_x":32,"block_y":8}}
// EDIT: {"kind":"launch-config","target":"diff1/launch0","params":{"block":128}}
// EDIT: {"kind":"launch-config","target":"rem2d/launch0","params":{"block_x":32,"block_y":8}}
// EDIT: {"kind":"launch-config","target":"csize/launch0","params":{"block_x":32,"block_y":4}}
// EDIT: {"kind":"launch-config","target":"tshift/launch0","params":{"block":128}}
// EDIT: {"kind":"launch-config","target":"idiv/launch0","params":{"block":128}}
// EDIT: {"kind":"launch-config","target":"idiv/launch1","params":{"block":256}}
// EDIT: {"kind":"launch-config","target":"bext/launch0","params":{"block_x":32,"block_y":8}}

// OUT: bench([&] { stencil7<<<dim3((n + 15) / 16, (n + 7) / 8, (n + 3) / 4), dim3(16, 8, 4)>>>(n, din, dout); });
// OUT: jacobi<<<dim3((n + 31) / 32, (n + 7) / 8), dim3(32, 8)>>>(n, da, db);
// OUT: box<<<dim3((w + 31) / 32, (h + 3) / 4, (d + 7) / 8), dim3(32, 4, 8)>>>(w, h, d, din, dout);
// OUT: bench([&] { stencil7v<<<dim3((n + 63) / 64, blocks.y, (n + 3) / 4), dim3(16, 8, 4)>>>(n, din, dout); });
// OUT: rows4<<<dim3((w + 127) / 128, (h + 7) / 8), dim3(32, 8)>>>(w, h, din, dout);
// OUT: diff1<<<(n + 127) / 128, 128>>>(n, din, dout);
// OUT: rem2d<<<dim3((w + 31) / 32, (h + 7) / 8), dim3(32, 8)>>>(w, h, din, dout);
// OUT: csize<<<dim3((CW + 31) / 32, (ch + 3) / 4), dim3(32, 4)>>>(din, dout);
// OUT: tshift<1000><<<(1000 + 127) / 128, 128>>>(din, dout);
// OUT: idiv<<<(n + 127) / 128, 128>>>(n, din, dout);
// OUT: idiv<<<(n + 255) / 256, 256>>>(n, din, dm);
// OUT: bext<<<dim3((w + 31) / 32, (h + 7) / 8), dim3(32, 8)>>>(w, h, din, dout);

#include <cmath>
#include <cstdio>
#include <cstdlib>
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


#define C0 0.4f
#define C1 0.1f

// The 3D 7-point stencil, interior points only.
__global__ void stencil7(int n, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x > 0 && x < n - 1 && y > 0 && y < n - 1 && z > 0 && z < n - 1) {
    size_t c = ((size_t)z * n + y) * n + x;
    size_t sy = n, sz = (size_t)n * n;
    out[c] = C0 * in[c] + C1 * (in[c - 1] + in[c + 1] + in[c - sy] +
                                in[c + sy] + in[c - sz] + in[c + sz]);
  }
}

// A Jacobi sweep with an early return; the bound on j is inclusive and
// written on the other side of the comparison.
__global__ void jacobi(int n, const float *in, float *out) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < 1 || i >= n - 1 || j < 1 || n - 2 < j)
    return;
  out[i * n + j] = 0.25f * (in[(i - 1) * n + j] + in[(i + 1) * n + j] +
                            in[i * n + j - 1] + in[i * n + j + 1]);
}

// A box average over z neighbours; the block changes in z only.
__global__ void box(int w, int h, int d, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < w && y < h && z > 0 && z < d - 1) {
    size_t c = ((size_t)z * h + y) * w + x, s = (size_t)w * h;
    out[c] = (in[c - s] + in[c] + in[c + s]) / 3.f;
  }
}

// The same stencil, to be vectorized first (4 points a thread along x).
__global__ void stencil7v(int n, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x > 0 && x < n - 1 && y > 0 && y < n - 1 && z > 0 && z < n - 1) {
    size_t c = ((size_t)z * n + y) * n + x;
    size_t sy = n, sz = (size_t)n * n;
    out[c] = C0 * in[c] + C1 * (in[c - 1] + in[c + 1] + in[c - sy] +
                                in[c + sy] + in[c - sz] + in[c + sz]);
  }
}

// Coarsened by hand: each thread scales 4 consecutive points of a row.
__global__ void rows4(int w, int h, const float *in, float *out) {
  int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (y < h && x0 < w) {
    for (int k = 0; k < 4; ++k)
      if (x0 + k < w)
        out[(size_t)y * w + x0 + k] = 3.f * in[(size_t)y * w + x0 + k] + k;
  }
}

// A forward difference: one early-return term bounds i + 1.
__global__ void diff1(int n, const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 1 >= n)
    return;
  out[i] = in[i + 1] - in[i];
}

// A 2D map whose grid is sized `w / 16 + (w % 16 != 0)`, the remainder's
// test spelled two ways.
__global__ void rem2d(int w, int h, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h)
    out[y * w + x] = 2.f * in[y * w + x] + 1.f;
}

// Sizes known when compiling: the guard's bounds are a constexpr and a
// macro, the grid sized from them.
constexpr int CW = 75;
#define CH 37
__global__ void csize(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < CW && y < CH - 1)
    out[y * CW + x] = in[(y + 1) * CW + x] - in[y * CW + x];
}

// A size that is a template parameter, read in the instantiation launched.
template <int Len> __global__ void tshift(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < Len - 1)
    out[i] = in[i + 1];
}

// Grids sized the samples' way: through iDivUp (a host helper, `a % b !=
// 0 ? a / b + 1 : a / b`) and from the block's own extents.
int iDivUp(int a, int b) { return (a % b != 0) ? (a / b + 1) : (a / b); }
#define DIV_UP(a, b) (((a) + (b) - 1) / (b))
__global__ void idiv(int n, const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 3.0f * in[i];
}
__global__ void bext(int w, int h, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h)
    out[y * w + x] = in[y * w + x] + 1.0f;
}

// Look-alikes. An unsigned bound less a constant.
__global__ void unsigned_(unsigned n, const float *in, float *out) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x > 0 && x < n - 1)
    out[x] = in[x - 1] + in[x + 1];
}
// A bound that lets index n through (the grid covers it only when n is
// not a multiple of the block).
__global__ void inclusive(int n, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x <= n)
    out[x] = in[x] * 2.f;
}
// A 3D kernel whose z index is not guarded.
__global__ void zfree(int n, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < n && y < n)
    out[((size_t)z * n + y) * n + x] = in[((size_t)z * n + y) * n + x] + 1.f;
}

template <typename T> T *upload(const std::vector<T> &h) {
  T *d = nullptr;
  CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <typename T> std::vector<T> download(const T *d, size_t n) {
  std::vector<T> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}
static int failures = 0;
void expect(const char *name, const std::vector<float> &got,
            const std::vector<float> &want) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs((double)got[i] - (double)want[i]));
  bool ok = got.size() == want.size() && worst < 1e-4;
  printf("%s %s (worst error %.2e)\n", ok ? "PASS" : "FAIL", name, worst);
  failures += !ok;
}
std::vector<float> values(size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (float)((int)((i * 2654435761u + seed * 40503u) >> 9) % 19 - 9) / 8;
  return v;
}
template <typename F> void bench(F op) { op(); }

int main() {
  {
    const int n = 19;
    auto in = values(n * n * n, 1);
    std::vector<float> want(in.size(), -1.f);
    for (int z = 1; z < n - 1; ++z)
      for (int y = 1; y < n - 1; ++y)
        for (int x = 1; x < n - 1; ++x) {
          size_t c = ((size_t)z * n + y) * n + x, sy = n, sz = n * n;
          want[c] = C0 * in[c] + C1 * (in[c - 1] + in[c + 1] + in[c - sy] +
                                       in[c + sy] + in[c - sz] + in[c + sz]);
        }
    float *din = upload(in), *dout = upload(std::vector<float>(in.size(), -1.f));
    dim3 threads(8, 8, 8), blocks((n + 7) / 8, (n + 7) / 8, (n + 7) / 8);
    bench([&] { stencil7<<<blocks, threads>>>(n, din, dout); });
    expect("stencil7", download(dout, in.size()), want);
  }
  {
    const int n = 45;
    auto a = values(n * n, 2);
    std::vector<float> want(a.size(), -1.f);
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < n - 1; ++j)
        want[i * n + j] = 0.25f * (a[(i - 1) * n + j] + a[(i + 1) * n + j] +
                                   a[i * n + j - 1] + a[i * n + j + 1]);
    float *da = upload(a), *db = upload(std::vector<float>(a.size(), -1.f));
    dim3 threads(16, 16), blocks((n + 15) / 16, (n + 15) / 16);
    jacobi<<<blocks, threads>>>(n, da, db);
    expect("jacobi", download(db, a.size()), want);
  }
  {
    const int w = 37, h = 9, d = 13;
    auto in = values(w * h * d, 3);
    std::vector<float> want(in.size(), -1.f);
    for (int z = 1; z < d - 1; ++z)
      for (size_t c = (size_t)z * w * h; c < (size_t)(z + 1) * w * h; ++c)
        want[c] = (in[c - w * h] + in[c] + in[c + w * h]) / 3.f;
    float *din = upload(in), *dout = upload(std::vector<float>(in.size(), -1.f));
    box<<<dim3((w + 31) / 32, (h + 3) / 4, (d + 1) / 2), dim3(32, 4, 2)>>>(w, h, d, din, dout);
    expect("box", download(dout, in.size()), want);
  }
  {
    const unsigned n = 300;
    auto in = values(n, 4);
    std::vector<float> want(n, 0.f);
    for (unsigned x = 1; x + 1 < n; ++x)
      want[x] = in[x - 1] + in[x + 1];
    float *din = upload(in), *dout = upload(std::vector<float>(n, 0.f));
    unsigned_<<<(n + 255) / 256, 256>>>(n, din, dout);
    expect("unsigned", download(dout, n), want);
  }
  {
    const int n = 300; // n + 1 elements
    auto in = values(n + 1, 5);
    std::vector<float> want(n + 1);
    for (int x = 0; x <= n; ++x)
      want[x] = in[x] * 2.f;
    float *din = upload(in), *dout = upload(std::vector<float>(n + 1, 0.f));
    inclusive<<<(n + 255) / 256, 256>>>(n, din, dout);
    expect("inclusive", download(dout, n + 1), want);
  }
  {
    const int n = 8;
    auto in = values(n * n * n, 6);
    std::vector<float> want(in.size());
    for (size_t c = 0; c < in.size(); ++c)
      want[c] = in[c] + 1.f;
    float *din = upload(in), *dout = upload(std::vector<float>(in.size(), 0.f));
    zfree<<<dim3((n + 7) / 8, (n + 7) / 8, (n + 7) / 8), dim3(8, 8, 8)>>>(n, din, dout);
    expect("zfree", download(dout, in.size()), want);
  }
  {
    const int n = 21;
    auto in = values(n * n * n, 7);
    std::vector<float> want(in.size(), -1.f);
    for (int z = 1; z < n - 1; ++z)
      for (int y = 1; y < n - 1; ++y)
        for (int x = 1; x < n - 1; ++x) {
          size_t c = ((size_t)z * n + y) * n + x, sy = n, sz = n * n;
          want[c] = C0 * in[c] + C1 * (in[c - 1] + in[c + 1] + in[c - sy] +
                                       in[c + sy] + in[c - sz] + in[c + sz]);
        }
    float *din = upload(in), *dout = upload(std::vector<float>(in.size(), -1.f));
    dim3 threads(8, 8, 8), blocks((n + 7) / 8, (n + 7) / 8, (n + 7) / 8);
    bench([&] { stencil7v<<<blocks, threads>>>(n, din, dout); });
    expect("stencil7v", download(dout, in.size()), want);
  }
  {
    const int w = 141, h = 19;
    auto in = values(w * h, 8);
    std::vector<float> want(in.size());
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        want[(size_t)y * w + x] = 3.f * in[(size_t)y * w + x] + x % 4;
    float *din = upload(in), *dout = upload(std::vector<float>(in.size(), -1.f));
    rows4<<<dim3((w + 63) / 64, (h + 7) / 8), dim3(16, 8)>>>(w, h, din, dout);
    expect("rows4", download(dout, in.size()), want);
  }
  {
    const int n = 1000;
    auto in = values(n, 9);
    std::vector<float> want(n, -1.f);
    for (int i = 0; i + 1 < n; ++i)
      want[i] = in[i + 1] - in[i];
    float *din = upload(in), *dout = upload(std::vector<float>(n, -1.f));
    diff1<<<(n + 255) / 256, 256>>>(n, din, dout);
    expect("diff1", download(dout, n), want);
  }
  {
    const int w = 75, h = 37;
    auto in = values(w * h, 10);
    std::vector<float> want(w * h);
    for (int i = 0; i < w * h; ++i)
      want[i] = 2.f * in[i] + 1.f;
    float *din = upload(in), *dout = upload(std::vector<float>(w * h, -1.f));
    dim3 grid(w / 16 + (w % 16 != 0), h / 16 + (h % 16 > 0)), block(16, 16);
    rem2d<<<grid, block>>>(w, h, din, dout);
    expect("rem2d", download(dout, w * h), want);
  }
  {
    auto in = values(CW * CH, 11);
    std::vector<float> want(CW * CH, -1.f);
    for (int y = 0; y + 1 < CH; ++y)
      for (int x = 0; x < CW; ++x)
        want[y * CW + x] = in[(y + 1) * CW + x] - in[y * CW + x];
    float *din = upload(in), *dout = upload(std::vector<float>(CW * CH, -1.f));
    const int ch = CH;
    csize<<<dim3((CW + 15) / 16, (ch + 15) / 16), dim3(16, 16)>>>(din, dout);
    expect("csize", download(dout, CW * CH), want);
  }
  {
    auto in = values(1000, 12);
    std::vector<float> want(1000, -1.f);
    for (int i = 0; i + 1 < 1000; ++i)
      want[i] = in[i + 1];
    float *din = upload(in), *dout = upload(std::vector<float>(1000, -1.f));
    tshift<1000><<<(1000 + 255) / 256, 256>>>(din, dout);
    expect("tshift", download(dout, 1000), want);
  }
  {
    const int n = 1001;
    auto in = values(n, 13);
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i)
      want[i] = 3.0f * in[i];
    float *din = upload(in), *dout = upload(std::vector<float>(n, -1.f));
    idiv<<<iDivUp(n, 256), 256>>>(n, din, dout);
    expect("idiv", download(dout, n), want);
    float *dm = upload(std::vector<float>(n, -1.f));
    idiv<<<DIV_UP(n, 64), 64>>>(n, din, dm);
    expect("idiv_macro", download(dm, n), want);
  }
  {
    const int w = 45, h = 19;
    auto in = values(w * h, 14);
    std::vector<float> want(w * h);
    for (int i = 0; i < w * h; ++i)
      want[i] = in[i] + 1.0f;
    float *din = upload(in), *dout = upload(std::vector<float>(w * h, -1.f));
    dim3 block(16, 16);
    dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
    bext<<<grid, block>>>(w, h, din, dout);
    expect("bext", download(dout, w * h), want);
  }
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures != 0;
}
