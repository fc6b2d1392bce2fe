// spmv_csr (naive): y = A*x with A in CSR; one thread per row.
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

static int report(bool ok, double err) {
  printf("CHECK %s max_err=%.3e\n", ok ? "PASS" : "FAIL", err);
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
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

__global__ void spmv(int n, const int* rowptr, const int* cols, const float* vals, const float* x, float* y) {
  int row = blockIdx.x * 64 + threadIdx.x;
  // warp-per-row per=stream: this block's 64 rows; its 256 threads compute the rows' terms together, 256 at a time, and each row's thread adds its own in order.
  __shared__ int rowOffsets[65];
  __shared__ float rowTerms[256];
  const int rowBase = blockIdx.x * 64;
  const int rowsHere = n - rowBase < 64 ? (int)(n - rowBase) : 64;
  for (int i1 = threadIdx.x; i1 <= rowsHere; i1 += 256)
    rowOffsets[i1] = rowptr[rowBase + i1];
  __syncthreads();
  // Where a row's offsets decrease, the rows run their own loops.
  const bool rowsInOrder = __syncthreads_and((int)threadIdx.x >= rowsHere || rowOffsets[threadIdx.x] <= rowOffsets[threadIdx.x + 1]);
  float sumStream = 0;
  if (rowsInOrder && rowsHere > 0) {
    const int first1 = rowOffsets[0], last = rowOffsets[rowsHere];
    int mine = 0, mineEnd = 0;
    if ((int)threadIdx.x < rowsHere) {
      mine = rowOffsets[threadIdx.x];
      mineEnd = rowOffsets[threadIdx.x + 1];
    }
    for (int chunk = first1; chunk < last; chunk += 256) {
      {
        const int k = chunk + (int)threadIdx.x;
        if (k < last)
          rowTerms[threadIdx.x] = vals[k] * x[cols[k]];
      }
      __syncthreads();
      const int lo = mine > chunk ? mine : chunk;
      const int hi = mineEnd < chunk + 256 ? mineEnd : chunk + 256;
      for (int j = lo; j < hi; ++j)
        sumStream += rowTerms[j - chunk];
      __syncthreads();
    }
  }
  if (threadIdx.x >= 64)
    return;
  if (row < n) {
    float sum = 0.f;
    if (rowsInOrder) {
      sum += sumStream;
    } else {
      for (int k = rowptr[row]; k < rowptr[row + 1]; ++k) sum += vals[k] * x[cols[k]];
    }
    y[row] = sum;
  }
}

int main() {
  std::vector<int> hrp, hcols;
  std::vector<float> hvals, hx(NROWS);
  build_matrix(NROWS, hrp, hcols, hvals);
  for (int i = 0; i < NROWS; ++i) hx[i] = frand(i, 24) * 2.f - 1.f;
  size_t nnz = hcols.size();
  printf("nnz=%zu\n", nnz);
  int *rp, *cols;
  float *vals, *x, *y;
  CK(cudaMalloc(&rp, sizeof(int) * (NROWS + 1)));
  CK(cudaMalloc(&cols, sizeof(int) * nnz));
  CK(cudaMalloc(&vals, sizeof(float) * nnz));
  CK(cudaMalloc(&x, sizeof(float) * NROWS));
  CK(cudaMalloc(&y, sizeof(float) * NROWS));
  CK(cudaMemcpy(rp, hrp.data(), sizeof(int) * (NROWS + 1), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(cols, hcols.data(), sizeof(int) * nnz, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(vals, hvals.data(), sizeof(float) * nnz, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(x, hx.data(), sizeof(float) * NROWS, cudaMemcpyHostToDevice));
  int threads = 256, blocks = (NROWS + threads - 1) / threads;
  bench("spmv_csr", "optimized", "4194304", [&] { spmv<<<(NROWS + 63) / 64, 256>>>(NROWS, rp, cols, vals, x, y); });
  std::vector<float> hy(NROWS);
  CK(cudaMemcpy(hy.data(), y, sizeof(float) * NROWS, cudaMemcpyDeviceToHost));
  double err = 0;
  bool ok = true;
  for (int r = 0; r < NROWS; ++r) {
    double s = 0, sa = 0;
    for (int k = hrp[r]; k < hrp[r + 1]; ++k) { double t = (double)hvals[k] * hx[hcols[k]]; s += t; sa += fabs(t); }
    double e = fabs(hy[r] - s) / (sa + 1e-30);
    err = std::max(err, e);
    if (e > 1e-5) ok = false;
  }
  return report(ok, err);
}
