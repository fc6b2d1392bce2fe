//===- TemplatesTest.cpp - Programs written from specs --------------------===//

#include "optiml/Synth/Templates.h"
#include "optiml/Synth/Synthesize.h"
#include "llvm/ADT/StringExtras.h"
#include "gtest/gtest.h"
#include <algorithm>

using namespace llvm;

namespace optiml {
namespace synth {
namespace {

TEST(TemplatesTest, FillTemplate) {
  EXPECT_EQ(fillTemplate("a ${X} b ${Y}${X}", {{"X", "1"}, {"Y", "${X}"}}),
            "a 1 b ${X}1");
  EXPECT_EQ(fillTemplate("no placeholder {}", {}), "no placeholder {}");
}

Spec parsed(StringRef Json) {
  auto S = parseSpec(Json, "spec.json", "");
  EXPECT_TRUE(bool(S)) << (S ? "" : toString(S.takeError()));
  if (!S)
    return Spec();
  EXPECT_FALSE(bool(checkClass(*S)));
  return *S;
}

TEST(TemplatesTest, MapIndexesTheInputsInItsExpression) {
  Spec S = parsed(R"js({"class": "map",
    "inputs": [{"name": "x", "type": "float", "shape": ["n"]},
               {"name": "y", "type": "float", "shape": ["n"]}],
    "outputs": [{"name": "z", "type": "float", "shape": ["n"]}],
    "sizes": {"n": 1000}, "expr": "2.5e-1f * x + y.x + sqrtf(y)",
    "reference": "void reference(const float *x, const float *y, float *z, int n) {}"})js");
  std::string P = generateProgram(S, {"saxpy.cu", {}});
  EXPECT_NE(P.find("z[idx] = 2.5e-1f * x[idx] + y[idx].x + sqrtf(y[idx]);"),
            std::string::npos)
      << P;
  EXPECT_NE(P.find("__global__ void map(int n, const float *x, const float "
                   "*y, float *z)"),
            std::string::npos)
      << P;
  EXPECT_NE(P.find("map<<<blocks, threads>>>(n, d_x, d_y, d_z);"),
            std::string::npos)
      << P;
  // The reference is marked as the spec's, then the file's lines resume.
  EXPECT_NE(P.find("#line 1 \"spec.json (reference)\"\nvoid reference("),
            std::string::npos);
  size_t Back = P.find("#line ", P.find("(reference)"));
  ASSERT_NE(Back, std::string::npos);
  unsigned Line = std::count(P.begin(), P.begin() + Back, '\n') + 2;
  EXPECT_EQ(P.substr(Back, P.find('\n', Back) - Back),
            "#line " + std::to_string(Line) + " \"saxpy.cu\"");
}

TEST(TemplatesTest, StencilReadsNeighbours) {
  Spec S = parsed(R"js({"class": "stencil2d",
    "inputs": [{"name": "u", "type": "float", "shape": ["rows", "cols"]}],
    "outputs": [{"name": "v", "type": "float", "shape": ["rows", "cols"]}],
    "sizes": {"rows": 64, "cols": 48},
    "expr": "u(0, 0) - 0.1f * (u(-2, 0) + u(+1, 0))",
    "reference": "void reference(const float *u, float *v, int rows, int cols) {}"})js");
  std::string P = generateProgram(S, {"-", {}});
  EXPECT_NE(P.find("v[row * cols + col] = u[(row) * cols + col] - 0.1f * "
                   "(u[(row - 2) * cols + col] + u[(row + 1) * cols + "
                   "col]);"),
            std::string::npos)
      << P;
  EXPECT_NE(P.find("if (row >= 2 && row < rows - 2 && col >= 2 && col < "
                   "cols - 2)"),
            std::string::npos)
      << P;
  // Printed: no #line (there is no file to name).
  EXPECT_EQ(P.find("#line"), std::string::npos);
}

TEST(TemplatesTest, VerificationCases) {
  Spec S = parsed(R"js({"class": "transpose",
    "inputs": [{"name": "a", "type": "float", "shape": ["rows", "cols"]}],
    "outputs": [{"name": "b", "type": "float", "shape": ["cols", "rows"]}],
    "sizes": {"rows": 4096, "cols": 100}, "seed": 7,
    "reference": "void reference(const float *a, float *b, int rows, int cols) {}"})js");
  std::vector<VerifyCase> Cases = verificationCases(S, 3);
  std::vector<std::string> Args;
  for (const VerifyCase &C : Cases)
    Args.push_back(C.Label + ": " + join(C.args(), " "));
  EXPECT_EQ(Args, (std::vector<std::string>{
                      "spec sizes, seed 7: rows=4096 cols=100 seed=7",
                      "spec sizes, seed 8: rows=4096 cols=100 seed=8",
                      "spec sizes, seed 9: rows=4096 cols=100 seed=9",
                      "edge: every size 1: rows=1 cols=1 seed=7",
                      "edge: odd sizes: rows=333 cols=99 seed=7",
                      "edge: rows=1: rows=1 cols=99 seed=7"}));
}

} // namespace
} // namespace synth
} // namespace optiml
