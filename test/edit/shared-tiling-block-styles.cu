// shared-tiling on block-sized products (one output matrix per block, row =
// threadIdx.y, col = threadIdx.x) written in eight styles: the size a macro
// with a uniform base offset and both indices in one declaration; a
// template over the size with row pointers; double with the inner length a
// runtime argument that is not a multiple of the tile; a kernel in a
// namespace with the indices in two declarations around a uniform one, a
// `k += 1` loop and a store that reads the output; the strided-batched
// interface, a template over the element type with per-thread pointers to
// the thread's row of A and C and column of B after the indices and a `T`
// accumulator (the loads and the store read through the pointers'
// initializers, the row renamed); the batch along z with a while loop
// and the product fused by fmaf (kept fused); an inline index helper;
// column-major with the row along x (the product of the transposes). The
// batched interface's arrays of pointers are in
// shared-tiling-block-pointers.cu (eval cannot verify them on the GPU).
// Each is recognized, and the eight edits (rows 8, 2, 2, 4, 4, 2, 4, 2)
// applied one after another compile with nvcc; the input is left as it
// was. Look-alikes refused: a pointer each thread loads for
// itself, an fmaf that does not accumulate, a while loop that steps its
// counter before the update. The program checks each product against the CPU, so the GPU check
// (scripts/gpu-edit-family.sh) runs `eval` on the result.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms %t/k.cu --json | FileCheck --check-prefix=WHY %s
// RUN: clang-optiml transforms -v %t/k.cu | FileCheck --check-prefix=NOT %s
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
// Its kernels run on the host (host-run.py: a block's threads as fibers
// where they wait for each other), before the edits and after: every
// check passes.
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

#define D 32

// WHY:      "kind": "shared-tiling",
// WHY-NEXT: "target": "bmm_macro",
// WHY-NEXT: "reason": "block-sized product: 'bmm_macro' accumulates 'A[base + row * D + k] * B[base + k * D + col]' over 'k', one 32x32 output per block: both operands can be staged in shared tiles, several rows per thread",
// WHY:      "params": {
// WHY-NEXT:   "rows": 8,
// WHY-NEXT:   "tile": 32
// WHY-NEXT: }
__global__ void bmm_macro(const float *A, const float *B, float *C) {
  size_t base = (size_t)blockIdx.x * D * D;
  int row = threadIdx.y, col = threadIdx.x;
  float sum = 0.f;
  for (int k = 0; k < D; ++k)
    sum += A[base + row * D + k] * B[base + k * D + col];
  C[base + row * D + col] = sum;
}

// OUT-LABEL: __global__ void bmm_macro(const float *A, const float *B, float *C) {
// OUT-NEXT:   size_t base = (size_t)blockIdx.x * D * D;
// OUT-NEXT:   // shared-tiling rows=8: 32 x 32 outputs per block, 8 rows per thread.
// OUT-NEXT:   __shared__ float As[32][32];
// OUT-NEXT:   __shared__ float Bs[32][32];
// OUT-NEXT:   int col = threadIdx.x;
// OUT-NEXT:   float accR[8];
// OUT-NEXT:   #pragma unroll
// OUT-NEXT:   for (int i = 0; i < 8; ++i)
// OUT-NEXT:     accR[i] = 0.f;
// OUT-NEXT:   for (int kTile = 0; kTile < D; kTile += 32) {
// OUT-NEXT:     #pragma unroll
// OUT-NEXT:     for (int i = 0; i < 8; ++i) {
// OUT-NEXT:       const int y1 = threadIdx.y + i * 4;
// OUT-NEXT:       int ar = y1;
// OUT-NEXT:       int ak = kTile + threadIdx.x;
// OUT-NEXT:       As[y1][threadIdx.x] = ak < D ? A[base + ar * D + ak] : 0.0f;
// OUT-NEXT:       int bk = kTile + y1;
// OUT-NEXT:       Bs[y1][threadIdx.x] = bk < D ? B[base + bk * D + col] : 0.0f;
// OUT-NEXT:     }
// OUT-NEXT:     __syncthreads();
// OUT-NEXT:     #pragma unroll
// OUT-NEXT:     for (int kk = 0; kk < 32; ++kk) {
// OUT-NEXT:       const float b = Bs[kk][threadIdx.x];
// OUT-NEXT:       #pragma unroll
// OUT-NEXT:       for (int i = 0; i < 8; ++i)
// OUT-NEXT:         accR[i] += As[threadIdx.y + i * 4][kk] * b;
// OUT-NEXT:     }
// OUT-NEXT:     __syncthreads();
// OUT-NEXT:   }
// OUT-NEXT:   #pragma unroll
// OUT-NEXT:   for (int i = 0; i < 8; ++i) {
// OUT-NEXT:     int r = threadIdx.y + i * 4;
// OUT-NEXT:     C[base + r * D + col] = accR[i];
// OUT-NEXT:   }
// OUT-NEXT: }

