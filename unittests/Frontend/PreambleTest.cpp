//===- PreambleTest.cpp - parses reuse the file's leading #includes -------===//
//
// A parse with a precompiled preamble must be the parse without one: the
// same diagnostics, the same kernel model. The preamble is built once, reused
// in the process, read back from disk by a later process, and built again
// when a header it read changed or its file on disk is damaged.
//
// A preamble whose declarations are all in system headers is not read by
// the walks over the user's code (UserCode.h): they find what a walk over
// the whole translation unit finds.
//
//===----------------------------------------------------------------------===//

#include "optiml/Frontend/Preamble.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Frontend/KernelModelOutput.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "optiml/Frontend/Parse.h"
#include "clang/AST/ASTContext.h"
#include "clang/Frontend/ASTUnit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <cstdlib>

using namespace optiml;
using namespace llvm;

namespace {

class PreambleTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("optiml-preamble", Dir));
    SmallString<256> Cache(Dir);
    sys::path::append(Cache, "cache");
    CacheDir = std::string(Cache);
    setenv("OPTIML_PREAMBLE_DIR", CacheDir.c_str(), 1);
    forgetPreamblesInMemory();
    ToolchainOptions O;
    O.ResourceDir = OPTIML_TEST_RESOURCE_DIR;
    auto T = discoverToolchain(O);
    if (T) {
      Config.Tools = *T;
    } else {
      consumeError(T.takeError());
      Config.Tools.CudaPath = "/usr/local/cuda";
      Config.Tools.GpuArch = "sm_90";
      Config.Tools.ResourceDir = OPTIML_TEST_RESOURCE_DIR;
    }
    Config.ExtraArgs = {"-nocudainc", "-nocudalib",
                        std::string("-I") + OPTIML_TEST_INPUTS_DIR};
    write("scale.cuh", Header);
    Main = path("main.cu");
  }
  void TearDown() override {
    unsetenv("OPTIML_PREAMBLE_DIR");
    forgetPreamblesInMemory();
    (void)sys::fs::remove_directories(Dir);
  }

  std::string path(StringRef Name) {
    SmallString<256> P(Dir);
    sys::path::append(P, Name);
    return std::string(P);
  }
  void write(StringRef Name, StringRef Text) {
    std::error_code EC;
    raw_fd_ostream OS(path(Name), EC);
    ASSERT_FALSE(EC);
    OS << Text;
  }

  struct Result {
    std::string Use;
    std::string Diags;
    std::string Model;
  };
  Result parse(StringRef Code, bool Reuse = true,
               CudaSide Side = CudaSide::Host) {
    ParseConfig C = Config;
    C.ReusePreamble = Reuse;
    auto TU = parseCuda(Code, Main, C, Side);
    EXPECT_TRUE(bool(TU));
    if (!TU) {
      consumeError(TU.takeError());
      return {};
    }
    Result R;
    R.Use = TU->PreambleUse;
    raw_string_ostream OS(R.Diags);
    printDiagnostics(OS, TU->Diags, /*IncludeWarnings=*/true);
    if (!TU->errorCount())
      R.Model = kernelModelToJSON(buildKernelModel(TU->AST->getASTContext()));
    return R;
  }
  /// The parse with a preamble equals the parse of the whole file.
  void expectSameAsWholeParse(const Result &R, StringRef Code,
                              CudaSide Side = CudaSide::Host) {
    Result Whole = parse(Code, /*Reuse=*/false, Side);
    EXPECT_EQ(Whole.Use, "");
    EXPECT_EQ(R.Diags, Whole.Diags);
    EXPECT_EQ(R.Model, Whole.Model);
  }

  static constexpr const char *Header =
      "#pragma once\n"
      "__device__ inline float scale(float x) { return 2.0f * x; }\n";
  static constexpr const char *Code =
      "#include \"cuda_mock.h\"\n"
      "#include \"scale.cuh\"\n"
      "__global__ void k(float *p, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n)\n"
      "    p[i] = scale(p[i]);\n"
      "}\n"
      "int main() { k<<<1, 32>>>(nullptr, 0); }\n";

  SmallString<256> Dir;
  std::string CacheDir, Main;
  ParseConfig Config;
};

