// all-pairs-tiling on all-pairs loops written nine ways (issue 20): an
// n-body step on AoS float4 (the own body from make_float4, a softening
// term from sqrtf, the accumulators' type a macro, #define REAL float); on
// SoA arrays x[], y[], z[], m[] behind __restrict__ with an if-block and
// the self-interaction skipped by `if (j != i)`; on float3 positions
// through a small struct built by its constructor (`Vec3 me(...)`,
// `Vec3 a{...}`, `Vec3(a, b, c) - me`); with make_float3 before a
// `while (j < n)` loop; a pairwise potential templated over the element
// type (double and float, `continue` on j == i, x[i] read inside the
// loop); a Gaussian kernel-density sum templated over the block size
// (`blockIdx.x * BLOCK + threadIdx.x`, expf); a Coulomb sum in a namespace
// launched through a macro (float2, an unsigned index); a pair-energy sum
// over a 2D grid of 1D blocks through an index helper (`j += 1`); a
// matrix-vector product reading its row through a row pointer after an
// early exit the whole grid takes for empty matrices. Sizes
// leave partial blocks and partial tiles (n = 1000, 777 samples) as well
// as aligned ones (1024, 512), and whole blocks past the end. The edits
// applied one after another compile with nvcc and the input is left as it
// was. The program checks each kernel against the CPU, so the GPU check
// (scripts/gpu-edit-family.sh) runs `eval` on the result.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms -v %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: sed -n 's|^// EDIT: ||p' %s > %t/edits.jsonl
// RUN: while read -r e; do \
// RUN:   echo "$e" > %t/e.json && \
// RUN:   clang-optiml apply %t/all.cu --edit %t/e.json -o %t/next.cu && mv %t/next.cu %t/all.cu || exit 1; \
// RUN: done < %t/edits.jsonl
// RUN: grep -v '^//' %t/all.cu | FileCheck --check-prefix=OUT %s
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -o %t/all.o %t/all.cu %}
// RUN: python3 %inputs/edit/host-run.py %t/k.cu | FileCheck --check-prefix=HOST %s
// RUN: python3 %inputs/edit/host-run.py %t/all.cu | FileCheck --check-prefix=HOST %s
// RUN: echo '{"kind":"coarsen","target":"potential","params":{"factor":4}}' > %t/co.json
// RUN: clang-optiml apply %t/k.cu --edit %t/co.json -o %t/co.cu
// RUN: grep 'potential<T><<<' %t/co.cu | FileCheck --check-prefix=COARSEN %s
// RUN: python3 %inputs/edit/host-run.py %t/co.cu | FileCheck --check-prefix=HOST %s
// RUN: cmp %s %t/k.cu
// The potential is launched with a block size known only when the program
// runs (`(n + bs - 1) / bs, bs`): the grid still covers the bound (its
// divisor is the block), so coarsen, vectorize and grid-stride apply.
// COARSEN: potential<T><<<((n + bs - 1) / bs + 3) / 4, bs>>>(dx, dy, dq, de, n);
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

#define REAL float
#define EPS2 0.05f

// WHY: all-pairs-tiling accel/loop0: every thread of a block walks j over [0, n) reading 'pos[j]'; rewrite: stage tiles of 256 elements in shared memory (threads outside the bounds help copy)
__global__ void accel(const float4 *pos, float4 *acc, int n, float eps2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float4 me = make_float4(pos[i].x, pos[i].y, pos[i].z, 0.f);
  float soft = sqrtf(eps2);
  REAL ax = 0.f, ay = 0.f, az = 0.f;
  for (int j = 0; j < n; ++j) {
    float4 o = pos[j];
    float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
    float r2 = dx * dx + dy * dy + dz * dz + soft * soft;
    float inv = rsqrtf(r2);
    float s = o.w * inv * inv * inv;
    ax += dx * s;
    ay += dy * s;
    az += dz * s;
  }
  acc[i] = make_float4(ax, ay, az, 0.f);
}
// OUT: bool [[A:active[0-9]*]] = i < n;
// OUT-NEXT: float4 me = [[A]] ? (make_float4(pos[i].x, pos[i].y, pos[i].z, 0.f)) : float4();
// OUT-NEXT: float soft = [[A]] ? (sqrtf(eps2)) : float();
// OUT-NEXT: REAL ax = 0.f, ay = 0.f, az = 0.f;
// OUT-NEXT: __shared__ float4 [[P:pos_tile[0-9]*]][128];
// OUT: if ([[A]])
// OUT-NEXT: for (int j = [[B:base[0-9]*]]; j < [[B]] + 128 && j < n; ++j) {
// OUT-NEXT: float4 o = [[P]][j - [[B]]];

