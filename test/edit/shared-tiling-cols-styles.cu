// shared-tiling rows with cols on streamed 2D stencils written in nine
// styles: the suite's 7x7 filter (an if-block guard, size_t indices); a 5x5
// box with an early return; a radius template in a namespace over doubles;
// a 3x3 count over ints; two sums in one declaration with the value in a
// local and a division after; a vertical 1x5 filter (no column halo); an
// interior guard without tests on the reads; a 3x3 maximum over unsigned
// values; zero padding written as conditional expressions whose column
// bounds are on the thread's own x. Each takes rows with 2 or 4 columns per thread: where every bound
// holds, each window row is loaded as float2/float4, double2, int4 or uint4
// vectors; elsewhere the rows run with every test kept, one column at a
// time (the edge form). The
// edits applied one after another compile with nvcc without a warning, and
// the program, which checks each stencil against the CPU at widths where
// the vectors run, passes before and after when its kernels run on the host
// thread by thread (host-run.py, under AddressSanitizer); the GPU check
// (scripts/gpu-edit-family.sh) runs `eval` on the result. The input file is
// left as it was.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms %t/k.cu | FileCheck --check-prefix=WHY %s
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
// HOST: PASS conv
// HOST: PASS box
// HOST: PASS smooth
// HOST: PASS count3
// HOST: PASS wavg
// HOST: PASS vsmooth
// HOST: PASS inner3
// HOST: PASS dilate
// HOST: PASS pad3
// HOST: PASS rowconv
// HOST: PASS lap3
// HOST: PASS lap3
// HOST-NEXT: PASS

// WHY: try {"kind":"shared-tiling","target":"conv","params":{"cols":2,"rows":8}}
// WHY: try {"kind":"shared-tiling","target":"box","params":{"cols":2,"rows":8}}
// WHY: try {"kind":"shared-tiling","target":"img::smooth","params":{"cols":2,"rows":8}}
// WHY: try {"kind":"shared-tiling","target":"count3","params":{"cols":2,"rows":8}}
// WHY: try {"kind":"shared-tiling","target":"wavg","params":{"cols":2,"rows":8}}
// WHY: try {"kind":"shared-tiling","target":"vsmooth","params":{"cols":2,"rows":8}}
// WHY: try {"kind":"shared-tiling","target":"inner3","params":{"cols":2,"rows":8}}
// WHY: try {"kind":"shared-tiling","target":"dilate","params":{"cols":2,"rows":8}}
// WHY: try {"kind":"shared-tiling","target":"pad3","params":{"cols":2,"rows":8}}
// WHY: try {"kind":"shared-tiling","target":"rowconv","params":{"cols":2,"rows":8}}
// WHY: try {"kind":"shared-tiling","target":"lap3","params":{"cols":2,"rows":8}}

// OUT: const int xBase = (blockIdx.x * blockDim.x + threadIdx.x) * 2;
// OUT: const float2 *rowVec = reinterpret_cast<const float2 *>(&in[(size_t)gy * w + xBase - 4]);
// OUT: const int pxBase = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
// OUT: pxBase - 4 >= 0 && pxBase + 8 <= width && width % 4 == 0 && reinterpret_cast<size_t>(src) % sizeof(float4) == 0) {
// OUT: const double2 *rowVec = reinterpret_cast<const double2 *>(&a[gy * m + jBase - 2]);
// OUT: const int4 *rowVec = reinterpret_cast<const int4 *>(&lab[gy * cols + cBase - 4]);
// OUT: float num[4][2];
// OUT: t[f1][cx] += win[cx] * (k == 0 ? 0.5f : 0.125f);
// OUT: const uint4 *rowVec = reinterpret_cast<const uint4 *>(&m[gy * w + xBase - 4]);
// OUT: xBase - 1 > (0) - 1 && xBase + 2 < w && xBase - 2 >= 0 && xBase + 4 <= w
// OUT: const float l = true ? win[cx + 1] : 0.f;
// OUT: conv<<<dim3((grid.x + 1) / 2, (grid.y + 7) / 8, grid.z), threads>>>(h, w, din, dfilt, dout);
// OUT: box<<<dim3((((width + 31) / 32) + 3) / 4, (((height + 7) / 8) + 3) / 4), dim3(32, 8)>>>(dsrc, ddst, width, height);
// OUT: img::smooth<1><<<dim3((grid.x + 1) / 2, (grid.y + 7) / 8, grid.z), block>>>(da, db, n, m);
// OUT: count3<<<dim3((((cols + 15) / 16) + 3) / 4, (((rows + 15) / 16) + 7) / 8), dim3(16, 16)>>>(dl, dc, rows, cols);
// OUT: wavg<<<dim3((ngrid.x + 1) / 2, (ngrid.y + 3) / 4, ngrid.z), nblock>>>(di, dw, dr, W, H);
// OUT: vsmooth<<<dim3((((w + 31) / 32) + 3) / 4, (((h + 7) / 8) + 7) / 8), dim3(32, 8)>>>(h, w, din, dout);
// OUT: inner3<<<dim3((g.x + 1) / 2, (g.y + 7) / 8, g.z), dim3(16, 16)>>>(n, du, dv);
// OUT: dilate<<<dim3((grid.x + 3) / 4, (grid.y + 1) / 2, grid.z), block>>>(dm, dout, h, w);
// OUT: pad3<<<dim3((grid.x + 1) / 2, (grid.y + 7) / 8, grid.z), block>>>(h, w, din, dout);

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

