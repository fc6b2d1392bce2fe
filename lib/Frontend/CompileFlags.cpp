//===- CompileFlags.cpp - nvcc and clang compile commands -> clang flags --===//

#include "optiml/Frontend/CompileFlags.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace optiml {

namespace {

/// nvcc flags that take a separate value, and whose value we do not need.
bool isDroppedWithValue(StringRef F) {
  static const char *const Names[] = {
      "-o",          "--output-file",   "-ccbin",        "--compiler-bindir",
      "-Xptxas",     "--ptxas-options", "-Xnvlink",      "--nvlink-options",
      "-Xlinker",    "--linker-options", "-Xarchive",    "--archive-options",
      "-code",       "--gpu-code",      "-t",            "--threads",
      "-MF",         "-MT",             "-MQ",           "-odir",
      "--output-directory", "-L",       "-l",            "-maxrregcount",
      "--maxrregcount", "--diag-suppress", "--diag-warn", "--diag-error",
      "-Xfatbin",    "--fatbin-options", "-cudart",      "--cudart",
      "-split-compile", "--split-compile", "--resource-usage-file",
      "--cuda-path", "-arch-list", "--list-gpu-arch"};
  for (const char *N : Names)
    if (F == N)
      return true;
  return false;
}

/// "sm_90" from "compute_90", "sm_90", "[sm_90,compute_90]" or "sm_90a".
std::optional<std::string> archFrom(StringRef V) {
  V = V.trim("[]");
  SmallVector<StringRef, 4> Parts;
  V.split(Parts, ',');
  std::optional<std::string> Compute;
  for (StringRef P : Parts) {
    P = P.trim().trim("[]");
    if (P.starts_with("sm_"))
      return P.str();
    if (P.starts_with("compute_") && !Compute)
      Compute = ("sm_" + P.drop_front(8)).str();
  }
  return Compute;
}

class Translator {
public:
  Translator(StringRef Directory) : Directory(Directory) {}

