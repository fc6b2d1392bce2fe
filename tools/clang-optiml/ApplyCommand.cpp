//===- ApplyCommand.cpp - clang-optiml apply ------------------------------===//

#include "Commands.h"
#include "optiml/Edit/EditJSON.h"
#include "optiml/Edit/Rewriter.h"
#include "optiml/Support/FileUtil.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace optiml {
namespace tool {

cl::SubCommand ApplyCommand(
    "apply",
    "Apply one edit or a list of edits (JSON, docs/edits.md) as checked "
    "rewrites. Nothing is written unless every edit passes every check.\n\n"
    "  clang-optiml apply saxpy.cu --edit unroll.json            # to stdout\n"
    "  clang-optiml apply saxpy.cu --edit edits.json -o fast.cu\n"
    "  clang-optiml apply needle.cu --edit edits.json -o out/     # a dir\n"
    "  clang-optiml apply saxpy.cu --edit edits.json -i          # in place\n"
    "  clang-optiml apply saxpy.cu --edit edits.json --diff\n"
    "  clang-optiml apply saxpy.cu --edit edits.json --export-fixes "
    "fixes/saxpy.yaml\n"
    "\nDiffs name the file relative to the project root (the directory "
    "holding .git), so `git apply` works there.\n"
    "\nAn edit to a kernel defined in a file the input includes (a header, "
    "an included .cu) rewrites that file: -i rewrites it in place, -o DIR "
    "writes it under DIR at its path relative to the input's directory, "
    "and --diff and --export-fixes name it.\n");

static cl::OptionCategory ApplyCategory("apply options");

static cl::opt<std::string> InputFile(cl::Positional, cl::Required,
                                      cl::desc("<file.cu>"),
                                      cl::sub(ApplyCommand),
                                      cl::cat(ApplyCategory));
static cl::opt<std::string>
    EditFile("edit", cl::Required,
             cl::desc("JSON file with one edit or a list ('-' for stdin)"),
             cl::value_desc("edit.json"), cl::sub(ApplyCommand),
             cl::cat(ApplyCategory));
static cl::opt<std::string> OutputFile(
    "o",
    cl::desc("Write the result here: a file, or a directory (existing or "
             "ending in '/') that gets the changed file under its name"),
    cl::value_desc("out.cu|dir/"), cl::sub(ApplyCommand),
    cl::cat(ApplyCategory));
static cl::opt<bool> InPlace("i",
                             cl::desc("Replace the input file (atomically, "
                                      "only if every edit passes)"),
                             cl::sub(ApplyCommand), cl::cat(ApplyCategory));
static cl::opt<bool> ShowDiff("diff",
                              cl::desc("Print a unified diff instead of the "
                                       "new file"),
                              cl::sub(ApplyCommand), cl::cat(ApplyCategory));
static cl::opt<std::string> ExportFixes(
    "export-fixes",
    cl::desc("Write the change as YAML replacements for "
             "clang-apply-replacements (as clang-tidy --export-fixes does); "
             "the input is left alone"),
    cl::value_desc("fixes.yaml"), cl::sub(ApplyCommand),
    cl::cat(ApplyCategory));
static cl::opt<bool> Json("json",
                          cl::desc("Print the outcome as JSON (applied edits "
                                   "with their diffs, or the failed checks)"),
                          cl::sub(ApplyCommand), cl::cat(ApplyCategory));
static cl::opt<bool> AllowPrintf("allow-printf",
                                 cl::desc("Allow printf in device code"),
                                 cl::sub(ApplyCommand), cl::cat(ApplyCategory));
static cl::opt<bool> AllowMalloc("allow-malloc",
                                 cl::desc("Allow malloc/free/new in device "
                                          "code"),
                                 cl::sub(ApplyCommand), cl::cat(ApplyCategory));
static cl::opt<bool> AllowAsm("allow-asm", cl::desc("Allow inline asm"),
                              cl::sub(ApplyCommand), cl::cat(ApplyCategory));

static int reportRejection(const EditRejected &R) {
  // A rejection is the checks' verdict on the edit, not a failure.
  if (Json) {
    outs() << rejectionToJSON(R) << "\n";
    return ExitNotAccepted;
  }
  WithColor::error(errs(), "clang-optiml") << R.message() << "\n";
  for (size_t I = 1; I < R.Failures.size(); ++I)
    WithColor::note(errs(), "clang-optiml") << R.Failures[I].str() << "\n";
  errs() << "clang-optiml: nothing was written\n";
  return ExitNotAccepted;
}

int runApply(const CommandContext &Ctx) {
  int Modes =
      (OutputFile.empty() ? 0 : 1) + (InPlace ? 1 : 0) + (ShowDiff ? 1 : 0);
  if (Modes > 1)
    return reportUsageError(createStringError(
        inconvertibleErrorCode(), "-o, -i and --diff are mutually exclusive"));
  if (InPlace && !ExportFixes.empty())
    return reportUsageError(createStringError(
        inconvertibleErrorCode(),
        "-i and --export-fixes are mutually exclusive (the fixes apply to "
        "the file as it is)"));

  auto Buf = MemoryBuffer::getFileOrSTDIN(EditFile, /*IsText=*/true);
  if (!Buf)
    return reportError(createStringError(Buf.getError(), "cannot read '%s': %s",
                                         EditFile.c_str(),
                                         Buf.getError().message().c_str()));
  auto Edits = parseEdits((*Buf)->getBuffer());
  if (!Edits)
    return reportError(createStringError(inconvertibleErrorCode(),
                                         "in '%s': %s", EditFile.c_str(),
                                         toString(Edits.takeError()).c_str()));

  auto A = analyzeFile(InputFile, commonAnalyzeOptions(Ctx));
  if (!A)
    return reportError(A.takeError());
  // The first edit's target is checked against the input's model now (later
  // ones apply to text that does not exist yet). replace-function may also
  // name a __device__ function, which the model does not list.
  if (Error Err = validateTarget(Edits->front(), A->Model,
                                 Edits->size() == 1 ? "edit" : "edits[0]")) {
    if (Edits->front().Kind != "replace-function")
      return reportError(std::move(Err));
    consumeError(std::move(Err));
  }

  CheckOptions Opts;
  Opts.AllowPrintf = AllowPrintf;
  Opts.AllowMalloc = AllowMalloc;
  Opts.AllowAsm = AllowAsm;

  auto Result = applyEdits(A->Path, A->Code, A->Config, *Edits, Opts, &A->TU);
  if (!Result) {
    int RC = 1;
    handleAllErrors(
        Result.takeError(),
        [&](const EditRejected &R) { RC = reportRejection(R); },
        [&](std::unique_ptr<ErrorInfoBase> EI) {
          RC = reportError(Error(std::move(EI)));
        });
    return RC;
  }

  // The file the edits rewrote: the input, or a file it includes that
  // defines their target kernel.
  const std::string &Changed = Result->File;
  bool Included = Changed != A->Path;
  std::string OldCode = A->Code;
  if (Included) {
    auto Text = readFile(Changed);
    if (!Text)
      return reportError(Text.takeError());
    OldCode = std::move(*Text);
  }
  std::string Dest;
  if (!OutputFile.empty()) {
    auto D = outputPathFor(OutputFile, A->Path, Changed);
    if (!D)
      return reportUsageError(D.takeError());
    Dest = std::move(*D);
  }
  // Outside a git project, a diff of an included file keeps the library's
  // name for it, relative to the input's directory (where the patch goes).
  bool Rename = !Included || sys::fs::exists(projectRoot(A->Path) + "/.git");
  if (Rename) {
    for (AppliedEdit &S : Result->Steps)
      S.Diff = projectRelativeDiff(S.Diff, Changed);
    Result->Diff = projectRelativeDiff(Result->Diff, Changed);
  }
  // Written before anything else, so a failure leaves nothing half-done.
  if (!ExportFixes.empty()) {
    std::string Message;
    for (const AppliedEdit &S : Result->Steps)
      Message += (Message.empty() ? "" : "; ") + S.Summary;
    if (Error Err = exportFixes(ExportFixes, Changed, OldCode, Result->NewCode,
                                Message))
      return reportError(std::move(Err));
  }

  if (Json) {
    outs() << "[";
    for (size_t I = 0; I < Result->Steps.size(); ++I)
      outs() << (I ? ",\n" : "\n") << appliedEditToJSON(Result->Steps[I]);
    outs() << "\n]\n";
  }
  for (const AppliedEdit &S : Result->Steps) {
    errs() << "applied: " << S.Summary;
    if (S.ChangesPrecision)
      errs() << " (may change floating-point results)";
    errs() << "\n";
  }
  if (!Result->ExtraNvccFlags.empty()) {
    errs() << "nvcc flags:";
    for (const std::string &F : Result->ExtraNvccFlags)
      errs() << " " << F;
    errs() << "\n";
  }

  if (Included)
    errs() << "rewrote: " << Changed << " (included by "
           << sys::path::filename(A->Path) << ")\n";
  if (InPlace || (!Dest.empty() && sys::fs::equivalent(Dest, Changed))) {
    if (Error Err = writeFileAtomically(Changed, Result->NewCode))
      return reportError(std::move(Err));
    return 0;
  }
  if (!Dest.empty()) {
    if (Error Err = writeFileAtomically(Dest, Result->NewCode))
      return reportError(std::move(Err));
    return 0;
  }
  if (Json || (!ExportFixes.empty() && !ShowDiff))
    return 0;
  if (ShowDiff) {
    outs() << Result->Diff;
    return 0;
  }
  outs() << Result->NewCode;
  return 0;
}

} // namespace tool
} // namespace optiml