// WHY:      "reason": "block-sized product: 'bmm_rowptr' accumulates 'a[r * N + k] * b[k * N + cc]' over 'k', one 16x16 output per block: both operands can be staged in shared tiles, several rows per thread",
// WHY:      "rows": 2,
// WHY-NEXT: "tile": 16
template <int N>
__global__ void bmm_rowptr(const float *A, const float *B, float *C) {
  const float *a = A + (size_t)blockIdx.x * N * N;
  const float *b = B + (size_t)blockIdx.x * N * N;
  float *c = C + (size_t)blockIdx.x * N * N;
  int r = threadIdx.y;
  int cc = threadIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < N; k++) {
    acc += a[r * N + k] * b[k * N + cc];
  }
  c[r * N + cc] = acc;
}
// OUT-LABEL: __global__ void bmm_rowptr(const float *A, const float *B, float *C) {
// OUT:           const int y1 = threadIdx.y + i * 8;
// OUT:           const float b1 = Bs[kk][threadIdx.x];
// OUT:           c[r1 * N + cc] = accR[i];

// WHY:      "reason": "block-sized product: 'bmm_double' accumulates 'A[m * 8 * kdim + ty * kdim + k] * B[m * kdim * 8 + k * 8 + tx]' over 'k', one 8x8 output per block
// WHY:      "tile": 8
__global__ void bmm_double(const double *A, const double *B, double *C,
                           int kdim) {
  unsigned m = blockIdx.x;
  int ty = threadIdx.y, tx = threadIdx.x;
  double s = 0.0;
  for (int k = 0; k < kdim; ++k)
    s += A[m * 8 * kdim + ty * kdim + k] * B[m * kdim * 8 + k * 8 + tx];
  C[m * 64 + ty * 8 + tx] = s;
}
// OUT-LABEL: __global__ void bmm_double(const double *A, const double *B, double *C,
// OUT:         for (int kTile = 0; kTile < kdim; kTile += 8) {
// OUT:           As[y1][threadIdx.x] = ak < kdim ? A[m * 8 * kdim + ar * kdim + ak] : 0.0;
// OUT:           Bs[y1][threadIdx.x] = bk < kdim ? B[m * kdim * 8 + bk * 8 + tx] : 0.0;