  TranslatedFlags run(ArrayRef<std::string> Argv) {
    Out.Original.assign(Argv.begin(), Argv.end());
    for (size_t I = 1; I < Argv.size(); ++I) {
      StringRef A = Argv[I];
      auto Next = [&]() -> std::optional<StringRef> {
        if (I + 1 < Argv.size())
          return StringRef(Argv[++I]);
        return std::nullopt;
      };
      handle(A, Next);
    }
    return std::move(Out);
  }

private:
  template <typename NextFn> void handle(StringRef A, NextFn &Next) {
    if (!A.starts_with("-")) // the source file and stray positionals
      return;

    // Paths: -I, -isystem, -iquote, -include, nvcc's --include-path.
    for (StringRef P : {"-isystem", "-iquote", "-idirafter", "-include"}) {
      if (A == P) {
        if (auto V = Next())
          keepPath(P, *V);
        return;
      }
      if (A.starts_with(P) && !A.starts_with("-includes")) {
        keepPath(P, A.drop_front(P.size()));
        return;
      }
    }
    if (A == "-I" || A == "--include-path") {
      if (auto V = Next())
        keepPath("-I", *V);
      return;
    }
    if (A.consume_front("--include-path=") || A.consume_front("-I")) {
      keepPath("-I", A);
      return;
    }

    // Macros.
    if (A == "-D" || A == "--define-macro" || A == "-U" ||
        A == "--undefine-macro") {
      bool Undef = A == "-U" || A == "--undefine-macro";
      if (auto V = Next())
        keep((Undef ? "-U" : "-D") + V->str());
      return;
    }
    if (A.consume_front("--define-macro=")) {
      keep("-D" + A.str());
      return;
    }
    if (A.consume_front("--undefine-macro=")) {
      keep("-U" + A.str());
      return;
    }
    if (A.starts_with("-D") || A.starts_with("-U")) {
      keep(A.str());
      return;
    }

    // Language standard: -std=c++17, --std=c++17, nvcc's "-std c++17".
    if (A == "-std" || A == "--std") {
      if (auto V = Next())
        translate(A.str() + " " + V->str(), "-std=" + V->str());
      return;
    }
    if (A.consume_front("--std=")) {
      translate("--std=" + A.str(), "-std=" + A.str());
      return;
    }
    if (A.starts_with("-std=")) {
      keep(A.str());
      return;
    }

    // GPU architecture.
    if (A == "-arch" || A == "--gpu-architecture") {
      if (auto V = Next())
        arch(A.str() + " " + V->str(), *V);
      return;
    }
    for (StringRef P : {"-arch=", "--gpu-architecture="})
      if (A.starts_with(P)) {
        arch(A.str(), A.drop_front(P.size()));
        return;
      }
    if (A == "-gencode" || A == "--generate-code") {
      if (auto V = Next())
        gencode(A.str() + " " + V->str(), *V);
      return;
    }
    for (StringRef P : {"-gencode=", "--generate-code="})
      if (A.starts_with(P)) {
        gencode(A.str(), A.drop_front(P.size()));
        return;
      }
    if (A.starts_with("--cuda-gpu-arch=") || A.starts_with("--offload-arch=")) {
      arch(A.str(), A.split('=').second);
      return;
    }

    // Relocatable device code.
    if (A == "-rdc=true" || A == "--relocatable-device-code=true" ||
        A == "-dc" || A == "--device-c" || A == "-fgpu-rdc") {
      translate(A.str(), "-fgpu-rdc");
      return;
    }
    if (A == "-rdc" || A == "--relocatable-device-code") {
      if (auto V = Next()) {
        if (*V == "true")
          translate(A.str() + " true", "-fgpu-rdc");
        else
          drop(A.str() + " " + V->str(), "the default");
      }
      return;
    }

    // Host compiler flags: keep those that affect parsing.
    if (A == "-Xcompiler" || A == "--compiler-options") {
      if (auto V = Next())
        hostFlags(*V);
      return;
    }
    for (StringRef P : {"-Xcompiler=", "--compiler-options="})
      if (A.starts_with(P)) {
        hostFlags(A.drop_front(P.size()));
        return;
      }

    if (A == "--use_fast_math" || A == "-use_fast_math" ||
        A == "--use-fast-math") {
      translate(A.str(), "-ffast-math");
      return;
    }
    if (A == "--default-stream" || A == "-default-stream") {
      if (auto V = Next()) {
        if (*V == "per-thread")
          translate(A.str() + " per-thread", "-fgpu-default-stream=per-thread");
        else
          drop(A.str() + " " + V->str(), "the default for clang");
      }
      return;
    }
    if (A == "--expt-relaxed-constexpr" || A == "-expt-relaxed-constexpr" ||
        A == "--expt-extended-lambda" || A == "-expt-extended-lambda" ||
        A == "--extended-lambda" || A == "-extended-lambda") {
      drop(A.str(), "clang allows this by default");
      return;
    }
    if (A == "-x" || A == "--x") {
      if (auto V = Next())
        drop(A.str() + " " + V->str(), "the language is always CUDA here");
      return;
    }
    if (A == "--cuda-host-only" || A == "--cuda-device-only" ||
        A == "-fsyntax-only" || A.starts_with("--cuda-path=") ||
        A.starts_with("-resource-dir")) {
      drop(A.str(), "set by clang-optiml");
      return;
    }
    if (isDroppedWithValue(A)) {
      if (auto V = Next())
        drop(A.str() + " " + V->str(), "not used for parsing");
      return;
    }
    if (A == "-c" || A == "-E" || A == "-S" || A == "-M" || A == "-MD" ||
        A == "-MMD" || A == "-MP" || A == "-G" || A == "-g" ||
        A == "-lineinfo" || A == "--generate-line-info" ||
        A == "--device-debug" || A == "-cubin" || A == "-ptx" ||
        A == "-fatbin" || A == "-shared" || A == "-lib" || A == "-link" ||
        A.starts_with("-o") || A.starts_with("-L") || A.starts_with("-l") ||
        A.starts_with("-Wl,") || A.starts_with("-code=") ||
        A.starts_with("--gpu-code=") || A.starts_with("-Xptxas=") ||
        A.starts_with("--ptxas-options=") || A.starts_with("-maxrregcount") ||
        A.starts_with("--maxrregcount") || A.starts_with("--diag-") ||
        A.starts_with("-MF") || A.starts_with("-MT") ||
        A.starts_with("--threads") || A.starts_with("-Wno-deprecated-gpu") ||
        A == "--forward-unknown-to-host-compiler" ||
        A == "-forward-unknown-to-host-compiler" || A.starts_with("-ccbin=") ||
        A.starts_with("--compiler-bindir=") || A.starts_with("-Xnvlink=") ||
        A == "-dlink" || A == "--device-link" || A == "-dw" ||
        A == "-keep" || A == "--keep" || A.starts_with("-t=")) {
      drop(A.str(), "not used for parsing");
      return;
    }
    if (A.starts_with("-O") || A.starts_with("-W") || A.starts_with("-f") ||
        A == "-m64" || A == "-pthread" || A == "-nocudainc" ||
        A == "-nocudalib" || A == "-nogpulib" || A == "-nogpuinc") {
      keep(A.str());
      return;
    }
    drop(A.str(), "not understood by clang");
  }

