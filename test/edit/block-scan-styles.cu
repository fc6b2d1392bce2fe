// block-scan on ten block scans written from scratch in different styles:
// two buffers flipped by `1 - cur`, `cur ^= 1` or `!cur`, a temporary read
// before a barrier and added after it, `+=` or `=`, if/else, a conditional
// expression or the negated condition, the bound a constant or blockDim.x,
// the offset doubled by <<=, *=, += or `off = 2 * off`, int, unsigned,
// long long, float and double, a kernel in a namespace, a row pointer, the
// block size in a local dim3, code after the loop reading any element of
// the current buffer, two arrays behind pointers swapped after each step in
// a template, two halves of one extern array picked by `pout * len`.
// Every one is recognized and rewritten; four of them (dbuf, temp,
// xor_flip, exclusive) with items 4: each thread scans 4 consecutive
// elements, the code before and after the scan runs once for each
// original thread (an early return in a lambda), the blocks divided by 4;
// local_dim3's 64-thread block is refused for items 4. All ten
// edits applied one after another compile with nvcc, and the input is left
// as it was. The program itself checks each scan against the CPU, so the
// GPU check (scripts/gpu-edit-family.sh) runs `eval` on each edit.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: sed -n 's|^// EDIT: ||p' %s > %t/edits.jsonl
// RUN: while read -r e; do \
// RUN:   echo "$e" > %t/e.json && \
// RUN:   clang-optiml apply %t/all.cu --edit %t/e.json -o %t/next.cu && mv %t/next.cu %t/all.cu || exit 1; \
// RUN: done < %t/edits.jsonl
// RUN: grep -v '^//' %t/all.cu | FileCheck --check-prefix=OUT %s
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -o %t/all.o %t/all.cu %}
// RUN: echo '{"kind":"block-scan","target":"local_dim3","params":{"items":4}}' > %t/i.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/i.json 2>&1 | FileCheck --check-prefix=ITEMS-NOT %s
// RUN: python3 %inputs/edit/host-run.py %t/k.cu | FileCheck --check-prefix=HOST %s
// RUN: python3 %inputs/edit/host-run.py %t/all.cu | FileCheck --check-prefix=HOST %s
// RUN: cmp %s %t/k.cu
// Its kernels run on the host (host-run.py: a block's threads as fibers
// where they wait for each other), before the edits and after: every
// check passes.
// HOST-NOT: FAIL
// HOST: {{^PASS$}}
// ITEMS-NOT: items 4: launch local_dim3/launch0 uses blocks of 64 threads; 4 elements a thread need a multiple of 128

// WHY: block-scan dbuf: prefix sum of 'buf' over 'off' (10 barrier steps at blocks of 1024, double-buffered)
// WHY: block-scan temp: prefix sum of 's' over 'off' (8 barrier steps at blocks of 256)
// WHY: block-scan ternary: prefix sum of 'b' over 'd' (7 barrier steps at blocks of 128, double-buffered)
// WHY: block-scan xor_flip: prefix sum of 'buf' over 'o' (9 barrier steps at blocks of 512, double-buffered)
// WHY: block-scan not_flip: prefix sum of 'w' over 'k' (8 barrier steps at blocks of 256, double-buffered)
// WHY: block-scan ns::rows: prefix sum of 'sh' over 'off' (8 barrier steps at blocks of 256)
// WHY: block-scan local_dim3: prefix sum of 'acc' over 'stride' (6 barrier steps at blocks of 64)
// WHY: block-scan exclusive: prefix sum of 'tmp' over 'off' (8 barrier steps at blocks of 256)
// WHY: block-scan swapped: prefix sum of 'ping' over 'd' (8 barrier steps at blocks of 256, pointers 'src' and 'dst' swapped)
// WHY: block-scan halves: prefix sum of 'smem' over 'offset' (8 barrier steps at blocks of 256, double-buffered in two halves)

#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define BS 1024

