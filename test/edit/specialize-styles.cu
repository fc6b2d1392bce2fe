// specialize on kernels whose sizes are runtime parameters but whose
// launches pass constants, written in eight styles: a row sum with the
// row length as a loop bound; a batched small matrix product with a
// shared tile, runtime strides and leading dimensions (the constant of the
// tile's size moves up with the tile); a bias add whose column index is a
// size_t modulo; a template over the element type in a namespace; a while
// loop over an unsigned count, launched through a macro; a transposed
// copy through shared memory with an early return (the grid's sizes are
// divisors); a histogram-like count with atomics and an int64 length; a
// one-parameter edit (params.param) on a kernel with two constants. Each
// edit applied one after another compiles with nvcc without a warning,
// and the program, which checks every kernel against the CPU, passes
// before and after on the host, thread by thread (host-run.py). Three
// look-alikes are refused with their reasons: launches passing two
// values, a size read from the host at run time, a parameter the kernel
// counts down. The input file is left as it was.
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
// HOST: PASS rowsum
// HOST: PASS bgemm
// HOST: PASS bias
// HOST: PASS scale
// HOST: PASS countdown
// HOST: PASS transpose
// HOST: PASS bins
// HOST: PASS axpby
// HOST: PASS twovalues
// HOST: PASS runtime
// HOST: PASS written
// HOST-NEXT: PASS

// WHY: specialize rowsum: every launch passes the same constant: 'rows' is 37, 'cols' is 48 ('cols' bounds a loop)
// WHY: specialize bgemm: every launch passes the same constant: 'n' is 16, 'lda' is 16, 'stride' is 256 ('n' bounds a loop)
// WHY: specialize bias: every launch passes the same constant: 'total' is 1200, 'cols' is 40 ('total' bounds a loop, 'cols' is a divisor)
// WHY: specialize la::scale: every launch passes the same constant: 'len' is 300 ('len' bounds a loop)
// WHY: specialize countdown: every launch passes the same constant: 'count' is 20 ('count' bounds a loop)
// WHY: specialize transpose: every launch passes the same constant: 'h' is 40, 'w' is 24 ('w' is a divisor)
// WHY: specialize bins: every launch passes the same constant: 'len' is 1000, 'nbins' is 16 ('len' bounds a loop, 'nbins' is a divisor)
// WHY: specialize axpby: every launch passes the same constant: 'n' is 100, 'reps' is 3 ('reps' bounds a loop)
// WHY: not specialize twovalues: kernel 'twovalues': 'n' is 64 at twovalues/launch0 but 32 at twovalues/launch1
// WHY: not specialize runtime: kernel 'runtime': 'n' gets 'n' at runtime/launch0, not a constant
// WHY: not specialize written: kernel 'written': 'left' is written or its address taken in the kernel

// OUT: if (rows == 37 && cols == 48) {
// OUT-NEXT: constexpr int rows = 37;
// OUT-NEXT: constexpr int cols = 48;
// OUT: __shared__ float As[TILE][TILE + 1];
// OUT-NEXT: __shared__ float Bs[TILE][TILE + 1];
// OUT-NEXT: if (n == 16 && lda == 16 && stride == 256) {
// OUT: constexpr long long stride = 256;
// OUT: constexpr size_t total = 1200;
// OUT: constexpr unsigned int count = 20;
// OUT: __shared__ float tile[8][9];
// OUT-NEXT: if (h == 40 && w == 24) {
// OUT: constexpr long long len = 1000;
// OUT: if (reps == 3) {
// OUT-NEXT: constexpr int reps = 3;
// OUT-NEXT: int i = blockIdx.x * blockDim.x + threadIdx.x;

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

#define LAUNCH(k, g, b, ...) k<<<g, b>>>(__VA_ARGS__)

// 1. One thread per row, the row length a runtime bound.
__global__ void rowsum(int rows, int cols, const float *in, float *out) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.f;
    for (int c = 0; c < cols; ++c)
      s += in[r * cols + c];
    out[r] = s;
  }
}

