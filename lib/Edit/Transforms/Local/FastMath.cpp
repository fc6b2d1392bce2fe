//===- FastMath.cpp - expf -> __expf and friends --------------------------===//
//
// The intrinsics are faster and less accurate, so the edit is marked as
// changing precision: the verifier then compares with wider tolerances.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace clang;

namespace optiml {
namespace {

const std::pair<StringRef, StringRef> Intrinsics[] = {{"expf", "__expf"},
                                                      {"logf", "__logf"},
                                                      {"sinf", "__sinf"},
                                                      {"cosf", "__cosf"},
                                                      {"powf", "__powf"}};

StringRef intrinsicFor(StringRef Name) {
  for (const auto &[From, To] : Intrinsics)
    if (From == Name)
      return To;
  return "";
}

struct MathCall {
  StringRef Name;
  unsigned Offset; ///< of the callee's name in the file
  bool InMacro;
  SourcePos Pos;
};

std::vector<MathCall> findCalls(const EditContext &Ctx,
                                const FunctionDecl *FD) {
  struct V : RecursiveASTVisitor<V> {
    const SourceManager &SM;
    std::vector<MathCall> Calls;
    void note(StringRef Name, SourceLocation Loc) {
      if (intrinsicFor(Name).empty())
        return;
      MathCall C{Name, 0, Loc.isMacroID(), {}};
      SourceLocation F = SM.getExpansionLoc(Loc);
      C.Offset = SM.getFileOffset(F);
      C.Pos = filePos(SM, F);
      Calls.push_back(C);
    }
    bool VisitCallExpr(CallExpr *CE) {
      const Expr *Callee = CE->getCallee()->IgnoreParenImpCasts();
      if (const auto *DR = dyn_cast<DeclRefExpr>(Callee)) {
        if (const auto *F = dyn_cast<FunctionDecl>(DR->getDecl()))
          if (F->getDeclContext()->isTranslationUnit() ||
              F->getDeclContext()->isExternCContext())
            note(F->getName(), DR->getLocation());
      } else if (const auto *UL = dyn_cast<UnresolvedLookupExpr>(Callee)) {
        if (UL->getName().isIdentifier())
          note(UL->getName().getAsIdentifierInfo()->getName(),
               UL->getNameLoc());
      }
      return true;
    }
  } Visitor{{}, Ctx.AST.getSourceManager(), {}};
  Visitor.TraverseStmt(FD->getBody());
  return Visitor.Calls;
}

class FastMath : public Transform {
public:
  /// Launch-independent: it neither reads nor rewrites the launches.
  bool readsLaunches() const override { return false; }
  StringRef kind() const override { return "fast-math"; }
  StringRef description() const override {
    return "replace expf/logf/sinf/cosf/powf with the fast intrinsics "
           "(__expf, ...); changes floating-point results";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    std::vector<std::string> Names;
    for (const auto &P : Intrinsics)
      Names.push_back(P.first.str());
    return {ParamSpec::stringList(
        "functions", "which functions to replace (default: all of them)",
        std::move(Names))};
  }
  bool changesPrecision(const Edit &) const override { return true; }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    const FunctionDecl *FD = findKernelDecl(Ctx.AST, Target);
    if (!FD) {
      A.Reason = "no such kernel";
      return A;
    }
    std::vector<MathCall> Calls = findCalls(Ctx, FD);
    std::vector<std::string> Names;
    unsigned Rewritable = 0;
    for (const MathCall &C : Calls) {
      if (C.InMacro)
        continue;
      ++Rewritable;
      if (!is_contained(Names, C.Name.str()))
        Names.push_back(C.Name.str());
    }
    if (!Rewritable) {
      A.Reason = Calls.empty()
                     ? "the kernel calls none of expf, logf, sinf, cosf, powf"
                     : "its calls of precise math functions are inside macros";
      return A;
    }
    A.Applies = true;
    A.Reason = std::to_string(Rewritable) + " call" +
               (Rewritable == 1 ? "" : "s") + " of " + join(Names, ", ") +
               " can use fast intrinsics (changes precision)";
    A.Suggestions.push_back(Edit{"fast-math", Target.str(), {}});
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    auto K = resolveKernel(Ctx, E, E.Target);
    if (!K)
      return K.takeError();
    std::vector<std::string> Wanted;
    if (auto L = E.getStrings("functions"))
      Wanted = *L;
    tooling::Replacements Repls;
    for (const MathCall &C : findCalls(Ctx, K->Decl)) {
      if (C.InMacro || (!Wanted.empty() && !is_contained(Wanted, C.Name.str())))
        continue;
      if (Error Err = addReplacement(
              Repls,
              tooling::Replacement(Ctx.FileName, C.Offset, C.Name.size(),
                                   intrinsicFor(C.Name)),
              E))
        return std::move(Err);
    }
    if (Repls.empty())
      return reject(E, "not-applicable",
                    "kernel '" + E.Target + "' has no " +
                        (Wanted.empty() ? "expf/logf/sinf/cosf/powf"
                                        : join(Wanted, "/")) +
                        " calls outside macros to replace");
    return Repls;
  }
};

} // namespace

std::unique_ptr<Transform> createFastMathTransform() {
  return std::make_unique<FastMath>();
}

} // namespace optiml
