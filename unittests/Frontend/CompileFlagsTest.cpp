#include "optiml/Frontend/CompileFlags.h"
#include "optiml/Frontend/CudaToolchain.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <algorithm>

using namespace optiml;

namespace {

bool has(const std::vector<std::string> &V, const std::string &S) {
  return std::find(V.begin(), V.end(), S) != V.end();
}

bool anyStartsWith(const std::vector<std::string> &V, const std::string &S) {
  return std::any_of(V.begin(), V.end(),
                     [&](const std::string &X) { return X.rfind(S, 0) == 0; });
}

TEST(CompileFlagsTest, TranslatesNvccCommand) {
  std::vector<std::string> Argv = {"/usr/local/cuda/bin/nvcc",
                                   "-Iinclude",
                                   "-I",
                                   "third_party",
                                   "-DUSE_FAST=1",
                                   "-std=c++17",
                                   "--expt-relaxed-constexpr",
                                   "-rdc=true",
                                   "-gencode",
                                   "arch=compute_90,code=sm_90",
                                   "-Xcompiler",
                                   "-fPIC,-DHOST=1",
                                   "-O3",
                                   "-lineinfo",
                                   "-x",
                                   "cu",
                                   "-c",
                                   "src/k.cu",
                                   "-o",
                                   "k.o"};
  TranslatedFlags F = translateCompileCommand(Argv, "/proj/build");
  EXPECT_TRUE(has(F.Args, "-I/proj/build/include"));
  EXPECT_TRUE(has(F.Args, "-I/proj/build/third_party"));
  EXPECT_TRUE(has(F.Args, "-DUSE_FAST=1"));
  EXPECT_TRUE(has(F.Args, "-std=c++17"));
  EXPECT_TRUE(has(F.Args, "-fgpu-rdc"));
  EXPECT_TRUE(has(F.Args, "-DHOST=1"));
  EXPECT_TRUE(has(F.Args, "-O3"));
  ASSERT_TRUE(F.GpuArch.has_value());
  EXPECT_EQ(*F.GpuArch, "sm_90");
  // Nothing that would confuse clang survives.
  EXPECT_FALSE(has(F.Args, "-c"));
  EXPECT_FALSE(has(F.Args, "-lineinfo"));
  EXPECT_FALSE(has(F.Args, "--expt-relaxed-constexpr"));
  EXPECT_FALSE(has(F.Args, "-fPIC"));
  EXPECT_FALSE(anyStartsWith(F.Args, "-o"));
  EXPECT_FALSE(has(F.Args, "src/k.cu"));
  // And each drop is explained.
  EXPECT_TRUE(anyStartsWith(F.Dropped, "--expt-relaxed-constexpr ("));
  EXPECT_TRUE(anyStartsWith(F.Dropped, "-Xcompiler -fPIC ("));
  EXPECT_TRUE(anyStartsWith(F.Dropped, "-lineinfo ("));
}

TEST(CompileFlagsTest, ArchForms) {
  auto Arch = [](std::vector<std::string> Argv) {
    Argv.insert(Argv.begin(), "nvcc");
    return translateCompileCommand(Argv, "/").GpuArch.value_or("none");
  };
  EXPECT_EQ(Arch({"-arch=sm_80"}), "sm_80");
  EXPECT_EQ(Arch({"-arch", "sm_86"}), "sm_86");
  EXPECT_EQ(Arch({"--gpu-architecture=compute_75"}), "sm_75");
  EXPECT_EQ(Arch({"-gencode=arch=compute_90a,code=[sm_90a,compute_90a]"}),
            "sm_90a");
  EXPECT_EQ(Arch({"--cuda-gpu-arch=sm_70"}), "sm_70");
  EXPECT_EQ(Arch({"-arch=native"}), "none");
  // The first architecture wins; the others are reported as dropped.
  TranslatedFlags F =
      translateCompileCommand({"nvcc", "-gencode", "arch=compute_80,code=sm_80",
                               "-gencode", "arch=compute_90,code=sm_90"},
                              "/");
  EXPECT_EQ(F.GpuArch.value_or(""), "sm_80");
  EXPECT_TRUE(anyStartsWith(F.Dropped, "-gencode arch=compute_90"));
}

TEST(CompileFlagsTest, ClangCommandKeepsWhatClangKnows) {
  TranslatedFlags F = translateCompileCommand(
      {"clang++", "-x", "cuda", "--cuda-gpu-arch=sm_90", "-Wall", "-isystem",
       "/opt/inc", "-include", "pre.h", "-c", "a.cu"},
      "/w");
  EXPECT_TRUE(has(F.Args, "-Wall"));
  EXPECT_TRUE(has(F.Args, "/opt/inc"));
  EXPECT_TRUE(has(F.Args, "/w/pre.h"));
  EXPECT_FALSE(has(F.Args, "cuda"));
  EXPECT_EQ(F.GpuArch.value_or(""), "sm_90");
}

TEST(CompileFlagsTest, DefaultStreamAndFastMath) {
  TranslatedFlags F = translateCompileCommand(
      {"nvcc", "--default-stream", "per-thread", "--use_fast_math"}, "/");
  EXPECT_TRUE(has(F.Args, "-fgpu-default-stream=per-thread"));
  EXPECT_TRUE(has(F.Args, "-ffast-math"));
}

TEST(CompileFlagsTest, MissingDatabaseIsAnError) {
  auto F = loadCompileFlags("/nonexistent-build", "/x/a.cu");
  ASSERT_FALSE(bool(F));
  std::string Msg = llvm::toString(F.takeError());
  EXPECT_NE(Msg.find("/nonexistent-build/compile_commands.json"),
            std::string::npos);
}

TEST(CompileFlagsTest, InputsAfterDoubleDashAreNotFlags) {
  TranslatedFlags F =
      translateCompileCommand({"nvcc", "-DA=1", "--", "-DB=2"}, "/");
  EXPECT_TRUE(has(F.Args, "-DA=1"));
  EXPECT_FALSE(has(F.Args, "-DB=2"));
  EXPECT_TRUE(F.Dropped.empty());
}

/// A temporary project: root/{build/compile_commands.json, src/...}.
struct TempProject {
  llvm::SmallString<128> Root;
  TempProject() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("optiml-db", Root));
    llvm::sys::fs::create_directories(Root + "/build");
    llvm::sys::fs::create_directories(Root + "/src/deep");
  }
  ~TempProject() { llvm::sys::fs::remove_directories(Root); }
  void write(llvm::StringRef Rel, llvm::StringRef Text) {
    std::error_code EC;
    llvm::sys::fs::create_directories(
        llvm::sys::path::parent_path((Root + "/" + Rel).str()));
    llvm::raw_fd_ostream OS((Root + "/" + Rel).str(), EC);
    OS << Text;
  }
  std::string path(llvm::StringRef Rel) { return (Root + "/" + Rel).str(); }
};