// 2. Batched small products through a shared tile; sizes and strides are
// arguments, the tile a local constant the shared arrays' types name.
__global__ void bgemm(int n, int lda, long long stride, const float *A,
                      const float *B, float *C) {
  const int TILE = 16;
  __shared__ float As[TILE][TILE + 1];
  __shared__ float Bs[TILE][TILE + 1];
  const float *a = A + blockIdx.x * stride, *b = B + blockIdx.x * stride;
  int i = threadIdx.y, j = threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < n; k0 += TILE) {
    As[i][j] = (k0 + j < n) ? a[i * lda + k0 + j] : 0.f;
    Bs[i][j] = (k0 + i < n) ? b[(k0 + i) * lda + j] : 0.f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k)
      acc += As[i][k] * Bs[k][j];
    __syncthreads();
  }
  if (i < n && j < n)
    C[blockIdx.x * stride + i * lda + j] = acc;
}

// 3. A bias add over a flat index: the column is a size_t modulo.
__global__ void bias(size_t total, int cols, const float *x, const float *b,
                     float *y) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
       i += (size_t)gridDim.x * blockDim.x)
    y[i] = x[i] + b[i % cols];
}

// 4. A template over the element type, in a namespace.
namespace la {
template <typename T> __global__ void scale(T alpha, T *v, int len) {
  for (int i = threadIdx.x; i < len; i += blockDim.x)
    v[i] *= alpha;
}
} // namespace la

// 5. A while loop over an unsigned count, launched through a macro.
__global__ void countdown(unsigned count, const int *in, int *out) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned k = 0;
  int s = 0;
  while (k < count) {
    s += in[k] * (int)(t + k);
    ++k;
  }
  out[t] = s;
}

// 6. A transpose through a shared tile, an early return; the sizes are
// divisors of the flat index.
__global__ void transpose(const float *in, float *out, int h, int w) {
  __shared__ float tile[8][9];
  int id = blockIdx.x * 64 + threadIdx.y * 8 + threadIdx.x;
  int r = id / w, c = id % w;
  if (r >= h)
    return;
  tile[threadIdx.y][threadIdx.x] = in[r * w + c];
  __syncwarp();
  out[c * h + r] = tile[threadIdx.y][threadIdx.x];
}

// 7. A histogram with atomics, an int64 length, the bin count a divisor.
__global__ void bins(const int *v, long long len, int nbins, int *hist) {
  for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < len;
       i += gridDim.x * blockDim.x)
    atomicAdd(&hist[v[i] % nbins], 1);
}

// 8. Two constants; the edit names one (params.param).
__global__ void axpby(int n, int reps, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    for (int r = 0; r < reps; ++r)
      y[i] = a * x[i] + y[i];
}

// Look-alikes. Two values at two launches.
__global__ void twovalues(int n, float *v) {
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    v[i] += 1.f;
}
// A size the host reads at run time.
__global__ void runtime(int n, float *v) {
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    v[i] *= 2.f;
}
// A parameter the kernel counts down.
__global__ void written(int left, float *v) {
  while (left > 0)
    v[--left] = 1.f;
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
template <typename T>
void expect(const char *name, const std::vector<T> &got,
            const std::vector<T> &want) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs((double)got[i] - (double)want[i]));
  bool ok = got.size() == want.size() && worst < 1e-4;
  printf("%s %s (worst error %.2e)\n", ok ? "PASS" : "FAIL", name, worst);
  failures += !ok;
}
template <typename T> std::vector<T> values(size_t n, unsigned seed) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (T)((int)((i * 2654435761u + seed * 40503u) >> 9) % 19 - 9) / 8;
  return v;
}

