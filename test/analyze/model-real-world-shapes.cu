// Shapes the kernel model misjudged on real programs (issue 20), with the
// toolkit's own headers: the CUDA samples' reduction (shared memory through
// a SharedMemory<T> helper's conversion to T *, barriers through
// cooperative groups, `+=` that is an overloaded-operator call inside a
// template once cooperative_groups.h is included) was classed "map" with
// its shared accesses unlisted and no barrier; 1D/3D stencils and a
// separable convolution (loops over offsets on both sides of the element)
// were classed "reduction" or "matmul-like".
// REQUIRES: cuda-sdk
// RUN: clang-optiml analyze %s | FileCheck %s

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

template <class T> struct SharedMemory {
  __device__ inline operator T *() {
    extern __shared__ int __smem[];
    return (T *)__smem;
  }
};

template <class T>
__global__ void reduce0(const T *g_idata, T *g_odata, unsigned int n) {
  cg::thread_block cta = cg::this_thread_block();
  T *sdata = SharedMemory<T>();
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? g_idata[i] : 0;
  cg::sync(cta);
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    cta.sync();
  }
  if (tid == 0)
    g_odata[blockIdx.x] = sdata[0];
}
// CHECK: kernel reduce0 ({{.*}}:23) [reduction: tree combination in shared memory sdata (loop reduce0/loop0)]
// CHECK: write shared sdata[tid] line 28: coalesced
// CHECK: read-write shared sdata[tid] line 32: coalesced
// CHECK: read shared sdata[tid + s] line 32: coalesced
// CHECK: shared T * sdata (dynamic)
// CHECK: __syncthreads: sync (line 29), sync (line 33)

#define RADIUS 3
__constant__ float c_filter[2 * RADIUS + 1];

__global__ void stencil1d(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < RADIUS || i >= n - RADIUS)
    return;
  float result = 0;
  for (int j = -RADIUS; j <= RADIUS; j++)
    result += in[i + j];
  out[i] = result;
}
// CHECK: kernel stencil1d ({{.*}}) [stencil: a loop sums values read at offsets on both sides of each element]

__global__ void rowconv(const float *in, float *out, int w, int h, int r) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  float sum = 0;
  for (int k = -r; k <= r; k++) {
    int xx = min(max(x + k, 0), w - 1);
    sum += in[y * w + xx] * c_filter[r + k];
  }
  out[y * w + x] = sum;
}
// CHECK: kernel rowconv ({{.*}}) [stencil: weighted sum of in * c_filter over offsets on both sides of each element]

__global__ void stencil3d(const float *in, float *out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1)
    return;
  for (int z = 1; z < nz - 1; z++) {
    int c = (z * ny + y) * nx + x;
    float v = 0;
    for (int d = -1; d <= 1; d += 2) {
      v += in[c + d];
      v += in[c + d * nx];
      v += in[c + d * nx * ny];
    }
    out[c] = v - 6 * in[c];
  }
}
// CHECK: kernel stencil3d ({{.*}}) [stencil: a loop sums values read at offsets on both sides of each element]

__global__ void rowsum(const float *in, float *out) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int j = 0; j < 16; j++)
    s += in[r * 16 + j];
  out[r] = s;
}
// CHECK: kernel rowsum ({{.*}}) [reduction: a loop accumulates values read from memory]

int main() {
  float *in = nullptr, *out = nullptr;
  reduce0<float><<<4, 256, 256 * sizeof(float)>>>(in, out, 1024);
  return 0;
}
