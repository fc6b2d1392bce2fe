// warp-per-row per=stream on CSR rows: a block of block_size threads takes
// block_size / lanes rows, computes their terms together chunk by chunk
// into shared memory, and each row's thread adds its own terms in order;
// where a block's row offsets decrease, its rows run their own loops.
// Offered first for CSR rows (before the lane groups), with the reason it
// applies. Checked: the text (the test's own comments left out), nvcc
// without a warning, and the rewritten program on the host (host-run.py,
// the block's threads as fibers) against its own reference: rows of 0 to
// 40 terms over a row count that is not a multiple of the block's rows, a
// row of 700 terms (three chunks), and offsets that decrease inside a
// block. Refused, each with its reason: a term reading a value of the
// row's own thread, a sum not starting from zero, bounds that are not
// off[i] and off[i + 1] of one array, a kernel writing its offsets, two
// loops, and registers with stream.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu
// RUN: clang-optiml transforms %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: echo '{"kind":"warp-per-row","target":"csr","params":{"per":"stream","lanes":4,"block_size":256}}' > %t/s.json
// RUN: clang-optiml apply %t/k.cu --edit %t/s.json -o %t/s.cu
// RUN: grep -v '^//' %t/s.cu | FileCheck --check-prefix=OUT %s
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -Werror all-warnings -o %t/s.o %t/s.cu %}
// RUN: python3 %inputs/edit/host-run.py %t/k.cu | FileCheck --check-prefix=HOST %s
// RUN: python3 %inputs/edit/host-run.py %t/s.cu | FileCheck --check-prefix=HOST %s
// RUN: echo '{"kind":"warp-per-row","target":"csr","params":{"per":"stream","lanes":32,"block_size":64}}' > %t/s2.json
// RUN: clang-optiml apply %t/k.cu --edit %t/s2.json -o %t/s2.cu
// RUN: python3 %inputs/edit/host-run.py %t/s2.cu | FileCheck --check-prefix=HOST %s
// RUN: echo '{"kind":"warp-per-row","target":"csr","params":{"per":"stream","lanes":4,"block_size":64,"terms":3}}' > %t/s3.json
// RUN: clang-optiml apply %t/k.cu --edit %t/s3.json -o %t/s3.cu
// RUN: grep -v '^//' %t/s3.cu | FileCheck --check-prefix=CHUNKED %s
// RUN: python3 %inputs/edit/host-run.py %t/s3.cu | FileCheck --check-prefix=HOST %s
// RUN: echo '{"kind":"warp-per-row","target":"csr","params":{"per":"warp","terms":2}}' > %t/r8.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/r8.json 2>&1 | FileCheck --check-prefix=WARPTERMS %s
// RUN: echo '{"kind":"warp-per-row","target":"scaled","params":{"per":"stream"}}' > %t/r1.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/r1.json 2>&1 | FileCheck --check-prefix=LOCAL %s
// RUN: echo '{"kind":"warp-per-row","target":"biased","params":{"per":"stream"}}' > %t/r2.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/r2.json 2>&1 | FileCheck --check-prefix=ZERO %s
// RUN: echo '{"kind":"warp-per-row","target":"twoarrays","params":{"per":"stream"}}' > %t/r3.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/r3.json 2>&1 | FileCheck --check-prefix=BOUNDS %s
// RUN: echo '{"kind":"warp-per-row","target":"writesptr","params":{"per":"stream"}}' > %t/r4.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/r4.json 2>&1 | FileCheck --check-prefix=WRITES %s
// RUN: echo '{"kind":"warp-per-row","target":"twoloops","params":{"per":"stream"}}' > %t/r5.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/r5.json 2>&1 | FileCheck --check-prefix=TWO %s
// RUN: echo '{"kind":"warp-per-row","target":"csr","params":{"per":"stream","registers":true}}' > %t/r6.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/r6.json 2>&1 | FileCheck --check-prefix=REG %s
// RUN: echo '{"kind":"warp-per-row","target":"tcsr","params":{"per":"stream","lanes":4,"block_size":128}}' > %t/t.json
// RUN: clang-optiml apply %t/s.cu --edit %t/t.json -o %t/t.cu
// RUN: grep -v '^//' %t/t.cu | FileCheck --check-prefix=TOUT %s
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -Werror all-warnings -o %t/t.o %t/t.cu %}
// RUN: python3 %inputs/edit/host-run.py %t/t.cu | FileCheck --check-prefix=HOST %s
// RUN: echo '{"kind":"warp-per-row","target":"mixed","params":{"per":"stream"}}' > %t/r7.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/r7.json 2>&1 | FileCheck --check-prefix=MIXED %s
// RUN: cmp %s %t/k.cu