int main(int argc, char **argv) {
  {
    const int rows = 37, cols = 48;
    auto in = values<float>(rows * cols, 1);
    std::vector<float> want(rows, 0.f);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        want[r] += in[r * cols + c];
    float *din = upload(in), *dout = upload(std::vector<float>(rows, 0.f));
    rowsum<<<(rows + 31) / 32, 32>>>(rows, cols, din, dout);
    expect("rowsum", download(dout, rows), want);
  }
  {
    const int n = 16, batch = 3;
    const long long stride = n * n;
    auto A = values<float>(batch * stride, 2), B = values<float>(batch * stride, 3);
    std::vector<float> want(batch * stride, 0.f);
    for (int m = 0; m < batch; ++m)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          for (int k = 0; k < n; ++k)
            want[m * stride + i * n + j] += A[m * stride + i * n + k] * B[m * stride + k * n + j];
    float *dA = upload(A), *dB = upload(B), *dC = upload(std::vector<float>(want.size(), 0.f));
    bgemm<<<batch, dim3(16, 16)>>>(n, n, stride, dA, dB, dC);
    expect("bgemm", download(dC, want.size()), want);
  }
  {
    const size_t total = 1200;
    const int cols = 40;
    auto x = values<float>(total, 4), b = values<float>(cols, 5);
    std::vector<float> want(total);
    for (size_t i = 0; i < total; ++i)
      want[i] = x[i] + b[i % cols];
    float *dx = upload(x), *db = upload(b), *dy = upload(std::vector<float>(total, 0.f));
    bias<<<4, 64>>>(total, cols, dx, db, dy);
    expect("bias", download(dy, total), want);
  }
  {
    const int len = 300;
    auto v = values<double>(len, 6);
    std::vector<double> want(v);
    for (double &e : want)
      e *= 1.5;
    double *dv = upload(v);
    la::scale<double><<<1, 64>>>(1.5, dv, len);
    expect("scale", download(dv, len), want);
  }
  {
    const unsigned count = 20, threads = 64;
    std::vector<int> in(count);
    for (unsigned k = 0; k < count; ++k)
      in[k] = (int)k % 7 - 3;
    std::vector<int> want(threads, 0);
    for (unsigned t = 0; t < threads; ++t)
      for (unsigned k = 0; k < count; ++k)
        want[t] += in[k] * (int)(t + k);
    int *din = upload(in), *dout = upload(std::vector<int>(threads, 0));
    LAUNCH(countdown, 2, 32, count, din, dout);
    expect("countdown", download(dout, threads), want);
  }
  {
    const int h = 40, w = 24;
    auto in = values<float>(h * w, 7);
    std::vector<float> want(h * w);
    for (int r = 0; r < h; ++r)
      for (int c = 0; c < w; ++c)
        want[c * h + r] = in[r * w + c];
    float *din = upload(in), *dout = upload(std::vector<float>(h * w, 0.f));
    transpose<<<(h * w + 63) / 64, dim3(8, 8)>>>(din, dout, h, w);
    expect("transpose", download(dout, h * w), want);
  }
  {
    const long long len = 1000;
    const int nbins = 16;
    std::vector<int> v(len);
    for (long long i = 0; i < len; ++i)
      v[i] = (int)((i * 2654435761u) >> 7) & 1023;
    std::vector<int> want(nbins, 0);
    for (int e : v)
      ++want[e % nbins];
    int *dv = upload(v), *dh = upload(std::vector<int>(nbins, 0));
    bins<<<3, 128>>>(dv, len, nbins, dh);
    expect("bins", download(dh, nbins), want);
  }
  {
    const int n = 100;
    auto x = values<float>(n, 8), y = values<float>(n, 9);
    std::vector<float> want(y);
    for (int r = 0; r < 3; ++r)
      for (int i = 0; i < n; ++i)
        want[i] = 0.5f * x[i] + want[i];
    float *dx = upload(x), *dy = upload(y);
    axpby<<<(n + 63) / 64, 64>>>(n, 3, 0.5f, dx, dy);
    expect("axpby", download(dy, n), want);
  }
  {
    float *dv = upload(std::vector<float>(64, 0.f));
    twovalues<<<1, 32>>>(64, dv);
    twovalues<<<1, 32>>>(32, dv);
    std::vector<float> want(64, 1.f);
    for (int i = 0; i < 32; ++i)
      want[i] = 2.f;
    expect("twovalues", download(dv, 64), want);
  }
  {
    int n = 16 + argc; // known at run time only
    float *dv = upload(std::vector<float>(n, 1.f));
    runtime<<<1, 32>>>(n, dv);
    expect("runtime", download(dv, n), std::vector<float>(n, 2.f));
  }
  {
    float *dv = upload(std::vector<float>(8, 0.f));
    written<<<1, 1>>>(8, dv);
    expect("written", download(dv, 8), std::vector<float>(8, 1.f));
  }
  (void)argv;
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// EDIT: {"kind":"specialize","target":"rowsum"}
// EDIT: {"kind":"specialize","target":"bgemm"}
// EDIT: {"kind":"specialize","target":"bias"}
// EDIT: {"kind":"specialize","target":"la::scale"}
// EDIT: {"kind":"specialize","target":"countdown"}
// EDIT: {"kind":"specialize","target":"transpose"}
// EDIT: {"kind":"specialize","target":"bins"}
// EDIT: {"kind":"specialize","target":"axpby","params":{"param":"reps"}}
