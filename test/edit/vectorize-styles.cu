// vectorize on maps written the ways people write them: saxpy with an
// if-block (also launched on pointers one element off: the unaligned
// fallback) and with an early return and __restrict__; a template over the
// element type (float and double) and one over a scale constant; an index
// from an inline __device__ helper; a struct-of-arrays update of two arrays;
// a ReLU in a namespace launched through a macro; a clamp with fminf/fmaxf
// under a size_t index; unsigned bit mixing and an int bit count in a while
// loop; a constant size from a #define; a 2D map through row pointers and
// flat 2D maps at y * cols + x (an int local, inline with size_t and x
// first, an index helper, a pitch other than the column count). Sizes
// leave tails (1000003, 4099) or not (1 << 16); 130 columns leave rows
// aligned and not. Kept without an edit, each with the reason checked: an
// array of float2 structs (p[i].x), and flat look-alikes (every other
// column, a transpose, a neighbour in the next row). Kernels that read their
// block (blocks: "keep"): a chunk scan's offset add with a constant block
// from a #define, a per-block bias, a per-block scale through gridDim with
// blockDim.x in the body (a dim3 block variable), all with tails and the
// first two on a pointer one element off; refused with the reason:
// threadIdx.x in the body, a block read from a parameter, a barrier. The edits applied one after another compile
// with nvcc and the input is left as it was. The program checks each kernel
// against the CPU, so the GPU check runs `eval` on the result.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: clang-optiml transforms -v %t/k.cu | FileCheck --check-prefix=NOT %s
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

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
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

#define LAUNCH_1D(kernel, count, ...)                                          \
  kernel<<<((count) + 255) / 256, 256>>>(__VA_ARGS__)

#define N_FIXED 4096

// WHY: vectorize saxpy_if: map kernel: every global access is at the thread's own element (x, y)
__global__ void saxpy_if(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i] + y[i];
  }
}
// OUT: for (int v = tid; v < n / 4; v += blockDim.x * gridDim.x) {

// WHY: vectorize saxpy_ret: map kernel: every global access is at the thread's own element (x, y)
__global__ void saxpy_ret(const float *__restrict__ x, float *__restrict__ y,
                          float alpha, unsigned n) {
  const unsigned idx = threadIdx.x + blockDim.x * blockIdx.x;
  if (idx >= n)
    return;
  y[idx] += alpha * x[idx];
}
// OUT: for (unsigned v = tid; v < n / 2; v += blockDim.x * gridDim.x) {

// WHY: vectorize scale_t: map kernel: every global access is at the thread's own element (in, out); vector path for scale_t<float>, other instantiations keep the scalar loop
template <typename T>
__global__ void scale_t(int n, T s, const T *in, T *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = s * in[i];
}
// OUT: if constexpr (std::is_same<T, float>::value) {
// OUT: float4 in_v = reinterpret_cast<const float4 *>(in)[v];

// WHY: vectorize axpby: map kernel: every global access is at the thread's own element (x, y); vector path for axpby<double, 3>, other instantiations keep the scalar loop
template <typename Real, int Scale>
__global__ void axpby(int n, Real b, const Real *x, Real *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  y[i] = Scale * x[i] + b * y[i];
}
// OUT: if constexpr (std::is_same<Real, double>::value) {
// OUT: if (reinterpret_cast<unsigned long long>(x) % 16 == 0 &&
// OUT: for (int v = tid; v < n / 2; v += blockDim.x * gridDim.x) {
// OUT: double2 x_v = reinterpret_cast<const double2 *>(x)[v];
// OUT: y_v.y = Scale * x_v.y + b * y_v.y;

// WHY: vectorize mul_const: map kernel: every global access is at the thread's own element (v)
template <int Scale> __global__ void mul_const(int *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    v[i] *= Scale;
}
// OUT: int4 v_v = reinterpret_cast<int4 *>(v)[v1];
// OUT: v_v.w *= Scale;

__device__ __forceinline__ int gid() {
  return blockIdx.x * blockDim.x + threadIdx.x;
}

__constant__ float c_gain;

// WHY: vectorize vadd: map kernel: every global access is at the thread's own element (a, b, c)
__global__ void vadd(const int n, const float *a, const float *b, float *c) {
  const int i = gid();
  if (i < n)
    c[i] = c_gain * (a[i] + b[i]);
}
// OUT: int tid = gid();

