//===- CommonOptions.cpp - Options every subcommand takes -----------------===//

#include "Commands.h"
#include "optiml/Edit/Diff.h"
#include "optiml/Eval/BuildFlags.h"
#include "optiml/Eval/Builder.h"
#include "optiml/Eval/Runner.h"
#include "optiml/Frontend/MainFunction.h"
#include "optiml/Support/FileUtil.h"
#include "clang/Frontend/ASTUnit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

namespace optiml {
namespace tool {

static cl::OptionCategory CommonCategory("Common options");

static cl::opt<std::string>
    BuildPath("p",
              cl::desc("Build directory holding compile_commands.json; "
                       "the file's flags (nvcc or clang) are translated "
                       "for parsing and given to nvcc's build"),
              cl::value_desc("build-dir"), cl::sub(cl::SubCommand::getAll()),
              cl::cat(CommonCategory));

static cl::opt<std::string>
    CudaPath("cuda-path",
             cl::desc("CUDA installation (default: $CUDA_PATH, then "
                      "/usr/local/cuda)"),
             cl::value_desc("dir"), cl::sub(cl::SubCommand::getAll()),
             cl::cat(CommonCategory));

static cl::opt<std::string>
    GpuArch("cuda-gpu-arch",
            cl::desc("GPU architecture to parse and build for (default: the "
                     "compilation database's, else sm_90)"),
            cl::value_desc("sm_XX"), cl::sub(cl::SubCommand::getAll()),
            cl::cat(CommonCategory));

static cl::opt<std::string>
    ResourceDir("resource-dir",
                cl::desc("clang's resource directory (default: found beside "
                         "the tool, else the one it was built with)"),
                cl::value_desc("dir"), cl::sub(cl::SubCommand::getAll()),
                cl::cat(CommonCategory));

static cl::opt<bool>
    Verbose("v",
            cl::desc("Say which toolchain and flags are used, and which "
                     "compile-database flags were dropped"),
            cl::sub(cl::SubCommand::getAll()), cl::cat(CommonCategory));

AnalyzeOptions commonAnalyzeOptions(const CommandContext &Ctx) {
  AnalyzeOptions O;
  O.Tools.CudaPath = absolutePath(CudaPath);
  O.Tools.GpuArch = GpuArch;
  O.Tools.ResourceDir = absolutePath(ResourceDir);
  O.Tools.Argv0 = Ctx.Argv0 ? Ctx.Argv0 : "";
  O.BuildDir = absolutePath(BuildPath);
  O.ExtraArgs = Ctx.ExtraArgs;
  if (Verbose)
    O.Verbose = &errs();
  return O;
}

bool verbose() { return Verbose; }

raw_ostream *verboseLog() { return Verbose ? &errs() : nullptr; }

bool useColor() {
  // LLVM's --color=<true|false> (default: autodetect a color terminal).
  return WithColor(outs()).colorsEnabled();
}

void hideUnrelatedOptions() {
  // Linking LLVM registers hundreds of codegen and Polly options at the top
  // level; ours are all attached to subcommands (or to all of them).
  auto Hide = [](cl::SubCommand &Sub) {
    for (auto &Entry : cl::getRegisteredOptions(Sub)) {
      cl::Option *O = Entry.second;
      bool Ours = false;
      for (cl::SubCommand *S : O->Subs)
        Ours |= S != &cl::SubCommand::getTopLevel();
      if (!Ours)
        O->setHiddenFlag(cl::ReallyHidden);
    }
  };
  Hide(cl::SubCommand::getTopLevel());
  for (cl::SubCommand *Sub : cl::getRegisteredSubcommands())
    Hide(*Sub);
}

int reportError(Error E) {
  handleAllErrors(
      std::move(E),
      [](const CompileError &CE) {
        printDiagnostics(errs(), CE.Diags);
        WithColor::error(errs(), "clang-optiml") << CE.message() << "\n";
      },
      [](const ErrorInfoBase &EI) {
        WithColor::error(errs(), "clang-optiml") << EI.message() << "\n";
      });
  return ExitError;
}

int reportUsageError(Error E) {
  reportError(std::move(E));
  return ExitUsage;
}

} // namespace tool
} // namespace optiml