TEST(CompileFlagsTest, FindsDatabaseInBuildDirectoryAbove) {
  TempProject P;
  P.write("build/compile_commands.json", "[]");
  EXPECT_EQ(findCompilationDatabase(P.path("src/deep/k.cu")),
            P.path("build/compile_commands.json"));
  // One beside the file wins over one further up.
  P.write("src/compile_commands.json", "[]");
  EXPECT_EQ(findCompilationDatabase(P.path("src/deep/k.cu")),
            P.path("src/compile_commands.json"));
}

TEST(CompileFlagsTest, MissingFileBorrowsClosestCudaNeighbour) {
  TempProject P;
  P.write("build/compile_commands.json",
          R"([{"directory": ".", "file": "../src/a.cu",
               "command": "nvcc -DFROM_A -c ../src/a.cu"},
              {"directory": ".", "file": "../src/deep/b.cu",
               "command": "nvcc -DFROM_B -c ../src/deep/b.cu"},
              {"directory": ".", "file": "../src/deep/host.cpp",
               "command": "c++ -DFROM_HOST -c ../src/deep/host.cpp"}])");
  auto Own = discoverCompileFlags(P.path("src/a.cu"));
  ASSERT_TRUE(bool(Own)) << llvm::toString(Own.takeError());
  EXPECT_TRUE(has(Own->Args, "-DFROM_A"));
  EXPECT_EQ(Own->InferredFrom, "");
  auto New = discoverCompileFlags(P.path("src/deep/new.cu"));
  ASSERT_TRUE(bool(New)) << llvm::toString(New.takeError());
  EXPECT_TRUE(has(New->Args, "-DFROM_B"));
  EXPECT_EQ(New->InferredFrom, P.path("src/deep/b.cu"));
  EXPECT_EQ(New->Database, P.path("build/compile_commands.json"));
}