// WHY: vectorize integrate: map kernel: every global access is at the thread's own element (x, v, acc)
__global__ void integrate(float *__restrict__ x, float *__restrict__ v,
                         const float *__restrict__ acc, float dt, int n) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < n) {
    x[p] += v[p] * dt;
    v[p] += acc[p] * dt;
  }
}
// OUT: x_v.x += v_v.x * dt;
// OUT-NEXT: v_v.x += acc_v.x * dt;
// OUT: reinterpret_cast<float4 *>(x)[v1] = x_v;
// OUT-NEXT: reinterpret_cast<float4 *>(v)[v1] = v_v;

// An array of structs: the elements are float2, which has no wider vector
// type here (a float4 holding two elements is another rewrite).
// NOT: not vectorize integrate_aos: kernel 'integrate_aos': 'pos' has element type 'float2': only float, int, uint, short, ushort, char, uchar, double and __half have vector types here
__global__ void integrate_aos(float2 *pos, const float2 *vel, float dt,
                              int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    pos[i].x += vel[i].x * dt;
    pos[i].y += vel[i].y * dt;
  }
}

namespace nn {
// WHY: vectorize nn::relu: map kernel: every global access is at the thread's own element (in, out)
__global__ void relu(int n, const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = fmaxf(in[i], 0.0f);
}
} // namespace nn
// OUT: out_v.w = fmaxf(in_v.w, 0.0f);

// WHY: vectorize clamp: map kernel: every global access is at the thread's own element (v)
__global__ void clamp(float lo, float hi, float *v, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    v[i] = fminf(fmaxf(v[i], lo), hi);
}
// OUT: for (size_t v1 = tid; v1 < n / 4; v1 += blockDim.x * gridDim.x) {
// OUT: v_v.x = fminf(fmaxf(v_v.x, lo), hi);

// WHY: vectorize mix_bits: map kernel: every global access is at the thread's own element (in, out)
__global__ void mix_bits(const unsigned *in, unsigned *out, unsigned key,
                         int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  unsigned h = in[i] ^ key;
  h ^= h >> 16;
  h *= 0x45d9f3bu;
  h ^= h >> 16;
  out[i] = (h << 3) | (h >> 29);
}
// OUT: uint4 in_v = reinterpret_cast<const uint4 *>(in)[v];
// OUT: out_v.w = (h << 3) | (h >> 29);

// WHY: vectorize bitcount: map kernel: every global access is at the thread's own element (in, out)
__global__ void bitcount(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned v = (unsigned)in[i];
    int c = 0;
    while (v) {
      c += v & 1u;
      v >>= 1;
    }
    out[i] = c;
  }
}
// OUT: int4 in_v = reinterpret_cast<const int4 *>(in)[v1];
// OUT: unsigned v = (unsigned)in_v.w;

// WHY: vectorize square_fixed: map kernel: every global access is at the thread's own element (x, y)
__global__ void square_fixed(const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N_FIXED)
    y[i] = x[i] * x[i];
}
// OUT: for (int v = tid; v < (N_FIXED) / 4; v += blockDim.x * gridDim.x) {
// OUT: for (int i = (N_FIXED) / 4 * 4 + tid; i < (N_FIXED); i += blockDim.x * gridDim.x) {

// WHY: vectorize scale_rows: 2D map along matrix rows: every global access is p[c] through a row pointer into in, out; each thread takes consecutive columns
__global__ void scale_rows(int rows, int cols, float s, const float *in,
                           float *out) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) {
    const float *row = in + r * cols;
    float *dst = out + r * cols;
    dst[c] = s * row[c] + 1.0f;
  }
}
// OUT: int c = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
// OUT: float4 [[ROW:row_v[0-9]*]] = *reinterpret_cast<const float4 *>(row + c);
// OUT: {{dst_v[0-9]*}}.w = s * [[ROW]].w + 1.0f;
// OUT: for (int [[K:k[0-9]*]] = 0; [[K]] < 4 && (c + [[K]]) < cols; ++[[K]]) {

