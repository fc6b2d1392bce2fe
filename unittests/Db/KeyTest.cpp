//===- KeyTest.cpp - Keys of tuned variants -------------------------------===//

#include "optiml/Db/Key.h"
#include "DbTestUtil.h"
#include "optiml/Support/FileUtil.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Tooling.h"
#include "gtest/gtest.h"

using namespace llvm;

namespace optiml {
namespace db {
namespace {

/// Parses Dir/main.cpp (which includes inc.h and sub/deep.h) the way the
/// tool does: the main file's text from memory, its includes from disk.
std::vector<InputFile> parseInputs(const TempDir &D) {
  auto Main = readFile(D.path("main.cpp"));
  EXPECT_TRUE(bool(Main));
  std::unique_ptr<clang::ASTUnit> AST =
      clang::tooling::buildASTFromCodeWithArgs(
          *Main, {"-nostdinc", "-I" + D.path("sub")}, D.path("main.cpp"));
  EXPECT_TRUE(AST);
  return translationUnitInputs(AST->getSourceManager());
}

void makeProject(const TempDir &D) {
  sys::fs::create_directories(D.path("sub"));
  writeText(D.path("main.cpp"),
            "#include \"inc.h\"\nint main() { return f(); }\n");
  writeText(D.path("inc.h"),
            "#include <deep.h>\ninline int f() { return g() + 1; }\n");
  writeText(D.path("sub/deep.h"), "inline int g() { return 41; }\n");
}

TEST(KeyTest, EveryFileTheParseReadIsAnInput) {
  TempDir D;
  makeProject(D);
  std::vector<InputFile> In = parseInputs(D);
  ASSERT_EQ(In.size(), 3u);
  EXPECT_TRUE(In[0].Main);
  EXPECT_EQ(In[0].Path, D.path("main.cpp"));
  EXPECT_EQ(In[1].Path, D.path("inc.h"));
  EXPECT_FALSE(In[1].Main);
  EXPECT_EQ(In[2].Path, D.path("sub/deep.h"));
  EXPECT_EQ(In[2].Hash, hashContent("inline int g() { return 41; }\n"));
  EXPECT_EQ(staleReason(In), "");
}

TEST(KeyTest, AnyByteOfAnIncludedFileChangesTheKey) {
  TempDir D;
  makeProject(D);
  std::string Before = inputsDigest(parseInputs(D));
  EXPECT_EQ(Before, inputsDigest(parseInputs(D)));
  // One byte of a header two levels down, the same length.
  writeText(D.path("sub/deep.h"), "inline int g() { return 42; }\n");
  std::vector<InputFile> After = parseInputs(D);
  EXPECT_NE(Before, inputsDigest(After));
  // And of the main file.
  writeText(D.path("main.cpp"),
            "#include \"inc.h\"\nint main() { return f(); } \n");
  EXPECT_NE(inputsDigest(After), inputsDigest(parseInputs(D)));
}

TEST(KeyTest, ChangedFileMakesRecordedInputsStale) {
  TempDir D;
  makeProject(D);
  std::vector<InputFile> In = parseInputs(D);
  writeText(D.path("inc.h"),
            "#include <deep.h>\ninline int f() { return g() + 2; }\n");
  EXPECT_EQ(staleReason(In), "'" + D.path("inc.h") + "' has changed");
  sys::fs::remove(D.path("inc.h"));
  EXPECT_EQ(staleReason(In), "'" + D.path("inc.h") + "' cannot be read");
}

TEST(KeyTest, MainFileIsNotInterchangeableWithAnInclude) {
  InputFile A{"/p/a.cu", hashContent("a"), true},
      B{"/p/b.h", hashContent("b"), false};
  InputFile A2{"/p/a.cu", hashContent("b"), true},
      B2{"/p/b.h", hashContent("a"), false};
  EXPECT_NE(inputsDigest({A, B}), inputsDigest({A2, B2}));
  // The paths are not part of it: a moved project keeps its keys.
  InputFile Moved{"/q/a.cu", hashContent("a"), true};
  EXPECT_EQ(inputsDigest({A, B}), inputsDigest({Moved, B}));
}

VariantKey baseKey() {
  VariantKey K;
  K.InputsDigest = hashContent("tu");
  K.Kernels = {"scale", "ns::add"};
  K.GpuName = "NVIDIA H200";
  K.GpuArch = "sm_90";
  K.NvccVersion = "Cuda compilation tools, release 13.0, V13.0.88";
  K.NvccFlags = {"-O3", "-std=c++17", "-DN=4096"};
  return K;
}

TEST(KeyTest, EveryPartChangesTheKey) {
  std::string Base = baseKey().digest();
  EXPECT_EQ(Base.size(), 64u);
  EXPECT_EQ(Base, baseKey().digest());
  auto Differs = [&](auto Change) {
    VariantKey K = baseKey();
    Change(K);
    return K.digest() != Base;
  };
  EXPECT_TRUE(
      Differs([](VariantKey &K) { K.InputsDigest = hashContent("tu2"); }));
  EXPECT_TRUE(Differs([](VariantKey &K) { K.Kernels = {"scale"}; }));
  EXPECT_TRUE(
      Differs([](VariantKey &K) { K.GpuName = "NVIDIA H100 80GB HBM3"; }));
  EXPECT_TRUE(Differs([](VariantKey &K) { K.GpuArch = "sm_80"; }));
  EXPECT_TRUE(Differs([](VariantKey &K) { K.NvccVersion += "1"; }));
  EXPECT_TRUE(Differs([](VariantKey &K) { K.NvccFlags[2] = "-DN=4097"; }));
  EXPECT_TRUE(
      Differs([](VariantKey &K) { K.NvccFlags.push_back("-lineinfo"); }));
  // Flags are an ordered list whose items keep their boundaries.
  EXPECT_TRUE(Differs(
      [](VariantKey &K) { std::swap(K.NvccFlags[0], K.NvccFlags[1]); }));
  EXPECT_TRUE(Differs(
      [](VariantKey &K) { K.NvccFlags = {"-O3 -std=c++17", "-DN=4096"}; }));
  // The kernels are a set.
  EXPECT_FALSE(
      Differs([](VariantKey &K) { std::swap(K.Kernels[0], K.Kernels[1]); }));
}

} // namespace
} // namespace db
} // namespace optiml
