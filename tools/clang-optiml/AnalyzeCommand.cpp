//===- AnalyzeCommand.cpp - clang-optiml analyze --------------------------===//

#include "Commands.h"
#include "optiml/Frontend/KernelModelOutput.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace optiml {
namespace tool {

cl::SubCommand AnalyzeCommand(
    "analyze",
    "Describe every kernel in a CUDA file: parameters, launch sites, loops, "
    "memory accesses (coalesced or not), synchronization, and a coarse "
    "class.\n\n"
    "  clang-optiml analyze saxpy.cu\n"
    "  clang-optiml analyze src/solver.cu -p build --json\n"
    "  clang-optiml analyze kernel.cu -- -DN=1024 -Iinclude\n"
    "  clang-optiml analyze src/*.cu --json      # a JSON array, one per file\n"
    "\nWithout -p, each file's compile_commands.json is found as clangd finds "
    "it (walking up from the file, also in build/); a file not in it borrows "
    "its closest neighbour's flags (-v says which).\n");

static cl::OptionCategory AnalyzeCategory("Analyze options");

static cl::list<std::string> InputFiles(cl::Positional, cl::OneOrMore,
                                        cl::desc("<file.cu>..."),
                                        cl::sub(AnalyzeCommand),
                                        cl::cat(AnalyzeCategory));

static cl::opt<bool>
    Json("json",
         cl::desc("Print the full kernel model as JSON (docs/analyze.md)"),
         cl::sub(AnalyzeCommand), cl::cat(AnalyzeCategory));

int runAnalyze(const CommandContext &Ctx) {
  // Several files: each is analysed on its own (its own database entry); a
  // file that fails is reported and the others still are.
  bool Several = InputFiles.size() > 1;
  int RC = ExitSuccess;
  if (Json && Several)
    outs() << "[";
  bool First = true;
  for (const std::string &InputFile : InputFiles) {
    auto A = analyzeFile(InputFile, commonAnalyzeOptions(Ctx));
    if (!A) {
      RC = reportError(A.takeError());
      if (Json && Several) {
        outs() << (First ? "\n" : ",\n") << "null"; // keeps the order
        First = false;
      }
      continue;
    }
    if (Json) {
      outs() << (Several ? (First ? "\n" : ",\n") : "")
             << kernelModelToJSON(A->Model) << (Several ? "" : "\n");
      First = false;
      continue;
    }
    if (A->Model.Kernels.empty()) {
      outs() << InputFile << ": no CUDA kernels (__global__ functions) found\n";
      continue;
    }
    printKernelSummary(outs(), A->Model, useColor());
  }
  if (Json && Several)
    outs() << "\n]\n";
  return RC;
}

} // namespace tool
} // namespace optiml
