#include "optiml/Eval/BuildFlags.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

using namespace optiml;
using Strings = std::vector<std::string>;

namespace {

bool hasNote(const std::vector<std::string> &Notes, llvm::StringRef Part) {
  for (const std::string &N : Notes)
    if (llvm::StringRef(N).contains(Part))
      return true;
  return false;
}

// The preprocessor and language flags reach nvcc in nvcc's spelling,
// whichever of clang's spellings they were given in; paths made absolute.
TEST(ClangArgsForNvccTest, EverySpellingOfTheFlagsNvccTakes) {
  auto L = clangArgsForNvcc({"-Iinc", "-I", "../up", "--include-directory=d",
                             "-I/abs", "-isystem", "sys", "-isystemsys2",
                             "-DN=4096", "-D", "M", "--define-macro=K=1", "-UX",
                             "-U", "Y", "-std=c++17"},
                            "/home/u/proj");
  Strings Want = {"-I/home/u/proj/inc",
                  "-I/home/u/up",
                  "-I/home/u/proj/d",
                  "-I/abs",
                  "-isystem",
                  "/home/u/proj/sys",
                  "-isystem",
                  "/home/u/proj/sys2",
                  "-DN=4096",
                  "-DM",
                  "-DK=1",
                  "-UX",
                  "-UY",
                  "-std=c++17"};
  EXPECT_EQ(L.Flags, Want);
  EXPECT_TRUE(hasNote(L.Notes, "-Iinc -> -I/home/u/proj/inc"))
      << llvm::join(L.Notes, "\n");
}

TEST(ClangArgsForNvccTest, DialectsNvccKnows) {
  EXPECT_EQ(clangArgsForNvcc({"-std=gnu++17"}, "/p").Flags,
            Strings{"-std=c++17"});
  EXPECT_EQ(clangArgsForNvcc({"--std=c++2a"}, "/p").Flags,
            Strings{"-std=c++20"});
  auto L = clangArgsForNvcc({"-std=c++23"}, "/p");
  EXPECT_TRUE(L.Flags.empty());
  EXPECT_TRUE(hasNote(L.Notes, "-std=c++23: not passed (nvcc knows"))
      << llvm::join(L.Notes, "\n");
}

// -include: a file beside the working directory is named absolutely, a name
// found only on the include path is left to it.
TEST(ClangArgsForNvccTest, IncludeFileOnlyIfItIsThere) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("buildflags", Dir));
  llvm::SmallString<128> H(Dir);
  llvm::sys::path::append(H, "pre.h");
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(H, EC);
    ASSERT_FALSE(EC);
  }
  auto L = clangArgsForNvcc({"-include", "pre.h", "-includeother.h"}, Dir);
  Strings Want = {"-include", std::string(H), "-include", "other.h"};
  EXPECT_EQ(L.Flags, Want);
  llvm::sys::fs::remove_directories(Dir);
}

TEST(ClangArgsForNvccTest, WhatNvccWouldNotUnderstandIsLeftOutAndSaid) {
  auto L = clangArgsForNvcc({"-O2", "-x", "cuda", "--cuda-gpu-arch=sm_80",
                             "-iquote", "q", "-idirafter", "a", "-Wall",
                             "-DPAIR=1,2", "-I=inc", "--no-such-flag", "-DOK"},
                            "/p");
  EXPECT_EQ(L.Flags, Strings{"-DOK"});
  EXPECT_TRUE(hasNote(L.Notes, "-O2: not passed")) << llvm::join(L.Notes, "\n");
  EXPECT_TRUE(hasNote(L.Notes, "--cuda-gpu-arch=sm_80: not passed"))
      << llvm::join(L.Notes, "\n");
  EXPECT_TRUE(hasNote(L.Notes, "-iquote q: not passed (nvcc has no such"))
      << llvm::join(L.Notes, "\n");
  EXPECT_TRUE(hasNote(L.Notes, "-idirafter a: not passed"))
      << llvm::join(L.Notes, "\n");
  EXPECT_TRUE(hasNote(L.Notes, "-DPAIR=1,2: not passed (nvcc splits"))
      << llvm::join(L.Notes, "\n");
  EXPECT_TRUE(hasNote(L.Notes, "-I=inc: not passed (relative to a sysroot"))
      << llvm::join(L.Notes, "\n");
  EXPECT_TRUE(hasNote(L.Notes, "--no-such-flag: not passed (not a clang"))
      << llvm::join(L.Notes, "\n");
}

// A compile command's source file and outputs are not flags.
TEST(ClangArgsForNvccTest, CompileCommandInputsAndOutputs) {
  auto L = clangArgsForNvcc({"-c", "src/k.cu", "-o", "k.o", "-Iinc"}, "/b");
  EXPECT_EQ(L.Flags, Strings{"-I/b/inc"});
}