// 1. The suite's shape: a 7x7 filter, an if-block guard, size_t indices.
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

// 2. An early return, offsets from -2 to 2, int indices, a 5x5 box.
__global__ void box(const float *src, float *dst, int width, int height) {
  int px = blockIdx.x * blockDim.x + threadIdx.x;
  int py = blockIdx.y * blockDim.y + threadIdx.y;
  if (px >= width || py >= height)
    return;
  float acc = 0.f;
  for (int dy = -2; dy <= 2; ++dy)
    for (int dx = -2; dx <= 2; ++dx) {
      int yy = py + dy, xx = px + dx;
      if (yy >= 0 && yy < height && xx >= 0 && xx < width)
        acc += src[yy * width + xx];
    }
  dst[py * width + px] = acc * (1.f / 25.f);
}

// 3. A template over the radius in a namespace, double elements.
namespace img {
template <int R>
__global__ void smooth(const double *__restrict__ a, double *__restrict__ b,
                       int n, int m) {
  const int j = threadIdx.x + blockIdx.x * blockDim.x;
  const int i = threadIdx.y + blockIdx.y * blockDim.y;
  if (i < n && j < m) {
    double s = 0.0;
    for (int di = -R; di <= R; ++di)
      for (int dj = -R; dj <= R; ++dj) {
        const int ii = i + di, jj = j + dj;
        if (ii >= 0 && ii < n && jj >= 0 && jj < m)
          s += a[ii * m + jj];
      }
    b[i * m + j] = s;
  }
}
} // namespace img

// 4. Integers: a 3x3 neighbourhood count of a label image.
__global__ void count3(const int *lab, int *cnt, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols)
    return;
  int n = 0;
  for (int u = 0; u < 3; ++u)
    for (int v = 0; v < 3; ++v) {
      int rr = r + u - 1, cc = c + v - 1;
      if (rr >= 0 && rr < rows && cc >= 0 && cc < cols)
        n += lab[rr * cols + cc];
    }
  cnt[r * cols + c] = n;
}

// 5. Two sums in one declaration, a value in a local, a division after.
__global__ void wavg(const float *img, const float *wts, float *res, int W,
                     int H) {
  const int x = threadIdx.x + blockIdx.x * blockDim.x;
  const int y = threadIdx.y + blockIdx.y * blockDim.y;
  if (x >= W || y >= H)
    return;
  float num = 0.f, den = 0.f;
  for (int i = 0; i < 5; i++) {
    for (int j = 0; j < 5; j++) {
      const int yy = y + i - 2, xx = x + j - 2;
      if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
        const float v = img[yy * W + xx];
        const float wt = wts[i * 5 + j];
        num += v * wt;
        den += wt;
      }
    }
  }
  res[y * W + x] = den != 0.f ? num / den : 0.f;
}

// 6. A vertical 1x5 filter: no columns but the thread's own.
__global__ void vsmooth(int h, int w, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float t = 0.f;
    for (int k = -2; k <= 2; ++k)
      if (y + k >= 0 && y + k < h)
        t += in[(y + k) * w + x] * (k == 0 ? 0.5f : 0.125f);
    out[y * w + x] = t;
  }
}

// 7. The guard on the interior only, no tests on the reads.
__global__ void inner3(int n, const float *u, float *v) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row > 0 && row < n - 1 && col > 0 && col < n - 1) {
    float s = 0.f;
    for (int a = -1; a <= 1; ++a)
      for (int b = -1; b <= 1; ++b)
        s += u[(row + a) * n + col + b] * (a == 0 && b == 0 ? -8.f : 1.f);
    v[row * n + col] = s;
  }
}

