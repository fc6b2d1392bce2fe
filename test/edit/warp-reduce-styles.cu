// warp-reduce on block reductions written from scratch in fifteen styles:
// the textbook loop `for (s = blockDim.x / 2; s > 0; s >>= 1)` with one
// partial sum per block (run on a tail and on whole blocks); a
// `while (s > 0)` loop under __restrict__ with `if (t != 0) return;` after
// it; the CUDA samples' unrolled tree (template <unsigned BLOCK_SIZE>, two
// loads per thread, the last warp through volatile in a helper); extern
// shared memory through the samples' SharedMemory<T> struct in a template;
// cooperative groups (this_thread_block(), thread_rank(), size(),
// cg::sync); a double dot product whose threads first run a grid-stride
// loop, then one atomicAdd per block; a maximum per row through a row
// pointer with fmaxf and -INFINITY; an int minimum in a namespace, the
// block a constexpr, the index from an inline helper, launched through a
// macro; a float sum over an array of structures on a 2D grid of blocks
// with `s = s / 2` and one atomicAdd per block; and the interleaved trees
// whose stride doubles from 1 (the samples' reduce0 and reduce1): `tid %
// (2 * s) == 0` on a sum, a strided index `2 * s * tid` in a template
// maximum run for float and int, and `(t & (2 * s - 1)) == 0` in a while
// loop up to the constant block with an early return and an atomicAdd;
// and trees that keep each thread's running value in a register beside its
// element, which thread 0 then reads (the samples' reduce3, `sdata[tid] =
// mySum = mySum + sdata[tid + s]`, in a template with two loads a thread;
// a maximum `top[t] = best = fmaxf(best, top[t + k])` in a while loop with
// an early return); and the samples' histogram merge, whose tree loop
// synchronizes before each step rather than after it.
// Every one is rewritten; the fifteen edits applied one after another
// compile with nvcc and the input is left as it was.
// The program checks every kernel against the CPU (sums of eighths are
// exact in any order), so the GPU check (scripts/gpu-edit-family.sh) runs
// `eval` on the result.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms -v %t/k.cu 2>/dev/null | FileCheck --check-prefix=WHY %s
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

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "CUDA error %s at line %d\n", cudaGetErrorString(e_),    \
              __LINE__);                                                       \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

#define LAUNCH(kernel, grid, block, ...)                                       \
  kernel<<<(grid), (block)>>>(__VA_ARGS__)

#define BLOCK 256

// WHY: warp-reduce partial_sums: shared-memory tree reduction (+) of float in 'sdata': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement
// The textbook tree: one partial sum per block.
__global__ void partial_sums(const float *in, float *partial, int n) {
  __shared__ float sdata[BLOCK];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0)
    partial[blockIdx.x] = sdata[0];
}
// OUT-LABEL: void partial_sums(
// OUT: __shared__ float sdata[BLOCK / 32];
// OUT: float v = (i < n) ? in[i] : 0.0f;
// OUT: partial[blockIdx.x] = v;

// WHY: warp-reduce while_count: shared-memory tree reduction (+) of int in 'cache': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement; note: the early return at [[#@LINE+19]]:3 becomes 'if (t == 0) { ... }' around thread 0's statements
// A while loop halving the stride, __restrict__, an early return after.
__global__ void while_count(const int *__restrict__ v, int *__restrict__ out,
                            int n) {
  __shared__ int cache[128];
  int t = threadIdx.x;
  int g = blockIdx.x * blockDim.x + t;
  int mine = 0;
  if (g < n)
    mine = v[g];
  cache[t] = mine;
  __syncthreads();
  int s = blockDim.x / 2;
  while (s > 0) {
    if (t < s)
      cache[t] += cache[t + s];
    __syncthreads();
    s >>= 1;
  }
  if (t != 0)
    return;
  out[blockIdx.x] = cache[0];
}
// OUT-LABEL: void while_count(
// OUT: int v1 = mine;
// OUT: if (t == 0) {
// OUT-NEXT: out[blockIdx.x] = v1;