// WHY: vectorize offset2d: 2D map along matrix rows: every global access is at the thread's own element 'y * cols + x' of in, out; each thread takes consecutive columns, a vector where its row is aligned
__global__ void offset2d(int rows, int cols, const float *in, float *out,
                         float b) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows) {
    int i = y * cols + x;
    out[i] = in[i] + b;
  }
}
// OUT: int x = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
// OUT: if (cols - x >= 4 &&
// OUT-NEXT: reinterpret_cast<unsigned long long>(out + (y * cols + x)) % 16 == 0 &&
// OUT-NEXT: reinterpret_cast<unsigned long long>(in + (y * cols + x)) % 16 == 0) {
// OUT: float4 [[IN:in_v[0-9]*]] = *reinterpret_cast<const float4 *>(in + (y * cols + x));
// OUT-NEXT: {{out_v[0-9]*}}.x = [[IN]].x + b;
// OUT: *reinterpret_cast<float4 *>(out + (y * cols + x)) = {{out_v[0-9]*}};
// OUT: int i = y * cols + (x + [[K1:k[0-9]*]]);
// OUT-NEXT: out[i] = in[i] + b;

// WHY: vectorize ramp2d: 2D map along matrix rows: every global access is at the thread's own element 'y * cols + x' of in, out; each thread takes consecutive columns, a vector where its row is aligned
__global__ void ramp2d(int rows, int cols, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= cols || y >= rows)
    return;
  out[(size_t)y * cols + x] = 0.5f * in[x + y * cols] + x;
}
// OUT: reinterpret_cast<unsigned long long>(out + ((size_t)y * cols + x)) % 16 == 0 &&
// OUT-NEXT: reinterpret_cast<unsigned long long>(in + (x + y * cols)) % 16 == 0) {
// OUT: {{out_v[0-9]*}}.w = 0.5f * {{in_v[0-9]*}}.w + (x + 3);
// OUT: out[(size_t)y * cols + (x + [[K2:k[0-9]*]])] = 0.5f * in[(x + [[K2]]) + y * cols] + (x + [[K2]]);

__device__ __forceinline__ size_t idx(int x, int y, int w) {
  return (size_t)y * w + x;
}

// WHY: vectorize scale_idx: 2D map along matrix rows: every global access is at the thread's own element 'y * cols + x' of in, out; each thread takes consecutive columns, a vector where its row is aligned
__global__ void scale_idx(int rows, int cols, float s, const float *in,
                          float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (y < rows && x < cols)
    out[idx(x, y, cols)] = s * in[idx(x, y, cols)];
}
// OUT: float4 {{in_v[0-9]*}} = *reinterpret_cast<const float4 *>(in + (idx(x, y, cols)));
// OUT: out[idx((x + [[K3:k[0-9]*]]), y, cols)] = s * in[idx((x + [[K3]]), y, cols)];

// A row length other than the column bound: each thread's columns are
// still those of consecutive original threads in one row.
// WHY: vectorize add_pitched: 2D map along matrix rows: every global access is at the thread's own element 'y * pitch + x' of in, out; each thread takes consecutive columns, a vector where its row is aligned
__global__ void add_pitched(int rows, int cols, int pitch, const float *in,
                            float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows)
    out[y * pitch + x] += in[y * pitch + x];
}
// OUT: float4 [[OUTP:out_v[0-9]*]] = *reinterpret_cast<float4 *>(out + (y * pitch + x));
// OUT: [[OUTP]].w += {{in_v[0-9]*}}.w;
// OUT: out[y * pitch + (x + [[K4:k[0-9]*]])] += in[y * pitch + (x + [[K4]])];

// Look-alikes of a flat 2D map: every other column, a transpose, a
// neighbour in the next row.
// NOT: not vectorize even_cols: kernel 'even_cols': access 'out[y * cols + 2 * x]' moves by 2 elements when 'x' grows by one, so a thread's columns are not consecutive elements: a flat 2D map reads each matrix at 'y * half + x'
__global__ void even_cols(int rows, int half, int cols, const float *in,
                          float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < half && y < rows)
    out[y * cols + 2 * x] = -in[y * cols + 2 * x];
}

// NOT: not vectorize transpose_naive: kernel 'transpose_naive': access 'out[x * rows + y]' does not move by a constant when 'x' grows by one (a transposed or strided access): a flat 2D map reads each matrix at the thread's own element 'y * cols + x'
__global__ void transpose_naive(int rows, int cols, const float *in,
                                float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows)
    out[x * rows + y] = in[y * cols + x];
}

