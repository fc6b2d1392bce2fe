//===- LaunchCommand.cpp - clang-optiml launch: tuned variants in a build -===//
//
// `clang-optiml launch [-p BUILD] -- nvcc ARGS...` runs one compile of the
// build (CMake's CMAKE_CUDA_COMPILER_LAUNCHER, or a Makefile's NVCC). When
// the project's database holds a verified variant for exactly this
// translation unit (docs/db.md: every file it reads, nvcc, its flags, the
// GPU), the variant is compiled in the original's place; otherwise the
// command runs as it is. The key is computed the way optimize computed it
// when it recorded the variant: the same parse (the compile database of
// -p) and the same builder flags, so a recorded row and a build agree by
// construction, and any difference makes the original build, with a
// warning that says which part differs.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "optiml/Db/Database.h"
#include "optiml/Eval/BuildFlags.h"
#include "optiml/Eval/Builder.h"
#include "optiml/Eval/Runner.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Support/FileUtil.h"
#include "optiml/Support/Process.h"
#include "clang/Frontend/ASTUnit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;
using namespace optiml::db;

namespace optiml {
namespace tool {

cl::SubCommand LaunchCommand(
    "launch",
    "Compile with a tuned variant when the project's database has one.\n\n"
    "  clang-optiml launch [-p BUILD] [--db FILE] -- nvcc ARGS... -c a.cu -o "
    "a.o\n\n"
    "Runs the compile command after `--` (a build's compiler launcher: CMake's "
    "CMAKE_CUDA_COMPILER_LAUNCHER, set by clang_optiml_use_tuned(), or a "
    "Makefile's NVCC). When the database that optimize records in (docs/db.md) "
    "holds a verified variant whose key matches this translation unit exactly "
    "(the text of every file it reads, the GPU, nvcc's version and the flags "
    "of -p's compile database entry), the variant is compiled in the "
    "original's place from a copy beside the object file, and one line says "
    "which kernels came from the database. A variant recorded for this file "
    "that no longer matches (a header changed, other flags, another GPU or "
    "nvcc) is not used: a warning says what differs and the original is "
    "compiled. Anything else (a link, a C++ file, a file no variant was "
    "recorded for) runs unchanged and silently. The exit status is the "
    "compiler's.\n");

static cl::OptionCategory LaunchCategory("launch options");

static cl::opt<std::string>
    DbFile("db",
           cl::desc("The database (default: as optimize's: the project's "
                    ".clang-optiml.json, else <build-dir>/clang-optiml.db "
                    "with -p, else .optiml/clang-optiml.db)"),
           cl::value_desc("file"), cl::sub(LaunchCommand),
           cl::cat(LaunchCategory));

static cl::opt<std::string>
    GpuName("gpu",
            cl::desc("The GPU the build is for, by name as nvidia-smi says "
                     "it (\"NVIDIA H200\"); default: this machine's first "
                     "GPU. For builds on a machine without the GPU"),
            cl::value_desc("name"), cl::sub(LaunchCommand),
            cl::cat(LaunchCategory));

static cl::opt<bool> Quiet("quiet",
                           cl::desc("Say nothing when a variant is used "
                                    "(warnings are still printed)"),
                           cl::sub(LaunchCommand), cl::cat(LaunchCategory));

namespace {

/// The one CUDA source a compile command compiles (with -c), or empty.
std::string compiledSource(ArrayRef<std::string> Argv) {
  static const char *const ValueOptions[] = {"-o",
                                             "-MF",
                                             "-MT",
                                             "--dependency-output",
                                             "-MQ",
                                             "-include",
                                             "--pre-include",
                                             "-odir",
                                             "--output-file",
                                             "--dependency-target-name",
                                             "-x",
                                             "-I",
                                             "-isystem"};
  bool Compiles = false;
  std::vector<std::string> Found;
  for (size_t I = 1; I < Argv.size(); ++I) {
    StringRef A = Argv[I];
    if (A == "-c" || A == "--compile")
      Compiles = true;
    if (!A.ends_with(".cu") || A.starts_with("-"))
      continue;
    if (is_contained(ValueOptions, Argv[I - 1]))
      continue;
    Found.push_back(A.str());
  }
  if (!Compiles || Found.size() != 1)
    return "";
  return Found.front();
}

/// The value of the first of \p Names in \p Argv (`-MF x`, `-MF=x`).
std::string optionValue(ArrayRef<std::string> Argv,
                        std::initializer_list<StringRef> Names) {
  for (size_t I = 1; I < Argv.size(); ++I)
    for (StringRef N : Names) {
      StringRef A = Argv[I];
      if (A == N && I + 1 < Argv.size())
        return Argv[I + 1];
      if (A.starts_with(N) && A.substr(N.size()).starts_with("="))
        return A.substr(N.size() + 1).str();
    }
  return "";
}

int runCommand(ArrayRef<std::string> Argv) {
  std::string Program = Argv.front();
  if (!StringRef(Program).contains('/')) {
    auto Found = sys::findProgramByName(Program);
    if (!Found) {
      WithColor::error(errs(), "clang-optiml")
          << "cannot find the compiler '" << Program << "' in PATH\n";
      return 127;
    }
    Program = *Found;
  }
  SmallVector<StringRef, 32> Args(Argv.begin(), Argv.end());
  std::string Message;
  int RC = sys::ExecuteAndWait(Program, Args, std::nullopt, {}, 0, 0, &Message);
  if (RC < 0) {
    WithColor::error(errs(), "clang-optiml")
        << "cannot run '" << Program << "': " << Message << "\n";
    return 127;
  }
  return RC;
}

/// A path as a Makefile-style dependency file writes it.
std::string depfileEscape(StringRef Path) {
  std::string S;
  for (char C : Path) {
    if (C == ' ' || C == '#')
      S += '\\';
    if (C == '$')
      S += '$';
    S += C;
  }
  return S;
}

/// The dependency file nvcc wrote names the staged copies: it is made to
/// name the user's files, so that the build tracks what the user edits.
void rewriteDepfile(StringRef Path, const StagedSource &S) {
  auto Text = readFile(Path);
  if (!Text) {
    consumeError(Text.takeError());
    return;
  }
  std::string T = *Text;
  for (const auto &[Copy, Original] : S.Copies) {
    std::string From = depfileEscape(Copy), To = depfileEscape(Original);
    for (size_t At = T.find(From); At != std::string::npos;
         At = T.find(From, At + To.size()))
      T.replace(At, From.size(), To);
  }
  if (Error E = writeFileAtomically(Path, T))
    WithColor::warning(errs(), "clang-optiml")
        << toString(std::move(E)) << "\n";
}

/// What differs between a recorded key and this build's, for the warning.
std::string difference(const VariantRecord &R, const VariantKey &K) {
  if (R.Id.InputsDigest != K.InputsDigest) {
    std::string Why = staleReason(R.Inputs);
    return Why.empty() ? "the files it reads differ" : Why;
  }
  if (R.Id.GpuName != K.GpuName)
    return "it was tuned on " + R.Id.GpuName + ", this build is for " +
           K.GpuName;
  if (R.Id.GpuArch != K.GpuArch && !K.GpuArch.empty())
    return "it was tuned for " + R.Id.GpuArch + ", this build's GPU is " +
           K.GpuArch;
  if (R.Id.NvccVersion != K.NvccVersion)
    return "it was tuned with another nvcc ('" +
           StringRef(lastLines(R.Id.NvccVersion, 1)).trim().str() +
           "', this build's is '" +
           StringRef(lastLines(K.NvccVersion, 1)).trim().str() + "')";
  if (R.Id.NvccFlags != K.NvccFlags)
    return "it was tuned with other nvcc flags (recorded: " +
           join(R.Id.NvccFlags, " ") +
           "; this build: " + join(K.NvccFlags, " ") + ")";
  return "";
}

struct Serving {
  VariantRecord Row;
  std::vector<std::string> IncludedFrom; ///< when Row.File is not the main
};

/// The variant to compile for \p Source, if one matches; warnings for the
/// rows recorded for this file that do not.
Expected<std::optional<Serving>> findVariant(const CommandContext &Ctx,
                                             ArrayRef<std::string> Argv,
                                             const std::string &Source) {
  auto Path = databasePath(DbFile, sys::path::parent_path(Source),
                           commonAnalyzeOptions(Ctx).BuildDir, "");
  if (!Path)
    return Path.takeError();
  if (!sys::fs::exists(*Path)) {
    if (!DbFile.empty())
      return createStringError("no database at '%s'", Path->c_str());
    return std::nullopt;
  }
  auto DB = Database::open(*Path, Database::Mode::ReadOnly);
  if (!DB)
    return DB.takeError();
  auto Rows = (*DB)->all();
  if (!Rows)
    return Rows.takeError();
  // Only rows recorded for this very text of the main file are candidates:
  // the cheap test first, a parse only when one is found.
  auto Text = readFile(Source);
  if (!Text)
    return Text.takeError();
  std::string MainHash = hashContent(*Text);
  std::vector<VariantRecord> Mine;
  std::optional<VariantRecord> Changed; // the newest row of this path
  for (VariantRecord &R : *Rows)
    for (const InputFile &F : R.Inputs) {
      if (!F.Main)
        continue;
      if (F.Hash == MainHash)
        Mine.push_back(std::move(R));
      else if (F.Path == Source && !Changed)
        Changed = std::move(R);
      break;
    }
  if (Mine.empty()) {
    if (Changed)
      WithColor::warning(errs(), "clang-optiml")
          << Source << ": the variant of " << join(Changed->Id.Kernels, ", ")
          << " recorded under " << Changed->Key.substr(0, 12)
          << " does not match this build: the file has changed since it was "
             "recorded; compiling the original\n";
    return std::nullopt;
  }

  // The key, as optimize made it: the parse with -p's flags, the builder's
  // flags for this file, this nvcc, this GPU.
  AnalyzeOptions AO = commonAnalyzeOptions(Ctx);
  AO.ExtraArgs.clear(); // the compile command, not clang arguments
  AO.ListsInputs = true;
  auto A = analyzeFile(Source, AO);
  if (!A)
    return A.takeError();
  // The key's flags are those of the compile database entry: the command
  // being run must be that entry's (CMake writes both from one target), or
  // the key would describe another compile.
  if (A->Flags.Original.empty() || !A->Flags.InferredFrom.empty()) {
    WithColor::warning(errs(), "clang-optiml")
        << Source << ": the database holds a variant for this file, but "
        << (AO.BuildDir.empty() ? "no compile database was found"
                                : "the compile database has no entry")
        << " for it, and variants are keyed by that entry's flags: pass -p "
           "BUILD_DIR; compiling the original\n";
    return std::nullopt;
  }
  SmallString<256> Cwd;
  if (sys::fs::current_path(Cwd))
    Cwd = ".";
  std::vector<std::string> Run = nvccCommandFlags(Argv, Cwd, Source).Flags;
  std::vector<std::string> Entry =
      nvccCommandFlags(A->Flags.Original, A->Flags.Directory, Source).Flags;
  if (Run != Entry) {
    WithColor::warning(errs(), "clang-optiml")
        << Source << ": this compile command's flags (" << join(Run, " ")
        << ") are not its compile database entry's (" << join(Entry, " ")
        << "); re-run cmake (or regenerate compile_commands.json); "
           "compiling the original\n";
    return std::nullopt;
  }
  VariantKey K;
  std::vector<InputFile> Inputs =
      translationUnitInputs(A->TU.AST->getSourceManager(), *Text);
  K.InputsDigest = inputsDigest(Inputs);
  if (!GpuName.empty()) {
    K.GpuName = GpuName;
  } else {
    GpuQuery Q = queryGpus();
    if (Q.Gpus.empty()) {
      WithColor::warning(errs(), "clang-optiml")
          << Source << ": the database holds a variant for this file, but "
          << "which GPU this build is for is unknown (" << Q.Problem
          << "); pass --gpu NAME (CMake: clang_optiml_use_tuned(... GPU "
             "NAME)): compiling the original\n";
      return std::nullopt;
    }
    K.GpuName = Q.Gpus.front().Name;
    K.GpuArch = Q.Gpus.front().Arch;
  }
  auto Tools = discoverToolchain(AO.Tools);
  if (!Tools)
    return Tools.takeError();
  BuildOptions BO;
  BO.CudaPath = Tools->CudaPath;
  BO.Nvcc = Argv.front();
  if (!K.GpuArch.empty())
    BO.GpuArch = K.GpuArch;
  if (Error E = setProgramBuildFlags(BO, AO, Source, {}, verboseLog()))
    return std::move(E);
  auto B = Builder::create(BO);
  if (!B)
    return B.takeError();
  K.NvccVersion = (*B)->nvccVersion().str();
  K.NvccFlags = (*B)->flags().vec();

  std::optional<Serving> Best;
  std::vector<std::string> Warnings;
  for (const VariantRecord &R : Mine) {
    std::string Why = difference(R, K);
    if (Why.empty()) {
      Why = staleReason(R.Inputs);
      if (!Why.empty())
        Why = "stale: " + Why;
    }
    if (!Why.empty()) {
      Warnings.push_back("the variant of " + join(R.Id.Kernels, ", ") +
                         " recorded under " + R.Key.substr(0, 12) +
                         " does not match this build: " + Why);
      continue;
    }
    if (!Best || R.Speedup > Best->Row.Speedup)
      Best = Serving{R, {}};
  }
  if (!Best) {
    for (const std::string &W : Warnings)
      WithColor::warning(errs(), "clang-optiml")
          << Source << ": " << W << "; compiling the original\n";
    return std::nullopt;
  }
  // A variant of the main file is staged from this file (the project may
  // have moved since); one of an included file through its include chain.
  bool OfMain = false;
  for (const InputFile &F : Best->Row.Inputs)
    OfMain |= F.Main && F.Path == Best->Row.File;
  if (OfMain) {
    Best->Row.File = A->Path;
  } else {
    const clang::SourceManager &SM = A->TU.AST->getSourceManager();
    clang::FileID F = findFileID(SM, Best->Row.File);
    if (F.isInvalid())
      return createStringError("the variant's file '%s' is not read by '%s'",
                               Best->Row.File.c_str(), Source.c_str());
    Best->IncludedFrom = includeChain(SM, F);
  }
  return Best;
}

} // namespace

int runLaunch(const CommandContext &Ctx) {
  const std::vector<std::string> &Argv = Ctx.ExtraArgs;
  if (Argv.empty())
    return reportUsageError(createStringError(
        "no compile command: clang-optiml launch [options] -- nvcc ARGS..."));
  std::string Source = compiledSource(Argv);
  if (Source.empty())
    return runCommand(Argv);
  std::string AbsSource = absolutePath(Source);

  auto Found = findVariant(Ctx, Argv, AbsSource);
  if (!Found) {
    WithColor::warning(errs(), "clang-optiml")
        << Source << ": " << toString(Found.takeError())
        << "; compiling the original\n";
    return runCommand(Argv);
  }
  if (!*Found)
    return runCommand(Argv);
  const VariantRecord &R = (*Found)->Row;

  // The variant is compiled from copies beside the object file, laid out
  // as the builder laid them out when it was verified.
  std::string Object = optionValue(Argv, {"-o", "--output-file"});
  SmallString<256> Staging(Object.empty() ? AbsSource : absolutePath(Object));
  Staging += ".optiml";
  (void)sys::fs::remove_directories(Staging, /*IgnoreErrors=*/true);
  if (std::error_code EC = sys::fs::create_directories(Staging)) {
    WithColor::warning(errs(), "clang-optiml")
        << "cannot create '" << Staging << "': " << EC.message()
        << "; compiling the original\n";
    return runCommand(Argv);
  }
  auto Staged = stageSource(Staging, R.File, R.Source, /*TextGiven=*/true,
                            (*Found)->IncludedFrom);
  if (!Staged) {
    WithColor::warning(errs(), "clang-optiml")
        << toString(Staged.takeError()) << "; compiling the original\n";
    return runCommand(Argv);
  }
  std::vector<std::string> Cmd;
  Cmd.push_back(Argv.front());
  Cmd.insert(Cmd.end(), Staged->FirstFlags.begin(), Staged->FirstFlags.end());
  // The original's directory (searched after the program's -I, as in the
  // verified build) and the variant's own flags go just before the source.
  for (size_t I = 1; I < Argv.size(); ++I) {
    if (Argv[I] == Source) {
      Cmd.insert(Cmd.end(), Staged->LastFlags.begin(), Staged->LastFlags.end());
      Cmd.insert(Cmd.end(), R.VariantFlags.begin(), R.VariantFlags.end());
      Cmd.push_back(Staged->Path);
      continue;
    }
    Cmd.push_back(Argv[I]);
  }
  if (!Quiet)
    errs() << "clang-optiml: " << Source << ": " << join(R.Id.Kernels, ", ")
           << " from the database (" << format("%.2fx", R.Speedup) << " on "
           << R.Id.GpuName << ", variant " << R.Key.substr(0, 12) << ")\n";
  int RC = runCommand(Cmd);
  for (const std::string &L : Staged->Links)
    (void)sys::fs::remove(L);
  std::string Depfile = optionValue(Argv, {"-MF", "--dependency-output"});
  if (RC == 0 && !Depfile.empty())
    rewriteDepfile(Depfile, *Staged);
  return RC;
}

} // namespace tool
} // namespace optiml
