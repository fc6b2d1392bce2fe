// spmv_csr's kernel in several forms side by side with cuSPARSE, on the
// suite's matrix (bench/kernels/spmv_csr: 4M rows, 8-24 nonzeros each):
// lanes per row (2..16) with __ldg or __ldcs (evict-first) loads of the
// row's columns and values, two loads issued before the loop, and a CSR-
// stream form (a block's rows' nonzeros multiplied by all its threads in
// chunks through shared memory, then each row summed by one thread in
// order; also with several products per thread per chunk, and with the
// row's threads adding its products), then x held in L2 by an
// access-policy window. Each form is
// checked against a double-precision CPU product.
//   nvcc -O3 -arch=sm_90 -std=c++17 -o spmv_forms bench/checks/spmv_forms.cu -lcusparse && ./spmv_forms
// (docs/benchmarks.md, run 2026-12-07-spmv-conv2d-s31).
#include <cusparse.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(call)                                                              \
  do {                                                                        \
    cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) {                                                  \
      fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_),     \
              __FILE__, __LINE__);                                            \
      exit(2);                                                                \
    }                                                                         \
  } while (0)

// Deterministic input generator (the same in every program of the suite).
static inline float frand(unsigned long long i, unsigned seed) {
  unsigned h = (unsigned)(i * 2654435761ULL) ^ (seed * 0x9E3779B9u);
  h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
  return (float)(h >> 8) * (1.0f / 16777216.0f);
}

// Times op() with CUDA events: two warm-up runs, then timed runs; prints the
// median as a BENCH line that bench/run.py reads.
template <class F>
static void bench(const char* name, const char* variant, const char* size, F op) {
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  float first = 0.f;
  for (int r = 0; r < 2; ++r) {
    CK(cudaEventRecord(t0));
    op();
    CK(cudaEventRecord(t1));
    CK(cudaEventSynchronize(t1));
    CK(cudaEventElapsedTime(&first, t0, t1));
  }
  CK(cudaGetLastError());
  int runs = first > 50.f ? 5 : (first > 5.f ? 10 : 30);
  std::vector<float> ms;
  for (int r = 0; r < runs; ++r) {
    float t = 0.f;
    CK(cudaEventRecord(t0));
    op();
    CK(cudaEventRecord(t1));
    CK(cudaEventSynchronize(t1));
    CK(cudaEventElapsedTime(&t, t0, t1));
    ms.push_back(t);
  }
  CK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  printf("BENCH name=%s variant=%s size=%s kernel_ms=%.5f min_ms=%.5f runs=%d\n",
         name, variant, size, ms[ms.size() / 2], ms[0], runs);
  CK(cudaEventDestroy(t0));
  CK(cudaEventDestroy(t1));
}


static const int NROWS = 1 << 22;  // problem size: rows (= columns), about 16 nonzeros per row

// Builds the deterministic CSR matrix: 8..24 entries per row, half of them in a
// band around the diagonal and half at scattered columns; columns sorted and unique.
static void build_matrix(int n, std::vector<int>& rowptr, std::vector<int>& cols, std::vector<float>& vals) {
  rowptr.assign(n + 1, 0);
  cols.clear();
  vals.clear();
  cols.reserve((size_t)n * 17);
  vals.reserve((size_t)n * 17);
  int c[32];
  for (int r = 0; r < n; ++r) {
    int cnt = 8 + (int)(frand(r, 20) * 17.f);
    for (int k = 0; k < cnt; ++k) {
      unsigned long long key = (unsigned long long)r * 32 + k;
      if (k % 2 == 0) c[k] = std::min(n - 1, std::max(0, r + (int)(frand(key, 21) * 33.f) - 16));
      else c[k] = std::min(n - 1, (int)(frand(key, 22) * (float)n));
    }
    std::sort(c, c + cnt);
    int m = (int)(std::unique(c, c + cnt) - c);
    for (int k = 0; k < m; ++k) {
      cols.push_back(c[k]);
      vals.push_back(frand((unsigned long long)cols.size(), 23) + 0.1f);
    }
    rowptr[r + 1] = (int)cols.size();
  }
}


