//===- KernelActions.cpp - Hints and catalog actions for one buffer -------===//

#include "KernelActions.h"
#include "optiml/Edit/Rewriter.h"
#include "optiml/Edit/Transform.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "clang/Frontend/ASTUnit.h"
#include "llvm/ADT/STLExtras.h"

using namespace llvm;

namespace optiml {
namespace lsp {

namespace {

/// Which hints an edit kind addresses (the diagnostics a code action is
/// attached to).
std::vector<std::string> addressedBy(StringRef Kind) {
  std::vector<std::string> Out;
  if (Kind == "launch-bounds")
    Out.push_back("missing-launch-bounds");
  if (Kind.contains("privatize-atomics") || Kind == "warp-reduce")
    Out.push_back("contended-atomics");
  if (Kind.contains("warp-per-row"))
    Out.push_back("row-per-thread");
  if (Kind.contains("transpose") || Kind.contains("shared-tiling") ||
      Kind.contains("vectorize") || Kind.contains("warp-per-row"))
    Out.push_back("strided-access");
  return Out;
}

size_t endOf(const SourcePos &P, size_t Len, size_t Size) {
  return std::min<size_t>(P.Offset + Len, Size);
}

} // namespace

BufferAnalysis analyzeBuffer(StringRef Path, StringRef Text,
                             const AnalyzeOptions &Opts) {
  BufferAnalysis Out;
  auto Config = makeParseConfig(Path, Opts);
  if (!Config) {
    Out.Error = toString(Config.takeError());
    return Out;
  }
  auto TU = parseCuda(Text, Path, *Config, CudaSide::Host);
  if (!TU) {
    Out.Error = toString(TU.takeError());
    return Out;
  }
  if (TU->errorCount()) {
    Out.Error = "the file does not compile";
    return Out;
  }
  // The open buffer's kernels only: offsets of a kernel in a file it
  // includes are in that file, not in this buffer.
  KernelModel Model =
      modelForFile(buildKernelModel(TU->AST->getASTContext()), TU->FileName);
  Model.File = Path.str();
  EditContext Ctx{Path, Text, Model, TU->AST->getASTContext(), *Config};
  size_t Size = Text.size();

  for (const KernelInfo &K : Model.Kernels) {
    if (K.InMacro)
      continue; // its offsets point into a macro, not where a user looks
    size_t SigBegin = K.Range.Begin.Offset;
    size_t SigEnd = std::max(SigBegin, size_t(K.BodyRange.Begin.Offset));
    std::vector<std::pair<size_t, size_t>> Ranges = {
        {K.Range.Begin.Offset, K.Range.End.Offset}};
    for (const LaunchSite &L : K.Launches)
      if (!L.InMacro)
        Ranges.push_back({L.Range.Begin.Offset, L.Range.End.Offset});

    std::vector<Candidate> Cands = listCandidates(Ctx, K);
    std::vector<std::string> Applicable;
    for (const Candidate &C : Cands) {
      if (!C.A.Applies)
        continue;
      Applicable.push_back(C.T->kind().str());
      // The first suggestion of each applicable edit (the catalog's best
      // guess at its parameters); the CLI's transforms lists the others.
      if (C.A.Suggestions.empty())
        continue;
      const Edit &E = C.A.Suggestions.front();
      Offer O;
      O.Kernel = K.QualifiedName;
      O.Kind = C.T->kind().str();
      O.E = E;
      O.Title = "clang-optiml: " + C.T->summary(E) + " for " + K.QualifiedName;
      O.Ranges = Ranges;
      O.Addresses = addressedBy(O.Kind);
      Out.Offers.push_back(std::move(O));
    }
    Out.Optimize.push_back({K.QualifiedName, size_t(K.Range.Begin.Offset),
                            size_t(K.Range.End.Offset)});

    auto Applies = [&](StringRef Sub) {
      return any_of(Applicable, [&](const std::string &A) {
        return StringRef(A).contains(Sub);
      });
    };
    if (K.LaunchBounds.empty() && Applies("launch-bounds"))
      Out.Hints.push_back({SigBegin, SigEnd, true,
                           "kernel '" + K.QualifiedName +
                               "' has no __launch_bounds__: the compiler "
                               "cannot size its registers for the block",
                           "missing-launch-bounds", K.QualifiedName});
    if (Applies("warp-per-row"))
      Out.Hints.push_back({SigBegin, SigEnd, true,
                           "each thread of '" + K.QualifiedName +
                               "' walks a whole row alone; a warp or block "
                               "per row spreads it over threads",
                           "row-per-thread", K.QualifiedName});
    for (const MemoryAccess &A : K.Accesses) {
      if (A.Space != AddressSpace::Global || A.Pos.Offset >= Size)
        continue;
      if (A.IsAtomic && A.Pattern == Coalescing::Uniform)
        Out.Hints.push_back({A.Pos.Offset, endOf(A.Pos, A.Base.size(), Size),
                             false,
                             "atomic on '" + A.Base + "[" + A.Index +
                                 "]': every thread of a warp hits the same "
                                 "address",
                             "contended-atomics", K.QualifiedName});
      else if (!A.IsAtomic && A.Pattern == Coalescing::Strided)
        Out.Hints.push_back(
            {A.Pos.Offset, endOf(A.Pos, A.Base.size(), Size), false,
             "strided global access '" + A.Base + "[" + A.Index + "]'" +
                 (A.Stride ? " (stride " + std::to_string(*A.Stride) + ")"
                           : std::string()) +
                 ": the threads of a warp do not read neighbouring elements",
             "strided-access", K.QualifiedName});
    }
  }
  return Out;
}

Expected<BufferEdit> applyToBuffer(StringRef Path, StringRef Text,
                                   const Edit &E, const AnalyzeOptions &Opts) {
  auto Config = makeParseConfig(Path, Opts);
  if (!Config)
    return Config.takeError();
  auto A = applyEdit(Path, Text, *Config, E);
  if (!A)
    return A.takeError();
  if (A->File != translationUnitFile(Path, ParseConfig()))
    return createStringError(inconvertibleErrorCode(),
                             "the edit rewrites '%s', not this buffer",
                             A->File.c_str());
  BufferEdit Out;
  Out.Summary = A->Summary;
  Out.Changes = lineChanges(Text, A->NewCode);
  Out.NewText = std::move(A->NewCode);
  return Out;
}

} // namespace lsp
} // namespace optiml
