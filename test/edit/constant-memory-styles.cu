// constant-memory on small read-only arrays read at indices the same for
// every thread, written in four styles: a 7x7 filter in loops with macro
// bounds, launched inside a lambda on one line (the suite's shape); a 1D
// 9-tap filter whose loop runs from -R to R, with an early return and a
// launch on a stream; polynomial coefficients in double through an `<=`
// loop, the kernel declared before main and defined after it, launched in a
// loop; a 5x5 filter in a namespace whose index is a local, with a lookup
// table read behind `if (k >= 0)`; a template whose radius is a template
// parameter, instantiated twice (the array takes the larger window, each
// launch copies what its instantiation reads); a 3x3 filter read through a
// row pointer `wrow = k3 + ky * 3` (the parameter is renamed where the
// pointer is made). Each gets a __constant__ array before
// its first declaration, its reads renamed, and a copy in the launch's
// stream before each launch; the four edits applied one after another
// compile with nvcc and the input is left as it was. The program checks
// each kernel against the CPU, so the GPU check
// (scripts/gpu-edit-family.sh) runs `eval` on the result.
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
// RUN: python3 %inputs/edit/host-run.py %t/k.cu | FileCheck --check-prefix=HOST %s
// RUN: python3 %inputs/edit/host-run.py %t/all.cu | FileCheck --check-prefix=HOST %s
// RUN: cmp %s %t/k.cu
// Its kernels run on the host thread by thread (host-run.py), before the
// edits and after: every check passes.
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

#define K 7
#define RAD (K / 2)

// WHY: constant-memory conv: 'filt' is read at 1 place(s), at indices the same for every thread within [0, 49)
// WHY: try {"kind":"constant-memory","target":"conv","params":{"param":"filt"}}
__global__ void conv(int h, int w, const float *in, const float *filt,
                     float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float sum = 0.f;
    for (int ky = 0; ky < K; ++ky)
      for (int kx = 0; kx < K; ++kx) {
        int iy = y + ky - RAD, ix = x + kx - RAD;
        if (iy >= 0 && iy < h && ix >= 0 && ix < w)
          sum += in[(size_t)iy * w + ix] * filt[ky * K + kx];
      }
    out[(size_t)y * w + x] = sum;
  }
}
// OUT:      __constant__ float [[FILT:optiml_c_filt[0-9]*]][49];
// OUT-EMPTY:
// OUT-NEXT: __global__ void conv(int h, int w, const float *in, const float *filt,
// OUT:          sum += in[(size_t)iy * w + ix] * [[FILT]][ky * K + kx];

#define R 4
// WHY: constant-memory row9: 'taps' is read at 1 place(s), at indices the same for every thread within [0, 9)
__global__ void row9(const float *__restrict__ src, float *__restrict__ dst,
                     const float *__restrict__ taps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float acc = 0;
#pragma unroll
  for (int t = -R; t <= R; t++) {
    int j = min(max(i + t, 0), n - 1);
    acc += taps[t + R] * src[j];
  }
  dst[i] = acc;
}
// OUT:      __constant__ float [[TAPS:optiml_c_taps[0-9]*]][9];
// OUT:          acc += [[TAPS]][t + R] * src[j];
// OUT:      __constant__ double [[COEF:optiml_c_coef[0-9]*]][6];
// OUT-EMPTY:
// OUT-NEXT: __global__ void poly(int n, const double *x, const double *coef, double *y);

__global__ void poly(int n, const double *x, const double *coef, double *y);

