// privatize-atomics on histograms written twelve ways: a 256-bin byte
// histogram in an if-block (16-byte words, one column per lane; one launch
// on an unaligned pointer); int keys binned by `key % nbins`, nbins a
// runtime argument, behind an early return (bins given); a grid-stride
// `for` over unsigned shorts (`v[i] >> 10`, __restrict__) and one written
// as a `while` with a stride variable; bins as a template parameter
// (`% BINS`, two instantiations); a weighted histogram (float weights); a
// bin from a pure inline `__device__` helper that clamps with min/max, and
// one from `min((int)(v * 64.f), 63)`, not bounded below (bins given); a
// kernel in a namespace counting into unsigned long long through a launch
// macro; a 2D grid of 1D blocks (blocks counted row by row); an AoS field
// (`pts[i].cls % NCLS`); a 2D histogram of float2 points (`by * 8 + bx`).
// The edits applied one after another compile with nvcc and the input is
// left as it was. The program checks each kernel against the CPU (the
// weights are multiples of 1/8, so the float sums are exact in any order),
// so the GPU check (scripts/gpu-edit-family.sh) runs `eval` on the result.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms -v %t/k.cu | FileCheck --check-prefix=WHY %s
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

#define LAUNCH(kernel, grid, block, ...) kernel<<<grid, block>>>(__VA_ARGS__)

// WHY: privatize-atomics byte_hist: 1 atomicAdd into 'hist' (256 unsigned int elements, bounded by the index)
__global__ void byte_hist(const unsigned char *data, unsigned int *hist,
                          int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(&hist[data[i]], 1u);
  }
}
// OUT-LABEL: void byte_hist(
// OUT: __shared__ unsigned int {{hist_private[0-9]*}}[256][32];
// OUT: uint4 {{data_v[0-9]*}} = reinterpret_cast<const uint4 *>(data)[{{v[0-9]*}}];
// OUT: atomicAdd(&{{hist_private[0-9]*}}[{{data_e[0-9]*}}[{{e[0-9]*}}]][threadIdx.x % 32], 1u);
// OUT: for (int i = {{scalar_from[0-9]*}} + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
// OUT-NEXT: atomicAdd(&{{hist_private[0-9]*}}[data[i]][threadIdx.x % 32], 1u);

// WHY: not privatize-atomics key_mod_hist: the size of 'counts' is not known at compile time: the index 'key % nbins' is not bounded by its type, a constant mask, a modulus or a clamp such as 'min(max(b, 0), 63)'; give params.bins to privatize that many elements
__global__ void key_mod_hist(const int *keys, int *counts, int n, int nbins) {
  const int tid = threadIdx.x + blockIdx.x * blockDim.x;
  if (tid >= n)
    return;
  int key = keys[tid];
  atomicAdd(&counts[key % nbins], 1);
}
// OUT-LABEL: void key_mod_hist(
// OUT: __shared__ int {{counts_private[0-9]*}}[64];
// OUT: for (int tid = threadIdx.x + blockIdx.x * blockDim.x; tid < n; tid += blockDim.x * gridDim.x) {
// OUT-NEXT: int key = keys[tid];
// OUT-NEXT: ((size_t)(key % nbins) < 64 ? atomicAdd(&{{counts_private[0-9]*}}[key % nbins], 1) : atomicAdd(&counts[key % nbins], 1));

// WHY: privatize-atomics stride_for: 1 atomicAdd into 'h' (64 unsigned int elements, bounded by the index)
__global__ void stride_for(const unsigned short *__restrict__ v,
                           unsigned *__restrict__ h, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)blockDim.x * gridDim.x)
    atomicAdd(h + (v[i] >> 10), 1u);
}
// OUT-LABEL: void stride_for(
// OUT: __shared__ unsigned int {{h_private[0-9]*}}[8][64];
// OUT: atomicAdd({{h_private[0-9]*}}[threadIdx.x / 32] + ({{v_e[0-9]*}}[{{e[0-9]*}}] >> 10), 1u);
// OUT: for (size_t i = {{scalar_from[0-9]*}} + blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd({{h_private[0-9]*}}[threadIdx.x / 32] + (v[i] >> 10), 1u);