// NOT: not vectorize blur_down: kernel 'blur_down': access 'in[i + cols]' is not at the thread's own element 'y * cols + x': it adds 'cols' (a neighbour in another row or column: a stencil, which vectorize-stencil handles)
__global__ void blur_down(int rows, int cols, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows - 1) {
    int i = y * cols + x;
    out[i] = 0.5f * (in[i] + in[i + cols]);
  }
}

// Kernels that read their block keep it (blocks: "keep"): the grid stays,
// each block has width times fewer threads, each thread takes width
// consecutive elements of its block.
#define SCAN_B 1024

// WHY: vectorize chunk_add: map kernel that reads its block: every block keeps its elements, its threads take W consecutive ones (out)
__global__ void chunk_add(int *out, const int *scanned_sums, int n) {
  int i = blockIdx.x * SCAN_B + threadIdx.x;
  if (blockIdx.x > 0 && i < n)
    out[i] += scanned_sums[blockIdx.x - 1];
}
// OUT: int first = blockIdx.x * SCAN_B + (threadIdx.x * 4);
// OUT: int i = blockIdx.x * SCAN_B + (threadIdx.x * 4 + k);
// OUT: full = full && (blockIdx.x > 0 && i < n) &&
// OUT: static_cast<unsigned long long>(i) ==
// OUT: static_cast<unsigned long long>(first) + k;
// OUT: reinterpret_cast<unsigned long long>(out + first) % 16 == 0) {
// OUT: int4 out_v = reinterpret_cast<int4 *>(out + first)[0];
// OUT: out_v.w += scanned_sums[blockIdx.x - 1];
// OUT: reinterpret_cast<int4 *>(out + first)[0] = out_v;
// OUT: } else {
// OUT: for (int k = 0; k < 4; ++k) {
// OUT: int i = blockIdx.x * SCAN_B + (threadIdx.x * 4 + k);
// OUT: if (blockIdx.x > 0 && i < n)
// OUT: out[i] += scanned_sums[blockIdx.x - 1];

// WHY: vectorize bias_rows: map kernel that reads its block: every block keeps its elements, its threads take W consecutive ones (out)
__global__ void bias_rows(float *out, const float *bias, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += bias[blockIdx.x];
}
// OUT: int first = blockIdx.x * (blockDim.x * 2) + (threadIdx.x * 2);
// OUT: reinterpret_cast<unsigned long long>(out + first) % 8 == 0) {
// OUT: out_v.y += bias[blockIdx.x];
// OUT: if (i < n) out[i] += bias[blockIdx.x];

// WHY: vectorize block_scale: map kernel that reads its block: every block keeps its elements, its threads take W consecutive ones (in, out)
__global__ void block_scale(const float *in, float *out, unsigned n) {
  unsigned i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < n) {
    float s = (float)blockIdx.x / gridDim.x;
    out[i] = in[i] * s + blockDim.x;
  }
}
// OUT: unsigned int first = (threadIdx.x * 4) + blockIdx.x * (blockDim.x * 4);
// OUT: float4 in_v = reinterpret_cast<const float4 *>(in + first)[0];
// OUT: float s = (float)blockIdx.x / gridDim.x;
// OUT: out_v.x = in_v.x * s + (blockDim.x * 4);
// OUT: out[i] = in[i] * s + (blockDim.x * 4);

// NOT: not vectorize block_lane: kernel 'block_lane': the body reads 'threadIdx.x', which may appear only in the index: each thread now runs the body for several elements
__global__ void block_lane(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = blockIdx.x + threadIdx.x % 32;
}

// NOT: not vectorize block_sized: kernel 'block_sized': the block of launch block_sized/launch0 ('threads') cannot be read at the launch: keeping the blocks divides it by the width
__global__ void block_sized(float *out, const float *bias, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = bias[blockIdx.x];
}
void launch_block_sized(float *out, const float *bias, int n, int threads) {
  block_sized<<<(n + threads - 1) / threads, threads>>>(out, bias, n);
}

