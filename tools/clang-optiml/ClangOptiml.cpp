//===- ClangOptiml.cpp - The clang-optiml command line --------------------===//
//
// A thin main: options, then calls into the libraries. Each subcommand is in
// its own *Command.cpp.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "optiml/Support/Secrets.h"
#include "llvm/Support/CommandLine.h"
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
          "profile\n\n"
          "Run 'clang-optiml <subcommand> --help' for a subcommand's "
          "options.\n",
          &errs()))
    return 1;

  if (AnalyzeCommand)
    return runAnalyze(Ctx);
  if (TransformsCommand)
    return runTransforms(Ctx);
  if (ApplyCommand)
    return runApply(Ctx);
  if (EvalCommand)
    return runEval(Ctx);
  if (OptimizeCommand)
    return runOptimize(Ctx);

  errs() << "clang-optiml: no subcommand given; run 'clang-optiml --help'\n";
  return 1;
}
