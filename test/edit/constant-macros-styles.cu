// Sizes written as constant macros (issue 20), the way the CUDA samples
// and many tutorials write them: `#define N 3000`, a grid `(N + 255) /
// 256`, a guard `i < N`, rows `y * W + x`. A macro that names no variable
// and calls nothing is a constant; its text as written is what the
// compiler saw, so the catalog reads and rewrites it in place. Before
// this, every kernel below was refused ("written with a macro") by the
// edit it now takes. Each edit is applied after the last; the program
// checks every output (the elements no thread may write too) against the
// CPU on sizes that leave the last blocks partial; it passes before and
// after on the host, thread by thread, and the result compiles with nvcc.
// A macro whose expansion is more than one token (`#define HALF 1500 +
// 1`) is kept one value where its text is put into another expression.
// Constant macros inside a function-like macro's arguments are read where
// the invocation writes them: a grid `DIV_UP(N, 256)` (rescaled by
// launch-config, divided whole by coarsen), a launch `LAUNCH(k, (N + 255)
// / 256, 256, ...)`. A grid macro of several tokens (`N / 256 + 1`) is
// kept one value where its text is put into the new grid. A grid that is
// a macro of its own (`#define BLOCKS ((N + THREADS - 1) / THREADS)`) is
// rescaled with its count read from the definition. Look-alikes refused with their
// reasons: a macro that names a variable (in a kernel, in a launch
// macro's grid), a grid that stops short of a constant bound. The input
// file is left as it was.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms -v %t/k.cu | FileCheck --check-prefix=WHY %s
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
// HOST: PASS scale
// HOST: PASS halfsum
// HOST: PASS offset
// HOST: PASS square
// HOST: PASS blur
// HOST: PASS jacobi
// HOST: PASS jacobi_tiled
// HOST: PASS matmul
// HOST: PASS rowsum
// HOST: PASS total
// HOST: PASS tree
// HOST: PASS named
// HOST: PASS short_grid
// HOST: PASS div_up
// HOST: PASS div_up_pair
// HOST: PASS floor_grid
// HOST: PASS tutorial
// HOST: PASS launched
// HOST: PASS counted
// HOST-NEXT: PASS

// EDIT: {"kind":"launch-config","target":"scale/launch0","params":{"block":128}}
// EDIT: {"kind":"vectorize","target":"halfsum","params":{"width":4}}
// EDIT: {"kind":"grid-stride","target":"offset","params":{"max_blocks":4}}
// EDIT: {"kind":"coarsen","target":"square","params":{"factor":4}}
// EDIT: {"kind":"launch-config","target":"blur/launch0","params":{"block_x":32,"block_y":8}}
// EDIT: {"kind":"vectorize-stencil","target":"jacobi"}
// EDIT: {"kind":"shared-tiling","target":"jacobi_tiled","params":{}}
// EDIT: {"kind":"shared-tiling","target":"matmul","params":{}}
// EDIT: {"kind":"hoist","target":"rowsum/loop0","params":{}}
// EDIT: {"kind":"warp-reduce","target":"total","params":{}}
// EDIT: {"kind":"warp-reduce","target":"tree","params":{"grid_stride":true}}
// EDIT: {"kind":"launch-config","target":"div_up/launch0","params":{"block":128}}
// EDIT: {"kind":"launch-config","target":"launched/launch0","params":{"block":64}}
// EDIT: {"kind":"coarsen","target":"div_up_pair","params":{"factor":2}}
// EDIT: {"kind":"grid-stride","target":"floor_grid","params":{"max_blocks":4}}
// EDIT: {"kind":"launch-config","target":"tutorial/launch0","params":{"block":128}}

// WHY: launch-config scale/launch0: {{.*}}(x: '(N + 255) / 256' covers 'i < N')
// WHY: vectorize halfsum: map kernel
// WHY: grid-stride offset: one element per thread ('i' guarded by 'i < HALF')
// WHY: coarsen square: one element per thread ('i < N')
// WHY: launch-config blur/launch0: {{.*}}(x: '(W + 15) / 16' covers 'x < W'; y: '(H + 15) / 16' covers 'y < H')
// WHY: vectorize-stencil jacobi: 4 reads in 3 input row(s), one store
// WHY: shared-tiling jacobi_tiled: 2D stencil: 4 reads of 'in' at rows y - 1..y + 1, columns x - 1..x + 1
// WHY: shared-tiling matmul: matmul-like: 'matmul' accumulates 'A[row * MN + k] * B[k * MN + col]' over 'k'
// WHY: hoist rowsum/loop0: hoists 'r * COLS': uses only 'r'
// WHY: not grid-stride named: kernel 'named': the guarded body uses a macro that names a variable or calls a function
// WHY: not launch-config short_grid/launch0: the grid's x dimension ('N / 256') is not (E + 255) / 256 over the block
// WHY: launch-config div_up/launch0: {{.*}}(x: 'DIV_UP(N, 256)' covers 'i < N')
// WHY: launch-config tutorial/launch0: {{.*}}(x: 'BLOCKS' covers 'i < N')
// WHY: launch-config launched/launch0: {{.*}}(x: '(N + 255) / 256' covers 'i < N')
// WHY: not launch-config counted/launch0: the grid's x dimension is written with a macro; its text cannot be rescaled in place

