//===- TransformsCommand.cpp - clang-optiml transforms --------------------===//

#include "Commands.h"
#include "optiml/Edit/EditJSON.h"
#include "optiml/Edit/Transform.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/ASTUnit.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <map>

using namespace llvm;

namespace optiml {
namespace tool {

cl::SubCommand TransformsCommand(
    "transforms",
    "List the catalog edits that apply to each kernel, with their "
    "parameters, a reason each applies and edits worth trying (-v: also why "
    "the others do not apply).\n\n"
    "  clang-optiml transforms saxpy.cu\n"
    "  clang-optiml transforms solver.cu --kernel 'ns::step' --json\n"
    "  clang-optiml transforms --schema > edit.schema.json\n"
    "  clang-optiml transforms src/*.cu --json   # a JSON array, one per "
    "file\n");

static cl::OptionCategory TransformsCategory("transforms options");

static cl::list<std::string> InputFiles(cl::Positional,
                                        cl::desc("<file.cu>..."),
                                        cl::sub(TransformsCommand),
                                        cl::cat(TransformsCategory));
static cl::opt<std::string>
    KernelName("kernel", cl::desc("Only this kernel (qualified name)"),
               cl::value_desc("name"), cl::sub(TransformsCommand),
               cl::cat(TransformsCategory));
static cl::opt<bool> Json("json", cl::desc("Print JSON"),
                          cl::sub(TransformsCommand),
                          cl::cat(TransformsCategory));
static cl::opt<bool> Schema(
    "schema",
    cl::desc("Print the JSON Schema of edits (docs/edit.schema.json) and exit"),
    cl::sub(TransformsCommand), cl::cat(TransformsCategory));

/// One file's candidates; prints them (JSON: without a newline).
static int transformsOf(const CommandContext &Ctx, StringRef InputFile) {
  auto A = analyzeFile(InputFile, commonAnalyzeOptions(Ctx));
  if (!A)
    return reportError(A.takeError());
  if (!KernelName.empty() && !A->Model.findKernel(KernelName)) {
    std::string Names;
    for (const KernelInfo &K : A->Model.Kernels)
      Names += (Names.empty() ? "" : ", ") + ("'" + K.QualifiedName + "'");
    return reportError(createStringError(
        inconvertibleErrorCode(), "no kernel named '%s' in '%s' (kernels: %s)",
        KernelName.c_str(), InputFile.str().c_str(),
        Names.empty() ? "none" : Names.c_str()));
  }
  // Each kernel as an edit of the file that defines it sees it: that
  // file's text and kernels (the input, or a user file it includes, whose
  // text is what the parse read from disk).
  clang::ASTContext &AST = A->TU.AST->getASTContext();
  const clang::SourceManager &SM = AST.getSourceManager();
  std::string Input = translationUnitFile(A->Path, ParseConfig());
  std::map<std::string, std::string> Included; // kernel -> its file
  std::vector<KernelCandidates> All;
  for (const KernelInfo &K : A->Model.Kernels) {
    if (!KernelName.empty() && K.QualifiedName != KernelName)
      continue;
    std::string File = K.File.empty() ? Input : K.File;
    ParseConfig Config = A->Config;
    StringRef Code = A->Code;
    if (File != Input) {
      Config.MainFile = Input;
      Code = SM.getBufferData(findFileID(SM, File));
      Included[K.QualifiedName] = File;
    }
    KernelModel View = modelForFile(A->Model, File);
    const KernelInfo *VK = View.findKernel(K.QualifiedName);
    EditContext ECtx{File, Code, View, AST, Config};
    All.push_back({K.QualifiedName, listCandidates(ECtx, *VK)});
  }
  if (Json) {
    outs() << candidatesToJSON(A->Path, All, verbose());
    return 0;
  }
  if (All.empty()) {
    outs() << InputFile << ": no CUDA kernels (__global__ functions) found\n";
    return 0;
  }
  for (const KernelCandidates &K : All) {
    outs() << "kernel " << K.Kernel;
    if (auto It = Included.find(K.Kernel); It != Included.end())
      outs() << " (in " << It->second << ", included by "
             << sys::path::filename(Input) << ")";
    outs() << ":\n";
    unsigned Shown = 0;
    for (const Candidate &C : K.Candidates) {
      if (!C.A.Applies)
        continue;
      ++Shown;
      outs() << "  " << C.T->kind() << " " << C.Target << ": " << C.A.Reason
             << "\n";
      for (const ParamSpec &P : C.T->params())
        outs() << "    param " << describeParam(P) << "\n";
      for (const Edit &E : C.A.Suggestions)
        outs() << "    try " << editToJSON(E) << "\n";
    }
    if (!Shown)
      outs() << "  (no catalog edit applies; -v says why)\n";
    if (!verbose())
      continue;
    for (const Candidate &C : K.Candidates)
      if (!C.A.Applies)
        outs() << "  not " << C.T->kind() << " " << C.Target << ": "
               << C.A.Reason << "\n";
  }
  return 0;
}

int runTransforms(const CommandContext &Ctx) {
  if (Schema) {
    outs() << editJSONSchema();
    return 0;
  }
  if (InputFiles.empty())
    return reportError(createStringError(
        inconvertibleErrorCode(),
        "no input file; run 'clang-optiml transforms FILE.cu'"));
  // Several files: a JSON array, or the text listings one after another; a
  // file that fails is reported and the others still are.
  bool Several = InputFiles.size() > 1;
  int RC = ExitSuccess;
  if (Json && Several)
    outs() << "[\n";
  for (size_t I = 0; I < InputFiles.size(); ++I) {
    if (Json && Several && I)
      outs() << ",\n";
    uint64_t Before = outs().tell();
    if (int R = transformsOf(Ctx, InputFiles[I])) {
      RC = R;
      if (Json && Several && outs().tell() == Before)
        outs() << "null"; // keeps the array's positions the files' order
    }
  }
  if (Json && (Several || RC == ExitSuccess))
    outs() << (Several ? "\n]\n" : "\n");
  return RC;
}

} // namespace tool
} // namespace optiml
