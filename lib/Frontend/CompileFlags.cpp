//===- CompileFlags.cpp - nvcc and clang compile commands -> clang flags --===//

#include "optiml/Frontend/CompileFlags.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/StringSaver.h"

using namespace llvm;

namespace optiml {

namespace {

/// nvcc flags that take a separate value, and whose value we do not need.
bool isDroppedWithValue(StringRef F) {
  static const char *const Names[] = {"-o",
                                      "--output-file",
                                      "-ccbin",
                                      "--compiler-bindir",
                                      "-Xptxas",
                                      "--ptxas-options",
                                      "-Xnvlink",
                                      "--nvlink-options",
                                      "-Xlinker",
                                      "--linker-options",
                                      "-Xarchive",
                                      "--archive-options",
                                      "-code",
                                      "--gpu-code",
                                      "-t",
                                      "--threads",
                                      "-MF",
                                      "-MT",
                                      "-MQ",
                                      "-odir",
                                      "--output-directory",
                                      "-L",
                                      "-l",
                                      "-maxrregcount",
                                      "--maxrregcount",
                                      "--diag-suppress",
                                      "--diag-warn",
                                      "--diag-error",
                                      "-Xfatbin",
                                      "--fatbin-options",
                                      "-cudart",
                                      "--cudart",
                                      "-split-compile",
                                      "--split-compile",
                                      "--resource-usage-file",
                                      "--cuda-path",
                                      "-arch-list",
                                      "--list-gpu-arch"};
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
      // Only inputs follow "--" (clang's interpolating database puts the
      // file there).
      if (A == "--")
        break;
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
        A == "-dlink" || A == "--device-link" || A == "-dw" || A == "-keep" ||
        A == "--keep" || A.starts_with("-t=")) {
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
        drop(From, "clang-optiml parses for one architecture, " + *Out.GpuArch);
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

namespace {

/// The file named by an options-file argument at \p I ("--options-file F",
/// "--options-file=F", "-optf F", "-optf=F" as nvcc spells them, "@F" as
/// every compiler driver does); \p Used is how many arguments it takes.
std::optional<StringRef> optionsFileAt(ArrayRef<std::string> Argv, size_t I,
                                       size_t &Used) {
  StringRef A = Argv[I];
  Used = 1;
  if (A.size() > 1 && A.front() == '@')
    return A.drop_front();
  for (StringRef F : {"--options-file", "-optf"}) {
    if (A == F && I + 1 < Argv.size()) {
      Used = 2;
      return StringRef(Argv[I + 1]);
    }
    if (A.starts_with(F) && A.drop_front(F.size()).starts_with("="))
      return A.drop_front(F.size() + 1);
  }
  return std::nullopt;
}

/// \p Argv with its options files replaced by their contents, read from
/// \p Directory when relative and split as the compilers split them (GNU
/// quoting: CMake writes -I"/path" into them), nested ones too. The build
/// writes includes and defines there (CMake's includes_CUDA.rsp with the
/// Makefile generator), so dropping them would lose what the compiler sees.
/// A file that cannot be read is left as it is (and then dropped with a
/// reason, like any argument clang does not know).
std::vector<std::string> expandOptionsFiles(ArrayRef<std::string> Argv,
                                            StringRef Directory,
                                            std::vector<std::string> &Notes,
                                            unsigned Depth = 0) {
  std::vector<std::string> Out;
  for (size_t I = 0; I < Argv.size(); ++I) {
    if (Argv[I] == "--") { // only inputs follow
      Out.insert(Out.end(), Argv.begin() + I, Argv.end());
      break;
    }
    size_t Used = 1;
    std::optional<StringRef> File =
        I == 0 ? std::nullopt : optionsFileAt(Argv, I, Used);
    if (!File) {
      Out.push_back(Argv[I]);
      continue;
    }
    SmallString<256> Path(*File);
    if (sys::path::is_relative(Path) && !Directory.empty())
      sys::path::make_absolute(Directory, Path);
    auto Buf = Depth < 8 ? MemoryBuffer::getFile(Path) : nullptr;
    if (!Buf) {
      Out.insert(Out.end(), Argv.begin() + I, Argv.begin() + I + Used);
      I += Used - 1;
      continue;
    }
    BumpPtrAllocator Alloc;
    StringSaver Saver(Alloc);
    SmallVector<const char *, 16> Toks;
    cl::TokenizeGNUCommandLine((*Buf)->getBuffer(), Saver, Toks);
    std::vector<std::string> Inner(Toks.begin(), Toks.end());
    Inner.insert(Inner.begin(), Argv.front()); // run() skips argv[0]
    std::vector<std::string> Expanded =
        expandOptionsFiles(Inner, Directory, Notes, Depth + 1);
    Notes.push_back(join(ArrayRef(Argv).slice(I, Used), " ") + " -> " +
                    join(ArrayRef(Expanded).drop_front(), " "));
    Out.insert(Out.end(), Expanded.begin() + 1, Expanded.end());
    I += Used - 1;
  }
  return Out;
}

} // namespace

/// The compiler's command when \p Argv starts with a compiler launcher
/// (CMake's <LANG>_COMPILER_LAUNCHER, which newer CMake versions write into
/// the compile database): `clang-optiml launch [options] -- nvcc ...`,
/// `ccache nvcc ...`, `sccache nvcc ...`. What the compiler sees is what
/// follows the launcher.
static std::vector<std::string>
withoutLauncher(ArrayRef<std::string> Argv, std::vector<std::string> &Notes) {
  std::vector<std::string> Out(Argv.begin(), Argv.end());
  for (bool Again = true; Again && !Out.empty();) {
    Again = false;
    StringRef Name = sys::path::filename(Out.front());
    if (Name == "clang-optiml" && Out.size() > 1 && Out[1] == "launch") {
      auto Dash = std::find(Out.begin(), Out.end(), "--");
      if (Dash == Out.end() || Dash + 1 == Out.end())
        break;
      Notes.push_back("compiler launcher '" + Out.front() +
                      " launch ... --' left out");
      Out.erase(Out.begin(), Dash + 1);
      Again = true;
    } else if ((Name == "ccache" || Name == "sccache") && Out.size() > 1 &&
               !StringRef(Out[1]).starts_with("-")) {
      Notes.push_back("compiler launcher '" + Out.front() + "' left out");
      Out.erase(Out.begin());
      Again = true;
    }
  }
  return Out;
}

TranslatedFlags translateCompileCommand(ArrayRef<std::string> ArgvIn,
                                        StringRef Directory) {
  std::vector<std::string> Notes;
  std::vector<std::string> Argv = withoutLauncher(ArgvIn, Notes);
  std::vector<std::string> Expanded =
      expandOptionsFiles(Argv, Directory, Notes);
  TranslatedFlags F = Translator(Directory).run(Expanded);
  F.Translated.insert(F.Translated.begin(), Notes.begin(), Notes.end());
  return F;
}

namespace {

/// A compile database's entries with absolute, normalized paths (a relative
/// "directory" is taken against the database's own directory, as the file
/// that holds it is the only anchor it has).
class EntryDatabase : public clang::tooling::CompilationDatabase {
public:
  explicit EntryDatabase(std::vector<clang::tooling::CompileCommand> Cmds)
      : Cmds(std::move(Cmds)) {}

  std::vector<clang::tooling::CompileCommand>
  getCompileCommands(StringRef FilePath) const override {
    std::vector<clang::tooling::CompileCommand> Out;
    for (const auto &C : Cmds)
      if (C.Filename == FilePath)
        Out.push_back(C);
    return Out;
  }
  std::vector<std::string> getAllFiles() const override {
    std::vector<std::string> Out;
    for (const auto &C : Cmds)
      Out.push_back(C.Filename);
    return Out;
  }
  std::vector<clang::tooling::CompileCommand>
  getAllCompileCommands() const override {
    return Cmds;
  }

private:
  std::vector<clang::tooling::CompileCommand> Cmds;
};

std::string normalized(StringRef Path, StringRef Base) {
  SmallString<256> Abs(Path);
  if (sys::path::is_relative(Abs)) {
    if (!Base.empty())
      sys::path::make_absolute(Base, Abs);
    else
      (void)sys::fs::make_absolute(Abs);
  }
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  return std::string(Abs);
}

/// Whether an entry compiles CUDA: a .cu/.cuh file, nvcc, or `-x cuda`.
bool isCudaEntry(const clang::tooling::CompileCommand &C) {
  StringRef Ext = sys::path::extension(C.Filename);
  if (Ext == ".cu" || Ext == ".cuh")
    return true;
  if (C.CommandLine.empty())
    return false;
  if (sys::path::filename(C.CommandLine.front()).starts_with("nvcc"))
    return true;
  for (size_t I = 0; I + 1 < C.CommandLine.size(); ++I)
    if (C.CommandLine[I] == "-x" &&
        (C.CommandLine[I + 1] == "cuda" || C.CommandLine[I + 1] == "cu"))
      return true;
  return is_contained(C.CommandLine, "-xcuda");
}

Expected<std::vector<clang::tooling::CompileCommand>>
loadEntries(StringRef DbPath) {
  sys::fs::file_status Status;
  if (std::error_code EC = sys::fs::status(DbPath, Status))
    return createStringError(EC, "cannot read compilation database '%s': %s",
                             DbPath.str().c_str(), EC.message().c_str());
  if (!sys::fs::is_regular_file(Status))
    return createStringError(inconvertibleErrorCode(),
                             "cannot read compilation database '%s': not a "
                             "regular file",
                             DbPath.str().c_str());
  std::string Message;
  auto Db = clang::tooling::JSONCompilationDatabase::loadFromFile(
      DbPath, Message, clang::tooling::JSONCommandLineSyntax::AutoDetect);
  if (!Db)
    return createStringError(inconvertibleErrorCode(),
                             "cannot read compilation database '%s': %s",
                             DbPath.str().c_str(), Message.c_str());
  std::string DbDir = normalized(sys::path::parent_path(DbPath), "");
  std::vector<clang::tooling::CompileCommand> Cmds;
  for (clang::tooling::CompileCommand C : Db->getAllCompileCommands()) {
    if (C.CommandLine.empty() || C.Filename.empty())
      continue; // nothing to borrow from an entry without a command
    C.Directory = normalized(C.Directory, DbDir);
    C.Filename = normalized(C.Filename, C.Directory);
    // Expanded before a neighbour's command is borrowed: the borrowing
    // parses the command with clang's option table, which does not know
    // nvcc's --options-file and would drop the includes inside it.
    std::vector<std::string> Unused;
    C.CommandLine = expandOptionsFiles(C.CommandLine, C.Directory, Unused);
    Cmds.push_back(std::move(C));
  }
  return Cmds;
}

/// The entry for \p Abs in \p Cmds, else its closest CUDA neighbour's
/// command transferred to it; nullopt if the database has no CUDA entry.
std::optional<clang::tooling::CompileCommand>
commandFor(std::vector<clang::tooling::CompileCommand> Cmds, StringRef Abs) {
  for (const auto &C : Cmds)
    if (C.Filename == Abs)
      return C;
  // Borrowing a C++ file's flags for a CUDA file would bring host-only
  // flags (and, for the tool's own build tree, LLVM's): only CUDA entries
  // are neighbours.
  llvm::erase_if(Cmds, [](const clang::tooling::CompileCommand &C) {
    return !isCudaEntry(C);
  });
  if (Cmds.empty())
    return std::nullopt;
  auto Interp = clang::tooling::inferMissingCompileCommands(
      std::make_unique<EntryDatabase>(std::move(Cmds)));
  std::vector<clang::tooling::CompileCommand> Found =
      Interp->getCompileCommands(Abs);
  if (Found.empty())
    return std::nullopt;
  return Found.front();
}

TranslatedFlags translateEntry(const clang::tooling::CompileCommand &C,
                               StringRef DbPath) {
  TranslatedFlags F = translateCompileCommand(C.CommandLine, C.Directory);
  F.Database = DbPath.str();
  F.Directory = C.Directory;
  // The interpolating database says "inferred from <file>".
  StringRef H = C.Heuristic;
  if (H.consume_front("inferred from "))
    F.InferredFrom = H.str();
  else if (!H.empty())
    F.InferredFrom = H.str();
  return F;
}

std::string databasePath(StringRef BuildDir) {
  SmallString<256> DbPath(BuildDir);
  if (sys::path::filename(BuildDir) != "compile_commands.json")
    sys::path::append(DbPath, "compile_commands.json");
  return std::string(DbPath);
}

} // namespace

Expected<TranslatedFlags> loadCompileFlags(StringRef BuildDir, StringRef File) {
  std::string DbPath = databasePath(BuildDir);
  if (!sys::fs::exists(DbPath))
    return createStringError(
        inconvertibleErrorCode(),
        "no compilation database at '%s'; -p wants the build directory that "
        "holds compile_commands.json (CMake writes it with "
        "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON)",
        DbPath.c_str());
  auto Cmds = loadEntries(DbPath);
  if (!Cmds)
    return Cmds.takeError();
  std::string Abs = normalized(File, "");
  auto C = commandFor(std::move(*Cmds), Abs);
  if (!C)
    return createStringError(inconvertibleErrorCode(),
                             "'%s' has no entry in '%s', nor a CUDA file to "
                             "borrow flags from; run without -p to parse it "
                             "with default flags",
                             File.str().c_str(), DbPath.c_str());
  return translateEntry(*C, DbPath);
}

std::string findCompilationDatabase(StringRef File) {
  std::string Abs = normalized(File, "");
  for (StringRef Dir = sys::path::parent_path(Abs); !Dir.empty();
       Dir = sys::path::parent_path(Dir)) {
    for (StringRef Sub : {"", "build"}) {
      SmallString<256> P(Dir);
      sys::path::append(P, Sub, "compile_commands.json");
      if (sys::fs::exists(P))
        return std::string(P);
    }
  }
  return "";
}

Expected<TranslatedFlags> discoverCompileFlags(StringRef File) {
  std::string DbPath = findCompilationDatabase(File);
  if (DbPath.empty()) {
    TranslatedFlags F;
    F.Note =
        "no compile_commands.json above '" + File.str() + "'; default flags";
    return F;
  }
  auto Cmds = loadEntries(DbPath);
  if (!Cmds)
    return createStringError(
        inconvertibleErrorCode(),
        "%s (found above '%s'); fix or remove it, or name a build directory "
        "with -p",
        toString(Cmds.takeError()).c_str(), File.str().c_str());
  auto C = commandFor(std::move(*Cmds), normalized(File, ""));
  if (!C) {
    TranslatedFlags F;
    F.Note = "compilation database '" + DbPath +
             "' has no CUDA entry; default flags";
    return F;
  }
  return translateEntry(*C, DbPath);
}

} // namespace optiml
