//===- CompileFlags.h - Compile-database flags for CUDA parses -*- C++ -*-===//
//
// Compile databases for CUDA projects are usually written for nvcc. These
// functions find a file's entry and translate nvcc's flags into clang's,
// keeping a record of what was dropped so `-v` can say so.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_FRONTEND_COMPILEFLAGS_H
#define OPTIML_FRONTEND_COMPILEFLAGS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <vector>

namespace optiml {

struct TranslatedFlags {
  /// Flags for clang (includes, macros, language standard, rdc...).
  std::vector<std::string> Args;
  /// Flags seen and dropped, with the reason, e.g. "-G (device debug info)".
  std::vector<std::string> Dropped;
  /// Flags rewritten, e.g. "-arch=sm_90 -> --cuda-gpu-arch=sm_90".
  std::vector<std::string> Translated;
  /// GPU architecture named by -arch/-gencode/--cuda-gpu-arch, if any.
  std::optional<std::string> GpuArch;
  /// The nvcc/clang flags as given (for the builder, which calls nvcc).
  std::vector<std::string> Original;
  /// The database entry's "directory", which relative paths in Original are
  /// relative to (empty: no database).
  std::string Directory;
  /// The compile_commands.json they came from (empty: none, default flags).
  std::string Database;
  /// The file whose entry was borrowed when the file itself has none (empty:
  /// its own entry, or no database).
  std::string InferredFrom;
  /// Why no database was used, or why one found was ignored (for -v).
  std::string Note;
};

/// Translates one compile command (argv[0] is the compiler; the source file
/// and output flags are removed). Relative paths are made absolute against
/// \p Directory. Works for nvcc and clang command lines alike.
TranslatedFlags translateCompileCommand(llvm::ArrayRef<std::string> Argv,
                                        llvm::StringRef Directory);

/// Loads `<BuildDir>/compile_commands.json` and translates the entry for
/// \p File. A file without an entry borrows the flags of its closest CUDA
/// neighbour in the database (clang's interpolating database: the entry
/// whose path is most alike), as clangd does; a database without any CUDA
/// entry is an error naming it.
llvm::Expected<TranslatedFlags> loadCompileFlags(llvm::StringRef BuildDir,
                                                 llvm::StringRef File);

/// The compile_commands.json clangd would use for \p File: walking up from
/// its directory, the first `D/compile_commands.json` or
/// `D/build/compile_commands.json`. Empty if there is none.
std::string findCompilationDatabase(llvm::StringRef File);

/// Flags for \p File without -p: the database findCompilationDatabase finds,
/// used as loadCompileFlags does; no database, or one with no CUDA entry
/// (a C++ project around the file), gives empty flags with a Note. A
/// database that cannot be read is an error naming it.
llvm::Expected<TranslatedFlags> discoverCompileFlags(llvm::StringRef File);

} // namespace optiml

#endif
