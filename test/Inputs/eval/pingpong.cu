// Jacobi sweeps on an N x N grid with two buffers swapped after every
// launch (the output of launch k is the input of launch k+1), the way
// bench/kernels/jacobi2d runs. A benchmark phase of Reps solves continues
// from whatever the buffers hold; then both buffers are reset and one more
// solve runs, whose result the program prints. That result is the same for
// any Reps, but the number of launches is not: a program that sizes its
// benchmark loop from a timed warm-up launches more or fewer times from
// one run to the next, and Reps stands for that.
//
//   pingpong [N [Sweeps [Reps]]]     (defaults 512 20 1)
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#define CHECK(X)                                                               \
  do {                                                                         \
    cudaError_t E_ = (X);                                                      \
    if (E_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "pingpong: %s at %s:%d\n", cudaGetErrorString(E_), \
                   __FILE__, __LINE__);                                        \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

__global__ void sweep(int N, const float *In, float *Out) {
  int J = blockIdx.x * blockDim.x + threadIdx.x;
  int I = blockIdx.y * blockDim.y + threadIdx.y;
  if (I > 0 && I < N - 1 && J > 0 && J < N - 1)
    Out[I * N + J] = 0.25f * (In[(I - 1) * N + J] + In[(I + 1) * N + J] +
                              In[I * N + J - 1] + In[I * N + J + 1]);
}

int main(int Argc, char **Argv) {
  int N = Argc > 1 ? std::atoi(Argv[1]) : 512;
  int Sweeps = Argc > 2 ? std::atoi(Argv[2]) : 20;
  int Reps = Argc > 3 ? std::atoi(Argv[3]) : 1;
  size_t Cells = (size_t)N * N;
  std::vector<float> Init(Cells);
  unsigned H = 12345;
  for (float &V : Init) {
    H = H * 1664525u + 1013904223u;
    V = (float)(H >> 8) * (1.0f / 16777216.0f);
  }
  float *A, *B;
  CHECK(cudaMalloc(&A, Cells * sizeof(float)));
  CHECK(cudaMalloc(&B, Cells * sizeof(float)));
  auto Reset = [&] {
    CHECK(cudaMemcpy(A, Init.data(), Cells * sizeof(float),
                     cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(B, Init.data(), Cells * sizeof(float),
                     cudaMemcpyHostToDevice));
  };
  dim3 Threads(16, 16), Blocks((N + 15) / 16, (N + 15) / 16);
  auto Solve = [&] {
    for (int S = 0; S < Sweeps; ++S) {
      sweep<<<Blocks, Threads>>>(N, A, B);
      std::swap(A, B);
    }
  };
  Reset();
  for (int R = 0; R < Reps; ++R)
    Solve();
  Reset();
  Solve();
  CHECK(cudaDeviceSynchronize());
  std::vector<float> Got(Cells);
  CHECK(cudaMemcpy(Got.data(), A, Cells * sizeof(float),
                   cudaMemcpyDeviceToHost));
  double Sum = 0;
  for (float V : Got)
    Sum += V;
  std::printf("launches %d sum %.4f\n", (Reps + 1) * Sweeps, Sum);
  return 0;
}
