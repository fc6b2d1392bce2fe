// transpose-through-shared on thirteen transposes written from scratch: the
// textbook (c along x, r along y, an if-block), an early return with
// __restrict__, a pointer to the thread's input row, an inline index helper
// over unsigned indices, a template over the element type (float and double
// launches), a template over int elements and the block's edge (in place of
// blockDim), a kernel in a namespace launched through a macro, sizes as
// #define constants, x over the input's rows (the read strides, the write
// is unit-stride in x), a scale (`alpha * in`), a batch over blockIdx.z
// through row pointers declared first, a batch of doubles whose index and
// plane size are declared after the thread indices, and float2 elements.
// Every one is recognized; the tiled launches keep the grid's z where the
// kernel reads blockIdx.z. Sizes have tails (300x200, 33x1000, 77x129) and
// are aligned (256x512). The edits applied one after another compile with
// nvcc without a warning (the host's dim3 locals the tiled launches no
// longer read are removed) and the input is left as it was. The program checks each transpose
// against the CPU (exactly), so the GPU check (scripts/gpu-edit-family.sh)
// runs `eval` on the result.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms -v %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: sed -n 's|^// EDIT: ||p' %s > %t/edits.jsonl
// RUN: while read -r e; do \
// RUN:   echo "$e" > %t/e.json && \
// RUN:   clang-optiml apply %t/all.cu --edit %t/e.json -o %t/next.cu && mv %t/next.cu %t/all.cu || exit 1; \
// RUN: done < %t/edits.jsonl
// RUN: grep -v '^//' %t/all.cu | FileCheck --check-prefix=OUT %s
// RUN: %if nvcc %{ %nvcc -c -std=c++17 -arch=sm_90 -Werror all-warnings -o %t/all.o %t/all.cu %}
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

// WHY: transpose-through-shared naive: 2D copy 'out[c * rows + r] = in[r * cols + c]': the read is unit-stride in 'c', the write in 'r'
// The textbook: c the x index, r the y index, an if-block.
__global__ void naive(float *out, const float *in, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) {
    out[c * rows + r] = in[r * cols + c];
  }
}

// WHY: transpose-through-shared early: 2D copy 'dst[x * height + y] = src[y * width + x]': the read is unit-stride in 'x', the write in 'y'
// An early return, __restrict__, const indices, the thread index first.
__global__ void early(const float *__restrict__ src, float *__restrict__ dst,
                      int height, int width) {
  const int x = threadIdx.x + blockIdx.x * blockDim.x;
  const int y = threadIdx.y + blockIdx.y * blockDim.y;
  if (x >= width || y >= height)
    return;
  dst[x * height + y] = src[y * width + x];
}
// OUT: __shared__ float tile{{[0-9]+}}[16][17];
// OUT: tile{{[0-9]+}}[k{{[0-9]+}}][threadIdx.x] = src[y * width + x];
// OUT: __syncthreads();
// OUT: dst[x * height + y] = tile{{[0-9]+}}[threadIdx.x][k{{[0-9]+}}];

// WHY: transpose-through-shared rowptr: 2D copy 'out[(size_t)c * rows + r] = src[c]': the read is unit-stride in 'c', the write in 'r'
// A pointer to the thread's input row, 64-bit offsets.
__global__ void rowptr(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols)
    return;
  const float *src = in + (size_t)r * cols;
  out[(size_t)c * rows + r] = src[c];
}
// OUT: __shared__ float tile{{[0-9]+}}[64][65];
// OUT: for (int k{{[0-9]+}} = threadIdx.y; k{{[0-9]+}} < 64; k{{[0-9]+}} += 16) {
// OUT: const float *src = in + (size_t)r * cols;
// OUT-NEXT: tile{{[0-9]+}}[k{{[0-9]+}}][threadIdx.x] = src[c];

// WHY: transpose-through-shared helper: 2D copy 'out[idx(col, row, rows)] = in[idx(row, col, cols)]': the read is unit-stride in 'col', the write in 'row'
// An inline index helper, unsigned indices.
__device__ __forceinline__ unsigned idx(unsigned r, unsigned c, unsigned ld) {
  return r * ld + c;
}
__global__ void helper(const float *in, float *out, unsigned rows,
                       unsigned cols) {
  unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && col < cols)
    out[idx(col, row, rows)] = in[idx(row, col, cols)];
}

