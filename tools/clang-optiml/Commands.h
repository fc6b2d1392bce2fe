//===- Commands.h - The subcommands of clang-optiml ------------*- C++ -*-===//
//
// Each subcommand lives in its own file with its options (a cl::SubCommand)
// and a run function; ClangOptiml.cpp dispatches. Options shared by all
// subcommands (-p, -v, --cuda-path, ...) are in CommonOptions.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_TOOLS_COMMANDS_H
#define OPTIML_TOOLS_COMMANDS_H

#include "optiml/Driver/Program.h"
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
/// Where -v's notes go: stderr under -v, else none.
llvm::raw_ostream *verboseLog();
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

/// The LLM options' category (LLMOptions.cpp), shared by optimize and
/// synthesize.
extern llvm::cl::OptionCategory LLMCategory;
/// Makes the LLM options (call before parsing the command line).
void registerLLMOptions();

#ifdef OPTIML_WITH_LLM
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

} // namespace tool
} // namespace optiml

#endif