TEST(ResolveNvccPathsTest, EveryFormOfNvccsPathOptions) {
  auto L = resolveNvccPaths({"-I..",
                             "-I",
                             "inc",
                             "-I=inc2",
                             "--include-path=i3",
                             "--include-path",
                             "i4",
                             "-isystem",
                             "sys",
                             "-isystem=sys2",
                             "--system-include=s3",
                             "-Llib",
                             "-L",
                             "lib2",
                             "--library-path=l3",
                             "-optf",
                             "opts.txt",
                             "-ccbin",
                             "g++-12",
                             "-ccbin=tools/gcc",
                             "-Ia,/abs,b",
                             "-I/abs"},
                            "/home/u/proj");
  Strings Want = {"-I/home/u",
                  "-I",
                  "/home/u/proj/inc",
                  "-I=/home/u/proj/inc2",
                  "--include-path=/home/u/proj/i3",
                  "--include-path",
                  "/home/u/proj/i4",
                  "-isystem",
                  "/home/u/proj/sys",
                  "-isystem=/home/u/proj/sys2",
                  "--system-include=/home/u/proj/s3",
                  "-L/home/u/proj/lib",
                  "-L",
                  "/home/u/proj/lib2",
                  "--library-path=/home/u/proj/l3",
                  "-optf",
                  "/home/u/proj/opts.txt",
                  "-ccbin",
                  "g++-12",
                  "-ccbin=/home/u/proj/tools/gcc",
                  "-I/home/u/proj/a,/abs,/home/u/proj/b",
                  "-I/abs"};
  EXPECT_EQ(L.Flags, Want);
  EXPECT_TRUE(hasNote(L.Notes, "-I.. -> -I/home/u"))
      << llvm::join(L.Notes, "\n");
  EXPECT_TRUE(hasNote(L.Notes, "-I inc -> -I /home/u/proj/inc"))
      << llvm::join(L.Notes, "\n");
}

// -l names a library, the pass-through options' values belong to another
// program, and flags that merely start like a path option are not one.
TEST(ResolveNvccPathsTest, WhatIsNotAPathIsLeftAlone) {
  Strings In = {"-lcublas", "-Xcompiler", "-Iinc", "-Xlinker", "-Llib",
                "-DN=1",    "-lineinfo",  "-arch", "sm_90",    "-O3"};
  auto L = resolveNvccPaths(In, "/p");
  EXPECT_EQ(L.Flags, In);
  EXPECT_TRUE(L.Notes.empty());
}

TEST(ResolveNvccPathsTest, PreIncludeOnlyIfItIsThere) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("buildflags", Dir));
  llvm::SmallString<128> H(Dir);
  llvm::sys::path::append(H, "x.h");
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(H, EC);
    ASSERT_FALSE(EC);
  }
  auto L = resolveNvccPaths({"-include", "x.h", "--pre-include=y.h"}, Dir);
  Strings Want = {"-include", std::string(H), "--pre-include=y.h"};
  EXPECT_EQ(L.Flags, Want);
  llvm::sys::fs::remove_directories(Dir);
}

TEST(NvccCommandFlagsTest, KeepsNvccFlagsDropsOutputsResolvesPaths) {
  auto F =
      nvccCommandFlags({"/usr/local/cuda/bin/nvcc", "-O2", "-arch=sm_80",
                        "-Iinc", "--use_fast_math", "-Xcompiler", "-Ihost",
                        "-c", "src/k.cu", "-o", "k.o", "-MD", "-MF", "k.d"},
                       "/proj/build", "/proj/src/k.cu");
  Strings Want = {
      "-O2",        "-arch=sm_80", "-I/proj/build/inc", "--use_fast_math",
      "-Xcompiler", "-Ihost"};
  EXPECT_EQ(F.Flags, Want);
  // nvcc's outputs in its `=` forms go; an option that merely starts with
  // -o (-optf, -objtemp) stays.
  auto G = nvccCommandFlags({"nvcc", "-o=k.o", "-odir=obj", "-MF=k.d", "-optf",
                             "opts.txt", "-objtemp", "-c", "k.cu"},
                            "/proj/build", "/proj/k.cu");
  Strings WantG = {"-optf", "/proj/build/opts.txt", "-objtemp"};
  EXPECT_EQ(G.Flags, WantG);
}