// WHY: all-pairs-tiling nbody_soa/loop0: every thread of a block walks j over [0, n) reading 'x[j]', 'y[j]', 'z[j]', 'm[j]'; rewrite: stage tiles of 256 elements in shared memory (threads outside the bounds help copy)
__global__ void nbody_soa(const float *__restrict__ x,
                          const float *__restrict__ y,
                          const float *__restrict__ z,
                          const float *__restrict__ m, float *__restrict__ fx,
                          float *__restrict__ fy, float *__restrict__ fz,
                          int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < n) {
    float xi = x[i], yi = y[i], zi = z[i];
    float sx = 0.0f, sy = 0.0f, sz = 0.0f;
    for (int j = 0; j < n; j++) {
      if (j != i) {
        float dx = x[j] - xi;
        float dy = y[j] - yi;
        float dz = z[j] - zi;
        float d2 = dx * dx + dy * dy + dz * dz + EPS2;
        float w = m[j] / (d2 * sqrtf(d2));
        sx += w * dx;
        sy += w * dy;
        sz += w * dz;
      }
    }
    fx[i] = sx;
    fy[i] = sy;
    fz[i] = sz;
  }
}
// OUT: bool [[A:active[0-9]*]] = i < n;
// OUT-NEXT: float xi = [[A]] ? (x[i]) : float(), yi = [[A]] ? (y[i]) : float(), zi = [[A]] ? (z[i]) : float();
// OUT: float w = {{m_tile[0-9]*}}[j - {{base[0-9]*}}] / (d2 * sqrtf(d2));

struct Vec3 {
  float x, y, z;
  __host__ __device__ Vec3() : x(0), y(0), z(0) {}
  __host__ __device__ Vec3(float a, float b, float c) : x(a), y(b), z(c) {}
};
__device__ inline Vec3 operator-(Vec3 a, Vec3 b) {
  return Vec3(a.x - b.x, a.y - b.y, a.z - b.z);
}
__device__ inline float dot(Vec3 a, Vec3 b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}

// WHY: all-pairs-tiling nbody_struct/loop0: every thread of a block walks j over [0, n) reading 'p[j]', 'mass[j]'; rewrite: stage tiles of 256 elements in shared memory (threads outside the bounds help copy)
__global__ void nbody_struct(const float3 *p, const float *mass, Vec3 *out,
                             int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Vec3 me(p[i].x, p[i].y, p[i].z);
  Vec3 a{0.f, 0.f, 0.f};
  for (int j = 0; j < n; ++j) {
    Vec3 d = Vec3(p[j].x, p[j].y, p[j].z) - me;
    float inv = rsqrtf(dot(d, d) + EPS2);
    float s = mass[j] * inv * inv * inv;
    a.x += d.x * s;
    a.y += d.y * s;
    a.z += d.z * s;
  }
  out[i] = a;
}
// OUT: bool [[A:active[0-9]*]] = i < n;
// OUT-NEXT: Vec3 me = [[A]] ? Vec3(p[i].x, p[i].y, p[i].z) : Vec3();
// OUT-NEXT: Vec3 a{0.f, 0.f, 0.f};
// OUT-NEXT: __shared__ float3 [[P:p_tile[0-9]*]][64];
// OUT: Vec3 d = Vec3([[P]][j - [[B:base[0-9]*]]].x, [[P]][j - [[B]]].y, [[P]][j - [[B]]].z) - me;

