#include "CatalogTesting.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &specialize() {
  static auto T = createSpecializeTransform();
  return *T;
}

TEST(CatalogSpecializeTest, CopiesTheBodyUnderTheLaunchesConstants) {
  std::string Src = R"(constexpr int D = 32;
__global__ void rowsum(int n, int cols, const float *in, float *out) {
  __shared__ float t[D];
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int c = 0; c < cols; ++c)
    s += in[r * cols + c];
  t[threadIdx.x] = s;
  __syncthreads();
  if (r < n)
    out[r] = t[threadIdx.x];
}
void run(const float *in, float *out) {
  rowsum<<<4, D>>>(128, 2 * D, in, out);
  rowsum<<<8, D>>>(128, D * 2, in, out);
}
)";
  Applicability A = prepareOn(specialize(), Src, "rowsum");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason, "every launch passes the same constant: 'n' is 128, "
                      "'cols' is 64 ('cols' bounds a loop); the copy compiles "
                      "with it constant");
  EXPECT_EQ(applyTo(specialize(), Src, makeEdit("specialize", "rowsum")),
            R"(constexpr int D = 32;
__global__ void rowsum(int n, int cols, const float *in, float *out) {
  __shared__ float t[D];
  if (n == 128 && cols == 64) {
    constexpr int n = 128;
    constexpr int cols = 64;
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int c = 0; c < cols; ++c)
    s += in[r * cols + c];
  t[threadIdx.x] = s;
  __syncthreads();
  if (r < n)
    out[r] = t[threadIdx.x];
  } else {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int c = 0; c < cols; ++c)
    s += in[r * cols + c];
  t[threadIdx.x] = s;
  __syncthreads();
  if (r < n)
    out[r] = t[threadIdx.x];
  }
}
void run(const float *in, float *out) {
  rowsum<<<4, D>>>(128, 2 * D, in, out);
  rowsum<<<8, D>>>(128, D * 2, in, out);
}
)");
  // One parameter only.
  std::string One = applyTo(
      specialize(), Src,
      makeEdit("specialize", "rowsum", {{"param", std::string("cols")}}));
  EXPECT_NE(One.find("if (cols == 64) {\n    constexpr int cols = 64;\n"),
            std::string::npos)
      << One;
  EXPECT_EQ(One.find("constexpr int n"), std::string::npos) << One;
}

TEST(CatalogSpecializeTest, ConstantsASharedArrayNamesMoveWithIt) {
  std::string Src =
      R"(__global__ void tile(const float *in, float *out, unsigned long len) {
  const int T = 16;
  int i = blockIdx.x * T + threadIdx.x;
  __shared__ float s[T + 1];
  s[threadIdx.x] = in[i % len];
  __syncthreads();
  out[i] = s[(threadIdx.x + 1) % T];
}
void run(const float *in, float *out) { tile<<<64, 16>>>(in, out, 1024ul); }
)";
  std::string Out = applyTo(specialize(), Src, makeEdit("specialize", "tile"));
  EXPECT_NE(Out.find("{\n  const int T = 16;\n  __shared__ float s[T + 1];\n"
                     "  if (len == 1024) {\n    constexpr unsigned long len = "
                     "1024;\n  int i = "),
            std::string::npos)
      << Out;
  Applicability A = prepareOn(specialize(), Src, "tile");
  EXPECT_NE(A.Reason.find("'len' is a divisor"), std::string::npos) << A.Reason;
}

TEST(CatalogSpecializeTest, RefusalsSayWhy) {
  auto Why = [](const std::string &Src, const std::string &Target) {
    Applicability A = prepareOn(specialize(), Src, Target);
    EXPECT_FALSE(A.Applies) << Target;
    return A.Reason;
  };
  // Another value at another launch; a value known only at run time.
  EXPECT_EQ(Why(R"(__global__ void k(int n, float *o) {
  for (int i = 0; i < n; ++i) o[i] = 0;
}
void run(float *o, int m) { k<<<1, 1>>>(8, o); k<<<1, 1>>>(16, o); k<<<1, 1>>>(m, o); }
)",
                "k"),
            "kernel 'k': 'n' is 8 at k/launch0 but 16 at k/launch1");
  EXPECT_EQ(Why(R"(__global__ void k(int n, float *o) {
  for (int i = 0; i < n; ++i) o[i] = 0;
}
void run(float *o, int m) { k<<<1, 1>>>(m, o); }
)",
                "k"),
            "kernel 'k': 'n' gets 'm' at k/launch0, not a constant");
  // A parameter the body writes would become a constant it assigns.
  EXPECT_EQ(Why(R"(__global__ void k(int n, float *o) {
  while (n > 0) o[--n] = 0;
}
void run(float *o) { k<<<1, 1>>>(8, o); }
)",
                "k"),
            "kernel 'k': 'n' is written or its address taken in the kernel");
  // Used only as a value: nothing for the compiler to do with it.
  EXPECT_NE(Why(R"(__global__ void k(int n, float *o) { o[threadIdx.x] = n; }
void run(float *o) { k<<<1, 32>>>(8, o); }
)",
                "k")
                .find("no loop bound or divisor uses its constant parameters"),
            std::string::npos);
  // A label would be defined twice; a nested __shared__ array allocated
  // twice; a directive repeated.
  EXPECT_NE(Why(R"(__global__ void k(int n, float *o) {
  for (int i = 0; i < n; ++i) { if (o[i] < 0) goto done; o[i] = 1; }
done:
  o[0] = 2;
}
void run(float *o) { k<<<1, 1>>>(8, o); }
)",
                "k")
                .find("it has a label ('done')"),
            std::string::npos);
  EXPECT_NE(Why(R"(__global__ void k(int n, float *o) {
  for (int i = 0; i < n; ++i) {
    __shared__ float s[32];
    s[threadIdx.x] = i;
    __syncthreads();
    o[i] += s[(threadIdx.x + 1) % 32];
  }
}
void run(float *o) { k<<<1, 32>>>(8, o); }
)",
                "k")
                .find("'s' is a __shared__ array declared in a nested block"),
            std::string::npos);
  EXPECT_NE(Why(R"(__global__ void k(int n, float *o) {
#if 1
  for (int i = 0; i < n; ++i) o[i] = 0;
#endif
}
void run(float *o) { k<<<1, 1>>>(8, o); }
)",
                "k")
                .find("its body holds a preprocessing directive"),
            std::string::npos);
  // Applied once, the parameter is declared again inside: not twice.
  EXPECT_NE(Why(R"(__global__ void k(int n, float *o) {
  if (n == 8) {
    constexpr int n = 8;
    for (int i = 0; i < n; ++i) o[i] = 0;
  } else {
    for (int i = 0; i < n; ++i) o[i] = 0;
  }
}
void run(float *o) { k<<<1, 1>>>(8, o); }
)",
                "k")
                .find("'n' is declared again inside the body"),
            std::string::npos);
  EXPECT_EQ(
      applyTo(specialize(),
              "__global__ void k(int n) {}\n"
              "void run() { k<<<1, 1>>>(1); }\n",
              makeEdit("specialize", "k", {{"param", std::string("m")}})),
      "error: specialize k rejected: [params] kernel 'k' has no parameter 'm'");
}

} // namespace
