// shared-tiling rows on 2D stencils written in six styles: a 7x7
// convolution with zero padding through loops (the suite's shape); a
// 5-point Jacobi step on the interior (`if (x > 0 && x < n - 1 && ...)`);
// a 3x3 box blur with an early return and the grid written at the launch;
// a double 1x5 vertical stencil with the pitch a separate argument; a 5x5
// normalized weighted filter (two sums in one declaration, the value in a
// local, an early return, a division after the loops); a Laplacian with an
// early return. Where the guarded code is a loop over the rows the reads
// move along (conv, blur, norm), the input is streamed one row at a time,
// each row's sums become arrays, and rows 8 is offered first; else the
// whole window is held and rows 4 is offered where it holds at most 32
// values. A window element is loaded when a row needs it: the part of the
// condition that holds along a window row is folded over the rows once per
// window row, apart from the element's bounds. Threads whose window lies
// inside every bound the guard and the reads test (checked once, each bound
// where it is tightest) run a copy with those tests written as `true`
// (`false` for an early return); the rest run the tests. The six edits
// applied one after another compile with nvcc and the input is left as it
// was. The program checks each stencil against the CPU, so the GPU check
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
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -Werror all-warnings -o %t/all.o %t/all.cu %}
// RUN: python3 %inputs/edit/host-run.py %t/k.cu | FileCheck --check-prefix=HOST %s
// RUN: python3 %inputs/edit/host-run.py %t/all.cu | FileCheck --check-prefix=HOST %s
// RUN: cmp %s %t/k.cu
// Its kernels run on the host thread by thread (host-run.py), before the
// edits and after: every stencil's check passes.
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

