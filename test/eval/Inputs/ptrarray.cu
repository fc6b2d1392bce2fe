// Batched products through arrays of device pointers, the way
// cublasSgemmBatched takes them: A's and B's matrices in one allocation
// each, C's in one allocation per matrix. The arrays hold addresses, which
// differ from one run to the next; eval follows them to the matrices.
// -DBUG_BATCH=k: matrix k of C comes out wrong (one element off by 1).
// -DSHUFFLE: the pointers name the same matrices in another order.
// -DTEMPLATED: the kernel is a template over the matrices' element.
// -DSTRUCTS: the pointers are members of an array of structs instead.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "CUDA error %s at line %d\n", cudaGetErrorString(e_),    \
              __LINE__);                                                       \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

#ifdef TEMPLATED
template <typename T>
__global__ void bmm(const T *const *A, const T *const *B, T *const *C, int n) {
#else
__global__ void bmm(const float *const *A, const float *const *B,
                    float *const *C, int n) {
  typedef float T;
#endif
  const T *a = A[blockIdx.x];
  const T *b = B[blockIdx.x];
  T *c = C[blockIdx.x];
  int row = threadIdx.y, col = threadIdx.x;
  T acc = 0.f;
  for (int k = 0; k < n; ++k)
    acc += a[row * n + k] * b[k * n + col];
#ifdef BUG_BATCH
  if (blockIdx.x == BUG_BATCH && row == 1 && col == 2)
    acc += 1.f;
#endif
  c[row * n + col] = acc;
}

// The same products through an array of structs in device memory whose
// members are the matrices' pointers (-DSTRUCTS).
struct Mats {
  const float *a;
  const float *b;
  float *c;
};

__global__ void bmm_structs(const Mats *m, int n) {
  const Mats p = m[blockIdx.x];
  int row = threadIdx.y, col = threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < n; ++k)
    acc += p.a[row * n + k] * p.b[k * n + col];
#ifdef BUG_BATCH
  if (blockIdx.x == BUG_BATCH && row == 1 && col == 2)
    acc += 1.f;
#endif
  p.c[row * n + col] = acc;
}

int main() {
  const int n = 16, batch = 24;
  const size_t m = size_t(n) * n;
  std::vector<float> ha(m * batch), hb(m * batch);
  for (size_t i = 0; i < ha.size(); ++i) {
    ha[i] = float((i * 7) % 13) / 13.f - 0.5f;
    hb[i] = float((i * 5) % 11) / 11.f - 0.5f;
  }
  float *da, *db;
  CHECK(cudaMalloc(&da, ha.size() * sizeof(float)));
  CHECK(cudaMalloc(&db, hb.size() * sizeof(float)));
  CHECK(cudaMemcpy(da, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
  std::vector<float *> hc(batch);
  for (int i = 0; i < batch; ++i)
    CHECK(cudaMalloc(&hc[i], m * sizeof(float)));
  std::vector<const float *> pa(batch), pb(batch);
  std::vector<float *> pc(batch);
  for (int i = 0; i < batch; ++i) {
#ifdef SHUFFLE
    int j = (i * 5) % batch;
#else
    int j = i;
#endif
    pa[i] = da + j * m;
    pb[i] = db + j * m;
    pc[i] = hc[j];
  }
  const float **dpa;
  const float **dpb;
  float **dpc;
  CHECK(cudaMalloc(&dpa, batch * sizeof(float *)));
  CHECK(cudaMalloc(&dpb, batch * sizeof(float *)));
  CHECK(cudaMalloc(&dpc, batch * sizeof(float *)));
  CHECK(cudaMemcpy(dpa, pa.data(), batch * 8, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dpb, pb.data(), batch * 8, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dpc, pc.data(), batch * 8, cudaMemcpyHostToDevice));
#ifdef STRUCTS
  std::vector<Mats> hm(batch);
  for (int i = 0; i < batch; ++i)
    hm[i] = Mats{pa[i], pb[i], pc[i]};
  Mats *dm;
  CHECK(cudaMalloc(&dm, batch * sizeof(Mats)));
  CHECK(cudaMemcpy(dm, hm.data(), batch * sizeof(Mats),
                   cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 5; ++rep)
    bmm_structs<<<batch, dim3(n, n)>>>(dm, n);
#else
  for (int rep = 0; rep < 5; ++rep)
    bmm<<<batch, dim3(n, n)>>>(dpa, dpb, dpc, n);
#endif
  CHECK(cudaGetLastError());
  double sum = 0;
  std::vector<float> out(m);
  for (int i = 0; i < batch; ++i) {
    CHECK(cudaMemcpy(out.data(), hc[i], m * 4, cudaMemcpyDeviceToHost));
    for (float v : out)
      sum += v;
  }
  printf("sum %.6f\n", sum);
  return 0;
}