// OUT: for (int v = tid; v < (HALF) / 4; v += blockDim.x * gridDim.x) {
// OUT: r1v0 = __ldg(reinterpret_cast<const float4 *>(&in[(y - 1) * W + x]));
// OUT: __shared__ float inTile[18][18];
// OUT: As[threadIdx.y][threadIdx.x] = row < MN && aCol < MN ? A[row * MN + aCol] : 0.0f;
// OUT: const int optiml_h0 = r * COLS;
// OUT-NEXT: for (int c = 0; c < COLS; ++c)
// OUT-NEXT: acc += in[optiml_h0 + c];
// OUT: scale<<<(N + 127) / 128, 128>>>(din, 2.0f);
// OUT: halfsum<<<(HALF + 255) / 256, 64>>>(din, dout);
// OUT: offset<<<(HALF + 63) / 64 < 4 ? (HALF + 63) / 64 : 4, 64>>>(din, dout);
// OUT: square<<<(N + 1023) / 1024, 256>>>(din, dout);
// OUT: blur<<<dim3((W + 31) / 32, (H + 7) / 8), dim3(32, 8)>>>(din, dout);
// OUT: jacobi<<<dim3((W + 63) / 64, blocks.y, blocks.z), threads>>>(din, dout);
// OUT: div_up<<<(N + 127) / 128, 128>>>(dout);
// OUT: div_up_pair<<<(DIV_UP(N, 128) + 1) / 2, 128>>>(dout);
// OUT: floor_grid<<<(FLOOR_GRID) < 4 ? (FLOOR_GRID) : 4, 256>>>(dout);
// OUT: tutorial<<<(N + 127) / 128, 128>>>(dout);
// OUT: LAUNCH(launched, (N + 63) / 64, 64, din, dout);
// OUT: LAUNCH(counted, (COUNT + 255) / 256, 256, dout, count);

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

#define N 3000
#define HALF 1500 + 1
#define W 70
#define H 37
#define MN 48
#define ROWS 45
#define BLOCK 128
#define COLS 33
#define DIV_UP(a, b) (((a) + (b) - 1) / (b))

__global__ void scale(float *x, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N)
    x[i] = a * x[i];
}

// Bounded by a macro of two tokens: `i < HALF` is `i < 1500 + 1`.
__global__ void halfsum(const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < HALF)
    y[i] = x[i] + x[i];
}

__global__ void offset(const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < HALF)
    y[i] = x[i] + 1.0f;
}

__global__ void square(const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N)
    y[i] = x[i] * x[i];
}

__global__ void blur(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < W && y < H)
    out[y * W + x] = 0.5f * in[y * W + x];
}

__global__ void jacobi(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < W - 1 && y > 0 && y < H - 1)
    out[y * W + x] = 0.25f * (in[y * W + x - 1] + in[y * W + x + 1] +
                              in[(y - 1) * W + x] + in[(y + 1) * W + x]);
}

__global__ void jacobi_tiled(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < W - 1 && y > 0 && y < H - 1)
    out[y * W + x] = 0.25f * (in[y * W + x - 1] + in[y * W + x + 1] +
                              in[(y - 1) * W + x] + in[(y + 1) * W + x]);
}

__global__ void matmul(const float *A, const float *B, float *C) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < MN && col < MN) {
    float acc = 0.0f;
    for (int k = 0; k < MN; ++k)
      acc += A[row * MN + k] * B[k * MN + col];
    C[row * MN + col] = acc;
  }
}

__global__ void rowsum(const float *in, float *out) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < ROWS) {
    float acc = 0.0f;
    for (int c = 0; c < COLS; ++c)
      acc += in[r * COLS + c];
    out[r] = acc;
  }
}

__global__ void total(const int *v, int *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N)
    atomicAdd(out, v[i]);
}

__global__ void tree(const int *v, int *out) {
  __shared__ int s[BLOCK];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[tid] = i < N ? v[i] : 0;
  __syncthreads();
  for (int k = BLOCK / 2; k > 0; k >>= 1) {
    if (tid < k)
      s[tid] += s[tid + k];
    __syncthreads();
  }
  if (tid == 0)
    atomicAdd(out, s[0]);
}

