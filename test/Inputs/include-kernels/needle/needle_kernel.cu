// The kernels of needle.cu, which includes this file. Each block fills one
// BLOCK_SIZE x BLOCK_SIZE tile of the score matrix, one anti-diagonal of
// the tile at a time.
#ifndef NEEDLE_KERNEL_CU
#define NEEDLE_KERNEL_CU

__device__ int maximum(int a, int b, int c) {
  int k = a > b ? a : b;
  return k > c ? k : c;
}

__global__ void needle_diagonal_1(const int *ref, int *score, int cols,
                                  int penalty, int i) {
  int bx = blockIdx.x, tx = threadIdx.x;
  int b_index_x = bx, b_index_y = i - 1 - bx;
  int base = cols * BLOCK_SIZE * b_index_y + BLOCK_SIZE * b_index_x + cols + 1;
  for (int m = 0; m < BLOCK_SIZE; m++) {
    if (tx <= m) {
      int x = tx, y = m - tx;
      int at = base + cols * y + x;
      score[at] = maximum(score[at - cols - 1] + ref[at],
                          score[at - 1] - penalty, score[at - cols] - penalty);
    }
    __syncthreads();
  }
  for (int m = BLOCK_SIZE - 2; m >= 0; m--) {
    if (tx <= m) {
      int x = tx + BLOCK_SIZE - 1 - m, y = BLOCK_SIZE - 1 - tx;
      int at = base + cols * y + x;
      score[at] = maximum(score[at - cols - 1] + ref[at],
                          score[at - 1] - penalty, score[at - cols] - penalty);
    }
    __syncthreads();
  }
}

__global__ void needle_diagonal_2(const int *ref, int *score, int cols,
                                  int penalty, int i, int block_width) {
  int bx = blockIdx.x, tx = threadIdx.x;
  int b_index_x = bx + block_width - i, b_index_y = block_width - bx - 1;
  int base = cols * BLOCK_SIZE * b_index_y + BLOCK_SIZE * b_index_x + cols + 1;
  for (int m = 0; m < BLOCK_SIZE; m++) {
    if (tx <= m) {
      int x = tx, y = m - tx;
      int at = base + cols * y + x;
      score[at] = maximum(score[at - cols - 1] + ref[at],
                          score[at - 1] - penalty, score[at - cols] - penalty);
    }
    __syncthreads();
  }
  for (int m = BLOCK_SIZE - 2; m >= 0; m--) {
    if (tx <= m) {
      int x = tx + BLOCK_SIZE - 1 - m, y = BLOCK_SIZE - 1 - tx;
      int at = base + cols * y + x;
      score[at] = maximum(score[at - cols - 1] + ref[at],
                          score[at - 1] - penalty, score[at - cols] - penalty);
    }
    __syncthreads();
  }
}

#endif