// WHY: transpose-through-shared generic: 2D copy 'out[j * n + i] = in[i * m + j]': the read is unit-stride in 'j', the write in 'i'
// A template over the element type (float and double launches).
template <typename T>
__global__ void generic(const T *in, T *out, int n, int m) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < m)
    out[j * n + i] = in[i * m + j];
}
// OUT: __shared__ T tile{{[0-9]+}}[32][33];

// WHY: transpose-through-shared blocked: 2D copy 'out[c * rows + r] = in[r * cols + c]': the read is unit-stride in 'c', the write in 'r'
// A template over the element type and the block's edge, launched for int:
// the block size replaces blockDim.
template <typename T, int BS>
__global__ void blocked(const T *in, T *out, int rows, int cols) {
  int c = blockIdx.x * BS + threadIdx.x;
  int r = blockIdx.y * BS + threadIdx.y;
  if (c < cols && r < rows)
    out[c * rows + r] = in[r * cols + c];
}

// WHY: transpose-through-shared linalg::transpose: 2D copy 'at[col * m + row] = a[row * n + col]': the read is unit-stride in 'col', the write in 'row'
// A kernel in a namespace, launched through a macro.
namespace linalg {
__global__ void transpose(float *at, const float *a, int m, int n) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < m && col < n)
    at[col * m + row] = a[row * n + col];
}
// OUT: int col = blockIdx.x * 32 + threadIdx.x;
} // namespace linalg
#define LAUNCH(kernel, grid, block, ...) kernel<<<grid, block>>>(__VA_ARGS__)

// WHY: transpose-through-shared fixed: 2D copy 'out[x * ROWS + y] = in[y * COLS + x]': the read is unit-stride in 'x', the write in 'y'
// Sizes as constants.
#define ROWS 300
#define COLS 200
__global__ void fixed(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (y < ROWS && x < COLS)
    out[x * ROWS + y] = in[y * COLS + x];
}
// OUT: if (y < ROWS && x < COLS)
// OUT-NEXT: tile{{[0-9]+}}[k{{[0-9]+}}][threadIdx.x] = in[y * COLS + x];

// WHY: transpose-through-shared xrows: 2D copy 'b[j * nrows + i] = a[i * ncols + j]': the read is unit-stride in 'j', the write in 'i'
// Swapped naming: x runs over the rows of the input, so the write is the
// side unit-stride in x and the read strides.
__global__ void xrows(const float *a, float *b, int nrows, int ncols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; // row of a
  int j = blockIdx.y * blockDim.y + threadIdx.y; // column of a
  if (i < nrows && j < ncols)
    b[j * nrows + i] = a[i * ncols + j];
}
// OUT: int i = blockIdx.x * 32 + k{{[0-9]+}};
// OUT-NEXT: int j = blockIdx.y * 32 + threadIdx.x;
// OUT: tile{{[0-9]+}}[threadIdx.x][k{{[0-9]+}}] = a[i * ncols + j];
// OUT: b[j * nrows + i] = tile{{[0-9]+}}[k{{[0-9]+}}][threadIdx.x];

// WHY: transpose-through-shared scaled: 2D copy 'out[c * rows + r] = alpha * in[r * cols + c]': the read is unit-stride in 'c', the write in 'r'
// A transpose with a scale.
__global__ void scaled(float alpha, const float *in, float *out, int rows,
                       int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = alpha * in[r * cols + c];
}
// OUT: tile{{[0-9]+}}[k{{[0-9]+}}][threadIdx.x] = alpha * in[r * cols + c];

// WHY: transpose-through-shared batched: 2D copy 'b[c * rows + r] = a[r * cols + c]': the read is unit-stride in 'c', the write in 'r'
// A batch of matrices, one per blockIdx.z.
__global__ void batched(const float *in, float *out, int rows, int cols) {
  const float *a = in + (size_t)blockIdx.z * rows * cols;
  float *b = out + (size_t)blockIdx.z * rows * cols;
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    b[c * rows + r] = a[r * cols + c];
}