// WHY: warp-per-row csr: {{.*}}rewrite: one warp per item
// WHY-NEXT: param per (string warp|block|stream, optional)
// WHY: try {"kind":"warp-per-row","target":"csr","params":{"block_size":256,"lanes":4,"per":"stream"}}
// WHY-NEXT: try {"kind":"warp-per-row","target":"csr","params":{"block_size":256,"lanes":8,"per":"warp"}}
// WHY: warp-per-row scaled:
// WHY-NOT: "per":"stream"
// WHY: warp-per-row biased:

// OUT: int row = blockIdx.x * 64 + threadIdx.x;
// OUT-NEXT: // warp-per-row per=stream: this block's 64 rows; its 256 threads compute the rows' terms together, 256 at a time, and each row's thread adds its own in order.
// OUT-NEXT: __shared__ int [[OFF:rowOffsets[0-9]*]][65];
// OUT-NEXT: __shared__ float [[TERMS:rowTerms[0-9]*]][256];
// OUT: [[OFF]][[[I:i[0-9]*]]] = offsets[[[BASE:rowBase[0-9]*]] + [[I]]];
// OUT: const bool [[ORDER:rowsInOrder[0-9]*]] = __syncthreads_and((int)threadIdx.x >= [[HERE:rowsHere[0-9]*]] || [[OFF]][threadIdx.x] <= [[OFF]][threadIdx.x + 1]);
// OUT: const int k = [[CHUNK:chunk[0-9]*]] + (int)threadIdx.x;
// OUT-NEXT: if (k < [[LAST:last[0-9]*]])
// OUT-NEXT: [[TERMS]][threadIdx.x] = vals[k] * x[cols[k]];
// OUT: [[SUM:sumStream[0-9]*]] += [[TERMS]][[[J:j[0-9]*]] - [[CHUNK]]];
// OUT: if (threadIdx.x >= 64)
// OUT-NEXT: return;
// OUT-NEXT: if (row < n) {
// OUT-NEXT: float sum = 0.f;
// OUT-NEXT: if ([[ORDER]]) {
// OUT-NEXT: sum += [[SUM]];
// OUT-NEXT: } else {
// OUT-NEXT: for (int k = offsets[row]; k < offsets[row + 1]; ++k)
// OUT: csr<<<(n + 63) / 64, 256>>>(n, offsets, cols, vals, x, y);

// The same sum in a template over its value and index types, over a 2D
// grid of blocks, its row walked by a counting while loop: the types are
// checked in the instantiation, the terms kept in the sum's type as
// written, the grid made 1D.
// TOUT: const Index row =
// TOUT-NEXT: blockIdx.x * 32 + threadIdx.x;
// TOUT-NEXT: // warp-per-row per=stream: this block's 32 rows; its 128 threads
// TOUT-NEXT: __shared__ Index [[OFF:rowOffsets[0-9]*]][33];
// TOUT-NEXT: __shared__ Value [[TERMS:rowTerms[0-9]*]][128];
// TOUT: const Index k = [[CHUNK:chunk[0-9]*]] + (Index)threadIdx.x;
// TOUT-NEXT: if (k < [[LAST:last[0-9]*]])
// TOUT-NEXT: [[TERMS]][threadIdx.x] = vals[k] * x[cols[k]];
// TOUT: Index k = offsets[row];
// TOUT-NEXT: if ([[ORDER:rowsInOrder[0-9]*]]) {
// TOUT-NEXT: dot += [[SUM:dotStream[0-9]*]];
// TOUT-NEXT: } else {
// TOUT-NEXT: while (k < offsets[row + 1]) {
// TOUT: tcsr<float, int><<<(n + 31) / 32, 128>>>(n, offsets, cols, vals, x, y);

