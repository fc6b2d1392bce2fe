#include "CatalogTesting.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &restrictConst() {
  static auto T = createRestrictConstTransform();
  return *T;
}

const char *Kernel =
    "__global__ void add(float *x, float *y) { y[threadIdx.x] += "
    "x[threadIdx.x]; }\n";

std::string program(const std::string &Body) {
  return std::string(Kernel) + "void run() {\n  float *a, *b;\n" + Body + "}\n";
}

TEST(CatalogRestrictConstTest, DistinctAllocationsGetRestrict) {
  std::string Src = program("  cudaMalloc(&a, 64);\n"
                            "  cudaMalloc((void **)&b, 64);\n"
                            "  add<<<1, 16>>>(a, b);\n");
  EXPECT_EQ(
      applyTo(restrictConst(), Src, makeEdit("restrict-const", "add", {})),
      program("  cudaMalloc(&a, 64);\n"
              "  cudaMalloc((void **)&b, 64);\n"
              "  add<<<1, 16>>>(a, b);\n")
          .replace(0, std::string(Kernel).size(),
                   "__global__ void add(const float *__restrict__ x, "
                   "float *__restrict__ y) { y[threadIdx.x] += "
                   "x[threadIdx.x]; }\n"));
}

TEST(CatalogRestrictConstTest, PointersThatMayAliasAreRefused) {
  // Each program passes two variables that may hold the same allocation
  // at the launch.
  struct Case {
    const char *Body, *Why;
  } Cases[] = {
      {"  cudaMalloc(&a, 64);\n  cudaMalloc(&b, 64);\n  b = a;\n"
       "  add<<<1, 16>>>(a, b);\n",
       "passes 'b' for 'y', which is not its own cudaMalloc allocation"},
      {"  cudaMalloc(&a, 64);\n  cudaMalloc(&b, 64);\n  b += 4;\n"
       "  add<<<1, 16>>>(a, b);\n",
       "passes 'b' for 'y', which is not its own cudaMalloc allocation"},
      {"  cudaMalloc(&a, 64);\n  float *c = a;\n  cudaMalloc(&b, 64);\n"
       "  std::swap(b, c);\n  add<<<1, 16>>>(a, b);\n",
       "passes 'b' for 'y', which is not its own cudaMalloc allocation"},
      {"  cudaMalloc(&a, 64);\n  cudaMalloc(&b, 64);\n  float **h = &b;\n"
       "  *h = a;\n  add<<<1, 16>>>(a, b);\n",
       "passes 'b' for 'y', which is not its own cudaMalloc allocation"},
      {"  cudaMalloc(&a, 64);\n  add<<<1, 16>>>(a, a);\n",
       "passes 'a' for two pointer parameters (they alias)"},
  };
  for (const Case &C : Cases) {
    std::string Src = "#include <utility>\n" + program(C.Body);
    std::string Out =
        applyTo(restrictConst(), Src,
                makeEdit("restrict-const", "add", {{"restrict", true}}));
    EXPECT_EQ(Out.rfind("error: ", 0), 0u) << C.Body << Out;
    EXPECT_NE(Out.find(C.Why), std::string::npos)
        << C.Body << "got: " << Out << "\nexpected: " << C.Why;
  }
}

TEST(CatalogRestrictConstTest, SwappedPairStaysDistinct) {
  std::string Src = "#include <utility>\n" +
                    program("  cudaMalloc(&a, 64);\n  cudaMalloc(&b, 64);\n"
                            "  for (int i = 0; i < 3; ++i) {\n"
                            "    add<<<1, 16>>>(a, b);\n"
                            "    std::swap(a, b);\n  }\n");
  Applicability A = prepareOn(restrictConst(), Src, "add");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("__restrict__ for 'x', 'y'"), std::string::npos)
      << A.Reason;
}

} // namespace