TEST_F(PreambleTest, BuiltThenReusedThenReadFromDisk) {
  Result First = parse(Code);
  EXPECT_EQ(First.Use, "built");
  EXPECT_NE(First.Model, "");
  expectSameAsWholeParse(First, Code);
  EXPECT_EQ(parse(Code).Use, "reused");
  forgetPreamblesInMemory(); // as a new process would start
  Result Disk = parse(Code);
  EXPECT_EQ(Disk.Use, "loaded");
  EXPECT_EQ(Disk.Model, First.Model);
  // The device side has its own.
  Result Device = parse(Code, true, CudaSide::Device);
  EXPECT_EQ(Device.Use, "built");
  expectSameAsWholeParse(Device, Code, CudaSide::Device);
}

TEST_F(PreambleTest, AnEditAfterThePreambleKeepsItAndItsDiagnostics) {
  EXPECT_EQ(parse(Code).Use, "built");
  std::string Broken = Code;
  Broken.replace(Broken.find("scale(p[i])"), 11, "scale(p[i], 1)");
  Result R = parse(Broken);
  EXPECT_EQ(R.Use, "reused");
  EXPECT_NE(R.Diags.find("main.cu:6:"), std::string::npos) << R.Diags;
  expectSameAsWholeParse(R, Broken);
}

TEST_F(PreambleTest, AChangedHeaderIsReadAgain) {
  EXPECT_EQ(parse(Code).Use, "built");
  forgetPreamblesInMemory();
  // Another size, so the change shows whatever the clock's resolution.
  write("scale.cuh", "#pragma once\n"
                     "__device__ inline float scale(float x, float y) {\n"
                     "  return x * y;\n"
                     "}\n");
  Result R = parse(Code);
  EXPECT_EQ(R.Use, "built");
  EXPECT_NE(R.Diags.find("no matching function for call to 'scale'"),
            std::string::npos)
      << R.Diags;
  expectSameAsWholeParse(R, Code);
}

TEST_F(PreambleTest, ADamagedFileOnDiskIsBuiltAgain) {
  EXPECT_EQ(parse(Code).Use, "built");
  forgetPreamblesInMemory();
  std::error_code EC;
  for (sys::fs::directory_iterator It(CacheDir, EC), End; It != End && !EC;
       It.increment(EC))
    if (sys::path::extension(It->path()) == ".pch") {
      auto Old = MemoryBuffer::getFile(It->path());
      ASSERT_TRUE(bool(Old));
      std::string Bytes = (*Old)->getBuffer().str();
      Bytes[Bytes.size() / 2] ^= 0x5a;
      raw_fd_ostream OS(It->path(), EC);
      OS << Bytes;
    }
  Result R = parse(Code);
  EXPECT_EQ(R.Use, "built");
  expectSameAsWholeParse(R, Code);
}

TEST_F(PreambleTest, APreambleWithAWarningIsNotUsed) {
  write("scale.cuh", "#pragma once\n"
                     "#warning the header says so\n"
                     "__device__ inline float scale(float x) { return x; }\n");
  Result R = parse(Code);
  EXPECT_EQ(R.Use, "");
  EXPECT_NE(R.Diags.find("the header says so"), std::string::npos) << R.Diags;
  expectSameAsWholeParse(R, Code);
}

