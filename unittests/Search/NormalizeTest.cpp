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

} // namespace