// WHY: transpose-through-shared stack: 2D copy 'out[b * plane + (size_t)c * rows + r] = in[b * plane + (size_t)r * cols + c]': the read is unit-stride in 'c', the write in 'r'
// A batch of double matrices: the batch index and the plane's size declared
// after the thread indices, an early return.
__global__ void stack(const double *in, double *out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  const int b = blockIdx.z;
  const size_t plane = (size_t)rows * cols;
  if (c >= cols || r >= rows)
    return;
  out[b * plane + (size_t)c * rows + r] = in[b * plane + (size_t)r * cols + c];
}
// OUT: const int b = blockIdx.z;
// OUT-NEXT: const size_t plane = (size_t)rows * cols;
// OUT-NEXT: __shared__ double tile{{[0-9]+}}[32][33];

// WHY: transpose-through-shared complex_t: 2D copy 'out[c * rows + r] = in[r * cols + c]': the read is unit-stride in 'c', the write in 'r'
// float2 elements (complex numbers).
__global__ void complex_t(const float2 *in, float2 *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[r * cols + c];
}
// OUT: __shared__ float2 tile{{[0-9]+}}[32][33];

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
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    bad += got[i] != want[i];
  printf("%s %s (%zu of %zu wrong)\n", bad ? "FAIL" : "PASS", name, bad,
         got.size());
  failures += bad != 0;
}
template <typename T> std::vector<T> values(size_t n, unsigned seed) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (T)((int)((i * 2654435761u + seed * 40503u) >> 9) % 1999 - 999);
  return v;
}
// out[c * rows + r] = scale * in[r * cols + c] over a rows x cols input.
template <typename T>
std::vector<T> transposed(const std::vector<T> &in, int rows, int cols,
                          T scale = T(1)) {
  std::vector<T> out(in.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      out[(size_t)c * rows + r] = scale * in[(size_t)r * cols + c];
  return out;
}
// Output buffers start as -7 so a missed element shows.
template <typename T> T *fresh(size_t n) {
  return upload(std::vector<T>(n, T(-7)));
}

int main() {
  {
    const int rows = 300, cols = 200;
    auto in = values<float>((size_t)rows * cols, 1);
    float *din = upload(in), *dout = fresh<float>(in.size());
    dim3 block(16, 16);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    naive<<<grid, block>>>(dout, din, rows, cols);
    CHECK(cudaGetLastError());
    expect("naive", download(dout, in.size()), transposed(in, rows, cols));
  }
  {
    const int h = 33, w = 1000;
    auto in = values<float>((size_t)h * w, 2);
    float *din = upload(in), *dout = fresh<float>(in.size());
    early<<<dim3((w + 31) / 32, (h + 7) / 8), dim3(32, 8)>>>(din, dout, h, w);
    CHECK(cudaGetLastError());
    expect("early", download(dout, in.size()), transposed(in, h, w));
  }
  {
    const int rows = 256, cols = 512;
    auto in = values<float>((size_t)rows * cols, 3);
    float *din = upload(in), *dout = fresh<float>(in.size());
    const dim3 threads(32, 32);
    const dim3 blocks(cols / 32, rows / 32);
    rowptr<<<blocks, threads>>>(din, dout, rows, cols);
    CHECK(cudaGetLastError());
    expect("rowptr", download(dout, in.size()), transposed(in, rows, cols));
  }
  {
    const unsigned rows = 77, cols = 129;
    auto in = values<float>((size_t)rows * cols, 4);
    float *din = upload(in), *dout = fresh<float>(in.size());
    dim3 block(64, 4);
    dim3 grid((cols + 63) / 64, (rows + 3) / 4);
    helper<<<grid, block>>>(din, dout, rows, cols);
    CHECK(cudaGetLastError());
    expect("helper", download(dout, in.size()), transposed(in, rows, cols));
  }
  {
    const int n = 45, m = 70;
    auto fin = values<float>((size_t)n * m, 5);
    auto din = values<double>((size_t)n * m, 6);
    float *fi = upload(fin), *fo = fresh<float>(fin.size());
    double *di = upload(din), *dout = fresh<double>(din.size());
    dim3 block(16, 16), grid((m + 15) / 16, (n + 15) / 16);
    generic<float><<<grid, block>>>(fi, fo, n, m);
    CHECK(cudaGetLastError());
    generic<double><<<grid, block>>>(di, dout, n, m);
    CHECK(cudaGetLastError());
    expect("generic<float>", download(fo, fin.size()), transposed(fin, n, m));
    expect("generic<double>", download(dout, din.size()), transposed(din, n, m));
  }
  {
    const int rows = 100, cols = 37;
    auto in = values<int>((size_t)rows * cols, 7);
    int *din = upload(in), *dout = fresh<int>(in.size());
    blocked<int, 16><<<dim3((cols + 15) / 16, (rows + 15) / 16), dim3(16, 16)>>>(
        din, dout, rows, cols);
    CHECK(cudaGetLastError());
    expect("blocked<int, 16>", download(dout, in.size()),
           transposed(in, rows, cols));
  }
  {
    const int m = 64, n = 96;
    auto in = values<float>((size_t)m * n, 8);
    float *din = upload(in), *dout = fresh<float>(in.size());
    LAUNCH(linalg::transpose, dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16),
           dout, din, m, n);
    CHECK(cudaGetLastError());
    expect("linalg::transpose", download(dout, in.size()),
           transposed(in, m, n));
  }
  {
    auto in = values<float>((size_t)ROWS * COLS, 9);
    float *din = upload(in), *dout = fresh<float>(in.size());
    fixed<<<dim3((COLS + 31) / 32, (ROWS + 31) / 32), dim3(32, 32)>>>(din, dout);
    CHECK(cudaGetLastError());
    expect("fixed", download(dout, in.size()), transposed(in, ROWS, COLS));
  }
  {
    const int nrows = 1000, ncols = 33;
    auto in = values<float>((size_t)nrows * ncols, 10);
    float *din = upload(in), *dout = fresh<float>(in.size());
    dim3 block(32, 8);
    dim3 grid((nrows + 31) / 32, (ncols + 7) / 8);
    xrows<<<grid, block>>>(din, dout, nrows, ncols);
    CHECK(cudaGetLastError());
    expect("xrows", download(dout, in.size()), transposed(in, nrows, ncols));
  }
  {
    const int rows = 200, cols = 300;
    const float alpha = 0.5f;
    auto in = values<float>((size_t)rows * cols, 11);
    float *din = upload(in), *dout = fresh<float>(in.size());
    scaled<<<dim3((cols + 15) / 16, (rows + 15) / 16), dim3(16, 16)>>>(
        alpha, din, dout, rows, cols);
    CHECK(cudaGetLastError());
    expect("scaled", download(dout, in.size()),
           transposed(in, rows, cols, alpha));
  }
  {
    const int rows = 40, cols = 50, count = 3;
    const size_t one = (size_t)rows * cols;
    auto in = values<float>(one * count, 12);
    float *din = upload(in), *dout = fresh<float>(in.size());
    batched<<<dim3((cols + 15) / 16, (rows + 15) / 16, count), dim3(16, 16)>>>(
        din, dout, rows, cols);
    CHECK(cudaGetLastError());
    std::vector<float> want;
    for (int b = 0; b < count; ++b) {
      std::vector<float> part(in.begin() + b * one, in.begin() + (b + 1) * one);
      auto t = transposed(part, rows, cols);
      want.insert(want.end(), t.begin(), t.end());
    }
    expect("batched", download(dout, in.size()), want);
  }
  {
    const int rows = 70, cols = 45, count = 2;
    const size_t one = (size_t)rows * cols;
    auto in = values<double>(one * count, 15);
    double *din = upload(in), *dout = fresh<double>(in.size());
    dim3 block(32, 4);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y,
              count);
    stack<<<grid, block>>>(din, dout, rows, cols);
    CHECK(cudaGetLastError());
    std::vector<double> want;
    for (int b = 0; b < count; ++b) {
      std::vector<double> part(in.begin() + b * one, in.begin() + (b + 1) * one);
      auto t = transposed(part, rows, cols);
      want.insert(want.end(), t.begin(), t.end());
    }
    expect("stack", download(dout, in.size()), want);
  }
  {
    const int rows = 65, cols = 31;
    auto re = values<float>((size_t)rows * cols, 13);
    auto im = values<float>((size_t)rows * cols, 14);
    std::vector<float2> in(re.size());
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = make_float2(re[i], im[i]);
    float2 *din = upload(in);
    float2 *dout = upload(std::vector<float2>(in.size(), make_float2(-7, -7)));
    complex_t<<<dim3((cols + 15) / 16, (rows + 15) / 16), dim3(16, 16)>>>(
        din, dout, rows, cols);
    CHECK(cudaGetLastError());
    auto got = download(dout, in.size());
    std::vector<float> gr(got.size()), gi(got.size());
    for (size_t i = 0; i < got.size(); ++i) {
      gr[i] = got[i].x;
      gi[i] = got[i].y;
    }
    expect("complex_t (real)", gr, transposed(re, rows, cols));
    expect("complex_t (imag)", gi, transposed(im, rows, cols));
  }
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
// OUT: naive<<<dim3((cols + 31) / 32, (rows + 31) / 32), dim3(32, 8)>>>(dout, din, rows, cols);
// OUT: early<<<dim3((w + 15) / 16, (h + 15) / 16), dim3(16, 4)>>>(din, dout, h, w);
// OUT: rowptr<<<dim3((cols + 63) / 64, (rows + 63) / 64), dim3(64, 16)>>>(din, dout, rows, cols);
// OUT: helper<<<dim3((cols + 31) / 32, (rows + 31) / 32), dim3(32, 8)>>>(din, dout, rows, cols);
// OUT: generic<float><<<dim3((m + 31) / 32, (n + 31) / 32), dim3(32, 8)>>>(fi, fo, n, m);
// OUT: generic<double><<<dim3((m + 31) / 32, (n + 31) / 32), dim3(32, 8)>>>(di, dout, n, m);
// OUT: blocked<int, 16><<<dim3((cols + 31) / 32, (rows + 31) / 32), dim3(32, 32)>>>(
// OUT: LAUNCH(linalg::transpose, dim3((n + 31) / 32, (m + 31) / 32), dim3(32, 8),
// OUT: fixed<<<dim3((COLS + 31) / 32, (ROWS + 31) / 32), dim3(32, 4)>>>(din, dout);
// OUT: xrows<<<dim3((nrows + 31) / 32, (ncols + 31) / 32), dim3(32, 8)>>>(din, dout, nrows, ncols);
// OUT: scaled<<<dim3((cols + 15) / 16, (rows + 15) / 16), dim3(16, 16)>>>(
// OUT: batched<<<dim3((cols + 31) / 32, (rows + 31) / 32, count), dim3(32, 8)>>>(
// OUT: stack<<<dim3((cols + 31) / 32, (rows + 31) / 32, grid.z), dim3(32, 8)>>>(din, dout, rows, cols);
// OUT: complex_t<<<dim3((cols + 31) / 32, (rows + 31) / 32), dim3(32, 8)>>>(

