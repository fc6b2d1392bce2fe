// With the real CUDA SDK: clang's CUDA wrapper headers and CCCL are found,
// and -v says once which version clang treats a newer SDK as.
// REQUIRES: cuda-sdk
// RUN: clang-optiml analyze -v --cuda-path=%cuda_root %s 2>%t.err | FileCheck --match-full-lines %s
// RUN: FileCheck --check-prefix=VERBOSE %s < %t.err

#include <cstdio>
#include <cub/cub.cuh>
#include <cuda_runtime.h>

__global__ void scale(float *p, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = a * __ldg(&p[i]) + sinf(p[i]);
}

int main() {
  float *p;
  cudaMalloc(&p, 1024 * sizeof(float));
  scale<<<4, 256>>>(p, 2.0f, 1024);
  cudaFree(p);
  return 0;
}

// CHECK:      kernel scale ({{.*}}:11) [map: each thread reads and writes its own elements]
// CHECK:          scale/launch0 at line 19 in main: <<<4, 256>>>
// CHECK:        math: sinf (line 13)

// VERBOSE: note: CUDA at {{.*}} (--cuda-path), version {{[0-9]+\.[0-9]+}}
// VERBOSE-NEXT: note: CUDA {{.*}} is newer than this clang supports; it is parsed as CUDA {{[0-9]+\.[0-9]+}}
// VERBOSE-NEXT: note: GPU architecture sm_90 (default)
// VERBOSE-NOT: parsed as CUDA
