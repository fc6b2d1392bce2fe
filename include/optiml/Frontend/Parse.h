//===- Parse.h - Parse a CUDA translation unit ------------------*- C++ -*-===//
//
// One entry point for every CUDA parse in the project: the kernel model, the
// edit checks (which parse text that exists only in memory) and the benchmarks.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_FRONTEND_PARSE_H
#define OPTIML_FRONTEND_PARSE_H

#include "optiml/Frontend/CudaToolchain.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <string>
#include <vector>

namespace clang {
class ASTUnit;
} // namespace clang

namespace optiml {

/// The stack clang's parser and our AST visitors get. They recurse with the
/// source's nesting: 2000 nested parentheses or a sum of 50,000 terms (a
/// tree 50,000 deep) need far more than a thread's usual 8 MB. Virtual
/// memory: only what is touched is committed.
inline constexpr unsigned LargeStackSize = 512u << 20;

/// Runs \p Fn on a new thread with LargeStackSize of stack and waits for it.
/// Returns false if \p Fn crashed (where crash recovery is enabled, as the
/// tool does: llvm::CrashRecoveryContext::Enable()).
bool runOnLargeStack(llvm::function_ref<void()> Fn);

/// A diagnostic from clang, kept as plain data: the search and the LLM read
/// them, and the CLI prints them.
struct Diagnostic {
  enum Level { Note, Warning, Error, Fatal };
  Level Severity = Error;
  std::string File; ///< empty when clang gave no location
  unsigned Line = 0;
  unsigned Column = 0;
  std::string Message;
  std::string Option; ///< the warning flag, e.g. "-Wunused-variable"

  bool isError() const { return Severity >= Error; }
  /// "file:line:col: error: message" as clang prints it.
  std::string str() const;
};

struct ParseConfig {
  Toolchain Tools;
  /// Extra clang arguments (compile database flags, then `--` arguments).
  std::vector<std::string> ExtraArgs;
  /// The translation unit's main file when the code given to parseCuda is
  /// not that file but a user file it includes (the header or included .cu
  /// that defines the kernel being edited): the parse reads this file from
  /// disk and sees the given code in place of the included one. Empty: the
  /// code is the main file.
  std::string MainFile;
  /// Parse the file's leading #includes once and reuse them (a precompiled
  /// preamble, kept in memory and under the cache directory: see
  /// lib/Frontend/Preamble.h). Off where a caller lists the files a parse
  /// read (the database's keys): headers in a preamble are not read again.
  bool ReusePreamble = true;
};

/// The file a parse of \p FileName under \p Config compiles (absolute,
/// without `.` and `..`): Config.MainFile when set, else \p FileName.
std::string translationUnitFile(llvm::StringRef FileName,
                                const ParseConfig &Config);

/// A parsed translation unit. Owns the AST.
struct ParsedTU {
  ParsedTU();
  ParsedTU(ParsedTU &&);
  ParsedTU &operator=(ParsedTU &&);
  ~ParsedTU();

  /// Texts clang reads in place (an edited included file) and the
  /// precompiled preamble the AST reads from: they outlive the AST, which is
  /// declared after them and so destroyed first.
  std::shared_ptr<const void> Buffers;
  std::shared_ptr<const void> Preamble;
  std::unique_ptr<clang::ASTUnit> AST;
  std::vector<Diagnostic> Diags;
  /// The file name the code was parsed under.
  std::string FileName;
  /// How the headers were read: "" (parsed), or "built", "reused" or
  /// "loaded" for a precompiled preamble (for -v).
  std::string PreambleUse;

  unsigned errorCount() const;
};

/// Parses \p Code as if it were the file \p FileName (quoted includes are
/// found relative to its directory); with Config.MainFile, parses that file
/// with \p Code in place of the file \p FileName that it includes. Never fails
/// on compile errors: they are in Diags, and the AST holds what clang
/// recovered. Fails only when clang could not run at all (bad arguments).
llvm::Expected<ParsedTU> parseCuda(llvm::StringRef Code,
                                   llvm::StringRef FileName,
                                   const ParseConfig &Config, CudaSide Side);

/// The clang command line parseCuda uses (for -v and the benchmarks).
std::vector<std::string> parseArguments(llvm::StringRef FileName,
                                        const ParseConfig &Config,
                                        CudaSide Side);

/// Prints errors (and their notes) the way clang does.
void printDiagnostics(llvm::raw_ostream &OS,
                      const std::vector<Diagnostic> &Diags,
                      bool IncludeWarnings = false);

} // namespace optiml

#endif
