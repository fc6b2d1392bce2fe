// all-pairs-tiling on an n-body kernel written as people write it (issue 20):
// the own body built with make_float4 before the loop, a softening term from
// sqrtf, and the accumulators' type a macro (#define REAL float). clang's
// HasSideEffects took the calls for side effects and refused; the macro type
// made the rewrite drop the accumulators' declaration. Now the calls are
// judged by what they do (make_float4's body writes only its own local;
// sqrtf is the toolkit's math library) and the declaration is copied as
// written. Look-alikes stay refused: a warp shuffle or an atomic before the
// loop, which threads outside the bounds may not skip.
// REQUIRES: cuda-sdk, nvcc
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu
// RUN: echo '{"kind":"all-pairs-tiling","target":"accel/loop0","params":{"tile":128}}' > %t/e.json
// RUN: clang-optiml apply %t/k.cu --edit %t/e.json -o %t/out.cu
// RUN: FileCheck --check-prefix=OUT %s < %t/out.cu
// RUN: %nvcc -c -arch=sm_90 -o %t/out.o %t/out.cu
// RUN: clang-optiml transforms -v %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: cmp %s %t/k.cu

#define REAL float

__global__ void accel(const float4 *pos, float4 *acc, int n, float eps2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float4 me = make_float4(pos[i].x, pos[i].y, pos[i].z, 0.f);
  float soft = sqrtf(eps2);
  REAL ax = 0.f, ay = 0.f, az = 0.f;
  for (int j = 0; j < n; ++j) {
    float4 o = pos[j];
    float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
    float r2 = dx * dx + dy * dy + dz * dz + soft * soft;
    float inv = rsqrtf(r2);
    float s = o.w * inv * inv * inv;
    ax += dx * s;
    ay += dy * s;
    az += dz * s;
  }
  acc[i] = make_float4(ax, ay, az, 0.f);
}
// OUT: bool active = i < n;
// OUT-NEXT: float4 me = active ? (make_float4(pos[i].x, pos[i].y, pos[i].z, 0.f)) : float4();
// OUT-NEXT: float soft = sqrtf(eps2);
// OUT-NEXT: REAL ax = 0.f, ay = 0.f, az = 0.f;
// OUT-NEXT: __shared__ float4 pos_tile[128];

__global__ void shuffled(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float lead = __shfl_sync(0xffffffffu, x[i], 0);
  float acc = 0.f;
  for (int j = 0; j < n; ++j)
    acc += x[j] * lead;
  y[i] = acc;
}
// WHY: not all-pairs-tiling shuffled/loop0: the statement at {{[0-9]+}}:3 before the loop is not a declaration without side effects; threads outside the bounds must be able to skip it

__global__ void counted(const float *x, float *y, int *ticket, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  int order = atomicAdd(ticket, 1);
  float acc = 0.f;
  for (int j = 0; j < n; ++j)
    acc += x[j];
  y[i] = acc + order;
}
// WHY: not all-pairs-tiling counted/loop0: the statement at {{[0-9]+}}:3 before the loop is not a declaration without side effects; threads outside the bounds must be able to skip it
