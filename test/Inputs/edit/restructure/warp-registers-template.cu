#include "cuda_mock.h"

template <int N>
__global__ void layer_norm(const float *in, const float *gain, float *out,
                           int rows) {
  int r = threadIdx.x + blockDim.x * blockIdx.x;
  if (r >= rows)
    return;
  const float *x = in + r * N;
  float mean = 0.f;
  for (int c = 0; c < N; c++)
    mean += x[c];
  mean /= N;
  float var = 0.f;
  for (int c = 0; c < N; c++)
    var += (x[c] - mean) * (x[c] - mean);
  float inv = rsqrtf(var / N + 1e-5f);
  for (int c = 0; c < N; c++)
    out[r * N + c] = (x[c] - mean) * inv * gain[c];
}

void run(const float *in, const float *g, float *out, int rows) {
  layer_norm<512><<<(rows + 255) / 256, 256>>>(in, g, out, rows);
  layer_norm<1000><<<(rows + 255) / 256, 256>>>(in, g, out, rows);
}