// NOT: not vectorize block_sync: kernel 'block_sync': the body calls '__syncthreads', which works with the other threads of the block
__global__ void block_sync(float *out, const float *bias, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    __syncthreads();
    out[i] += bias[blockIdx.x];
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
// Floats within a relative 1e-5 (the device may contract a * b + c into
// one fma); integers exactly.
template <typename T>
void expect(const char *name, const std::vector<T> &got,
            const std::vector<T> &want) {
  double worst = 0;
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < got.size(); ++i) {
    double d = std::fabs((double)got[i] - (double)want[i]);
    if (std::is_integral<T>::value)
      ok = got[i] == want[i];
    else
      ok = d <= 1e-5 * (1.0 + std::fabs((double)want[i]));
    worst = std::max(worst, d);
  }
  printf("%s %s (worst error %.2e)\n", ok ? "PASS" : "FAIL", name, worst);
  failures += !ok;
}
template <typename T> std::vector<T> values(size_t n, unsigned seed) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (T)((int)((i * 2654435761u + seed * 40503u) >> 9) % 19 - 9) / 8;
  return v;
}
static std::vector<unsigned> bits(size_t n, unsigned seed) {
  std::vector<unsigned> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (unsigned)(i * 2654435761u) ^ (seed * 0x9e3779b9u);
  return v;
}

static void saxpys() {
  const int n = 1000003;
  const float a = 1.5f;
  auto x = values<float>(n, 1), y = values<float>(n, 2);
  std::vector<float> want(y);
  for (int i = 0; i < n; ++i)
    want[i] = a * x[i] + y[i];
  float *dx = upload(x), *dy = upload(y);
  saxpy_if<<<(n + 255) / 256, 256>>>(n, a, dx, dy);
  CHECK(cudaGetLastError());
  expect("saxpy_if", download(dy, n), want);
  // One element off: the vector loads would be unaligned.
  std::vector<float> off(y);
  for (int i = 0; i < n - 2; ++i)
    off[i + 1] = a * x[i + 1] + y[i + 1];
  CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  saxpy_if<<<(n - 2 + 127) / 128, 128>>>(n - 2, a, dx + 1, dy + 1);
// OUT: saxpy_if<<<(n - 2 + 511) / 512, 128>>>(n - 2, a, dx + 1, dy + 1);
  CHECK(cudaGetLastError());
  expect("saxpy_if (offset pointers)", download(dy, n), off);

  const unsigned m = 1 << 16;
  CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  std::vector<float> want2(y.begin(), y.begin() + m);
  for (unsigned i = 0; i < m; ++i)
    want2[i] += 0.25f * x[i];
  saxpy_ret<<<(m + 511) / 512, 512>>>(dx, dy, 0.25f, m);
  CHECK(cudaGetLastError());
  expect("saxpy_ret", download(dy, m), want2);
}

