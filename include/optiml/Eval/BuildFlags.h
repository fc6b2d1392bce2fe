//===- BuildFlags.h - One set of flags for parse and build -----*- C++ -*-===//
//
// A program's flags are given once: in a compile database (-p, or found
// above the file), after `--` (clang arguments) or with --build-arg (nvcc
// flags). The parse gets them translated for clang (CompileFlags.h); these
// functions give the nvcc build the same preprocessor and language flags.
// nvcc runs in another directory (the entry's, or a private one), so every
// relative path in a flag is made absolute against the directory it was
// written in: the entry's "directory" for a database, the user's working
// directory for `--` and --build-arg.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_EVAL_BUILDFLAGS_H
#define OPTIML_EVAL_BUILDFLAGS_H

#include "optiml/Frontend/CompileFlags.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace optiml {

/// Flags for nvcc with what happened to each one on the way, for -v.
struct NvccFlagList {
  std::vector<std::string> Flags;
  /// "-Iinc -> -I/proj/inc", "-iquote q: not passed (nvcc has no -iquote)".
  std::vector<std::string> Notes;
};

/// The flags of an nvcc compile command (argv[0] is nvcc) for a build of
/// \p File elsewhere: the compiler, the source file, -c, -o and dependency
/// outputs are removed, the rest kept as written but for relative paths,
/// made absolute against \p Directory (resolveNvccPaths).
NvccFlagList nvccCommandFlags(llvm::ArrayRef<std::string> Argv,
                              llvm::StringRef Directory, llvm::StringRef File);

/// clang arguments (after `--`, or a clang compile command without its
/// argv[0]) as nvcc flags, parsed with clang's own option table so that
/// every spelling is recognised (`-Iinc`, `-I inc`, `--include-directory=inc`,
/// `-D N=4`, `--define-macro=N`...). Passed: -I, -isystem, -include, -D, -U
/// and -std (nvcc's dialects c++03 to c++20; gnu++NN becomes c++NN). Left
/// out, each with a note: every other flag (nvcc would not understand it,
/// or it is not about what the source means), and a value holding a comma
/// (nvcc splits option values at commas). Relative paths are made absolute
/// against \p Directory; an -include file only if it exists there (else it
/// is searched for on the include path, as the preprocessor does).
NvccFlagList clangArgsForNvcc(llvm::ArrayRef<std::string> Args,
                              llvm::StringRef Directory);

/// nvcc flags with the relative paths of nvcc's path options made absolute
/// against \p Directory. Those options are -I (--include-path), -isystem
/// (--system-include), -L (--library-path), -include (--pre-include, only a
/// file that exists there), -optf (--options-file) and -ccbin
/// (--compiler-bindir, only a value with a `/`: a bare name is looked up in
/// PATH), in every form nvcc takes (`-I dir`, `-I=dir`, `-Idir` for the
/// one-letter ones, `--include-path dir`, `--include-path=dir`), each element
/// of a comma-separated list. -l names a library, not a path; the values of
/// -Xcompiler, -Xlinker and the other pass-through options are opaque and
/// left as written.
NvccFlagList resolveNvccPaths(llvm::ArrayRef<std::string> Flags,
                              llvm::StringRef Directory);

/// What the builder gets (BuildOptions' fields of the same names).
struct ProgramBuildFlags {
  /// An nvcc database entry's flags, replacing the builder's defaults
  /// (-O3 -arch=...); empty: the defaults.
  std::vector<std::string> Flags;
  /// After them: a clang database entry's flags, then the `--` arguments,
  /// translated; then --build-arg.
  std::vector<std::string> ExtraFlags;
  /// Where nvcc runs: an nvcc entry's directory (for what its flags hold
  /// that is not a path option, such as -Xcompiler -Iinc); empty: anywhere.
  std::string WorkDir;
  std::vector<std::string> Notes;
};

/// Puts the three sources together for a build of \p File: \p Db (its
/// compile database entry, as the parse loaded it; Original is empty when
/// there is none), \p ClangArgs (after `--`, relative to \p Cwd) and
/// \p BuildArgs (nvcc flags, relative to \p Cwd). A flag that the shell
/// nvcc runs its steps through would interpret is an error naming where it
/// came from.
llvm::Expected<ProgramBuildFlags>
programBuildFlags(const TranslatedFlags &Db,
                  llvm::ArrayRef<std::string> ClangArgs,
                  llvm::ArrayRef<std::string> BuildArgs, llvm::StringRef Cwd,
                  llvm::StringRef File);

/// eval and optimize build and run a whole program. An error when \p File
/// (as the user named it) does not define main() and no other source file
/// was given (\p HasSources): nvcc would stop at the link with a message
/// about the program rather than the command. \p HasKernels says whether it
/// defines kernels (the message then says how to give them).
llvm::Error requireMain(llvm::StringRef File, bool DefinesMain, bool HasKernels,
                        bool HasSources);

} // namespace optiml

#endif
