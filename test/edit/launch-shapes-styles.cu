// The restructuring transforms at the launch shapes that break rewrites
// written for the textbook launch: (a) a grid that stops short of the
// guard's bound (rounded down, a fixed count, sized from another variable),
// (b) 2D and 3D blocks or grids around a kernel that reads only x, (c)
// blocks that are not whole warps or not the loop's size (48, 100, 128 for a
// 256-element scan), (d) one kernel launched with different blocks, or a
// block variable changed between launches, (e) a kernel launched directly
// and through a function pointer. The kernels with an EDIT line below take
// it: the edit is sound at every launch the program makes, and the program
// checks each launch against the CPU (elements a short grid leaves alone
// must keep their -7). The kernels without one are refused, each reason
// checked (NOT). The edits applied one after another compile with nvcc and
// the input is left as it was; the GPU check (scripts/gpu-styles.sh) runs
// the result launch by launch.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms -v %t/k.cu > %t/why.txt
// RUN: FileCheck --check-prefix=WHY %s < %t/why.txt
// RUN: FileCheck --check-prefix=NOT %s < %t/why.txt
// RUN: sed -n 's|^// EDIT: ||p' %s > %t/edits.jsonl
// RUN: while read -r e; do \
// RUN:   echo "$e" > %t/e.json && \
// RUN:   clang-optiml apply %t/all.cu --edit %t/e.json -o %t/next.cu && mv %t/next.cu %t/all.cu || exit 1; \
// RUN: done < %t/edits.jsonl
// RUN: grep -v '^//' %t/all.cu | FileCheck --check-prefix=OUT %s
// RUN: %if nvcc %{ %nvcc -c -std=c++17 -arch=sm_90 -o %t/all.o %t/all.cu %}
// RUN: python3 %inputs/edit/host-run.py %t/k.cu | FileCheck --check-prefix=HOST %s
// RUN: python3 %inputs/edit/host-run.py %t/all.cu | FileCheck --check-prefix=HOST %s
// RUN: cmp %s %t/k.cu
// Its kernels run on the host (host-run.py: a block's threads as fibers
// where they wait for each other), before the edits and after: every
// check passes.
// HOST-NOT: FAIL
// HOST: {{^PASS$}}

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

#define SCAN 256

//===--- Accepted: sound at every launch ----------------------------------===//

// (b) A map launched with blocks of 32x4: four threads per element, all
// writing the same value; the grid-stride loop keeps that.
// WHY-DAG: grid-stride gs_rows: one element per thread ('i' guarded by 'i < n')
__global__ void gs_rows(const int *x, int *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 2 * x[i] + 1;
}
// OUT: for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
// OUT-NEXT: i += blockDim.x * gridDim.x)

// (b) A map launched with 3D blocks of 32x2x2.
// WHY-DAG: vectorize vec_cube: map kernel: every global access is at the thread's own element
__global__ void vec_cube(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 3.f * x[i] - 1.f;
}

// (c), (d) Blocks of 100 and of 48 threads.
// WHY-DAG: coarsen co_odd: one element per thread ('i < n'); 2 launch grid(s) can be divided
__global__ void co_odd(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * in[i];
}
// OUT: int i = (blockIdx.x * 4 + k{{[0-9]*}}) * blockDim.x + threadIdx.x;

// (b) launch-config widens x and keeps the block's y of 4.
// WHY-DAG: launch-config lc_rows/launch0: the kernel's work depends on its guarded global indices only
__global__ void lc_rows(const int *x, int *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i] - 5;
}

// (b), (d) __launch_bounds__ takes the largest block of all launches
// (8x8x8 = 512 threads).
// WHY-DAG: launch-bounds lb_cube: no __launch_bounds__ yet; every launch uses at most 512 threads per block
__global__ void lb_cube(const int *x, int *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i] ^ 0x55;
}
// OUT: __global__ void __launch_bounds__(512) lb_cube(const int *x, int *y, int n) {

// (c), (d) A histogram launched with blocks of 100 and of 48: the private
// copies are cleared and merged in strides of blockDim.x.
// WHY-DAG: privatize-atomics hist_odd: 1 atomicAdd into 'h' (64 unsigned int elements
__global__ void hist_odd(const unsigned char *d, unsigned int *h, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&h[d[i] % 64], 1u);
}
// OUT: for (int [[B:bin[0-9]*]] = threadIdx.x; [[B]] < 64; [[B]] += blockDim.x)

