//===- Builder.h - Compile candidates with nvcc, cached ---------*- C++ -*-===//
//
// A candidate is a whole .cu program (a source text that may differ from the
// file on disk). The builder runs nvcc with the project's flags (from the
// compilation database, untranslated) or defaults (-O3 -arch=sm_XX), adds
// -Xptxas -v to learn registers/spills/shared memory, and keeps the result in
// a content-addressed cache: the same source, flags and nvcc give the same
// binary without recompiling. Compile errors are results, not Errors.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_EVAL_BUILDER_H
#define OPTIML_EVAL_BUILDER_H

#include "optiml/Eval/PtxasInfo.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace optiml {

struct BuildOptions {
  /// nvcc to run; empty: <CudaPath>/bin/nvcc, then nvcc in PATH.
  std::string Nvcc;
  std::string CudaPath = "/usr/local/cuda";
  /// Flags for every build (without the source, -c, -o). Empty: defaults
  /// (-O3 -arch=<GpuArch>).
  std::vector<std::string> Flags;
  /// Also for every build, after Flags or the defaults: what the program
  /// needs whatever the flags (-lcublas, -std=c++17, -DN=4096, -Iinclude).
  std::vector<std::string> ExtraFlags;
  /// The program's other source files (absolute paths), compiled and linked
  /// into every build, never edited; their text (and the files their quoted
  /// includes name beside them) is part of the cache key.
  std::vector<std::string> ExtraSources;
  /// Libraries and linker flags, after the sources (a CMake target's link
  /// line). Not among flags(): they do not change what a translation unit
  /// compiles to, so a tuned variant's key leaves them out.
  std::vector<std::string> LinkFlags;
  /// When the sources given to build() are a user file that the program's
  /// main file includes (a header or an included .cu defining the kernel
  /// being optimized): the user files from the main file (first) down to
  /// the one that includes it (absolute paths). The build then compiles the
  /// main file, with every file of this chain and the request's text copied
  /// into the build directory at their places relative to the main file's
  /// directory, so that each quoted include finds the copy beside its
  /// includer first; the user's files are never written.
  std::vector<std::string> IncludedFrom;
  std::string GpuArch = "sm_90";
  /// Where nvcc runs (relative paths in Flags are relative to it); empty: a
  /// private temporary directory.
  std::string WorkDir;
  /// Cache root; empty: $XDG_CACHE_HOME/clang-optiml/builds or
  /// ~/.cache/clang-optiml/builds.
  std::string CacheDir;
  bool UseCache = true;
  /// Parallel nvcc processes in buildAll.
  unsigned Jobs = 2;
  double TimeoutSeconds = 600;
};

struct BuildRequest {
  /// The file the candidate comes from: its directory is searched for
  /// quoted includes, and it names the build in messages.
  std::string SourcePath;
  /// The candidate's text; empty: read SourcePath.
  std::string Source;
  /// Per-candidate flags, after the common ones (e.g. -maxrregcount=64).
  std::vector<std::string> ExtraFlags;
};

struct BuildResult {
  bool Succeeded = false;
  bool CacheHit = false;
  std::string Binary; ///< the executable, inside the cache
  std::string Key;    ///< content hash (hex)
  std::vector<KernelResources> Resources;
  std::string Log;          ///< nvcc's stdout+stderr
  std::string ErrorSummary; ///< first error lines (when it failed)
  std::string Command;      ///< the nvcc command line, for messages
  double Seconds = 0;       ///< compile time (0 on a cache hit)
};

/// nvcc runs its steps (gcc, cudafe++, cicc, ptxas, the linker) through a
/// shell, pasting its arguments into command lines: some in double quotes,
/// some bare, split again at commas and `=`. So an argument is safe only if
/// it holds nothing a shell interprets in a bare word or in double quotes:
/// whitespace and control characters, quotes and `\`, `$` and backquotes,
/// `; & | < > ( )`, the globs `* ? [`, `~`, `#` (a comment where a word
/// starts, which may be anywhere once nvcc splits a flag) and the braces of
/// bash's brace expansion. The first such character, or nullopt.
std::optional<char> shellUnsafeChar(llvm::StringRef Arg);

/// An error naming \p What (e.g. "--build-arg") when \p Arg holds a character
/// nvcc's shell would interpret.
llvm::Error checkNvccArgument(llvm::StringRef Arg, llvm::StringRef What);

/// A `#line 1 "NAME"` directive whose string literal names \p Name exactly,
/// whatever bytes it holds (quotes, backslashes, newlines are escaped).
std::string lineDirective(llvm::StringRef Name);

/// How a source text reaches nvcc (what Builder::build does with a
/// request, and `clang-optiml launch` with a recorded variant).
struct StagedSource {
  std::string Path; ///< the file to compile (the original when untouched)
  /// -I flags before every other flag, and after the program's flags.
  std::vector<std::string> FirstFlags, LastFlags;
  /// Links to directories made under the staging directory, to be removed
  /// after the compile.
  std::vector<std::string> Links;
  /// (copy, original) for every file written: a dependency file nvcc writes
  /// names the copies.
  std::vector<std::pair<std::string, std::string>> Copies;
};

/// Stages \p Text, the text of \p AbsSource (\p TextGiven: a text other
/// than the file's own), for a compile under \p Staging: the file itself
/// when untouched and its name is safe; a copy under its name beside which
/// its own directory is searched (-I after the program's flags); or, when
/// \p IncludedFrom names the chain of user files from the main file down to
/// \p AbsSource's includer (BuildOptions::IncludedFrom), a tree of copies of
/// that chain in which every copy starts with a #line naming the original.
llvm::Expected<StagedSource>
stageSource(llvm::StringRef Staging, llvm::StringRef AbsSource,
            llvm::StringRef Text, bool TextGiven,
            llvm::ArrayRef<std::string> IncludedFrom);

class Builder {
public:
  /// Finds nvcc and reads its version (part of every cache key). Refuses
  /// flags and directories that nvcc's shell would interpret.
  static llvm::Expected<std::unique_ptr<Builder>> create(BuildOptions Opts);

  /// Builds one candidate. Errors are for the builder's own failures (no
  /// cache directory, nvcc cannot start); a compile error is a result, and
  /// so is a per-candidate flag that nvcc's shell would interpret. A source
  /// whose path a shell would misread is compiled from a copy under a safe
  /// name that starts with a #line naming the original.
  llvm::Expected<BuildResult> build(const BuildRequest &Req);

  /// Builds several at once (Opts.Jobs at a time), results in order.
  std::vector<llvm::Expected<BuildResult>>
  buildAll(llvm::ArrayRef<BuildRequest> Reqs);

  /// The cache key of a request: SHA-256 of source, flags and nvcc version.
  std::string cacheKey(const BuildRequest &Req, llvm::StringRef Source) const;

  const BuildOptions &options() const { return Opts; }
  llvm::StringRef nvccVersion() const { return NvccVersion; }
  llvm::StringRef nvccPath() const { return NvccPath; }
  /// The common flags actually used (defaults filled in).
  llvm::ArrayRef<std::string> flags() const { return Flags; }
  /// The program's other source files, built into every binary.
  llvm::ArrayRef<std::string> extraSources() const { return Opts.ExtraSources; }
  /// How many builds ran nvcc (not served from the cache).
  unsigned compilations() const;

private:
  explicit Builder(BuildOptions Opts) : Opts(std::move(Opts)) {}
  BuildOptions Opts;
  std::string NvccPath, NvccVersion, CacheRoot;
  std::vector<std::string> Flags;
  mutable std::mutex Mu;
  unsigned Compilations = 0;
};

} // namespace optiml

#endif