namespace blas {
// WHY:      "reason": "block-sized product: 'gemm_small' accumulates 'A[off + i * 32 + p] * B[off + p * 32 + j]' over 'p', one 32x32 output per block
__global__ void gemm_small(float alpha, const float *A, const float *B,
                           float beta, float *C) {
  int j = threadIdx.x;
  const size_t off = 1024ull * blockIdx.x;
  int i = threadIdx.y;
  float t = 0;
  for (int p = 0; p < 32; p += 1)
    t += A[off + i * 32 + p] * B[off + p * 32 + j];
  float old = C[off + i * 32 + j];
  C[off + i * 32 + j] = alpha * t + beta * old;
}
} // namespace blas
// OUT-LABEL: __global__ void gemm_small(float alpha, const float *A, const float *B,
// OUT-NEXT:                            float beta, float *C) {
// OUT-NEXT:   // shared-tiling rows=4: 32 x 32 outputs per block, 4 rows per thread.
// OUT:        int j = threadIdx.x;
// OUT-NEXT:   const size_t off = 1024ull * blockIdx.x;
// OUT-NEXT:   float accR[4];
// OUT:              accR[i1] += As[threadIdx.y + i1 * 8][kk] * b;
// OUT-NEXT:     }
// OUT-NEXT:     __syncthreads();
// OUT-NEXT:   }
// OUT-NEXT:   #pragma unroll
// OUT-NEXT:   for (int i1 = 0; i1 < 4; ++i1) {
// OUT-NEXT:     int r = threadIdx.y + i1 * 8;
// OUT-NEXT:     float old = C[off + r * 32 + j];
// OUT-NEXT:     C[off + r * 32 + j] = alpha * accR[i1] + beta * old;
// OUT-NEXT:   }

namespace strided {
// WHY:      "reason": "block-sized product: 'gemm_strided' accumulates 'a[k] * b[(long long)k * ldb]' over 'k', one 16x16 output per block
// WHY:      "rows": 2,
// WHY-NEXT: "tile": 16
template <typename T>
__global__ void gemm_strided(int n, const T *A, int lda, long long strideA,
                             const T *B, int ldb, long long strideB, T *C,
                             int ldc, long long strideC) {
  const long long batch = blockIdx.x;
  const int i = threadIdx.y;
  const int j = threadIdx.x;
  const T *a = A + batch * strideA + (long long)i * lda;
  const T *b = &B[batch * strideB + j];
  T *c = C + batch * strideC + (long long)i * ldc;
  T acc = T(0);
  for (int k = 0; k < n; ++k)
    acc += a[k] * b[(long long)k * ldb];
  c[j] = acc;
}
} // namespace strided
// OUT-LABEL: __global__ void gemm_strided(int n, const T *A, int lda, long long strideA,
// OUT:         const long long batch = blockIdx.x;
// OUT-NEXT:    // shared-tiling rows=4: 16 x 16 outputs per block, 4 rows per thread.
// OUT-NEXT:    __shared__ T As[16][16];
// OUT-NEXT:    __shared__ T Bs[16][16];
// OUT-NEXT:    const int j = threadIdx.x;
// OUT-NEXT:    T accR[4];
// OUT-NEXT:    #pragma unroll
// OUT-NEXT:    for (int i1 = 0; i1 < 4; ++i1)
// OUT-NEXT:      accR[i1] = T(0);
// OUT-NEXT:    for (int kTile = 0; kTile < n; kTile += 16) {
// OUT-NEXT:      #pragma unroll
// OUT-NEXT:      for (int i1 = 0; i1 < 4; ++i1) {
// OUT-NEXT:        const int y1 = threadIdx.y + i1 * 4;
// OUT-NEXT:        int ar = y1;
// OUT-NEXT:        int ak = kTile + threadIdx.x;
// OUT-NEXT:        As[y1][threadIdx.x] = ak < n ? (A + batch * strideA + (long long)ar * lda)[ak] : T(0);
// OUT-NEXT:        int bk = kTile + y1;
// OUT-NEXT:        Bs[y1][threadIdx.x] = bk < n ? (&B[batch * strideB + j])[(long long)bk * ldb] : T(0);
// OUT-NEXT:      }
// OUT:         for (int i1 = 0; i1 < 4; ++i1) {
// OUT-NEXT:      int r = threadIdx.y + i1 * 4;
// OUT-NEXT:      (C + batch * strideC + (long long)r * ldc)[j] = accR[i1];
// OUT-NEXT:    }
// OUT-NEXT:  }