static void templates() {
  const int n = 4099;
  auto xf = values<float>(n, 3);
  auto xd = values<double>(n, 4), yd = values<double>(n, 5);
  std::vector<float> wf(n);
  std::vector<double> wd(n), wa(n);
  for (int i = 0; i < n; ++i) {
    wf[i] = 3.0f * xf[i];
    wd[i] = 0.5 * xd[i];
    wa[i] = 3 * xd[i] + 0.25 * yd[i];
  }
  float *dxf = upload(xf), *dyf = upload(std::vector<float>(n, 0.f));
  double *dxd = upload(xd), *dyd = upload(std::vector<double>(n, 0.0));
  scale_t<float><<<(n + 255) / 256, 256>>>(n, 3.0f, dxf, dyf);
  scale_t<double><<<(n + 127) / 128, 128>>>(n, 0.5, dxd, dyd);
  CHECK(cudaGetLastError());
  expect("scale_t<float>", download(dyf, n), wf);
  expect("scale_t<double>", download(dyd, n), wd);
  CHECK(cudaMemcpy(dyd, yd.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  axpby<double, 3><<<(n + 255) / 256, 256>>>(n, 0.25, dxd, dyd);
// OUT: axpby<double, 3><<<(n + 511) / 512, 256>>>(n, 0.25, dxd, dyd);
  CHECK(cudaGetLastError());
  expect("axpby<double, 3>", download(dyd, n), wa);

  std::vector<int> iv(n), wi(n);
  for (int i = 0; i < n; ++i) {
    iv[i] = i % 1000 - 500;
    wi[i] = iv[i] * 7;
  }
  int *div = upload(iv);
  mul_const<7><<<(n + 255) / 256, 256>>>(div, n);
  CHECK(cudaGetLastError());
  expect("mul_const<7>", download(div, n), wi);
}

static void arrays() {
  const int n = 1000003;
  const float gain = 0.75f, dt = 0.01f;
  CHECK(cudaMemcpyToSymbol(c_gain, &gain, sizeof(float)));
  auto a = values<float>(n, 6), b = values<float>(n, 7), acc = values<float>(n, 8);
  std::vector<float> wc(n), wx(a), wv(b);
  for (int i = 0; i < n; ++i) {
    wc[i] = gain * (a[i] + b[i]);
    wx[i] += wv[i] * dt;
    wv[i] += acc[i] * dt;
  }
  float *da = upload(a), *db = upload(b), *dacc = upload(acc);
  float *dc = upload(std::vector<float>(n, 0.f));
  vadd<<<(n + 255) / 256, 256>>>(n, da, db, dc);
  CHECK(cudaGetLastError());
  expect("vadd", download(dc, n), wc);
  integrate<<<(n + 255) / 256, 256>>>(da, db, dacc, dt, n);
  CHECK(cudaGetLastError());
  expect("integrate (x)", download(da, n), wx);
  expect("integrate (v)", download(db, n), wv);

  const int m = 4099;
  std::vector<float2> pos(m), vel(m);
  std::vector<float> wp(2 * m);
  for (int i = 0; i < m; ++i) {
    pos[i] = make_float2(0.5f * i, -0.25f * i);
    vel[i] = make_float2((float)(i % 7), (float)(i % 5) - 2.0f);
    wp[2 * i] = pos[i].x + vel[i].x * dt;
    wp[2 * i + 1] = pos[i].y + vel[i].y * dt;
  }
  float2 *dpos = upload(pos), *dvel = upload(vel);
  integrate_aos<<<(m + 127) / 128, 128>>>(dpos, dvel, dt, m);
  CHECK(cudaGetLastError());
  auto got = download(dpos, m);
  std::vector<float> gp(2 * m);
  for (int i = 0; i < m; ++i) {
    gp[2 * i] = got[i].x;
    gp[2 * i + 1] = got[i].y;
  }
  expect("integrate_aos", gp, wp);
}

static void pointwise() {
  const int n = 1000003;
  auto in = values<float>(n, 9);
  std::vector<float> wr(n), wc(in);
  for (int i = 0; i < n; ++i) {
    wr[i] = std::max(in[i], 0.0f);
    wc[i] = std::min(std::max(in[i], -0.5f), 0.5f);
  }
  float *din = upload(in), *dout = upload(std::vector<float>(n, 0.f));
  LAUNCH_1D(nn::relu, n, n, din, dout);
// OUT: nn::relu<<<((n) + 1023) / 1024, 256>>>(n, din, dout);
  CHECK(cudaGetLastError());
  expect("nn::relu", download(dout, n), wr);
  clamp<<<(n + 255) / 256, 256>>>(-0.5f, 0.5f, din, (size_t)n);
  CHECK(cudaGetLastError());
  expect("clamp", download(din, n), wc);

  const int m = 1 << 16;
  const unsigned key = 0x5bd1e995u;
  auto u = bits(m + 3, 10);
  std::vector<unsigned> wm(m);
  std::vector<int> si(m), wb(m);
  for (int i = 0; i < m; ++i) {
    unsigned h = u[i] ^ key;
    h ^= h >> 16;
    h *= 0x45d9f3bu;
    h ^= h >> 16;
    wm[i] = (h << 3) | (h >> 29);
    si[i] = (int)u[i + 3];
    unsigned v = (unsigned)si[i];
    int c = 0;
    for (; v; v >>= 1)
      c += v & 1u;
    wb[i] = c;
  }
  unsigned *du = upload(u), *dm = upload(std::vector<unsigned>(m, 0u));
  mix_bits<<<(m + 255) / 256, 256>>>(du, dm, key, m);
  CHECK(cudaGetLastError());
  expect("mix_bits", download(dm, m), wm);
  int *dsi = upload(si), *dbc = upload(std::vector<int>(m, 0));
  // m - 1 elements: a tail of 3 after the last int4.
  bitcount<<<(m - 1 + 255) / 256, 256>>>(dsi, dbc, m - 1);
  CHECK(cudaGetLastError());
  wb[m - 1] = 0;
  expect("bitcount", download(dbc, m), wb);
}

// The flat 2D maps and their look-alikes on a rows x cols matrix (130
// columns: rows alternate between aligned and not).
static void flat2d(int rows, int cols, const float *din) {
  dim3 block(32, 8);
  dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
  auto in = download(din, (size_t)rows * cols);
  std::vector<float> wr(in.size()), ws(in.size()), wb(in.size(), 0.f);
  std::vector<float> wt(in.size()), we(in.size(), 0.f);
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      size_t i = (size_t)y * cols + x;
      wr[i] = 0.5f * in[i] + x;
      ws[i] = 3.0f * in[i];
      wt[(size_t)x * rows + y] = in[i];
      if (y + 1 < rows)
        wb[i] = 0.5f * (in[i] + in[i + cols]);
      if (x % 2 == 0)
        we[i] = -in[i];
    }
  float *dout = upload(std::vector<float>(in.size(), 0.f));
  ramp2d<<<grid, block>>>(rows, cols, din, dout);
// OUT: ramp2d<<<dim3((grid.x + 3) / 4, grid.y, grid.z), block>>>(rows, cols, din, dout);
  CHECK(cudaGetLastError());
  expect("ramp2d", download(dout, in.size()), wr);
  scale_idx<<<grid, block>>>(rows, cols, 3.0f, din, dout);
  CHECK(cudaGetLastError());
  expect("scale_idx", download(dout, in.size()), ws);
  transpose_naive<<<grid, block>>>(rows, cols, din, dout);
// OUT: transpose_naive<<<grid, block>>>(rows, cols, din, dout);
  CHECK(cudaGetLastError());
  expect("transpose_naive", download(dout, in.size()), wt);
  CHECK(cudaMemset(dout, 0, in.size() * sizeof(float)));
  blur_down<<<grid, block>>>(rows, cols, din, dout);
  CHECK(cudaGetLastError());
  expect("blur_down", download(dout, in.size()), wb);
  CHECK(cudaMemset(dout, 0, in.size() * sizeof(float)));
  const int half = cols / 2;
  dim3 halves((half + block.x - 1) / block.x, grid.y);
  even_cols<<<halves, block>>>(rows, half, cols, din, dout);
  CHECK(cudaGetLastError());
  expect("even_cols", download(dout, in.size()), we);

  // Rows padded to pitch = cols + 3 elements (the padding left as it was).
  const int pitch = cols + 3;
  auto a = values<float>((size_t)rows * pitch, 13);
  auto b = values<float>((size_t)rows * pitch, 14);
  std::vector<float> wp(b);
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x)
      wp[(size_t)y * pitch + x] += a[(size_t)y * pitch + x];
  float *da = upload(a), *db = upload(b);
  add_pitched<<<grid, block>>>(rows, cols, pitch, da, db);
// OUT: add_pitched<<<dim3((grid.x + 3) / 4, grid.y, grid.z), block>>>(rows, cols, pitch, da, db);
  CHECK(cudaGetLastError());
  expect("add_pitched", download(db, b.size()), wp);
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dout));
}

