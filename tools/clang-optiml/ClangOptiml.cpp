//===- ClangOptiml.cpp - The clang-optiml command line --------------------===//
//
// A thin main: options, then calls into the libraries. Each subcommand is in
// its own *Command.cpp.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "optiml/Frontend/Parse.h"
#include "optiml/Support/Secrets.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"
#include <cstring>

using namespace llvm;
using namespace optiml::tool;

static void printVersion(raw_ostream &OS) {
  OS << "clang-optiml " << CLANG_OPTIML_VERSION << " (LLVM "
     << LLVM_VERSION_STRING << ")\n";
}

int main(int Argc, const char **Argv) {
  // Before anything else, no thread or child yet: keys move into memory and
  // out of the environment block children could read in /proc.
  optiml::scrubEnvironmentAtStartup();
  InitLLVM X(Argc, Argv);
  CommandContext Ctx;
  Ctx.Argv0 = Argv[0];

  // Everything after `--` is for clang, not for us.
  int ToolArgc = Argc;
  for (int I = 1; I < Argc; ++I)
    if (std::strcmp(Argv[I], "--") == 0) {
      ToolArgc = I;
      Ctx.ExtraArgs.assign(Argv + I + 1, Argv + Argc);
      break;
    }

  cl::SetVersionPrinter(printVersion);
  registerLLMOptions();
  hideUnrelatedOptions();
  if (!cl::ParseCommandLineOptions(
          ToolArgc, Argv,
          "clang-optiml: find faster, verified versions of CUDA kernels\n\n"
          "  clang-optiml optimize FILE.cu -o OUT.cu   search for a faster, "
          "verified variant\n"
          "  clang-optiml analyze FILE.cu              describe the kernels\n"
          "  clang-optiml transforms FILE.cu           list the edits that "
          "apply\n"
          "  clang-optiml apply FILE.cu --edit E.json  apply checked edits\n"
          "  clang-optiml eval FILE.cu [--against ORIG.cu]\n"
          "                                            build, run, verify and "
          "profile\n"
          "  clang-optiml db list|show|export|prune  the project's tuned "
          "variants\n"
          "  clang-optiml launch -- nvcc ARGS...      compile with a tuned "
          "variant (a build's\n"
          "                                            compiler launcher)\n"
          "  clang-optiml synthesize --spec S.yaml [REQUEST...]\n"
          "                                            write a verified "
          "program from a spec\n\n"
          "Run 'clang-optiml <subcommand> --help' for a subcommand's "
          "options.\n"
          "\nExit status (every subcommand):\n"
          "  0  success: a verified faster variant written, the candidate "
          "passed, the edits applied\n"
          "  1  error: the input does not parse or build, no GPU, I/O, "
          "internal\n"
          "  2  usage error: unknown option, bad or conflicting values\n"
          "  3  a negative verdict: nothing verified faster was found (the "
          "input\n"
          "     is left alone), the candidate failed verification, an edit "
          "was\n"
          "     rejected\n",
          &errs()))
    return ExitUsage;

  int (*Run)(const CommandContext &) = AnalyzeCommand      ? runAnalyze
                                       : TransformsCommand ? runTransforms
                                       : ApplyCommand      ? runApply
                                       : EvalCommand       ? runEval
                                       : OptimizeCommand   ? runOptimize
                                       : DbCommand         ? runDb
                                       : LaunchCommand     ? runLaunch
                                       : SynthesizeCommand ? runSynthesize
                                                           : nullptr;
  if (!Run) {
    errs() << "clang-optiml: no subcommand given; run 'clang-optiml --help'\n";
    return ExitUsage;
  }
  // Parsing, the kernel model's visitors and the edit checks all recurse
  // over the AST: 2000 nested parentheses or a sum of 50,000 terms need far
  // more than the main thread's 8 MB. The subcommand runs on a thread with
  // a large stack (virtual: only what is touched is committed), as clang's
  // own driver does, and a crash there becomes an error message.
  int RC = ExitError;
  CrashRecoveryContext::Enable();
  CrashRecoveryContext CRC;
  if (!CRC.RunSafelyOnThread([&] { RC = Run(Ctx); }, optiml::LargeStackSize)) {
    outs().flush();
    // RetCode is 128 + the signal's number.
    errs() << "clang-optiml: error: internal error: the tool crashed (signal "
           << (CRC.RetCode - 128)
           << ") on this input; nothing was written. Please report it with "
              "the input\n";
    return ExitError;
  }
  return RC;
}