// 8. Unsigned elements: a 3x3 window's maximum (the read in a local).
__global__ void dilate(const unsigned *m, unsigned *o, int h, int w) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    unsigned best = 0u;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        int yy = y + dy, xx = x + dx;
        if (yy >= 0 && yy < h && xx >= 0 && xx < w) {
          const unsigned v = m[yy * w + xx];
          best = v > best ? v : best;
        }
      }
    o[y * w + x] = best;
  }
}

// 9. Zero padding written as conditional expressions, the column bounds on
// the thread's own x (`x > 0` for the read at x - 1).
__global__ void pad3(int h, int w, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float s = 0.f;
    for (int dy = -1; dy <= 1; ++dy) {
      const int yy = y + dy;
      const float l = (yy >= 0 && yy < h && x > 0) ? in[yy * w + x - 1] : 0.f;
      const float c = (yy >= 0 && yy < h) ? in[yy * w + x] : 0.f;
      const float r = (yy >= 0 && yy < h && x + 1 < w) ? in[yy * w + x + 1] : 0.f;
      s += l - 2.f * c + r;
    }
    out[y * w + x] = s;
  }
}

// 10. Row pointers into the image and the filter, `continue` past the rows
// outside the image, constexpr sizes (the pitch is a constant), and a grid
// sized `W / 32 + (W % 32 != 0)`.
constexpr int RH = 45, RW = 96;
__global__ void rowconv(const float *image, const float *weights,
                        float *result) {
  int col = threadIdx.x + blockIdx.x * blockDim.x;
  int row = threadIdx.y + blockIdx.y * blockDim.y;
  if (row < RH && col < RW) {
    float sum = 0.0f;
    for (int ky = 0; ky < K; ++ky) {
      int iy = row - RAD + ky;
      if (iy < 0 || iy >= RH)
        continue;
      const float *src = image + (size_t)iy * RW;
      const float *wrow = weights + ky * K;
      for (int kx = 0; kx < K; ++kx) {
        int ix = col - RAD + kx;
        if (ix >= 0 && ix < RW)
          sum += src[ix] * wrow[kx];
      }
    }
    result[(size_t)row * RW + col] = sum;
  }
}

// 11. A pointer to the thread's own row declared before the loop, the
// neighbours read through it at pitch offsets, `continue` past the rows and
// the columns outside the image, and a grid sized `h / 16 + (h % 16 > 0)`.
__global__ void lap3(const float *in, float *out, int h, int w) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (y >= h || x >= w)
    return;
  const float *mid = in + (size_t)y * w;
  float s = 0.f;
  for (int dy = -1; dy <= 1; ++dy) {
    if (y + dy < 0 || y + dy >= h)
      continue;
    for (int dx = -1; dx <= 1; ++dx) {
      if (x + dx < 0 || x + dx >= w)
        continue;
      s += (dx == 0 && dy == 0 ? -8.f : 1.f) * mid[dy * w + x + dx];
    }
  }
  out[(size_t)y * w + x] = s;
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

// The reference of a K x K window at (y, x) over an h x w image: the sum
// of f(v, ky, kx) over the neighbours inside the image.
template <typename T, typename F>
T window(const std::vector<T> &in, int h, int w, int y, int x, int lo, int hi,
         F f) {
  T s = T(0);
  for (int dy = lo; dy <= hi; ++dy)
    for (int dx = lo; dx <= hi; ++dx) {
      int yy = y + dy, xx = x + dx;
      if (yy >= 0 && yy < h && xx >= 0 && xx < w)
        s = f(s, in[(size_t)yy * w + xx], dy - lo, dx - lo);
    }
  return s;
}