// WHY: privatize-atomics stride_while: 1 atomicAdd into 'bins' (64 int elements, bounded by the index)
__global__ void stride_while(const int *in, int *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = blockDim.x * gridDim.x;
  while (i < n) {
    atomicAdd(&bins[in[i] & 63], 1);
    i += stride;
  }
}
// OUT-LABEL: void stride_while(
// OUT: __shared__ int {{bins_private[0-9]*}}[64];
// OUT: while (i < n) {
// OUT-NEXT: atomicAdd(&{{bins_private[0-9]*}}[in[i] & 63], 1);

// WHY: privatize-atomics tmpl_hist: 1 atomicAdd into 'hist' (100 unsigned int elements, bounded by the index)
template <int BINS, typename T>
__global__ void tmpl_hist(const T *v, unsigned *hist, int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < n)
    atomicAdd(hist + (unsigned)v[i] % BINS, 1u);
}
// OUT-LABEL: void tmpl_hist(
// OUT: __shared__ unsigned int {{hist_private[0-9]*}}[100];
// OUT: atomicAdd({{hist_private[0-9]*}} + (unsigned)v[i] % BINS, 1u);

// WHY: privatize-atomics weighted_hist: 1 atomicAdd into 'sums' (16 float elements, bounded by the index)
__global__ void weighted_hist(const unsigned char *cls, const float *w,
                              float *sums, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(sums + cls[i] % 16, w[i]);
}
// OUT-LABEL: void weighted_hist(
// OUT: __shared__ float {{sums_private[0-9]*}}[16];
// OUT: atomicAdd({{sums_private[0-9]*}} + cls[i] % 16, w[i]);

#define NB 24
__device__ __forceinline__ int bin_of(float x, float lo, float scale) {
  return min(max((int)floorf((x - lo) * scale), 0), NB - 1);
}

// WHY: privatize-atomics helper_hist: 1 atomicAdd into 'hist' (24 int elements, bounded by the index)
__global__ void helper_hist(const float *x, int *hist, int n, float lo,
                            float scale) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const int b = bin_of(x[i], lo, scale);
    atomicAdd(&hist[b], 1);
  }
}
// OUT-LABEL: void helper_hist(
// OUT: __shared__ int {{hist_private[0-9]*}}[8][24];
// OUT: const int b = bin_of(x[i], lo, scale);
// OUT-NEXT: atomicAdd(&{{hist_private[0-9]*}}[threadIdx.x / 32][b], 1);

// WHY: not privatize-atomics clamp_hist: the size of 'hist' is not known at compile time: the index 'min((int)(v[i] * 64.f), 63)' is not bounded by its type, a constant mask, a modulus or a clamp such as 'min(max(b, 0), 63)'; give params.bins to privatize that many elements
__global__ void clamp_hist(const float *v, unsigned *hist, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&hist[min((int)(v[i] * 64.f), 63)], 1u);
}
// OUT-LABEL: void clamp_hist(
// OUT: ((size_t)(min((int)(v[i] * 64.f), 63)) < 64 ? atomicAdd(&{{hist_private[0-9]*}}[min((int)(v[i] * 64.f), 63)], 1u) : atomicAdd(&hist[min((int)(v[i] * 64.f), 63)], 1u));

namespace stats {
// WHY: privatize-atomics stats::label_counts: 1 atomicAdd into 'counts' (8 unsigned long long elements, bounded by the index)
__global__ void label_counts(const int *__restrict__ labels,
                             unsigned long long *__restrict__ counts, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&counts[labels[i] & 7], 1ULL);
}
// OUT-LABEL: void label_counts(
// OUT: __shared__ unsigned long long {{counts_private[0-9]*}}[8][32];
// OUT: atomicAdd(&{{counts_private[0-9]*}}[labels[i] & 7][threadIdx.x % 32], 1ULL);
} // namespace stats

// WHY: privatize-atomics hist_grid2d: 1 atomicAdd into 'hist' (16 unsigned int elements, bounded by the index)
__global__ void hist_grid2d(const unsigned char *img, unsigned *hist,
                            int npix) {
  int block = blockIdx.y * gridDim.x + blockIdx.x;
  int idx = block * blockDim.x + threadIdx.x;
  if (idx < npix)
    atomicAdd(&hist[img[idx] >> 4], 1u);
}
// OUT-LABEL: void hist_grid2d(
// OUT: int block = blockIdx.y * gridDim.x + blockIdx.x;
// OUT: atomicAdd(&{{hist_private[0-9]*}}[img[idx] >> 4], 1u);