template <int L, int MODE>
__global__ void spmv_l(int n, const int* __restrict__ rowptr, const int* __restrict__ cols,
                       const float* __restrict__ vals, const float* __restrict__ x, float* __restrict__ y) {
  int row = blockIdx.x * (blockDim.x / L) + threadIdx.x / L;
  int lane = threadIdx.x % L;
  unsigned group_mask = (L == 32) ? 0xffffffffu : (((1u << L) - 1) << (threadIdx.x % 32 - lane));
  if (row < n) {
    float sum = 0.f;
    int b = __ldg(&rowptr[row]), e = __ldg(&rowptr[row + 1]);
    if (MODE == 0) {
      for (int k = b + lane; k < e; k += L) sum += __ldg(&vals[k]) * __ldg(&x[__ldg(&cols[k])]);
    } else if (MODE == 1) {
      for (int k = b + lane; k < e; k += L) sum += __ldcs(&vals[k]) * __ldg(&x[__ldcs(&cols[k])]);
    } else {
      // MODE 2: loads of cols/vals first, then gathers (more loads in flight)
      int k = b + lane;
      int c0 = k < e ? __ldcs(&cols[k]) : -1, c1 = k + L < e ? __ldcs(&cols[k + L]) : -1;
      float v0 = k < e ? __ldcs(&vals[k]) : 0.f, v1 = k + L < e ? __ldcs(&vals[k + L]) : 0.f;
      if (c0 >= 0) sum += v0 * __ldg(&x[c0]);
      if (c1 >= 0) sum += v1 * __ldg(&x[c1]);
      for (k += 2 * L; k < e; k += L) sum += __ldcs(&vals[k]) * __ldg(&x[__ldcs(&cols[k])]);
    }
#pragma unroll
    for (int offset = L / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(group_mask, sum, offset, L);
    if (lane == 0) y[row] = sum;
  }
}


// CSR-stream: a block takes R consecutive rows; all threads compute the
// products of the block's nonzeros chunk by chunk (coalesced, every lane
// busy), then one thread per row adds its row's products in order.
template <int R, int T>
__global__ void spmv_stream(int n, const int* __restrict__ rowptr, const int* __restrict__ cols,
                            const float* __restrict__ vals, const float* __restrict__ x, float* __restrict__ y) {
  __shared__ int rp[R + 1];
  __shared__ float prod[T];
  int r0 = blockIdx.x * R;
  int rows = min(R, n - r0);
  for (int i = threadIdx.x; i <= rows; i += T) rp[i] = rowptr[r0 + i];
  __syncthreads();
  int b = rp[0], e = rp[rows];
  float sum = 0.f;
  int myb = 0, mye = 0;
  if (threadIdx.x < rows) { myb = rp[threadIdx.x]; mye = rp[threadIdx.x + 1]; }
  for (int c = b; c < e; c += T) {
    int k = c + threadIdx.x;
    if (k < e) prod[threadIdx.x] = __ldcs(&vals[k]) * __ldg(&x[__ldcs(&cols[k])]);
    __syncthreads();
    if (threadIdx.x < rows) {
      int lo = max(myb, c), hi = min(mye, c + T);
      for (int j = lo; j < hi; ++j) sum += prod[j - c];
    }
    __syncthreads();
  }
  if (threadIdx.x < rows) y[r0 + threadIdx.x] = sum;
}

// The same with P products per thread per chunk (a chunk of T * P
// nonzeros, P independent gathers of x in flight per thread), and with
// the row's L = T / R threads adding its products (strided, then
// shuffles: another order than the row's own) where Lsum is set.
template <int R, int T, int P, bool Lsum>
__global__ void spmv_stream_p(int n, const int* __restrict__ rowptr, const int* __restrict__ cols,
                              const float* __restrict__ vals, const float* __restrict__ x, float* __restrict__ y) {
  constexpr int C = T * P, L = T / R;
  __shared__ int rp[R + 1];
  __shared__ float prod[C];
  int r0 = blockIdx.x * R;
  int rows = min(R, n - r0);
  for (int i = threadIdx.x; i <= rows; i += T) rp[i] = rowptr[r0 + i];
  __syncthreads();
  int b = rp[0], e = rp[rows];
  float sum = 0.f;
  int row = Lsum ? threadIdx.x / L : threadIdx.x, lane = Lsum ? threadIdx.x % L : 0;
  int myb = 0, mye = 0;
  if (row < rows) { myb = rp[row]; mye = rp[row + 1]; }
  for (int c = b; c < e; c += C) {
#pragma unroll
    for (int p = 0; p < P; ++p) {
      int k = c + p * T + threadIdx.x;
      if (k < e) prod[p * T + threadIdx.x] = vals[k] * __ldg(&x[cols[k]]);
    }
    __syncthreads();
    if (row < rows) {
      int lo = max(myb, c), hi = min(mye, c + C);
      for (int j = lo + lane; j < hi; j += (Lsum ? L : 1)) sum += prod[j - c];
    }
    __syncthreads();
  }
  if (Lsum)
    for (int o = L / 2; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffffu, sum, o, L);
  if (row < rows && lane == 0) y[r0 + row] = sum;
}

#define CKS(call) do { cusparseStatus_t s_ = (call); if (s_ != CUSPARSE_STATUS_SUCCESS) { \
  fprintf(stderr, "cusparse %d line %d\n", (int)s_, __LINE__); exit(2);} } while (0)

