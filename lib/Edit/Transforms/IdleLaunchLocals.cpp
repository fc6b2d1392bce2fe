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
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
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

/// Whether some replacement's text names \p Name.
bool named(StringRef Name, const tooling::Replacements &Repls) {
  return any_of(Repls, [&](const tooling::Replacement &R) {
    return namesIdentifier(R.getReplacementText(), Name);
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

/// The children of \p S where a reference is written: a lambda's explicit
/// captures and body, not the references its implicit captures make (at
/// the capture default, standing for the uses in the body).
SmallVector<const Stmt *, 8> writtenChildren(const Stmt *S) {
  SmallVector<const Stmt *, 8> Out;
  if (const auto *LE = dyn_cast<LambdaExpr>(S)) {
    for (auto [C, Init] : zip(LE->captures(), LE->capture_inits()))
      if (C.isExplicit())
        Out.push_back(Init);
    Out.push_back(LE->getBody());
    return Out;
  }
  append_range(Out, S->children());
  return Out;
}

void writtenRefs(const Stmt *S, const VarDecl *V,
                 std::vector<const DeclRefExpr *> &Out) {
  if (!S)
    return;
  if (const auto *DR = dyn_cast<DeclRefExpr>(S); DR && DR->getDecl() == V)
    Out.push_back(DR);
  for (const Stmt *C : writtenChildren(S))
    writtenRefs(C, V, Out);
}

void localsIn(const Stmt *S, SetVector<const VarDecl *> &Out) {
  if (!S)
    return;
  if (const auto *DR = dyn_cast<DeclRefExpr>(S))
    if (const auto *V = dyn_cast<VarDecl>(DR->getDecl());
        V && V->isLocalVarDecl() && !V->isStaticLocal())
      Out.insert(V);
  for (const Stmt *C : writtenChildren(S))
    localsIn(C, Out);
}

/// The statement declaring \p V, where it stands alone in a block (not a
/// `for`'s or an `if`'s own declaration, whose removal would take the
/// header's `;` or condition with it).
const DeclStmt *declStmtOf(ASTContext &AST, const VarDecl *V) {
  for (const DynTypedNode &N : AST.getParents(*V))
    if (const auto *DS = N.get<DeclStmt>())
      for (const DynTypedNode &P : AST.getParents(*DS))
        if (P.get<CompoundStmt>())
          return DS;
  return nullptr;
}

/// [the name of \p V, the end of its declarator) in the file, or nothing.
std::optional<std::pair<unsigned, unsigned>>
declaratorSpan(const EditContext &Ctx, const VarDecl *V) {
  const SourceManager &SM = Ctx.AST.getSourceManager();
  SourceLocation B = V->getLocation(), E = V->getEndLoc();
  if (!B.isFileID() || !E.isFileID() || SM.getFileID(B) != Ctx.file() ||
      SM.getFileID(E) != Ctx.file())
    return std::nullopt;
  E = Lexer::getLocForEndOfToken(E, 0, SM, Ctx.AST.getLangOpts());
  if (E.isInvalid())
    return std::nullopt;
  return std::pair(SM.getFileOffset(B), SM.getFileOffset(E));
}

/// The removal of the locals \p Gone of \p DS: the whole statement (its
/// line, where nothing else stands on it) when they are all of it, else
/// each declarator (`int threads = 256, blocks = ...;` keeps `int threads
/// = 256;`).
std::vector<tooling::Replacement>
removal(const EditContext &Ctx, const DeclStmt *DS,
        const DenseSet<const VarDecl *> &Gone) {
  std::vector<const VarDecl *> Vs;
  for (const Decl *D : DS->decls())
    Vs.push_back(cast<VarDecl>(D));
  std::vector<tooling::Replacement> Out;
  if (all_of(Vs, [&](const VarDecl *V) { return Gone.contains(V); })) {
    auto S = looseStmtSpan(Ctx, DS);
    if (!S)
      return Out;
    auto [B, E] = ownLines(Ctx.Code, S->Begin.Offset, S->End.Offset);
    Out.emplace_back(Ctx.FileName, B, E - B, "");
    return Out;
  }
  std::vector<std::pair<unsigned, unsigned>> Spans;
  for (const VarDecl *V : Vs) {
    auto S = declaratorSpan(Ctx, V);
    if (!S)
      return {};
    Spans.push_back(*S);
  }
  // Those before the first kept one: from the first's name to the kept
  // one's; each after it: from the end of the one before it.
  size_t Kept =
      find_if(Vs, [&](const VarDecl *V) { return !Gone.contains(V); }) -
      Vs.begin();
  if (Kept > 0)
    Out.emplace_back(Ctx.FileName, Spans[0].first,
                     Spans[Kept].first - Spans[0].first, "");
  for (size_t I = Kept + 1; I < Vs.size(); ++I)
    if (Gone.contains(Vs[I]))
      Out.emplace_back(Ctx.FileName, Spans[I - 1].second,
                       Spans[I].second - Spans[I - 1].second, "");
  return Out;
}

} // namespace

// Why long: the candidates (the locals the configurations name), the
// fixpoint of those that go, then their removal per declaration.
std::vector<tooling::Replacement>
idleLaunchLocals(const EditContext &Ctx, StringRef Kernel,
                 const tooling::Replacements &Repls) {
  const KernelInfo *K = Ctx.Model.findKernel(Kernel.str());
  if (!K || Repls.empty())
    return {};
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
  // The locals that go: each reference replaced or inside the declarator
  // of one that goes (`block` in `dim3 grid((n + block.x - 1) /
  // block.x);`); what one that goes read may go in turn (`t` of `int t =
  // 32; dim3 block(t, t);`).
  DenseSet<const VarDecl *> Gone;
  std::vector<std::pair<unsigned, unsigned>> GoneSpans;
  auto Dropped = [&](unsigned Off) {
    return replaced(Off, Repls) || any_of(GoneSpans, [&](auto S) {
             return Off >= S.first && Off < S.second;
           });
  };
  auto Idle = [&](const VarDecl *V) {
    const auto *FD = dyn_cast<FunctionDecl>(V->getDeclContext());
    if (!FD || !FD->getBody() || V->getType()->isReferenceType() ||
        V->getType().isDestructedType() != QualType::DK_none ||
        !pureInit(V->getInit(), Ctx.AST) || named(V->getName(), Repls))
      return false;
    std::vector<const DeclRefExpr *> Refs;
    writtenRefs(FD->getBody(), V, Refs);
    return all_of(Refs, [&](const DeclRefExpr *DR) {
      auto S = looseExprSpan(Ctx, DR);
      return S && DR->getLocation().isFileID() && Dropped(S->Begin.Offset);
    });
  };
  for (size_t Before = SIZE_MAX; Before != Gone.size();) {
    Before = Gone.size();
    for (size_t I = 0; I < Named.size(); ++I) {
      const VarDecl *V = Named[I];
      const DeclStmt *DS = declStmtOf(Ctx.AST, V);
      auto Span = declaratorSpan(Ctx, V);
      auto S = DS ? looseStmtSpan(Ctx, DS) : std::nullopt;
      // Its declaration is the edit's to remove only where the edit
      // changes nothing else.
      if (Gone.contains(V) || !Span || !S ||
          any_of(Repls,
                 [&](const tooling::Replacement &R) {
                   return R.getOffset() < S->End.Offset &&
                          R.getOffset() + R.getLength() > S->Begin.Offset;
                 }) ||
          !Idle(V))
        continue;
      Gone.insert(V);
      GoneSpans.push_back(*Span);
      localsIn(V->getInit(), Named);
    }
  }
  std::vector<tooling::Replacement> Out;
  DenseSet<const DeclStmt *> Done;
  for (const VarDecl *V : Named)
    if (const DeclStmt *DS = declStmtOf(Ctx.AST, V);
        Gone.contains(V) && Done.insert(DS).second)
      append_range(Out, removal(Ctx, DS, Gone));
  return Out;
}

} // namespace optiml