namespace img {
// WHY: constant-memory img::blur5: 'wts' is read at 1 place(s), at indices the same for every thread within [0, 25)
__global__ void blur5(const float *in, const float *wts, const int *lut,
                      float *out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  float s = 0.f;
  for (int dy = 0; dy < 5; ++dy)
    for (int dx = 0; dx < 5; ++dx) {
      const int tap = dy * 5 + dx;
      int yy = min(max(y + dy - 2, 0), h - 1);
      int xx = min(max(x + dx - 2, 0), w - 1);
      s += wts[tap] * in[yy * w + xx];
    }
  int bonus = 0;
  for (int i = 0; i < 4; ++i) {
    int k = i - 1;
    if (k >= 0)
      bonus += lut[k];
  }
  out[y * w + x] = s + bonus;
}
} // namespace img
// OUT:      __constant__ float [[WTS:optiml_c_wts[0-9]*]][25];
// OUT:      __constant__ int [[LUT:optiml_c_lut[0-9]*]][3];
// OUT:          s += [[WTS]][tap] * in[yy * w + xx];
// OUT:            bonus += [[LUT]][k];

namespace tmpl {
// WHY: constant-memory tmpl::smooth: 'taps' is read at 1 place(s), at indices the same for every thread within [0, 25)
template <int RR>
__global__ void smooth(const float *src, const float *taps, float *dst, int w,
                       int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  constexpr int D = 2 * RR + 1;
  float acc = 0.f;
  for (int dy = -RR; dy <= RR; ++dy)
    for (int dx = -RR; dx <= RR; ++dx) {
      int yy = min(max(y + dy, 0), h - 1), xx = min(max(x + dx, 0), w - 1);
      acc += src[yy * w + xx] * taps[(dy + RR) * D + (dx + RR)];
    }
  dst[y * w + x] = acc;
}
} // namespace tmpl
// OUT:      __constant__ float [[STAPS:optiml_c_taps[0-9]*]][25];
// OUT-EMPTY:
// OUT-NEXT: template <int RR>
// OUT:          acc += src[yy * w + xx] * [[STAPS]][(dy + RR) * D + (dx + RR)];

// WHY: constant-memory rowptr: 'k3' is read at 1 place(s), at indices the same for every thread within [0, 9)
__global__ void rowptr(const float *in, const float *k3, float *out, int w,
                       int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float s = 0.f;
    for (int ky = 0; ky < 3; ++ky) {
      const float *row = in + min(max(y + ky - 1, 0), h - 1) * w;
      const float *wrow = k3 + ky * 3;
      for (int kx = 0; kx < 3; ++kx)
        s += row[min(max(x + kx - 1, 0), w - 1)] * wrow[kx];
    }
    out[y * w + x] = s;
  }
}
// OUT:      __constant__ float [[K3:optiml_c_k3[0-9]*]][9];
// OUT:          const float *wrow = [[K3]] + ky * 3;
// OUT-NEXT:     for (int kx = 0; kx < 3; ++kx)
// OUT-NEXT:       s += row[min(max(x + kx - 1, 0), w - 1)] * wrow[kx];

// OUT:      { cudaMemcpyToSymbolAsync([[FILT]], dfilt, 49 * sizeof(float), 0, cudaMemcpyDefault, 0); conv<<<grid, threads>>>(h, w, din, dfilt, dout); };
// OUT:      cudaMemcpyToSymbolAsync([[TAPS]], dtaps, 9 * sizeof(float), 0, cudaMemcpyDefault, stream);
// OUT-NEXT: row9<<<(n + 127) / 128, 128, 0, stream>>>(dsrc, ddst, dtaps, n);
// OUT:      cudaMemcpyToSymbolAsync(img::[[WTS]], dwts, 25 * sizeof(float), 0, cudaMemcpyDefault, 0);
// OUT-NEXT: cudaMemcpyToSymbolAsync(img::[[LUT]], dlut, 3 * sizeof(int), 0, cudaMemcpyDefault, 0);
// OUT-NEXT: img::blur5<<<grid, block>>>(din, dwts, dlut, dout, w, h);
// OUT:        cudaMemcpyToSymbolAsync([[COEF]], dcoef + 6 * rep, 6 * sizeof(double), 0, cudaMemcpyDefault, 0);
// OUT-NEXT:   poly<<<(n + 255) / 256, 256>>>(n, dx, dcoef + 6 * rep, dy);
// OUT:        cudaMemcpyToSymbolAsync(tmpl::[[STAPS]], dtaps, 9 * sizeof(float), 0, cudaMemcpyDefault, 0);
// OUT-NEXT:   tmpl::smooth<1><<<grid, block>>>(din, dtaps, dout, w, h);
// OUT:        cudaMemcpyToSymbolAsync(tmpl::[[STAPS]], dtaps, 25 * sizeof(float), 0, cudaMemcpyDefault, 0);
// OUT-NEXT:   tmpl::smooth<2><<<grid, block>>>(din, dtaps, dout, w, h);
// OUT:        cudaMemcpyToSymbolAsync([[K3]], dk3, 9 * sizeof(float), 0, cudaMemcpyDefault, 0);
// OUT-NEXT:   rowptr<<<grid, block>>>(din, dk3, dout, w, h);

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
  bool ok = worst < 1e-4;
  printf("%s %s (worst error %.2e)\n", ok ? "PASS" : "FAIL", name, worst);
  failures += !ok;
}
template <typename T> std::vector<T> values(size_t n, unsigned seed) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (T)((int)((i * 2654435761u + seed * 40503u) >> 9) % 19 - 9) / 8;
  return v;
}

