// vectorize-stencil on stencils written eight ways: a 3D 7-point stencil
// on a grid whose rows are not 16-byte multiples (67^3: most rows run the
// points one by one) and the same on an aligned one (64^3) with an early
// return and __restrict__; a 2D 5-point Jacobi with an early return and an
// inline dim3 grid (rows of 130 floats: every other row unaligned); a 1D
// 3-point filter on an integer grid; a double heat step (width 2); a 2D
// 9-point box through one index local; an int second difference (int4);
// two input arrays under an unsigned index. The eight edits applied one
// after another compile with nvcc and the input is left as it was. The
// program checks each kernel against the CPU, so the GPU check
// (scripts/gpu-edit-family.sh) runs `eval` on the result.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: sed -n 's|^// EDIT: ||p' %s > %t/edits.jsonl
// RUN: while read -r e; do \
// RUN:   echo "$e" > %t/e.json && \
// RUN:   clang-optiml apply %t/all.cu --edit %t/e.json -o %t/next.cu && mv %t/next.cu %t/all.cu || exit 1; \
// RUN: done < %t/edits.jsonl
// RUN: grep -v '^//' %t/all.cu | FileCheck --check-prefix=OUT %s
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -o %t/all.o %t/all.cu %}
// RUN: python3 %inputs/edit/host-run.py %t/k.cu | FileCheck --check-prefix=HOST %s
// RUN: python3 %inputs/edit/host-run.py %t/all.cu | FileCheck --check-prefix=HOST %s
// RUN: cmp %s %t/k.cu
// Its kernels run on the host thread by thread (host-run.py), before the
// edits and after: every stencil's check passes.
// HOST-NOT: FAIL
// HOST: {{^PASS$}}

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

// WHY: vectorize-stencil s7: 7 reads in 5 input row(s), one store; 4 outputs per thread along x, 16-byte rows
__global__ void s7(int n, const float *in, float *out) {
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
// OUT: int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;

// WHY: vectorize-stencil s7r: 7 reads in 5 input row(s), one store; 4 outputs per thread along x, 16-byte rows
__global__ void s7r(int n, const float *__restrict__ u,
                    float *__restrict__ v) {
  const int k = blockIdx.z * blockDim.z + threadIdx.z;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < 1 || j < 1 || k < 1 || i >= n - 1 || j >= n - 1 || k >= n - 1)
    return;
  const int p = (k * n + j) * n + i;
  v[p] = 0.5f * u[p] + (u[p - 1] + u[p + 1] + u[p - n] + u[p + n] +
                        u[p - n * n] + u[p + n * n]) / 12.0f;
}
// OUT: int i0 = (threadIdx.x + blockIdx.x * blockDim.x) * 4;

// WHY: vectorize-stencil jacobi: 4 reads in 3 input row(s), one store; 4 outputs per thread along x, 16-byte rows
__global__ void jacobi(int w, int h, const float *in, float *out) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row <= 0 || row >= h - 1 || col <= 0 || col >= w - 1)
    return;
  out[row * w + col] = 0.25f * (in[(row - 1) * w + col] + in[(row + 1) * w + col] +
                                in[row * w + col - 1] + in[row * w + col + 1]);
}

// WHY: vectorize-stencil smooth: 3 reads in 1 input row(s), one store; 4 outputs per thread along x, 16-byte rows
__global__ void smooth(int n, const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1)
    out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0f;
}

// WHY: vectorize-stencil heat: 4 reads in 1 input row(s), one store; 2 outputs per thread along x, 16-byte rows
__global__ void heat(int n, double k, const double *u, double *v) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i >= 1 && i < n - 1) {
    v[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
  }
}

// WHY: vectorize-stencil box9: 9 reads in 3 input row(s), one store; 4 outputs per thread along x, 16-byte rows
__global__ void box9(int w, int h, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < w - 1 && y >= 1 && y < h - 1) {
    int c = y * w + x;
    out[c] = (in[c - w - 1] + in[c - w] + in[c - w + 1] + in[c - 1] + in[c] +
              in[c + 1] + in[c + w - 1] + in[c + w] + in[c + w + 1]) /
             9.0f;
  }
}

// WHY: vectorize-stencil diff2: 3 reads in 1 input row(s), one store; 4 outputs per thread along x, 16-byte rows
__global__ void diff2(int n, const int *in, int *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1)
    out[i] = in[i - 1] - 2 * in[i] + in[i + 1];
}

// WHY: vectorize-stencil mix: 3 reads in 2 input row(s), one store; 4 outputs per thread along x, 16-byte rows
__global__ void mix(unsigned n, const float *a, const float *b, float *out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 1 && i < n - 1)
    out[i] = a[i] * b[i - 1] + a[i + 1];
}
// OUT: unsigned int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;

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
template <typename T>
void expect(const char *name, const std::vector<T> &got,
            const std::vector<T> &want) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs((double)got[i] - (double)want[i]));
  bool ok = worst < 1e-4;
  printf("%s %s (worst error %.2e)\n", ok ? "PASS" : "FAIL", name, worst);
  failures += !ok;
}
template <typename T> std::vector<T> values(size_t n, unsigned seed) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (T)((int)((i * 2654435761u + seed * 40503u) >> 9) % 19 - 9) / 8;
  return v;
}

