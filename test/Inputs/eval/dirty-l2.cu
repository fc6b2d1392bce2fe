// Leaves L2 full of dirty lines, then runs a kernel that reads 256 MiB and
// writes 64 floats. Profiled as is, that kernel's reads evict the dirty
// lines and their write-backs count as its DRAM writes (up to L2's size); with
// L2 cleaned before each profiled pass it writes almost nothing.
//
//   dirty-l2 [launches]
#include <cstdio>
#include <cstdlib>

#define CHECK(X)                                                               \
  do {                                                                         \
    cudaError_t E_ = (X);                                                      \
    if (E_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "dirty-l2: %s at %s:%d\n", cudaGetErrorString(E_), \
                   __FILE__, __LINE__);                                        \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

constexpr int Blocks = 64, Threads = 256;

__global__ void fill(float *P, size_t N, float V) {
  for (size_t I = blockIdx.x * (size_t)blockDim.x + threadIdx.x; I < N;
       I += (size_t)gridDim.x * blockDim.x)
    P[I] = V;
}

/// Block B sums its contiguous chunk of In into Out[B].
__global__ void chunk_sums(const float *In, size_t N, float *Out) {
  __shared__ float Partial[Threads];
  size_t Chunk = N / gridDim.x;
  const float *P = In + blockIdx.x * Chunk;
  float Sum = 0;
  for (size_t I = threadIdx.x; I < Chunk; I += blockDim.x)
    Sum += P[I];
  Partial[threadIdx.x] = Sum;
  __syncthreads();
  for (int S = Threads / 2; S > 0; S /= 2) {
    if (threadIdx.x < S)
      Partial[threadIdx.x] += Partial[threadIdx.x + S];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    Out[blockIdx.x] = Partial[0];
}

int main(int Argc, char **Argv) {
  int Launches = Argc > 1 ? std::atoi(Argv[1]) : 2;
  const size_t N = size_t(1) << 26;     // 256 MiB read by chunk_sums
  const size_t Dirty = size_t(1) << 28; // 1 GiB written just before it
  float *In, *Big, *Out;
  CHECK(cudaMalloc(&In, N * sizeof(float)));
  CHECK(cudaMalloc(&Big, Dirty * sizeof(float)));
  CHECK(cudaMalloc(&Out, Blocks * sizeof(float)));
  fill<<<1024, 256>>>(In, N, 0.5f);
  double Total = 0;
  for (int L = 0; L < Launches; ++L) {
    fill<<<1024, 256>>>(Big, Dirty, float(L));
    chunk_sums<<<Blocks, Threads>>>(In, N, Out);
    CHECK(cudaGetLastError());
    float Host[Blocks];
    CHECK(cudaMemcpy(Host, Out, sizeof(Host), cudaMemcpyDeviceToHost));
    for (float V : Host)
      Total += V;
  }
  std::printf("sum %.1f\n", Total);
  return 0;
}
