#include "CatalogTesting.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &gridStride() {
  static auto T = createGridStrideTransform();
  return *T;
}

TEST(CatalogGridStrideTest, RewritesGuardAndCapsGrid) {
  std::string Src = R"(__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = a * x[i];
}
void run(float *x, int n) {
  scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n);
}
)";
  EXPECT_EQ(
      applyTo(gridStride(), Src,
              makeEdit("grid-stride", "scale", {{"max_blocks", int64_t(528)}})),
      R"(__global__ void scale(float *x, float a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    x[i] = a * x[i];
}
void run(float *x, int n) {
  scale<<<(n + 255) / 256 < 528 ? (n + 255) / 256 : 528, 256>>>(x, 2.0f, n);
}
)");
}

TEST(CatalogGridStrideTest, EarlyReturnForm) {
  std::string Src =
      R"(__global__ void add(const float *a, const float *b, float *c, unsigned n) {
  unsigned i = threadIdx.x + blockDim.x * blockIdx.x;
  if (i >= n) return;
  float s = a[i] + b[i];
  c[i] = s;
}
)";
  EXPECT_EQ(
      applyTo(gridStride(), Src, makeEdit("grid-stride", "add")),
      R"(__global__ void add(const float *a, const float *b, float *c, unsigned n) {
  for (unsigned i = threadIdx.x + blockDim.x * blockIdx.x; i < n;
       i += blockDim.x * gridDim.x) {
    float s = a[i] + b[i];
    c[i] = s;
  }
}
)");
}

TEST(CatalogGridStrideTest, TemplateAndSeveralLaunches) {
  std::string Src = R"(template <typename T>
__global__ void fill(T *x, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    x[i] = v;
  }
}
#define LAUNCH(g) fill<<<g, 128>>>(p, 1.0f, n)
void run(float *p, int *q, int n, int blocks) {
  fill<<<blocks, 128>>>(p, 1.0f, n);
  fill<int><<<dim3(blocks), 128>>>(q, 1, n);
  LAUNCH(blocks);
}
)";
  Applicability A = prepareOn(gridStride(), Src, "fill");
  EXPECT_TRUE(A.Applies) << A.Reason;
  // The macro's invocation spells the grid (an argument used once): it is
  // capped where it is written, like the others.
  EXPECT_EQ(A.Reason.find("macro"), std::string::npos) << A.Reason;
  EXPECT_EQ(
      applyTo(gridStride(), Src,
              makeEdit("grid-stride", "fill", {{"max_blocks", int64_t(1056)}})),
      R"(template <typename T>
__global__ void fill(T *x, T v, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x) {
    x[i] = v;
  }
}
#define LAUNCH(g) fill<<<g, 128>>>(p, 1.0f, n)
void run(float *p, int *q, int n, int blocks) {
  fill<<<blocks < 1056 ? blocks : 1056, 128>>>(p, 1.0f, n);
  fill<int><<<dim3(blocks < 1056 ? blocks : 1056), 128>>>(q, 1, n);
  LAUNCH(blocks < 1056 ? blocks : 1056);
}
)");
}

TEST(CatalogGridStrideTest, RefusesNearMisses) {
  struct Case {
    const char *Src, *Why;
  } Cases[] = {
      {R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = threadIdx.x;
}
)",
       "uses a thread or block index directly"},
      {R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i < n) x[i] = 0;
}
)",
       "no index of the form"},
      {R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0;
  x[0] = 1;
}
)",
       "is not the last statement"},
      {R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0) x[i] = 0;
}
)",
       "is not a single comparison"},
      {R"(__global__ void k(float *x, int n) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { s[0] = x[i]; __syncthreads(); x[i] = s[0]; }
}
)",
       "synchronizes"},
      {R"(__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { if (x[i] < 0) return; x[i] = 1; }
}
)",
       "returns early"},
      {R"(__global__ void k(float *x, int n) {
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = r;
}
)",
       "2D"},
  };
  for (const Case &C : Cases) {
    Applicability A = prepareOn(gridStride(), C.Src, "k");
    EXPECT_FALSE(A.Applies) << C.Src;
    EXPECT_NE(A.Reason.find(C.Why), std::string::npos)
        << "reason: " << A.Reason << "\nexpected: " << C.Why;
    std::string Out =
        applyTo(gridStride(), C.Src, makeEdit("grid-stride", "k"));
    EXPECT_EQ(Out.rfind("error: ", 0), 0u) << Out;
  }
}

} // namespace