// The input is streamed row by row: a row of 7 values in registers.
// WHY: shared-tiling conv: 2D stencil
// WHY: try {"kind":"shared-tiling","target":"conv","params":{"rows":8}}
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
// OUT-LABEL: __global__ void conv(int h, int w, const float *in, const float *filt,
// OUT-NEXT:                      float *out) {
// OUT-NEXT:   int x = blockIdx.x * blockDim.x + threadIdx.x;
// OUT-NEXT:   const int yBase = (blockIdx.y * blockDim.y + threadIdx.y) * 8;
// OUT-NEXT:   // Threads whose every bounds test holds skip the tests.
// OUT-NEXT:   if (yBase + 7 < h && x < w && yBase - 3 >= 0 && yBase + 10 < h && x - 3 >= 0 && x + 3 < w) {
// OUT-NEXT:     // shared-tiling rows=8: 8 rows per thread, the input streamed through registers one row at a time.
// OUT-NEXT:     bool run[8];
// OUT-NEXT:     float sum[8];
// OUT-NEXT:     #pragma unroll
// OUT-NEXT:     for (int f1 = 0; f1 < 8; ++f1) {
// OUT-NEXT:       run[f1] = true;
// OUT-NEXT:       if (run[f1]) {
// OUT-NEXT:         sum[f1] = 0.f;
// OUT-NEXT:       }
// OUT-NEXT:     }
// OUT-NEXT:     #pragma unroll
// OUT-NEXT:     for (int r = 0; r < 14; ++r) {
// OUT-NEXT:       const int gy = yBase + r - 3;
// OUT-NEXT:       bool rowNeed1 = false;
// OUT-NEXT:       #pragma unroll
// OUT-NEXT:       for (int f1 = 0; f1 < 8; ++f1) {
// OUT-NEXT:         rowNeed1 = rowNeed1 || (r - f1 >= 0 && r - f1 <= 6);
// OUT-NEXT:       }
// OUT-NEXT:       float win[7];
// OUT-NEXT:       #pragma unroll
// OUT-NEXT:       for (int c = 0; c < 7; ++c) {
// OUT-NEXT:         const int gx = x + c - 3;
// OUT-NEXT:         const bool need = (c >= 0 && c <= 6 && rowNeed1);
// OUT-NEXT:         win[c] = need ? in[(size_t)gy * w + gx] : float(0);
// OUT-NEXT:       }
// OUT-NEXT:       #pragma unroll
// OUT-NEXT:       for (int f1 = 0; f1 < 8; ++f1) {
// OUT-NEXT:         const int ky = r - f1;
// OUT-NEXT:         if (run[f1] && ky >= 0 && ky <= 6) {
// OUT-NEXT:           #pragma unroll
// OUT-NEXT:           for (int kx = 0; kx < K; ++kx) {
// OUT-NEXT:             sum[f1] += win[kx] * filt[ky * K + kx];
// OUT-NEXT:           }
// OUT-NEXT:         }
// OUT-NEXT:       }
// OUT-NEXT:     }
// OUT-NEXT:     #pragma unroll
// OUT-NEXT:     for (int f1 = 0; f1 < 8; ++f1) {
// OUT-NEXT:       const int y = yBase + f1;
// OUT-NEXT:       if (run[f1]) {
// OUT-NEXT:         out[(size_t)y * w + x] = sum[f1];
// OUT-NEXT:       }
// OUT-NEXT:     }
// OUT-NEXT:   } else {
// OUT-NEXT:     // shared-tiling rows=8: 8 rows per thread, the input streamed through registers one row at a time.
// OUT-NEXT:     bool run[8];
// OUT-NEXT:     float sum[8];
// OUT-NEXT:     #pragma unroll
// OUT-NEXT:     for (int f1 = 0; f1 < 8; ++f1) {
// OUT-NEXT:       const int y = yBase + f1;
// OUT-NEXT:       run[f1] = x < w && y < h;
// OUT-NEXT:       if (run[f1]) {
// OUT-NEXT:         sum[f1] = 0.f;
// OUT-NEXT:       }
// OUT-NEXT:     }
// OUT-NEXT:     #pragma unroll
// OUT-NEXT:     for (int r = 0; r < 14; ++r) {
// OUT-NEXT:       const int gy = yBase + r - 3;
// OUT-NEXT:       bool rowNeed = false;
// OUT-NEXT:       #pragma unroll
// OUT-NEXT:       for (int f1 = 0; f1 < 8; ++f1) {
// OUT-NEXT:         const int yr = yBase + f1;
// OUT-NEXT:         rowNeed = rowNeed || (r - f1 >= 0 && r - f1 <= 6 && yr < h && x < w);
// OUT-NEXT:       }
// OUT-NEXT:       float win[7];
// OUT-NEXT:       #pragma unroll
// OUT-NEXT:       for (int c = 0; c < 7; ++c) {
// OUT-NEXT:         const int gx = x + c - 3;
// OUT-NEXT:         const bool need = (gy >= 0 && gy < h && gx >= 0 && gx < w && c >= 0 && c <= 6 && rowNeed);
// OUT-NEXT:         win[c] = need ? in[(size_t)gy * w + gx] : float(0);
// OUT-NEXT:       }
// OUT-NEXT:       #pragma unroll
// OUT-NEXT:       for (int f1 = 0; f1 < 8; ++f1) {
// OUT-NEXT:         const int y = yBase + f1;
// OUT-NEXT:         const int ky = r - f1;
// OUT-NEXT:         if (run[f1] && ky >= 0 && ky <= 6) {
// OUT-NEXT:           #pragma unroll
// OUT-NEXT:           for (int kx = 0; kx < K; ++kx) {
// OUT-NEXT:             int iy = y + ky - RAD, ix = x + kx - RAD;
// OUT-NEXT:             if (iy >= 0 && iy < h && ix >= 0 && ix < w)
// OUT-NEXT:               sum[f1] += win[kx] * filt[ky * K + kx];
// OUT-NEXT:           }
// OUT-NEXT:         }
// OUT-NEXT:       }
// OUT-NEXT:     }
// OUT-NEXT:     #pragma unroll
// OUT-NEXT:     for (int f1 = 0; f1 < 8; ++f1) {
// OUT-NEXT:       const int y = yBase + f1;
// OUT-NEXT:       if (run[f1]) {
// OUT-NEXT:         out[(size_t)y * w + x] = sum[f1];
// OUT-NEXT:       }
// OUT-NEXT:     }
// OUT-NEXT:   }
// OUT-NEXT: }

