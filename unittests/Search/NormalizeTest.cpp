//===- NormalizeTest.cpp - Transposition keys -----------------------------===//

#include "optiml/Search/Search.h"
#include "gtest/gtest.h"

using namespace optiml;

namespace {

TEST(NormalizeTest, CommentsAndSpacingDoNotMatter) {
  EXPECT_EQ(sourceKey("int  a = b+c; // sum\n"),
            sourceKey("/* x */ int a=b + c;"));
  EXPECT_EQ(normalizeSource("int  a = b+c; // sum\n"), "int a=b+c;");
}

TEST(NormalizeTest, TokensStillMatter) {
  EXPECT_NE(sourceKey("int a = b + c;"), sourceKey("int a = b - c;"));
  EXPECT_NE(sourceKey("unsigned int a;"), sourceKey("unsignedint a;"));
  // "a - -b" is not "a--b".
  EXPECT_NE(normalizeSource("x = a - -b;"), normalizeSource("x = a--b;"));
}

TEST(NormalizeTest, StringLiteralsAreKeptVerbatim) {
  EXPECT_NE(sourceKey("s = \"a  b\";"), sourceKey("s = \"a b\";"));
  EXPECT_EQ(normalizeSource("s = \"// not a comment\";"),
            "s=\"// not a comment\";");
}

TEST(NormalizeTest, PreprocessorLinesKeepTheirEnds) {
  EXPECT_EQ(normalizeSource("#define N 4\nint a[N];\n"),
            "#define N 4\nint a[N];");
  EXPECT_NE(sourceKey("#define N 4\nint a;"), sourceKey("#define N 4 int a;"));
}

TEST(NormalizeTest, FlagsArePartOfTheKey) {
  EXPECT_NE(sourceKey("k();", {"-use_fast_math"}), sourceKey("k();"));
  EXPECT_EQ(sourceKey("k();", {"-O3"}), sourceKey(" k ( ) ;", {"-O3"}));
}

TEST(NormalizeTest, HostProgramLeavesKernelsOut) {
  const char *A = "#include <cstdio>\n"
                  "__device__ float sq(float v) { return v * v; }\n"
                  "template <int N> __global__ void k(const float *x, float *y)"
                  " { if (x[0] > 0) { y[0] = \"}\"[0]; } }\n"
                  "__global__ void __launch_bounds__(256) m(int n) {}\n"
                  "int main() { k<4><<<1, 32>>>(0, 0); m<<<2, 64>>>(3); }\n";
  auto H = hostProgramText(A);
  ASSERT_TRUE(H);
  EXPECT_EQ(*H, "#include<cstdio>\n__device__ float sq(float v){return v*v;}"
                "template<int N>int main(){k<4><<<1,32>>>(0,0);"
                "m<<<2,64>>>(3);}");
  // Another kernel body (a '}' in a string does not end it) is the same
  // host program; another launch, or another device function, is not.
  std::string B = A;
  B.replace(B.find("y[0] ="), 6, "y[1] = 2 *");
  EXPECT_EQ(hostProgramText(B), H);
  std::string C = A;
  C.replace(C.find("<<<2, 64>>>"), 11, "<<<2, 128>>>");
  EXPECT_NE(hostProgramText(C), H);
  std::string D = A;
  D.replace(D.find("v * v"), 5, "v + v");
  EXPECT_NE(hostProgramText(D), H);
}

TEST(NormalizeTest, HostProgramKeepsWhatItCannotJudge) {
  // A declaration stays; so does a definition whose body holds a directive
  // (it could change the host's code).
  auto H = hostProgramText("__global__ void k(int);\n__global__ void m() {\n"
                           "#define N 4\n}\nint x = N;\n");
  ASSERT_TRUE(H);
  EXPECT_NE(H->find("__global__ void k(int);"), std::string::npos);
  EXPECT_NE(H->find("#define N 4"), std::string::npos);
  EXPECT_NE(H->find("__global__ void m()"), std::string::npos);
  // Digit separators are not character literals.
  EXPECT_EQ(hostProgramText("int n = 1'000;\n__global__ void k() { }\n"),
            std::optional<std::string>("int n=1'000;\n"));
  // Raw strings and unbalanced braces: nothing can be said.
  EXPECT_FALSE(hostProgramText("const char *s = R\"(})\";\n"
                               "__global__ void k() {}\n"));
  EXPECT_FALSE(hostProgramText("__global__ void k() { {\n"));
}

TEST(NormalizeTest, CompiledCodeKeyCoversItsParts) {
  std::string K = compiledCodeKey("code", "host", {"-O3"});
  EXPECT_EQ(K.size(), 16u);
  EXPECT_EQ(K, compiledCodeKey("code", "host", {"-O3"}));
  EXPECT_NE(K, compiledCodeKey("code2", "host", {"-O3"}));
  EXPECT_NE(K, compiledCodeKey("code", "host2", {"-O3"}));
  EXPECT_NE(K, compiledCodeKey("code", "host", {}));
  // The parts are separated: moving text across them changes the key.
  EXPECT_NE(compiledCodeKey("ab", "c", {}), compiledCodeKey("a", "bc", {}));
}

} // namespace
