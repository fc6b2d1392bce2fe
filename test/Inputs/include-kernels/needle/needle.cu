// A Rodinia-style program whose kernels live in an included .cu: the main
// file includes needle_kernel.cu and launches its kernels along the
// anti-diagonals of the score matrix (a wavefront), as Rodinia's needle does.
#include "cuda_mock.h"
#include <stdio.h>
#include <stdlib.h>

#define BLOCK_SIZE 16

#include "needle_kernel.cu"

int main(int argc, char **argv) {
  int n = 16 * BLOCK_SIZE + 1, penalty = 10;
  size_t bytes = sizeof(int) * n * n;
  int *ref = (int *)malloc(bytes), *score = (int *)malloc(bytes);
  srand(7);
  for (int i = 0; i < n * n; ++i)
    ref[i] = rand() % 10 - 5;
  for (int i = 0; i < n * n; ++i)
    score[i] = 0;
  for (int i = 1; i < n; ++i)
    score[i * n] = -i * penalty;
  for (int j = 1; j < n; ++j)
    score[j] = -j * penalty;
  int *d_ref, *d_score;
  cudaMalloc((void **)&d_ref, bytes);
  cudaMalloc((void **)&d_score, bytes);
  cudaMemcpy(d_ref, ref, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(d_score, score, bytes, cudaMemcpyHostToDevice);
  int blocks = (n - 1) / BLOCK_SIZE;
  for (int i = 1; i <= blocks; ++i)
    needle_diagonal_1<<<i, BLOCK_SIZE>>>(d_ref, d_score, n, penalty, i);
  for (int i = blocks - 1; i >= 1; --i)
    needle_diagonal_2<<<i, BLOCK_SIZE>>>(d_ref, d_score, n, penalty, i,
                                         blocks);
  cudaMemcpy(score, d_score, bytes, cudaMemcpyDeviceToHost);
  long sum = 0;
  for (int i = 0; i < n * n; ++i)
    sum += score[i];
  printf("score %d checksum %ld\n", score[n * n - 1], sum);
  cudaFree(d_ref);
  cudaFree(d_score);
  free(ref);
  free(score);
  return 0;
}
