// A small CUDA program for the evaluator and the probe: saxpy, a block sum
// and an integer histogram, launched several times with the same inputs.
// It knows nothing about the probe. Seeded bugs and correct rewrites are
// chosen at compile time with -DBUG_* / -DALT_* (see corpus.py).
//
//   prog [log2n-ish count N] [iterations L]
//
// Prints each launch's time measured with CUDA events (an independent
// measurement to hold the probe's replay timing against) and a checksum of
// what it copies back.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>
#include <cuda_fp16.h>

#ifndef BLOCK
#define BLOCK 256 // saxpy and histogram launches
#endif
#define SUM_BLOCK 256 // block_sum's shape fixes the output: never varied
#define PAD 1024      // over-allocation: writes past n land here
#define NBINS 64
#define MAX_BLOCKS (1 << 22)

#define CHECK(X)                                                               \
  do {                                                                         \
    cudaError_t E_ = (X);                                                      \
    if (E_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "prog: %s at %s:%d\n", cudaGetErrorString(E_),     \
                   __FILE__, __LINE__);                                        \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

__device__ int DoneBlocks[MAX_BLOCKS];

__global__ void init(float *X, float *Y, int *Keys, size_t N) {
  for (size_t I = blockIdx.x * (size_t)blockDim.x + threadIdx.x; I < N;
       I += (size_t)gridDim.x * blockDim.x) {
    X[I] = (float)(I % 1013) * 0.001f - 0.5f;
    Y[I] = (float)(I % 127) * 0.01f;
    Keys[I] = (int)((I * 2654435761u) >> 7);
  }
}

__global__ void saxpy(int n, float a, const float *__restrict__ x,
                      const float *__restrict__ y, float *__restrict__ out) {
#if defined(ALT_GRID_STRIDE)
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    out[i] = a * x[i] + y[i];
  return;
#elif defined(ALT_FLOAT4)
  int i4 = blockIdx.x * blockDim.x + threadIdx.x;
  int n4 = n / 4;
  if (i4 < n4) {
    float4 X = reinterpret_cast<const float4 *>(x)[i4];
    float4 Y = reinterpret_cast<const float4 *>(y)[i4];
    reinterpret_cast<float4 *>(out)[i4] =
        make_float4(a * X.x + Y.x, a * X.y + Y.y, a * X.z + Y.z, a * X.w + Y.w);
  }
  int t = n4 * 4 + i4;
  if (i4 < n - n4 * 4)
    out[t] = a * x[t] + y[t];
  return;
#else
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if defined(BUG_SAXPY_FIRST_LAUNCH_ONLY)
  if (DoneBlocks[blockIdx.x])
    return;
#endif
#if defined(BUG_SAXPY_SKIP_IF_NONZERO)
  if (i < n && out[i] != 0.0f)
    return;
#endif
#if defined(BUG_SAXPY_HALF_GRID)
  if (blockIdx.x >= gridDim.x / 2 + 1)
    return;
#endif
#if defined(BUG_SAXPY_OFF_BY_ONE)
  if (i < n - 1)
#elif defined(BUG_SAXPY_WRITE_PAST_END)
  if (i <= n)
#else
  if (i < n)
#endif
  {
#if defined(BUG_SAXPY_WRONG_INDEX)
    out[i] = a * x[i < n - 1 ? i + 1 : i] + y[i];
#elif defined(BUG_SAXPY_WRONG_MATH)
    out[i] = a * x[i] - y[i];
#elif defined(BUG_SAXPY_HALF_PRECISION)
    out[i] = __half2float(__float2half(a * x[i] + y[i]));
#elif defined(ALT_FMAF)
    out[i] = fmaf(a, x[i], y[i]);
#else
    out[i] = a * x[i] + y[i];
#endif
#if defined(BUG_SAXPY_NAN_LAST)
    if (i == n - 1)
      out[i] = __int_as_float(0x7fc00000);
#endif
#if defined(BUG_SAXPY_MUTATES_Y)
    const_cast<float *>(y)[i] = 0.0f;
#endif
#if defined(BUG_SAXPY_MUTATES_X)
    const_cast<float *>(x)[i] = -x[i];
#endif
#if defined(BUG_SAXPY_ILLEGAL_ADDRESS)
    if (i == n - 1)
      out[i + (1ll << 36)] = 1.0f;
#endif
  }
#if defined(BUG_SAXPY_FIRST_LAUNCH_ONLY)
  __syncthreads();
  if (threadIdx.x == 0)
    DoneBlocks[blockIdx.x] = 1;
#endif
#endif
}

// One partial sum per block of SUM_BLOCK elements.
__global__ void block_sum(const float *__restrict__ in,
                          float *__restrict__ partial, int n) {
  __shared__ float S[SUM_BLOCK + 1];
  int t = threadIdx.x;
  int i = blockIdx.x * SUM_BLOCK + t;
#if defined(BUG_SUM_FIRST_LAUNCH_ONLY)
  if (DoneBlocks[blockIdx.x])
    return;
#endif
#if defined(BUG_SUM_NO_BOUNDS)
  S[t] = in[i];
#else
  S[t] = i < n ? in[i] : 0.0f;
#endif
#if defined(BUG_SUM_RACE_BENIGN)
  // Reads a slot another warp is writing, unsynchronized; the value read
  // practically never changes the result, so the outputs agree.
  float Peek = S[(t + 32) % SUM_BLOCK];
#endif
#if defined(BUG_SUM_MUTATES_INPUT)
  if (i < n)
    const_cast<float *>(in)[i] = 0.0f;
#endif
#if !defined(BUG_SUM_RACE_AFTER_LOAD)
  __syncthreads();
#endif
#if defined(ALT_SUM_SHUFFLE)
  // Warp shuffles, then one warp over the warp sums: another order.
  float v = S[t];
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, o);
  __syncthreads();
  if ((t & 31) == 0)
    S[t / 32] = v;
  __syncthreads();
  if (t < 32) {
    v = t < SUM_BLOCK / 32 ? S[t] : 0.0f;
    for (int o = 16; o > 0; o >>= 1)
      v += __shfl_down_sync(0xffffffffu, v, o);
    if (t == 0)
      partial[blockIdx.x] = v;
  }
  return;
#else
#if defined(BUG_SUM_TREE_OFF_BY_ONE)
  for (int s = SUM_BLOCK / 2; s > 1; s >>= 1) {
#else
  for (int s = SUM_BLOCK / 2; s > 0; s >>= 1) {
#endif
    if (t < s)
#if defined(BUG_SUM_WRONG_SHARED_INDEX)
      S[t] += S[t + s + 1];
#else
      S[t] += S[t + s];
#endif
#if !defined(BUG_SUM_NO_SYNC)
    __syncthreads();
#endif
  }
#if defined(BUG_SUM_ATOMIC_ACCUMULATE)
  if (t == 0)
    atomicAdd(&partial[blockIdx.x], S[0]);
#elif defined(BUG_SUM_WRONG_SLOT)
  if (t == 0)
    partial[blockIdx.x + 1] = S[0];
#elif defined(BUG_SUM_RACE_BENIGN)
  if (t == 0)
    partial[blockIdx.x] = S[0] + (Peek == 1234.5f ? 1e-30f : 0.0f);
#else
  if (t == 0)
    partial[blockIdx.x] = S[0];
#endif
#if defined(BUG_SUM_FIRST_LAUNCH_ONLY)
  if (t == 0)
    DoneBlocks[blockIdx.x] = 1;
#endif
#endif
}

// bins must be zero on entry (the program clears them before each launch).
__global__ void histogram(const int *__restrict__ keys,
                          unsigned *__restrict__ bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if defined(ALT_HIST_SHARED) || defined(BUG_HIST_SHARED_NO_SYNC)
  __shared__ unsigned Local[NBINS];
  for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
    Local[b] = 0;
  __syncthreads();
  if (i < n)
    atomicAdd(&Local[(unsigned)keys[i] % NBINS], 1u);
#if !defined(BUG_HIST_SHARED_NO_SYNC)
  __syncthreads();
#endif
  for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
    if (Local[b])
      atomicAdd(&bins[b], Local[b]);
  return;
#else
#if defined(BUG_HIST_SKIP_LAST)
  if (i >= n - 1)
    return;
#else
  if (i >= n)
    return;
#endif
#if defined(BUG_HIST_WRONG_KEY_INDEX)
  unsigned k = (unsigned)keys[i / 2];
#else
  unsigned k = (unsigned)keys[i];
#endif
#if defined(BUG_HIST_MUTATES_KEYS)
  const_cast<int *>(keys)[i] = 0;
#endif
#if defined(BUG_HIST_NONATOMIC)
  bins[k % NBINS] += 1;
#elif defined(BUG_HIST_OFF_BY_ONE_BIN)
  atomicAdd(&bins[k % (NBINS - 1)], 1u);
#elif defined(BUG_HIST_OUT_OF_RANGE_BIN)
  atomicAdd(&bins[k % NBINS + (i == 0 ? NBINS : 0)], 1u);
#elif defined(BUG_HIST_DOUBLE_COUNT)
  atomicAdd(&bins[k % NBINS], i == 0 ? 2u : 1u);
#else
  atomicAdd(&bins[k % NBINS], 1u);
#endif
#endif
}

static double median(std::vector<float> V) {
  if (V.empty())
    return 0;
  std::sort(V.begin(), V.end());
  return V[V.size() / 2];
}

int main(int argc, char **argv) {
  int N = argc > 1 ? std::atoi(argv[1]) : (1 << 22) + 37;
  int L = argc > 2 ? std::atoi(argv[2]) : 4;
  int SumBlocks = (N + SUM_BLOCK - 1) / SUM_BLOCK;
  float *X, *Y, *Out, *Partial;
  int *Keys;
  unsigned *Bins;
  CHECK(cudaMalloc(&X, (N + PAD) * sizeof(float)));
  CHECK(cudaMalloc(&Y, (N + PAD) * sizeof(float)));
  CHECK(cudaMalloc(&Out, (N + PAD) * sizeof(float)));
  CHECK(cudaMalloc(&Keys, (N + PAD) * sizeof(int)));
  CHECK(cudaMalloc(&Partial, (SumBlocks + PAD) * sizeof(float)));
  CHECK(cudaMalloc(&Bins, (NBINS + PAD) * sizeof(unsigned)));
  CHECK(cudaMemset(X, 0, (N + PAD) * sizeof(float)));
  CHECK(cudaMemset(Y, 0, (N + PAD) * sizeof(float)));
  CHECK(cudaMemset(Out, 0, (N + PAD) * sizeof(float)));
  // A nonzero pad, so a write or read past n changes something.
  CHECK(cudaMemset(Out + N, 0x3f, PAD * sizeof(float)));
  CHECK(cudaMemset(Keys, 0, (N + PAD) * sizeof(int)));
  CHECK(cudaMemset(Partial, 0, (SumBlocks + PAD) * sizeof(float)));
  CHECK(cudaMemset(Bins, 0, (NBINS + PAD) * sizeof(unsigned)));
  init<<<1024, 256>>>(X, Y, Keys, N);
  CHECK(cudaGetLastError());

  cudaEvent_t Start, Stop;
  CHECK(cudaEventCreate(&Start));
  CHECK(cudaEventCreate(&Stop));
  std::vector<float> SaxpyMs, SumMs;
  int Grid = (N + BLOCK - 1) / BLOCK;
#if defined(ALT_GRID_STRIDE)
  Grid = 132 * 8;
#elif defined(ALT_FLOAT4)
  Grid = (N / 4 + BLOCK - 1) / BLOCK;
#endif
  for (int It = 0; It < L; ++It) {
    float Ms = 0;
    CHECK(cudaEventRecord(Start));
    saxpy<<<Grid, BLOCK>>>(N, 2.0f, X, Y, Out);
    CHECK(cudaEventRecord(Stop));
    CHECK(cudaEventSynchronize(Stop));
    CHECK(cudaGetLastError());
    CHECK(cudaEventElapsedTime(&Ms, Start, Stop));
    SaxpyMs.push_back(Ms);

    CHECK(cudaEventRecord(Start));
    block_sum<<<SumBlocks, SUM_BLOCK>>>(Out, Partial, N);
    CHECK(cudaEventRecord(Stop));
    CHECK(cudaEventSynchronize(Stop));
    CHECK(cudaGetLastError());
    CHECK(cudaEventElapsedTime(&Ms, Start, Stop));
    SumMs.push_back(Ms);

    CHECK(cudaMemset(Bins, 0, NBINS * sizeof(unsigned)));
    histogram<<<(N + BLOCK - 1) / BLOCK, BLOCK>>>(Keys, Bins, N);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaDeviceSynchronize());

  std::vector<float> HostPartial(SumBlocks);
  std::vector<unsigned> HostBins(NBINS);
  CHECK(cudaMemcpy(HostPartial.data(), Partial, SumBlocks * sizeof(float),
                   cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(HostBins.data(), Bins, NBINS * sizeof(unsigned),
                   cudaMemcpyDeviceToHost));
  double Total = 0;
  for (float P : HostPartial)
    Total += P;
  unsigned long long Count = 0;
  for (unsigned B : HostBins)
    Count += B;
  std::printf("sum %.6e count %llu\n", Total, Count);
  std::printf("saxpy_ms");
  for (float T : SaxpyMs)
    std::printf(" %.5f", T);
  std::printf("\nblock_sum_ms");
  for (float T : SumMs)
    std::printf(" %.5f", T);
  // Later launches only: the probe may work inside the first one.
  std::vector<float> LaterSaxpy(SaxpyMs.begin() + (L > 1), SaxpyMs.end());
  std::vector<float> LaterSum(SumMs.begin() + (L > 1), SumMs.end());
  std::printf("\nmedian_later saxpy %.5f block_sum %.5f\n", median(LaterSaxpy),
              median(LaterSum));
  return 0;
}