// WHY: all-pairs-tiling nbody_while/loop0: every thread of a block walks j over [0, n) reading 'px[j]', 'py[j]', 'pz[j]', 'm[j]'; rewrite: stage tiles of 256 elements in shared memory (threads outside the bounds help copy)
__global__ void nbody_while(const float *px, const float *py, const float *pz,
                            const float *m, float3 *acc, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float3 me = make_float3(px[i], py[i], pz[i]);
  float3 a = make_float3(0.f, 0.f, 0.f);
  int j = 0;
  while (j < n) {
    float dx = px[j] - me.x, dy = py[j] - me.y, dz = pz[j] - me.z;
    float r2 = dx * dx + dy * dy + dz * dz + EPS2;
    float s = m[j] * rsqrtf(r2 * r2 * r2);
    a.x += dx * s;
    a.y += dy * s;
    a.z += dz * s;
    ++j;
  }
  acc[i] = a;
}
// OUT: int j = 0;
// OUT: for (int [[B:base[0-9]*]] = 0; [[B]] < n; [[B]] += 128) {
// OUT: while (j < [[B]] + 128 && j < n) {
// OUT: ++j;
// OUT-NEXT: }
// OUT-NEXT: __syncthreads();

// WHY: coarsen potential: one element per thread ('i < n'); 1 launch grid(s) can be divided
// WHY: all-pairs-tiling potential/loop0: every thread of a block walks j over [0, n) reading 'x[j]', 'y[j]', 'q[j]'; rewrite: stage tiles of 256 elements in shared memory (threads outside the bounds help copy)
template <typename T>
__global__ void potential(const T *x, const T *y, const T *q, T *energy,
                          int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    T e = 0;
    for (int j = 0; j < n; ++j) {
      if (j == i)
        continue;
      T dx = x[j] - x[i], dy = y[j] - y[i];
      e += q[j] / sqrt(dx * dx + dy * dy + T(0.01));
    }
    energy[i] = q[i] * e;
  }
}
// OUT: __shared__ T [[X:x_tile[0-9]*]][128];
// OUT: if (j == i)
// OUT-NEXT: continue;
// OUT-NEXT: T dx = [[X]][j - [[B:base[0-9]*]]] - x[i], dy = {{y_tile[0-9]*}}[j - [[B]]] - y[i];

// WHY: all-pairs-tiling kde/loop0: every thread of a block walks j over [0, n) reading 'samples[j]', 'weights[j]'; rewrite: stage tiles of 256 elements in shared memory (threads outside the bounds help copy)
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    kde(const float *samples, const float *weights, const float *queries,
        float *density, int n, int m, float inv2h2) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i >= m)
    return;
  float q = queries[i];
  float acc = 0.f;
  for (int j = 0; j < n; ++j) {
    float d = q - samples[j];
    acc += weights[j] * expf(-d * d * inv2h2);
  }
  density[i] = acc;
}
// OUT: int i = blockIdx.x * BLOCK + threadIdx.x;
// OUT-NEXT: bool {{active[0-9]*}} = i < m;
// OUT: for (int [[T:t[0-9]*]] = threadIdx.x; [[T]] < 256 && {{base[0-9]*}} + [[T]] < n; [[T]] += blockDim.x)

namespace sim {
// WHY: all-pairs-tiling sim::coulomb/loop0: every thread of a block walks k over [0, count) reading 'r[k]', 'charge[k]'; rewrite: stage tiles of 256 elements in shared memory (threads outside the bounds help copy)
__global__ void coulomb(const float2 *__restrict__ r,
                        const float *__restrict__ charge,
                        float *__restrict__ phi, int count) {
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < count) {
    const float2 ri = r[tid];
    float sum = 0.0f;
    for (int k = 0; k < count; ++k) {
      const float2 d = make_float2(r[k].x - ri.x, r[k].y - ri.y);
      sum += charge[k] * rsqrtf(d.x * d.x + d.y * d.y + 1e-3f);
    }
    phi[tid] = sum;
  }
}
// OUT: bool [[A:active[0-9]*]] = tid < count;
// OUT-NEXT: const float2 ri = [[A]] ? (r[tid]) : float2();
// OUT: for (int k = [[B:base[0-9]*]]; k < [[B]] + 128 && k < count; ++k) {
} // namespace sim

#define LAUNCH(kernel, items, threads, ...)                                    \
  kernel<<<((items) + (threads) - 1) / (threads), (threads)>>>(__VA_ARGS__)