// The CUDA samples' unrolled tree: block size as a template parameter, two
// loads per thread, the last warp through volatile shared memory.
template <unsigned BLOCK_SIZE>
__device__ void warp_tail(volatile float *sm, unsigned tid) {
  if (BLOCK_SIZE >= 64)
    sm[tid] += sm[tid + 32];
  __syncwarp();
  if (BLOCK_SIZE >= 32)
    sm[tid] += sm[tid + 16];
  __syncwarp();
  if (BLOCK_SIZE >= 16)
    sm[tid] += sm[tid + 8];
  __syncwarp();
  if (BLOCK_SIZE >= 8)
    sm[tid] += sm[tid + 4];
  __syncwarp();
  if (BLOCK_SIZE >= 4)
    sm[tid] += sm[tid + 2];
  __syncwarp();
  if (BLOCK_SIZE >= 2)
    sm[tid] += sm[tid + 1];
}

// WHY: warp-reduce unrolled: shared-memory tree reduction (+) of float in 'sm' written out step by step: warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement
template <unsigned BLOCK_SIZE>
__global__ void unrolled(const float *in, float *out, unsigned n) {
  __shared__ float sm[BLOCK_SIZE];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * (BLOCK_SIZE * 2) + tid;
  float sum = 0.0f;
  if (i < n)
    sum = in[i];
  if (i + BLOCK_SIZE < n)
    sum += in[i + BLOCK_SIZE];
  sm[tid] = sum;
  __syncthreads();
  if (BLOCK_SIZE >= 512) {
    if (tid < 256)
      sm[tid] += sm[tid + 256];
    __syncthreads();
  }
  if (BLOCK_SIZE >= 256) {
    if (tid < 128)
      sm[tid] += sm[tid + 128];
    __syncthreads();
  }
  if (BLOCK_SIZE >= 128) {
    if (tid < 64)
      sm[tid] += sm[tid + 64];
    __syncthreads();
  }
  if (tid < 32)
    warp_tail<BLOCK_SIZE>(sm, tid);
  if (tid == 0)
    out[blockIdx.x] = sm[0];
}
// OUT-LABEL: void unrolled(
// OUT-NEXT: __shared__ float sm[BLOCK_SIZE / 32];
// OUT: float v = sum;
// OUT: if (tid == 0)
// OUT-NEXT: out[blockIdx.x] = v;

// Dynamic shared memory through the CUDA samples' helper, over any T.
template <class T> struct SharedMemory {
  __device__ inline operator T *() {
    extern __shared__ int smem_raw[];
    return (T *)smem_raw;
  }
  __device__ inline operator const T *() const {
    extern __shared__ int smem_raw[];
    return (T *)smem_raw;
  }
};

// WHY: warp-reduce samples_sum: shared-memory tree reduction (+) of T in 'sdata': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement
template <class T>
__global__ void samples_sum(const T *g_in, T *g_out, unsigned int n) {
  T *sdata = SharedMemory<T>();
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? g_in[i] : 0;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    g_out[blockIdx.x] = sdata[0];
}
// OUT-LABEL: void samples_sum(
// OUT-NEXT: __shared__ T sdata[16];
// OUT: T v = (i < n) ? g_in[i] : 0;

// WHY: warp-reduce cg_sum: shared-memory tree reduction (+) of float in 's': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement
// Cooperative groups: the block's handle, its rank and its barrier.
__global__ void cg_sum(const float *x, float *out, int n) {
  cg::thread_block block = cg::this_thread_block();
  __shared__ float s[512];
  unsigned r = block.thread_rank();
  unsigned i = blockIdx.x * block.size() + r;
  s[r] = i < n ? x[i] : 0.f;
  cg::sync(block);
  for (unsigned k = block.size() / 2; k > 0; k >>= 1) {
    if (r < k)
      s[r] += s[r + k];
    cg::sync(block);
  }
  if (r == 0)
    out[blockIdx.x] = s[0];
}
// OUT-LABEL: void cg_sum(
// OUT: __shared__ float s[512 / 32];
// OUT: float v = i < n ? x[i] : 0.f;
// OUT: if (r % 32 == 0)
// OUT-NEXT: s[r / 32] = v;

