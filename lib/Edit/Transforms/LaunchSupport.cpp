//===- LaunchSupport.cpp - Launch sites, grids, block sizes ---------------===//
//
// The launch-site half of TransformSupport.h.
//
//===----------------------------------------------------------------------===//

#include "../CatalogInternal.h"
#include "TransformSupport.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Support/Sort.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>

using namespace clang;
using namespace llvm;

namespace optiml {

//===--- Launch sites
//------------------------------------------------------===//

const FunctionDecl *lambdaOwner(const FunctionDecl *Caller, const VarDecl *V) {
  const auto *M = dyn_cast_or_null<CXXMethodDecl>(Caller);
  while (M && M->getParent()->isLambda()) {
    const DeclContext *DC = M->getParent()->getDeclContext();
    if (DC == V->getDeclContext())
      return dyn_cast<FunctionDecl>(DC);
    M = dyn_cast<CXXMethodDecl>(DC);
  }
  return nullptr;
}

const CUDAKernelCallExpr *findLaunchCall(const EditContext &Ctx,
                                         const LaunchSite &L) {
  struct Finder : RecursiveASTVisitor<Finder> {
    const SourceManager &SM;
    FileID In;
    unsigned Offset;
    const CUDAKernelCallExpr *Found = nullptr;
    Finder(const SourceManager &SM, FileID In, unsigned Offset)
        : SM(SM), In(In), Offset(Offset) {}
    bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *K) {
      SourceLocation Loc = SM.getExpansionLoc(K->getBeginLoc());
      if (SM.getFileID(Loc) == In && SM.getFileOffset(Loc) == Offset && !Found)
        Found = K;
      return !Found;
    }
  };
  Finder F(Ctx.AST.getSourceManager(), Ctx.file(), L.Range.Begin.Offset);
  traverseUserCode(F, Ctx.AST);
  return F.Found;
}

/// The expression a dim3 config argument was built from: the integer in
/// `g` (implicitly converted) or in `dim3(g)` / `dim3(g, 1)` / `dim3(g, 1, 1)`.
static const Expr *dim3X(const Expr *A, const ASTContext &AST, bool &Is1D) {
  Is1D = false;
  A = A->IgnoreParenImpCasts();
  if (const auto *M = dyn_cast<MaterializeTemporaryExpr>(A))
    A = M->getSubExpr()->IgnoreParenImpCasts();
  if (const auto *B = dyn_cast<CXXBindTemporaryExpr>(A))
    A = B->getSubExpr()->IgnoreParenImpCasts();
  if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(A))
    A = FC->getSubExpr()->IgnoreParenImpCasts();
  if (A->getType()->isIntegerType()) {
    Is1D = true;
    return A;
  }
  const auto *CE = dyn_cast<CXXConstructExpr>(A);
  if (!CE || CE->getNumArgs() == 0)
    return nullptr;
  const Expr *X = CE->getArg(0)->IgnoreParenImpCasts();
  if (!X->getType()->isIntegerType())
    return nullptr;
  Is1D = true;
  for (unsigned I = 1; I < CE->getNumArgs(); ++I) {
    const Expr *D = CE->getArg(I);
    if (isa<CXXDefaultArgExpr>(D))
      continue;
    auto V = intValue(D->IgnoreParenImpCasts(), AST);
    if (!V || *V != 1)
      Is1D = false;
  }
  return X;
}

/// \p P is a pair of parentheses a macro's body writes (around an argument,
/// `k<<<(g), (b)>>>`, or around its whole body).
static bool bodyParens(const SourceManager &SM, const ParenExpr *P) {
  SmallVector<SourceLocation, 2> Uses;
  return P && P->getLParen().isMacroID() && P->getRParen().isMacroID() &&
         throughArguments(SM, P->getLParen(), Uses).isMacroID() &&
         throughArguments(SM, P->getRParen(), Uses).isMacroID();
}

std::optional<SourceSpan> spelledSpan(const EditContext &Ctx, const Expr *E) {
  const SourceManager &SM = Ctx.AST.getSourceManager();
  // Parentheses a macro's body puts around an argument stay where they
  // are: the argument inside is what is written.
  while (containsMacro(E)) {
    if (auto S = constantMacroSpan(Ctx, E))
      return S;
    const auto *P = dyn_cast<ParenExpr>(E->IgnoreImplicit());
    if (!bodyParens(SM, P))
      return std::nullopt;
    E = P->getSubExpr();
  }
  return fileSpan(SM, Ctx.AST.getLangOpts(), E->getSourceRange(), Ctx.file());
}

std::string spelledText(const EditContext &Ctx, const Expr *E) {
  if (containsMacro(E))
    if (std::string T = constantMacroText(Ctx, E); !T.empty())
      return T;
  auto S = spelledSpan(Ctx, E);
  return S ? Ctx.Code.slice(S->Begin.Offset, S->End.Offset).str() : "";
}

std::optional<SourceSpan> gridSpan(const EditContext &Ctx, const Expr *E) {
  if (auto S = spelledSpan(Ctx, E))
    return S;
  const SourceManager &SM = Ctx.AST.getSourceManager();
  const LangOptions &LO = Ctx.AST.getLangOpts();
  while (true) {
    SourceLocation B, End, AtB, AtE;
    if (writtenEnds(SM, E, B, End) && B.isMacroID() && End.isMacroID() &&
        SM.getExpansionLoc(B) == SM.getExpansionLoc(End) &&
        Lexer::isAtStartOfMacroExpansion(B, SM, LO, &AtB) &&
        Lexer::isAtEndOfMacroExpansion(End, SM, LO, &AtE) && AtB.isFileID() &&
        AtE.isFileID())
      return fileSpan(SM, LO, SourceRange(AtB, AtE), Ctx.file());
    const auto *P = dyn_cast<ParenExpr>(E->IgnoreImplicit());
    if (!bodyParens(SM, P))
      return std::nullopt;
    E = P->getSubExpr();
  }
}