__device__ __forceinline__ int global_index() {
  return (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
}

// WHY: all-pairs-tiling pair_energy/loop0: every thread of a block walks j over [0, n) reading 'pos[j]'; rewrite: stage tiles of 256 elements in shared memory (threads outside the bounds help copy)
__global__ void pair_energy(const float4 *pos, float *energy, int n) {
  int i = global_index();
  if (i >= n)
    return;
  const float4 pi = pos[i];
  float e = 0.f;
  for (int j = 0; j < n; j += 1) {
    float dx = pos[j].x - pi.x, dy = pos[j].y - pi.y, dz = pos[j].z - pi.z;
    float r2 = dx * dx + dy * dy + dz * dz;
    if (j != i)
      e += pi.w * pos[j].w * rsqrtf(r2 + EPS2);
  }
  energy[i] = 0.5f * e;
}
// OUT: int i = global_index();
// OUT-NEXT: bool [[A:active[0-9]*]] = i < n;
// OUT: for (int j = [[B:base[0-9]*]]; j < [[B]] + 256 && j < n; j += 1) {

// WHY: all-pairs-tiling gemv_rows/loop0: every thread of a block walks k over [0, cols) reading 'x[k]'; rewrite: stage tiles of 256 elements in shared memory (threads outside the bounds help copy)
__global__ void gemv_rows(const float *A, const float *x, float *y, int rows,
                          int cols) {
  if (rows == 0 || cols == 0)
    return;
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    const float *row = A + (size_t)r * cols;
    float s = 0.f;
    for (int k = 0; k < cols; ++k)
      s += row[k] * x[k];
    y[r] = s;
  }
}
// OUT: if (rows == 0 || cols == 0)
// OUT-NEXT: return;
// OUT-NEXT: int r = blockIdx.x * blockDim.x + threadIdx.x;
// OUT-NEXT: bool {{active[0-9]*}} = r < rows;
// OUT-NEXT: const float *row = A + (size_t)r * cols;
// OUT-NEXT: float s = 0.f;
// OUT-NEXT: __shared__ float [[X:x_tile[0-9]*]][256];
// OUT: s += row[k] * [[X]][k - {{base[0-9]*}}];

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
// Each value within 1e-4 of the magnitude of the terms summed into it
// (rsqrtf and expf are approximations; the edits keep each sum's order).
static void expect(const char *name, const std::vector<double> &got,
                   const std::vector<double> &want,
                   const std::vector<double> &mag) {
  double worst = 0;
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < got.size(); ++i) {
    double err = std::fabs(got[i] - want[i]);
    worst = std::max(worst, err / (mag[i] + 1e-6));
    ok = err <= 1e-4 * mag[i] + 1e-6;
  }
  printf("%s %s (worst relative error %.2e)\n", ok ? "PASS" : "FAIL", name,
         worst);
  failures += !ok;
}
static std::vector<float> values(size_t n, unsigned seed, float lo, float hi) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    unsigned h = (unsigned)(i * 2654435761u + seed * 40503u);
    h ^= h >> 13;
    v[i] = lo + (hi - lo) * (float)(h % 10007) / 10006.f;
  }
  return v;
}

// Bodies: positions in a 4-unit cube, masses in [0.5, 1.5].
struct Bodies {
  int n;
  std::vector<float> x, y, z, m;
  explicit Bodies(int count, unsigned seed)
      : n(count), x(values(count, seed, -2, 2)),
        y(values(count, seed + 1, -2, 2)), z(values(count, seed + 2, -2, 2)),
        m(values(count, seed + 3, 0.5f, 1.5f)) {}
  std::vector<float4> aos() const {
    std::vector<float4> p(n);
    for (int i = 0; i < n; ++i)
      p[i] = make_float4(x[i], y[i], z[i], m[i]);
    return p;
  }
  // Accelerations a[3 * i + c] and the magnitudes of their terms.
  void accel(double eps2, bool skipSelf, std::vector<double> &a,
             std::vector<double> &mag) const {
    a.assign(3 * n, 0.0);
    mag.assign(3 * n, 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        if (skipSelf && j == i)
          continue;
        double d[3] = {x[j] - (double)x[i], y[j] - (double)y[i],
                       z[j] - (double)z[i]};
        double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2;
        double s = m[j] / (r2 * std::sqrt(r2));
        for (int c = 0; c < 3; ++c) {
          a[3 * i + c] += d[c] * s;
          mag[3 * i + c] += std::fabs(d[c] * s);
        }
      }
  }
};

template <typename V> static std::vector<double> flat3(const std::vector<V> &v) {
  std::vector<double> out;
  for (const V &e : v) {
    out.push_back(e.x);
    out.push_back(e.y);
    out.push_back(e.z);
  }
  return out;
}