// With terms=3, each thread computes three terms a block apart per chunk
// of 192 (the long row spans four chunks).
// CHUNKED: __shared__ float [[TT:rowTerms[0-9]*]][192];
// CHUNKED: for (int chunk{{[0-9]*}} = {{.*}}; chunk{{[0-9]*}} += 192) {
// CHUNKED-NEXT: #pragma unroll
// CHUNKED-NEXT: for (int [[T:t[0-9]*]] = 0; [[T]] < 3; ++[[T]]) {
// CHUNKED-NEXT: const int k = [[CHUNK:chunk[0-9]*]] + (int)([[T]] * 64) + (int)threadIdx.x;
// CHUNKED-NEXT: if (k < {{last[0-9]*}})
// CHUNKED-NEXT: [[TT]][[[T]] * 64 + threadIdx.x] = vals[k] * x[cols[k]];
// CHUNKED: const int {{hi[0-9]*}} = {{mineEnd[0-9]*}} < [[CHUNK]] + 192 ? {{mineEnd[0-9]*}} : [[CHUNK]] + 192;
// WARPTERMS: params.terms applies to per=stream only

// HOST: rows 300: 0 of 300 rows differ, template 0
// HOST: long row: 0 of 70 rows differ, template 0
// HOST: offsets decreasing: 0 of 130 rows differ, template 0
// HOST: PASS

// LOCAL: params.per=stream: the term 'vals[k] * x[cols[k]] * scale' reads 'scale', which the kernel writes or each thread holds; another thread of the block computes it
// ZERO: params.per=stream: 'sum' is not declared as zero in the item's body before the loop and left alone until it
// BOUNDS: params.per=stream: the loop at {{[0-9]+}}:{{[0-9]+}} does not run from off[row] to below off[row + 1] of one array parameter (CSR row offsets)
// WRITES: params.per=stream: the kernel writes the row offsets 'offsets'
// TWO: params.per=stream: the item's body has 2 inner loops; the stream form takes one
// REG: params.registers does not apply to per=stream
// MIXED: params.per=stream: the term is a 'float' and the sum a 'double' in mixed<float>; the terms are kept in the sum's type, which would round them

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

__global__ void csr(int n, const int *offsets, const int *cols,
                    const float *vals, const float *x, float *y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n) {
    float sum = 0.f;
    for (int k = offsets[row]; k < offsets[row + 1]; ++k)
      sum += vals[k] * x[cols[k]];
    y[row] = sum;
  }
}

__global__ void scaled(int n, const int *offsets, const int *cols,
                       const float *vals, const float *x, const float *s,
                       float *y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n) {
    const float scale = s[row];
    float sum = 0.f;
    for (int k = offsets[row]; k < offsets[row + 1]; ++k)
      sum += vals[k] * x[cols[k]] * scale;
    y[row] = sum;
  }
}

__global__ void biased(int n, const int *offsets, const int *cols,
                       const float *vals, const float *x, float *y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n) {
    float sum = y[row];
    for (int k = offsets[row]; k < offsets[row + 1]; ++k)
      sum += vals[k] * x[cols[k]];
    y[row] = sum;
  }
}

__global__ void twoarrays(int n, const int *starts, const int *ends,
                          const float *vals, const float *x, float *y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n) {
    float sum = 0.f;
    for (int k = starts[row]; k < ends[row]; ++k)
      sum += vals[k] * x[k];
    y[row] = sum;
  }
}

__global__ void writesptr(int n, int *offsets, const float *vals, float *y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n) {
    float sum = 0.f;
    for (int k = offsets[row]; k < offsets[row + 1]; ++k)
      sum += vals[k];
    y[row] = sum;
    offsets[row] = 0;
  }
}

__global__ void twoloops(int n, const int *offsets, const float *vals,
                         float *y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n) {
    float sum = 0.f, sq = 0.f;
    for (int k = offsets[row]; k < offsets[row + 1]; ++k)
      sum += vals[k];
    for (int k = offsets[row]; k < offsets[row + 1]; ++k)
      sq += vals[k] * vals[k];
    y[row] = sum + sq;
  }
}