TEST(CompileFlagsTest, OptionsFilesAreExpanded) {
  // CMake's Makefile generator puts the includes in a response file that
  // nvcc reads with --options-file; the borrowing of a neighbour's flags
  // must see them too.
  TempProject P;
  P.write("build/CMakeFiles/app.dir/includes_CUDA.rsp",
          "-I\"" + P.path("inc dir") + "\" -DFROM_RSP=1 @nested.rsp\n");
  P.write("build/nested.rsp", "-DNESTED");
  P.write("build/compile_commands.json",
          R"([{"directory": ".", "file": "../src/a.cu",
               "command": "nvcc --options-file CMakeFiles/app.dir/includes_CUDA.rsp -optf=missing.rsp -c ../src/a.cu"}])");
  for (const char *File : {"src/a.cu", "src/new.cu"}) {
    auto F = discoverCompileFlags(P.path(File));
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    EXPECT_TRUE(has(F->Args, "-I" + P.path("inc dir"))) << File;
    EXPECT_TRUE(has(F->Args, "-DFROM_RSP=1")) << File;
    EXPECT_TRUE(has(F->Args, "-DNESTED")) << File;
  }
  // Given directly, with its note; an unreadable one is dropped with a
  // reason like any flag clang does not know.
  TranslatedFlags T =
      translateCompileCommand({"nvcc", "@" + P.path("build/nested.rsp"),
                               "-optf", "missing.rsp", "-c", "k.cu"},
                              P.path("build"));
  EXPECT_TRUE(has(T.Args, "-DNESTED"));
  EXPECT_TRUE(anyStartsWith(T.Translated,
                            "@" + P.path("build/nested.rsp") + " -> -DNESTED"));
  EXPECT_TRUE(anyStartsWith(T.Dropped, "-optf"));
}

TEST(CompileFlagsTest, NoDatabaseMeansDefaultFlags) {
  TempProject P;
  auto F = discoverCompileFlags(P.path("src/k.cu"));
  ASSERT_TRUE(bool(F));
  // (A database further up, outside the temporary directory, may exist.)
  if (F->Database.empty())
    EXPECT_FALSE(F->Note.empty());
}

TEST(CudaToolchainTest, ValidatesArch) {
  EXPECT_TRUE(isValidGpuArch("sm_90"));
  EXPECT_TRUE(isValidGpuArch("sm_90a"));
  EXPECT_TRUE(isValidGpuArch("sm_100"));
  EXPECT_FALSE(isValidGpuArch("compute_90"));
  EXPECT_FALSE(isValidGpuArch("sm90"));
  ToolchainOptions O;
  O.GpuArch = "gfx90a";
  auto T = discoverToolchain(O);
  ASSERT_FALSE(bool(T));
  EXPECT_NE(llvm::toString(T.takeError()).find("gfx90a"), std::string::npos);
}

TEST(CudaToolchainTest, ExplicitMissingCudaPathIsAnError) {
  ToolchainOptions O;
  O.CudaPath = "/nonexistent/cuda";
  auto T = discoverToolchain(O);
  ASSERT_FALSE(bool(T));
  EXPECT_NE(llvm::toString(T.takeError()).find("--cuda-path"),
            std::string::npos);
}

} // namespace

namespace {
TEST(CompileFlagsTest, CompilerLaunchersAreLeftOut) {
  // Newer CMake writes a target's compiler launcher into the database.
  TranslatedFlags F = translateCompileCommand(
      {"/opt/co/bin/clang-optiml", "launch", "-p", "/b", "--gpu=NVIDIA H200",
       "--", "/usr/local/cuda/bin/nvcc", "-DX=1", "-c", "a.cu"},
      "/b");
  ASSERT_FALSE(F.Original.empty());
  EXPECT_EQ(F.Original.front(), "/usr/local/cuda/bin/nvcc");
  EXPECT_TRUE(has(F.Args, "-DX=1"));
  EXPECT_FALSE(has(F.Args, "-p"));
  TranslatedFlags C = translateCompileCommand(
      {"ccache", "/usr/local/cuda/bin/nvcc", "-DY=2", "-c", "a.cu"}, "/b");
  EXPECT_EQ(C.Original.front(), "/usr/local/cuda/bin/nvcc");
  EXPECT_TRUE(has(C.Args, "-DY=2"));
}
} // namespace