// The edits, applied one after another by the RUN lines above and by
// scripts/gpu-edit-family.sh on the GPU:
// EDIT: {"kind":"transpose-through-shared","target":"naive","params":{"tile":32,"block_rows":8,"padding":1}}
// EDIT: {"kind":"transpose-through-shared","target":"early","params":{"tile":16,"block_rows":4,"padding":1}}
// EDIT: {"kind":"transpose-through-shared","target":"rowptr","params":{"tile":64,"block_rows":16,"padding":1}}
// EDIT: {"kind":"transpose-through-shared","target":"helper","params":{"tile":32,"block_rows":8,"padding":1}}
// EDIT: {"kind":"transpose-through-shared","target":"generic","params":{"tile":32,"block_rows":8,"padding":1}}
// EDIT: {"kind":"transpose-through-shared","target":"blocked","params":{"tile":32,"block_rows":32,"padding":1}}
// EDIT: {"kind":"transpose-through-shared","target":"linalg::transpose","params":{"tile":32,"block_rows":8,"padding":1}}
// EDIT: {"kind":"transpose-through-shared","target":"fixed","params":{"tile":32,"block_rows":4,"padding":1}}
// EDIT: {"kind":"transpose-through-shared","target":"xrows","params":{"tile":32,"block_rows":8,"padding":1}}
// EDIT: {"kind":"transpose-through-shared","target":"scaled","params":{"tile":16,"block_rows":16,"padding":1}}
// EDIT: {"kind":"transpose-through-shared","target":"batched","params":{"tile":32,"block_rows":8,"padding":1}}
// EDIT: {"kind":"transpose-through-shared","target":"stack","params":{"tile":32,"block_rows":8,"padding":1}}
// EDIT: {"kind":"transpose-through-shared","target":"complex_t","params":{"tile":32,"block_rows":8,"padding":1}}
