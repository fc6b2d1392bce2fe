// Device check of the wide-load rewrites on the paths the benchmark does not
// reach: n not a multiple of the word (scalar tail) and inputs that are not
// aligned to the word (scalar fallback). The kernels below are rewritten by
// edits.json (privatize-atomics vector_bytes 16 and 8, vectorize uchar and
// __half); check.cu is the result (`clang-optiml apply input.cu --edit
// edits.json -o check.cu` with the CUDA SDK, which test/edit/vectorize.test
// checks). Each case is compared with a CPU result; the program prints one
// line per case and PASS or FAIL.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

#define CK(call)                                                              \
  do {                                                                        \
    cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) {                                                  \
      fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_),     \
              __FILE__, __LINE__);                                            \
      exit(2);                                                                \
    }                                                                         \
  } while (0)

__global__ void byte_hist(int n, const unsigned char *data, unsigned *bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[data[i]], 1u);
}

template <typename Size>
__global__ void sample_hist(const unsigned short *samples, int *hist, Size n) {
  for (Size k = blockIdx.x * blockDim.x + threadIdx.x; k < n;
       k += blockDim.x * gridDim.x) {
    unsigned short s = samples[k];
    int b = s >> 10;
    atomicAdd(hist + b, 1);
  }
}

__global__ void clamp_add(const unsigned char *in, unsigned char *out, int add,
                          int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int c = in[i] + add;
    out[i] = c > 255 ? 255 : c;
  }
}

__global__ void haxpy(int n, __half a, const __half *x, __half *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

static unsigned hash(unsigned i) {
  i ^= i >> 15; i *= 2246822519u; i ^= i >> 13; i *= 3266489917u;
  return i ^ (i >> 16);
}

int main() {
  const int Max = (1 << 20) + 64;
  unsigned char *d8, *o8;
  unsigned short *d16;
  unsigned *bins;
  int *hist;
  __half *hx, *hy;
  CK(cudaMalloc(&d8, Max));
  CK(cudaMalloc(&o8, Max));
  CK(cudaMalloc(&d16, 2 * Max));
  CK(cudaMalloc(&bins, 256 * sizeof(unsigned)));
  CK(cudaMalloc(&hist, 64 * sizeof(int)));
  CK(cudaMalloc(&hx, 2 * Max));
  CK(cudaMalloc(&hy, 2 * Max));
  std::vector<unsigned char> h8(Max);
  std::vector<unsigned short> h16(Max);
  std::vector<__half> hhx(Max), hhy(Max);
  for (int i = 0; i < Max; ++i) {
    h8[i] = (unsigned char)hash(i);
    h16[i] = (unsigned short)hash(i + 7);
    hhx[i] = __float2half((float)(hash(i) % 64) / 8.0f);
    hhy[i] = __float2half((float)(hash(i + 3) % 64) / 8.0f);
  }
  CK(cudaMemcpy(d8, h8.data(), Max, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d16, h16.data(), 2 * Max, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(hx, hhx.data(), 2 * Max, cudaMemcpyHostToDevice));
  const int Sizes[] = {0, 1, 3, 15, 16, 17, 31, 1000, 65537, 1 << 20};
  const int Offsets[] = {0, 1, 2, 13};
  int Bad = 0, Cases = 0;
  for (int n : Sizes)
    for (int off : Offsets) {
      // byte histogram (privatize-atomics, lane columns, 16-byte words)
      std::vector<unsigned> want(256, 0), got(256);
      for (int i = 0; i < n; ++i) want[h8[off + i]]++;
      CK(cudaMemset(bins, 0, 256 * sizeof(unsigned)));
      byte_hist<<<(n + 255) / 256 + 1, 256>>>(n, d8 + off, bins);
      CK(cudaMemcpy(got.data(), bins, 256 * sizeof(unsigned), cudaMemcpyDeviceToHost));
      bool ok = got == want;
      // 16-bit histogram, both instantiations (8-byte words)
      std::vector<int> want16(64, 0), got16(64);
      for (int i = 0; i < n; ++i) want16[h16[off + i] >> 10] += 2;
      CK(cudaMemset(hist, 0, 64 * sizeof(int)));
      sample_hist<<<64, 128>>>(d16 + off, hist, n);
      sample_hist<<<64, 128>>>(d16 + off, hist, (long)n);
      CK(cudaMemcpy(got16.data(), hist, 64 * sizeof(int), cudaMemcpyDeviceToHost));
      ok &= got16 == want16;
      // uchar4 map
      std::vector<unsigned char> out8(n + 1);
      CK(cudaMemset(o8, 0xAB, Max));
      clamp_add<<<(n + 255) / 256 + 1, 256>>>(d8 + off, o8 + off, 100, n);
      CK(cudaMemcpy(out8.data(), o8 + off, n + 1, cudaMemcpyDeviceToHost));
      for (int i = 0; i < n; ++i) {
        int c = h8[off + i] + 100;
        ok &= out8[i] == (c > 255 ? 255 : c);
      }
      ok &= out8[n] == 0xAB; // nothing written past n
      // __half2 map (values exact in half)
      CK(cudaMemcpy(hy, hhy.data(), 2 * Max, cudaMemcpyHostToDevice));
      haxpy<<<(n + 255) / 256 + 1, 256>>>(n, __float2half(2.0f), hx + off, hy + off);
      std::vector<__half> outh(Max);
      CK(cudaMemcpy(outh.data(), hy, 2 * Max, cudaMemcpyDeviceToHost));
      for (int i = 0; i < Max; ++i) {
        float y = __half2float(hhy[i]);
        if (i >= off && i < off + n)
          y += 2.0f * __half2float(hhx[i]);
        ok &= __half2float(outh[i]) == y;
      }
      CK(cudaGetLastError());
      printf("n=%d offset=%d %s\n", n, off, ok ? "ok" : "WRONG");
      Bad += !ok;
      ++Cases;
    }
  printf("%d of %d cases right\n%s\n", Cases - Bad, Cases, Bad ? "FAIL" : "PASS");
  return Bad ? 1 : 0;
}