// WHY: warp-reduce dot_double: shared-memory tree reduction (+) of double in 'cache': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement
// A double dot product: a grid-stride loop first, then the tree, then one
// atomicAdd of the block's result.
__global__ void dot_double(const double *a, const double *b, double *result,
                           int n) {
  __shared__ double cache[256];
  int tid = threadIdx.x;
  double acc = 0.0;
  for (int k = blockIdx.x * blockDim.x + tid; k < n;
       k += blockDim.x * gridDim.x)
    acc += a[k] * b[k];
  cache[tid] = acc;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (tid < half)
      cache[tid] = cache[tid] + cache[tid + half];
    __syncthreads();
  }
  if (tid == 0)
    atomicAdd(result, cache[0]);
}
// OUT-LABEL: void dot_double(
// OUT: double v = acc;
// OUT: atomicAdd(result, v);

// WHY: warp-reduce row_max: shared-memory tree reduction (max) of float in 'best': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement
// A maximum per row through a row pointer, fmaxf and -INFINITY.
__global__ void row_max(const float *m, float *maxima, int cols) {
  __shared__ float best[256];
  const float *row = m + blockIdx.x * cols;
  float local = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    local = fmaxf(local, row[c]);
  best[threadIdx.x] = local;
  __syncthreads();
  for (int s = blockDim.x >> 1; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      best[threadIdx.x] = fmaxf(best[threadIdx.x], best[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0)
    maxima[blockIdx.x] = best[0];
}
// OUT-LABEL: void row_max(
// OUT: v = fmaxf(v, __shfl_down_sync(0xffffffff, v, off));
// OUT: v = threadIdx.x < blockDim.x / 32 ? best[threadIdx.x] : best[0];

// An integer minimum in a namespace, the block size a constant, launched
// through a macro.
namespace stats {
constexpr int kThreads = 128;

__device__ __forceinline__ int global_id() {
  return blockIdx.x * blockDim.x + threadIdx.x;
}

// WHY: warp-reduce stats::block_min: shared-memory tree reduction (min) of int in 'lo': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement
__global__ void block_min(const int *data, int *mins, int count) {
  __shared__ int lo[kThreads];
  const int lane = threadIdx.x;
  const int id = global_id();
  lo[lane] = id < count ? data[id] : INT_MAX;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (lane < stride)
      lo[lane] = min(lo[lane], lo[lane + stride]);
    __syncthreads();
  }
  if (lane == 0)
    mins[blockIdx.x] = lo[0];
}
// OUT-LABEL: void block_min(
// OUT-NEXT: __shared__ int lo[kThreads / 32];
// OUT: v = min(v, __shfl_down_sync(0xffffffff, v, off));
} // namespace stats

// An array of structures, a 2D grid of blocks counted row by row, the
// stride halved by `s = s / 2`, one float atomicAdd per block.
struct Particle {
  float x, y, z;
  float mass;
};

// WHY: warp-reduce total_mass: shared-memory tree reduction (+) of float in 'm': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement
__global__ void total_mass(const Particle *p, float *total, int n) {
  __shared__ float m[BLOCK];
  int block = blockIdx.y * gridDim.x + blockIdx.x;
  int i = block * blockDim.x + threadIdx.x;
  m[threadIdx.x] = i < n ? p[i].mass : 0.0f;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s = s / 2) {
    if (threadIdx.x < s)
      m[threadIdx.x] += m[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    atomicAdd(total, m[0]);
}
// OUT-LABEL: void total_mass(
// OUT: float v = i < n ? p[i].mass : 0.0f;
// OUT: atomicAdd(total, v);

// WHY: warp-reduce interleaved_sum: shared-memory tree reduction (+) of float in 'sdata' with interleaved addressing: warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement
// The first tree most people write (the CUDA samples' reduce0): the
// stride doubles and the threads at multiples of 2 * s add.
__global__ void interleaved_sum(const float *in, float *partial, int n) {
  __shared__ float sdata[BLOCK];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned int s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0)
      sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    partial[blockIdx.x] = sdata[0];
}
// OUT-LABEL: void interleaved_sum(
// OUT-NEXT: __shared__ float sdata[BLOCK / 32];
// OUT: float v = (i < n) ? in[i] : 0.0f;
// OUT-NOT: s *= 2
// OUT: partial[blockIdx.x] = v;

// WHY: warp-reduce strided_max: shared-memory tree reduction (max) of T in 'sdata' with interleaved addressing: warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement
// The second (reduce1): the working threads packed at the front through a
// strided index, a maximum over any element type.
template <typename T>
__global__ void strided_max(const T *in, T *out, int n, T lowest) {
  __shared__ T sdata[128];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = i < n ? in[i] : lowest;
  __syncthreads();
  for (unsigned int s = 1; s < blockDim.x; s *= 2) {
    int index = 2 * s * tid;
    if (index < blockDim.x)
      sdata[index] = max(sdata[index], sdata[index + s]);
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = sdata[0];
}
// OUT-LABEL: void strided_max(
// OUT-NEXT: __shared__ T sdata[128 / 32];
// OUT: T v = i < n ? in[i] : lowest;
// OUT: v = max(v, __shfl_down_sync(0xffffffff, v, off));
// OUT: v = tid < blockDim.x / 32 ? sdata[tid] : sdata[0];
// OUT: out[blockIdx.x] = v;

// WHY: warp-reduce masked_count: shared-memory tree reduction (+) of int in 'hits' with interleaved addressing: warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement; note: the early return at [[#@LINE+16]]:3 becomes 'if (t == 0) { ... }' around thread 0's statements
// reduce0 again with a mask for the modulo, a while loop up to the
// constant block, an early return and one atomicAdd per block.
__global__ void masked_count(const float *x, int *count, int n, float cut) {
  __shared__ int hits[BLOCK];
  int t = threadIdx.x;
  int i = blockIdx.x * BLOCK + t;
  hits[t] = i < n && x[i] > cut;
  __syncthreads();
  unsigned s = 1;
  while (s < BLOCK) {
    if ((t & (2 * s - 1)) == 0)
      hits[t] += hits[t + s];
    __syncthreads();
    s <<= 1;
  }
  if (t != 0)
    return;
  atomicAdd(count, hits[0]);
}
// OUT-LABEL: void masked_count(
// OUT: int v = i < n && x[i] > cut;
// OUT-NOT: s <<= 1
// OUT: if (t == 0) {
// OUT-NEXT: atomicAdd(count, v);

// WHY: warp-reduce register_sum: shared-memory tree reduction (+) of T in 'sdata' keeping its running value in 'mySum': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement
// The CUDA samples' reduce3: two loads per thread, the running sum kept in
// a register beside its element, which thread 0 writes out.
template <class T>
__global__ void register_sum(const T *g_idata, T *g_odata, unsigned int n) {
  cg::thread_block cta = cg::this_thread_block();
  T *sdata = SharedMemory<T>();
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  T mySum = (i < n) ? g_idata[i] : 0;
  if (i + blockDim.x < n)
    mySum += g_idata[i + blockDim.x];
  sdata[tid] = mySum;
  cg::sync(cta);
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      sdata[tid] = mySum = mySum + sdata[tid + s];
    }
    cg::sync(cta);
  }
  if (tid == 0)
    g_odata[blockIdx.x] = mySum;
}
// OUT-LABEL: void register_sum(
// OUT: T v = mySum;
// OUT-NOT: sdata[tid] = mySum
// OUT: g_odata[blockIdx.x] = v;

