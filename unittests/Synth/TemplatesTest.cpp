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
  // The reference is declared before main and defined last, under a #line
  // naming the spec: no other line is renumbered.
  size_t Decl = P.find("void reference(const float *x, const float *y, float "
                       "*z, int n);\n");
  size_t Main = P.find("int main(int argc, char **argv) {");
  size_t Def = P.find("#line 1 \"spec.json (reference)\"\nvoid reference(");
  ASSERT_NE(Decl, std::string::npos) << P;
  ASSERT_NE(Main, std::string::npos);
  ASSERT_NE(Def, std::string::npos) << P;
  EXPECT_LT(Decl, Main);
  EXPECT_LT(Main, Def);
  EXPECT_EQ(P.find("#line"), Def);
}

TEST(TemplatesTest, StatusLinesAreReplaced) {
  Spec S = parsed(R"js({"class": "transpose",
    "inputs": [{"name": "a", "type": "float", "shape": ["rows", "cols"]}],
    "outputs": [{"name": "b", "type": "float", "shape": ["cols", "rows"]}],
    "sizes": {"rows": 4, "cols": 3}, "request": "transpose it",
    "reference": "void reference(const float *a, float *b, int rows, int cols) {}"})js");
  std::string P = generateProgram(S, {"t.cu", {"Status: being verified."}});
  std::string V = setProgramStatus(P, {"Verified on X.", "  rows=4 cols=3"});
  EXPECT_EQ(V.find("being verified"), std::string::npos);
  EXPECT_NE(V.find("// Request: transpose it\n// Verified on X.\n//   rows=4 "
                   "cols=3\n//\n// Usage: ./t "),
            std::string::npos)
      << V;
  // Only the header changed.
  EXPECT_EQ(V.substr(V.find("#include")), P.substr(P.find("#include")));
  // A program without the template's header gets the lines on top.
  EXPECT_EQ(setProgramStatus("int main() {}\n", {"UNVERIFIED."}),
            "// UNVERIFIED.\nint main() {}\n");
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