/// The text of gridSpan() (empty without one).
std::string gridText(const EditContext &Ctx, const Expr *E) {
  auto S = gridSpan(Ctx, E);
  return S ? Ctx.Code.slice(S->Begin.Offset, S->End.Offset).str() : "";
}

std::string gridPartText(const EditContext &Ctx, const Expr *E) {
  std::string T = spelledText(Ctx, E);
  return T.empty() ? macroBodyText(Ctx, E) : T;
}

std::optional<GridExpr> grid1D(const EditContext &Ctx, const LaunchSite &L,
                               std::string &WhyNot) {
  if (L.InMacro && !L.GridInPlace) {
    WhyNot = macroGridProblem(L);
    return std::nullopt;
  }
  const CUDAKernelCallExpr *K = findLaunchCall(Ctx, L);
  if (!K || !K->getConfig() || K->getConfig()->getNumArgs() < 1) {
    WhyNot = "launch " + L.Id + " was not found in the AST";
    return std::nullopt;
  }
  bool Is1D = false;
  const Expr *X = dim3X(K->getConfig()->getArg(0), Ctx.AST, Is1D);
  if (!X || !Is1D) {
    WhyNot = "the grid of " + L.Id + " ('" + L.Grid +
             "') is not a one-dimensional integer expression";
    return std::nullopt;
  }
  // As written (constant macros in it included), or one macro's whole
  // invocation (`DIV_UP(n, 256)`: X with the parentheses of its body, which
  // dim3X() looks through); through a launch macro, inside the
  // invocation's argument that spells the grid in place.
  // The first children from the launch's argument down to X (a dim3's
  // construction, casts, parentheses): Wrapped is the first of them that
  // is X under its parentheses and casts.
  SmallVector<const Expr *, 8> Chain;
  for (const Expr *C = K->getConfig()->getArg(0);;) {
    Chain.push_back(C);
    auto Child = C->child_begin();
    if (C == X || Child == C->child_end() || !isa_and_nonnull<Expr>(*Child))
      break;
    C = cast<Expr>(*Child);
  }
  auto *W = llvm::find_if(
      Chain, [&](const Expr *C) { return C->IgnoreParenImpCasts() == X; });
  if (W == Chain.end()) {
    Chain.assign(1, X);
    W = Chain.begin();
  }
  const Expr *Wrapped = *W;
  auto Span = gridSpan(Ctx, Wrapped);
  bool Inside =
      !L.InMacro || (Span && Span->Begin.Offset >= L.GridRange.Begin.Offset &&
                     Span->End.Offset <= L.GridRange.End.Offset);
  if (!Span || isa<CXXDefaultArgExpr>(X) || !Inside) {
    WhyNot = "the grid of " + L.Id + " cannot be rewritten in place";
    return std::nullopt;
  }
  GridExpr G;
  G.E = X;
  G.Span = *Span;
  G.Text = Ctx.Code.slice(Span->Begin.Offset, Span->End.Offset).str();
  // A grid that is one macro's whole expansion (`DIV_UP(N, 256)`, `GRID`)
  // stays one value in the text it is put into: in parentheses unless the
  // macro's body is one value in parentheses.
  const SourceManager &SM = Ctx.AST.getSourceManager();
  const LangOptions &LO = Ctx.AST.getLangOpts();
  bool Lone = false, InParens = false;
  for (const Expr *C : llvm::make_range(W, Chain.end())) {
    SourceLocation B, E;
    if (writtenEnds(SM, C, B, E) && B.isMacroID() && E.isMacroID() && B != E &&
        SM.getExpansionLoc(B) == SM.getExpansionLoc(E) &&
        Lexer::isAtStartOfMacroExpansion(B, SM, LO) &&
        Lexer::isAtEndOfMacroExpansion(E, SM, LO)) {
      Lone = true;
      InParens = InParens || isa<ParenExpr>(C->IgnoreImplicit());
    }
  }
  if (Lone && !InParens)
    G.Text = "(" + G.Text + ")";
  return G;
}

/// \p E computes a value from variables, constants and arithmetic alone:
/// written twice, it is read twice with no other effect.
static bool plainArithmetic(const Expr *E) {
  E = E->IgnoreParenCasts();
  if (isa<DeclRefExpr, IntegerLiteral, UnaryExprOrTypeTraitExpr>(E))
    return true;
  if (const auto *M = dyn_cast<MemberExpr>(E))
    return plainArithmetic(M->getBase());
  if (const auto *U = dyn_cast<UnaryOperator>(E))
    return (U->getOpcode() == UO_Minus || U->getOpcode() == UO_Plus) &&
           plainArithmetic(U->getSubExpr());
  if (const auto *B = dyn_cast<BinaryOperator>(E))
    return (B->isAdditiveOp() || B->isMultiplicativeOp() || B->isShiftOp()) &&
           plainArithmetic(B->getLHS()) && plainArithmetic(B->getRHS());
  return false;
}

using LitFn = function_ref<std::optional<int64_t>(const Expr *)>;

static const BinaryOperator *asOp(const Expr *X, BinaryOperatorKind Op) {
  const auto *B = dyn_cast<BinaryOperator>(X->IgnoreParenImpCasts());
  return B && B->getOpcode() == Op ? B : nullptr;
}