// The 3D stencils on an n^3 grid; borders keep their (zero) values.
static void run3d(const char *name, int n, bool restricted) {
  size_t cells = (size_t)n * n * n;
  auto in = values<float>(cells, 1);
  std::vector<float> want(cells, 0.f);
  size_t sy = n, sz = (size_t)n * n;
  for (int z = 1; z < n - 1; ++z)
    for (int y = 1; y < n - 1; ++y)
      for (int x = 1; x < n - 1; ++x) {
        size_t c = (z * sy + y) * n + x;
        float nb = in[c - 1] + in[c + 1] + in[c - sy] + in[c + sy] +
                   in[c - sz] + in[c + sz];
        want[c] = restricted ? 0.5f * in[c] + nb / 12.0f : C0 * in[c] + C1 * nb;
      }
  float *din = upload(in), *dout = upload(std::vector<float>(cells, 0.f));
  dim3 threads(8, 8, 8), blocks((n + 7) / 8, (n + 7) / 8, (n + 7) / 8);
  if (restricted)
    s7r<<<blocks, threads>>>(n, din, dout);
  else
    s7<<<blocks, threads>>>(n, din, dout);
  CHECK(cudaGetLastError());
  expect(name, download(dout, cells), want);
}

int main() {
  run3d("s7", 67, false);
  run3d("s7r", 64, true);
  {
    const int w = 130, h = 70;
    auto in = values<float>((size_t)w * h, 2);
    std::vector<float> want((size_t)w * h, 0.f);
    for (int r = 1; r < h - 1; ++r)
      for (int c = 1; c < w - 1; ++c)
        want[r * w + c] = 0.25f * (in[(r - 1) * w + c] + in[(r + 1) * w + c] +
                                   in[r * w + c - 1] + in[r * w + c + 1]);
    float *din = upload(in), *dout = upload(std::vector<float>(want.size(), 0.f));
    jacobi<<<dim3((w + 31) / 32, (h + 7) / 8), dim3(32, 8)>>>(w, h, din, dout);
    CHECK(cudaGetLastError());
    expect("jacobi", download(dout, want.size()), want);
  }
  {
    const int n = 1001;
    auto in = values<float>(n, 3);
    std::vector<float> want(n, 0.f);
    for (int i = 1; i < n - 1; ++i)
      want[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0f;
    float *din = upload(in), *dout = upload(std::vector<float>(n, 0.f));
    smooth<<<(n + 127) / 128, 128>>>(n, din, dout);
    CHECK(cudaGetLastError());
    expect("smooth", download(dout, n), want);
  }
  {
    const int n = 1000;
    const double k = 0.2;
    auto u = values<double>(n, 4);
    std::vector<double> want(n, 0.0);
    for (int i = 1; i < n - 1; ++i)
      want[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
    double *du = upload(u), *dv = upload(std::vector<double>(n, 0.0));
    heat<<<(n + 255) / 256, 256>>>(n, k, du, dv);
    CHECK(cudaGetLastError());
    expect("heat", download(dv, n), want);
  }
  {
    const int w = 256, h = 100;
    auto in = values<float>((size_t)w * h, 5);
    std::vector<float> want((size_t)w * h, 0.f);
    for (int y = 1; y < h - 1; ++y)
      for (int x = 1; x < w - 1; ++x) {
        float s = 0.f;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx)
            s += in[(y + dy) * w + x + dx];
        want[y * w + x] = s / 9.0f;
      }
    float *din = upload(in), *dout = upload(std::vector<float>(want.size(), 0.f));
    dim3 threads(16, 16), grid((w + 15) / 16, (h + 15) / 16);
    box9<<<grid, threads>>>(w, h, din, dout);
    CHECK(cudaGetLastError());
    expect("box9", download(dout, want.size()), want);
  }
  {
    const int n = 5003;
    std::vector<int> in(n);
    for (int i = 0; i < n; ++i)
      in[i] = (i * 37) % 101 - 50;
    std::vector<int> want(n, 0);
    for (int i = 1; i < n - 1; ++i)
      want[i] = in[i - 1] - 2 * in[i] + in[i + 1];
    int *din = upload(in), *dout = upload(std::vector<int>(n, 0));
    diff2<<<(n + 255) / 256, 256>>>(n, din, dout);
    CHECK(cudaGetLastError());
    expect("diff2", download(dout, n), want);
  }
  {
    const unsigned n = 4099;
    auto a = values<float>(n, 6), b = values<float>(n, 7);
    std::vector<float> want(n, 0.f);
    for (unsigned i = 1; i < n - 1; ++i)
      want[i] = a[i] * b[i - 1] + a[i + 1];
    float *da = upload(a), *db = upload(b),
          *dout = upload(std::vector<float>(n, 0.f));
    mix<<<(n + 63) / 64, 64>>>(n, da, db, dout);
    CHECK(cudaGetLastError());
    expect("mix", download(dout, n), want);
  }
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// The edits, applied one after another by the RUN lines above and by
// scripts/gpu-edit-family.sh on the GPU:
// EDIT: {"kind":"vectorize-stencil","target":"s7"}
// EDIT: {"kind":"vectorize-stencil","target":"s7r"}
// EDIT: {"kind":"vectorize-stencil","target":"jacobi"}
// EDIT: {"kind":"vectorize-stencil","target":"smooth"}
// EDIT: {"kind":"vectorize-stencil","target":"heat","params":{"width":2}}
// EDIT: {"kind":"vectorize-stencil","target":"box9"}
// EDIT: {"kind":"vectorize-stencil","target":"diff2"}
// EDIT: {"kind":"vectorize-stencil","target":"mix"}