// WHY: shared-tiling jacobi: 2D stencil
// WHY: try {"kind":"shared-tiling","target":"jacobi","params":{"rows":4}}
__global__ void jacobi(int n, const float *a, float *b) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row > 0 && row < n - 1 && col > 0 && col < n - 1)
    b[row * n + col] = 0.25f * (a[(row - 1) * n + col] + a[(row + 1) * n + col] +
                                a[row * n + col - 1] + a[row * n + col + 1]);
}
// OUT-LABEL: __global__ void jacobi(int n, const float *a, float *b) {
// OUT:         if (rowBase > 0 && rowBase + 3 < (n - 1) && col > 0 && col < (n - 1)) {
// OUT:           rowNeed3 = rowNeed3 || (r - f >= 0 && r - f <= 0);
// OUT:           if (true)
// OUT-NEXT:        b[row * n + col] = 0.25f * (win[f][1] + win[f + 2][1] +
// OUT:         } else {
// OUT:         float win[6][3];
// OUT:             b[row * n + col] = 0.25f * (win[f][1] + win[f + 2][1] +
// OUT-NEXT:                                    win[f + 1][0] + win[f + 1][2]);

// WHY: shared-tiling blur: 2D stencil
// WHY: try {"kind":"shared-tiling","target":"blur","params":{"rows":8}}
__global__ void blur(const float *src, float *dst, int width, int height) {
  int px = blockIdx.x * blockDim.x + threadIdx.x;
  int py = blockIdx.y * blockDim.y + threadIdx.y;
  if (px < 1 || py < 1 || px >= width - 1 || py >= height - 1)
    return;
  float s = 0;
  for (int dy = 0; dy < 3; ++dy)
    for (int dx = 0; dx < 3; ++dx)
      s += src[(py + dy - 1) * width + px + dx - 1];
  dst[py * width + px] = s / 9;
}
// OUT-LABEL: __global__ void blur(const float *src, float *dst, int width, int height) {
// OUT:         if (pyBase >= 1 && pyBase + 7 < (height - 1) && px >= 1 && px < (width - 1)) {
// OUT:           run[f] = true;
// OUT:               const bool need = (c >= 0 && c <= 2 && rowNeed1);
// OUT:         } else {
// OUT:           run[f] = !(px < 1 || py < 1 || px >= width - 1 || py >= height - 1);
// OUT-NEXT:      if (run[f]) {
// OUT-NEXT:        s[f] = 0;
// OUT:           const int dy = r - f;
// OUT-NEXT:      if (run[f] && dy >= 0 && dy <= 2) {
// OUT-NEXT:        #pragma unroll
// OUT-NEXT:        for (int dx = 0; dx < 3; ++dx)
// OUT-NEXT:          s[f] += win[dx];
// OUT-NEXT:      }
// OUT:           dst[py * width + px] = s[f] / 9;

// WHY: shared-tiling vert: 2D stencil
// WHY: try {"kind":"shared-tiling","target":"vert","params":{"rows":4}}
__global__ void vert(const double *u, double *v, int rows, int cols,
                     int pitch) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= 2 && i < rows - 2 && j < cols)
    v[i * pitch + j] = u[(i - 2) * pitch + j] - 4.0 * u[(i - 1) * pitch + j] +
                       6.0 * u[i * pitch + j] - 4.0 * u[(i + 1) * pitch + j] +
                       u[(i + 2) * pitch + j];
}
// OUT-LABEL: __global__ void vert(const double *u, double *v, int rows, int cols,
// OUT:         if (iBase >= 2 && iBase + 3 < (rows - 2) && j < cols) {
// OUT:         double win[8][1];
// OUT:           if (true)
// OUT:         } else {
// OUT:           if (i >= 2 && i < rows - 2 && j < cols)

