//===- VectorizeStencilInput.cpp - vectorize-stencil's index arithmetic ---===//
//
// How the indices of a stencil's reads and store move with x (the thread's
// point along x): which locals depend on it, how much an index grows when x
// grows by one (through locals and index helpers), and an index split into
// its constant and the other terms, by which the reads group into rows.
// And what its launches say: a template argument standing for the bound, a
// constant grid, a launch macro's arguments. VectorizeStencil.cpp matches
// the kernel and rewrites it with these.
//
//===----------------------------------------------------------------------===//

#include "../../Patterns/SideEffects.h"
#include "../TransformSupport.h"
#include "SharedTilingInternal.h"
#include "VectorizeInternal.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;
using namespace llvm;

namespace optiml {
namespace vectorizestencil {

/// Locals whose value depends on \p X (through initializers), \p X
/// included.
DenseSet<const ValueDecl *> dependents(const VarDecl *X,
                                       ArrayRef<const Stmt *> Decls) {
  DenseSet<const ValueDecl *> D{X};
  for (const Stmt *S : Decls)
    if (const auto *DS = dyn_cast<DeclStmt>(S))
      for (const Decl *Dc : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(Dc); V && V->hasInit())
          for (const ValueDecl *Dep : D)
            if (mentions(V->getInit(), Dep)) {
              D.insert(V);
              break;
            }
  return D;
}

bool mentionsAny(const Stmt *S, const DenseSet<const ValueDecl *> &D) {
  return any_of(D, [&](const ValueDecl *V) { return mentions(S, V); });
}

/// How much a call to an index helper grows when x grows by one: each
/// argument's growth times the helper's slope in that parameter.
static std::optional<int64_t> callSlope(const CallExpr *C, const VarDecl *X,
                                        const DenseSet<const ValueDecl *> &Dep,
                                        const ASTContext &AST, unsigned Depth) {
  const FunctionDecl *FD = nullptr;
  const Expr *R = indexHelperReturn(C, AST, FD);
  if (!R)
    return std::nullopt;
  int64_t S = 0;
  for (unsigned I = 0; I < C->getNumArgs(); ++I) {
    auto A = xSlope(C->getArg(I), X, Dep, AST, Depth + 1);
    if (!A)
      return std::nullopt;
    if (*A == 0)
      continue;
    const ParmVarDecl *Pm = FD->getParamDecl(I);
    auto PS = xSlope(R, Pm, DenseSet<const ValueDecl *>{Pm}, AST, Depth + 1);
    if (!PS)
      return std::nullopt;
    S += *PS * *A;
  }
  return S;
}

/// How much \p E grows when x grows by one (locals followed to their
/// initializers, index helpers to what they return), or nothing when that
/// is not a constant.
std::optional<int64_t> xSlope(const Expr *E, const VarDecl *X,
                              const DenseSet<const ValueDecl *> &Dep,
                              const ASTContext &AST, unsigned Depth) {
  if (Depth > 16)
    return std::nullopt;
  E = stripCasts(E);
  if (!mentionsAny(E, Dep))
    return 0;
  if (const auto *C = dyn_cast<CallExpr>(E))
    return callSlope(C, X, Dep, AST, Depth);
  if (const auto *DR = dyn_cast<DeclRefExpr>(E)) {
    if (DR->getDecl() == X)
      return 1;
    const auto *V = dyn_cast<VarDecl>(DR->getDecl());
    if (!V || !V->hasInit())
      return std::nullopt;
    return xSlope(V->getInit(), X, Dep, AST, Depth + 1);
  }
  const auto *B = dyn_cast<BinaryOperator>(E);
  if (!B)
    return std::nullopt;
  auto L = xSlope(B->getLHS(), X, Dep, AST, Depth + 1);
  auto R = xSlope(B->getRHS(), X, Dep, AST, Depth + 1);
  if (!L || !R)
    return std::nullopt;
  switch (B->getOpcode()) {
  case BO_Add:
    return *L + *R;
  case BO_Sub:
    return *L - *R;
  case BO_Mul:
    if (*L == 0)
      if (auto C = intValue(stripCasts(B->getLHS()), AST))
        return *C * *R;
    if (*R == 0)
      if (auto C = intValue(stripCasts(B->getRHS()), AST))
        return *C * *L;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

/// \p E as a sum: its integer constants added into \p Lit, the other terms
/// (with their signs) appended to \p Terms. False when a term has no text.
/// An index helper's call is one term, the constant of its one argument
/// that depends on x moved out: `idx(x - 1, y, w)` is `idx(x, y, w) - 1`
/// when idx grows by one with that parameter.
bool sumTerms(const EditContext &Ctx, const Expr *E, int Sign, int64_t &Lit,
              std::vector<std::pair<int, std::string>> &Terms,
              const DenseSet<const ValueDecl *> &Dep) {
  E = E->IgnoreParenImpCasts();
  if (const auto *B = dyn_cast<BinaryOperator>(E);
      B && (B->getOpcode() == BO_Add || B->getOpcode() == BO_Sub))
    return sumTerms(Ctx, B->getLHS(), Sign, Lit, Terms, Dep) &&
           sumTerms(Ctx, B->getRHS(), B->getOpcode() == BO_Sub ? -Sign : Sign,
                    Lit, Terms, Dep);
  if (auto C = integerConstantValue(E, Ctx.AST)) {
    Lit += Sign * *C;
    return true;
  }
  if (const auto *C = dyn_cast<CallExpr>(stripCasts(E)))
    if (const FunctionDecl *FD = nullptr;
        const Expr *R = indexHelperReturn(C, Ctx.AST, FD)) {
      std::optional<unsigned> K;
      for (unsigned I = 0; I < C->getNumArgs(); ++I)
        if (mentionsAny(C->getArg(I), Dep)) {
          if (K)
            return false;
          K = I;
        }
      const ParmVarDecl *Pm = K ? FD->getParamDecl(*K) : nullptr;
      auto PS = Pm ? xSlope(R, Pm, DenseSet<const ValueDecl *>{Pm}, Ctx.AST)
                   : std::nullopt;
      auto CallSpan = looseExprSpan(Ctx, E);
      auto ArgSpan = K ? looseExprSpan(Ctx, C->getArg(*K)) : std::nullopt;
      if (PS && CallSpan && ArgSpan) {
        int64_t ArgLit = 0;
        std::vector<std::pair<int, std::string>> ArgTerms;
        if (!sumTerms(Ctx, C->getArg(*K), 1, ArgLit, ArgTerms, Dep) ||
            ArgTerms.empty())
          return false;
        std::string Arg;
        for (auto &[S, T] : ArgTerms)
          Arg += Arg.empty() ? (S < 0 ? "-" + parenthesize(T) : T)
                             : (S < 0 ? " - " : " + ") + parenthesize(T);
        Lit += Sign * *PS * ArgLit;
        StringRef Code(Ctx.Code);
        Terms.push_back(
            {Sign, (Code.slice(CallSpan->Begin.Offset, ArgSpan->Begin.Offset) +
                    Arg + Code.slice(ArgSpan->End.Offset, CallSpan->End.Offset))
                       .str()});
        return true;
      }
    }
  std::string T = looseExprText(Ctx, E);
  if (T.empty())
    return false;
  Terms.push_back({Sign, T});
  return true;
}

/// The text of \p A, also where it is an argument of a macro's invocation
/// (`LAUNCH(k<N>, ...)`), spelled there; empty when it has no one place.
static std::string argText(const EditContext &Ctx, const Expr *A) {
  if (std::string T = looseExprText(Ctx, A); !T.empty())
    return T;
  const SourceManager &SM = Ctx.AST.getSourceManager();
  SourceLocation B = A->getBeginLoc(), End = A->getEndLoc();
  if (!SM.isMacroArgExpansion(B) || !SM.isMacroArgExpansion(End))
    return "";
  B = SM.getImmediateSpellingLoc(B);
  End = SM.getImmediateSpellingLoc(End);
  if (!B.isFileID() || !End.isFileID() ||
      SM.getFileID(B) != SM.getFileID(End) ||
      SM.getFileOffset(End) < SM.getFileOffset(B))
    return "";
  return Lexer::getSourceText(CharSourceRange::getTokenRange(B, End), SM,
                              Ctx.AST.getLangOpts())
      .str();
}

/// The value and the text at the launch \p Call of the kernel template's
/// non-type parameter \p B names (`Dim` of `jacobi<N>`): the argument as
/// the launch writes it, else its value. Nothing when \p B is not one.
std::optional<std::pair<int64_t, std::string>>
templateArgAtLaunch(const EditContext &Ctx, const Expr *B,
                    const CUDAKernelCallExpr *Call) {
  const auto *DR = dyn_cast<DeclRefExpr>(B->IgnoreParenImpCasts());
  const auto *TP =
      DR ? dyn_cast<NonTypeTemplateParmDecl>(DR->getDecl()) : nullptr;
  const FunctionDecl *Callee = Call->getDirectCallee();
  const TemplateArgumentList *Args =
      Callee ? Callee->getTemplateSpecializationArgs() : nullptr;
  if (!TP || TP->getDepth() != 0 || !Args || TP->getIndex() >= Args->size() ||
      Args->get(TP->getIndex()).getKind() != TemplateArgument::Integral)
    return std::nullopt;
  const llvm::APSInt &V = Args->get(TP->getIndex()).getAsIntegral();
  if (V.getSignificantBits() > 63)
    return std::nullopt;
  std::pair<int64_t, std::string> Out{V.getExtValue(),
                                      std::to_string(V.getExtValue())};
  if (const auto *CR =
          dyn_cast<DeclRefExpr>(Call->getCallee()->IgnoreParenImpCasts());
      CR && TP->getIndex() < CR->getNumTemplateArgs())
    if (const Expr *A =
            CR->getTemplateArgs()[TP->getIndex()].getSourceExpression())
      if (std::string T = argText(Ctx, A); !T.empty())
        Out.second = T;
  return Out;
}

/// \p L's grid along x when it is a constant equal to ceil(\p N /
/// \p Block) for the bound's constant value \p N (`N / 16` with N a
/// multiple of 16): then, as with coveringExtent, the grid covers exactly
/// the points below the bound. Null otherwise (a grid that depends on a
/// runtime value included); \p Var as coveringExtent sets it.
const Expr *constantCoveringExtent(const EditContext &Ctx, const LaunchSite &L,
                                   int64_t Block, std::optional<int64_t> N,
                                   const VarDecl *&Var) {
  if (!N || *N <= 0 || Block <= 0)
    return nullptr;
  const Expr *G = sharedtiling::gridExtent(Ctx, L, 0, Var);
  if (!G || intValue(G, Ctx.AST) != (*N + Block - 1) / Block)
    return nullptr;
  return G;
}

} // namespace vectorizestencil
} // namespace optiml