// WHY: warp-reduce register_max: shared-memory tree reduction (max) of float in 'top' keeping its running value in 'best': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement; note: the early return at [[#@LINE+18]]:3 becomes 'if (t == 0) { ... }' around thread 0's statements
// A maximum per block kept in a register with fmaxf, a while loop, and
// thread 0 alone past an early return, reading the register twice.
__global__ void register_max(const float *x, float *out, float *spread,
                             int n) {
  __shared__ float top[128];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  float best = i < n ? x[i] : -INFINITY;
  top[t] = best;
  __syncthreads();
  int k = 64;
  while (k > 0) {
    if (t < k)
      top[t] = best = fmaxf(best, top[t + k]);
    __syncthreads();
    k /= 2;
  }
  if (t != 0)
    return;
  out[blockIdx.x] = best;
  spread[blockIdx.x] = best - x[blockIdx.x * blockDim.x];
}
// OUT-LABEL: void register_max(
// OUT: float v = best;
// OUT: if (t == 0) {
// OUT-NEXT: out[blockIdx.x] = v;
// OUT-NEXT: spread[blockIdx.x] = v - x[blockIdx.x * blockDim.x];

// WHY: warp-reduce merge_bins: shared-memory tree reduction (+) of unsigned int in 'data': warp shuffles and one __syncthreads() instead of one per step; thread 0 keeps its final statement
// The samples' histogram merge: each block sums one bin over the partial
// histograms, then a tree whose barrier comes before each step (none
// between the store and the loop).
#define MERGE_THREADS 256
__global__ void merge_bins(unsigned int *hist, const unsigned int *partials,
                           unsigned int count) {
  cg::thread_block cta = cg::this_thread_block();
  unsigned int sum = 0;
  for (unsigned int i = threadIdx.x; i < count; i += MERGE_THREADS)
    sum += partials[blockIdx.x + i * 64];
  __shared__ unsigned int data[MERGE_THREADS];
  data[threadIdx.x] = sum;
  for (unsigned int stride = MERGE_THREADS / 2; stride > 0; stride >>= 1) {
    cg::sync(cta);
    if (threadIdx.x < stride) {
      data[threadIdx.x] += data[threadIdx.x + stride];
    }
  }
  if (threadIdx.x == 0) {
    hist[blockIdx.x] = data[0];
  }
}
// OUT-LABEL: void merge_bins(
// OUT: __shared__ unsigned int data[MERGE_THREADS / 32];
// OUT-NEXT: unsigned int v = sum;
// OUT-NOT: cg::sync(cta);
// OUT: hist[blockIdx.x] = v;