#define NCLS 12
struct Particle {
  float x, y, z;
  unsigned cls;
};

// WHY: privatize-atomics species_hist: 1 atomicAdd into 'counts' (12 int elements, bounded by the index)
__global__ void species_hist(const Particle *pts, int *counts, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    atomicAdd(&counts[pts[i].cls % NCLS], 1);
}
// OUT-LABEL: void species_hist(
// OUT: __shared__ int {{counts_private[0-9]*}}[12][32];
// OUT: atomicAdd(&{{counts_private[0-9]*}}[pts[i].cls % NCLS][threadIdx.x % 32], 1);

// WHY: privatize-atomics hist2d: 1 atomicAdd into 'cells' (64 unsigned int elements, bounded by the index)
__global__ void hist2d(const float2 *pts, unsigned *cells, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float2 p = pts[i];
    int bx = min(max((int)(p.x * 8.0f), 0), 7);
    int by = min(max((int)(p.y * 8.0f), 0), 7);
    atomicAdd(&cells[by * 8 + bx], 1u);
  }
}
// OUT-LABEL: void hist2d(
// OUT: __shared__ unsigned int {{cells_private[0-9]*}}[64];
// OUT: atomicAdd(&{{cells_private[0-9]*}}[by * 8 + bx], 1u);

template <typename T> T *upload(const std::vector<T> &h) {
  T *d = nullptr;
  CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <typename T> T *zeros(size_t n) {
  T *d = nullptr;
  CHECK(cudaMalloc(&d, n * sizeof(T)));
  CHECK(cudaMemset(d, 0, n * sizeof(T)));
  return d;
}
template <typename T> std::vector<T> download(const T *d, size_t n) {
  std::vector<T> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(cudaFree((void *)d));
  return h;
}
static int failures = 0;
// Counts compare exactly; sums within a relative tolerance (reassociation).
template <typename T>
void expect(const char *name, const std::vector<T> &got,
            const std::vector<T> &want, double tol = 0) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double d = std::fabs((double)got[i] - (double)want[i]);
    worst = std::max(worst, d / std::max(1.0, std::fabs((double)want[i])));
  }
  bool ok = worst <= tol;
  printf("%s %s\n", ok ? "PASS" : "FAIL", name);
  failures += !ok;
}
static unsigned hash(unsigned i, unsigned seed) {
  unsigned x = i * 2654435761u + seed * 40503u;
  return (x ^ (x >> 15)) * 2246822519u >> 7;
}