// Look-alikes. A macro that reads a variable of the kernel is no constant.
#define AT(i) x[(i)]
__global__ void named(const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N)
    y[i] = AT(i) * 3.0f;
}

// N / 256 blocks stop short of the bound N (3000 is no multiple of 256):
// a new block size would change which elements are written.
__global__ void short_grid(float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N)
    y[i] = 1.0f;
}

// A grid computed by a function-like macro, the sample's way; its
// argument is a constant macro too.
__global__ void div_up(float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N)
    y[i] = 2.0f;
}

// The same grid, divided by coarsen: the invocation is put into the new
// grid whole.
__global__ void div_up_pair(float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N)
    y[i] = 3.0f;
}

// A grid macro of several tokens, floor plus a block (3000 / 256 + 1 = 12
// blocks of 256 cover 3000): capped by grid-stride, the macro kept one
// value in the cap.
#define FLOOR_GRID N / 256 + 1
__global__ void floor_grid(float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N)
    y[i] = 5.0f;
}

// The tutorials' way: the grid and block are macros of their own, the
// grid's count read from its definition (`N` of BLOCKS) and put where
// BLOCKS was.
#define THREADS 256
#define BLOCKS ((N + THREADS - 1) / THREADS)
__global__ void tutorial(float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N)
    y[i] = 6.0f;
}

// Launched through a macro whose grid argument is written with a constant
// macro: the argument is rewritten in the invocation.
#define LAUNCH(k, g, b, ...) k<<<(g), (b)>>>(__VA_ARGS__)
__global__ void launched(const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N)
    y[i] = x[i] - 1.0f;
}

// The same launch, but the macro in the grid argument names a host
// variable: no constant, so its text is not read as written (refused).
#define COUNT count
__global__ void counted(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 4.0f;
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
void expect(const char *name, const std::vector<float> &got,
            const std::vector<float> &want) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs((double)got[i] - (double)want[i]));
  bool ok = got.size() == want.size() && worst < 1e-4;
  printf("%s %s (worst error %.2e)\n", ok ? "PASS" : "FAIL", name, worst);
  failures += !ok;
}
std::vector<float> values(size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (float)((int)((i * 2654435761u + seed * 40503u) >> 9) % 19 - 9) / 8;
  return v;
}