/// The remainder `E % B` that \p T tests for being nonzero (`E % B != 0`,
/// `E % B > 0`, `0 != E % B`, `0 < E % B`, `E % B ? 1 : 0`, `!!(E % B)`),
/// with \p Bare also `E % B` itself; or, with \p Zero, for being zero
/// (`E % B == 0`, `0 == E % B`, `!(E % B)`). Null otherwise.
static const BinaryOperator *remainderTest(const Expr *T, LitFn Lit, bool Bare,
                                           bool Zero = false) {
  T = T->IgnoreParenImpCasts();
  if (const auto *N = dyn_cast<UnaryOperator>(T);
      N && N->getOpcode() == UO_LNot) {
    if (Zero)
      return asOp(N->getSubExpr(), BO_Rem);
    if (const auto *N2 =
            dyn_cast<UnaryOperator>(N->getSubExpr()->IgnoreParenImpCasts());
        N2 && N2->getOpcode() == UO_LNot)
      return asOp(N2->getSubExpr(), BO_Rem);
    return nullptr;
  }
  if (Zero) {
    const auto *Cmp = asOp(T, BO_EQ);
    if (!Cmp)
      return nullptr;
    if (const auto *R = asOp(Cmp->getLHS(), BO_Rem);
        R && Lit(Cmp->getRHS()) == 0)
      return R;
    if (const auto *R = asOp(Cmp->getRHS(), BO_Rem);
        R && Lit(Cmp->getLHS()) == 0)
      return R;
    return nullptr;
  }
  if (const auto *C = dyn_cast<ConditionalOperator>(T))
    return Lit(C->getTrueExpr()) == 1 && Lit(C->getFalseExpr()) == 0
               ? asOp(C->getCond(), BO_Rem)
               : nullptr;
  if (Bare)
    if (const auto *R = asOp(T, BO_Rem))
      return R;
  const auto *Cmp = dyn_cast<BinaryOperator>(T);
  if (!Cmp)
    return nullptr;
  // The remainder's side first: a constant E % B folds to a value too.
  BinaryOperatorKind Op = Cmp->getOpcode();
  if (const auto *R = asOp(Cmp->getLHS(), BO_Rem);
      R && (Op == BO_NE || Op == BO_GT) && Lit(Cmp->getRHS()) == 0)
    return R;
  if (const auto *R = asOp(Cmp->getRHS(), BO_Rem);
      R && (Op == BO_NE || Op == BO_LT) && Lit(Cmp->getLHS()) == 0)
    return R;
  return nullptr;
}

/// The quotient \p Quot and the remainder \p Rem are of the same plain
/// E (read more than once, as written) by the same constant B >= 1.
static std::optional<CeilDiv>
sameDivision(const BinaryOperator *Quot, const BinaryOperator *Rem, LitFn Lit) {
  std::optional<int64_t> B = Lit(Quot->getRHS());
  if (!B || *B < 1 || Lit(Rem->getRHS()) != B ||
      !plainArithmetic(Quot->getLHS()) ||
      !sameValueExpr(Quot->getLHS(), Rem->getLHS()))
    return std::nullopt;
  CeilDiv C;
  C.Numerator = Quot->getLHS();
  C.Divisor = *B;
  C.DivisorExpr = Quot->getRHS();
  return C;
}

/// `E / B + (E % B != 0)`: ceil(E / B) for E >= 0, with the remainder's
/// test one of remainderTest()'s, on either side of the `+`.
static std::optional<CeilDiv> ceilDivByRemainder(const BinaryOperator *Add,
                                                 LitFn Lit) {
  for (int Side = 0; Side < 2; ++Side) {
    const BinaryOperator *Quot =
        asOp(Side ? Add->getRHS() : Add->getLHS(), BO_Div);
    const BinaryOperator *Rem = remainderTest(
        Side ? Add->getLHS() : Add->getRHS(), Lit, /*Bare=*/false);
    if (Quot && Rem)
      return sameDivision(Quot, Rem, Lit);
  }
  return std::nullopt;
}

/// `E % B != 0 ? E / B + 1 : E / B` (any test of remainderTest(), the
/// remainder alone included: `E % B ? ...`; `1 + E / B` too), or with a
/// test for zero and the branches swapped (`E % B == 0 ? E / B : E / B +
/// 1`): ceil(E / B) for E >= 0, the CUDA samples' `iDivUp`.
static std::optional<CeilDiv> ceilDivBySelect(const ConditionalOperator *C,
                                              LitFn Lit) {
  const Expr *Up = C->getTrueExpr(), *Down = C->getFalseExpr();
  const BinaryOperator *Rem = remainderTest(C->getCond(), Lit, /*Bare=*/true);
  if (!Rem) {
    Rem = remainderTest(C->getCond(), Lit, /*Bare=*/false, /*Zero=*/true);
    std::swap(Up, Down);
  }
  const BinaryOperator *Quot = asOp(Down, BO_Div), *Plus = asOp(Up, BO_Add);
  if (!Rem || !Quot || !Plus)
    return std::nullopt;
  const BinaryOperator *Quot2 = nullptr;
  if (Lit(Plus->getRHS()) == 1)
    Quot2 = asOp(Plus->getLHS(), BO_Div);
  else if (Lit(Plus->getLHS()) == 1)
    Quot2 = asOp(Plus->getRHS(), BO_Div);
  auto CD = Quot2 ? sameDivision(Quot, Rem, Lit) : std::nullopt;
  if (!CD || Lit(Quot2->getRHS()) != CD->Divisor ||
      !sameValueExpr(Quot->getLHS(), Quot2->getLHS()))
    return std::nullopt;
  return CD;
}