template <typename T> T *upload(const std::vector<T> &h) {
  T *d = nullptr;
  CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <typename T> std::vector<T> download(const T *d, size_t n) {
  CHECK(cudaGetLastError());
  std::vector<T> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}
static int failures = 0;
// Values are multiples of 1/8 (products of 1/64) small enough that every
// sum is exact in float and double in any order: the results compare
// exactly and do not depend on the order of atomics.
template <typename T>
void expect(const char *name, const std::vector<T> &got,
            const std::vector<T> &want) {
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    bad += !(got[i] == want[i]);
  bool ok = got.size() == want.size() && bad == 0;
  printf("%s %s (%zu of %zu differ)\n", ok ? "PASS" : "FAIL", name, bad,
         want.size());
  failures += !ok;
}
template <typename T> std::vector<T> values(size_t n, unsigned seed) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (T)((int)((i * 2654435761u + seed * 40503u) >> 9) % 19 - 9) / 8;
  return v;
}
template <typename T>
std::vector<T> blockSums(const std::vector<T> &x, size_t per) {
  std::vector<T> s((x.size() + per - 1) / per, T(0));
  for (size_t i = 0; i < x.size(); ++i)
    s[i / per] += x[i];
  return s;
}

static void runPartialSums(int n) {
  auto x = values<float>(n, 1);
  int blocks = (n + BLOCK - 1) / BLOCK;
  float *dx = upload(x), *dp = upload(std::vector<float>(blocks, 0.f));
  partial_sums<<<blocks, BLOCK>>>(dx, dp, n);
  expect("partial_sums", download(dp, blocks), blockSums(x, BLOCK));
}

static void runWhileCount(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = (i * 37) % 101 - 50;
  int blocks = (n + 127) / 128;
  int *dv = upload(v), *dout = upload(std::vector<int>(blocks, 0));
  while_count<<<blocks, 128>>>(dv, dout, n);
  expect("while_count", download(dout, blocks), blockSums(v, 128));
}

static void runUnrolled(unsigned n) {
  auto x = values<float>(n, 2);
  unsigned blocks = (n + 511) / 512;
  float *dx = upload(x), *dout = upload(std::vector<float>(blocks, 0.f));
  unrolled<256><<<blocks, 256>>>(dx, dout, n);
  expect("unrolled", download(dout, blocks), blockSums(x, 512));
}

static void runSamplesSum(unsigned n) {
  std::vector<int> x(n);
  for (unsigned i = 0; i < n; ++i)
    x[i] = (int)(i % 23) - 11;
  unsigned blocks = (n + 511) / 512;
  int *dx = upload(x), *dout = upload(std::vector<int>(blocks, 0));
  samples_sum<int><<<blocks, 512, 512 * sizeof(int)>>>(dx, dout, n);
  expect("samples_sum", download(dout, blocks), blockSums(x, 512));
}

