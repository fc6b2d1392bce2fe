// Which L2 preparation before a kernel reproduces the DRAM write bytes that
// `ncu --cache-control all` reports? Run under `ncu --cache-control none` with
// a mode argument; each mode prepares L2 differently, then launches the two
// target kernels (a small saxpy that writes 16 MB, and a sum that reads 256 MB
// and writes 8 bytes) REPS times each. bench/eval/l2clean/run.sh drives it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(2); } } while (0)

__global__ void fill(float *p, size_t n, float v) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = v + (float)(i & 1023);
}

__global__ void touch(const uint4 *p, size_t n, unsigned *sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

__global__ void saxpy_target(int n, float a, const float *x, const float *y,
                             float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}

__global__ void sum_target(const int *in, unsigned long long *total, int n) {
  __shared__ unsigned long long s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0;
  __syncthreads();
  for (int w = 128; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(total, s[0]);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "none";
  int reps = argc > 2 ? atoi(argv[2]) : 3;
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  size_t big = (size_t)1 << 28;  // 1 GiB of floats: the "previous kernel"
  size_t scratch = (size_t)l2 * 4;
  float *b, *x, *y, *o;
  int *keys;
  unsigned long long *tot;
  unsigned char *s;
  unsigned *sink;
  int n = (1 << 22) + 37, m = 1 << 26;
  CK(cudaMalloc(&b, big * 4));
  CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4)); CK(cudaMalloc(&o, n * 4));
  CK(cudaMalloc(&keys, (size_t)m * 4)); CK(cudaMalloc(&tot, 8));
  CK(cudaMalloc(&s, scratch)); CK(cudaMalloc(&sink, 4));
  CK(cudaMemset(s, 0, scratch));
  CK(cudaMemset(keys, 1, (size_t)m * 4));
  fill<<<1024, 256>>>(x, n, 1.f);
  fill<<<1024, 256>>>(y, n, 2.f);
  for (int r = 0; r < reps; ++r)
    for (int k = 0; k < 2; ++k) {
      fill<<<4096, 256>>>(b, big, (float)r);  // leaves L2 full of dirty lines
      if (!strcmp(mode, "read2")) {
        touch<<<1024, 512>>>((const uint4 *)s, 2 * (size_t)l2 / 16, sink);
      } else if (!strcmp(mode, "read4")) {
        touch<<<1024, 512>>>((const uint4 *)s, 4 * (size_t)l2 / 16, sink);
      } else if (!strcmp(mode, "read2x2")) {
        touch<<<1024, 512>>>((const uint4 *)s, 2 * (size_t)l2 / 16, sink);
        touch<<<1024, 512>>>((const uint4 *)s + 2 * (size_t)l2 / 16,
                             2 * (size_t)l2 / 16, sink);
      } else if (!strcmp(mode, "memset2")) {
        CK(cudaMemsetAsync(s, 0, 2 * (size_t)l2));
      } else if (!strcmp(mode, "memset2-read2")) {
        CK(cudaMemsetAsync(s, 0, 2 * (size_t)l2));
        touch<<<1024, 512>>>((const uint4 *)s + 2 * (size_t)l2 / 16,
                             2 * (size_t)l2 / 16, sink);
      } else if (strcmp(mode, "none")) {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
      }
      CK(cudaDeviceSynchronize());
      if (k == 0)
        saxpy_target<<<(n + 255) / 256, 256>>>(n, 2.f, x, y, o);
      else
        sum_target<<<m / 256, 256>>>(keys, tot, m);
      CK(cudaDeviceSynchronize());
    }
  printf("done %s\n", mode);
  return 0;
}