std::optional<CeilDiv>
matchCeilDiv(const Expr *E,
             function_ref<std::optional<int64_t>(const Expr *)> Value) {
  auto Lit = [&](const Expr *X) -> std::optional<int64_t> {
    if (Value)
      return Value(X);
    if (const auto *IL = dyn_cast<IntegerLiteral>(X->IgnoreParenImpCasts()))
      return IL->getValue().getSExtValue();
    return std::nullopt;
  };
  if (const auto *Sel = dyn_cast<ConditionalOperator>(E->IgnoreParenImpCasts()))
    return ceilDivBySelect(Sel, Lit);
  const auto *Div = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
  if (Div && Div->getOpcode() == BO_Add)
    return ceilDivByRemainder(Div, Lit);
  if (!Div || Div->getOpcode() != BO_Div)
    return std::nullopt;
  std::optional<int64_t> DV = Lit(Div->getRHS());
  if (!DV)
    return std::nullopt;
  int64_t B = *DV;
  // The numerator of one of the spelled forms, or null.
  auto Spelled = [&]() -> const Expr * {
    const auto *Num =
        dyn_cast<BinaryOperator>(Div->getLHS()->IgnoreParenImpCasts());
    if (!Num)
      return nullptr;
    // (E + B - 1) parses as ((E + B) - 1).
    if (Num->getOpcode() == BO_Sub && Lit(Num->getRHS()) == 1) {
      const auto *Add =
          dyn_cast<BinaryOperator>(Num->getLHS()->IgnoreParenImpCasts());
      return Add && Add->getOpcode() == BO_Add && Lit(Add->getRHS()) == B
                 ? Add->getLHS()
                 : nullptr;
    }
    if (Num->getOpcode() != BO_Add)
      return nullptr;
    // (E + (B - 1)) and (E + B') with B' == B - 1.
    const Expr *R = Num->getRHS()->IgnoreParenImpCasts();
    if (Lit(R) == B - 1)
      return Num->getLHS();
    if (const auto *Sub = dyn_cast<BinaryOperator>(R);
        Sub && Sub->getOpcode() == BO_Sub && Lit(Sub->getLHS()) == B &&
        Lit(Sub->getRHS()) == 1)
      return Num->getLHS();
    return nullptr;
  };
  CeilDiv C;
  C.Divisor = B;
  C.DivisorExpr = Div->getRHS();
  C.Numerator = Spelled();
  // `E / B` where E is a known multiple of B (`H / 8` with a constexpr
  // H = 1024): ceil(E / B) exactly.
  if (auto NV = Lit(Div->getLHS());
      !C.Numerator && NV && B > 0 && *NV >= 0 && *NV % B == 0)
    C.Numerator = Div->getLHS();
  if (!C.Numerator)
    return std::nullopt;
  return C;
}

std::optional<CeilDiv>
matchCeilDivOrHelper(const Expr *E, const ASTContext &AST,
                     function_ref<std::optional<int64_t>(const Expr *)> Value) {
  if (auto C = matchCeilDiv(E, Value))
    return C;
  const auto *Call = dyn_cast<CallExpr>(E->IgnoreParenImpCasts());
  const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
  const auto *Body =
      FD && FD->hasBody() ? dyn_cast<CompoundStmt>(FD->getBody()) : nullptr;
  const auto *Ret = Body && Body->size() == 1
                        ? dyn_cast<ReturnStmt>(Body->body_front())
                        : nullptr;
  if (!Ret || !Ret->getRetValue() || Call->getNumArgs() != FD->getNumParams())
    return std::nullopt;
  // A parameter stands for the argument the call passes.
  auto Arg = [&](const Expr *X) -> const Expr * {
    const auto *P = dyn_cast_or_null<ParmVarDecl>(referencedDecl(X));
    return P && P->getDeclContext() == FD
               ? Call->getArg(P->getFunctionScopeIndex())
               : nullptr;
  };
  auto InBody = [&](const Expr *X) -> std::optional<int64_t> {
    const Expr *A = Arg(X);
    if (!Value)
      return intValue((A ? A : X)->IgnoreParenImpCasts(), AST);
    return Value(A ? A : X);
  };
  auto C = matchCeilDiv(Ret->getRetValue(), InBody);
  const Expr *N = C ? Arg(C->Numerator) : nullptr;
  // The numerator's parameter narrows nothing; the argument has no side
  // effects (the call read it once, the rewrite reads it once).
  if (!N || N->HasSideEffects(AST) ||
      AST.getTypeSize(C->Numerator->IgnoreParenImpCasts()->getType()) <
          AST.getTypeSize(N->IgnoreParenImpCasts()->getType()))
    return std::nullopt;
  C->Numerator = N;
  if (const Expr *D = Arg(C->DivisorExpr))
    C->DivisorExpr = D;
  return C;
}

/// foldLaunchInteger() at \p Depth steps from the expression asked about.
static std::optional<int64_t> foldLaunchIntegerAt(const Expr *E,
                                                  const ASTContext &AST,
                                                  LaunchFoldLeaf Leaf,
                                                  unsigned Depth) {
  if (!E || Depth > 8)
    return std::nullopt;
  if (auto V = intValue(E, AST))
    return V;
  E = E->IgnoreParenImpCasts();
  const auto *B = dyn_cast<BinaryOperator>(E);
  if (!B)
    return Leaf(E, [&](const Expr *X) {
      return foldLaunchIntegerAt(X, AST, Leaf, Depth + 1);
    });
  auto L = foldLaunchIntegerAt(B->getLHS(), AST, Leaf, Depth + 1);
  auto R = foldLaunchIntegerAt(B->getRHS(), AST, Leaf, Depth + 1);
  if (!L || !R)
    return std::nullopt;
  switch (B->getOpcode()) {
  case BO_Add:
    return *L + *R;
  case BO_Sub:
    return *L - *R;
  case BO_Mul:
    return *L * *R;
  default:
    return std::nullopt;
  }
}