static void runCgSum(int n) {
  auto x = values<float>(n, 3);
  int blocks = (n + 511) / 512;
  float *dx = upload(x), *dout = upload(std::vector<float>(blocks, 0.f));
  cg_sum<<<blocks, 512>>>(dx, dout, n);
  expect("cg_sum", download(dout, blocks), blockSums(x, 512));
}

static void runDotDouble(int n) {
  auto a = values<double>(n, 4), b = values<double>(n, 5);
  double want = 0.0;
  for (int i = 0; i < n; ++i)
    want += a[i] * b[i];
  double *da = upload(a), *db = upload(b),
         *dr = upload(std::vector<double>(1, 0.0));
  dot_double<<<6, 256>>>(da, db, dr, n);
  expect("dot_double", download(dr, 1), std::vector<double>(1, want));
}

static void runRowMax(int rows, int cols) {
  auto m = values<float>((size_t)rows * cols, 6);
  std::vector<float> want(rows, -INFINITY);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      want[r] = std::fmax(want[r], m[(size_t)r * cols + c]);
  float *dm = upload(m), *dmax = upload(std::vector<float>(rows, 0.f));
  row_max<<<rows, 256>>>(dm, dmax, cols);
  expect("row_max", download(dmax, rows), want);
}

static void runBlockMin(int count) {
  std::vector<int> d(count);
  for (int i = 0; i < count; ++i)
    d[i] = (int)((i * 7919u) % 100003u) - 50000;
  int blocks = (count + stats::kThreads - 1) / stats::kThreads;
  std::vector<int> want(blocks, INT_MAX);
  for (int i = 0; i < count; ++i)
    want[i / stats::kThreads] = std::min(want[i / stats::kThreads], d[i]);
  int *dd = upload(d), *dmins = upload(std::vector<int>(blocks, 0));
  LAUNCH(stats::block_min, blocks, stats::kThreads, dd, dmins, count);
  expect("stats::block_min", download(dmins, blocks), want);
}

static void runTotalMass(int n) {
  std::vector<Particle> p(n);
  auto w = values<float>(n, 7);
  float want = 0.f;
  for (int i = 0; i < n; ++i) {
    p[i] = Particle{(float)i, 1.f, 2.f, w[i]};
    want += w[i];
  }
  Particle *dp = upload(p);
  float *dt = upload(std::vector<float>(1, 0.f));
  int nb = (n + BLOCK - 1) / BLOCK;
  int gx = 4;
  dim3 grid(gx, (nb + gx - 1) / gx);
  total_mass<<<grid, BLOCK>>>(dp, dt, n);
  expect("total_mass", download(dt, 1), std::vector<float>(1, want));
}

static void runInterleavedSum(int n) {
  auto x = values<float>(n, 8);
  int blocks = (n + BLOCK - 1) / BLOCK;
  float *dx = upload(x), *dp = upload(std::vector<float>(blocks, 0.f));
  interleaved_sum<<<blocks, BLOCK>>>(dx, dp, n);
  expect("interleaved_sum", download(dp, blocks), blockSums(x, BLOCK));
}

template <typename T>
static void runStridedMax(const char *name, int n, T lowest) {
  auto x = values<T>(n, 9);
  int blocks = (n + 127) / 128;
  std::vector<T> want(blocks, lowest);
  for (int i = 0; i < n; ++i)
    want[i / 128] = std::max(want[i / 128], x[i]);
  T *dx = upload(x), *dout = upload(std::vector<T>(blocks, T(0)));
  strided_max<T><<<blocks, 128>>>(dx, dout, n, lowest);
  expect(name, download(dout, blocks), want);
}

static void runMaskedCount(int n) {
  auto x = values<float>(n, 10);
  int want = 0;
  for (int i = 0; i < n; ++i)
    want += x[i] > 0.25f;
  float *dx = upload(x);
  int *dc = upload(std::vector<int>(1, 0));
  masked_count<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(dx, dc, n, 0.25f);
  expect("masked_count", download(dc, 1), std::vector<int>(1, want));
}