// (b) A bin that depends on the thread through a helper, in blocks of 96:
// the private copies keep the launches, each thread still adds its own
// item; the maps refuse the helper (a thread would run other threads'
// items, a changed block would move them).
// WHY-DAG: privatize-atomics hist_lane: 1 atomicAdd into 'h' (64 unsigned int elements, bounded by the index); rewrite: a private copy per block in shared memory, merged once per block (the kernel is not one element per thread: launches keep their grid)
// NOT-DAG: not launch-config hist_lane/launch0: kernel 'hist_lane': the body calls 'lane_key', whose result depends on the thread that runs it
// NOT-DAG: not grid-stride hist_lane: kernel 'hist_lane': the body calls 'lane_key', whose result depends on the thread that runs it
// NOT-DAG: not coarsen hist_lane: kernel 'hist_lane': the body calls 'lane_key', whose result depends on the thread that runs it
__device__ int lane_key(unsigned char v) { return (v + threadIdx.x) % 64; }
__global__ void hist_lane(const unsigned char *d, unsigned int *h, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&h[lane_key(d[i])], 1u);
}
// OUT: if (i < n)
// OUT-NEXT: atomicAdd(&h_private{{[0-9]*}}[lane_key(d[i])], 1u);

// (a) A sum over n / 256 blocks: the grid is kept, each warp adds once.
// WHY-DAG: warp-reduce sum_short: 1 atomicAdd(s) per thread into 'out', the same address for every thread
__global__ void sum_short(const int *x, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, x[i]);
}

// (c) A scan whose loop runs to 256 launched with blocks of 128: the extra
// step adds nothing, and the rewrite scans the 128 threads it has.
// WHY-DAG: block-scan scan_half: prefix sum of 's' over 'off' (8 barrier steps at blocks of 128)
__global__ void scan_half(const int *in, int *out, int n) {
  __shared__ int s[SCAN];
  int tid = threadIdx.x;
  int i = blockIdx.x * SCAN + tid;
  s[tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < SCAN; off *= 2) {
    int t = tid >= off ? s[tid - off] : 0;
    __syncthreads();
    s[tid] += t;
    __syncthreads();
  }
  if (i < n)
    out[i] = s[tid];
}

// (d) A scan over blockDim.x launched with blocks of 256 and of 512.
// WHY-DAG: block-scan scan_dim: prefix sum of 'sd' over 'off' (9 barrier steps at blocks of 512)
__global__ void scan_dim(const int *in, int *out, int n) {
  extern __shared__ int sd[];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  sd[tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < blockDim.x; off *= 2) {
    int t = tid >= off ? sd[tid - off] : 0;
    __syncthreads();
    sd[tid] += t;
    __syncthreads();
  }
  if (i < n)
    out[i] = sd[tid];
}

// (a) A scan over n / 256 blocks: the grid is kept.
// WHY-DAG: block-scan scan_short: prefix sum of 's' over 'off' (8 barrier steps at blocks of 256)
__global__ void scan_short(const int *in, int *out, int n) {
  __shared__ int s[SCAN];
  int tid = threadIdx.x;
  int i = blockIdx.x * SCAN + tid;
  s[tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < SCAN; off *= 2) {
    int t = tid >= off ? s[tid - off] : 0;
    __syncthreads();
    s[tid] += t;
    __syncthreads();
  }
  if (i < n)
    out[i] = s[tid];
}

// (a), (c), (d) All pairs launched with blocks of 100 and with n / 64
// blocks of 64: the tiles are copied in strides of blockDim.x and cover
// every j whatever the grid; the grid is kept.
// WHY-DAG: all-pairs-tiling pairs/loop0: every thread of a block walks j over [0, n) reading 'x[j]'
__global__ void pairs(const int *x, int *f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  int xi = x[i], a = 0;
  for (int j = 0; j < n; ++j) {
    int d = x[j] - xi;
    a += d * d;
  }
  f[i] = a;
}

// (b) Row sums launched with blocks of 32x4 (four threads per row, the same
// sum): the new launch runs one warp per row in 1D blocks.
// WHY-DAG: warp-per-row row_sums: one thread per item 'r' (bound 'rows')
__global__ void row_sums(const int *m, int *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    int s = 0;
    for (int j = 0; j < cols; ++j)
      s += m[(size_t)r * cols + j];
    out[r] = s;
  }
}

// (b), (d) A transpose launched with 3D blocks of 16x16x2 (two threads per
// element) and with blocks of 32x8: both launches get the tiled grid.
// WHY-DAG: transpose-through-shared tp_cube: 2D copy 'out[c * rows + r] = in[r * cols + c]'
__global__ void tp_cube(const int *in, int *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[r * cols + c];
}

// (a) A product over a grid of n / 16 x n / 16 blocks: the micro-tiled
// kernel keeps the grid and stores only what those blocks covered.
// WHY-DAG: shared-tiling mm_short: matmul-like: 'mm_short' accumulates 'A[row * n + k] * B[k * n + col]' over 'k' and its launches use 16x16 blocks
__global__ void mm_short(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float s = 0.f;
    for (int k = 0; k < n; ++k)
      s += A[row * n + k] * B[k * n + col];
    C[row * n + col] = s;
  }
}
// OUT: if (r < n && c < n && r < gridDim.y * 16 && c < gridDim.x * 16) {

