// shared-tiling rows with cols on 2D stencils whose guarded code loops over
// the rows the reads move along: each thread computes cols adjacent columns
// of its rows; where every bound holds (and the pitch is a multiple of cols,
// the input aligned) each window row is loaded as float2/float4 vectors. A
// row's outputs, stored as `out[y * w + x] = sum;`, are stored as one vector
// of the thread's columns there (the output aligned too). The other threads
// (along the image's edges) run the rows with every test kept, one column
// at a time (the edge form: each column its own window, loaded element by
// element where a read of it passes its tests). Checked: the text (the
// test's own comments left out), nvcc without a warning, and every output of the rewrite against the
// original's, computed thread by thread on the host for sizes where the
// vectors apply, where they do not (odd widths, a misaligned input or
// output), and edges (host-emulate.py, under AddressSanitizer: a read
// outside the input fails). Refused: a stencil without a loop over its
// rows, a pitch that is not the column bound, a kernel that reads threadIdx
// beyond its indices, cols other than 2 or 4, cols without rows; and any
// form of the stencil when a read is in the false arm of a conditional
// expression (it runs when the condition fails, which no bound says).
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu
// RUN: clang-optiml transforms %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: echo '{"kind":"shared-tiling","target":"conv","params":{"rows":8,"cols":2}}' > %t/c2.json
// RUN: clang-optiml apply %t/k.cu --edit %t/c2.json -o %t/c2.cu
// RUN: grep -v '^//' %t/c2.cu | FileCheck --check-prefix=C2 %s
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -Werror all-warnings -o %t/c2.o %t/c2.cu %}
// RUN: python3 %inputs/edit/host-emulate.py %t/k.cu %t/c2.cu conv --rows 8 --cols 2 --sizes 70x66,71x65,33x36+1,40x64+2,40x64o1,8x10 | FileCheck --check-prefix=SAME %s
// RUN: echo '{"kind":"shared-tiling","target":"conv","params":{"rows":4,"cols":4}}' > %t/c4.json
// RUN: clang-optiml apply %t/k.cu --edit %t/c4.json -o %t/c4.cu
// RUN: grep -v '^//' %t/c4.cu | FileCheck --check-prefix=C4 %s
// RUN: python3 %inputs/edit/host-emulate.py %t/k.cu %t/c4.cu conv --rows 4 --cols 4 --sizes 70x68,71x65,33x36+1,40x64+2,40x64o2 | FileCheck --check-prefix=SAME %s
// RUN: echo '{"kind":"shared-tiling","target":"box","params":{"rows":8,"cols":2}}' > %t/b2.json
// RUN: clang-optiml apply %t/k.cu --edit %t/b2.json -o %t/b2.cu
// RUN: grep -v '^//' %t/b2.cu | FileCheck --check-prefix=B2 %s
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -Werror all-warnings -o %t/b2.o %t/b2.cu %}
// RUN: python3 %inputs/edit/host-emulate.py %t/k.cu %t/b2.cu box --rows 8 --cols 2 --sizes 70x66,71x65,33x36+1,17x12 | FileCheck --check-prefix=SAME %s
// RUN: echo '{"kind":"shared-tiling","target":"jac","params":{"rows":4,"cols":2}}' > %t/j.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/j.json 2>&1 | FileCheck --check-prefix=JAC %s
// RUN: echo '{"kind":"shared-tiling","target":"pitched","params":{"rows":8,"cols":2}}' > %t/p.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/p.json 2>&1 | FileCheck --check-prefix=PITCH %s
// RUN: echo '{"kind":"shared-tiling","target":"lane","params":{"rows":8,"cols":2}}' > %t/l.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/l.json 2>&1 | FileCheck --check-prefix=LANE %s
// RUN: echo '{"kind":"shared-tiling","target":"conv","params":{"rows":8,"cols":3}}' > %t/c3.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/c3.json 2>&1 | FileCheck --check-prefix=THREE %s
// RUN: echo '{"kind":"shared-tiling","target":"conv","params":{"cols":2}}' > %t/nr.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/nr.json 2>&1 | FileCheck --check-prefix=NOROWS %s
// RUN: echo '{"kind":"shared-tiling","target":"falsearm","params":{"rows":8}}' > %t/f.json
// RUN: not clang-optiml apply %t/k.cu --edit %t/f.json 2>&1 | FileCheck --check-prefix=FALSEARM %s
// RUN: cmp %s %t/k.cu