// WHY: shared-tiling norm: 2D stencil
// WHY: try {"kind":"shared-tiling","target":"norm","params":{"rows":8}}
__global__ void norm(const float *img, const float *wts, float *res, int W,
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
// OUT-LABEL: __global__ void norm(const float *img, const float *wts, float *res, int W,
// OUT:         if (yBase + 7 < H && x < W && yBase - 2 >= 0 && yBase + 9 < H && x - 2 >= 0 && x + 2 < W) {
// OUT:         } else {
// OUT:         bool run[8];
// OUT-NEXT:    float num[8];
// OUT-NEXT:    float den[8];
// OUT:             num[f1] = 0.f; den[f1] = 0.f;
// OUT:         rowNeed = rowNeed || (r - f1 >= 0 && r - f1 <= 4 && yr < H && x < W);
// OUT:           const bool need = (gy >= 0 && gy < H && gx >= 0 && gx < W && c >= 0 && c <= 4 && rowNeed);
// OUT:           const int i = r - f1;
// OUT-NEXT:      if (run[f1] && i >= 0 && i <= 4) {
// OUT:               const float v = win[j];
// OUT:               num[f1] += v * wt;
// OUT-NEXT:          den[f1] += wt;
// OUT:           res[y * W + x] = den[f1] != 0.f ? num[f1] / den[f1] : 0.f;

// WHY: shared-tiling lap: 2D stencil
// WHY: try {"kind":"shared-tiling","target":"lap","params":{"rows":4}}
__global__ void lap(int nx, int ny, const float *__restrict__ p,
                    float *__restrict__ q) {
  int gx = blockIdx.x * blockDim.x + threadIdx.x;
  int gy = blockIdx.y * blockDim.y + threadIdx.y;
  if (gx < 1 || gx > nx - 2 || gy < 1 || gy > ny - 2)
    return;
  int c = gy * nx + gx;
  q[c] = p[c - nx] + p[c + nx] + p[c - 1] + p[c + 1] - 4.f * p[c];
}
// OUT-LABEL: __global__ void lap(int nx, int ny, const float *__restrict__ p,
// OUT:         if (gyBase >= 1 && gyBase + 3 <= (ny - 2) && gx >= 1 && gx <= (nx - 2)) {
// OUT:           if (false)
// OUT-NEXT:        continue;
// OUT:         } else {
// OUT:         float win[6][3];
// OUT:             continue;
// OUT-NEXT:      int c = gy * nx + gx;

// OUT: conv<<<dim3(grid.x, (grid.y + 7) / 8, grid.z), threads>>>(h, w, din, dfilt, dout);
// OUT: jacobi<<<dim3(grid.x, (grid.y + 3) / 4, grid.z), dim3(16, 16)>>>(n, da, db);
// OUT: blur<<<dim3((width + 31) / 32, (((height + 7) / 8) + 7) / 8), dim3(32, 8)>>>(
// OUT: vert<<<dim3(vgrid.x, (vgrid.y + 3) / 4, vgrid.z), dim3(32, 4)>>>(du, dv, rows, cols, pitch);
// OUT: norm<<<dim3(ngrid.x, (ngrid.y + 7) / 8, ngrid.z), nblock>>>(dimg, dwts, dres, W, H);
// OUT: lap<<<dim3((nx + 15) / 16, (((ny + 15) / 16) + 3) / 4), dim3(16, 16)>>>(nx, ny, dp, dq);

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
    conv<<<grid, threads>>>(h, w, din, dfilt, dout);
    CHECK(cudaGetLastError());
    expect("conv", download(dout, want.size()), want);
  }
  {
    const int n = 250;
    auto a = values<float>((size_t)n * n, 3);
    std::vector<float> want((size_t)n * n, -1.f);
    for (int row = 1; row < n - 1; ++row)
      for (int col = 1; col < n - 1; ++col)
        want[row * n + col] =
            0.25f * (a[(row - 1) * n + col] + a[(row + 1) * n + col] +
                     a[row * n + col - 1] + a[row * n + col + 1]);
    float *da = upload(a), *db = upload(std::vector<float>(want.size(), -1.f));
    dim3 grid((n + 15) / 16, (n + 15) / 16);
    jacobi<<<grid, dim3(16, 16)>>>(n, da, db);
    CHECK(cudaGetLastError());
    expect("jacobi", download(db, want.size()), want);
  }
  {
    const int width = 170, height = 133;
    auto src = values<float>((size_t)width * height, 4);
    std::vector<float> want((size_t)width * height, 0.f);
    for (int py = 1; py < height - 1; ++py)
      for (int px = 1; px < width - 1; ++px) {
        float s = 0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx)
            s += src[(py + dy) * width + px + dx];
        want[py * width + px] = s / 9;
      }
    float *dsrc = upload(src),
          *ddst = upload(std::vector<float>(want.size(), 0.f));
    blur<<<dim3((width + 31) / 32, (height + 7) / 8), dim3(32, 8)>>>(
        dsrc, ddst, width, height);
    CHECK(cudaGetLastError());
    expect("blur", download(ddst, want.size()), want);
  }
  {
    const int rows = 97, cols = 60, pitch = 64;
    auto u = values<double>((size_t)rows * pitch, 5);
    std::vector<double> want((size_t)rows * pitch, 0.0);
    for (int i = 2; i < rows - 2; ++i)
      for (int j = 0; j < cols; ++j)
        want[i * pitch + j] = u[(i - 2) * pitch + j] -
                              4.0 * u[(i - 1) * pitch + j] +
                              6.0 * u[i * pitch + j] -
                              4.0 * u[(i + 1) * pitch + j] +
                              u[(i + 2) * pitch + j];
    double *du = upload(u),
           *dv = upload(std::vector<double>(want.size(), 0.0));
    dim3 vgrid((cols + 31) / 32, (rows + 3) / 4);
    vert<<<vgrid, dim3(32, 4)>>>(du, dv, rows, cols, pitch);
    CHECK(cudaGetLastError());
    expect("vert", download(dv, want.size()), want);
  }
  {
    const int W = 131, H = 77;
    auto img = values<float>((size_t)W * H, 6), wts = values<float>(25, 7);
    for (float &v : wts)
      v = std::fabs(v) + 0.125f;
    std::vector<float> want((size_t)W * H, 0.f);
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        float num = 0.f, den = 0.f;
        for (int i = 0; i < 5; i++)
          for (int j = 0; j < 5; j++) {
            int yy = y + i - 2, xx = x + j - 2;
            if (yy < 0 || yy >= H || xx < 0 || xx >= W)
              continue;
            num += img[yy * W + xx] * wts[i * 5 + j];
            den += wts[i * 5 + j];
          }
        want[y * W + x] = den != 0.f ? num / den : 0.f;
      }
    float *dimg = upload(img), *dwts = upload(wts),
          *dres = upload(std::vector<float>(want.size(), 0.f));
    dim3 nblock(32, 8), ngrid((W + 31) / 32, (H + 7) / 8);
    norm<<<ngrid, nblock>>>(dimg, dwts, dres, W, H);
    CHECK(cudaGetLastError());
    expect("norm", download(dres, want.size()), want);
  }
  {
    const int nx = 90, ny = 111;
    auto p = values<float>((size_t)nx * ny, 8);
    std::vector<float> want((size_t)nx * ny, 0.f);
    for (int gy = 1; gy <= ny - 2; ++gy)
      for (int gx = 1; gx <= nx - 2; ++gx) {
        int c = gy * nx + gx;
        want[c] = p[c - nx] + p[c + nx] + p[c - 1] + p[c + 1] - 4.f * p[c];
      }
    float *dp = upload(p), *dq = upload(std::vector<float>(want.size(), 0.f));
    lap<<<dim3((nx + 15) / 16, (ny + 15) / 16), dim3(16, 16)>>>(nx, ny, dp, dq);
    CHECK(cudaGetLastError());
    expect("lap", download(dq, want.size()), want);
  }
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// The edits, applied one after another by the RUN lines above and by
// scripts/gpu-edit-family.sh on the GPU:
// EDIT: {"kind":"shared-tiling","target":"conv","params":{"rows":8}}
// EDIT: {"kind":"shared-tiling","target":"jacobi","params":{"rows":4}}
// EDIT: {"kind":"shared-tiling","target":"blur","params":{"rows":8}}
// EDIT: {"kind":"shared-tiling","target":"vert","params":{"rows":4}}
// EDIT: {"kind":"shared-tiling","target":"norm","params":{"rows":8}}
// EDIT: {"kind":"shared-tiling","target":"lap","params":{"rows":4}}