// The suite's style: two buffers, if/else, the flip through a local.
__global__ void dbuf(const int *in, int *out, int n) {
  __shared__ int buf[2][BS];
  int tid = threadIdx.x;
  int i = blockIdx.x * BS + tid;
  int cur = 0;
  buf[cur][tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < BS; off <<= 1) {
    int nxt = 1 - cur;
    if (tid >= off)
      buf[nxt][tid] = buf[cur][tid] + buf[cur][tid - off];
    else
      buf[nxt][tid] = buf[cur][tid];
    cur = nxt;
    __syncthreads();
  }
  if (i < n)
    out[i] = buf[cur][tid];
}
// OUT-LABEL: void dbuf(
// OUT-NEXT: __shared__ int buf[2][BS];
// OUT-NEXT: // block-scan items=4: each thread scans 4 consecutive elements; the code before and after the scan runs once for each element's thread.
// OUT-NEXT: #pragma unroll
// OUT-NEXT: for (int [[K:k[0-9]*]] = 0; [[K]] < 4; ++[[K]]) {
// OUT-NEXT: const unsigned [[VT:vt[0-9]*]] = threadIdx.x + [[K]] * blockDim.x;
// OUT-NEXT: int tid = [[VT]];
// OUT-NEXT: int i = blockIdx.x * BS + tid;
// OUT-NEXT: int cur = 0;
// OUT-NEXT: buf[cur][tid] = i < n ? in[i] : 0;
// OUT-NEXT: }
// OUT-NEXT: __syncthreads();
// OUT-NEXT: {
// OUT-NEXT: int [[V:scan_v[0-9]*]][4];
// OUT-NEXT: #pragma unroll
// OUT-NEXT: for (int [[J:j[0-9]*]] = 0; [[J]] < 4; ++[[J]]) {
// OUT-NEXT: const unsigned [[VT]] = threadIdx.x * 4 + [[J]];
// OUT-NEXT: int tid = [[VT]];
// OUT-NEXT: int cur = 0;
// OUT-NEXT: [[V]][[[J]]] = buf[cur][tid];
// OUT: [[V]][[[J]]] += [[V]][[[J]] - 1];
// OUT: buf[cur][tid] = [[V]][[[J]]];
// OUT-NEXT: }
// OUT-NEXT: }
// OUT-NEXT: __syncthreads();
// OUT-NEXT: #pragma unroll
// OUT-NEXT: for (int [[K]] = 0; [[K]] < 4; ++[[K]]) {
// OUT-NEXT: const unsigned [[VT]] = threadIdx.x + [[K]] * blockDim.x;
// OUT-NEXT: int tid = [[VT]];
// OUT-NEXT: int i = blockIdx.x * BS + tid;
// OUT-NEXT: int cur = 0;

// One buffer, a temporary read before a barrier and added after it.
__global__ void temp(const float *in, float *out) {
  __shared__ float s[256];
  unsigned tid = threadIdx.x;
  s[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned off = 1; off < blockDim.x; off *= 2) {
    float t = 0.f;
    if (tid >= off)
      t = s[tid - off];
    __syncthreads();
    s[tid] += t;
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + tid] = s[tid];
}
// OUT-LABEL: void temp(
// OUT: s[tid] = in[blockIdx.x * (blockDim.x * 4) + tid];
// OUT: float [[T:scan_t[0-9]*]] = [[L:scan_lane[0-9]*]] < blockDim.x / 32 ? [[W:scan_warp_sums[0-9]*]][[[L]]] : static_cast<float>(0);
// OUT: out[blockIdx.x * (blockDim.x * 4) + tid] = s[tid];

