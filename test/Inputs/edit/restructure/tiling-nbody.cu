#include "cuda_mock.h"
// N-body accelerations: every thread walks all bodies; float4 positions,
// the own body loaded before the loop, an early-return guard.
__global__ void accel(const float4 *pos, float4 *acc, int n, float eps2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float4 me = pos[i];
  float ax = 0.f, ay = 0.f, az = 0.f;
  for (int j = 0; j < n; ++j) {
    float4 o = pos[j];
    float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
    float r2 = dx * dx + dy * dy + dz * dz + eps2;
    float inv = rsqrtf(r2);
    float s = o.w * inv * inv * inv;
    ax += dx * s;
    ay += dy * s;
    az += dz * s;
  }
  acc[i].x = ax;
  acc[i].y = ay;
  acc[i].z = az;
}
