#include "cuda_mock.h"
// The reverse orientation (reads strided, writes coalesced), an
// early-return guard, other names, the y index declared first, and a scale.
__global__ void gather_t(const double *src, double *dst, int width,
                         int height, double scale) {
  int y = threadIdx.y + blockIdx.y * blockDim.y;
  int x = threadIdx.x + blockIdx.x * blockDim.x;
  if (x >= width || y >= height)
    return;
  dst[y * width + x] = scale * src[x * height + y];
}
void run(const double *s, double *d, int w, int h) {
  gather_t<<<dim3((w + 31) / 32, (h + 7) / 8), dim3(32, 8)>>>(s, d, w, h, 2.0);
}
