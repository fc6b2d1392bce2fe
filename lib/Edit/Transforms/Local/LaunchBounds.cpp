//===- LaunchBounds.cpp - Add or change __launch_bounds__ -----------------===//
//
// __launch_bounds__(MaxThreads, MinBlocks) lets ptxas budget registers for a
// known block size. A launch with more threads per block than MaxThreads
// fails at run time, so the edit applies only when every launch site's block
// size is a constant no larger than MaxThreads.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace clang;

namespace optiml {
namespace {

/// Threads per block at a launch site when it is a constant.
std::optional<int64_t> constantBlockSize(ASTContext &Ctx, const LaunchSite &L) {
  const SourceManager &SM = Ctx.getSourceManager();
  struct Finder : RecursiveASTVisitor<Finder> {
    const SourceManager &SM;
    FileID In;
    unsigned Offset;
    const CUDAKernelCallExpr *Found = nullptr;
    bool shouldVisitTemplateInstantiations() const { return false; }
    bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *C) {
      SourceLocation B = SM.getExpansionLoc(C->getBeginLoc());
      if (SM.getFileID(B) == In && SM.getFileOffset(B) == Offset)
        Found = C;
      return !Found;
    }
  } F{{}, SM, findFileID(SM, L.File), L.Range.Begin.Offset};
  traverseUserCode(F, Ctx);
  if (!F.Found || !F.Found->getConfig() ||
      F.Found->getConfig()->getNumArgs() < 2)
    return std::nullopt;
  const Expr *Block = F.Found->getConfig()->getArg(1)->IgnoreImplicit();
  if (Block->isValueDependent())
    return std::nullopt;
  // A constant expression, or one over integer locals never written after
  // their initializers (`int threads = 256;`, read by a launch in a lambda
  // too: the lambda's body is part of the function that declares them).
  auto Eval = [&](const Expr *E) -> std::optional<int64_t> {
    if (E->isValueDependent())
      return std::nullopt;
    return launchTimeValue(E, Ctx);
  };
  // dim3(x, y, z) or an integer converted to dim3, also held in a local
  // never written after its initializer (`dim3 threads(8, 8, 8);`).
  while (true) {
    if (const auto *M = dyn_cast<MaterializeTemporaryExpr>(Block)) {
      Block = M->getSubExpr()->IgnoreImplicit();
      continue;
    }
    // dim3(256): a functional cast around the converting constructor.
    if (const auto *F = dyn_cast<CXXFunctionalCastExpr>(Block)) {
      Block = F->getSubExpr()->IgnoreImplicit();
      continue;
    }
    const auto *C = dyn_cast<CXXConstructExpr>(Block);
    const Expr *Ref = C && C->getNumArgs() == 1 && C->getConstructor() &&
                              C->getConstructor()->isCopyOrMoveConstructor()
                          ? C->getArg(0)->IgnoreImplicit()
                          : Block;
    const auto *DR = dyn_cast<DeclRefExpr>(Ref);
    const auto *V = DR ? dyn_cast<VarDecl>(DR->getDecl()) : nullptr;
    if (!V || !V->hasInit() || V->getType()->isReferenceType() || !stableVar(V))
      break;
    Block = V->getInit()->IgnoreImplicit();
  }
  if (const auto *C = dyn_cast<CXXConstructExpr>(Block)) {
    int64_t Threads = 1;
    for (const Expr *A : C->arguments()) {
      if (isa<CXXDefaultArgExpr>(A))
        continue;
      auto V = Eval(A->IgnoreImplicit());
      if (!V)
        return std::nullopt;
      Threads *= *V;
    }
    return Threads;
  }
  return Eval(Block);
}

class LaunchBounds : public Transform {
public:
  StringRef kind() const override { return "launch-bounds"; }
  StringRef description() const override {
    return "add or change __launch_bounds__(max_threads, min_blocks) on a "
           "kernel whose launches all use a constant block size";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec::integer("max_threads",
                           "most threads per block any launch uses", 32, 1024)
            .required(),
        ParamSpec::integer("min_blocks",
                           "blocks per multiprocessor to budget registers for",
                           1, 32)};
  }

