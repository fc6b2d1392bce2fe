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

} // namespace
