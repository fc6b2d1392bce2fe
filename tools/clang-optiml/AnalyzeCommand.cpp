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
    "  clang-optiml analyze kernel.cu -- -DN=1024 -Iinclude\n");

static cl::OptionCategory AnalyzeCategory("Analyze options");

static cl::opt<std::string> InputFile(cl::Positional, cl::Required,
                                      cl::desc("<file.cu>"),
                                      cl::sub(AnalyzeCommand),
                                      cl::cat(AnalyzeCategory));

static cl::opt<bool>
    Json("json",
         cl::desc("Print the full kernel model as JSON (docs/analyze.md)"),
         cl::sub(AnalyzeCommand), cl::cat(AnalyzeCategory));

int runAnalyze(const CommandContext &Ctx) {
  auto A = analyzeFile(InputFile, commonAnalyzeOptions(Ctx));
  if (!A)
    return reportError(A.takeError());
  if (Json) {
    outs() << kernelModelToJSON(A->Model) << "\n";
    return 0;
  }
  if (A->Model.Kernels.empty()) {
    outs() << InputFile << ": no CUDA kernels (__global__ functions) found\n";
    return 0;
  }
  printKernelSummary(outs(), A->Model, useColor());
  return 0;
}

} // namespace tool
} // namespace optiml