// WHY: shared-tiling conv: 2D stencil
// WHY: try {"kind":"shared-tiling","target":"conv","params":{"cols":2,"rows":8}}
// WHY: try {"kind":"shared-tiling","target":"conv","params":{"rows":8}}
// WHY: shared-tiling box: 2D stencil
// WHY: try {"kind":"shared-tiling","target":"box","params":{"cols":2,"rows":8}}
// WHY: shared-tiling jac: 2D stencil
// WHY-NOT: "cols"
// WHY: shared-tiling pitched: 2D stencil
// WHY-NOT: "cols"
// WHY: shared-tiling lane: 2D stencil
// WHY-NOT: "cols"

// C2: const int xBase = (blockIdx.x * blockDim.x + threadIdx.x) * 2;
// C2: const int yBase = (blockIdx.y * blockDim.y + threadIdx.y) * 8;
// C2: xBase - 4 >= 0 && xBase + 6 <= w && w % 2 == 0 && reinterpret_cast<size_t>(in) % sizeof(float2) == 0 && reinterpret_cast<size_t>(out) % sizeof(float2) == 0) {
// C2: float sum[8][2];
// C2: const float2 *rowVec = reinterpret_cast<const float2 *>(&in[(size_t)gy * w + xBase - 4]);
// C2: sum[f1][cx] += win[cx + kx + 1] * filt[ky * K + kx];
// C2: *reinterpret_cast<float2 *>(&out[(size_t)y * w + xBase]) = make_float2(sum[f1][0], sum[f1][1]);
// C2: } else {
// C2-NEXT: // The edge form: each of the thread's columns in turn, every test kept.
// C2-NEXT: #pragma unroll 1
// C2-NEXT: for (int cx = 0; cx < 2; ++cx) {
// C2-NEXT: const int x = xBase + cx;
// C2-NEXT: // shared-tiling rows=8: 8 rows per thread
// C2: run[f1] = x < w && y < h;
// C2: float win[7];
// C2: const int gx = x + c - 3;
// C2-NEXT: const bool need = (gy >= 0 && gy < h && gx >= 0 && gx < w && c >= 0 && c <= 6 && rowNeed);
// C2-NEXT: win[c] = need ? in[(size_t)gy * w + gx] : float(0);
// C2: if (iy >= 0 && iy < h && ix >= 0 && ix < w)
// C2-NEXT: sum[f1] += win[kx] * filt[ky * K + kx];
// C2: out[(size_t)y * w + x] = sum[f1];
// C2-NOT: as the kernel computes it
// C2: conv<<<dim3((grid.x + 1) / 2, (grid.y + 7) / 8, grid.z), block>>>(h, w, in, filt, out);

// C4: const int xBase = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
// C4: xBase - 4 >= 0 && xBase + 8 <= w && w % 4 == 0 && reinterpret_cast<size_t>(in) % sizeof(float4) == 0 && reinterpret_cast<size_t>(out) % sizeof(float4) == 0) {
// C4: float win[12];
// C4: const float4 v = rowVec[k];
// C4: win[4 * k + 3] = v.w;
// C4: *reinterpret_cast<float4 *>(&out[(size_t)y * w + xBase]) = make_float4(sum[f1][0], sum[f1][1], sum[f1][2], sum[f1][3]);
// C4: conv<<<dim3((grid.x + 3) / 4, (grid.y + 3) / 4, grid.z), block>>>(h, w, in, filt, out);

// B2: xBase - 2 >= 0 && xBase + 4 <= w && w % 2 == 0
// B2: acc[f1][cx] += win[cx + dx + 2] * filt[(dy + 2) * 5 + dx + 2];
// B2: *reinterpret_cast<float2 *>(&out[y * w + xBase]) = make_float2(acc[f1][0], acc[f1][1]);
// B2: for (int cx = 0; cx < 2; ++cx) {
// B2-NEXT: const int x = xBase + cx;
// B2: run[f1] = !(x >= w || y >= h);
// B2: float win[5];
// B2: box<<<dim3((((w + 15) / 16) + 1) / 2, (((h + 15) / 16) + 7) / 8), dim3(16, 16)>>>(h, w, in, filt, out);