// The batch along z, a while loop, the product fused with fmaf (kept
// fused in the tiles).
// WHY:      "reason": "block-sized product: 'bmm_fma' accumulates 'a[r * n + k] * b[k * n + c]' over 'k', one 16x16 output per block
__global__ void bmm_fma(const float *A, const float *B, float *C, int n) {
  const float *a = A + (size_t)blockIdx.z * n * n;
  const float *b = B + (size_t)blockIdx.z * n * n;
  int r = threadIdx.y, c = threadIdx.x;
  float acc = 0.f;
  int k = 0;
  while (k < n) {
    acc = fmaf(a[r * n + k], b[k * n + c], acc);
    ++k;
  }
  C[(size_t)blockIdx.z * n * n + r * n + c] = acc;
}
// OUT-LABEL: __global__ void bmm_fma(const float *A, const float *B, float *C, int n) {
// OUT:             accR[i] = fmaf(As[threadIdx.y + i * 8][kk], b1, accR[i]);
// OUT:           C[(size_t)blockIdx.z * n * n + r1 * n + c] = accR[i];

// An inline index helper.
__device__ __forceinline__ int at(int r, int c, int ld) { return r * ld + c; }
// WHY:      "reason": "block-sized product: 'bmm_helper' accumulates 'a[at(r, k, 16)] * b[at(k, c, 16)]' over 'k', one 16x16 output per block
__global__ void bmm_helper(const float *A, const float *B, float *C) {
  const int m = blockIdx.x;
  const float *a = A + m * 256, *b = B + m * 256;
  int r = threadIdx.y, c = threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < 16; ++k)
    acc += a[at(r, k, 16)] * b[at(k, c, 16)];
  C[m * 256 + at(r, c, 16)] = acc;
}
// OUT-LABEL: __global__ void bmm_helper(const float *A, const float *B, float *C) {
// OUT:           C[m * 256 + at(r1, c, 16)] = accR[i];

// Column-major (cuBLAS's layout), the row along x: the product of the
// transposes, B's row staged as the tile's rows.
// WHY:      "reason": "block-sized product: 'bmm_colmajor' accumulates 'B[off + col * n + k] * A[off + k * n + row]' over 'k', one 16x16 output per block
__global__ void bmm_colmajor(int n, const float *A, const float *B, float *C) {
  const size_t off = (size_t)blockIdx.x * n * n;
  int row = threadIdx.x, col = threadIdx.y;
  float acc = 0.f;
  for (int k = 0; k < n; ++k)
    acc += A[off + k * n + row] * B[off + col * n + k];
  C[off + col * n + row] = acc;
}
// OUT-LABEL: __global__ void bmm_colmajor(int n, const float *A, const float *B, float *C) {
// OUT:           C[off + r * n + row] = accR[i];

// Look-alikes, refused (not launched): each thread loads a pointer of its
// own, a fused update that does not accumulate, a while loop that steps
// its counter before the update.
// NOT: not shared-tiling lk_own_ptr: {{.*}}not a block-sized product ('arow' differs between threads but is not an index 'row = threadIdx.y' or 'col = threadIdx.x')
__global__ void lk_own_ptr(const float *const *Arows, const float *B,
                           float *C) {
  const float *arow = Arows[blockIdx.x * 16 + threadIdx.y];
  int row = threadIdx.y, col = threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < 16; ++k)
    acc += arow[k] * B[k * 16 + col];
  C[blockIdx.x * 256 + row * 16 + col] = acc;
}
// NOT: not shared-tiling lk_fma_reset: {{.*}}not a block-sized product (the loop body is not 'acc += A[...] * B[...];' (or 'acc = fmaf(A[...], B[...], acc);'))
__global__ void lk_fma_reset(const float *A, const float *B, float *C) {
  int row = threadIdx.y, col = threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < 16; ++k)
    acc = fmaf(A[row * 16 + k], B[k * 16 + col], 1.0f);
  C[row * 16 + col] = acc;
}
// NOT: not shared-tiling lk_step_first: {{.*}}not a block-sized product (the indices are not followed by 'acc = <init>; for (k = 0; k < K; ++k) acc += A[...] * B[...]; <store>')
__global__ void lk_step_first(const float *A, const float *B, float *C) {
  int row = threadIdx.y, col = threadIdx.x;
  float acc = 0.f;
  int k = 0;
  while (k < 16) {
    ++k;
    acc += A[row * 16 + k - 1] * B[(k - 1) * 16 + col];
  }
  C[row * 16 + col] = acc;
}