// (a) A 2D stencil over a grid of w / 32 x h / 8 blocks: the tiled kernel
// keeps the grid.
// WHY-DAG: shared-tiling st_short: 2D stencil: 4 reads of 'in' at rows y - 1..y + 1, columns x - 1..x + 1
__global__ void st_short(int w, int h, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < w - 1 && y > 0 && y < h - 1)
    out[y * w + x] = 0.25f * (in[y * w + x - 1] + in[y * w + x + 1] +
                              in[(y - 1) * w + x] + in[(y + 1) * w + x]);
}

// (b), (c) A map launched with a 2D grid (two blocks per element) and with
// blocks of 100: x is divided by the width, y kept.
// WHY-DAG: vectorize-stencil vst_grid2: 1 reads in 1 input row(s), one store
__global__ void vst_grid2(int n, const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] + 1.f;
}

//===--- Refused, with the reasons ----------------------------------------===//

// (a) A grid rounded down: the rewrites that cover the whole bound (a
// divided grid, a grid-stride loop, vector loops) would compute the tail
// the original leaves alone.
// NOT-DAG: not coarsen co_floor: launch co_floor/launch0 is not shown to run a thread for every element below the guard's bound 'n': its grid ('n / 256') is not ceil(n / block) {{.*}}; the divided grid runs up to K - 1 blocks' worth of threads past the original one, so an original grid that stops short would have elements computed that it left alone
// NOT-DAG: not grid-stride co_floor: kernel 'co_floor': launch co_floor/launch0 is not shown to run a thread for every element below the guard's bound 'n'
// NOT-DAG: not vectorize co_floor: kernel 'co_floor': launch co_floor/launch0 is not shown to run a thread for every element below the guard's bound 'n'
// NOT-DAG: not vectorize-stencil co_floor: the grid of co_floor/launch0 ('n / 256') is not ceil(n / 256) along x
// NOT-DAG: not launch-config co_floor/launch0: the grid's x dimension ('n / 256') is not (E + 255) / 256 over the block
__global__ void co_floor(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] + 7;
}

// (a) A fixed grid of 8 blocks of 128 over 4096 elements.
// NOT-DAG: not coarsen co_fixed: launch co_fixed/launch0 is not shown to run a thread for every element below the guard's bound 'n': its grid runs 8 x 128 threads along x, fewer than 4096
__global__ void co_fixed(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] - 7;
}

// (a) A grid sized from another variable than the guard's bound.
// NOT-DAG: not coarsen co_other: launch co_other/launch0 is not shown to run a thread for every element below the guard's bound 'n': its grid is sized from 'm' but the kernel's bound 'n' is 'n' there
__global__ void co_other(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 3 * in[i];
}

// (a) A transpose over a grid rounded down in both dimensions.
// NOT-DAG: not transpose-through-shared tp_floor: launch tp_floor/launch0 is not shown to run a thread for every x below the guard's bound 'cols'
__global__ void tp_floor(const int *in, int *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[r * cols + c];
}

// (a) Row sums over n / 64 blocks.
// NOT-DAG: not warp-per-row rows_floor: launch rows_floor/launch0 is not shown to run a thread for every item below the guard's bound 'rows'
__global__ void rows_floor(const int *m, int *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    int s = 0;
    for (int j = 0; j < cols; ++j)
      s += m[(size_t)r * cols + j];
    out[r] = s;
  }
}

// (b) A histogram launched with blocks of 32x4: each item is counted four
// times, once per row of threads; the private copies are indexed in x
// alone.
// NOT-DAG: not privatize-atomics hist_rows: hist_rows/launch0 launches blocks of 'dim3(32, 4)', not provably one-dimensional
__global__ void hist_rows(const unsigned char *d, unsigned int *h, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&h[d[i] % 64], 1u);
}

// (b) A sum launched with blocks of 32x4.
// NOT-DAG: not warp-reduce sum_rows: kernel 'sum_rows': the block of sum_rows/launch0 ('dim3(32, 4)') is not a one-dimensional constant
__global__ void sum_rows(const int *x, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, x[i]);
}

// (c) A scan over blocks of 48 threads: not whole warps.
// NOT-DAG: not block-scan scan48: a launch uses blocks of 48 threads; the shuffles need a multiple of 32
__global__ void scan48(const int *in, int *out, int n) {
  __shared__ int s[48];
  int tid = threadIdx.x;
  int i = blockIdx.x * 48 + tid;
  s[tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < 48; off *= 2) {
    int t = tid >= off ? s[tid - off] : 0;
    __syncthreads();
    s[tid] += t;
    __syncthreads();
  }
  if (i < n)
    out[i] = s[tid];
}

