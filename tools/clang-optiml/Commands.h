//===- Commands.h - The subcommands of clang-optiml ------------*- C++ -*-===//
//
// Each subcommand lives in its own file with its options (a cl::SubCommand)
// and a run function; ClangOptiml.cpp dispatches. Options shared by all
// subcommands (-p, -v, --cuda-path, ...) are in CommonOptions.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_TOOLS_COMMANDS_H
#define OPTIML_TOOLS_COMMANDS_H

#include "optiml/Frontend/Analysis.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

/// The environment variables eval and optimize read, for their --help.
#define OPTIML_ENVIRONMENT_HELP                                                \
  "\nEnvironment:\n"                                                           \
  "  OPTIML_PROBE: the probe library (liboptiml-probe.so)\n"                   \
  "  OPTIML_PROBE_FRESH_PROFILER: 1 (default) sets the range profiler up\n"    \
  "    anew for every profiled launch; 0 keeps one for the whole program\n"    \
  "  OPTIML_METRICS_PER_KERNEL: 1 makes one metrics run per target kernel,\n"  \
  "    each profiling it alone; 0 (default) one run for all of them\n"         \
  "  OPTIML_PASS_ENV: variables the program needs, comma-separated (its\n"     \
  "    environment is otherwise PATH, HOME, locale, CUDA and loader ones)\n"

/// Help of the options eval and optimize both declare (each subcommand
/// declares its own, in its own category).
#define OPTIML_BUILD_ARG_HELP                                                  \
  "An nvcc flag for every build, the original's included (repeatable), "       \
  "after the defaults or the compile database's flags: what the program "      \
  "needs to build at all, e.g. --build-arg=-lcublas --build-arg=-I../inc "     \
  "(relative paths are taken from the working directory)"
#define OPTIML_SOURCE_HELP                                                     \
  "Another source file of the program (repeatable): compiled and linked "      \
  "with it and with the original, never edited (kernels are taken from "       \
  "FILE.cu alone)"
#define OPTIML_WORKDIR_HELP                                                    \
  "Run the program in this directory (default: a private temporary "           \
  "directory per run, where a --run-arg naming an existing file by a "         \
  "relative path is passed as an absolute path)"

