//===- IdleLaunchLocals.cpp - locals a rewritten launch leaves unused -----===//
//
// A transform that writes a launch's grid and block anew (`dim3(64, 4)`
// for `block`) leaves the host's `dim3 block(32, 8);` unused, and nvcc
// warns. idleLaunchLocals() finds such declarations so the edit removes
// them too: only locals a launch configuration of the edit's kernel names,
// each of whose references lies inside text the edit replaces, not named
// by the edit's new text, with initializers free of side effects (a dim3
// built from such values included). Removing a declaration nothing reads
// whose initializer does nothing else changes nothing the program does.
//
//===----------------------------------------------------------------------===//

#include "TransformSupport.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;
using namespace llvm;

namespace optiml {

namespace {

bool replaced(unsigned Off, const tooling::Replacements &Repls) {
  return any_of(Repls, [&](const tooling::Replacement &R) {
    return R.getLength() && Off >= R.getOffset() &&
           Off < R.getOffset() + R.getLength();
  });
}

/// Whether some replacement's text names \p Name (a whole identifier).
bool named(StringRef Name, const tooling::Replacements &Repls) {
  auto IsId = [](char C) { return isAlnum(C) || C == '_'; };
  return any_of(Repls, [&](const tooling::Replacement &R) {
    StringRef Text = R.getReplacementText();
    for (size_t At = Text.find(Name); At != StringRef::npos;
         At = Text.find(Name, At + 1))
      if ((At == 0 || !IsId(Text[At - 1])) &&
          (At + Name.size() == Text.size() || !IsId(Text[At + Name.size()])))
        return true;
    return false;
  });
}

/// Whether evaluating \p Init does nothing but compute its value: no side
/// effects, or a constexpr constructor (dim3's) of arguments without any.
bool pureInit(const Expr *Init, const ASTContext &AST) {
  if (!Init)
    return true;
  const Expr *E = Init->IgnoreImplicit();
  if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E))
    E = FC->getSubExpr()->IgnoreImplicit();
  if (const auto *CE = dyn_cast<CXXConstructExpr>(E)) {
    const CXXConstructorDecl *Ctor = CE->getConstructor();
    if (!Ctor || !(Ctor->isConstexpr() || Ctor->isTrivial()))
      return false;
    return all_of(CE->arguments(), [&](const Expr *A) {
      return isa<CXXDefaultArgExpr>(A) || pureInit(A, AST);
    });
  }
  return !E->HasSideEffects(AST);
}

void collectRefs(const Stmt *S, const VarDecl *V,
                 std::vector<const DeclRefExpr *> &Out) {
  if (!S)
    return;
  if (const auto *DR = dyn_cast<DeclRefExpr>(S); DR && DR->getDecl() == V)
    Out.push_back(DR);
  for (const Stmt *C : S->children())
    collectRefs(C, V, Out);
}

void localsIn(const Stmt *S, SetVector<const VarDecl *> &Out) {
  if (!S)
    return;
  if (const auto *DR = dyn_cast<DeclRefExpr>(S))
    if (const auto *V = dyn_cast<VarDecl>(DR->getDecl());
        V && V->isLocalVarDecl() && !V->isStaticLocal())
      Out.insert(V);
  for (const Stmt *C : S->children())
    localsIn(C, Out);
}

const DeclStmt *declStmtOf(ASTContext &AST, const VarDecl *V) {
  for (const DynTypedNode &N : AST.getParents(*V))
    if (const auto *DS = N.get<DeclStmt>())
      return DS;
  return nullptr;
}

} // namespace

// Why long: the candidates (the locals the configurations name), then each
// declaration's every local, reference and initializer.
std::vector<tooling::Replacement>
idleLaunchLocals(const EditContext &Ctx, StringRef Kernel,
                 const tooling::Replacements &Repls) {
  std::vector<tooling::Replacement> Out;
  const KernelInfo *K = Ctx.Model.findKernel(Kernel.str());
  if (!K || Repls.empty())
    return Out;
  SetVector<const VarDecl *> Named;
  for (const LaunchSite &L : K->Launches) {
    if (L.InMacro || L.GridRange.Begin.Offset == 0)
      continue;
    bool Rewritten = any_of(Repls, [&](const tooling::Replacement &R) {
      return R.getLength() && R.getOffset() < L.BlockRange.End.Offset &&
             R.getOffset() + R.getLength() > L.GridRange.Begin.Offset;
    });
    const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
    if (Rewritten && Call && Call->getConfig())
      localsIn(Call->getConfig(), Named);
  }
  // A reference inside a declaration already going goes with it (`block`
  // in `dim3 grid((n + block.x - 1) / block.x);`).
  auto Gone = [&](unsigned Off) {
    return replaced(Off, Repls) ||
           any_of(Out, [&](const tooling::Replacement &R) {
             return Off >= R.getOffset() && Off < R.getOffset() + R.getLength();
           });
  };
  auto Idle = [&](const VarDecl *V, const Stmt *Body) {
    if (!Named.contains(V) || V->getType()->isReferenceType() ||
        V->getType().isDestructedType() != QualType::DK_none ||
        !pureInit(V->getInit(), Ctx.AST) || named(V->getName(), Repls))
      return false;
    std::vector<const DeclRefExpr *> Refs;
    collectRefs(Body, V, Refs);
    return all_of(Refs, [&](const DeclRefExpr *DR) {
      auto S = looseExprSpan(Ctx, DR);
      return S && DR->getLocation().isFileID() && Gone(S->Begin.Offset);
    });
  };
  auto Deletion = [&](const DeclStmt *DS,
                      const VarDecl *V) -> std::optional<tooling::Replacement> {
    const auto *FD = dyn_cast<FunctionDecl>(V->getDeclContext());
    if (!FD || !FD->getBody() || !all_of(DS->decls(), [&](const Decl *D) {
          const auto *DV = dyn_cast<VarDecl>(D);
          return DV && Idle(DV, FD->getBody());
        }))
      return std::nullopt;
    auto S = looseStmtSpan(Ctx, DS);
    if (!S || any_of(Repls, [&](const tooling::Replacement &R) {
          return R.getOffset() < S->End.Offset &&
                 R.getOffset() + R.getLength() > S->Begin.Offset;
        }))
      return std::nullopt;
    unsigned B = S->Begin.Offset, E = S->End.Offset;
    StringRef Code = Ctx.Code;
    size_t LineB = Code.rfind('\n', B ? B - 1 : 0);
    LineB = LineB == StringRef::npos ? 0 : LineB + 1;
    size_t LineE = Code.find('\n', E);
    if (LineE != StringRef::npos &&
        Code.slice(LineB, B).find_first_not_of(" \t") == StringRef::npos &&
        Code.slice(E, LineE).find_first_not_of(" \t") == StringRef::npos) {
      B = LineB;
      E = LineE + 1;
    }
    return tooling::Replacement(Ctx.FileName, B, E - B, "");
  };
  DenseSet<const DeclStmt *> Done;
  // What a declaration that goes read may go in turn (`t` of `int t =
  // 32; dim3 block(t, t);`).
  for (size_t Before = SIZE_MAX; Before != Out.size();) {
    Before = Out.size();
    for (size_t I = 0; I < Named.size(); ++I) {
      const VarDecl *V = Named[I];
      const DeclStmt *DS = declStmtOf(Ctx.AST, V);
      if (!DS || Done.contains(DS))
        continue;
      if (std::optional<tooling::Replacement> R = Deletion(DS, V)) {
        Out.push_back(*R);
        Done.insert(DS);
        localsIn(DS, Named);
      }
    }
  }
  return Out;
}

} // namespace optiml