// A conditional expression, `1 - c` written in place, `d += d`.
__global__ void ternary(const unsigned *in, unsigned *out) {
  __shared__ unsigned b[2][128];
  int c = 0;
  b[0][threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
  __syncthreads();
  for (int d = 1; d < 128; d += d) {
    b[1 - c][threadIdx.x] =
        b[c][threadIdx.x] + (threadIdx.x >= d ? b[c][threadIdx.x - d] : 0u);
    c = 1 - c;
    __syncthreads();
  }
  out[blockIdx.x * 128 + threadIdx.x] = b[c][threadIdx.x];
}
// OUT-LABEL: void ternary(
// OUT: unsigned int [[V:scan_v[0-9]*]] = in[blockIdx.x * 128 + threadIdx.x];
// OUT: b[0][threadIdx.x] = [[V]];

// 64-bit sums, the flip by xor, the barrier at the start of each step.
__global__ void xor_flip(const long long *in, long long *out) {
  __shared__ long long buf[2][512];
  const int t = threadIdx.x;
  int p = 0;
  buf[p][t] = in[blockIdx.x * 512 + t];
  __syncthreads();
  for (int o = 1; o < 512; o = 2 * o) {
    __syncthreads();
    buf[p ^ 1][t] = buf[p][t];
    if (t >= o)
      buf[p ^ 1][t] += buf[p][t - o];
    p ^= 1;
  }
  __syncthreads();
  out[blockIdx.x * 512 + t] = buf[p][t];
}
// OUT-LABEL: void xor_flip(
// OUT: buf[p][t] = in[blockIdx.x * 512 + t];
// OUT: long long [[V:scan_v[0-9]*]][4];
// OUT: out[blockIdx.x * 512 + t] = buf[p][t];

// Doubles, the flip by `!`, the negated condition in braces.
__global__ void not_flip(const double *in, double *out) {
  __shared__ double w[2][256];
  int tid = threadIdx.x;
  int cur = 0;
  w[cur][tid] = in[blockIdx.x * 256 + tid];
  __syncthreads();
  for (int k = 1; k < 256; k <<= 1) {
    if (tid < k) {
      w[!cur][tid] = w[cur][tid];
    } else {
      w[!cur][tid] = w[cur][tid - k] + w[cur][tid];
    }
    cur = !cur;
    __syncthreads();
  }
  out[blockIdx.x * 256 + tid] = w[cur][tid];
}
// OUT-LABEL: void not_flip(
// OUT: double [[V:scan_v[0-9]*]] = in[blockIdx.x * 256 + tid];

// In a namespace, a row pointer, the new value computed before the barrier
// and stored after it; the block total goes out after the loop.
namespace ns {
__global__ void rows(const int *in, int *out, int *totals) {
  __shared__ int sh[256];
  const int *row = in + blockIdx.x * 256;
  int lane = threadIdx.x;
  sh[lane] = row[lane];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    int v = sh[lane];
    if (off <= lane)
      v = v + sh[lane - off];
    __syncthreads();
    sh[lane] = v;
    __syncthreads();
  }
  out[blockIdx.x * 256 + lane] = sh[lane];
  if (lane == 0)
    totals[blockIdx.x] = sh[255];
}
} // namespace ns
// OUT-LABEL: void rows(
// OUT: int [[V:scan_v[0-9]*]] = row[lane];
// OUT: sh[lane] = [[V]];

// The block size in a local dim3; the offset named `stride`.
__global__ void local_dim3(const int *in, int *out) {
  __shared__ int acc[64];
  int tid = threadIdx.x;
  acc[tid] = in[blockIdx.x * 64 + tid] * 2;
  __syncthreads();
  for (int stride = 1; stride < 64; stride *= 2) {
    int add = tid >= stride ? acc[tid - stride] : 0;
    __syncthreads();
    acc[tid] += add;
    __syncthreads();
  }
  out[blockIdx.x * 64 + tid] = acc[tid];
}
// OUT-LABEL: void local_dim3(
// OUT: int [[V:scan_v[0-9]*]] = in[blockIdx.x * 64 + tid] * 2;