namespace optiml {
struct BuildOptions;
class Builder;
struct RunnerOptions;
struct GpuInfo;
namespace db {
class Database;
}
namespace llm {
class ChatClient;
struct LLMSettings;
} // namespace llm
namespace tool {

struct CommandContext {
  const char *Argv0 = nullptr;
  /// Everything after `--`: extra clang arguments for parsing.
  std::vector<std::string> ExtraArgs;
};

/// -p, --cuda-path, --cuda-gpu-arch, --resource-dir, -v and the `--` args.
AnalyzeOptions commonAnalyzeOptions(const CommandContext &Ctx);
bool verbose();
/// Whether to color stdout (LLVM's --color; default: a color terminal).
bool useColor();
/// Hides LLVM's own command-line options from --help (call before parsing).
void hideUnrelatedOptions();

/// Exit statuses, the same for every subcommand (docs/user-guide.md, "Exit
/// status"): scripts tell a negative verdict from a failure.
enum ExitStatus : int {
  /// Done: optimize wrote (or kept) a verified faster variant, eval's
  /// candidate passed, apply's edits were applied.
  ExitSuccess = 0,
  /// Something failed: the input does not parse or build, no GPU, an I/O
  /// error, an internal error.
  ExitError = 1,
  /// The command line is wrong (unknown option, bad or conflicting values);
  /// nothing was done.
  ExitUsage = 2,
  /// The work ran to the end with a negative verdict: optimize found nothing
  /// verified faster (the input is left alone), eval's candidate did not
  /// pass verification, apply's edit was rejected by the checks.
  ExitNotAccepted = 3,
};

/// The exit statuses, for the subcommands' --help.
#define OPTIML_EXIT_STATUS_HELP                                                \
  "\nExit status: 0 success, 1 error, 2 usage error, 3 a negative verdict "    \
  "(docs/user-guide.md)\n"

/// Prints "clang-optiml: error: <message>" and returns ExitError.
int reportError(llvm::Error E);
/// The same for a command-line mistake; returns ExitUsage.
int reportUsageError(llvm::Error E);

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
/// passed, translated and left out is said under -v.
llvm::Error setProgramBuildFlags(BuildOptions &BO, const AnalyzeOptions &AO,
                                 llvm::StringRef File,
                                 llvm::ArrayRef<std::string> BuildArgs);

/// Under -v: which nvcc builds the program, with which flags.
void noteBuilder(const Builder &B);

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
/// directory and relative paths to existing files become absolute (said
/// under -v).
llvm::Error setProgramRun(RunnerOptions &R,
                          const std::vector<std::string> &Args,
                          llvm::StringRef WorkDir);

/// The LLM options' category (LLMOptions.cpp), shared by optimize and
/// synthesize.
extern llvm::cl::OptionCategory LLMCategory;
/// Makes the LLM options (call before parsing the command line).
void registerLLMOptions();

#ifdef OPTIML_WITH_LLM
/// A client for the configured model, and how it was configured, in words
/// ("model 'm' at host:port, key from OPENAI_API_KEY, enabled by ...").
struct LLMSetup {
  LLMSetup();
  LLMSetup(LLMSetup &&);
  ~LLMSetup();
  std::unique_ptr<llm::ChatClient> Client;
  std::string Description;
};
/// The --llm-* options as settings.
llvm::Expected<llm::LLMSettings> explicitLLMSettings();
/// The model configured for \p SourcePath's project (options, environment,
/// .clang-optiml.json from the source's directory up). None when none is
/// configured and nothing requires one; an error when one is configured,
/// or \p RequiredBy ("--policy llm") requires one, but it cannot be used.
llvm::Expected<std::optional<LLMSetup>>
configuredLLM(llvm::StringRef SourcePath, llvm::StringRef RequiredBy = "");
#endif

extern llvm::cl::SubCommand AnalyzeCommand;
int runAnalyze(const CommandContext &Ctx);
extern llvm::cl::SubCommand TransformsCommand;
int runTransforms(const CommandContext &Ctx);
extern llvm::cl::SubCommand ApplyCommand;
int runApply(const CommandContext &Ctx);
extern llvm::cl::SubCommand EvalCommand;
int runEval(const CommandContext &Ctx);
extern llvm::cl::SubCommand OptimizeCommand;
int runOptimize(const CommandContext &Ctx);
extern llvm::cl::SubCommand DbCommand;
int runDb(const CommandContext &Ctx);
extern llvm::cl::SubCommand LaunchCommand;
int runLaunch(const CommandContext &Ctx);
extern llvm::cl::SubCommand SynthesizeCommand;
int runSynthesize(const CommandContext &Ctx);

/// The database optimize records in (--db, the project's config, -p's
/// build directory or .optiml/; docs/db.md), opened for writing. Errors
/// name the file.
llvm::Expected<std::unique_ptr<db::Database>>
openVariantDatabase(llvm::StringRef Explicit, llvm::StringRef SourcePath,
                    llvm::StringRef BuildDir);

/// What optimize records of its verified best.
struct VariantToRecord {
  const ParsedTU *TU = nullptr; ///< the original's parse: the files it read
  llvm::StringRef File;
  /// The main file's text as read (before the parse's normalization).
  llvm::StringRef Original;
  std::vector<std::string> Kernels;
  const GpuInfo *Gpu = nullptr;
  llvm::StringRef NvccVersion;
  std::vector<std::string> NvccFlags;
  llvm::StringRef Source, Diff;
  double Speedup = 1;
  llvm::StringRef Verification; ///< JSON
  std::vector<std::string> VariantFlags;
};

/// Records \p V under its key and says so; a failure is a warning (the
/// variant is written all the same).
void recordVariant(db::Database &DB, const VariantToRecord &V);

} // namespace tool
} // namespace optiml

#endif