// (c) A loop that stops at 64 in blocks of 256: each element sums its last
// 64, not a prefix.
// NOT-DAG: not block-scan scan_window: a launch uses blocks of 256 threads, but the loop scans only the first 64
__global__ void scan_window(const int *in, int *out, int n) {
  __shared__ int s[SCAN];
  int tid = threadIdx.x;
  int i = blockIdx.x * SCAN + tid;
  s[tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < 64; off *= 2) {
    int t = tid >= off ? s[tid - off] : 0;
    __syncthreads();
    s[tid] += t;
    __syncthreads();
  }
  if (i < n)
    out[i] = s[tid];
}

// (c) A tree reduction over blocks of 48 threads.
// NOT-DAG: not warp-reduce tree48: kernel 'tree48': launch tree48/launch0 uses blocks of 48 threads
__global__ void tree48(const int *in, int *partial, int n) {
  extern __shared__ int st[];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  st[tid] = (i < n) ? in[i] : 0;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      st[tid] += st[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    partial[blockIdx.x] = st[0];
}

// (d) A block variable changed between two launches.
// NOT-DAG: not launch-config var_block/launch0: the block variable 'bs' is assigned after its declaration in 'refusedShapes'
// NOT-DAG: not launch-bounds var_block: the block size 'bs' at var_block/launch0 is not a constant
// NOT-DAG: not coarsen var_block: launch var_block/launch0 is not shown to run a thread for every element below the guard's bound 'n'
__global__ void var_block(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] + 100;
}

// (e) Launched directly and through a function pointer.
// NOT-DAG: not launch-config via_ptr: the kernel's address is taken at line {{[0-9]+}} (a function pointer)
// NOT-DAG: not grid-stride via_ptr: the kernel's address is taken at line {{[0-9]+}} (a function pointer)
// NOT-DAG: not coarsen via_ptr: the kernel's address is taken at line {{[0-9]+}} (a function pointer)
__global__ void via_ptr(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * 5;
}

//===--- The program ------------------------------------------------------===//