int main() {
  // Widths that are multiples of 4 (the vector loads run) and one that is
  // not (they do not), heights not multiples of the rows.
  {
    const int h = 83, w = 96;
    auto in = values<float>((size_t)h * w, 1), filt = values<float>(K * K, 2);
    std::vector<float> want((size_t)h * w);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        want[(size_t)y * w + x] = window(in, h, w, y, x, -RAD, RAD,
            [&](float s, float v, int ky, int kx) { return s + v * filt[ky * K + kx]; });
    float *din = upload(in), *dfilt = upload(filt),
          *dout = upload(std::vector<float>(want.size(), 0.f));
    dim3 threads(16, 16), grid((w + 15) / 16, (h + 15) / 16);
    conv<<<grid, threads>>>(h, w, din, dfilt, dout);
    CHECK(cudaGetLastError());
    expect("conv", download(dout, want.size()), want);
  }
  {
    const int width = 128, height = 45;
    auto src = values<float>((size_t)width * height, 3);
    std::vector<float> want((size_t)width * height);
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x)
        want[y * width + x] = window(src, height, width, y, x, -2, 2,
            [](float s, float v, int, int) { return s + v; }) * (1.f / 25.f);
    float *dsrc = upload(src), *ddst = upload(std::vector<float>(want.size(), 0.f));
    box<<<dim3((width + 31) / 32, (height + 7) / 8), dim3(32, 8)>>>(dsrc, ddst, width, height);
    CHECK(cudaGetLastError());
    expect("box", download(ddst, want.size()), want);
  }
  {
    const int n = 37, m = 64;
    auto a = values<double>((size_t)n * m, 4);
    std::vector<double> want((size_t)n * m);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < m; ++j)
        want[i * m + j] = window(a, n, m, i, j, -1, 1,
            [](double s, double v, int, int) { return s + v; });
    double *da = upload(a), *db = upload(std::vector<double>(want.size(), 0.0));
    dim3 block(16, 8), grid((m + 15) / 16, (n + 7) / 8);
    img::smooth<1><<<grid, block>>>(da, db, n, m);
    CHECK(cudaGetLastError());
    expect("smooth", download(db, want.size()), want);
  }
  {
    const int rows = 50, cols = 72;
    std::vector<int> lab((size_t)rows * cols);
    for (size_t i = 0; i < lab.size(); ++i)
      lab[i] = (int)((i * 2654435761u) >> 13) % 3;
    std::vector<int> want((size_t)rows * cols);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        want[r * cols + c] = window(lab, rows, cols, r, c, -1, 1,
            [](int s, int v, int, int) { return s + v; });
    int *dl = upload(lab), *dc = upload(std::vector<int>(want.size(), 0));
    count3<<<dim3((cols + 15) / 16, (rows + 15) / 16), dim3(16, 16)>>>(dl, dc, rows, cols);
    CHECK(cudaGetLastError());
    expect("count3", download(dc, want.size()), want);
  }
  {
    const int W = 100, H = 61;
    auto img = values<float>((size_t)W * H, 5), wts = values<float>(25, 6);
    for (float &v : wts)
      v = std::fabs(v) + 0.25f;
    std::vector<float> want((size_t)W * H);
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        float num = 0.f, den = 0.f;
        for (int i = 0; i < 5; i++)
          for (int j = 0; j < 5; j++) {
            const int yy = y + i - 2, xx = x + j - 2;
            if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
              num += img[yy * W + xx] * wts[i * 5 + j];
              den += wts[i * 5 + j];
            }
          }
        want[y * W + x] = den != 0.f ? num / den : 0.f;
      }
    float *di = upload(img), *dw = upload(wts),
          *dr = upload(std::vector<float>(want.size(), 0.f));
    dim3 nblock(32, 4), ngrid((W + 31) / 32, (H + 3) / 4);
    wavg<<<ngrid, nblock>>>(di, dw, dr, W, H);
    CHECK(cudaGetLastError());
    expect("wavg", download(dr, want.size()), want);
  }
  {
    const int h = 41, w = 64;
    auto in = values<float>((size_t)h * w, 7);
    std::vector<float> want((size_t)h * w);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        float t = 0.f;
        for (int k = -2; k <= 2; ++k)
          if (y + k >= 0 && y + k < h)
            t += in[(y + k) * w + x] * (k == 0 ? 0.5f : 0.125f);
        want[y * w + x] = t;
      }
    float *din = upload(in), *dout = upload(std::vector<float>(want.size(), 0.f));
    vsmooth<<<dim3((w + 31) / 32, (h + 7) / 8), dim3(32, 8)>>>(h, w, din, dout);
    CHECK(cudaGetLastError());
    expect("vsmooth", download(dout, want.size()), want);
  }
  {
    const int n = 90;
    auto u = values<float>((size_t)n * n, 8);
    std::vector<float> want((size_t)n * n, -1.f);
    for (int row = 1; row < n - 1; ++row)
      for (int col = 1; col < n - 1; ++col) {
        float s = 0.f;
        for (int a = -1; a <= 1; ++a)
          for (int b = -1; b <= 1; ++b)
            s += u[(row + a) * n + col + b] * (a == 0 && b == 0 ? -8.f : 1.f);
        want[row * n + col] = s;
      }
    float *du = upload(u), *dv = upload(std::vector<float>(want.size(), -1.f));
    dim3 g((n + 15) / 16, (n + 15) / 16);
    inner3<<<g, dim3(16, 16)>>>(n, du, dv);
    CHECK(cudaGetLastError());
    expect("inner3", download(dv, want.size()), want);
  }
  {
    const int h = 29, w = 52;
    std::vector<unsigned> m((size_t)h * w);
    for (size_t i = 0; i < m.size(); ++i)
      m[i] = (unsigned)((i * 2654435761u) >> 20) % 1000u;
    std::vector<unsigned> want((size_t)h * w);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        want[y * w + x] = window(m, h, w, y, x, -1, 1,
            [](unsigned s, unsigned v, int, int) { return v > s ? v : s; });
    unsigned *dm = upload(m), *dout = upload(std::vector<unsigned>(want.size(), 0u));
    dim3 grid((w + 15) / 16, (h + 15) / 16), block(16, 16);
    dilate<<<grid, block>>>(dm, dout, h, w);
    CHECK(cudaGetLastError());
    expect("dilate", download(dout, want.size()), want);
  }
  {
    const int h = 45, w = 64;
    auto in = values<float>((size_t)h * w, 9);
    std::vector<float> want((size_t)h * w);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        want[y * w + x] = window(in, h, w, y, x, -1, 1,
            [](float s, float v, int, int dx) { return s + (dx == 1 ? -2.f : 1.f) * v; });
    float *din = upload(in), *dout = upload(std::vector<float>(want.size(), 0.f));
    dim3 block(16, 16), grid((w + 15) / 16, (h + 15) / 16);
    pad3<<<grid, block>>>(h, w, din, dout);
    CHECK(cudaGetLastError());
    expect("pad3", download(dout, want.size()), want);
  }
  {
    auto in = values<float>((size_t)RH * RW, 10), filt = values<float>(K * K, 11);
    std::vector<float> want((size_t)RH * RW);
    for (int y = 0; y < RH; ++y)
      for (int x = 0; x < RW; ++x)
        want[(size_t)y * RW + x] = window(in, RH, RW, y, x, -RAD, RAD,
            [&](float s, float v, int ky, int kx) { return s + v * filt[ky * K + kx]; });
    float *din = upload(in), *dfilt = upload(filt),
          *dout = upload(std::vector<float>(want.size(), 0.f));
    dim3 block(32, 4);
    dim3 grid(RW / 32 + (RW % 32 != 0), RH / 4 + (RH % 4 != 0));
    rowconv<<<grid, block>>>(din, dfilt, dout);
    CHECK(cudaGetLastError());
    expect("rowconv", download(dout, want.size()), want);
  }
  for (int w : {64, 61}) {
    const int h = 37;
    auto in = values<float>((size_t)h * w, 12);
    std::vector<float> want((size_t)h * w);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        want[(size_t)y * w + x] = window(in, h, w, y, x, -1, 1,
            [](float s, float v, int dy, int dx) {
              return s + (dx == 1 && dy == 1 ? -8.f : 1.f) * v; });
    float *din = upload(in), *dout = upload(std::vector<float>(want.size(), 0.f));
    dim3 grid(w / 16 + (w % 16 != 0), h / 16 + (h % 16 > 0)), block(16, 16);
    lap3<<<grid, block>>>(din, dout, h, w);
    CHECK(cudaGetLastError());
    expect("lap3", download(dout, want.size()), want);
  }
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// EDIT: {"kind":"shared-tiling","target":"conv","params":{"rows":8,"cols":2}}
// EDIT: {"kind":"shared-tiling","target":"box","params":{"rows":4,"cols":4}}
// EDIT: {"kind":"shared-tiling","target":"img::smooth","params":{"rows":8,"cols":2}}
// EDIT: {"kind":"shared-tiling","target":"count3","params":{"rows":8,"cols":4}}
// EDIT: {"kind":"shared-tiling","target":"wavg","params":{"rows":4,"cols":2}}
// EDIT: {"kind":"shared-tiling","target":"vsmooth","params":{"rows":8,"cols":4}}
// EDIT: {"kind":"shared-tiling","target":"inner3","params":{"rows":8,"cols":2}}
// EDIT: {"kind":"shared-tiling","target":"dilate","params":{"rows":2,"cols":4}}
// EDIT: {"kind":"shared-tiling","target":"pad3","params":{"rows":8,"cols":2}}
// EDIT: {"kind":"shared-tiling","target":"rowconv","params":{"rows":8,"cols":2}}
// EDIT: {"kind":"shared-tiling","target":"lap3","params":{"rows":4,"cols":4}}