static void runRegisterSum(unsigned n) {
  auto x = values<double>(n, 11);
  unsigned blocks = (n + 511) / 512;
  double *dx = upload(x), *dout = upload(std::vector<double>(blocks, 0.0));
  register_sum<double><<<blocks, 256, 256 * sizeof(double)>>>(dx, dout, n);
  expect("register_sum", download(dout, blocks), blockSums(x, 512));
}

static void runRegisterMax(int n) {
  auto x = values<float>(n, 12);
  int blocks = (n + 127) / 128;
  std::vector<float> want(blocks, -INFINITY), wantSpread(blocks);
  for (int i = 0; i < n; ++i)
    want[i / 128] = std::fmax(want[i / 128], x[i]);
  for (int b = 0; b < blocks; ++b)
    wantSpread[b] = want[b] - x[(size_t)b * 128];
  float *dx = upload(x), *dout = upload(std::vector<float>(blocks, 0.f)),
        *dspread = upload(std::vector<float>(blocks, 0.f));
  register_max<<<blocks, 128>>>(dx, dout, dspread, n);
  expect("register_max", download(dout, blocks), want);
  expect("register_max spread", download(dspread, blocks), wantSpread);
}

static void runMergeBins(unsigned count) {
  std::vector<unsigned> partials((size_t)count * 64);
  for (size_t i = 0; i < partials.size(); ++i)
    partials[i] = (unsigned)((i * 2654435761u) >> 20) % 1000;
  std::vector<unsigned> want(64, 0);
  for (unsigned i = 0; i < count; ++i)
    for (unsigned b = 0; b < 64; ++b)
      want[b] += partials[(size_t)i * 64 + b];
  unsigned *dp = upload(partials), *dh = upload(std::vector<unsigned>(64, 0));
  merge_bins<<<64, MERGE_THREADS>>>(dh, dp, count);
  expect("merge_bins", download(dh, 64), want);
}

int main() {
  runMergeBins(300);
  runRegisterSum(3001);
  runRegisterMax(1000);
  runPartialSums(1000);
  runPartialSums(1024);
  runWhileCount(4099);
  runUnrolled(3000);
  runSamplesSum(2050);
  runCgSum(1500);
  runDotDouble(5003);
  runRowMax(37, 300);
  runBlockMin(1001);
  runTotalMass(2500);
  runInterleavedSum(1000);
  runInterleavedSum(2048);
  runStridedMax<float>("strided_max<float>", 1001, -INFINITY);
  runStridedMax<int>("strided_max<int>", 777, INT_MIN);
  runMaskedCount(3001);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// The edits, applied one after another by the RUN lines above and by
// scripts/gpu-edit-family.sh on the GPU:
// EDIT: {"kind":"warp-reduce","target":"partial_sums","params":{"changes_precision":true}}
// EDIT: {"kind":"warp-reduce","target":"while_count","params":{"changes_precision":false}}
// EDIT: {"kind":"warp-reduce","target":"unrolled","params":{"changes_precision":true}}
// EDIT: {"kind":"warp-reduce","target":"samples_sum","params":{"changes_precision":true}}
// EDIT: {"kind":"warp-reduce","target":"cg_sum","params":{"changes_precision":true}}
// EDIT: {"kind":"warp-reduce","target":"dot_double","params":{"changes_precision":true}}
// EDIT: {"kind":"warp-reduce","target":"row_max","params":{"changes_precision":false}}
// EDIT: {"kind":"warp-reduce","target":"stats::block_min","params":{"changes_precision":false}}
// EDIT: {"kind":"warp-reduce","target":"total_mass","params":{"changes_precision":true}}
// EDIT: {"kind":"warp-reduce","target":"interleaved_sum","params":{"changes_precision":true}}
// EDIT: {"kind":"warp-reduce","target":"strided_max","params":{"changes_precision":false}}
// EDIT: {"kind":"warp-reduce","target":"masked_count","params":{"changes_precision":false}}
// EDIT: {"kind":"warp-reduce","target":"register_sum","params":{"changes_precision":true}}
// EDIT: {"kind":"warp-reduce","target":"register_max","params":{"changes_precision":false}}
// EDIT: {"kind":"warp-reduce","target":"merge_bins","params":{"changes_precision":false}}