static void shapes() {
  auto x = values<float>(N_FIXED, 11);
  std::vector<float> w(N_FIXED);
  for (int i = 0; i < N_FIXED; ++i)
    w[i] = x[i] * x[i];
  float *dx = upload(x), *dy = upload(std::vector<float>(N_FIXED, 0.f));
  const int blocks = N_FIXED / 256;
  square_fixed<<<blocks, 256>>>(dx, dy);
// OUT: square_fixed<<<(blocks + 3) / 4, 256>>>(dx, dy);
  CHECK(cudaGetLastError());
  expect("square_fixed", download(dy, N_FIXED), w);

  for (int cols : {130, 256}) {
    const int rows = 37;
    auto in = values<float>((size_t)rows * cols, 12);
    std::vector<float> ws(in.size()), wo(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      ws[i] = 2.0f * in[i] + 1.0f;
      wo[i] = in[i] + 0.5f;
    }
    float *din = upload(in), *dout = upload(std::vector<float>(in.size(), 0.f));
    dim3 block(32, 8);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    scale_rows<<<grid, block>>>(rows, cols, 2.0f, din, dout);
// OUT: scale_rows<<<dim3((grid.x + 3) / 4, grid.y, grid.z), block>>>(rows, cols, 2.0f, din, dout);
    CHECK(cudaGetLastError());
    expect(cols == 130 ? "scale_rows (130 columns)" : "scale_rows (256 columns)",
           download(dout, in.size()), ws);
    offset2d<<<grid, block>>>(rows, cols, din, dout, 0.5f);
// OUT: offset2d<<<dim3((grid.x + 3) / 4, grid.y, grid.z), block>>>(rows, cols, din, dout, 0.5f);
    CHECK(cudaGetLastError());
    expect("offset2d", download(dout, in.size()), wo);
    flat2d(rows, cols, din);
  }
}