// SAME-NOT: outputs differ{{$}}
// SAME: : 0 of {{[0-9]+}} outputs differ

// JAC: kernel 'jac': cols takes a stencil whose guarded code loops over the rows its reads move along
// PITCH: kernel 'pitched': cols 2: the pitch 'pitch' is not the column bound 'w'
// LANE: kernel 'lane': cols 2: 'threadIdx.x' is read at {{[0-9]+}}:{{[0-9]+}}: each of a thread's columns would see the same value
// THREE: cols must be 1, 2 or 4 (got 3)
// NOROWS: cols needs rows (2, 4 or 8)
// FALSEARM: the read 'in[yy * w + x]' is in the false arm of a conditional expression

#include <cstddef>
#include <cuda_runtime.h>

#define K 7
#define RAD (K / 2)

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

__global__ void box(int h, int w, const float *in, const float *filt,
                    float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  float acc = 0.f;
  for (int dy = -2; dy <= 2; ++dy)
    for (int dx = -2; dx <= 2; ++dx) {
      int yy = y + dy, xx = x + dx;
      if (yy >= 0 && yy < h && xx >= 0 && xx < w)
        acc += in[yy * w + xx] * filt[(dy + 2) * 5 + dx + 2];
    }
  out[y * w + x] = acc;
}

__global__ void jac(int h, int w, const float *in, const float *filt,
                    float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < w - 1 && y > 0 && y < h - 1)
    out[y * w + x] = filt[0] * (in[(y - 1) * w + x] + in[(y + 1) * w + x] +
                                in[y * w + x - 1] + in[y * w + x + 1]);
}

__global__ void pitched(int h, int w, int pitch, const float *in,
                        const float *filt, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float sum = 0.f;
    for (int ky = 0; ky < 3; ++ky)
      for (int kx = 0; kx < 3; ++kx) {
        int iy = y + ky - 1, ix = x + kx - 1;
        if (iy >= 0 && iy < h && ix >= 0 && ix < w)
          sum += in[iy * pitch + ix] * filt[ky * 3 + kx];
      }
    out[y * pitch + x] = sum;
  }
}

__global__ void lane(int h, int w, const float *in, const float *filt,
                     float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float sum = 0.f;
    for (int ky = 0; ky < 3; ++ky)
      for (int kx = 0; kx < 3; ++kx) {
        int iy = y + ky - 1, ix = x + kx - 1;
        if (iy >= 0 && iy < h && ix >= 0 && ix < w)
          sum += in[iy * w + ix] * filt[ky * 3 + kx];
      }
    out[y * w + x] = sum + (threadIdx.x == 0 ? filt[9] : 0.f);
  }
}

__global__ void falsearm(int h, int w, const float *in, const float *filt,
                         float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float s = 0.f;
    for (int dy = -1; dy <= 1; ++dy) {
      int yy = y + dy;
      s += (yy < 0 || yy >= h) ? 0.f : in[yy * w + x];
    }
    out[y * w + x] = s * filt[0];
  }
}

int main() {
  const int h = 512, w = 512;
  float *in, *filt, *out;
  cudaMalloc(&in, sizeof(float) * h * w);
  cudaMalloc(&out, sizeof(float) * h * w);
  cudaMalloc(&filt, sizeof(float) * 64);
  dim3 block(16, 16), grid((w + 15) / 16, (h + 15) / 16);
  conv<<<grid, block>>>(h, w, in, filt, out);
  box<<<dim3((w + 15) / 16, (h + 15) / 16), dim3(16, 16)>>>(h, w, in, filt, out);
  jac<<<grid, block>>>(h, w, in, filt, out);
  pitched<<<grid, block>>>(h, w, w, in, filt, out);
  lane<<<grid, block>>>(h, w, in, filt, out);
  falsearm<<<grid, block>>>(h, w, in, filt, out);
  cudaDeviceSynchronize();
  return 0;
}