// OUT:        bmm_macro<<<batch, dim3(threads.x, threads.y / 8)>>>(a, b, c);
// OUT:        bmm_rowptr<16><<<batch, dim3(16, 8)>>>(a, b, c);
// OUT:        bmm_double<<<batch, dim3(8, 4)>>>(a, b, c, kdim);
// OUT:        blas::gemm_small<<<batch, dim3(32, 8)>>>(1.5f, a, b, -0.5f, c);
// OUT:        strided::gemm_strided<double><<<batch, dim3(16, 4)>>>(16, a, 16, 256, b, 16, 256, c, 16, 256);
// OUT:        bmm_fma<<<dim3(1, 1, batch), dim3(16, 8)>>>(a, b, c, 16);
// OUT:        bmm_helper<<<batch, dim3(16, 4)>>>(a, b, c);
// OUT:        bmm_colmajor<<<batch, dim3(16, 8)>>>(16, a, b, c);

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
// C[b] (n x n) = A[b] (n x kd) * B[b] (kd x n), then alpha, beta.
template <typename T>
void expect(const char *name, const std::vector<T> &A, const std::vector<T> &B,
            const std::vector<T> &C0, const std::vector<T> &got, int batch,
            int n, int kd, double alpha, double beta) {
  double worst = 0;
  for (int m = 0; m < batch; ++m)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0, mag = 0;
        for (int p = 0; p < kd; ++p) {
          double t = (double)A[(size_t)m * n * kd + i * kd + p] *
                     B[(size_t)m * kd * n + p * n + j];
          s += t;
          mag += fabs(t);
        }
        size_t at = (size_t)m * n * n + i * n + j;
        double want = alpha * s + beta * C0[at];
        worst = std::max(worst, fabs(got[at] - want) / (mag + 1e-30));
      }
  bool ok = worst < 1e-5;
  printf("%s %s (worst relative error %.2e)\n", ok ? "PASS" : "FAIL", name,
         worst);
  failures += !ok;
}

template <typename T> std::vector<T> values(size_t n, unsigned seed) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (T)((int)((i * 2654435761u + seed * 40503u) >> 7) % 17 - 8) / 8;
  return v;
}