static void blocks() {
  const int n = 1000003, nb = (n + SCAN_B - 1) / SCAN_B;
  auto out = values<int>(n, 3), sums = values<int>(nb, 4);
  std::vector<int> want(out), off(out);
  for (int i = SCAN_B; i < n; ++i)
    want[i] += sums[i / SCAN_B - 1];
  // One element off: blocks start at out + 1, every vector is unaligned.
  for (int i = SCAN_B; i < n - 1; ++i)
    off[i + 1] += sums[i / SCAN_B - 1];
  int *dout = upload(out), *dsums = upload(sums);
  chunk_add<<<nb, SCAN_B>>>(dout, dsums, n);
// OUT: chunk_add<<<nb, SCAN_B / 4>>>(dout, dsums, n);
  CHECK(cudaGetLastError());
  expect("chunk_add", download(dout, n), want);
  CHECK(cudaMemcpy(dout, out.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  chunk_add<<<(n - 1 + SCAN_B - 1) / SCAN_B, SCAN_B>>>(dout + 1, dsums, n - 1);
  CHECK(cudaGetLastError());
  expect("chunk_add (offset pointer)", download(dout, n), off);

  auto f = values<float>(n, 5), bias = values<float>((n + 255) / 256, 6);
  std::vector<float> fw(f), fo(f);
  for (int i = 0; i < n; ++i)
    fw[i] += bias[i / 256];
  for (int i = 0; i < n - 1; ++i)
    fo[i + 1] += bias[i / 256];
  float *df = upload(f), *dbias = upload(bias), *dg = nullptr;
  bias_rows<<<(n + 255) / 256, 256>>>(df, dbias, n);
// OUT: bias_rows<<<(n + 255) / 256, 128>>>(df, dbias, n);
  CHECK(cudaGetLastError());
  expect("bias_rows", download(df, n), fw);
  CHECK(cudaMemcpy(df, f.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  bias_rows<<<(n - 1 + 255) / 256, 256>>>(df + 1, dbias, n - 1);
  CHECK(cudaGetLastError());
  expect("bias_rows (offset pointer)", download(df, n), fo);

  CHECK(cudaMalloc(&dg, n * sizeof(float)));
  const unsigned grid = (n + 127) / 128;
  std::vector<float> sw(n);
  for (int i = 0; i < n; ++i)
    sw[i] = f[i] * ((float)(i / 128) / grid) + 128;
  CHECK(cudaMemcpy(df, f.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  dim3 blk(128);
  block_scale<<<grid, blk>>>(df, dg, n);
// OUT: block_scale<<<grid, dim3(blk.x / 4, blk.y, blk.z)>>>(df, dg, n);
  CHECK(cudaGetLastError());
  expect("block_scale", download(dg, n), sw);
  CHECK(cudaFree(dout));
  CHECK(cudaFree(dsums));
  CHECK(cudaFree(df));
  CHECK(cudaFree(dbias));
  CHECK(cudaFree(dg));
}

int main() {
  saxpys();
  templates();
  arrays();
  pointwise();
  shapes();
  blocks();
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// The edits, applied one after another by the RUN lines above and by the
// GPU check:
// EDIT: {"kind":"vectorize","target":"saxpy_if","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"saxpy_ret","params":{"width":2}}
// EDIT: {"kind":"vectorize","target":"scale_t","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"axpby","params":{"width":2}}
// EDIT: {"kind":"vectorize","target":"mul_const","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"vadd","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"integrate","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"nn::relu","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"clamp","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"mix_bits","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"bitcount","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"square_fixed","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"scale_rows","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"offset2d","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"ramp2d","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"scale_idx","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"add_pitched","params":{"width":4}}
// EDIT: {"kind":"vectorize","target":"chunk_add","params":{"blocks":"keep","width":4}}
// EDIT: {"kind":"vectorize","target":"bias_rows","params":{"blocks":"keep","width":2}}
// EDIT: {"kind":"vectorize","target":"block_scale","params":{"blocks":"keep","width":4}}
