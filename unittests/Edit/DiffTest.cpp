//===- DiffTest.cpp - Unified diffs ---------------------------------------===//

#include "optiml/Edit/Diff.h"
#include "gtest/gtest.h"

using namespace optiml;

namespace {

TEST(Diff, EqualTextsHaveNoDiff) {
  EXPECT_EQ(unifiedDiff("a\nb\n", "a\nb\n", "a", "b"), "");
}

TEST(Diff, OneChangedLineWithContext) {
  std::string Old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  std::string New = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
  EXPECT_EQ(unifiedDiff(Old, New, "a/f", "b/f"),
            "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n"
            " 7\n 8\n");
}

TEST(Diff, InsertionAtStartAndSeparateHunks) {
  std::string Old, New = "new\n";
  for (int I = 0; I < 20; ++I) {
    Old += std::to_string(I) + "\n";
    New += (I == 15 ? std::string("x") : std::to_string(I)) + "\n";
  }
  std::string D = unifiedDiff(Old, New, "a", "b", 1);
  EXPECT_EQ(D, "--- a\n+++ b\n@@ -1 +1,2 @@\n+new\n 0\n@@ -15,3 +16,3 @@\n 14\n"
               "-15\n+x\n 16\n");
}

TEST(Diff, MissingFinalNewline) {
  EXPECT_EQ(unifiedDiff("a", "b", "x", "y"),
            "--- x\n+++ y\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n"
            "\\ No newline at end of file\n");
}

TEST(Diff, LineChangesRebuildTheNewText) {
  std::string Old = "a\nb\nc\nd\ne\n", New = "a\nB\nc\nd\ne\nf";
  auto Changes = lineChanges(Old, New);
  ASSERT_EQ(Changes.size(), 2u);
  EXPECT_EQ(Changes[0].Offset, 2u);
  EXPECT_EQ(Changes[0].Length, 2u);
  EXPECT_EQ(Changes[0].Text, "B\n");
  EXPECT_EQ(Changes[1].Offset, 10u); // an insertion at the end
  EXPECT_EQ(Changes[1].Length, 0u);
  EXPECT_EQ(Changes[1].Text, "f");
  EXPECT_TRUE(lineChanges(Old, Old).empty());
}

TEST(Diff, FixesYAMLCarriesAwkwardText) {
  // Quotes, tabs, a carriage return, a NUL-free control character, UTF-8.
  std::string Old = "int a;\n", New = "int a;\n// 'q' \"d\"\t\r\x01 \xc3\xa9\n";
  auto Y = fixesYAML("/p/k.cu", Old, New, "clang-optiml-edit", "msg");
  ASSERT_TRUE(bool(Y)) << llvm::toString(Y.takeError());
  EXPECT_NE(Y->find("MainSourceFile:  '/p/k.cu'"), std::string::npos) << *Y;
  EXPECT_NE(Y->find("Offset:          7"), std::string::npos) << *Y;
}

TEST(Diff, FixesYAMLRefusesTextThatDoesNotSurvive) {
  // A byte that is not UTF-8 cannot go through YAML unchanged.
  auto Y = fixesYAML("/p/k.cu", "a\n", "a\n\xff\xfe\n", "n", "m");
  if (!Y)
    EXPECT_NE(llvm::toString(Y.takeError()).find("cannot export"),
              std::string::npos);
}

} // namespace