/// A walk over the user's code skips a preamble of system headers, reads
/// nothing from it, and finds what the whole parse finds.
TEST_F(PreambleTest, TheUserCodeWalkSkipsAPreambleOfSystemHeaders) {
  Config.ExtraArgs = {"-nocudainc", "-nocudalib",
                      std::string("-isystem") + OPTIML_TEST_INPUTS_DIR};
  std::string System = Code;
  System.replace(System.find("#include \"scale.cuh\"\n"), 21,
                 "__device__ inline float scale(float x) { return x; }\n");
  ParseConfig C = Config;
  auto TU = parseCuda(System, Main, C, CudaSide::Host);
  ASSERT_TRUE(bool(TU));
  EXPECT_EQ(TU->PreambleUse, "built");
  clang::ASTContext &Ctx = TU->AST->getASTContext();
  EXPECT_FALSE(mayReadUserCodeFromPreamble(Ctx));
  auto Local = declsAfterPreamble(Ctx, /*Instantiations=*/true);
  ASSERT_TRUE(Local.has_value());
  // scale, k, main.
  EXPECT_EQ(Local->size(), 3u);
  std::string Model = kernelModelToJSON(buildKernelModel(Ctx));
  EXPECT_TRUE(Ctx.getTranslationUnitDecl()->hasExternalLexicalStorage());
  expectSameAsWholeParse(parse(System), System);
  // Read from disk, the preamble still says so.
  forgetPreamblesInMemory();
  auto Disk = parseCuda(System, Main, C, CudaSide::Host);
  ASSERT_TRUE(bool(Disk));
  EXPECT_EQ(Disk->PreambleUse, "loaded");
  EXPECT_FALSE(mayReadUserCodeFromPreamble(Disk->AST->getASTContext()));
  EXPECT_EQ(kernelModelToJSON(buildKernelModel(Disk->AST->getASTContext())),
            Model);
}

/// A project header in the preamble is user code: everything is walked.
TEST_F(PreambleTest, AProjectHeaderInThePreambleIsWalked) {
  auto TU = parseCuda(Code, Main, Config, CudaSide::Host);
  ASSERT_TRUE(bool(TU));
  EXPECT_EQ(TU->PreambleUse, "built");
  clang::ASTContext &Ctx = TU->AST->getASTContext();
  EXPECT_TRUE(mayReadUserCodeFromPreamble(Ctx));
  EXPECT_FALSE(declsAfterPreamble(Ctx, /*Instantiations=*/false));
}

/// A template of the preamble defined in the main file has instantiations,
/// visited under the preamble's declaration, that hold the user's code.
TEST_F(PreambleTest, APreambleTemplateDefinedByTheUserIsWalked) {
  Config.ExtraArgs = {"-nocudainc", "-nocudalib",
                      std::string("-isystem") + OPTIML_TEST_INPUTS_DIR,
                      std::string("-isystem") + Dir.str().str()};
  write("twice.h", "#pragma once\n"
                   "template <class T> __device__ T twice(T x);\n");
  std::string Text = "#include \"cuda_mock.h\"\n"
                     "#include <twice.h>\n"
                     "template <class T> __device__ T twice(T x) {\n"
                     "  return x + x;\n"
                     "}\n"
                     "__global__ void k(float *p) { p[0] = twice(p[0]); }\n";
  auto TU = parseCuda(Text, Main, Config, CudaSide::Host);
  ASSERT_TRUE(bool(TU));
  EXPECT_EQ(TU->PreambleUse, "built");
  clang::ASTContext &Ctx = TU->AST->getASTContext();
  EXPECT_FALSE(mayReadUserCodeFromPreamble(Ctx));
  EXPECT_TRUE(declsAfterPreamble(Ctx, /*Instantiations=*/false));
  EXPECT_FALSE(declsAfterPreamble(Ctx, /*Instantiations=*/true));
}

TEST_F(PreambleTest, OffMeansNone) {
  setenv("OPTIML_PREAMBLE_DIR", "off", 1);
  Result R = parse(Code);
  EXPECT_EQ(R.Use, "");
  EXPECT_FALSE(sys::fs::exists(CacheDir));
}

} // namespace