template <typename Value, typename Index>
__global__ void tcsr(Index n, const Index *offsets, const Index *cols,
                     const Value *vals, const Value *x, Value *y) {
  const Index row =
      (Index)((blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x);
  if (row < n) {
    Value dot = Value(0);
    Index k = offsets[row];
    while (k < offsets[row + 1]) {
      dot += vals[k] * x[cols[k]];
      ++k;
    }
    y[row] = dot;
  }
}

template <typename Value>
__global__ void mixed(int n, const int *offsets, const Value *vals,
                      double *y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n) {
    double sum = 0.0;
    for (int k = offsets[row]; k < offsets[row + 1]; ++k)
      sum += vals[k];
    y[row] = sum;
  }
}

void launchMixed(int n, const int *offsets, const float *vals, double *y) {
  mixed<float><<<(n + 255) / 256, 256>>>(n, offsets, vals, y);
}

static float frand(unsigned i) {
  unsigned h = i * 2654435761u;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return (float)(h >> 8) / 16777216.f - 0.5f;
}

// Runs csr on the matrix (host offsets, nnz terms) and compares each row
// with the same sum on the host; prints how many rows differ.
static bool check(const char *name, const std::vector<int> &hoff) {
  int n = (int)hoff.size() - 1, nnz = 0;
  for (int v : hoff)
    nnz = v > nnz ? v : nnz;
  std::vector<int> hcols(nnz + 1);
  std::vector<float> hvals(nnz + 1), hx(97), hy(n);
  for (int k = 0; k <= nnz; ++k) {
    hcols[k] = (k * 37) % 97;
    hvals[k] = frand(k);
  }
  for (int i = 0; i < 97; ++i)
    hx[i] = frand(1000 + i);
  int *offsets, *cols;
  float *vals, *x, *y;
  cudaMalloc(&offsets, sizeof(int) * (n + 1));
  cudaMalloc(&cols, sizeof(int) * (nnz + 1));
  cudaMalloc(&vals, sizeof(float) * (nnz + 1));
  cudaMalloc(&x, sizeof(float) * 97);
  cudaMalloc(&y, sizeof(float) * n);
  cudaMemcpy(offsets, hoff.data(), sizeof(int) * (n + 1),
             cudaMemcpyHostToDevice);
  cudaMemcpy(cols, hcols.data(), sizeof(int) * (nnz + 1),
             cudaMemcpyHostToDevice);
  cudaMemcpy(vals, hvals.data(), sizeof(float) * (nnz + 1),
             cudaMemcpyHostToDevice);
  cudaMemcpy(x, hx.data(), sizeof(float) * 97, cudaMemcpyHostToDevice);
  auto differ = [&] {
    cudaMemcpy(hy.data(), y, sizeof(float) * n, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int r = 0; r < n; ++r) {
      double ref = 0;
      for (int k = hoff[r]; k < hoff[r + 1]; ++k)
        ref += (double)hvals[k] * hx[hcols[k]];
      if (std::fabs(hy[r] - ref) > 1e-4 * (1 + std::fabs(ref)))
        ++bad;
    }
    cudaMemset(y, 0, sizeof(float) * n);
    return bad;
  };
  csr<<<(n + 127) / 128, 128>>>(n, offsets, cols, vals, x, y);
  int bad = differ();
  const unsigned nb = (n + 127) / 128;
  const dim3 grid(4, (nb + 3) / 4);
  tcsr<float, int><<<grid, 128>>>(n, offsets, cols, vals, x, y);
  int badT = differ();
  printf("%s: %d of %d rows differ, template %d\n", name, bad, n, badT);
  cudaFree(offsets);
  cudaFree(cols);
  cudaFree(vals);
  cudaFree(x);
  cudaFree(y);
  return bad == 0 && badT == 0;
}

int main() {
  bool ok = true;
  std::vector<int> off = {0};
  for (int r = 0; r < 300; ++r)
    off.push_back(off.back() + (r * 7) % 41);
  ok &= check("rows 300", off);
  off = {0};
  for (int r = 0; r < 70; ++r)
    off.push_back(off.back() + (r == 5 ? 700 : 3));
  ok &= check("long row", off);
  // Row 9 of the first block runs 18..1000 and row 10 none (1000 > 22):
  // most of row 9's terms lie past off[64] = 128, outside the chunks a
  // stream of the block's offsets would compute.
  off = {0};
  for (int r = 0; r < 130; ++r)
    off.push_back(r == 9 ? 1000 : 2 * (r + 1));
  ok &= check("offsets decreasing", off);
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