std::optional<int64_t> foldLaunchInteger(const Expr *E, const ASTContext &AST,
                                         LaunchFoldLeaf Leaf) {
  return foldLaunchIntegerAt(E, AST, Leaf, 0);
}

std::string ceilDivGridText(const EditContext &Ctx, const GridExpr &G,
                            int64_t K) {
  // The numerator as spelled inside the grid's span (the grid, checked by
  // grid1D, may be a macro argument spelled in place).
  auto C = matchCeilDiv(G.E);
  auto NS = C ? fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                         C->Numerator->getSourceRange(), Ctx.file())
              : std::nullopt;
  if (NS && NS->Begin.Offset >= G.Span.Begin.Offset &&
      NS->End.Offset <= G.Span.End.Offset) {
    std::string N = Ctx.Code.slice(NS->Begin.Offset, NS->End.Offset).str();
    int64_t B = C->Divisor * K;
    return "(" + N + " + " + std::to_string(B - 1) + ") / " + std::to_string(B);
  }
  std::string Text = G.Text;
  const Expr *E = G.E->IgnoreParenImpCasts();
  bool Tight =
      isa<DeclRefExpr>(E) || isa<IntegerLiteral>(E) || isa<ParenExpr>(G.E) ||
      isa<CallExpr>(E) ||
      (isa<BinaryOperator>(E) && cast<BinaryOperator>(E)->isMultiplicativeOp());
  if (!Tight)
    Text = "(" + Text + ")";
  return "(" + Text + " + " + std::to_string(K - 1) + ") / " +
         std::to_string(K);
}

std::optional<std::vector<int64_t>> launchBlockSizesX(const EditContext &Ctx,
                                                      const KernelInfo &K,
                                                      std::string &WhyNot) {
  std::vector<int64_t> Sizes;
  if (K.Launches.empty()) {
    WhyNot = "kernel '" + K.QualifiedName +
             "' is never launched in this file, "
             "so its block size is unknown";
    return std::nullopt;
  }
  for (const LaunchSite &L : K.Launches) {
    const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
    if (!Call || !Call->getConfig() || Call->getConfig()->getNumArgs() < 2) {
      WhyNot = "launch " + L.Id + " was not found in the AST";
      return std::nullopt;
    }
    const Expr *B = Call->getConfig()->getArg(1);
    bool Is1D = false;
    const Expr *X = dim3X(B, Ctx.AST, Is1D);
    // A local `dim3 block(256);` or `int threads = 256;` (a dim3 variable
    // reaches the launch through its copy constructor).
    if (!X) {
      const Expr *Named = B->IgnoreParenImpCasts();
      if (const auto *Copy = dyn_cast<CXXConstructExpr>(Named);
          Copy && Copy->getNumArgs() == 1 &&
          Copy->getConstructor()->isCopyOrMoveConstructor())
        Named = Copy->getArg(0)->IgnoreParenImpCasts();
      if (const auto *VD = dyn_cast_or_null<VarDecl>(referencedDecl(Named));
          VD && VD->hasInit() && VD->isLocalVarDecl()) {
        const auto *Fn = dyn_cast<FunctionDecl>(VD->getDeclContext());
        if (Fn && Fn->getBody() && !writtenVars(Fn->getBody()).contains(VD))
          X = dim3X(VD->getInit(), Ctx.AST, Is1D);
      }
    }
    std::optional<int64_t> V;
    if (X) {
      V = intValue(X, Ctx.AST);
      if (!V)
        if (const auto *VD = dyn_cast_or_null<VarDecl>(referencedDecl(X));
            VD && VD->hasInit() && VD->isLocalVarDecl()) {
          const auto *Fn = dyn_cast<FunctionDecl>(VD->getDeclContext());
          if (VD->getType().isConstQualified() ||
              (Fn && Fn->getBody() && !writtenVars(Fn->getBody()).contains(VD)))
            V = intValue(VD->getInit(), Ctx.AST);
        }
    }
    if (!V || !Is1D) {
      WhyNot = "the block of " + L.Id + " ('" + L.Block +
               "') is not a one-dimensional constant";
      return std::nullopt;
    }
    Sizes.push_back(*V);
  }
  return Sizes;
}

std::optional<std::string> boundAtLaunch(const EditContext &Ctx,
                                         const Expr *Bound, const LaunchSite &L,
                                         std::string &WhyNot) {
  if (const auto *P = dyn_cast_or_null<ParmVarDecl>(declOf(Bound))) {
    unsigned I = P->getFunctionScopeIndex();
    if (I >= L.Args.size()) {
      WhyNot = L.Id + " passes no argument for '" + P->getName().str() + "'";
      return std::nullopt;
    }
    return L.Args[I];
  }
  if (integerConstantValue(Bound, Ctx.AST))
    return looseExprText(Ctx, Bound);
  WhyNot = "the bound '" + looseExprText(Ctx, Bound) +
           "' is neither a kernel parameter nor a constant, so the launch "
           "cannot size the grid from it";
  return std::nullopt;
}