int main() {
  {
    auto in = values(N, 1);
    std::vector<float> want(in);
    for (int i = 0; i < N; ++i)
      want[i] = 2.0f * in[i];
    float *din = upload(in);
    scale<<<(N + 255) / 256, 256>>>(din, 2.0f);
    expect("scale", download(din, N), want);
  }
  {
    // One element past the bound: no thread may write it.
    auto in = values(1502, 2);
    std::vector<float> want(1502, -1.f);
    for (int i = 0; i < 1501; ++i)
      want[i] = in[i] + in[i];
    float *din = upload(in), *dout = upload(std::vector<float>(1502, -1.f));
    halfsum<<<(HALF + 63) / 64, 64>>>(din, dout);
    expect("halfsum", download(dout, 1502), want);
  }
  {
    auto in = values(1502, 3);
    std::vector<float> want(1502, -1.f);
    for (int i = 0; i < 1501; ++i)
      want[i] = in[i] + 1.0f;
    float *din = upload(in), *dout = upload(std::vector<float>(1502, -1.f));
    offset<<<(HALF + 63) / 64, 64>>>(din, dout);
    expect("offset", download(dout, 1502), want);
  }
  {
    auto in = values(N, 4);
    std::vector<float> want(N);
    for (int i = 0; i < N; ++i)
      want[i] = in[i] * in[i];
    float *din = upload(in), *dout = upload(std::vector<float>(N, -1.f));
    square<<<(N + 255) / 256, 256>>>(din, dout);
    expect("square", download(dout, N), want);
  }
  {
    auto in = values(W * H, 5);
    std::vector<float> want(W * H);
    for (int i = 0; i < W * H; ++i)
      want[i] = 0.5f * in[i];
    float *din = upload(in), *dout = upload(std::vector<float>(W * H, -1.f));
    dim3 threads(16, 16), blocks((W + 15) / 16, (H + 15) / 16);
    blur<<<blocks, threads>>>(din, dout);
    expect("blur", download(dout, W * H), want);
  }
  {
    auto in = values(W * H, 6);
    std::vector<float> want(W * H, -1.f);
    for (int y = 1; y < H - 1; ++y)
      for (int x = 1; x < W - 1; ++x)
        want[y * W + x] = 0.25f * (in[y * W + x - 1] + in[y * W + x + 1] +
                                   in[(y - 1) * W + x] + in[(y + 1) * W + x]);
    float *din = upload(in), *dout = upload(std::vector<float>(W * H, -1.f));
    dim3 threads(16, 16), blocks((W + 15) / 16, (H + 15) / 16);
    jacobi<<<blocks, threads>>>(din, dout);
    expect("jacobi", download(dout, W * H), want);
    float *dt = upload(std::vector<float>(W * H, -1.f));
    jacobi_tiled<<<blocks, threads>>>(din, dt);
    expect("jacobi_tiled", download(dt, W * H), want);
  }
  {
    auto a = values(MN * MN, 7), b = values(MN * MN, 8);
    std::vector<float> want(MN * MN);
    for (int r = 0; r < MN; ++r)
      for (int c = 0; c < MN; ++c) {
        float acc = 0.0f;
        for (int k = 0; k < MN; ++k)
          acc += a[r * MN + k] * b[k * MN + c];
        want[r * MN + c] = acc;
      }
    float *da = upload(a), *db = upload(b);
    float *dc = upload(std::vector<float>(MN * MN, -1.f));
    dim3 threads(16, 16), blocks((MN + 15) / 16, (MN + 15) / 16);
    matmul<<<blocks, threads>>>(da, db, dc);
    expect("matmul", download(dc, MN * MN), want);
  }
  {
    auto in = values(ROWS * COLS, 10);
    std::vector<float> want(ROWS);
    for (int r = 0; r < ROWS; ++r) {
      float acc = 0.0f;
      for (int c = 0; c < COLS; ++c)
        acc += in[r * COLS + c];
      want[r] = acc;
    }
    float *din = upload(in), *dout = upload(std::vector<float>(ROWS, -1.f));
    rowsum<<<(ROWS + 31) / 32, 32>>>(din, dout);
    expect("rowsum", download(dout, ROWS), want);
  }
  {
    std::vector<int> v(N);
    long long sum = 0;
    for (int i = 0; i < N; ++i)
      sum += v[i] = (i * 7919) % 201 - 100;
    int *dv = upload(v), *dt = upload(std::vector<int>(1, 5));
    int *dr = upload(std::vector<int>(1, 0));
    total<<<(N + 255) / 256, 256>>>(dv, dt);
    tree<<<(N + BLOCK - 1) / BLOCK, BLOCK>>>(dv, dr);
    expect("total", {(float)download(dt, 1)[0]}, {(float)(sum + 5)});
    expect("tree", {(float)download(dr, 1)[0]}, {(float)sum});
  }
  {
    auto in = values(N, 9);
    std::vector<float> want(N);
    for (int i = 0; i < N; ++i)
      want[i] = in[i] * 3.0f;
    float *din = upload(in), *dout = upload(std::vector<float>(N, -1.f));
    named<<<(N + 255) / 256, 256>>>(din, dout);
    expect("named", download(dout, N), want);
  }
  {
    std::vector<float> want(N, -1.f);
    for (int i = 0; i < N / 256 * 256; ++i)
      want[i] = 1.0f;
    float *dout = upload(std::vector<float>(N, -1.f));
    short_grid<<<N / 256, 256>>>(dout);
    expect("short_grid", download(dout, N), want);
  }
  {
    std::vector<float> want(N, 2.0f);
    float *dout = upload(std::vector<float>(N, -1.f));
    div_up<<<DIV_UP(N, 256), 256>>>(dout);
    expect("div_up", download(dout, N), want);
  }
  {
    std::vector<float> want(N, 3.0f);
    float *dout = upload(std::vector<float>(N, -1.f));
    div_up_pair<<<DIV_UP(N, 128), 128>>>(dout);
    expect("div_up_pair", download(dout, N), want);
  }
  {
    std::vector<float> want(N, 5.0f);
    float *dout = upload(std::vector<float>(N, -1.f));
    floor_grid<<<FLOOR_GRID, 256>>>(dout);
    expect("floor_grid", download(dout, N), want);
  }
  {
    std::vector<float> want(N, 6.0f);
    float *dout = upload(std::vector<float>(N, -1.f));
    tutorial<<<BLOCKS, THREADS>>>(dout);
    expect("tutorial", download(dout, N), want);
  }
  {
    auto in = values(N, 11);
    std::vector<float> want(N);
    for (int i = 0; i < N; ++i)
      want[i] = in[i] - 1.0f;
    float *din = upload(in), *dout = upload(std::vector<float>(N, -1.f));
    LAUNCH(launched, (N + 255) / 256, 256, din, dout);
    expect("launched", download(dout, N), want);
  }
  {
    int count = N - 7;
    std::vector<float> want(N, -1.f);
    for (int i = 0; i < count; ++i)
      want[i] = 4.0f;
    float *dout = upload(std::vector<float>(N, -1.f));
    LAUNCH(counted, (COUNT + 255) / 256, 256, dout, count);
    expect("counted", download(dout, N), want);
  }
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures != 0;
}
