// vectorize on maps that also read at another index than the element's
// own (issue 20: a bias add `out[i] = x[i] + bias[i % cols]` was refused):
// such a read stays a scalar read in each lane's copy of the body, with
// the index naming that lane's element, while the own-element accesses
// become vectors. Five styles: a bias add over a size_t index, a
// per-channel scale (`(i / hw) % c`), a row mean through a local of the
// body, a struct parameter's pointer member, a lookup table indexed by
// another array's element. Each edit applied one after another compiles
// with nvcc without a warning, and the program, which checks every kernel
// against the CPU on sizes that leave a scalar tail, passes before and
// after on the host. Look-alikes refused with their reasons: an array
// read at another element and written, an index read from a local
// declared before the element index, an index with a side effect. The
// input file is left as it was.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms -v %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: python3 %inputs/edit/host-run.py %t/k.cu | FileCheck --check-prefix=HOST %s
// RUN: sed -n 's|^// EDIT: ||p' %s > %t/edits.jsonl
// RUN: while read -r e; do \
// RUN:   echo "$e" > %t/e.json && \
// RUN:   clang-optiml apply %t/all.cu --edit %t/e.json -o %t/next.cu && mv %t/next.cu %t/all.cu || exit 1; \
// RUN: done < %t/edits.jsonl
// RUN: grep -v '^//' %t/all.cu | FileCheck --check-prefix=OUT %s
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -Werror all-warnings -o %t/all.o %t/all.cu %}
// RUN: python3 %inputs/edit/host-run.py %t/all.cu | FileCheck --check-prefix=HOST %s
// RUN: cmp %s %t/k.cu

// HOST-NOT: FAIL
// HOST: PASS bias
// HOST: PASS channels
// HOST: PASS centre
// HOST: PASS member
// HOST: PASS lookup
// HOST: PASS shifted
// HOST: PASS outside
// HOST: PASS counted
// HOST-NEXT: PASS

// WHY: vectorize add_bias: {{.*}}(x, out) or a read each element makes at its own index ('bias')
// WHY: vectorize channel_scale: {{.*}}(in, out) or a read each element makes at its own index ('scale')
// WHY: vectorize centre: {{.*}}or a read each element makes at its own index ('mean')
// WHY: vectorize member: {{.*}}or a read each element makes at its own index ('p.bias')
// WHY: vectorize lookup: {{.*}}(idx, out) or a read each element makes at its own index ('lut')
// WHY: not vectorize shifted: kernel 'shifted': 'v' is read at another element than the thread's own and written: a lane would read what another lane's store writes
// WHY: not vectorize outside: kernel 'outside': access 'bias[c]' is not at the thread's own element 'i' (its index reads 'c', which is neither the element index, a scalar parameter, a local of the body nor a constant)
// WHY: not vectorize counted: kernel 'counted': access 'bias[k++]' is not at the thread's own element 'i' (its index has side effects)

// EDIT: {"kind":"vectorize","target":"add_bias","params":{}}
// EDIT: {"kind":"vectorize","target":"channel_scale","params":{}}
// EDIT: {"kind":"vectorize","target":"centre","params":{}}
// EDIT: {"kind":"vectorize","target":"member","params":{}}
// EDIT: {"kind":"vectorize","target":"lookup","params":{}}

// OUT: out_v.y = x_v.y + bias[(v * 4 + 1) % cols];
// OUT: out_v.z = in_v.z * scale[((v * 4 + 2) / hw) % c];
// OUT: int r = (v * 4 + 3) / cols;
// OUT: out_v.w = idx_v.w < 0 ? 0.f : lut[idx_v.w];

#include <cmath>
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


__global__ void add_bias(size_t n, int cols, const float *x, const float *bias,
                         float *out) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = x[i] + bias[i % cols];
}

__global__ void channel_scale(int n, int hw, int c, const float *in,
                              const float *scale, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  out[i] = in[i] * scale[(i / hw) % c];
}

__global__ void centre(int n, int cols, const float *mean, float *data) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int r = i / cols;
    data[i] = data[i] - mean[r];
  }
}

struct Affine {
  const float *in;
  const float *bias;
  float *out;
  int cols;
};
__global__ void member(int n, Affine p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p.out[i] = 2.f * p.in[i] + p.bias[i % p.cols];
}

__global__ void lookup(int n, const int *idx, const float *lut, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = idx[i] < 0 ? 0.f : lut[idx[i]];
}

