//===- Analysis.h - Load, parse and model one CUDA file --------*- C++ -*-===//
//
// The front door used by every subcommand: checks the input, resolves the
// toolchain and flags, parses the host side, and builds the kernel model.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_FRONTEND_ANALYSIS_H
#define OPTIML_FRONTEND_ANALYSIS_H

#include "optiml/Frontend/CompileFlags.h"
#include "optiml/Frontend/CudaToolchain.h"
#include "optiml/Frontend/KernelModel.h"
#include "optiml/Frontend/Parse.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace optiml {

/// The input does not compile. Carries clang's diagnostics so the caller can
/// print them before the one-line summary (message()).
class CompileError : public llvm::ErrorInfo<CompileError> {
public:
  static char ID;
  CompileError(std::string File, std::vector<Diagnostic> Diags)
      : File(std::move(File)), Diags(std::move(Diags)) {}
  /// "2 compile errors in 'k.cu'; fix them first"
  std::string message() const override;
  /// The diagnostics, as clang prints them, then message().
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  std::string File;
  std::vector<Diagnostic> Diags;
};

struct AnalyzeOptions {
  ToolchainOptions Tools;
  std::string BuildDir;                 ///< -p; empty: no compile database
  std::vector<std::string> ExtraArgs;   ///< after `--`
  llvm::raw_ostream *Verbose = nullptr; ///< -v: notes go here
  /// The caller lists the files the parse read (the variant database's
  /// key): the analysis parse reads every header itself, no preamble.
  /// Analysis::Config still reuses preambles for later parses.
  bool ListsInputs = false;
};

struct Analysis {
  std::string Path; ///< absolute path of the input
  std::string Code; ///< the input's text, as read once
  TranslatedFlags Flags;
  ParseConfig Config;
  ParsedTU TU;
  KernelModel Model;
};

/// Reads \p Path and checks that it looks like CUDA source: it exists, is a
/// regular readable text file, and has a CUDA extension (.cu, .cuh) unless
/// the extra args force `-x cuda`.
llvm::Expected<std::string> readCudaSource(llvm::StringRef Path,
                                           bool ForcedCuda);

/// Resolves toolchain and flags for \p Path (compile database, `--` args).
llvm::Expected<ParseConfig>
makeParseConfig(llvm::StringRef Path, const AnalyzeOptions &Opts,
                TranslatedFlags *FlagsOut = nullptr);

/// Everything at once. Compile errors are an error whose message carries
/// clang's diagnostics.
llvm::Expected<Analysis> analyzeFile(llvm::StringRef Path,
                                     const AnalyzeOptions &Opts);

/// Parses \p Code (a variant of the analysed file) with the same
/// configuration and models it; compile errors fail.
llvm::Expected<KernelModel> modelSource(llvm::StringRef Code,
                                        llvm::StringRef FileName,
                                        const ParseConfig &Config);

} // namespace optiml

#endif