int main() {
  const int batch = 300;
  {
    auto A = values<float>(batch * D * D, 1), B = values<float>(batch * D * D, 2);
    std::vector<float> C0(A.size(), 0.f);
    float *a = upload(A), *b = upload(B), *c = upload(C0);
    dim3 threads(D, D);
    bmm_macro<<<batch, threads>>>(a, b, c);
    CHECK(cudaGetLastError());
    expect("bmm_macro", A, B, C0, download(c, A.size()), batch, D, D, 1, 0);
  }
  {
    auto A = values<float>(batch * 256, 3), B = values<float>(batch * 256, 4);
    std::vector<float> C0(A.size(), 0.f);
    float *a = upload(A), *b = upload(B), *c = upload(C0);
    bmm_rowptr<16><<<batch, dim3(16, 16)>>>(a, b, c);
    CHECK(cudaGetLastError());
    expect("bmm_rowptr", A, B, C0, download(c, A.size()), batch, 16, 16, 1, 0);
  }
  {
    const int kdim = 20;
    auto A = values<double>(batch * 8 * kdim, 5),
         B = values<double>(batch * kdim * 8, 6);
    std::vector<double> C0(batch * 64, 0.0);
    double *a = upload(A), *b = upload(B), *c = upload(C0);
    bmm_double<<<batch, dim3(8, 8)>>>(a, b, c, kdim);
    CHECK(cudaGetLastError());
    expect("bmm_double", A, B, C0, download(c, C0.size()), batch, 8, kdim, 1,
           0);
  }
  {
    auto A = values<float>(batch * 1024, 7), B = values<float>(batch * 1024, 8);
    auto C0 = values<float>(batch * 1024, 9);
    float *a = upload(A), *b = upload(B), *c = upload(C0);
    blas::gemm_small<<<batch, dim3(32, 32)>>>(1.5f, a, b, -0.5f, c);
    CHECK(cudaGetLastError());
    expect("blas::gemm_small", A, B, C0, download(c, A.size()), batch, 32, 32,
           1.5, -0.5);
  }
  {
    auto A = values<double>(batch * 256, 10), B = values<double>(batch * 256, 11);
    std::vector<double> C0(A.size(), 0.0);
    double *a = upload(A), *b = upload(B), *c = upload(C0);
    strided::gemm_strided<double><<<batch, dim3(16, 16)>>>(16, a, 16, 256, b, 16, 256, c, 16, 256);
    CHECK(cudaGetLastError());
    expect("strided::gemm_strided", A, B, C0, download(c, A.size()), batch, 16,
           16, 1, 0);
  }
  {
    auto A = values<float>(batch * 256, 14), B = values<float>(batch * 256, 15);
    std::vector<float> C0(A.size(), 0.f);
    float *a = upload(A), *b = upload(B), *c = upload(C0);
    bmm_fma<<<dim3(1, 1, batch), dim3(16, 16)>>>(a, b, c, 16);
    CHECK(cudaGetLastError());
    expect("bmm_fma", A, B, C0, download(c, A.size()), batch, 16, 16, 1, 0);
  }
  {
    auto A = values<float>(batch * 256, 16), B = values<float>(batch * 256, 17);
    std::vector<float> C0(A.size(), 0.f);
    float *a = upload(A), *b = upload(B), *c = upload(C0);
    bmm_helper<<<batch, dim3(16, 16)>>>(a, b, c);
    CHECK(cudaGetLastError());
    expect("bmm_helper", A, B, C0, download(c, A.size()), batch, 16, 16, 1, 0);
  }
  {
    // Column-major C = A * B is, read row-major, C' = B' * A'.
    auto A = values<float>(batch * 256, 18), B = values<float>(batch * 256, 19);
    std::vector<float> C0(A.size(), 0.f);
    float *a = upload(A), *b = upload(B), *c = upload(C0);
    bmm_colmajor<<<batch, dim3(16, 16)>>>(16, a, b, c);
    CHECK(cudaGetLastError());
    expect("bmm_colmajor", B, A, C0, download(c, A.size()), batch, 16, 16, 1,
           0);
  }
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// The edits, applied one after another by the RUN lines above and by
// scripts/gpu-edit-family.sh on the GPU:
// EDIT: {"kind":"shared-tiling","target":"bmm_macro","params":{"tile":32,"rows":8}}
// EDIT: {"kind":"shared-tiling","target":"bmm_rowptr","params":{"tile":16,"rows":2}}
// EDIT: {"kind":"shared-tiling","target":"bmm_double","params":{"tile":8,"rows":2}}
// EDIT: {"kind":"shared-tiling","target":"blas::gemm_small","params":{"rows":4}}
// EDIT: {"kind":"shared-tiling","target":"strided::gemm_strided","params":{"tile":16,"rows":4}}
// EDIT: {"kind":"shared-tiling","target":"bmm_fma","params":{"tile":16,"rows":2}}
// EDIT: {"kind":"shared-tiling","target":"bmm_helper","params":{"tile":16,"rows":4}}
// EDIT: {"kind":"shared-tiling","target":"bmm_colmajor","params":{"tile":16,"rows":2}}