static void runNBody() {
  {
    Bodies b(1000, 1);
    std::vector<double> want, mag;
    b.accel(EPS2, false, want, mag);
    float4 *dp = upload(b.aos()), *da = upload(std::vector<float4>(b.n));
    accel<<<(b.n + 255) / 256, 256>>>(dp, da, b.n, EPS2);
    CHECK(cudaGetLastError());
    expect("accel", flat3(download(da, b.n)), want, mag);
  }
  {
    Bodies b(1024, 2);
    std::vector<double> want, mag;
    b.accel(EPS2, true, want, mag);
    float *dx = upload(b.x), *dy = upload(b.y), *dz = upload(b.z),
          *dm = upload(b.m);
    float *f = upload(std::vector<float>(3 * b.n, 0.f));
    nbody_soa<<<b.n / 256, 256>>>(dx, dy, dz, dm, f, f + b.n, f + 2 * b.n, b.n);
    CHECK(cudaGetLastError());
    auto h = download(f, 3 * b.n);
    std::vector<double> got(3 * b.n);
    for (int i = 0; i < b.n; ++i)
      for (int c = 0; c < 3; ++c)
        got[3 * i + c] = h[c * b.n + i];
    expect("nbody_soa", got, want, mag);
  }
  {
    Bodies b(1000, 3);
    std::vector<double> want, mag;
    b.accel(EPS2, false, want, mag);
    std::vector<float3> p(b.n);
    for (int i = 0; i < b.n; ++i)
      p[i] = make_float3(b.x[i], b.y[i], b.z[i]);
    float3 *dp = upload(p);
    float *dm = upload(b.m);
    Vec3 *dout = upload(std::vector<Vec3>(b.n));
    nbody_struct<<<(b.n + 127) / 128, 128>>>(dp, dm, dout, b.n);
    CHECK(cudaGetLastError());
    expect("nbody_struct", flat3(download(dout, b.n)), want, mag);
  }
  {
    Bodies b(1000, 4);
    std::vector<double> want, mag;
    b.accel(EPS2, false, want, mag);
    float *dx = upload(b.x), *dy = upload(b.y), *dz = upload(b.z),
          *dm = upload(b.m);
    float3 *da = upload(std::vector<float3>(b.n));
    nbody_while<<<(b.n + 127) / 128, 128>>>(dx, dy, dz, dm, da, b.n);
    CHECK(cudaGetLastError());
    expect("nbody_while", flat3(download(da, b.n)), want, mag);
  }
}

template <typename T> static void runPotential(const char *name, int n, int bs) {
  auto xf = values(n, 5, -3, 3), yf = values(n, 6, -3, 3),
       qf = values(n, 7, -1, 1);
  std::vector<T> x(xf.begin(), xf.end()), y(yf.begin(), yf.end()),
      q(qf.begin(), qf.end());
  std::vector<double> want(n, 0.0), mag(n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (j == i)
        continue;
      double dx = (double)x[j] - x[i], dy = (double)y[j] - y[i];
      double t = q[i] * (q[j] / std::sqrt(dx * dx + dy * dy + 0.01));
      want[i] += t;
      mag[i] += std::fabs(t);
    }
  T *dx = upload(x), *dy = upload(y), *dq = upload(q),
    *de = upload(std::vector<T>(n, T(0)));
  potential<T><<<(n + bs - 1) / bs, bs>>>(dx, dy, dq, de, n);
  CHECK(cudaGetLastError());
  auto h = download(de, n);
  expect(name, std::vector<double>(h.begin(), h.end()), want, mag);
}

static void runKde() {
  const int n = 777, m = 1000;
  const float inv2h2 = 2.0f;
  auto s = values(n, 8, -4, 4), w = values(n, 9, 0, 1),
       qs = values(m, 10, -5, 5);
  std::vector<double> want(m, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double d = (double)qs[i] - s[j];
      want[i] += w[j] * std::exp(-d * d * inv2h2);
    }
  float *ds = upload(s), *dw = upload(w), *dq = upload(qs),
        *dd = upload(std::vector<float>(m, 0.f));
  kde<128><<<(m + 127) / 128, 128>>>(ds, dw, dq, dd, n, m, inv2h2);
  CHECK(cudaGetLastError());
  auto h = download(dd, m);
  expect("kde", std::vector<double>(h.begin(), h.end()), want,
         std::vector<double>(want.begin(), want.end()));
}