int main() {
  // Byte histogram: an aligned input of 5003 bytes and an unaligned one.
  {
    const int n = 5003;
    std::vector<unsigned char> data(n);
    for (int i = 0; i < n; ++i)
      data[i] = (unsigned char)hash(i, 1);
    unsigned char *d = upload(data);
    for (int off : {0, 3}) {
      std::vector<unsigned> want(256, 0);
      for (int i = off; i < n; ++i)
        ++want[data[i]];
      unsigned *h = zeros<unsigned>(256);
      byte_hist<<<(n - off + 255) / 256, 256>>>(d + off, h, n - off);
      CHECK(cudaGetLastError());
      expect(off ? "byte_hist (unaligned)" : "byte_hist", download(h, 256),
             want);
    }
  }
  // Keys modulo a runtime bin count.
  {
    const int n = 4099, nbins = 50;
    std::vector<int> keys(n);
    std::vector<int> want(nbins, 0);
    for (int i = 0; i < n; ++i) {
      keys[i] = (int)(hash(i, 2) % 100000);
      ++want[keys[i] % nbins];
    }
    int *d = upload(keys), *c = zeros<int>(nbins);
    key_mod_hist<<<(n + 127) / 128, 128>>>(d, c, n, nbins);
    CHECK(cudaGetLastError());
    expect("key_mod_hist", download(c, nbins), want);
  }
  // Grid-stride loops written by hand: for and while.
  {
    const size_t n = 7001;
    std::vector<unsigned short> v(n);
    std::vector<unsigned> want(64, 0);
    for (size_t i = 0; i < n; ++i) {
      v[i] = (unsigned short)hash((unsigned)i, 3);
      ++want[v[i] >> 10];
    }
    unsigned short *d = upload(v);
    unsigned *h = zeros<unsigned>(64);
    stride_for<<<6, 128>>>(d, h, n);
    // OUT: stride_for<<<6, 256>>>(d, h, n);
    CHECK(cudaGetLastError());
    expect("stride_for", download(h, 64), want);
  }
  {
    const int n = 3333;
    std::vector<int> in(n);
    std::vector<int> want(64, 0);
    for (int i = 0; i < n; ++i) {
      in[i] = (int)hash(i, 4) - (1 << 24);
      ++want[in[i] & 63];
    }
    int *d = upload(in), *b = zeros<int>(64);
    stride_while<<<5, 96>>>(d, b, n);
    CHECK(cudaGetLastError());
    expect("stride_while", download(b, 64), want);
  }
  // Bins as a template parameter, two instantiations.
  {
    const int n = 2500;
    std::vector<int> a(n);
    std::vector<unsigned short> s(n);
    std::vector<unsigned> want32(32, 0), want100(100, 0);
    for (int i = 0; i < n; ++i) {
      a[i] = (int)hash(i, 5);
      s[i] = (unsigned short)hash(i, 6);
      ++want32[(unsigned)a[i] % 32];
      ++want100[(unsigned)s[i] % 100];
    }
    int *da = upload(a);
    unsigned short *ds = upload(s);
    unsigned *h32 = zeros<unsigned>(32), *h100 = zeros<unsigned>(100);
    tmpl_hist<32, int><<<(n + 255) / 256, 256>>>(da, h32, n);
    tmpl_hist<100, unsigned short><<<(n + 63) / 64, 64>>>(ds, h100, n);
    CHECK(cudaGetLastError());
    expect("tmpl_hist<32, int>", download(h32, 32), want32);
    expect("tmpl_hist<100, unsigned short>", download(h100, 100), want100);
  }
  // Weighted: weights k / 8, so every order of the sums is exact.
  {
    const int n = 6007;
    std::vector<unsigned char> cls(n);
    std::vector<float> w(n), want(16, 0.f);
    for (int i = 0; i < n; ++i) {
      cls[i] = (unsigned char)hash(i, 7);
      w[i] = (float)(hash(i, 8) % 16) / 8.0f;
      want[cls[i] % 16] += w[i];
    }
    unsigned char *dc = upload(cls);
    float *dw = upload(w), *sums = zeros<float>(16);
    weighted_hist<<<(n + 255) / 256, 256>>>(dc, dw, sums, n);
    CHECK(cudaGetLastError());
    expect("weighted_hist", download(sums, 16), want, 1e-5);
  }
  // Bins from a helper and from min(): values in [-0.5, 1.5).
  {
    const int n = 4500;
    const float lo = -0.25f, scale = 16.0f;
    std::vector<float> x(n);
    std::vector<int> want(NB, 0);
    std::vector<unsigned> want64(64, 0);
    for (int i = 0; i < n; ++i) {
      x[i] = (float)(hash(i, 9) % 4096) / 2048.0f - 0.5f;
      int b = (int)std::floor((x[i] - lo) * scale);
      ++want[std::min(std::max(b, 0), NB - 1)];
    }
    std::vector<float> v(n);
    for (int i = 0; i < n; ++i) {
      v[i] = (float)(hash(i, 10) % 1000) / 999.0f;
      ++want64[std::min((int)(v[i] * 64.f), 63)];
    }
    float *dx = upload(x), *dv = upload(v);
    int *h = zeros<int>(NB);
    unsigned *h64 = zeros<unsigned>(64);
    helper_hist<<<(n + 255) / 256, 256>>>(dx, h, n, lo, scale);
    clamp_hist<<<(n + 255) / 256, 256>>>(dv, h64, n);
    CHECK(cudaGetLastError());
    expect("helper_hist", download(h, NB), want);
    expect("clamp_hist", download(h64, 64), want64);
  }
  // unsigned long long counts, through a launch macro.
  {
    const int n = 3001;
    std::vector<int> labels(n);
    std::vector<unsigned long long> want(8, 0);
    for (int i = 0; i < n; ++i) {
      labels[i] = (int)(hash(i, 11) % 1000);
      ++want[labels[i] & 7];
    }
    int *dl = upload(labels);
    unsigned long long *c = zeros<unsigned long long>(8);
    LAUNCH(stats::label_counts, (n + 127) / 128, 128, dl, c, n);
    // OUT: LAUNCH(stats::label_counts, ((n + 127) / 128) < 1056 ? ((n + 127) / 128) : 1056, 128, dl, c, n);
    CHECK(cudaGetLastError());
    expect("stats::label_counts", download(c, 8), want);
  }
  // A 2D grid of 1D blocks, counted row by row (more blocks than needed).
  {
    const int npix = 9000, nblocks = (npix + 255) / 256;
    std::vector<unsigned char> img(npix);
    std::vector<unsigned> want(16, 0);
    for (int i = 0; i < npix; ++i) {
      img[i] = (unsigned char)hash(i, 12);
      ++want[img[i] >> 4];
    }
    unsigned char *d = upload(img);
    unsigned *h = zeros<unsigned>(16);
    dim3 grid(8, (nblocks + 7) / 8);
    hist_grid2d<<<grid, 256>>>(d, h, npix);
    // OUT: hist_grid2d<<<grid, 256>>>(d, h, npix);
    CHECK(cudaGetLastError());
    expect("hist_grid2d", download(h, 16), want);
  }
  // Array of structures.
  {
    const int n = 2049;
    std::vector<Particle> pts(n);
    std::vector<int> want(NCLS, 0);
    for (int i = 0; i < n; ++i) {
      pts[i] = {(float)i, 0.5f, -1.f, hash(i, 13)};
      ++want[pts[i].cls % NCLS];
    }
    Particle *d = upload(pts);
    int *c = zeros<int>(NCLS);
    species_hist<<<4, 128>>>(d, c, n);
    // OUT: species_hist<<<4, 128>>>(d, c, n);
    CHECK(cudaGetLastError());
    expect("species_hist", download(c, NCLS), want);
  }
  // 2D histogram of float2 points in [-0.25, 1.25)^2.
  {
    const int n = 3007;
    std::vector<float2> pts(n);
    std::vector<unsigned> want(64, 0);
    for (int i = 0; i < n; ++i) {
      pts[i].x = (float)(hash(i, 14) % 1536) / 1024.0f - 0.25f;
      pts[i].y = (float)(hash(i, 15) % 1536) / 1024.0f - 0.25f;
      int bx = std::min(std::max((int)(pts[i].x * 8.0f), 0), 7);
      int by = std::min(std::max((int)(pts[i].y * 8.0f), 0), 7);
      ++want[by * 8 + bx];
    }
    float2 *d = upload(pts);
    unsigned *c = zeros<unsigned>(64);
    hist2d<<<(n + 127) / 128, 128>>>(d, c, n);
    CHECK(cudaGetLastError());
    expect("hist2d", download(c, 64), want);
  }
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// The edits, applied one after another by the RUN lines above and by
// scripts/gpu-edit-family.sh on the GPU:
// EDIT: {"kind":"privatize-atomics","target":"byte_hist","params":{"copies":"lane","vector_bytes":16}}
// EDIT: {"kind":"privatize-atomics","target":"key_mod_hist","params":{"bins":64}}
// EDIT: {"kind":"privatize-atomics","target":"stride_for","params":{"copies":"warp","vector_bytes":8}}
// EDIT: {"kind":"privatize-atomics","target":"stride_while"}
// EDIT: {"kind":"privatize-atomics","target":"tmpl_hist"}
// EDIT: {"kind":"privatize-atomics","target":"weighted_hist"}
// EDIT: {"kind":"privatize-atomics","target":"helper_hist","params":{"copies":"warp"}}
// EDIT: {"kind":"privatize-atomics","target":"clamp_hist","params":{"bins":64}}
// EDIT: {"kind":"privatize-atomics","target":"stats::label_counts","params":{"copies":"lane"}}
// EDIT: {"kind":"privatize-atomics","target":"hist_grid2d"}
// EDIT: {"kind":"privatize-atomics","target":"species_hist","params":{"copies":"lane","max_blocks":64}}
// EDIT: {"kind":"privatize-atomics","target":"hist2d"}