  void keep(std::string A) { Out.Args.push_back(std::move(A)); }

  void keepPath(StringRef Flag, StringRef Path) {
    SmallString<256> Abs(Path);
    if (Flag != "-include" || sys::path::is_relative(Abs)) {
      if (sys::path::is_relative(Abs) && !Directory.empty())
        sys::path::make_absolute(Directory, Abs);
    }
    sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
    if (Flag == "-I") {
      Out.Args.push_back(("-I" + Abs).str());
      return;
    }
    Out.Args.push_back(Flag.str());
    Out.Args.push_back(std::string(Abs));
  }

  void translate(std::string From, std::string To) {
    Out.Translated.push_back(From + " -> " + To);
    Out.Args.push_back(std::move(To));
  }

  void drop(std::string Flag, StringRef Why) {
    Out.Dropped.push_back(Flag + " (" + Why.str() + ")");
  }

  void arch(std::string From, StringRef Value) {
    std::optional<std::string> Sm = archFrom(Value);
    if (!Sm) {
      drop(From, "no single GPU architecture; use --cuda-gpu-arch");
      return;
    }
    if (Out.GpuArch) {
      if (*Out.GpuArch != *Sm)
        drop(From, "clang-optiml parses for one architecture, " +
                       *Out.GpuArch);
      return;
    }
    Out.GpuArch = *Sm;
    Out.Translated.push_back(From + " -> --cuda-gpu-arch=" + *Sm);
  }

  void gencode(std::string From, StringRef Value) {
    // arch=compute_90,code=sm_90 or code=[sm_90,compute_90]
    StringRef Code, ArchV;
    size_t C = Value.find("code=");
    if (C != StringRef::npos)
      Code = Value.substr(C + 5);
    size_t Ar = Value.find("arch=");
    if (Ar != StringRef::npos)
      ArchV = Value.substr(Ar + 5).split(',').first;
    std::optional<std::string> Sm = archFrom(Code);
    if (!Sm)
      Sm = archFrom(ArchV);
    if (!Sm) {
      drop(From, "no GPU architecture in it");
      return;
    }
    arch(From, *Sm);
  }

  void hostFlags(StringRef List) {
    SmallVector<StringRef, 8> Parts;
    List.split(Parts, ',', -1, false);
    for (StringRef P : Parts) {
      P = P.trim().trim("\"'");
      if (P.starts_with("-D") || P.starts_with("-U") || P.starts_with("-I") ||
          P.starts_with("-std=") || P == "-fopenmp" || P == "-pthread")
        translate(("-Xcompiler " + P).str(),
                  P.starts_with("-I") ? absInclude(P) : P.str());
      else
        drop(("-Xcompiler " + P).str(), "host compiler flag");
    }
  }

  std::string absInclude(StringRef P) {
    SmallString<256> Abs(P.drop_front(2));
    if (sys::path::is_relative(Abs) && !Directory.empty())
      sys::path::make_absolute(Directory, Abs);
    return ("-I" + Abs).str();
  }

  std::string Directory;
  TranslatedFlags Out;
};

} // namespace

TranslatedFlags translateCompileCommand(ArrayRef<std::string> Argv,
                                        StringRef Directory) {
  return Translator(Directory).run(Argv);
}

Expected<TranslatedFlags> loadCompileFlags(StringRef BuildDir,
                                           StringRef File) {
  SmallString<256> DbPath(BuildDir);
  if (sys::path::filename(BuildDir) != "compile_commands.json")
    sys::path::append(DbPath, "compile_commands.json");
  if (!sys::fs::exists(DbPath))
    return createStringError(
        inconvertibleErrorCode(),
        "no compilation database at '%s'; -p wants the build directory that "
        "holds compile_commands.json (CMake writes it with "
        "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON)",
        DbPath.c_str());
  std::string Message;
  auto Db = clang::tooling::JSONCompilationDatabase::loadFromFile(
      DbPath, Message, clang::tooling::JSONCommandLineSyntax::AutoDetect);
  if (!Db)
    return createStringError(inconvertibleErrorCode(),
                             "cannot read compilation database '%s': %s",
                             DbPath.c_str(), Message.c_str());
  SmallString<256> Abs(File);
  sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, true);
  std::vector<clang::tooling::CompileCommand> Cmds =
      Db->getCompileCommands(Abs);
  if (Cmds.empty())
    return createStringError(inconvertibleErrorCode(),
                             "'%s' has no entry in '%s'; run without -p to "
                             "parse it with default flags",
                             File.str().c_str(), DbPath.c_str());
  return translateCompileCommand(Cmds.front().CommandLine,
                                 Cmds.front().Directory);
}

} // namespace optiml