/// Dimension \p D of the block \p Call launches with, when it is a
/// constant, a `dim3` of constants, or a local variable initialized with one
/// and not written again.
std::optional<int64_t> blockDimAt(const clang::ASTContext &AST,
                                  const clang::CUDAKernelCallExpr *Call,
                                  char D) {
  if (!Call || !Call->getConfig() || Call->getConfig()->getNumArgs() < 2)
    return std::nullopt;
  const clang::Expr *B = Call->getConfig()->getArg(1);
  for (unsigned Hops = 0; Hops < 4; ++Hops) {
    B = B->IgnoreImplicit()->IgnoreParens();
    if (const auto *C = dyn_cast<clang::CXXConstructExpr>(B)) {
      if (C->getNumArgs() == 1 &&
          C->getConstructor()->isCopyOrMoveConstructor()) {
        B = C->getArg(0);
        continue;
      }
      unsigned Idx = D - 'x';
      if (Idx >= C->getNumArgs())
        return std::nullopt;
      const clang::Expr *A = C->getArg(Idx);
      if (const auto *DA = dyn_cast<clang::CXXDefaultArgExpr>(A))
        A = DA->getExpr();
      return intValue(A, AST);
    }
    const auto *V = dyn_cast_or_null<clang::VarDecl>(declOf(B));
    if (V && V->isLocalVarDecl() && V->getInit()) {
      const auto *Fn = dyn_cast<clang::FunctionDecl>(V->getDeclContext());
      if (!V->getType().isConstQualified() &&
          (!Fn || !Fn->getBody() || writtenVars(Fn->getBody()).contains(V)))
        return std::nullopt;
      B = V->getInit();
      continue;
    }
    if (B->getType()->isIntegerType())
      return D == 'x' ? intValue(B, AST) : std::optional<int64_t>(1);
    return std::nullopt;
  }
  return std::nullopt;
}

/// The grid's z at the launch \p L as text: the third argument of a
/// `dim3(x, y, z)`, `g.z` for a `dim3 g`, empty where it is 1 (an integer
/// grid, `dim3(x, y)`), else `(<grid>).z`.
std::string gridZText(const EditContext &Ctx, const LaunchSite &L) {
  const clang::CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
  const clang::Expr *G =
      Call && Call->getConfig() ? Call->getConfig()->getArg(0) : nullptr;
  while (G) {
    G = G->IgnoreImplicit()->IgnoreParenCasts();
    const auto *C = dyn_cast<clang::CXXConstructExpr>(G);
    if (!C)
      break;
    if (C->getNumArgs() == 1 &&
        C->getConstructor()->isCopyOrMoveConstructor()) {
      G = C->getArg(0);
      continue;
    }
    if (C->getNumArgs() < 3 || isa<clang::CXXDefaultArgExpr>(C->getArg(2)))
      return "";
    if (std::string Z = spelledText(Ctx, C->getArg(2)); !Z.empty())
      return Z;
    break;
  }
  if (G && G->getType()->isIntegerType())
    return "";
  if (std::string Name =
          isa_and_nonnull<clang::DeclRefExpr>(G) ? spelledText(Ctx, G) : "";
      !Name.empty())
    return Name + ".z";
  return parenthesize(L.Grid) + ".z";
}

/// Why the \p What of \p L, a launch through a macro, is not in place.
static std::string macroConfigProblem(const LaunchSite &L, StringRef What) {
  return (L.Id + " is written through a macro whose invocation does not " +
          "spell its " + What + " once (written in the macro's body, an " +
          "argument the body uses twice, or one it passes on to another " +
          "macro), so the " + What + " cannot be rewritten in place")
      .str();
}

std::string macroGridProblem(const LaunchSite &L) {
  return macroConfigProblem(L, "grid");
}

std::string macroBlockProblem(const LaunchSite &L) {
  return macroConfigProblem(L, "block");
}

std::string launchProblem(const KernelInfo &K) {
  for (const LaunchSite &L : K.Launches) {
    if (!L.InMacro)
      continue;
    if (!L.GridInPlace)
      return macroGridProblem(L);
    if (!L.BlockInPlace)
      return macroBlockProblem(L);
  }
  return "";
}

std::string cappedGrid(StringRef Grid, int64_t Max) {
  int64_t Literal;
  if (!Grid.trim().getAsInteger(10, Literal))
    return std::to_string(std::min(Literal, Max));
  std::string G = parenthesize(Grid), M = std::to_string(Max);
  return G + " < " + M + " ? " + G + " : " + M;
}

bool gridIsInteger(const EditContext &Ctx, const LaunchSite &L) {
  if (StringRef(L.Grid).contains("dim3"))
    return false;
  const CUDAKernelCallExpr *C = findLaunchCall(Ctx, L);
  if (!C || !C->getConfig() || C->getConfig()->getNumArgs() < 1)
    return false;
  const Expr *G = C->getConfig()->getArg(0)->IgnoreImplicit();
  if (const auto *CE = dyn_cast<CXXConstructExpr>(G))
    if (CE->getNumArgs() >= 1 && !CE->getArg(0)->isDefaultArgument() &&
        CE->getArg(0)->getType()->isIntegerType() &&
        (CE->getNumArgs() < 2 || CE->getArg(1)->isDefaultArgument()))
      G = CE->getArg(0);
  return G->IgnoreParenImpCasts()->getType()->isIntegerType();
}

//===--- Launch macros written out
//-----------------------------------------===//

namespace {
/// A function-like macro's definition, read from its source text.
struct MacroDefinition {
  std::vector<std::string> Params; ///< "__VA_ARGS__" for `...`
  std::vector<Token> Body;
};
} // namespace