// An exclusive scan made from the inclusive one after the loop, reading a
// neighbour; the bounds check comes after the scan.
__global__ void exclusive(const int *in, int *out, int n) {
  __shared__ int tmp[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * 256 + tid;
  tmp[tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    int x = 0;
    if (tid >= off)
      x = tmp[tid - off];
    __syncthreads();
    tmp[tid] = tmp[tid] + x;
    __syncthreads();
  }
  if (i >= n)
    return;
  out[i] = tid == 0 ? 0 : tmp[tid - 1];
}
// OUT-LABEL: void exclusive(
// OUT: tmp[tid] = i < n ? in[i] : 0;
// OUT: tmp[tid] = [[V:scan_v[0-9]*]][[[J:j[0-9]*]]];
// OUT-NEXT: }
// OUT-NEXT: }
// OUT-NEXT: __syncthreads();
// OUT-NEXT: #pragma unroll
// OUT-NEXT: for (int [[K:k[0-9]*]] = 0; [[K]] < 4; ++[[K]]) {
// OUT-NEXT: const unsigned [[VT:vt[0-9]*]] = threadIdx.x + [[K]] * blockDim.x;
// OUT-NEXT: [&]() {
// OUT-NEXT: int tid = [[VT]];
// OUT-NEXT: int i = blockIdx.x * 256 + tid;
// OUT-NEXT: if (i >= n)
// OUT-NEXT: return;
// OUT-NEXT: out[i] = tid == 0 ? 0 : tmp[tid - 1];
// OUT-NEXT: }();

// Two arrays read and written through pointers swapped after each step
// (declared together), the block size a template parameter, the result
// read through the pointer the last step left at it. The rewrite drops
// `dst` and `pong`, which only the loop used (nvcc would warn).
template <int B>
__global__ void swapped(const float *in, float *out, float *last) {
  __shared__ float ping[B], pong[B];
  float *src = ping, *dst = pong;
  const int t = threadIdx.x;
  ping[t] = in[blockIdx.x * B + t];
  __syncthreads();
  for (int d = 1; d < B; d *= 2) {
    dst[t] = t >= d ? src[t] + src[t - d] : src[t];
    __syncthreads();
    float *tmp = src;
    src = dst;
    dst = tmp;
  }
  out[blockIdx.x * B + t] = src[t];
  if (t == 0)
    last[blockIdx.x] = src[B - 1];
}
// OUT-LABEL: void swapped(
// OUT-NEXT: __shared__ float ping[B];
// OUT-NEXT: float *src = ping;
// OUT: float [[V:scan_v[0-9]*]] = in[blockIdx.x * B + t];
// OUT: ping[t] = [[V]];
// OUT-NEXT: }
// OUT-NEXT: __syncthreads();
// OUT-NEXT: out[blockIdx.x * B + t] = src[t];

// GPU Gems 3's form: one extern array in two halves of blockDim.x, picked
// by `pout * len` and `pin * len`, both flipped at the top of each step,
// the terms of an index in any order. Only the loop reads `pin`: the
// rewrite removes its declaration (nvcc would warn that it is unused).
__global__ void halves(const int *in, int *out, int n) {
  extern __shared__ int smem[];
  const int thid = threadIdx.x;
  const int len = blockDim.x;
  const int gid = blockIdx.x * len + thid;
  int pout = 0, pin = 1;
  smem[pout * len + thid] = gid < n ? in[gid] : 0;
  __syncthreads();
  for (int offset = 1; offset < len; offset *= 2) {
    pout = 1 - pout;
    pin = 1 - pout;
    if (thid >= offset)
      smem[pout * len + thid] =
          smem[len * pin + thid] + smem[thid - offset + pin * len];
    else
      smem[pout * len + thid] = smem[pin * len + thid];
    __syncthreads();
  }
  if (gid < n)
    out[gid] = smem[pout * len + thid];
}
// OUT-LABEL: void halves(
// OUT-NOT: {{[^a-z_]pin[^a-z_0-9]}}
// OUT: int pout = 0;
// OUT-NEXT: {
// OUT-NEXT: int [[V:scan_v[0-9]*]] = gid < n ? in[gid] : 0;
// OUT: smem[pout * len + thid] = [[V]];
// OUT-NEXT: }
// OUT-NEXT: __syncthreads();
// OUT-NEXT: if (gid < n)
// OUT-NEXT: out[gid] = smem[pout * len + thid];
// OUT-NOT: {{[^a-z_]pin[^a-z_0-9]}}

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      printf("CUDA error %s at line %d\n", cudaGetErrorString(e), __LINE__);    \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

template <class T> static T *upload(const std::vector<T> &h) {
  T *d = nullptr;
  CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class T> static std::vector<T> download(const T *d, size_t n) {
  std::vector<T> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

static int failures = 0;

// Inclusive scans of blocks of \p bs elements of \p in (times \p scale).
template <class T>
static void expect(const char *name, const std::vector<T> &in,
                   const std::vector<T> &got, size_t bs, T scale = T(1)) {
  for (size_t b = 0; b * bs < in.size(); ++b) {
    T sum = 0;
    for (size_t j = b * bs; j < (b + 1) * bs && j < in.size(); ++j) {
      sum += in[j] * scale;
      double d = (double)got[j] - (double)sum;
      if (d > 1e-3 * (1 + (sum < 0 ? -sum : sum)) || d < -1e-3 * (1 + (sum < 0 ? -sum : sum))) {
        printf("%s: element %zu is %g, expected %g\n", name, j,
               (double)got[j], (double)sum);
        ++failures;
        return;
      }
    }
  }
}

int main() {
  const int blocks = 96;
  {
    int n = blocks * BS - 300;
    std::vector<int> h(n);
    for (int i = 0; i < n; ++i)
      h[i] = (i * 7919) % 13 - 6;
    int *in = upload(h), *out = nullptr;
    CHECK(cudaMalloc(&out, n * sizeof(int)));
    dbuf<<<(n + BS - 1) / BS, BS>>>(in, out, n);
    CHECK(cudaGetLastError());
    expect("dbuf", h, download(out, n), BS);
  }
  {
    std::vector<float> h(blocks * 256);
    for (size_t i = 0; i < h.size(); ++i)
      h[i] = (float)((i * 31) % 17) * 0.25f;
    float *in = upload(h), *out = nullptr;
    CHECK(cudaMalloc(&out, h.size() * sizeof(float)));
    temp<<<blocks, 256>>>(in, out);
    CHECK(cudaGetLastError());
    expect("temp", h, download(out, h.size()), 256);
  }
  {
    std::vector<unsigned> h(blocks * 128);
    for (size_t i = 0; i < h.size(); ++i)
      h[i] = (unsigned)(i * 2654435761u) >> 20;
    unsigned *in = upload(h), *out = nullptr;
    CHECK(cudaMalloc(&out, h.size() * sizeof(unsigned)));
    ternary<<<blocks, 128>>>(in, out);
    CHECK(cudaGetLastError());
    expect("ternary", h, download(out, h.size()), 128);
  }
  {
    std::vector<long long> h(blocks * 512);
    for (size_t i = 0; i < h.size(); ++i)
      h[i] = (long long)(i % 1000) * 1000003LL - 400000000LL;
    long long *in = upload(h), *out = nullptr;
    CHECK(cudaMalloc(&out, h.size() * sizeof(long long)));
    xor_flip<<<blocks, 512>>>(in, out);
    CHECK(cudaGetLastError());
    expect("xor_flip", h, download(out, h.size()), 512);
  }
  {
    std::vector<double> h(blocks * 256);
    for (size_t i = 0; i < h.size(); ++i)
      h[i] = 1.0 / (1.0 + (double)(i % 97));
    double *in = upload(h), *out = nullptr;
    CHECK(cudaMalloc(&out, h.size() * sizeof(double)));
    not_flip<<<blocks, 256>>>(in, out);
    CHECK(cudaGetLastError());
    expect("not_flip", h, download(out, h.size()), 256);
  }
  {
    std::vector<int> h(blocks * 256);
    for (size_t i = 0; i < h.size(); ++i)
      h[i] = (int)(i % 11) - 5;
    int *in = upload(h), *out = nullptr, *totals = nullptr;
    CHECK(cudaMalloc(&out, h.size() * sizeof(int)));
    CHECK(cudaMalloc(&totals, blocks * sizeof(int)));
    ns::rows<<<blocks, 256>>>(in, out, totals);
    CHECK(cudaGetLastError());
    expect("rows", h, download(out, h.size()), 256);
  }
  {
    std::vector<int> h(blocks * 64);
    for (size_t i = 0; i < h.size(); ++i)
      h[i] = (int)(i % 5);
    int *in = upload(h), *out = nullptr;
    CHECK(cudaMalloc(&out, h.size() * sizeof(int)));
    dim3 block(64);
    dim3 grid(blocks);
    local_dim3<<<grid, block>>>(in, out);
    CHECK(cudaGetLastError());
    expect("local_dim3", h, download(out, h.size()), 64, 2);
  }
  {
    int n = blocks * 256 - 17;
    std::vector<int> h(n);
    for (int i = 0; i < n; ++i)
      h[i] = i % 9;
    int *in = upload(h), *out = nullptr;
    CHECK(cudaMalloc(&out, n * sizeof(int)));
    exclusive<<<(n + 255) / 256, 256>>>(in, out, n);
    CHECK(cudaGetLastError());
    std::vector<int> got = download(out, n);
    // got[i] is the sum of its block's elements before i.
    for (int i = 0; i < n; ++i) {
      int before = 0;
      for (int j = i - i % 256; j < i; ++j)
        before += h[j];
      if (got[i] != before) {
        printf("exclusive: element %d is %d, expected %d\n", i, got[i], before);
        ++failures;
        break;
      }
    }
  }
  {
    std::vector<float> h(blocks * 256);
    for (size_t i = 0; i < h.size(); ++i)
      h[i] = (float)(i % 13) * 0.5f;
    float *in = upload(h), *out = nullptr, *last = nullptr;
    CHECK(cudaMalloc(&out, h.size() * sizeof(float)));
    CHECK(cudaMalloc(&last, blocks * sizeof(float)));
    swapped<256><<<blocks, 256>>>(in, out, last);
    CHECK(cudaGetLastError());
    expect("swapped", h, download(out, h.size()), 256);
  }
  {
    int n = blocks * 256 - 40;
    std::vector<int> h(n);
    for (int i = 0; i < n; ++i)
      h[i] = (i * 37) % 23 - 11;
    int *in = upload(h), *out = nullptr;
    CHECK(cudaMalloc(&out, n * sizeof(int)));
    halves<<<(n + 255) / 256, 256, 2 * 256 * sizeof(int)>>>(in, out, n);
    CHECK(cudaGetLastError());
    expect("halves", h, download(out, n), 256);
  }
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// The edits, applied one after another by the RUN lines above and by
// scripts/gpu-edit-family.sh on the GPU:
// EDIT: {"kind":"block-scan","target":"dbuf","params":{"items":4}}
// EDIT: {"kind":"block-scan","target":"temp","params":{"items":4}}
// EDIT: {"kind":"block-scan","target":"ternary"}
// EDIT: {"kind":"block-scan","target":"xor_flip","params":{"items":4}}
// EDIT: {"kind":"block-scan","target":"not_flip"}
// EDIT: {"kind":"block-scan","target":"ns::rows"}
// EDIT: {"kind":"block-scan","target":"local_dim3"}
// EDIT: {"kind":"block-scan","target":"exclusive","params":{"items":4}}
// EDIT: {"kind":"block-scan","target":"swapped"}
// EDIT: {"kind":"block-scan","target":"halves"}