  /// The largest constant block size over all launches, or why not known.
  Expected<int64_t> largestBlock(const EditContext &Ctx, const Edit &E,
                                 const KernelInfo &K) const {
    if (K.Launches.empty())
      return reject(E, "not-applicable",
                    "kernel '" + K.QualifiedName +
                        "' is never launched in this file, so its block size "
                        "is unknown");
    int64_t Largest = 0;
    for (const LaunchSite &L : K.Launches) {
      auto B = constantBlockSize(Ctx.AST, L);
      if (!B)
        return reject(E, "not-applicable",
                      "the block size '" + L.Block + "' at " + L.Id +
                          " is not a constant, so a bound cannot be shown "
                          "to hold",
                      L.BlockRange.Begin);
      Largest = std::max(Largest, *B);
    }
    return Largest;
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E{"launch-bounds", Target.str(), {}};
    const KernelInfo *K = Ctx.Model.findKernel(Target.str());
    if (!K) {
      A.Reason = "no such kernel";
      return A;
    }
    if (K->InMacro) {
      A.Reason = "the kernel is defined inside a macro";
      return A;
    }
    auto B = largestBlock(Ctx, E, *K);
    if (!B) {
      A.Reason = rejectionReason(B.takeError());
      return A;
    }
    A.Applies = true;
    A.Reason =
        (K->LaunchBounds.empty()
             ? "no __launch_bounds__ yet"
             : "has __launch_bounds__(" + join(K->LaunchBounds, ", ") + ")") +
        std::string("; every launch uses at most ") + std::to_string(*B) +
        " threads per block";
    // A bound above the largest block holds as well; the parameter's floor
    // is a warp (a launch of 16 or 1 threads gets 32).
    int64_t Bound = std::max<int64_t>(*B, 32);
    for (int64_t MinBlocks : {0, 2, 4}) {
      Edit S{"launch-bounds", Target.str(), {{"max_threads", Bound}}};
      if (MinBlocks)
        S.Params["min_blocks"] = int64_t(MinBlocks);
      A.Suggestions.push_back(S);
    }
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    auto K = resolveKernel(Ctx, E, E.Target);
    if (!K)
      return K.takeError();
    if (K->Info->InMacro)
      return reject(E, "macro", "the kernel is defined inside a macro");
    int64_t Max = *E.getInt("max_threads");
    auto B = largestBlock(Ctx, E, *K->Info);
    if (!B)
      return B.takeError();
    if (*B > Max)
      return reject(E, "not-applicable",
                    "a launch uses " + Twine(*B) +
                        " threads per block, more than max_threads=" +
                        Twine(Max) + " (the launch would fail)");
    std::string Text = "__launch_bounds__(" + std::to_string(Max);
    if (auto Min = E.getInt("min_blocks"))
      Text += ", " + std::to_string(*Min);
    Text += ")";

    const SourceManager &SM = Ctx.AST.getSourceManager();
    tooling::Replacements Repls;
    if (const auto *LB = K->Decl->getAttr<CUDALaunchBoundsAttr>()) {
      CharSourceRange R = SM.getExpansionRange(LB->getRange());
      SourceLocation End = R.getEnd();
      unsigned BO = SM.getFileOffset(R.getBegin());
      unsigned EO =
          SM.getFileOffset(End) +
          (R.isTokenRange()
               ? Lexer::MeasureTokenLength(End, SM, Ctx.AST.getLangOpts())
               : 0);
      // The attribute may be spelled __attribute__((launch_bounds(...))).
      StringRef Old = Ctx.Code.slice(BO, EO);
      if (!Old.starts_with("__launch_bounds__"))
        return reject(E, "not-applicable",
                      "the existing launch bounds are written as '" + Old +
                          "'; only __launch_bounds__(...) is rewritten");
      if (Error Err = addReplacement(
              Repls, tooling::Replacement(Ctx.FileName, BO, EO - BO, Text), E))
        return std::move(Err);
      return Repls;
    }
    SourceLocation Name = SM.getExpansionLoc(K->Decl->getLocation());
    if (Error Err = addReplacement(
            Repls, insertAt(Ctx, SM.getFileOffset(Name), Text + " "), E))
      return std::move(Err);
    return Repls;
  }
};

} // namespace

std::unique_ptr<Transform> createLaunchBoundsTransform() {
  return std::make_unique<LaunchBounds>();
}

} // namespace optiml
