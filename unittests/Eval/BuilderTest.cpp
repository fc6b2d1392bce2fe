#include "optiml/Eval/Builder.h"
#include "EvalTestUtil.h"
#include "optiml/Support/FileUtil.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

using namespace llvm;
using namespace optiml;
using namespace optiml::testing;

namespace {

unsigned countLines(StringRef Path) {
  auto Text = readFile(Path);
  if (!Text) {
    consumeError(Text.takeError());
    return 0;
  }
  return StringRef(*Text).count('\n');
}

class BuilderTest : public ::testing::Test {
protected:
  void SetUp() override {
    Count = D.file("count");
    Nvcc = writeFakeNvcc(D, Count);
    Opts.Nvcc = Nvcc;
    Opts.CacheDir = D.file("cache");
  }
  std::unique_ptr<Builder> make() {
    auto B = Builder::create(Opts);
    if (!B) {
      ADD_FAILURE() << toString(B.takeError());
      return nullptr;
    }
    return std::move(*B);
  }
  TempDir D;
  std::string Count, Nvcc;
  BuildOptions Opts;
};

TEST_F(BuilderTest, BuildsAndParsesResources) {
  std::string Src = D.write("src/k.cu", "#!/bin/sh\necho hi\n");
  auto B = make();
  ASSERT_TRUE(B);
  EXPECT_EQ(B->nvccVersion(), "fake nvcc 13.0");
  ASSERT_EQ(B->flags().size(), 2u);
  EXPECT_EQ(B->flags()[0], "-O3");
  EXPECT_EQ(B->flags()[1], "-arch=sm_90");
  auto R = B->build({Src, "", {}});
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_TRUE(R->Succeeded);
  EXPECT_FALSE(R->CacheHit);
  EXPECT_TRUE(sys::fs::can_execute(R->Binary));
  ASSERT_EQ(R->Resources.size(), 1u);
  EXPECT_EQ(R->Resources[0].Name, "saxpy");
  EXPECT_EQ(R->Resources[0].Registers, 10u);
  EXPECT_NE(R->Command.find("-Xptxas -v"), std::string::npos);
}

TEST_F(BuilderTest, ExtraFlagsFollowTheDefaultsAndChangeTheKey) {
  std::string Src = D.write("src/k.cu", "#!/bin/sh\necho hi\n");
  auto Plain = make();
  ASSERT_TRUE(Plain);
  auto Base = Plain->build({Src, "", {}});
  ASSERT_TRUE(bool(Base)) << toString(Base.takeError());
  Opts.ExtraFlags = {"-lcublas", "-std=c++17"};
  auto B = make();
  ASSERT_TRUE(B);
  EXPECT_EQ(B->flags().vec(),
            (std::vector<std::string>{"-O3", "-arch=sm_90", "-lcublas",
                                      "-std=c++17"}));
  auto R = B->build({Src, "", {"-maxrregcount=32"}});
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_NE(R->Command.find("-lcublas -std=c++17"), std::string::npos)
      << R->Command;
  auto Same = B->build({Src, "", {}});
  ASSERT_TRUE(bool(Same));
  EXPECT_NE(Same->Key, Base->Key);
  // With a compile database's flags they come after those.
  Opts.Flags = {"-O2", "-arch=sm_80"};
  auto Db = make();
  ASSERT_TRUE(Db);
  EXPECT_EQ(Db->flags().vec(),
            (std::vector<std::string>{"-O2", "-arch=sm_80", "-lcublas",
                                      "-std=c++17"}));
}

TEST_F(BuilderTest, OtherSourcesAreBuiltInAndKeyedByContent) {
  std::string Src = D.write("src/k.cu", "#!/bin/sh\necho hi\n");
  auto Plain = make();
  ASSERT_TRUE(Plain);
  auto Alone = Plain->build({Src, "", {}});
  ASSERT_TRUE(bool(Alone)) << toString(Alone.takeError());
  std::string Helper =
      D.write("src/helper.cpp", "int helper() { return 1; }\n");
  Opts.ExtraSources = {Helper};
  auto B = make();
  ASSERT_TRUE(B);
  auto R = B->build({Src, "", {}});
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_TRUE(R->Succeeded);
  EXPECT_NE(R->Command.find(Helper + " " + Src), std::string::npos)
      << R->Command;
  EXPECT_NE(R->Key, Alone->Key);
  // The same again is cached; a changed helper is rebuilt.
  auto Again = B->build({Src, "", {}});
  ASSERT_TRUE(bool(Again));
  EXPECT_TRUE(Again->CacheHit);
  D.write("src/helper.cpp", "int helper() { return 2; }\n");
  auto Changed = B->build({Src, "", {}});
  ASSERT_TRUE(bool(Changed));
  EXPECT_FALSE(Changed->CacheHit);
  EXPECT_NE(Changed->Key, R->Key);
  // One that does not exist is refused when the builder is made.
  Opts.ExtraSources = {D.file("src/nothing.cpp")};
  auto Missing = Builder::create(Opts);
  ASSERT_FALSE(bool(Missing));
  EXPECT_NE(toString(Missing.takeError()).find("nothing.cpp' does not exist"),
            std::string::npos);
}

TEST_F(BuilderTest, SameInputIsNotRecompiled) {
  std::string Src = D.write("src/k.cu", "#!/bin/sh\necho hi\n");
  auto B = make();
  ASSERT_TRUE(B);
  auto R1 = B->build({Src, "", {}});
  ASSERT_TRUE(bool(R1)) << toString(R1.takeError());
  auto R2 = B->build({Src, "", {}});
  ASSERT_TRUE(bool(R2)) << toString(R2.takeError());
  EXPECT_TRUE(R2->CacheHit);
  EXPECT_EQ(R1->Key, R2->Key);
  EXPECT_EQ(R1->Binary, R2->Binary);
  EXPECT_EQ(countLines(Count), 1u);
  EXPECT_EQ(R2->Resources.size(), 1u); // facts survive the cache

  // A new builder (a later process) finds it too.
  auto B2 = make();
  auto R3 = B2->build({Src, "", {}});
  ASSERT_TRUE(bool(R3));
  EXPECT_TRUE(R3->CacheHit);
  EXPECT_EQ(countLines(Count), 1u);
}

TEST_F(BuilderTest, SourceFlagsAndHeadersChangeTheKey) {
  std::string Src = D.write("src/k.cu", "#!/bin/sh\n#include \"h.cuh\"\n");
  D.write("src/h.cuh", "v1");
  auto B = make();
  ASSERT_TRUE(B);
  auto Base = B->build({Src, "", {}});
  ASSERT_TRUE(bool(Base));
  auto Text = B->build({Src, "#!/bin/sh\n#include \"h.cuh\"\necho 2\n", {}});
  ASSERT_TRUE(bool(Text));
  EXPECT_NE(Text->Key, Base->Key);
  auto Flag = B->build({Src, "", {"-maxrregcount=32"}});
  ASSERT_TRUE(bool(Flag));
  EXPECT_NE(Flag->Key, Base->Key);
  EXPECT_NE(Flag->Command.find("-maxrregcount=32"), std::string::npos);
  D.write("src/h.cuh", "v2");
  auto Header = B->build({Src, "", {}});
  ASSERT_TRUE(bool(Header));
  EXPECT_NE(Header->Key, Base->Key);
  EXPECT_FALSE(Header->CacheHit);
  EXPECT_EQ(countLines(Count), 4u);
}

TEST_F(BuilderTest, CandidateTextIsBuiltBesideTheOriginalsIncludes) {
  std::string Src = D.write("src/k.cu", "#!/bin/sh\necho original\n");
  auto B = make();
  auto R = B->build({Src, "#!/bin/sh\necho candidate\n", {}});
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_TRUE(R->Succeeded);
  auto Bin = readFile(R->Binary);
  ASSERT_TRUE(bool(Bin));
  EXPECT_EQ(*Bin, "#!/bin/sh\necho candidate\n");
  EXPECT_NE(R->Command.find("-I" + D.file("src")), std::string::npos);
}

TEST_F(BuilderTest, CompileErrorsAreSummarizedAndCached) {
  std::string Src = D.write("src/bad.cu", "COMPILE_ERROR\n");
  auto B = make();
  auto R = B->build({Src, "", {}});
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_FALSE(R->Succeeded);
  EXPECT_NE(R->ErrorSummary.find("error: identifier \"q\" is undefined"),
            std::string::npos);
  EXPECT_EQ(StringRef(R->ErrorSummary).count('\n'), 2u);
  auto R2 = B->build({Src, "", {}});
  ASSERT_TRUE(bool(R2));
  EXPECT_TRUE(R2->CacheHit);
  EXPECT_FALSE(R2->Succeeded);
  EXPECT_EQ(R2->ErrorSummary, R->ErrorSummary);
  EXPECT_EQ(countLines(Count), 1u);
}

TEST_F(BuilderTest, ParallelBuildsKeepOrder) {
  Opts.Jobs = 2;
  auto B = make();
  std::vector<BuildRequest> Reqs;
  for (int I = 0; I < 5; ++I) {
    std::string Src = D.write("src/k" + std::to_string(I) + ".cu",
                              "#!/bin/sh\necho " + std::to_string(I) + "\n" +
                                  (I == 3 ? "COMPILE_ERROR\n" : ""));
    Reqs.push_back({Src, "", {}});
  }
  auto Rs = B->buildAll(Reqs);
  ASSERT_EQ(Rs.size(), 5u);
  for (int I = 0; I < 5; ++I) {
    ASSERT_TRUE(bool(Rs[I])) << toString(Rs[I].takeError());
    EXPECT_EQ(Rs[I]->Succeeded, I != 3);
  }
  EXPECT_EQ(B->compilations(), 5u);
  EXPECT_EQ(countLines(Count), 5u);
}

TEST_F(BuilderTest, MissingNvccAndSourceAreErrors) {
  BuildOptions O;
  O.Nvcc = D.file("no/such/nvcc");
  auto B = Builder::create(O);
  ASSERT_FALSE(bool(B));
  EXPECT_NE(toString(B.takeError()).find("not found"), std::string::npos);
  auto Good = make();
  auto R = Good->build({D.file("missing.cu"), "", {}});
  ASSERT_FALSE(bool(R));
  EXPECT_NE(toString(R.takeError()).find("missing.cu"), std::string::npos);
}

TEST_F(BuilderTest, UnsafeSourceNamesAreBuiltFromSafeCopies) {
  // nvcc pastes file names into shell commands: none may reach it as is.
  std::string Src =
      D.write("src dir;x/k$(touch y).cu", "#!/bin/sh\necho original\n");
  std::string Other = D.write("o`id`/util.cu", "int util;\n");
  Opts.ExtraSources = {Other};
  auto B = make();
  ASSERT_TRUE(B);
  for (const std::string &Text : {std::string(), std::string("candidate\n")}) {
    auto R = B->build({Src, Text, {}});
    ASSERT_TRUE(bool(R)) << toString(R.takeError());
    ASSERT_TRUE(R->Succeeded) << R->Log;
    // (The command is shown with its arguments joined by spaces.)
    for (StringRef Unsafe : {"$", "`", ";", "src dir"})
      EXPECT_EQ(R->Command.find(Unsafe), std::string::npos)
          << Unsafe.str() << " in " << R->Command;
    // The fake nvcc copies the source to the binary: the copy starts with a
    // #line naming the original (the whole path for the file on disk, the
    // file's name for a candidate's text).
    auto Bin = readFile(R->Binary);
    ASSERT_TRUE(bool(Bin));
    std::string Named = Text.empty() ? Src : std::string("k$(touch y).cu");
    EXPECT_EQ(*Bin, lineDirective(Named) +
                        (Text.empty() ? "#!/bin/sh\necho original\n" : Text));
    // Quoted includes: the directories are reached through links.
    EXPECT_NE(R->Command.find("/include-dir-0"), std::string::npos);
  }
  // The links do not stay in the cache.
  auto R = B->build({Src, "", {}});
  ASSERT_TRUE(bool(R));
  EXPECT_FALSE(
      sys::fs::exists(sys::path::parent_path(R->Binary) + "/include-dir-0"));
}

TEST_F(BuilderTest, SafeSourceIsBuiltInPlace) {
  std::string Src = D.write("src/k.cu", "#!/bin/sh\necho original\n");
  auto B = make();
  auto R = B->build({Src, "", {}});
  ASSERT_TRUE(bool(R));
  SmallString<256> Abs(Src);
  sys::fs::make_absolute(Abs);
  EXPECT_TRUE(StringRef(R->Command).ends_with(" " + std::string(Abs)));
}

TEST_F(BuilderTest, FlagsWithShellCharactersAreRefused) {
  Opts.ExtraFlags = {"-DX=$(touch y)"};
  auto Bad = Builder::create(Opts);
  ASSERT_FALSE(bool(Bad));
  EXPECT_EQ(toString(Bad.takeError()),
            "nvcc flag '-DX=$(touch y)' contains '$', which the shell that "
            "nvcc runs its steps through would interpret; it is refused");
  Opts.ExtraFlags = {"-DN=4096", "-Xcompiler=-fopenmp,-O2", "-lcublas"};
  auto B = make();
  ASSERT_TRUE(B);
  // A candidate's own flag is a failed build, not an error: the search
  // goes on.
  std::string Src = D.write("src/k.cu", "#!/bin/sh\n");
  auto R = B->build({Src, "", {"-maxrregcount=32;touch y"}});
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_FALSE(R->Succeeded);
  EXPECT_NE(R->ErrorSummary.find("contains ';'"), std::string::npos);
  EXPECT_EQ(countLines(Count), 0u);
}

TEST(ShellSafetyTest, RefusesWhatAShellInterprets) {
  for (StringRef Safe :
       {"-O3", "-arch=sm_90", "-DN=4096", "-I/usr/include/x-y_z.1",
        "-Xcompiler=-fopenmp,-O2", "--std=c++17", "-maxrregcount=64",
        "-lcublas", "-DPATH=/a/b:c", "-DV=1%2^3@4!", "k\xc3\xa9.cu"})
    EXPECT_FALSE(shellUnsafeChar(Safe).has_value()) << Safe.str();
  for (char C : StringRef(" \t\n\r\"'\\$`;&|<>()*?[~#{}\x01\x7f")) {
    std::string Arg = std::string("-DX=a") + C + "b";
    auto Got = shellUnsafeChar(Arg);
    ASSERT_TRUE(Got.has_value()) << int(C);
    EXPECT_EQ(*Got, C);
  }
  EXPECT_EQ(toString(checkNvccArgument("-DX=a\nb", "--build-arg")),
            "--build-arg '-DX=a\\x0ab' contains a newline, which the shell "
            "that nvcc runs its steps through would interpret; it is refused");
  EXPECT_FALSE(bool(checkNvccArgument("-DN=1", "--build-arg")));
}

TEST(ShellSafetyTest, GencodeListsAreNvccs) {
  // CMake writes architectures with brackets; nvcc's option parser takes
  // them, its steps get single names.
  for (StringRef Ok :
       {"--generate-code=arch=compute_90,code=[compute_90,sm_90]",
        "-gencode=arch=compute_90a,code=[sm_90a]",
        "arch=compute_80,code=[compute_80,sm_80]",
        "arch=compute_90,code=sm_90"})
    EXPECT_FALSE(bool(checkNvccArgument(Ok, "nvcc flag"))) << Ok.str();
  // A bracket anywhere else, or a list holding anything but architecture
  // names, is what a shell would glob.
  for (StringRef Bad :
       {"-DX=[a]", "--generate-code=arch=compute_90,code=[sm_90;x]",
        "--generate-code=arch=compute_90,code=[sm_90",
        "arch=compute_90,code=[sm_90],-DX=[y]", "-gencode=code=[$(id)]"}) {
    Error E = checkNvccArgument(Bad, "nvcc flag");
    EXPECT_TRUE(bool(E)) << Bad.str();
    consumeError(std::move(E));
  }
}

TEST(ShellSafetyTest, LineDirectiveNamesAnyBytesExactly) {
  EXPECT_EQ(lineDirective("/a/k.cu"), "#line 1 \"/a/k.cu\"\n");
  // Quotes, backslashes, newlines (which would end the directive and put
  // the rest of the name into the program), trigraphs, bytes beyond ASCII.
  EXPECT_EQ(lineDirective("a\"b\\c\nd?\?/e\xff"),
            "#line 1 \"a\\\"b\\\\c\\012d\\?\\?/e\\377\"\n");
}

} // namespace
