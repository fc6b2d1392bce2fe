#include "cuda_mock.h"
// The reverse orientation (reads strided, writes coalesced), an
// early-return guard, other names, the y index declared first, and a scale.
__global__ void gather_t(const double *src, double *dst, int width,
                         int height, double scale) {
  __shared__ double tile[16][18];
  for (int k = threadIdx.y; k < 16; k += 16) {
    int y = blockIdx.y * 16 + threadIdx.x;
    int x = blockIdx.x * 16 + k;
    if (x >= width || y >= height)
      continue;
    tile[threadIdx.x][k] = scale * src[x * height + y];
  }
  __syncthreads();
  for (int k = threadIdx.y; k < 16; k += 16) {
    int y = blockIdx.y * 16 + k;
    int x = blockIdx.x * 16 + threadIdx.x;
    if (x >= width || y >= height)
      continue;
    dst[y * width + x] = tile[k][threadIdx.x];
  }
}
void run(const double *s, double *d, int w, int h) {
  gather_t<<<dim3((w + 15) / 16, (h + 15) / 16), dim3(16, 16)>>>(s, d, w, h, 2.0);
}
