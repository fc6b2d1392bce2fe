// shared-tiling on a block-sized product written the batched interface's
// way (`cublasSgemmBatched`): arrays of pointers to the matrices, each
// block loading its own (`const float *a = Aarray[blockIdx.x];`, the same
// address in every thread of the block, from arrays the kernel never
// writes, so the same pointer). Recognized and rewritten (rows 4: blocks
// of 16x4); checked on the host thread by thread before and after, and
// compiled with nvcc. On the GPU, `eval` follows the arrays to the
// matrices they point to and compares the arrays themselves as (buffer,
// offset) pairs, since their addresses differ between runs (docs/eval.md,
// "Which buffers"; run 2026-12-07-styles-s28: 1 launch, 6 buffers agree).
// Look-alikes are in shared-tiling-block-styles.cu.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms -v %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: sed -n 's|^// EDIT: ||p' %s > %t/edits.jsonl
// RUN: while read -r e; do \
// RUN:   echo "$e" > %t/e.json && \
// RUN:   clang-optiml apply %t/all.cu --edit %t/e.json -o %t/next.cu && mv %t/next.cu %t/all.cu || exit 1; \
// RUN: done < %t/edits.jsonl
// RUN: grep -v '^//' %t/all.cu | FileCheck --check-prefix=OUT %s
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -Werror all-warnings -o %t/all.o %t/all.cu %}
// RUN: python3 %inputs/edit/host-run.py %t/k.cu | FileCheck --check-prefix=HOST %s
// RUN: python3 %inputs/edit/host-run.py %t/all.cu | FileCheck --check-prefix=HOST %s
// RUN: cmp %s %t/k.cu
// HOST-NOT: FAIL
// HOST: PASS bmm_ptrs
// HOST-NEXT: {{^PASS$}}

// EDIT: {"kind":"shared-tiling","target":"bmm_ptrs","params":{"tile":16,"rows":4}}

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

// The batched interface's arrays of pointers (`cublasSgemmBatched`): each
// block loads its matrices' pointers, the same in every thread, from
// arrays the kernel never writes.
// WHY: shared-tiling bmm_ptrs: block-sized product: 'bmm_ptrs' accumulates 'a[row * n + k] * b[k * n + col]' over 'k', one 16x16 output per block
__global__ void bmm_ptrs(const float *const *Aarray, const float *const *Barray,
                         float *const *Carray, int n) {
  const float *a = Aarray[blockIdx.x];
  const float *b = Barray[blockIdx.x];
  float *c = Carray[blockIdx.x];
  int row = threadIdx.y, col = threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < n; ++k)
    acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}
// OUT-LABEL: __global__ void bmm_ptrs(const float *const *Aarray, const float *const *Barray,
// OUT:         float *c = Carray[blockIdx.x];
// OUT-NEXT:    // shared-tiling rows=4: 16 x 16 outputs per block, 4 rows per thread.
// OUT:             As[y1][threadIdx.x] = ak < n ? a[ar * n + ak] : 0.0f;
// OUT:           c[r * n + col] = accR[i];

// OUT:        bmm_ptrs<<<batch, dim3(16, 4)>>>(da, db, dc, 16);

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
    auto A = values<float>(batch * 256, 12), B = values<float>(batch * 256, 13);
    std::vector<float> C0(A.size(), 0.f);
    float *a = upload(A), *b = upload(B), *c = upload(C0);
    std::vector<const float *> pa(batch), pb(batch);
    std::vector<float *> pc(batch);
    for (int m = 0; m < batch; ++m) {
      pa[m] = a + m * 256;
      pb[m] = b + m * 256;
      pc[m] = c + m * 256;
    }
    const float **da = upload(pa), **db = upload(pb);
    float **dc = upload(pc);
    bmm_ptrs<<<batch, dim3(16, 16)>>>(da, db, dc, 16);
    CHECK(cudaGetLastError());
    expect("bmm_ptrs", A, B, C0, download(c, A.size()), batch, 16, 16, 1, 0);
  }
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
