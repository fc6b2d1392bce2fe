//===- BuilderIncludedTest.cpp - Candidates of an included file -----------===//
//
// A candidate can be the text of a file the program's main file includes:
// the build compiles the main file from copies, with the candidate's text
// in place of the included file, and never writes the user's files.
//
//===----------------------------------------------------------------------===//

#include "EvalTestUtil.h"
#include "optiml/Eval/Builder.h"
#include "optiml/Support/FileUtil.h"
#include "optiml/Support/Process.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

using namespace llvm;
using namespace optiml;
using namespace optiml::testing;

namespace {

const char *MainCu = "#include <cstdio>\n"
                     "#include \"sub/value.cuh\"\n"
                     "int main() { std::printf(\"%d\\n\", value()); }\n";
const char *ValueCuh = "#include \"helper.h\"\n"
                       "inline int value() { return base() + 1; }\n";
const char *HelperH = "inline int base() { return 40; }\n";

class BuilderIncludedTest : public ::testing::Test {
protected:
  void SetUp() override {
    Main = D.write("proj/main.cu", MainCu);
    Value = D.write("proj/sub/value.cuh", ValueCuh);
    D.write("proj/sub/helper.h", HelperH);
    Opts.CacheDir = D.file("cache");
    Opts.IncludedFrom = {Main};
  }
  TempDir D;
  std::string Main, Value;
  BuildOptions Opts;
};

TEST_F(BuilderIncludedTest, TheCandidateStandsInForTheIncludedFile) {
  std::string Count = D.file("count");
  Opts.Nvcc = writeFakeNvcc(D, Count);
  auto B = Builder::create(Opts);
  ASSERT_TRUE(bool(B)) << toString(B.takeError());
  std::string Candidate = "#include \"helper.h\"\n"
                          "inline int value() { return base() + 2; }\n";
  auto R = (*B)->build({Value, Candidate, {}});
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_TRUE(R->Succeeded) << R->Log;
  // The fake nvcc's binary is the source it compiled: the main file's copy.
  auto Bin = readFile(R->Binary);
  ASSERT_TRUE(bool(Bin));
  EXPECT_EQ(*Bin, lineDirective(Main) + MainCu);
  // Its directory holds the candidate where the main file includes it, and
  // the original directory is searched for what the candidate includes.
  std::string Cmd = R->Command;
  EXPECT_NE(Cmd.find("/tree/main.cu"), std::string::npos) << Cmd;
  EXPECT_NE(Cmd.find("-I" + sys::path::parent_path(Value).str()),
            std::string::npos)
      << Cmd;
  // The user's files are as they were.
  EXPECT_EQ(*readFile(Value), ValueCuh);
  EXPECT_EQ(*readFile(Main), MainCu);
  // Another text of the included file is another build.
  auto R2 = (*B)->build({Value, "", {}});
  ASSERT_TRUE(bool(R2)) << toString(R2.takeError());
  EXPECT_NE(R2->Key, R->Key);
  // A main file changed on disk changes the key too.
  D.write("proj/main.cu", std::string(MainCu) + "// changed\n");
  auto R3 = (*B)->build({Value, "", {}});
  ASSERT_TRUE(bool(R3)) << toString(R3.takeError());
  EXPECT_NE(R3->Key, R2->Key);
}

TEST_F(BuilderIncludedTest, NvccCompilesTheCandidateInPlaceOfTheOriginal) {
  const char *Nvcc = "/usr/local/cuda/bin/nvcc";
  if (!sys::fs::can_execute(Nvcc))
    GTEST_SKIP() << "no nvcc at " << Nvcc;
  Opts.Nvcc = Nvcc;
  Opts.UseCache = false;
  auto B = Builder::create(Opts);
  ASSERT_TRUE(bool(B)) << toString(B.takeError());
  auto Run = [&](const std::string &Source) -> std::string {
    auto R = (*B)->build({Value, Source, {}});
    if (!R)
      return "error: " + toString(R.takeError());
    if (!R->Succeeded)
      return "failed: " + R->Log;
    ProcessOptions PO;
    PO.Args = {R->Binary};
    auto P = runProcess(PO);
    if (!P)
      return "error: " + toString(P.takeError());
    return P->Stdout;
  };
  EXPECT_EQ(Run(""), "41\n");
  EXPECT_EQ(Run("#include \"helper.h\"\n"
                "inline int value() { return base() + 2; }\n"),
            "42\n");
  EXPECT_EQ(*readFile(Value), ValueCuh);
}

TEST_F(BuilderIncludedTest, AHeaderFoundThroughTheProgramsIncludePath) {
  const char *Nvcc = "/usr/local/cuda/bin/nvcc";
  if (!sys::fs::can_execute(Nvcc))
    GTEST_SKIP() << "no nvcc at " << Nvcc;
  // main.cu includes "value.cuh", found through -I<include dir> only.
  std::string M = D.write("p2/main.cu", "#include <cstdio>\n"
                                        "#include \"value.cuh\"\n"
                                        "int main() { std::printf(\"%d\\n\", "
                                        "value()); }\n");
  std::string V =
      D.write("p2/include/value.cuh", "inline int value() { return 1; }\n");
  Opts.Nvcc = Nvcc;
  Opts.UseCache = false;
  Opts.IncludedFrom = {M};
  Opts.ExtraFlags = {"-I" + sys::path::parent_path(V).str()};
  auto B = Builder::create(Opts);
  ASSERT_TRUE(bool(B)) << toString(B.takeError());
  auto R = (*B)->build({V, "inline int value() { return 2; }\n", {}});
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_TRUE(R->Succeeded) << R->Log;
  ProcessOptions PO;
  PO.Args = {R->Binary};
  auto P = runProcess(PO);
  ASSERT_TRUE(bool(P)) << toString(P.takeError());
  EXPECT_EQ(P->Stdout, "2\n");
  EXPECT_EQ(*readFile(V), "inline int value() { return 1; }\n");
}

} // namespace