int main() {
  std::vector<int> hrp, hcols;
  std::vector<float> hvals, hx(NROWS);
  build_matrix(NROWS, hrp, hcols, hvals);
  for (int i = 0; i < NROWS; ++i) hx[i] = frand(i, 24) * 2.f - 1.f;
  size_t nnz = hcols.size();
  printf("nnz=%zu\n", nnz);
  int *rp, *cols; float *vals, *x, *y;
  CK(cudaMalloc(&rp, sizeof(int) * (NROWS + 1)));
  CK(cudaMalloc(&cols, sizeof(int) * nnz));
  CK(cudaMalloc(&vals, sizeof(float) * nnz));
  CK(cudaMalloc(&x, sizeof(float) * NROWS));
  CK(cudaMalloc(&y, sizeof(float) * NROWS));
  CK(cudaMemcpy(rp, hrp.data(), sizeof(int) * (NROWS + 1), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(cols, hcols.data(), sizeof(int) * nnz, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(vals, hvals.data(), sizeof(float) * nnz, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(x, hx.data(), sizeof(float) * NROWS, cudaMemcpyHostToDevice));
  std::vector<double> ref(NROWS);
  for (int r = 0; r < NROWS; ++r) { double s = 0; for (int k = hrp[r]; k < hrp[r + 1]; ++k) s += (double)hvals[k] * hx[hcols[k]]; ref[r] = s; }
  std::vector<float> hy(NROWS);
  auto check = [&](const char* v) {
    CK(cudaMemcpy(hy.data(), y, sizeof(float) * NROWS, cudaMemcpyDeviceToHost));
    double err = 0; for (int r = 0; r < NROWS; ++r) err = std::max(err, std::fabs(hy[r] - ref[r]));
    printf("CHECK %s max_err=%.3e\n", v, err);
    CK(cudaMemset(y, 0, sizeof(float) * NROWS));
  };
#define RUN(L, M, T) bench("spmv_csr", "l" #L "m" #M "t" #T, "4194304", [&] { spmv_l<L, M><<<(NROWS + T / L - 1) / (T / L), T>>>(NROWS, rp, cols, vals, x, y); }); check("l" #L "m" #M "t" #T);
  RUN(8, 0, 256) RUN(8, 1, 256) RUN(8, 2, 256) RUN(4, 0, 256) RUN(4, 1, 256) RUN(4, 2, 256)
  RUN(16, 1, 256) RUN(8, 1, 128) RUN(8, 1, 512) RUN(2, 1, 256)
#define STREAM(R, T) bench("spmv_csr", "stream" #R "t" #T, "4194304", [&] { spmv_stream<R, T><<<(NROWS + R - 1) / R, T>>>(NROWS, rp, cols, vals, x, y); }); check("stream" #R "t" #T);
  STREAM(32, 256) STREAM(64, 256) STREAM(64, 512) STREAM(128, 512) STREAM(128, 1024)
#define STREAMP(R, T, P, S) bench("spmv_csr", "stream" #R "t" #T "p" #P "s" #S, "4194304", [&] { spmv_stream_p<R, T, P, S><<<(NROWS + R - 1) / R, T>>>(NROWS, rp, cols, vals, x, y); }); check("stream" #R "t" #T "p" #P "s" #S);
  STREAMP(64, 256, 1, false) STREAMP(64, 256, 2, false) STREAMP(64, 256, 4, false)
  STREAMP(128, 256, 4, false) STREAMP(128, 512, 2, false)
  STREAMP(64, 256, 1, true) STREAMP(64, 256, 4, true) STREAMP(128, 256, 4, true)
  cusparseHandle_t h; CKS(cusparseCreate(&h));
  cusparseSpMatDescr_t A; cusparseDnVecDescr_t vx, vy;
  CKS(cusparseCreateCsr(&A, NROWS, NROWS, (int64_t)nnz, rp, cols, vals, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CKS(cusparseCreateDnVec(&vx, NROWS, x, CUDA_R_32F));
  CKS(cusparseCreateDnVec(&vy, NROWS, y, CUDA_R_32F));
  float one = 1.f, zero = 0.f; size_t bs = 0; void* buf = nullptr;
  CKS(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &bs));
  CK(cudaMalloc(&buf, bs + 1));
  bench("spmv_csr", "cusparse", "4194304", [&] { CKS(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, buf)); });
  check("cusparse");
  // x persisting in L2 for the stream, then the streaming variant again
  cudaStreamAttrValue av = {};
  av.accessPolicyWindow.base_ptr = x; av.accessPolicyWindow.num_bytes = sizeof(float) * NROWS;
  av.accessPolicyWindow.hitRatio = 1.f; av.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  av.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, sizeof(float) * NROWS);
  printf("window: %s\n", cudaGetErrorString(cudaStreamSetAttribute(0, cudaStreamAttributeAccessPolicyWindow, &av)));
  RUN(8, 0, 256) RUN(8, 1, 256)
  return 0;
}
