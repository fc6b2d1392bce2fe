#include "cuda_mock.h"

static const int D = 48;

__global__ void centered_dot(const float *a, const float *b, float *out,
                             unsigned n, int d) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float *p = a + i * d;
    const float *q = b + i * d;
    float sp = 0.f;
    float sq = 0.f;
    for (int j = 0; j < d; ++j) {
      sp += p[j];
      sq += q[j];
    }
    float mp = sp / d;
    float mq = sq / d;
    float dot = 0.f;
    for (int j = 0; j < d; ++j) {
      float u = p[j] - mp;
      float v = q[j] - mq;
      dot += u * v;
    }
    out[i] = dot;
  }
}

void run(const float *a, const float *b, float *out, unsigned n) {
  centered_dot<<<(n + 255) / 256, 256>>>(a, b, out, n, D);
  centered_dot<<<(n + 255) / 256, 256>>>(a, b, out, n, 40);
}