/// Raw tokens of the buffer of \p Start from \p Start to \p End (offsets in
/// that buffer), comments dropped; `Lexer::getSpelling` reads them.
static std::vector<Token> rawTokens(const SourceManager &SM,
                                    const LangOptions &LO, SourceLocation Start,
                                    unsigned Length) {
  std::vector<Token> Out;
  FileID F = SM.getFileID(Start);
  StringRef Buf = SM.getBufferData(F);
  unsigned Begin = SM.getFileOffset(Start), Stop = Begin + Length;
  Lexer Lex(SM.getLocForStartOfFile(F), LO, Buf.begin(), Buf.begin() + Begin,
            Buf.end());
  Token T;
  while (!Lex.LexFromRawLexer(T) || T.isNot(tok::eof)) {
    if (T.is(tok::eof) || SM.getFileOffset(T.getLocation()) >= Stop)
      break;
    Out.push_back(T);
  }
  return Out;
}

/// The definition of the macro whose body starts at \p BodyStart and is
/// \p BodyLength bytes long, named \p Name: `#define Name(params) body`
/// read back from the logical line that holds it.
static std::optional<MacroDefinition>
readMacroDefinition(const SourceManager &SM, const LangOptions &LO,
                    StringRef Name, SourceLocation BodyStart,
                    unsigned BodyLength, std::string &WhyNot) {
  FileID F = SM.getFileID(BodyStart);
  StringRef Buf = SM.getBufferData(F);
  unsigned Body = SM.getFileOffset(BodyStart);
  // The start of the logical line: back over lines that end in a backslash.
  size_t LineStart = Buf.rfind('\n', Body ? Body - 1 : 0);
  while (LineStart != StringRef::npos && LineStart > 0) {
    StringRef Before = Buf.substr(0, LineStart).rtrim(" \t\r");
    if (!Before.ends_with("\\"))
      break;
    LineStart = Buf.rfind('\n', LineStart - 1);
  }
  LineStart = LineStart == StringRef::npos ? 0 : LineStart + 1;
  std::vector<Token> Head =
      rawTokens(SM, LO, SM.getLocForStartOfFile(F).getLocWithOffset(LineStart),
                Body - LineStart);
  auto Spell = [&](const Token &T) { return Lexer::getSpelling(T, SM, LO); };
  WhyNot = "the definition of '" + Name.str() + "' could not be read back";
  if (Head.size() < 4 || Head[0].isNot(tok::hash) ||
      Spell(Head[1]) != "define" || Spell(Head[2]) != Name ||
      Head[3].isNot(tok::l_paren) || Head[3].hasLeadingSpace())
    return std::nullopt;
  MacroDefinition D;
  size_t I = 4;
  for (; I < Head.size() && Head[I].isNot(tok::r_paren); ++I) {
    if (Head[I].is(tok::comma))
      continue;
    if (Head[I].is(tok::ellipsis))
      D.Params.push_back("__VA_ARGS__");
    else if (Head[I].is(tok::raw_identifier))
      D.Params.push_back(Spell(Head[I]));
    else
      return std::nullopt;
  }
  if (I + 1 != Head.size())
    return std::nullopt;
  D.Body = rawTokens(SM, LO, BodyStart, BodyLength);
  for (const Token &T : D.Body)
    if (T.isOneOf(tok::hash, tok::hashhash, tok::hashat) ||
        (T.is(tok::raw_identifier) && Spell(T) == "__VA_OPT__")) {
      WhyNot = "'" + Name.str() +
               "' stringizes or pastes tokens ('#', '##' or __VA_OPT__), so "
               "its expansion is not its body with the arguments in place";
      return std::nullopt;
    }
  WhyNot.clear();
  return D;
}

/// The arguments of the invocation \p Invocation (its file text, from the
/// macro's name to the closing parenthesis), each as written; the last is
/// everything from the variadic parameter's place on when \p Variadic.
static std::optional<std::vector<std::string>>
invocationArguments(const SourceManager &SM, const LangOptions &LO,
                    CharSourceRange Invocation, size_t Params, bool Variadic) {
  SourceLocation B = Invocation.getBegin();
  unsigned Begin = SM.getFileOffset(B);
  unsigned End = SM.getFileOffset(Invocation.getEnd());
  if (Invocation.isTokenRange())
    End += Lexer::MeasureTokenLength(Invocation.getEnd(), SM, LO);
  std::vector<Token> Toks = rawTokens(SM, LO, B, End - Begin);
  if (Toks.size() < 3 || Toks[1].isNot(tok::l_paren) ||
      Toks.back().isNot(tok::r_paren))
    return std::nullopt;
  StringRef Buf = SM.getBufferData(SM.getFileID(B));
  auto Offset = [&](const Token &T) {
    return SM.getFileOffset(T.getLocation());
  };
  std::vector<std::pair<unsigned, unsigned>> Args; // [first, last] token
  unsigned Depth = 0, First = 2;
  for (unsigned I = 2; I < Toks.size(); ++I) {
    const Token &T = Toks[I];
    if (T.isOneOf(tok::l_paren, tok::l_square, tok::l_brace))
      ++Depth;
    bool Last = I + 1 == Toks.size();
    bool Split = (T.is(tok::comma) && Depth == 0 &&
                  !(Variadic && Args.size() + 1 == Params)) ||
                 Last;
    if (T.isOneOf(tok::r_paren, tok::r_square, tok::r_brace) && !Last)
      --Depth;
    if (Split) {
      Args.push_back({First, I});
      First = I + 1;
    }
  }
  std::vector<std::string> Out;
  for (auto [F, L] : Args)
    Out.push_back(F == L
                      ? std::string()
                      : Buf.slice(Offset(Toks[F]),
                                  Offset(Toks[L - 1]) + Toks[L - 1].getLength())
                            .str());
  if (Variadic && Out.size() + 1 == Params)
    Out.push_back("");
  if (Out.size() == 1 && Params == 0 && Out[0].empty())
    Out.clear();
  if (Out.size() != Params)
    return std::nullopt;
  return Out;
}