template <typename T> T *upload(const std::vector<T> &h) {
  T *d = nullptr;
  CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <typename T> std::vector<T> download(const T *d, size_t n) {
  std::vector<T> h(n);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}
// Output buffers start as -7 so an element a launch leaves alone shows.
template <typename T> T *fresh(size_t n) {
  return upload(std::vector<T>(n, T(-7)));
}
static int failures = 0;
template <typename T>
void expect(const char *name, const std::vector<T> &got,
            const std::vector<T> &want) {
  size_t bad = got.size() != want.size();
  for (size_t i = 0; i < got.size() && i < want.size(); ++i)
    bad += got[i] != want[i];
  printf("%s %s (%zu of %zu wrong)\n", bad ? "FAIL" : "PASS", name, bad,
         want.size());
  failures += bad != 0;
}
std::vector<int> ints(size_t n, unsigned seed, int range = 19) {
  std::vector<int> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (int)((i * 2654435761u + seed * 40503u) >> 7) % range - range / 2;
  return v;
}
std::vector<float> floats(size_t n, unsigned seed) {
  std::vector<float> v(n);
  std::vector<int> k = ints(n, seed, 9);
  for (size_t i = 0; i < n; ++i)
    v[i] = (float)k[i];
  return v;
}
// out[i] = f(in[i]) for i below Covered (the threads a grid runs), else -7.
template <typename T, typename F>
std::vector<T> mapped(const std::vector<T> &in, size_t Covered, F f) {
  std::vector<T> out(in.size(), T(-7));
  for (size_t i = 0; i < in.size() && i < Covered; ++i)
    out[i] = f(in[i]);
  return out;
}
// Each block of Block threads (scanning at most Width elements back from
// each thread, Width = Block for a prefix sum) over blocks that start every
// Stride elements; Blocks blocks run.
std::vector<int> scanned(const std::vector<int> &in, int Stride, int Block,
                         int Blocks, int Width) {
  std::vector<int> out(in.size(), -7);
  for (int b = 0; b < Blocks; ++b)
    for (int t = 0; t < Block && (size_t)b * Stride + t < in.size(); ++t) {
      int s = 0;
      for (int k = t; k >= 0 && k > t - Width; --k)
        s += in[(size_t)b * Stride + k];
      out[(size_t)b * Stride + t] = s;
    }
  return out;
}
std::vector<unsigned> histogram(const std::vector<unsigned char> &d,
                                unsigned times) {
  std::vector<unsigned> h(64, 0);
  for (unsigned char c : d)
    h[c % 64] += times;
  return h;
}
std::vector<int> transposed(const std::vector<int> &in, int rows, int cols,
                            int rowsRun, int colsRun) {
  std::vector<int> out(in.size(), -7);
  for (int r = 0; r < rows && r < rowsRun; ++r)
    for (int c = 0; c < cols && c < colsRun; ++c)
      out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
  return out;
}
std::vector<int> sumsOfRows(const std::vector<int> &m, int rows, int cols,
                            int rowsRun) {
  std::vector<int> out(rows, -7);
  for (int r = 0; r < rows && r < rowsRun; ++r) {
    int s = 0;
    for (int j = 0; j < cols; ++j)
      s += m[(size_t)r * cols + j];
    out[r] = s;
  }
  return out;
}

// Sizes are parameters, so no grid is folded to a number: each is read as
// written.
void acceptedShapes(int n) {
  auto xi = ints(n, 1);
  int *dx = upload(xi);
  {
    int *dy = fresh<int>(n);
    gs_rows<<<(n + 31) / 32, dim3(32, 4)>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    expect("gs_rows (32x4)", download(dy, n),
           mapped(xi, n, [](int v) { return 2 * v + 1; }));
  }
  {
    auto xf = floats(n, 2);
    float *dxf = upload(xf), *dyf = fresh<float>(n);
    vec_cube<<<(n + 31) / 32, dim3(32, 2, 2)>>>(dxf, dyf, n);
    CHECK(cudaGetLastError());
    expect("vec_cube (32x2x2)", download(dyf, n),
           mapped(xf, n, [](float v) { return 3.f * v - 1.f; }));
  }
  {
    int *dy = fresh<int>(n);
    co_odd<<<(n + 99) / 100, 100>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    auto want = mapped(xi, n, [](int v) { return v * v; });
    expect("co_odd (100)", download(dy, n), want);
    int *dz = fresh<int>(n);
    co_odd<<<(n + 47) / 48, 48>>>(dx, dz, n);
    CHECK(cudaGetLastError());
    expect("co_odd (48)", download(dz, n), want);
  }
  {
    int *dy = fresh<int>(n);
    lc_rows<<<(n + 31) / 32, dim3(32, 4)>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    expect("lc_rows (32x4)", download(dy, n),
           mapped(xi, n, [](int v) { return v - 5; }));
  }
  {
    int *dy = fresh<int>(n), *dz = fresh<int>(n);
    lb_cube<<<(n + 7) / 8, dim3(8, 8, 8)>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    lb_cube<<<(n + 127) / 128, 128>>>(dx, dz, n);
    CHECK(cudaGetLastError());
    auto want = mapped(xi, n, [](int v) { return v ^ 0x55; });
    expect("lb_cube (8x8x8)", download(dy, n), want);
    expect("lb_cube (128)", download(dz, n), want);
  }
  {
    const int m = 5000;
    std::vector<unsigned char> d(m);
    for (int i = 0; i < m; ++i)
      d[i] = (unsigned char)((i * 37u + 11u) % 251u);
    unsigned char *dd = upload(d);
    unsigned *h1 = upload(std::vector<unsigned>(64, 0));
    unsigned *h2 = upload(std::vector<unsigned>(64, 0));
    hist_odd<<<(m + 99) / 100, 100>>>(dd, h1, m);
    CHECK(cudaGetLastError());
    hist_odd<<<(m + 47) / 48, 48>>>(dd, h2, m);
    CHECK(cudaGetLastError());
    expect("hist_odd (100)", download(h1, 64), histogram(d, 1));
    expect("hist_odd (48)", download(h2, 64), histogram(d, 1));
  }
  {
    const int m = 5000;
    std::vector<unsigned char> d(m);
    for (int i = 0; i < m; ++i)
      d[i] = (unsigned char)((i * 29u + 5u) % 253u);
    unsigned char *dd = upload(d);
    unsigned *h = upload(std::vector<unsigned>(64, 0));
    hist_lane<<<(m + 95) / 96, 96>>>(dd, h, m);
    CHECK(cudaGetLastError());
    std::vector<unsigned> want(64, 0);
    for (int i = 0; i < m; ++i)
      ++want[(d[i] + i % 96) % 64];
    expect("hist_lane (96)", download(h, 64), want);
  }
  {
    int *ds = upload(std::vector<int>(1, 0));
    sum_short<<<n / 256, 256>>>(dx, ds, n);
    CHECK(cudaGetLastError());
    int want = 0;
    for (int i = 0; i < n / 256 * 256; ++i)
      want += xi[i];
    expect("sum_short (n / 256 blocks)", download(ds, 1),
           std::vector<int>{want});
  }
  {
    int *dy = fresh<int>(n);
    scan_half<<<(n + SCAN - 1) / SCAN, 128>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    expect("scan_half (128 of 256)", download(dy, n),
           scanned(xi, SCAN, 128, (n + SCAN - 1) / SCAN, 128));
  }
  {
    int *dy = fresh<int>(n), *dz = fresh<int>(n);
    scan_dim<<<(n + 255) / 256, 256, 256 * sizeof(int)>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    scan_dim<<<(n + 511) / 512, 512, 512 * sizeof(int)>>>(dx, dz, n);
    CHECK(cudaGetLastError());
    expect("scan_dim (256)", download(dy, n),
           scanned(xi, 256, 256, (n + 255) / 256, 256));
    expect("scan_dim (512)", download(dz, n),
           scanned(xi, 512, 512, (n + 511) / 512, 512));
  }
  {
    int *dy = fresh<int>(n);
    scan_short<<<n / SCAN, SCAN>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    expect("scan_short (n / 256 blocks)", download(dy, n),
           scanned(xi, SCAN, SCAN, n / SCAN, SCAN));
  }
  {
    const int p = 700;
    auto x = ints(p, 3);
    int *dp = upload(x), *f1 = fresh<int>(p), *f2 = fresh<int>(p);
    pairs<<<(p + 99) / 100, 100>>>(dp, f1, p);
    CHECK(cudaGetLastError());
    pairs<<<p / 64, 64>>>(dp, f2, p);
    CHECK(cudaGetLastError());
    std::vector<int> want(p), part(p, -7);
    for (int i = 0; i < p; ++i) {
      int a = 0;
      for (int j = 0; j < p; ++j)
        a += (x[j] - x[i]) * (x[j] - x[i]);
      want[i] = a;
      if (i < p / 64 * 64)
        part[i] = a;
    }
    expect("pairs (100)", download(f1, p), want);
    expect("pairs (n / 64 blocks)", download(f2, p), part);
  }
  {
    const int rows = 300, cols = 45;
    auto m = ints((size_t)rows * cols, 4);
    int *dm = upload(m), *dout = fresh<int>(rows);
    row_sums<<<(rows + 31) / 32, dim3(32, 4)>>>(dm, dout, rows, cols);
    CHECK(cudaGetLastError());
    expect("row_sums (32x4)", download(dout, rows),
           sumsOfRows(m, rows, cols, rows));
  }
  {
    const int rows = 77, cols = 130;
    auto in = ints((size_t)rows * cols, 5);
    int *din = upload(in), *d1 = fresh<int>(in.size()),
        *d2 = fresh<int>(in.size());
    tp_cube<<<dim3((cols + 15) / 16, (rows + 15) / 16), dim3(16, 16, 2)>>>(
        din, d1, rows, cols);
    CHECK(cudaGetLastError());
    tp_cube<<<dim3((cols + 31) / 32, (rows + 7) / 8), dim3(32, 8)>>>(din, d2,
                                                                      rows, cols);
    CHECK(cudaGetLastError());
    auto want = transposed(in, rows, cols, rows, cols);
    expect("tp_cube (16x16x2)", download(d1, in.size()), want);
    expect("tp_cube (32x8)", download(d2, in.size()), want);
  }
  {
    const int k = 100;
    auto a = floats((size_t)k * k, 6), b = floats((size_t)k * k, 7);
    float *da = upload(a), *db = upload(b), *dc = fresh<float>(a.size());
    mm_short<<<dim3(k / 16, k / 16), dim3(16, 16)>>>(da, db, dc, k);
    CHECK(cudaGetLastError());
    std::vector<float> want(a.size(), -7.f);
    for (int r = 0; r < k / 16 * 16; ++r)
      for (int c = 0; c < k / 16 * 16; ++c) {
        float s = 0.f;
        for (int q = 0; q < k; ++q)
          s += a[(size_t)r * k + q] * b[(size_t)q * k + c];
        want[(size_t)r * k + c] = s;
      }
    expect("mm_short (n / 16 blocks)", download(dc, a.size()), want);
  }
  {
    const int w = 200, h = 60;
    auto in = floats((size_t)w * h, 8);
    float *din = upload(in), *dout = fresh<float>(in.size());
    st_short<<<dim3(w / 32, h / 8), dim3(32, 8)>>>(w, h, din, dout);
    CHECK(cudaGetLastError());
    std::vector<float> want(in.size(), -7.f);
    for (int y = 1; y < h - 1 && y < h / 8 * 8; ++y)
      for (int x = 1; x < w - 1 && x < w / 32 * 32; ++x)
        want[(size_t)y * w + x] =
            0.25f * (in[(size_t)y * w + x - 1] + in[(size_t)y * w + x + 1] +
                     in[(size_t)(y - 1) * w + x] + in[(size_t)(y + 1) * w + x]);
    expect("st_short (w / 32 x h / 8 blocks)", download(dout, in.size()), want);
  }
  {
    auto in = floats(n, 9);
    float *din = upload(in), *dout = fresh<float>(n);
    vst_grid2<<<dim3((n + 255) / 256, 2), 256>>>(n, din, dout);
    CHECK(cudaGetLastError());
    auto want = mapped(in, n, [](float v) { return v + 1.f; });
    expect("vst_grid2 (2D grid)", download(dout, n), want);
    CHECK(cudaMemcpy(dout, std::vector<float>(n, -7.f).data(),
                     n * sizeof(float), cudaMemcpyHostToDevice));
    vst_grid2<<<(n + 99) / 100, 100>>>(n, din, dout);
    CHECK(cudaGetLastError());
    expect("vst_grid2 (100)", download(dout, n), want);
  }
}

void refusedShapes(int n, int m) {
  auto xi = ints(n, 11);
  int *dx = upload(xi);
  {
    int *dy = fresh<int>(n);
    co_floor<<<n / 256, 256>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    expect("co_floor (n / 256 blocks)", download(dy, n),
           mapped(xi, n / 256 * 256, [](int v) { return v + 7; }));
  }
  {
    const int big = 4096;
    auto x = ints(big, 12);
    int *db = upload(x), *dy = fresh<int>(big);
    co_fixed<<<8, 128>>>(db, dy, big);
    CHECK(cudaGetLastError());
    expect("co_fixed (8 blocks)", download(dy, big),
           mapped(x, 8 * 128, [](int v) { return v - 7; }));
  }
  {
    int *dy = fresh<int>(n);
    co_other<<<(m + 255) / 256, 256>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    expect("co_other (grid from m)", download(dy, n),
           mapped(xi, (m + 255) / 256 * 256, [](int v) { return 3 * v; }));
  }
  {
    const int rows = 70, cols = 90;
    auto in = ints((size_t)rows * cols, 13);
    int *din = upload(in), *dout = fresh<int>(in.size());
    tp_floor<<<dim3(cols / 16, rows / 16), dim3(16, 16)>>>(din, dout, rows,
                                                           cols);
    CHECK(cudaGetLastError());
    expect("tp_floor (rounded-down grid)", download(dout, in.size()),
           transposed(in, rows, cols, rows / 16 * 16, cols / 16 * 16));
  }
  {
    const int rows = 300, cols = 20;
    auto mat = ints((size_t)rows * cols, 14);
    int *dm = upload(mat), *dout = fresh<int>(rows);
    rows_floor<<<rows / 64, 64>>>(dm, dout, rows, cols);
    CHECK(cudaGetLastError());
    expect("rows_floor (n / 64 blocks)", download(dout, rows),
           sumsOfRows(mat, rows, cols, rows / 64 * 64));
  }
  {
    const int items = 3000;
    std::vector<unsigned char> d(items);
    for (int i = 0; i < items; ++i)
      d[i] = (unsigned char)((i * 53u + 7u) % 256u);
    unsigned char *dd = upload(d);
    unsigned *h = upload(std::vector<unsigned>(64, 0));
    hist_rows<<<(items + 31) / 32, dim3(32, 4)>>>(dd, h, items);
    CHECK(cudaGetLastError());
    expect("hist_rows (32x4: four counts per item)", download(h, 64),
           histogram(d, 4));
  }
  {
    int *ds = upload(std::vector<int>(1, 0));
    sum_rows<<<(n + 31) / 32, dim3(32, 4)>>>(dx, ds, n);
    CHECK(cudaGetLastError());
    int want = 0;
    for (int v : xi)
      want += 4 * v;
    expect("sum_rows (32x4: four adds per item)", download(ds, 1),
           std::vector<int>{want});
  }
  {
    int *dy = fresh<int>(n);
    scan48<<<(n + 47) / 48, 48>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    expect("scan48 (48)", download(dy, n),
           scanned(xi, 48, 48, (n + 47) / 48, 48));
  }
  {
    int *dy = fresh<int>(n);
    scan_window<<<(n + SCAN - 1) / SCAN, SCAN>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    expect("scan_window (64 of 256)", download(dy, n),
           scanned(xi, SCAN, SCAN, (n + SCAN - 1) / SCAN, 64));
  }
  {
    const int blocks = (n + 47) / 48;
    int *dp = fresh<int>(blocks);
    tree48<<<blocks, 48, 48 * sizeof(int)>>>(dx, dp, n);
    CHECK(cudaGetLastError());
    // A tree over 48 threads: strides 24, 12, 6, 3, 1 leave elements 2 and
    // 5's partial sums out of element 0 (48 is not a power of two).
    std::vector<int> want(blocks);
    for (int b = 0; b < blocks; ++b) {
      std::vector<int> s(48);
      for (int t = 0; t < 48; ++t)
        s[t] = b * 48 + t < n ? xi[b * 48 + t] : 0;
      for (int st = 24; st > 0; st >>= 1)
        for (int t = 0; t < st; ++t)
          s[t] += s[t + st];
      want[b] = s[0];
    }
    expect("tree48 (48)", download(dp, blocks), want);
  }
  {
    int *d1 = fresh<int>(n), *d2 = fresh<int>(n);
    int bs = 256;
    var_block<<<(n + 255) / 256, bs>>>(dx, d1, n);
    CHECK(cudaGetLastError());
    bs = 64;
    var_block<<<(n + 255) / 256, bs>>>(dx, d2, n);
    CHECK(cudaGetLastError());
    expect("var_block (256)", download(d1, n),
           mapped(xi, n, [](int v) { return v + 100; }));
    // The second launch's 4 blocks of 64 reach only the first 256.
    expect("var_block (64)", download(d2, n),
           mapped(xi, 256, [](int v) { return v + 100; }));
  }
  {
    int *d1 = fresh<int>(n), *d2 = fresh<int>(n);
    via_ptr<<<(n + 255) / 256, 256>>>(dx, d1, n);
    CHECK(cudaGetLastError());
    void (*kernel)(const int *, int *, int) = via_ptr;
    kernel<<<(n + 127) / 128, 128>>>(dx, d2, n);
    CHECK(cudaGetLastError());
    auto want = mapped(xi, n, [](int v) { return v * 5; });
    expect("via_ptr (direct)", download(d1, n), want);
    expect("via_ptr (through a pointer)", download(d2, n), want);
  }
}

int main() {
  acceptedShapes(1000);
  refusedShapes(1000, 600);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
// The launches: a capped grid of 32x4 blocks, x widened with y kept, the
// privatized histograms capped with their blocks of 100 and 48 kept, one
// warp per row in 1D blocks, both transposes tiled in blocks of 32x8 (the
// 16x16x2 one loses its z), x divided by the width with the grid's y kept.
// OUT: gs_rows<<<(n + 31) / 32 < 64 ? (n + 31) / 32 : 64, dim3(32, 4)>>>(dx, dy, n);
// OUT: lc_rows<<<(n + 127) / 128, dim3(128, 4)>>>(dx, dy, n);
// OUT: hist_odd<<<((m + 99) / 100) < 1056 ? ((m + 99) / 100) : 1056, 100>>>(dd, h1, m);
// OUT: hist_odd<<<((m + 47) / 48) < 1056 ? ((m + 47) / 48) : 1056, 48>>>(dd, h2, m);
// OUT: pairs<<<(p + 99) / 100, 100>>>(dp, f1, p);
// OUT: pairs<<<p / 64, 64>>>(dp, f2, p);
// OUT: row_sums<<<(rows + 7) / 8, 256>>>(dm, dout, rows, cols);
// OUT: tp_cube<<<dim3((cols + 31) / 32, (rows + 31) / 32), dim3(32, 8)>>>(
// OUT: tp_cube<<<dim3((cols + 31) / 32, (rows + 31) / 32), dim3(32, 8)>>>(din, d2,
// OUT: mm_short<<<dim3(k / 16, k / 16), dim3(16, 16)>>>(da, db, dc, k);
// OUT: st_short<<<dim3(w / 32, h / 8), dim3(32, 8)>>>(w, h, din, dout);
// OUT: vst_grid2<<<dim3((n + 1023) / 1024, 2), 256>>>(n, din, dout);
// OUT: vst_grid2<<<(n + 399) / 400, 100>>>(n, din, dout);

// The edits, applied one after another by the RUN lines above and by
// scripts/gpu-styles.sh on the GPU:
// EDIT: {"kind":"grid-stride","target":"gs_rows","params":{"max_blocks":64}}
// EDIT: {"kind":"vectorize","target":"vec_cube","params":{"width":4}}
// EDIT: {"kind":"coarsen","target":"co_odd","params":{"factor":4}}
// EDIT: {"kind":"launch-config","target":"lc_rows/launch0","params":{"block":128}}
// EDIT: {"kind":"launch-bounds","target":"lb_cube","params":{"max_threads":512}}
// EDIT: {"kind":"privatize-atomics","target":"hist_odd","params":{}}
// EDIT: {"kind":"privatize-atomics","target":"hist_lane","params":{}}
// EDIT: {"kind":"warp-reduce","target":"sum_short","params":{}}
// EDIT: {"kind":"block-scan","target":"scan_half","params":{}}
// EDIT: {"kind":"block-scan","target":"scan_dim","params":{}}
// EDIT: {"kind":"block-scan","target":"scan_short","params":{}}
// EDIT: {"kind":"all-pairs-tiling","target":"pairs/loop0","params":{}}
// EDIT: {"kind":"warp-per-row","target":"row_sums","params":{}}
// EDIT: {"kind":"transpose-through-shared","target":"tp_cube","params":{"tile":32,"block_rows":8,"padding":1}}
// EDIT: {"kind":"shared-tiling","target":"mm_short","params":{"micro":8,"tile":16}}
// EDIT: {"kind":"shared-tiling","target":"st_short","params":{}}
// EDIT: {"kind":"vectorize-stencil","target":"vst_grid2","params":{}}
