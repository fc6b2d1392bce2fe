//===- NvccCompatTest.cpp - launches spelled with spaces in the chevrons --===//

#include "optiml/Frontend/NvccCompat.h"
#include "gtest/gtest.h"

using namespace optiml;

namespace {

TEST(NvccCompatTest, RespellsSpacedChevronsKeepingTheLength) {
  std::string In = "int main() { k<< <g, b>> >(p, n); }";
  std::string Out = normalizeLaunchChevrons(In);
  EXPECT_EQ(Out, "int main() { k<<< g, b>>> (p, n); }");
  EXPECT_EQ(Out.size(), In.size());
}

TEST(NvccCompatTest, NestedParenthesesAndTemplatesInTheConfiguration) {
  std::string In = "k<< <dim3(f<int>(a), (b >> 1)), c>> >(x);";
  EXPECT_EQ(normalizeLaunchChevrons(In),
            "k<<< dim3(f<int>(a), (b >> 1)), c>>> (x);");
}

TEST(NvccCompatTest, ANewlineOrACommentBetweenTheChevrons) {
  std::string In = "k<<\n<g, b>>/*x*/>(p);";
  std::string Out = normalizeLaunchChevrons(In);
  EXPECT_EQ(Out, "k<<<\ng, b>>>/*x*/(p);");
  // Lines after it are where they were.
  EXPECT_EQ(std::count(Out.begin(), Out.end(), '\n'), 1);
}

TEST(NvccCompatTest, LeavesEverythingElseAlone) {
  for (const char *Same : {
           "k<<<g, b>>>(p);",                       // already one token
           "std::cout << x << y;",                  // shifts
           "auto s = operator<< <int>(os, 1);",     // a specialization
           "A<B<C<int>> > v;",                      // a template's `>> >`
           "const char *s = \"k<< <g, b>> >(p)\";", // a string
           "// k<< <g, b>> >(p)\nint x;",           // a comment
           "x << <",                                // unterminated
       })
    EXPECT_EQ(normalizeLaunchChevrons(Same), Same) << Same;
}

TEST(NvccCompatTest, TheHeaderAppliesOnlyUnderTheRealCudaWrapper) {
  llvm::StringRef H = nvccCompatHeaderText();
  EXPECT_TRUE(H.contains("#ifdef __CLANG_CUDA_RUNTIME_WRAPPER_H__"));
  EXPECT_TRUE(nvccCompatHeaderPath().starts_with("/"));
}

} // namespace
