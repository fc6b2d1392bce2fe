// What nvcc compiles, we parse: host-side max/min, time() without
// <time.h>, __stcs (missing from clang's CUDA wrappers) and a launch
// spelled `<< <...>> >`. Each failed to parse before (NvccCompat.h); nvcc
// builds this file as it is.
// REQUIRES: cuda-sdk
// RUN: clang-optiml analyze --cuda-path=%cuda_root %s | FileCheck --match-full-lines %s
// RUN: clang-optiml transforms --cuda-path=%cuda_root %s --json > %t.json
// RUN: python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d else 1)" %t.json
// An edit of the spaced launch keeps the user's spelling around it.
// RUN: echo '{"kind":"launch-config","target":"clampStore/launch0","params":{"block":128}}' > %t.edit.json
// RUN: clang-optiml apply --cuda-path=%cuda_root %s --edit %t.edit.json -o %t.out.cu
// RUN: FileCheck --check-prefix=APPLIED %s < %t.out.cu
// APPLIED: clampStore<< <(n + 127) / 128, 128>> >(p, n);

#include <cstdio>

__global__ void clampStore(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    __stcs(&p[i], max(p[i], 0.0f));
}

int main() {
  int n = max(1000, 1024);
  unsigned m = min(3u, 4u);
  float lo = max(1.0f, 2.0f);
  srand(time(NULL));
  float *p;
  cudaMalloc(&p, n * sizeof(float));
  clampStore<< <(n + 255) / 256, 256>> >(p, n);
  cudaDeviceSynchronize();
  printf("%u %f\n", m, lo);
  cudaFree(p);
  return 0;
}

// CHECK: {{.*}}nvcc-compat.cu: 1 kernel
// CHECK: kernel clampStore (nvcc-compat.cu:[[@LINE-21]]) {{.*}}
// CHECK:     clampStore/launch0 at line [[@LINE-9]] in main: <<<(n + 255) / 256, 256>>>