// Look-alikes. Read at the element before and written (the odd elements
// from the even ones).
__global__ void shifted(int n, float *v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (i % 2 == 1)
      v[i] = 2.f * v[i - 1];
  }
}
// An index from a local the body does not declare.
__global__ void outside(int n, const float *x, const float *bias, float *out) {
  int c = n / 7;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = x[i] + bias[c];
}
// An index with a side effect.
__global__ void counted(int n, const float *x, const float *bias, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int k = i % 3;
    out[i] = x[i] + bias[k++] + (float)k;
  }
}

template <typename T> T *upload(const std::vector<T> &h) {
  T *d = nullptr;
  CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <typename T> std::vector<T> download(const T *d, size_t n) {
  std::vector<T> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}
static int failures = 0;
void expect(const char *name, const std::vector<float> &got,
            const std::vector<float> &want) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs((double)got[i] - (double)want[i]));
  bool ok = got.size() == want.size() && worst < 1e-4;
  printf("%s %s (worst error %.2e)\n", ok ? "PASS" : "FAIL", name, worst);
  failures += !ok;
}
std::vector<float> values(size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (float)((int)((i * 2654435761u + seed * 40503u) >> 9) % 19 - 9) / 8;
  return v;
}

int main() {
  const int n = 1003, cols = 17; // n leaves a tail after the vectors
  auto x = values(n, 1), bias = values(cols, 2);
  {
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i)
      want[i] = x[i] + bias[i % cols];
    float *dx = upload(x), *db = upload(bias), *dout = upload(std::vector<float>(n, 0.f));
    add_bias<<<(n + 127) / 128, 128>>>((size_t)n, cols, dx, db, dout);
    expect("bias", download(dout, n), want);
  }
  {
    const int hw = 5, c = 3;
    auto scale = values(c, 3);
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i)
      want[i] = x[i] * scale[(i / hw) % c];
    float *dx = upload(x), *ds = upload(scale), *dout = upload(std::vector<float>(n, 0.f));
    channel_scale<<<(n + 255) / 256, 256>>>(n, hw, c, dx, ds, dout);
    expect("channels", download(dout, n), want);
  }
  {
    auto mean = values((n + cols - 1) / cols, 4);
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i)
      want[i] = x[i] - mean[i / cols];
    float *dm = upload(mean), *dd = upload(x);
    centre<<<(n + 255) / 256, 256>>>(n, cols, dm, dd);
    expect("centre", download(dd, n), want);
  }
  {
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i)
      want[i] = 2.f * x[i] + bias[i % cols];
    Affine p{upload(x), upload(bias), upload(std::vector<float>(n, 0.f)), cols};
    member<<<(n + 255) / 256, 256>>>(n, p);
    expect("member", download(p.out, n), want);
  }
  {
    std::vector<int> idx(n);
    for (int i = 0; i < n; ++i)
      idx[i] = (i * 7) % 11 - 1;
    auto lut = values(11, 5);
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i)
      want[i] = idx[i] < 0 ? 0.f : lut[idx[i]];
    int *di = upload(idx);
    float *dl = upload(lut), *dout = upload(std::vector<float>(n, 0.f));
    lookup<<<(n + 255) / 256, 256>>>(n, di, dl, dout);
    expect("lookup", download(dout, n), want);
  }
  {
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i)
      want[i] = i % 2 == 1 ? 2.f * x[i - 1] : x[i];
    float *dv = upload(x);
    shifted<<<(n + 255) / 256, 256>>>(n, dv);
    expect("shifted", download(dv, n), want);
  }
  {
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i)
      want[i] = x[i] + bias[n / 7 % cols];
    std::vector<float> wide(n / 7 + 1);
    for (size_t k = 0; k < wide.size(); ++k)
      wide[k] = bias[k % cols];
    float *dx = upload(x), *db = upload(wide), *dout = upload(std::vector<float>(n, 0.f));
    outside<<<(n + 255) / 256, 256>>>(n, dx, db, dout);
    expect("outside", download(dout, n), want);
  }
  {
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i)
      want[i] = x[i] + bias[i % 3] + (float)(i % 3 + 1);
    float *dx = upload(x), *db = upload(bias), *dout = upload(std::vector<float>(n, 0.f));
    counted<<<(n + 255) / 256, 256>>>(n, dx, db, dout);
    expect("counted", download(dout, n), want);
  }
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures != 0;
}
