#include "cuda_mock.h"
// N-body accelerations: every thread walks all bodies; float4 positions,
// the own body loaded before the loop, an early-return guard.
__global__ void accel(const float4 *pos, float4 *acc, int n, float eps2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool active = i < n;
  float4 me = active ? (pos[i]) : float4();
  float ax = 0.f, ay = 0.f, az = 0.f;
  __shared__ float4 pos_tile[128];
  for (int base = 0; base < n; base += 128) {
    for (int t = threadIdx.x; t < 128 && base + t < n; t += blockDim.x)
      pos_tile[t] = pos[base + t];
    __syncthreads();
    if (active)
      for (int j = base; j < base + 128 && j < n; ++j) {
        float4 o = pos_tile[j - base];
        float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
        float r2 = dx * dx + dy * dy + dz * dz + eps2;
        float inv = rsqrtf(r2);
        float s = o.w * inv * inv * inv;
        ax += dx * s;
        ay += dy * s;
        az += dz * s;
      }
    __syncthreads();
  }
  if (active) {
    acc[i].x = ax;
    acc[i].y = ay;
    acc[i].z = az;
  }
}