int main() {
  {
    const int h = 203, w = 301;
    auto in = values<float>((size_t)h * w, 1), filt = values<float>(K * K, 2);
    std::vector<float> want((size_t)h * w, 0.f);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        float sum = 0.f;
        for (int ky = 0; ky < K; ++ky)
          for (int kx = 0; kx < K; ++kx) {
            int iy = y + ky - RAD, ix = x + kx - RAD;
            if (iy >= 0 && iy < h && ix >= 0 && ix < w)
              sum += in[(size_t)iy * w + ix] * filt[ky * K + kx];
          }
        want[(size_t)y * w + x] = sum;
      }
    float *din = upload(in), *dfilt = upload(filt),
          *dout = upload(std::vector<float>(want.size(), 0.f));
    dim3 threads(16, 16), grid((w + 15) / 16, (h + 15) / 16);
    auto run = [&] { conv<<<grid, threads>>>(h, w, din, dfilt, dout); };
    run();
    CHECK(cudaGetLastError());
    expect("conv", download(dout, want.size()), want);
  }
  {
    const int n = 1000;
    auto src = values<float>(n, 3), taps = values<float>(2 * R + 1, 4);
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) {
      float acc = 0;
      for (int t = -R; t <= R; t++)
        acc += taps[t + R] * src[std::min(std::max(i + t, 0), n - 1)];
      want[i] = acc;
    }
    float *dsrc = upload(src), *dtaps = upload(taps),
          *ddst = upload(std::vector<float>(n, 0.f));
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    row9<<<(n + 127) / 128, 128, 0, stream>>>(dsrc, ddst, dtaps, n);
    CHECK(cudaStreamSynchronize(stream));
    expect("row9", download(ddst, n), want);
  }
  {
    const int w = 77, h = 45;
    auto in = values<float>((size_t)w * h, 5), wts = values<float>(25, 6);
    std::vector<int> lut = {3, -2, 7};
    std::vector<float> want((size_t)w * h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        float s = 0.f;
        for (int dy = 0; dy < 5; ++dy)
          for (int dx = 0; dx < 5; ++dx) {
            int yy = std::min(std::max(y + dy - 2, 0), h - 1);
            int xx = std::min(std::max(x + dx - 2, 0), w - 1);
            s += wts[dy * 5 + dx] * in[yy * w + xx];
          }
        want[y * w + x] = s + 8;
      }
    float *din = upload(in), *dwts = upload(wts),
          *dout = upload(std::vector<float>(want.size(), 0.f));
    int *dlut = upload(lut);
    dim3 block(32, 4), grid((w + 31) / 32, (h + 3) / 4);
    img::blur5<<<grid, block>>>(din, dwts, dlut, dout, w, h);
    CHECK(cudaGetLastError());
    expect("blur5", download(dout, want.size()), want);
  }
  {
    const int n = 513, reps = 3;
    auto x = values<double>(n, 7), coef = values<double>(6 * reps, 8);
    double *dx = upload(x), *dcoef = upload(coef),
           *dy = upload(std::vector<double>(n, 0.0));
    for (int rep = 0; rep < reps; ++rep) {
      poly<<<(n + 255) / 256, 256>>>(n, dx, dcoef + 6 * rep, dy);
      CHECK(cudaGetLastError());
      std::vector<double> want(n);
      for (int i = 0; i < n; ++i) {
        double v = 0;
        for (int d = 5; d >= 0; --d)
          v = v * x[i] + coef[6 * rep + d];
        want[i] = v;
      }
      expect("poly", download(dy, n), want);
    }
  }
  for (int r = 1; r <= 2; ++r) {
    const int w = 50, h = 37, d = 2 * r + 1;
    auto in = values<float>((size_t)w * h, 9), taps = values<float>(d * d, 10);
    std::vector<float> want((size_t)w * h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        float acc = 0.f;
        for (int dy = -r; dy <= r; ++dy)
          for (int dx = -r; dx <= r; ++dx) {
            int yy = std::min(std::max(y + dy, 0), h - 1);
            int xx = std::min(std::max(x + dx, 0), w - 1);
            acc += in[yy * w + xx] * taps[(dy + r) * d + (dx + r)];
          }
        want[y * w + x] = acc;
      }
    float *din = upload(in), *dtaps = upload(taps),
          *dout = upload(std::vector<float>(want.size(), 0.f));
    dim3 block(16, 8), grid((w + 15) / 16, (h + 7) / 8);
    if (r == 1) {
      tmpl::smooth<1><<<grid, block>>>(din, dtaps, dout, w, h);
    } else {
      tmpl::smooth<2><<<grid, block>>>(din, dtaps, dout, w, h);
    }
    CHECK(cudaGetLastError());
    expect("smooth", download(dout, want.size()), want);
  }
  {
    const int w = 41, h = 29;
    auto in = values<float>((size_t)w * h, 11), k3 = values<float>(9, 12);
    std::vector<float> want((size_t)w * h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        float s = 0.f;
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) {
            int yy = std::min(std::max(y + ky - 1, 0), h - 1);
            int xx = std::min(std::max(x + kx - 1, 0), w - 1);
            s += in[yy * w + xx] * k3[ky * 3 + kx];
          }
        want[y * w + x] = s;
      }
    float *din = upload(in), *dk3 = upload(k3),
          *dout = upload(std::vector<float>(want.size(), 0.f));
    dim3 block(32, 4), grid((w + 31) / 32, (h + 3) / 4);
    rowptr<<<grid, block>>>(din, dk3, dout, w, h);
    CHECK(cudaGetLastError());
    expect("rowptr", download(dout, want.size()), want);
  }
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// WHY: constant-memory poly: 'coef' is read at 1 place(s), at indices the same for every thread within [0, 6)
__global__ void poly(int n, const double *x, const double *coef, double *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    double v = 0;
    for (int d = 5; d >= 0; --d)
      v = v * x[i] + coef[d];
    y[i] = v;
  }
}

// The edits, applied one after another by the RUN lines above and by
// scripts/gpu-edit-family.sh on the GPU:
// EDIT: {"kind":"constant-memory","target":"conv","params":{"param":"filt"}}
// EDIT: {"kind":"constant-memory","target":"row9","params":{"param":"taps"}}
// EDIT: {"kind":"constant-memory","target":"img::blur5","params":{"param":"wts"}}
// EDIT: {"kind":"constant-memory","target":"img::blur5","params":{"param":"lut"}}
// EDIT: {"kind":"constant-memory","target":"poly","params":{"param":"coef"}}
// EDIT: {"kind":"constant-memory","target":"tmpl::smooth","params":{"param":"taps"}}
// EDIT: {"kind":"constant-memory","target":"rowptr","params":{"param":"k3"}}
