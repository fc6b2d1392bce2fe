// warp-reduce on the CUDA samples' reduction as written there (issue 20: it
// was never offered on real kernels): shared memory from a SharedMemory<T>
// helper, barriers through cooperative groups (cg::sync). The helper's
// pointer becomes a per-warp __shared__ array sized from the launch, the
// tree becomes shuffles; the output compiles with nvcc. On the H200 the
// rewrite of Inputs/reduce-cg/reduce.cu verifies with `eval --against`
// (docs/benchmarks.md).
// REQUIRES: cuda-sdk, nvcc
// RUN: rm -rf %t && mkdir -p %t && cp %S/Inputs/reduce-cg/reduce.cu %t/reduce.cu
// RUN: clang-optiml transforms -v %t/reduce.cu | FileCheck --check-prefix=LIST %s
// RUN: echo '{"kind":"warp-reduce","target":"reduce0","params":{}}' > %t/w.json
// RUN: clang-optiml apply %t/reduce.cu --edit %t/w.json -o %t/out.cu
// RUN: FileCheck --check-prefix=OUT %s < %t/out.cu
// RUN: %nvcc -arch=sm_90 -o %t/out %t/out.cu
// RUN: cmp %S/Inputs/reduce-cg/reduce.cu %t/reduce.cu
// LIST: warp-reduce reduce0: shared-memory tree reduction (+) of T in 'sdata': warp shuffles and one __syncthreads() instead of one per step
// OUT: cg::thread_block cta = cg::this_thread_block();
// OUT-NEXT: __shared__ T sdata[8];
// OUT: T v = (i < n) ? g_idata[i] : 0;
// OUT-NEXT: for (int off = 16; off > 0; off /= 2)
// OUT-NEXT: v += __shfl_down_sync(0xffffffff, v, off);
// OUT: if (tid == 0)
// OUT-NEXT: g_odata[blockIdx.x] = v;