std::optional<std::string>
writeOutLaunchMacros(const EditContext &Ctx, const KernelInfo &K,
                     std::string &WhyNot, std::string *Written, StringRef Only,
                     bool InPlaceToo) {
  const SourceManager &SM = Ctx.AST.getSourceManager();
  const LangOptions &LO = Ctx.AST.getLangOpts();
  tooling::Replacements Repls;
  std::vector<std::string> Names;
  WhyNot.clear();
  // Each launch that can be written out is; one that cannot stays as it
  // is (the transform then refuses it as before).
  for (const LaunchSite &L : K.Launches) {
    if (!L.InMacro || (L.GridInPlace && L.BlockInPlace && !InPlaceToo) ||
        (!Only.empty() && L.Id != Only))
      continue;
    const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
    if (!Call) {
      WhyNot = "launch " + L.Id + " was not found in the AST";
      return std::nullopt;
    }
    // The call's closing parenthesis comes from the body of the macro the
    // file's invocation names, not from an argument or a macro within.
    SourceLocation RParen = Call->getRParenLoc();
    if (!RParen.isMacroID() || SM.isMacroArgExpansion(RParen)) {
      WhyNot = L.Id + " is not the body of one launch macro";
      continue;
    }
    CharSourceRange Inv = SM.getImmediateExpansionRange(RParen);
    StringRef Name = Lexer::getImmediateMacroName(RParen, SM, LO);
    if (!Inv.getBegin().isFileID() || !Inv.getEnd().isFileID() ||
        SM.getFileID(Inv.getBegin()) != Ctx.file()) {
      WhyNot = L.Id + " is written through '" + Name.str() +
               "' inside another macro; only an invocation written in the "
               "file can be written out";
      continue;
    }
    // The macro expands to the launch and nothing else: what else a body
    // does (logging the grid, checking errors) would be left to read a
    // configuration the edit has changed.
    SourceLocation Start, End;
    if (!Lexer::isAtStartOfMacroExpansion(Call->getBeginLoc(), SM, LO,
                                          &Start) ||
        !Lexer::isAtEndOfMacroExpansion(RParen, SM, LO, &End) ||
        Start != Inv.getBegin()) {
      WhyNot = "'" + Name.str() + "' expands to more than the launch of " +
               L.Id + ", so it is not written out";
      continue;
    }
    if (any_of(Repls, [&](const tooling::Replacement &R) {
          return R.getOffset() == SM.getFileOffset(Inv.getBegin());
        }))
      continue;
    FileID Exp = SM.getFileID(RParen);
    const SrcMgr::ExpansionInfo &EI = SM.getSLocEntry(Exp).getExpansion();
    auto Def = readMacroDefinition(SM, LO, Name, EI.getSpellingLoc(),
                                   SM.getFileIDSize(Exp), WhyNot);
    if (!Def)
      continue;
    bool Variadic = !Def->Params.empty() && Def->Params.back() == "__VA_ARGS__";
    auto Args = invocationArguments(SM, LO, Inv, Def->Params.size(), Variadic);
    if (!Args) {
      WhyNot = "the arguments of '" + Name.str() + "' at " +
               SM.getSpellingLoc(Inv.getBegin()).printToString(SM) +
               " could not be read";
      continue;
    }
    // The body with each parameter replaced by its argument as written:
    // what the preprocessor produces, which the edit's checks confirm
    // token by token (host and device side).
    std::string Text;
    for (const Token &T : Def->Body) {
      if (!Text.empty() && (T.hasLeadingSpace() || T.isAtStartOfLine()))
        Text += ' ';
      std::string S = Lexer::getSpelling(T, SM, LO);
      auto P =
          T.is(tok::raw_identifier) ? find(Def->Params, S) : Def->Params.end();
      Text += P == Def->Params.end() ? S : (*Args)[P - Def->Params.begin()];
    }
    unsigned B = SM.getFileOffset(Inv.getBegin());
    unsigned E = SM.getFileOffset(Inv.getEnd());
    if (Inv.isTokenRange())
      E += Lexer::MeasureTokenLength(Inv.getEnd(), SM, LO);
    tooling::Replacement R(
        SM, SM.getLocForStartOfFile(Ctx.file()).getLocWithOffset(B), E - B,
        Text);
    cantFail(Repls.add(R));
    PresumedLoc P = SM.getPresumedLoc(Inv.getBegin());
    Names.push_back("'" + Name.str() + "' at " + std::to_string(P.getLine()) +
                    ":" + std::to_string(P.getColumn()));
  }
  if (Repls.empty()) {
    if (WhyNot.empty())
      WhyNot = "no launch of '" + K.QualifiedName +
               "' is written through a macro that needs writing out";
    return std::nullopt;
  }
  WhyNot.clear();
  auto New = tooling::applyAllReplacements(Ctx.Code, Repls);
  if (!New) {
    WhyNot = toString(New.takeError());
    return std::nullopt;
  }
  if (Written) {
    std::string List = Names.back();
    if (Names.size() > 1)
      List = join(ArrayRef(Names).drop_back(), ", ") + " and " + List;
    *Written = Names.size() == 1
                   ? "the launch macro " + List +
                         " written out as the launch it expands to"
                   : "the launch macros " + List +
                         " written out as the launches they expand to";
  }
  return std::move(*New);
}

} // namespace optiml