static void runCoulomb() {
  const int n = 1000;
  auto xs = values(n, 11, -1, 1), ys = values(n, 12, -1, 1),
       c = values(n, 13, -1, 1);
  std::vector<float2> r(n);
  std::vector<double> want(n, 0.0), mag(n, 0.0);
  for (int i = 0; i < n; ++i)
    r[i] = make_float2(xs[i], ys[i]);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      double dx = (double)xs[k] - xs[i], dy = (double)ys[k] - ys[i];
      double t = c[k] / std::sqrt(dx * dx + dy * dy + 1e-3);
      want[i] += t;
      mag[i] += std::fabs(t);
    }
  float2 *dr = upload(r);
  float *dc = upload(c), *dphi = upload(std::vector<float>(n, 0.f));
  LAUNCH(sim::coulomb, n, 256, dr, dc, dphi, n);
  CHECK(cudaGetLastError());
  auto h = download(dphi, n);
  expect("coulomb", std::vector<double>(h.begin(), h.end()), want, mag);
}

static void runPairEnergy() {
  Bodies b(1000, 14);
  std::vector<double> want(b.n, 0.0), mag(b.n, 0.0);
  for (int i = 0; i < b.n; ++i)
    for (int j = 0; j < b.n; ++j) {
      if (j == i)
        continue;
      double dx = (double)b.x[j] - b.x[i], dy = (double)b.y[j] - b.y[i],
             dz = (double)b.z[j] - b.z[i];
      double t =
          0.5 * b.m[i] * b.m[j] / std::sqrt(dx * dx + dy * dy + dz * dz + EPS2);
      want[i] += t;
      mag[i] += std::fabs(t);
    }
  float4 *dp = upload(b.aos());
  float *de = upload(std::vector<float>(b.n, 0.f));
  // 3 x 2 blocks of 256 threads: the last two blocks hold no body.
  pair_energy<<<dim3(3, 2), 256>>>(dp, de, b.n);
  CHECK(cudaGetLastError());
  auto h = download(de, b.n);
  expect("pair_energy", std::vector<double>(h.begin(), h.end()), want, mag);
}

static void runGemv() {
  const int rows = 300, cols = 1000;
  auto A = values((size_t)rows * cols, 15, -1, 1), x = values(cols, 16, -1, 1);
  std::vector<double> want(rows, 0.0), mag(rows, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < cols; ++k) {
      want[r] += (double)A[(size_t)r * cols + k] * x[k];
      mag[r] += std::fabs((double)A[(size_t)r * cols + k] * x[k]);
    }
  float *dA = upload(A), *dx = upload(x),
        *dy = upload(std::vector<float>(rows, 0.f));
  gemv_rows<<<(rows + 63) / 64, 64>>>(dA, dx, dy, rows, cols);
  CHECK(cudaGetLastError());
  auto h = download(dy, rows);
  expect("gemv_rows", std::vector<double>(h.begin(), h.end()), want, mag);
}

int main() {
  runNBody();
  runPotential<double>("potential<double>", 1000, 256);
  runPotential<float>("potential<float>", 512, 128);
  runKde();
  runCoulomb();
  runPairEnergy();
  runGemv();
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// The edits, applied one after another by the RUN lines above and by
// scripts/gpu-edit-family.sh on the GPU:
// EDIT: {"kind":"all-pairs-tiling","target":"accel/loop0","params":{"tile":128}}
// EDIT: {"kind":"all-pairs-tiling","target":"nbody_soa/loop0","params":{"tile":256}}
// EDIT: {"kind":"all-pairs-tiling","target":"nbody_struct/loop0","params":{"tile":64}}
// EDIT: {"kind":"all-pairs-tiling","target":"nbody_while/loop0","params":{"tile":128}}
// EDIT: {"kind":"all-pairs-tiling","target":"potential/loop0","params":{"tile":128}}
// EDIT: {"kind":"all-pairs-tiling","target":"kde/loop0","params":{"tile":256}}
// EDIT: {"kind":"all-pairs-tiling","target":"sim::coulomb/loop0","params":{"tile":128}}
// EDIT: {"kind":"all-pairs-tiling","target":"pair_energy/loop0","params":{"tile":256}}
// EDIT: {"kind":"all-pairs-tiling","target":"gemv_rows/loop0","params":{"tile":256}}
