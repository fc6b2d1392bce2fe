//===- Analysis.cpp - Load, parse and model one CUDA file -----------------===//

#include "optiml/Frontend/Analysis.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "optiml/Frontend/Preamble.h"
#include "clang/Frontend/ASTUnit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace optiml {

static bool forcesCuda(ArrayRef<std::string> Args) {
  for (size_t I = 0; I < Args.size(); ++I) {
    if ((Args[I] == "-x" && I + 1 < Args.size() &&
         (Args[I + 1] == "cuda" || Args[I + 1] == "cu")) ||
        Args[I] == "-xcuda")
      return true;
  }
  return false;
}

Expected<std::string> readCudaSource(StringRef Path, bool ForcedCuda) {
  sys::fs::file_status Status;
  if (std::error_code EC = sys::fs::status(Path, Status))
    return createStringError(EC, "cannot open '%s': %s", Path.str().c_str(),
                             EC.message().c_str());
  if (sys::fs::is_directory(Status))
    return createStringError(inconvertibleErrorCode(),
                             "'%s' is a directory, not a CUDA source file",
                             Path.str().c_str());
  StringRef Ext = sys::path::extension(Path);
  if (!ForcedCuda && Ext != ".cu" && Ext != ".cuh")
    return createStringError(
        inconvertibleErrorCode(),
        "'%s' is not a CUDA source file (expected a .cu or .cuh file); to "
        "parse it as CUDA anyway, add '-- -x cuda'",
        Path.str().c_str());
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf)
    return createStringError(Buf.getError(), "cannot read '%s': %s",
                             Path.str().c_str(),
                             Buf.getError().message().c_str());
  StringRef Text = (*Buf)->getBuffer();
  if (Text.contains('\0'))
    return createStringError(inconvertibleErrorCode(),
                             "'%s' is a binary file, not CUDA source",
                             Path.str().c_str());
  return Text.str();
}

Expected<ParseConfig> makeParseConfig(StringRef Path,
                                      const AnalyzeOptions &Opts,
                                      TranslatedFlags *FlagsOut) {
  // Like clangd: -p names the database, else the one above the file.
  auto Loaded = Opts.BuildDir.empty() ? discoverCompileFlags(Path)
                                      : loadCompileFlags(Opts.BuildDir, Path);
  if (!Loaded)
    return Loaded.takeError();
  TranslatedFlags Flags = std::move(*Loaded);
  ToolchainOptions TO = Opts.Tools;
  if (TO.GpuArch.empty() && Flags.GpuArch)
    TO.GpuArch = *Flags.GpuArch;
  auto Tools = discoverToolchain(TO);
  if (!Tools)
    return Tools.takeError();

  if (raw_ostream *V = Opts.Verbose) {
    if (!Flags.Database.empty())
      *V << "note: compilation database " << Flags.Database << "\n";
    if (!Flags.InferredFrom.empty())
      *V << "note: " << Path << " has no entry in it; flags borrowed from "
         << Flags.InferredFrom << "\n";
    if (!Flags.Note.empty())
      *V << "note: " << Flags.Note << "\n";
    *V << "note: CUDA at " << Tools->CudaPath << " (" << Tools->CudaPathOrigin
       << ")";
    if (!Tools->CudaVersion.empty())
      *V << ", version " << Tools->CudaVersion;
    *V << "\n";
    if (!Tools->ClangTreatsAs.empty())
      *V << "note: CUDA " << Tools->CudaVersion
         << " is newer than this clang supports; it is parsed as CUDA "
         << Tools->ClangTreatsAs << "\n";
    *V << "note: GPU architecture " << Tools->GpuArch
       << (Opts.Tools.GpuArch.empty()
               ? (Flags.GpuArch ? " (from the compilation database)"
                                : " (default)")
               : "")
       << "\n";
    *V << "note: clang resource directory " << Tools->ResourceDir << "\n";
    for (const std::string &T : Flags.Translated)
      *V << "note: translated " << T << "\n";
    for (const std::string &D : Flags.Dropped)
      *V << "note: dropped " << D << "\n";
  }

  ParseConfig Config;
  Config.Tools = std::move(*Tools);
  Config.ExtraArgs = Flags.Args;
  Config.ExtraArgs.insert(Config.ExtraArgs.end(), Opts.ExtraArgs.begin(),
                          Opts.ExtraArgs.end());
  if (FlagsOut)
    *FlagsOut = std::move(Flags);
  return Config;
}

char CompileError::ID;

std::string CompileError::message() const {
  unsigned N = 0;
  for (const Diagnostic &D : Diags)
    N += D.isError();
  return std::to_string(N) + " compile error" + (N == 1 ? "" : "s") + " in '" +
         File + "'; fix " + (N == 1 ? "it" : "them") + " first";
}

void CompileError::log(raw_ostream &OS) const {
  printDiagnostics(OS, Diags);
  OS << message();
}

static Error compileErrors(StringRef Path, const ParsedTU &TU) {
  return make_error<CompileError>(Path.str(), TU.Diags);
}

Expected<Analysis> analyzeFile(StringRef Path, const AnalyzeOptions &Opts) {
  Analysis A;
  SmallString<256> Abs(Path);
  (void)sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, true);
  A.Path = std::string(Abs);

  auto Code = readCudaSource(Path, forcesCuda(Opts.ExtraArgs));
  if (!Code)
    return Code.takeError();
  A.Code = std::move(*Code);

  auto Config = makeParseConfig(A.Path, Opts, &A.Flags);
  if (!Config)
    return Config.takeError();
  A.Config = std::move(*Config);
  if (raw_ostream *V = Opts.Verbose) {
    *V << "note: parsing with:";
    for (const std::string &Arg :
         parseArguments(A.Path, A.Config, CudaSide::Host))
      *V << " " << Arg;
    *V << "\n";
  }

  ParseConfig Parse = A.Config;
  Parse.ReusePreamble = !Opts.ListsInputs;
  auto TU = parseCuda(A.Code, A.Path, Parse, CudaSide::Host);
  if (!TU)
    return TU.takeError();
  A.TU = std::move(*TU);
  if (raw_ostream *V = Opts.Verbose; V && !A.TU.PreambleUse.empty())
    *V << "note: headers read from a precompiled preamble (" << A.TU.PreambleUse
       << "; cache: " << preambleDirectory() << ")\n";
  if (A.TU.errorCount())
    return compileErrors(Path, A.TU);
  A.Model = buildKernelModel(A.TU.AST->getASTContext());
  A.Model.File = A.Path;
  return std::move(A);
}

Expected<KernelModel> modelSource(StringRef Code, StringRef FileName,
                                  const ParseConfig &Config) {
  auto TU = parseCuda(Code, FileName, Config, CudaSide::Host);
  if (!TU)
    return TU.takeError();
  if (TU->errorCount())
    return compileErrors(FileName, *TU);
  KernelModel M = buildKernelModel(TU->AST->getASTContext());
  M.File = FileName.str();
  return M;
}

} // namespace optiml
