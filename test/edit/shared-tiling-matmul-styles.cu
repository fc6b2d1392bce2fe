// shared-tiling on grid-wide matrix products (one thread per output, row
// and col from the y and x thread indices, a guard on both) whose k loop is
// written other ways than `for (k = 0; k < K; ++k) acc += A[..] * B[..]`:
// a while loop stepping its counter last; the update fused with fmaf (kept
// fused: the plain tiles keep the loop's text, the register tile writes
// the same call); `acc = acc + a * b`; a while loop with fmaf under the
// register tile (micro=8). Sizes are no multiple of the tile, so the
// zero-filled edges are exercised. Each edit is applied after the last;
// the program checks every output against the CPU, before and after on
// the host, thread by thread, and the result compiles with nvcc.
// Look-alikes refused: a while loop that steps before the update, one
// whose counter is read after the loop. The input file is left as it was.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms -v %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: python3 %inputs/edit/host-run.py %t/k.cu | FileCheck --check-prefix=HOST %s
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
// HOST: PASS mm_while
// HOST: PASS mm_fma
// HOST: PASS mm_sum
// HOST: PASS mm_micro
// HOST-NEXT: PASS

// EDIT: {"kind":"shared-tiling","target":"mm_while","params":{"tile":16}}
// EDIT: {"kind":"shared-tiling","target":"mm_fma","params":{"tile":16}}
// EDIT: {"kind":"shared-tiling","target":"mm_sum","params":{"tile":16}}
// EDIT: {"kind":"shared-tiling","target":"mm_micro","params":{"tile":16,"micro":8}}

// WHY: shared-tiling mm_while: matmul-like: 'mm_while' accumulates 'A[row * k + p] * B[p * n + col]' over 'p'
// WHY: shared-tiling mm_fma: matmul-like: 'mm_fma' accumulates 'A[row * k + p] * B[p * n + col]' over 'p'
// WHY: shared-tiling mm_sum: matmul-like: 'mm_sum' accumulates 'A[row * k + p] * B[p * n + col]' over 'p'
// WHY: shared-tiling mm_micro: matmul-like: 'mm_micro' accumulates 'A[row * k + p] * B[p * n + col]' over 'p'
// WHY: not shared-tiling lk_step_first: {{.*}}not matmul-like (the guarded code is not 'acc = <init>; for (k = 0; k < K; ++k) acc += A[...] * B[...]; <store>')
// WHY: not shared-tiling lk_counter_after: {{.*}}not matmul-like (the code after the loop uses 'p')

// OUT:      int p = 0;
// OUT-NEXT: while (p < 16) {
// OUT-NEXT:   acc += As[threadIdx.y][p] * Bs[p][threadIdx.x];
// OUT-NEXT:   ++p;
// OUT-NEXT: }
// OUT:      acc = fmaf(As[threadIdx.y][p], Bs[p][threadIdx.x], acc);
// OUT:      acc = acc + As[threadIdx.y][p] * Bs[p][threadIdx.x];
// OUT:      accR[i][j] = fmaf(ra[i], rb[j], accR[i][j]);

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

// C (m x n) = A (m x k) * B (k x n), row-major.
__global__ void mm_while(const float *A, const float *B, float *C, int m,
                         int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float acc = 0.0f;
    int p = 0;
    while (p < k) {
      acc += A[row * k + p] * B[p * n + col];
      ++p;
    }
    C[row * n + col] = acc;
  }
}

__global__ void mm_fma(const float *A, const float *B, float *C, int m, int n,
                       int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float acc = 0.0f;
    for (int p = 0; p < k; ++p)
      acc = fmaf(A[row * k + p], B[p * n + col], acc);
    C[row * n + col] = acc;
  }
}

__global__ void mm_sum(const float *A, const float *B, float *C, int m, int n,
                       int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float acc = 0.0f;
    for (int p = 0; p < k; p++)
      acc = acc + A[row * k + p] * B[p * n + col];
    C[row * n + col] = acc;
  }
}

__global__ void mm_micro(const float *A, const float *B, float *C, int m,
                         int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float acc = 0.0f;
    int p = 0;
    while (p < k) {
      acc = fmaf(A[row * k + p], B[p * n + col], acc);
      p++;
    }
    C[row * n + col] = acc;
  }
}

// Look-alikes (not launched): the counter steps before the update; the
// counter is read after the loop.
__global__ void lk_step_first(const float *A, const float *B, float *C, int m,
                              int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float acc = 0.0f;
    int p = 0;
    while (p < k) {
      ++p;
      acc += A[row * k + p - 1] * B[(p - 1) * n + col];
    }
    C[row * n + col] = acc;
  }
}

__global__ void lk_counter_after(const float *A, const float *B, float *C,
                                 int m, int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float acc = 0.0f;
    int p = 0;
    while (p < k) {
      acc += A[row * k + p] * B[p * n + col];
      ++p;
    }
    C[row * n + col] = acc + p;
  }
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
static void expect(const char *name, const std::vector<float> &A,
                   const std::vector<float> &B, const std::vector<float> &got,
                   int m, int n, int k) {
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0, mag = 0;
      for (int p = 0; p < k; ++p) {
        double t = (double)A[i * k + p] * B[p * n + j];
        s += t;
        mag += fabs(t);
      }
      worst = std::max(worst, fabs(got[i * n + j] - s) / (mag + 1e-30));
    }
  bool ok = worst < 1e-5;
  printf("%s %s (worst relative error %.2e)\n", ok ? "PASS" : "FAIL", name,
         worst);
  failures += !ok;
}

static std::vector<float> values(size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (float)((int)((i * 2654435761u + seed * 40503u) >> 7) % 17 - 8) / 8;
  return v;
}

int main() {
  const int m = 37, n = 45, k = 29;
  auto A = values((size_t)m * k, 1), B = values((size_t)k * n, 2);
  float *a = upload(A), *b = upload(B);
  dim3 threads(16, 16), blocks((n + 15) / 16, (m + 15) / 16);
  {
    float *c = upload(std::vector<float>((size_t)m * n, -1.f));
    mm_while<<<blocks, threads>>>(a, b, c, m, n, k);
    CHECK(cudaGetLastError());
    expect("mm_while", A, B, download(c, (size_t)m * n), m, n, k);
  }
  {
    float *c = upload(std::vector<float>((size_t)m * n, -1.f));
    mm_fma<<<blocks, threads>>>(a, b, c, m, n, k);
    CHECK(cudaGetLastError());
    expect("mm_fma", A, B, download(c, (size_t)m * n), m, n, k);
  }
  {
    float *c = upload(std::vector<float>((size_t)m * n, -1.f));
    mm_sum<<<blocks, threads>>>(a, b, c, m, n, k);
    CHECK(cudaGetLastError());
    expect("mm_sum", A, B, download(c, (size_t)m * n), m, n, k);
  }
  {
    float *c = upload(std::vector<float>((size_t)m * n, -1.f));
    mm_micro<<<blocks, threads>>>(a, b, c, m, n, k);
    CHECK(cudaGetLastError());
    expect("mm_micro", A, B, download(c, (size_t)m * n), m, n, k);
  }
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures != 0;
}
