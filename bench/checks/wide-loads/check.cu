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
  __shared__ unsigned int bins_private[256][32];
  for (int bin = threadIdx.x; bin < 8192; bin += blockDim.x)
    bins_private[bin / 32][bin % 32] = 0;
  __syncthreads();
  int scalar_from = 0;
  if (reinterpret_cast<unsigned long long>(data) % 16 == 0) {
    scalar_from = n / 16 * 16;
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n / 16; v += blockDim.x * gridDim.x) {
      uint4 data_v = reinterpret_cast<const uint4 *>(data)[v];
      const unsigned char *data_e = reinterpret_cast<const unsigned char *>(&data_v);
      #pragma unroll
      for (int e = 0; e < 16; ++e)
        atomicAdd(&bins_private[data_e[e]][threadIdx.x % 32], 1u);
    }
  }
  for (int i = scalar_from + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&bins_private[data[i]][threadIdx.x % 32], 1u);
  __syncthreads();
  for (int bin = threadIdx.x; bin < 256; bin += blockDim.x) {
    unsigned int sum = 0;
    for (int lane1 = 0; lane1 < 32; ++lane1)
      sum += bins_private[bin][(lane1 + bin) % 32];
    if (sum != 0)
      atomicAdd(&bins[bin], sum);
  }
}

template <typename Size>
__global__ void sample_hist(const unsigned short *samples, int *hist, Size n) {
  __shared__ int hist_private[64];
  for (int bin1 = threadIdx.x; bin1 < 64; bin1 += blockDim.x)
    hist_private[bin1] = 0;
  __syncthreads();
  Size scalar_from1 = 0;
  if (reinterpret_cast<unsigned long long>(samples) % 8 == 0) {
    scalar_from1 = n / 4 * 4;
    for (Size v1 = blockIdx.x * blockDim.x + threadIdx.x; v1 < n / 4; v1 += blockDim.x * gridDim.x) {
      uint2 samples_v = reinterpret_cast<const uint2 *>(samples)[v1];
      const unsigned short *samples_e = reinterpret_cast<const unsigned short *>(&samples_v);
      #pragma unroll
      for (int e1 = 0; e1 < 4; ++e1) {
        unsigned short s = samples_e[e1];
        int b = s >> 10;
        atomicAdd(hist_private + b, 1);
      }
    }
  }
  for (Size k = scalar_from1 + blockIdx.x * blockDim.x + threadIdx.x; k < n; k += blockDim.x * gridDim.x) {
    unsigned short s = samples[k];
    int b = s >> 10;
    atomicAdd(hist_private + b, 1);
  }
  __syncthreads();
  for (int bin1 = threadIdx.x; bin1 < 64; bin1 += blockDim.x)
    if (hist_private[bin1] != 0)
      atomicAdd(&hist[bin1], hist_private[bin1]);
}

__global__ void clamp_add(const unsigned char *in, unsigned char *out, int add,
                          int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (reinterpret_cast<unsigned long long>(in) % 4 == 0 &&
      reinterpret_cast<unsigned long long>(out) % 4 == 0) {
    for (int v = tid; v < n / 4; v += blockDim.x * gridDim.x) {
      uchar4 in_v = reinterpret_cast<const uchar4 *>(in)[v];
      uchar4 out_v;
      {
        int c = in_v.x + add;
        out_v.x = c > 255 ? 255 : c;
      }
      {
        int c = in_v.y + add;
        out_v.y = c > 255 ? 255 : c;
      }
      {
        int c = in_v.z + add;
        out_v.z = c > 255 ? 255 : c;
      }
      {
        int c = in_v.w + add;
        out_v.w = c > 255 ? 255 : c;
      }
      reinterpret_cast<uchar4 *>(out)[v] = out_v;
    }
    for (int i = n / 4 * 4 + tid; i < n; i += blockDim.x * gridDim.x) {
      int c = in[i] + add;
      out[i] = c > 255 ? 255 : c;
    }
  } else {
    for (int i = tid; i < n; i += blockDim.x * gridDim.x) {
      int c = in[i] + add;
      out[i] = c > 255 ? 255 : c;
    }
  }
}

__global__ void haxpy(int n, __half a, const __half *x, __half *y) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (reinterpret_cast<unsigned long long>(x) % 4 == 0 &&
      reinterpret_cast<unsigned long long>(y) % 4 == 0) {
    for (int v = tid; v < n / 2; v += blockDim.x * gridDim.x) {
      __half2 x_v = reinterpret_cast<const __half2 *>(x)[v];
      __half2 y_v = reinterpret_cast<__half2 *>(y)[v];
      y_v.x = a * x_v.x + y_v.x;
      y_v.y = a * x_v.y + y_v.y;
      reinterpret_cast<__half2 *>(y)[v] = y_v;
    }
    for (int i = n / 2 * 2 + tid; i < n; i += blockDim.x * gridDim.x) {
      y[i] = a * x[i] + y[i];
    }
  } else {
    for (int i = tid; i < n; i += blockDim.x * gridDim.x) {
      y[i] = a * x[i] + y[i];
    }
  }
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
      byte_hist<<<((n + 255) / 256 + 1) < 64 ? ((n + 255) / 256 + 1) : 64, 256>>>(n, d8 + off, bins);
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
      clamp_add<<<(((n + 255) / 256 + 1) + 3) / 4, 256>>>(d8 + off, o8 + off, 100, n);
      CK(cudaMemcpy(out8.data(), o8 + off, n + 1, cudaMemcpyDeviceToHost));
      for (int i = 0; i < n; ++i) {
        int c = h8[off + i] + 100;
        ok &= out8[i] == (c > 255 ? 255 : c);
      }
      ok &= out8[n] == 0xAB; // nothing written past n
      // __half2 map (values exact in half)
      CK(cudaMemcpy(hy, hhy.data(), 2 * Max, cudaMemcpyHostToDevice));
      haxpy<<<(((n + 255) / 256 + 1) + 1) / 2, 256>>>(n, __float2half(2.0f), hx + off, hy + off);
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