TEST(ProgramBuildFlagsTest, NvccEntryThenClangArgsThenBuildArgs) {
  TranslatedFlags Db;
  Db.Original = {"nvcc", "-arch=sm_80", "-Iinc", "-c", "k.cu"};
  Db.Directory = "/proj/build";
  Db.Database = "/proj/build/compile_commands.json";
  auto P = programBuildFlags(Db, {"-DN=4", "-Iextra", "-O1"}, {"-I..", "-lm"},
                             "/home/u/w", "/proj/k.cu");
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  EXPECT_EQ(P->Flags, (Strings{"-arch=sm_80", "-I/proj/build/inc"}));
  EXPECT_EQ(P->ExtraFlags,
            (Strings{"-DN=4", "-I/home/u/w/extra", "-I/home/u", "-lm"}));
  EXPECT_EQ(P->WorkDir, "/proj/build");
  EXPECT_TRUE(hasNote(P->Notes, "after --: -O1: not passed"))
      << llvm::join(P->Notes, "\n");
  EXPECT_TRUE(hasNote(P->Notes, "--build-arg: -I.. -> -I/home/u"))
      << llvm::join(P->Notes, "\n");
}

// A clang entry leaves the builder its defaults (-O3, the GPU's arch) and
// adds what it says about the source.
TEST(ProgramBuildFlagsTest, ClangEntryIsTranslated) {
  TranslatedFlags Db;
  Db.Original = {"clang++", "-x",   "cuda",  "--cuda-gpu-arch=sm_90",
                 "-I",      "inc",  "-DN=4", "-std=c++17",
                 "-c",      "k.cu", "-o",    "k.o"};
  Db.Directory = "/b";
  auto P = programBuildFlags(Db, {}, {}, "/w", "/b/k.cu");
  ASSERT_TRUE(bool(P));
  EXPECT_TRUE(P->Flags.empty());
  EXPECT_EQ(P->ExtraFlags, (Strings{"-I/b/inc", "-DN=4", "-std=c++17"}));
  EXPECT_TRUE(P->WorkDir.empty());
}

TEST(ProgramBuildFlagsTest, ShellCharactersAreRefusedNamingTheirOrigin) {
  auto P = programBuildFlags({}, {"-DMSG=a b"}, {}, "/w", "/w/k.cu");
  ASSERT_FALSE(bool(P));
  EXPECT_EQ(llvm::toString(P.takeError()),
            "the argument after -- '-DMSG=a b' contains a space, which the "
            "shell that nvcc runs its steps through would interpret; it is "
            "refused");
  // A working directory nvcc's shell would misread, once a relative path
  // is made absolute against it.
  auto Q = programBuildFlags({}, {}, {"-Iinc"}, "/w/a b", "/w/k.cu");
  ASSERT_FALSE(bool(Q));
  EXPECT_TRUE(llvm::StringRef(llvm::toString(Q.takeError()))
                  .starts_with("--build-arg '-I/w/a b/inc' contains a space"));
}

TEST(RequireMainTest, AsksForTheFileWithMain) {
  EXPECT_FALSE(bool(requireMain("k.cu", true, true, false)));
  EXPECT_FALSE(bool(requireMain("k.cu", false, true, true)));
  EXPECT_EQ(llvm::toString(requireMain("k.cu", false, true, false)),
            "'k.cu' defines kernels but no main(): a whole program is built "
            "and run; if another file #includes this one, give that file "
            "instead; if this one is compiled on its own, add the file with "
            "main() with --source (e.g. --source main.cu)");
  EXPECT_EQ(llvm::toString(requireMain("h.cu", false, false, false)),
            "'h.cu' defines no main(): a whole program is built and run; "
            "give the file with main() (and the program's other files with "
            "--source)");
}

} // namespace

TEST(NvccCommandFlagsTest, LanguageOfACuFileIsNotForcedOnOtherInputs) {
  // CMake writes `-x cu`; a build adds other sources and libraries after
  // it, which must keep their own language. A .cu file needs none.
  auto L = nvccCommandFlags({"/usr/local/cuda/bin/nvcc",
                             "-forward-unknown-to-host-compiler", "-O3", "-x",
                             "cu", "-c", "/p/src/a.cu", "-o", "a.o"},
                            "/p/build", "/p/src/a.cu");
  EXPECT_EQ(L.Flags, (Strings{"-forward-unknown-to-host-compiler", "-O3"}));
  ASSERT_FALSE(L.Notes.empty());
  EXPECT_EQ(L.Notes.front(), "-x cu: not passed (the source is a .cu file; "
                             "the build's other inputs keep their language)");
  // Another extension keeps it: without it nvcc would not compile CUDA.
  auto K =
      nvccCommandFlags({"nvcc", "-x", "cu", "-c", "k.cpp"}, "/p", "/p/k.cpp");
  EXPECT_EQ(K.Flags, (Strings{"-x", "cu"}));
}
