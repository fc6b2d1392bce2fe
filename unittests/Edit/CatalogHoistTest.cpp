#include "CatalogTesting.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &hoist() {
  static auto T = createHoistTransform();
  return *T;
}

const char *RowSum =
    R"(__global__ void rowsum(const float *a, float *out, int n, float alpha, float beta, float scale) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n)
    return;
  float s = 0.0f;
  for (int k = 0; k < n; ++k) {
    s += a[row * n + k] * (alpha * beta) + expf(scale) * a[row];
  }
  out[row] = s;
}
)";

TEST(CatalogHoistTest, HoistsArithmeticCallsAndGuardedLoads) {
  Applicability A = prepareOn(hoist(), RowSum, "rowsum/loop0");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("'row * n': uses only 'row' (a local not assigned "
                          "in the loop), 'n' (a parameter not assigned in "
                          "the loop)"),
            std::string::npos)
      << A.Reason;
  EXPECT_NE(A.Reason.find("loads: the loop stores through no pointer"),
            std::string::npos)
      << A.Reason;
  EXPECT_EQ(
      applyTo(hoist(), RowSum, makeEdit("hoist", "rowsum/loop0")),
      R"(__global__ void rowsum(const float *a, float *out, int n, float alpha, float beta, float scale) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n)
    return;
  float s = 0.0f;
  const int optiml_h0 = row * n;
  const float optiml_h1 = alpha * beta;
  const float optiml_h2 = expf(scale);
  const float optiml_h3 = (0 < n) ? a[row] : static_cast<float>(0);
  for (int k = 0; k < n; ++k) {
    s += a[optiml_h0 + k] * (optiml_h1) + optiml_h2 * optiml_h3;
  }
  out[row] = s;
}
)");
}

TEST(CatalogHoistTest, WithoutLoadsKeepsTheLoad) {
  std::string Out = applyTo(
      hoist(), RowSum,
      makeEdit("hoist", "rowsum/loop0", {{"loads", ParamValue(false)}}));
  EXPECT_NE(Out.find("const float optiml_h2 = expf(scale);"), std::string::npos)
      << Out;
  EXPECT_NE(Out.find("optiml_h2 * a[row];"), std::string::npos) << Out;
}

TEST(CatalogHoistTest, RepeatedExpressionsShareOneLocal) {
  std::string Src =
      R"(__global__ void twice(float *out, const int *idx, int n, int w) {
  for (int k = 0; k < n; ++k)
    out[k * w + threadIdx.x * w] = out[k] + threadIdx.x * w;
}
)";
  std::string Out = applyTo(hoist(), Src, makeEdit("hoist", "twice/loop0"));
  EXPECT_NE(Out.find("  const unsigned int optiml_h0 = threadIdx.x * w;\n"
                     "  for (int k = 0; k < n; ++k)\n"
                     "    out[k * w + optiml_h0] = out[k] + optiml_h0;"),
            std::string::npos)
      << Out;
}

TEST(CatalogHoistTest, RefusesLoadThatMayAliasAStore) {
  std::string Src = R"(__global__ void alias(float *a, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < n; ++k)
    out[k * n + i] = a[i] + k;
}
)";
  Applicability A = prepareOn(hoist(), Src, "alias/loop0");
  EXPECT_FALSE(A.Applies);
  EXPECT_NE(A.Reason.find("the load 'a[i]' may alias the store to "
                          "'out[k * n + i]'"),
            std::string::npos)
      << A.Reason;
  // __restrict__ on a pointer that is never written makes it safe.
  std::string Restrict = Src;
  Restrict.replace(Restrict.find("float *a"), 8, "const float *__restrict__ a");
  EXPECT_TRUE(prepareOn(hoist(), Restrict, "alias/loop0").Applies);
}

TEST(CatalogHoistTest, KeepsFmaOperandsAndConditionalDivisions) {
  std::string Src =
      R"(__global__ void fma(float *out, int n, float x, float y, int d) {
  float s = 0.0f;
  for (int k = 0; k < n; ++k) {
    s += x * y;
    if (k > 2)
      s += k / d;
  }
  out[0] = s;
}
)";
  Applicability A = prepareOn(hoist(), Src, "fma/loop0");
  EXPECT_FALSE(A.Applies);
  EXPECT_NE(A.Reason.find("'x * y' is a floating-point product added to "
                          "something"),
            std::string::npos)
      << A.Reason;
}

TEST(CatalogHoistTest, UnknownLoopIsATargetError) {
  std::string Out = applyTo(hoist(), RowSum, makeEdit("hoist", "rowsum/loop7"));
  EXPECT_NE(Out.find("no loop 'rowsum/loop7'"), std::string::npos) << Out;
}

} // namespace
