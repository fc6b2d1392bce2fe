//===- Program.h - The program a driver builds, runs and writes -*- C++ -*-===//
//
// What eval, apply, synthesize and the optimize session share about the
// user's program and project: paths as the user gave them made absolute,
// where results are written, the nvcc build's flags, the run's arguments,
// the probe library, and the model the project configures (docs/llm.md:
// the --llm-* options, the environment and .clang-optiml.json resolved into
// a client, in a build with LLM support).
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_DRIVER_PROGRAM_H
#define OPTIML_DRIVER_PROGRAM_H

#include "optiml/Frontend/Analysis.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace optiml {
namespace llm {
class ChatClient;
struct LLMSettings;
} // namespace llm
struct BuildOptions;
class Builder;
struct RunnerOptions;

/// \p Path made absolute against the current directory, lexically (no
/// symlink is resolved, "./" is dropped). Every path the user gives or the
/// tool makes goes through this before it is stored or handed to a child:
/// children run in private directories, where a relative path means nothing.
/// Empty stays empty.
std::string absolutePath(llvm::StringRef Path);

/// The directory a diff of \p AbsFile is relative to, so that `git apply`
/// works there: the closest directory above it holding `.git`, else its own
/// directory.
std::string projectRoot(llvm::StringRef AbsFile);

/// \p Diff (made by the library with "a/<file name>" headers) with its
/// headers naming \p AbsFile relative to projectRoot.
std::string projectRelativeDiff(llvm::StringRef Diff, llvm::StringRef AbsFile);

/// Where `-o OUT` puts the new text of \p Changed, an edit's result for the
/// program whose main file is \p Main: OUT itself when it names a file and
/// \p Changed is the main file; under OUT, at \p Changed's path relative
/// to the main file's directory, when OUT is a directory (existing, or
/// written with a trailing '/'; made as needed). An edit of a file the main
/// file includes with OUT naming a file is an error that says what to use.
llvm::Expected<std::string> outputPathFor(llvm::StringRef Out,
                                          llvm::StringRef Main,
                                          llvm::StringRef Changed);

/// --export-fixes: writes (atomically) the change from \p Old to \p New of
/// \p AbsFile as a clang-apply-replacements YAML document to \p YamlPath,
/// refused if that is the source file itself.
llvm::Error exportFixes(llvm::StringRef YamlPath, llvm::StringRef AbsFile,
                        llvm::StringRef Old, llvm::StringRef New,
                        llvm::StringRef Message);

/// Refuses a flag for nvcc (\p Option: "--build-arg", "--nvcc-arg") that
/// holds a character the shell nvcc runs its steps through would interpret.
llvm::Error checkNvccFlags(llvm::ArrayRef<std::string> Flags,
                           llvm::StringRef Option);

/// --source files as absolute paths, each checked to be a file.
llvm::Expected<std::vector<std::string>>
programSources(const std::vector<std::string> &Paths);

/// The flags of the nvcc build of the program whose main file is \p File
/// (BuildOptions' Flags, ExtraFlags and WorkDir): its compile database
/// entry (-p, else found above it, as for the parse), the `--` arguments
/// translated, and \p BuildArgs with relative paths made absolute; what was
/// passed, translated and left out is said on \p Log (none: quiet).
llvm::Error setProgramBuildFlags(BuildOptions &BO, const AnalyzeOptions &AO,
                                 llvm::StringRef File,
                                 llvm::ArrayRef<std::string> BuildArgs,
                                 llvm::raw_ostream *Log);

/// Which nvcc builds the program, with which flags, on \p Log (none: quiet).
void noteBuilder(const Builder &B, llvm::raw_ostream *Log);

/// An error when the analysed \p File cannot be linked into a program by
/// itself: no main() and no --source (\p Sources) to bring one.
llvm::Error requireProgram(llvm::StringRef File, const Analysis &A,
                           llvm::ArrayRef<std::string> Sources);

/// The probe library: \p Explicit (--probe) if given, else $OPTIML_PROBE,
/// else lib/liboptiml-probe.so beside the tool's bin/ (empty if the tool's
/// own path is unknown).
std::string findProbeLibrary(const char *Argv0, llvm::StringRef Explicit);

/// The program's arguments and working directory for eval and optimize
/// (--run-arg, --workdir): with a working directory (which must exist) the
/// arguments go as given; without one the program runs in a private
/// directory and relative paths to existing files become absolute (said on
/// \p Log).
llvm::Error setProgramRun(RunnerOptions &R,
                          const std::vector<std::string> &Args,
                          llvm::StringRef WorkDir, llvm::raw_ostream *Log);

/// A client for the configured model, and how it was configured, in words
/// ("model 'm' at host:port, key from OPENAI_API_KEY, enabled by ...").
struct LLMSetup {
  LLMSetup();
  LLMSetup(LLMSetup &&);
  ~LLMSetup();
  std::unique_ptr<llm::ChatClient> Client;
  std::string Description;
};

/// The model configured for \p SourcePath's project: \p Explicit (the
/// options), the environment, .clang-optiml.json from the source's
/// directory up. None when none is configured and nothing requires one; an
/// error when one is configured, or \p RequiredBy ("--policy llm") requires
/// one, but it cannot be used. The client's exchanges are logged on \p Log.
llvm::Expected<std::optional<LLMSetup>>
configureLLM(const llm::LLMSettings &Explicit, llvm::StringRef SourcePath,
             llvm::StringRef RequiredBy, llvm::raw_ostream *Log);

} // namespace optiml

#endif
