//===- GridCoverage.cpp - Grids shown to cover a kernel's bound -----------===//
//
// The launch-time half of TransformSupport.h's grid facts: what a launch
// passes for a kernel's bound, the value of a grid or block at the launch,
// and whether grid times block reaches the bound (1D grids, and a 2D grid
// whose blocks are counted row by row). Transforms that turn one item per
// thread into a loop over the whole bound (vectorize, grid-stride,
// privatize-atomics, warp-reduce's grid_stride) refuse a launch whose grid
// may stop short.
//
//===----------------------------------------------------------------------===//

#include "../CatalogInternal.h"
#include "TransformSupport.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"

using namespace clang;
using namespace llvm;

namespace optiml {

//===--- Grids that cover a bound
//------------------------------------------===//

namespace {

/// Whether \p T is an integer type of at least 32 bits: a cast to it keeps
/// every grid or bound a launch can use (a grid dimension is 32 bits).
bool wideInteger(QualType T, const ASTContext &AST) {
  return T->isIntegerType() && !T->isBooleanType() && !T->isDependentType() &&
         AST.getTypeSize(T) >= 32;
}

/// Temporaries, functional casts and copies around a configuration value
/// or an aggregate.
const Expr *withoutWrappers(const Expr *E) {
  while (true) {
    E = E->IgnoreParenImpCasts();
    if (const auto *M = dyn_cast<MaterializeTemporaryExpr>(E))
      E = M->getSubExpr();
    else if (const auto *B = dyn_cast<CXXBindTemporaryExpr>(E))
      E = B->getSubExpr();
    else if (const auto *F = dyn_cast<CXXFunctionalCastExpr>(E);
             F && F->getType()->isRecordType())
      E = F->getSubExpr();
    else if (const auto *C = dyn_cast<CXXConstructExpr>(E);
             C && C->getNumArgs() == 1 &&
             C->getConstructor()->isCopyOrMoveConstructor())
      E = C->getArg(0);
    else
      return E;
  }
}

/// Dimension \p Dim of a launch configuration value: an integer (x; y and
/// z are 1), `dim3(x, y, z)` or a stable variable holding one (\p Via set).
/// Null with \p One set for a dimension that is 1 by default; null alone
/// when unknown.
const Expr *configExtent(const Expr *A, unsigned Dim, bool &Via, bool &One) {
  One = false;
  for (unsigned Depth = 0; Depth < 4; ++Depth) {
    A = withoutWrappers(A);
    if (A->getType()->isIntegerType()) {
      One = Dim != 0;
      return Dim == 0 ? A : nullptr;
    }
    if (const auto *C = dyn_cast<CXXConstructExpr>(A)) {
      if (Dim >= C->getNumArgs() || isa<CXXDefaultArgExpr>(C->getArg(Dim))) {
        One = true;
        return nullptr;
      }
      return C->getArg(Dim);
    }
    const auto *V = dyn_cast_or_null<VarDecl>(referencedDecl(A));
    if (!V || !V->hasInit() || !stableVar(V))
      return nullptr;
    Via = true;
    A = V->getInit();
  }
  return nullptr;
}

} // namespace

std::optional<int64_t> launchTimeValue(const Expr *E, const ASTContext &AST) {
  return foldLaunchInteger(
      E, AST,
      [&](const Expr *X, LaunchFoldNext Next) -> std::optional<int64_t> {
        if (const auto *C = dyn_cast<ExplicitCastExpr>(X))
          return wideInteger(C->getType(), AST) ? Next(C->getSubExpr())
                                                : std::nullopt;
        if (const auto *M = dyn_cast<MemberExpr>(X)) {
          StringRef N = M->getMemberDecl()->getName();
          unsigned Dim = N == "x" ? 0 : N == "y" ? 1 : N == "z" ? 2 : 3;
          const auto *V =
              dyn_cast_or_null<VarDecl>(referencedDecl(M->getBase()));
          const auto *R = V ? V->getType()->getAsCXXRecordDecl() : nullptr;
          if (M->isArrow() || Dim > 2 || !R || R->getName() != "dim3")
            return std::nullopt;
          bool Via = false, One = false;
          const Expr *D = configExtent(M->getBase(), Dim, Via, One);
          return One ? std::optional<int64_t>(1) : Next(D);
        }
        const auto *V = dyn_cast_or_null<VarDecl>(referencedDecl(X));
        if (!V || !V->hasInit() || !V->getType()->isIntegerType() ||
            !stableVar(V))
          return std::nullopt;
        return Next(V->getInit());
      });
}

namespace {

/// A grid that is ceil(Numerator / Divisor).
struct GridCeil {
  const Expr *Numerator = nullptr, *Divisor = nullptr;
  std::optional<int64_t> DivisorValue;
};

/// \p G read as ceil(E / D): the forms matchCeilDiv reads (D known at the
/// launch), written out or in a macro, or a call to a helper whose body is
/// `return <that over its parameters>;` (`ceil_div(n, 256)`) whose
/// numerator parameter narrows nothing.
std::optional<GridCeil> gridCeil(const Expr *G, const ASTContext &AST) {
  if (auto C = matchCeilDivOrHelper(
          G, AST, [&](const Expr *X) { return launchTimeValue(X, AST); }))
    return GridCeil{C->Numerator, C->DivisorExpr, C->Divisor};
  // `(E + D - 1) / D` or `(E + (D - 1)) / D` with D known only when the
  // program runs (a block size it is passed), the same stable expression
  // in both places: the caller compares D with the launch's block.
  const auto *Div = dyn_cast<BinaryOperator>(G->IgnoreParenImpCasts());
  if (!Div || Div->getOpcode() != BO_Div || !Div->getType()->isIntegerType())
    return std::nullopt;
  const Expr *D = Div->getRHS();
  auto IsOne = [&](const Expr *X) {
    return intValue(X->IgnoreParenImpCasts(), AST) == std::optional<int64_t>(1);
  };
  auto AsOp = [](const Expr *X, BinaryOperatorKind Op) {
    const auto *B = dyn_cast<BinaryOperator>(X->IgnoreParenImpCasts());
    return B && B->getOpcode() == Op ? B : nullptr;
  };
  const Expr *E = nullptr;
  if (const auto *Sub = AsOp(Div->getLHS(), BO_Sub);
      Sub && IsOne(Sub->getRHS()))
    if (const auto *Add = AsOp(Sub->getLHS(), BO_Add);
        Add && sameValueExpr(Add->getRHS(), D))
      E = Add->getLHS();
  if (const auto *Add = AsOp(Div->getLHS(), BO_Add); !E && Add)
    if (const auto *Sub = AsOp(Add->getRHS(), BO_Sub);
        Sub && IsOne(Sub->getRHS()) && sameValueExpr(Sub->getLHS(), D))
      E = Add->getLHS();
  if (!E || !stableExpr(D, AST) || E->HasSideEffects(AST))
    return std::nullopt;
  return GridCeil{E, D, launchTimeValue(D, AST)};
}

/// \p G without casts to wide integers and stable integer variables
/// (followed to their initializers; \p Via set).
const Expr *gridValueExpr(const Expr *G, const ASTContext &AST, bool &Via) {
  for (unsigned Depth = 0; Depth < 8; ++Depth) {
    G = G->IgnoreParens();
    if (const auto *C = dyn_cast<CastExpr>(G);
        C && (C->getCastKind() == CK_LValueToRValue ||
              wideInteger(C->getType(), AST))) {
      G = C->getSubExpr();
      continue;
    }
    const auto *V = dyn_cast_or_null<VarDecl>(referencedDecl(G));
    if (!V || !V->hasInit() || !V->getType()->isIntegerType() || !stableVar(V))
      return G;
    Via = true;
    G = V->getInit();
  }
  return G;
}

/// The aggregate `{...}` a launch argument passes: written at the launch or
/// a stable variable's initializer (\p Via set).
const InitListExpr *aggregateAt(const Expr *A, bool &Via) {
  for (unsigned Depth = 0; Depth < 4; ++Depth) {
    A = withoutWrappers(A);
    if (const auto *CL = dyn_cast<CompoundLiteralExpr>(A))
      A = withoutWrappers(CL->getInitializer());
    if (const auto *IL = dyn_cast<InitListExpr>(A))
      return IL->isSemanticForm() ? IL : IL->getSemanticForm();
    const auto *V = dyn_cast_or_null<VarDecl>(referencedDecl(A));
    if (!V || !V->hasInit() || !stableVar(V))
      return nullptr;
    Via = true;
    A = V->getInit();
  }
  return nullptr;
}

} // namespace

const Expr *boundExprAtLaunch(const EditContext &Ctx, const Expr *Bound,
                              const CUDAKernelCallExpr *Call, bool &Via,
                              std::string &WhyNot) {
  const Expr *B = Bound->IgnoreParenImpCasts();
  std::string Text = looseExprText(Ctx, Bound);
  if (const auto *P = dyn_cast_or_null<ParmVarDecl>(declOf(Bound))) {
    unsigned I = P->getFunctionScopeIndex();
    if (I >= Call->getNumArgs()) {
      WhyNot = "it passes no argument for '" + P->getName().str() + "'";
      return nullptr;
    }
    return Call->getArg(I);
  }
  if (const auto *M = dyn_cast<MemberExpr>(B); M && !M->isArrow()) {
    const auto *P = dyn_cast_or_null<ParmVarDecl>(referencedDecl(M->getBase()));
    const auto *F = dyn_cast<FieldDecl>(M->getMemberDecl());
    if (P && F && P->getType()->isRecordType() &&
        P->getFunctionScopeIndex() < Call->getNumArgs()) {
      const Expr *Arg = Call->getArg(P->getFunctionScopeIndex());
      const InitListExpr *IL = aggregateAt(Arg, Via);
      unsigned I = F->getFieldIndex();
      if (IL && I < IL->getNumInits() &&
          !isa<ImplicitValueInitExpr>(IL->getInit(I)))
        return IL->getInit(I);
      WhyNot = "the struct it passes for '" + P->getName().str() + "' ('" +
               spelledText(Ctx, Arg) +
               "') is not a '{...}' written at the launch or in the "
               "initializer of a variable never written after, so '" +
               Text + "' cannot be followed";
      return nullptr;
    }
  }
  if (integerConstantValue(Bound, Ctx.AST))
    return Bound;
  WhyNot = "the bound '" + Text +
           "' is neither a kernel parameter, a member of a struct parameter "
           "passed by value, nor a constant";
  return nullptr;
}

namespace {
/// Launch \p L's bound along one axis, its block's extent there, and the
/// grid's (\p Dim; with \p Rows, the count of a 2D grid of blocks).
struct AxisCoverage {
  const CUDAKernelCallExpr *Call = nullptr;
  const Expr *N = nullptr, *Blk = nullptr;
  std::optional<int64_t> BlkV;
  bool BoundVia = false;
  std::string NText, Axis;
};

/// For a bound `p.f`, a member of a struct parameter whose argument at
/// \p Call is a variable `v` (`const Csr &A` passed on): the `v.f` the
/// grid reads (through stable grid variables), the same value when `v` is
/// stable (the caller checks); null otherwise.
const MemberExpr *memberInGrid(const Expr *Bound,
                               const CUDAKernelCallExpr *Call) {
  const auto *M = dyn_cast<MemberExpr>(Bound->IgnoreParenImpCasts());
  const auto *P =
      M && !M->isArrow()
          ? dyn_cast_or_null<ParmVarDecl>(referencedDecl(M->getBase()))
          : nullptr;
  if (!P || P->getFunctionScopeIndex() >= Call->getNumArgs())
    return nullptr;
  const auto *Arg = dyn_cast_or_null<VarDecl>(referencedDecl(
      withoutWrappers(Call->getArg(P->getFunctionScopeIndex()))));
  if (!Arg)
    return nullptr;
  std::vector<const Stmt *> Work = {Call->getConfig()->getArg(0)};
  for (unsigned Seen = 0; !Work.empty() && Seen < 64; ++Seen) {
    const Stmt *S = Work.back();
    Work.pop_back();
    if (!S)
      continue;
    if (const auto *GM = dyn_cast<MemberExpr>(S);
        GM && !GM->isArrow() && GM->getMemberDecl() == M->getMemberDecl() &&
        referencedDecl(GM->getBase()) == Arg)
      return GM;
    if (const auto *V = dyn_cast_or_null<VarDecl>(
            isa<DeclRefExpr>(S) ? referencedDecl(cast<Expr>(S)) : nullptr);
        V && V != Arg && V->hasInit() && stableVar(V))
      Work.push_back(V->getInit());
    append_range(Work, S->children());
  }
  return nullptr;
}

std::string coverageSetUp(const EditContext &Ctx, const LaunchSite &L,
                          const Expr *Bound, unsigned Dim, AxisCoverage &A) {
  A.Call = findLaunchCall(Ctx, L);
  if (!A.Call || !A.Call->getConfig() || A.Call->getConfig()->getNumArgs() < 2)
    return "it was not found in the AST";
  std::string Why;
  A.N = boundExprAtLaunch(Ctx, Bound, A.Call, A.BoundVia, Why);
  if (!A.N) {
    A.N = memberInGrid(Bound, A.Call);
    A.BoundVia = true;
  }
  if (!A.N)
    return Why;
  A.NText = spelledText(Ctx, A.N);
  if (A.NText.empty())
    A.NText = looseExprText(Ctx, A.N);
  A.Axis = std::string(1, "xyz"[Dim]);
  bool BlockVia = false, One = false;
  A.Blk = configExtent(A.Call->getConfig()->getArg(1), Dim, BlockVia, One);
  A.BlkV = One ? std::optional<int64_t>(1) : launchTimeValue(A.Blk, Ctx.AST);
  if (!A.Blk && !A.BlkV)
    return "its block ('" + L.Block + "') has no known " + A.Axis + " extent";
  return "";
}

std::string blocksCoverProblem(const EditContext &Ctx, const LaunchSite &L,
                               const Expr *Bound, const AxisCoverage &A,
                               const Expr *G, bool GridVia);
} // namespace

std::optional<int64_t> blockExtentAt(const EditContext &Ctx,
                                     const LaunchSite &L, unsigned Dim) {
  const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
  if (!Call || !Call->getConfig() || Call->getConfig()->getNumArgs() < 2)
    return std::nullopt;
  bool Via = false, One = false;
  const Expr *X = configExtent(Call->getConfig()->getArg(1), Dim, Via, One);
  if (One)
    return 1;
  return X ? launchTimeValue(gridValueExpr(X, Ctx.AST, Via), Ctx.AST)
           : std::nullopt;
}

std::string gridCoverageProblem(const EditContext &Ctx, const LaunchSite &L,
                                const Expr *Bound, unsigned Dim) {
  AxisCoverage A;
  if (std::string Why = coverageSetUp(Ctx, L, Bound, Dim, A); !Why.empty())
    return Why;
  bool GridVia = false, One = false;
  const Expr *G0 =
      configExtent(A.Call->getConfig()->getArg(0), Dim, GridVia, One);
  if (!G0)
    return "its grid ('" + L.Grid + "') has no known " + A.Axis + " extent";
  return blocksCoverProblem(Ctx, L, Bound, A,
                            gridValueExpr(G0, Ctx.AST, GridVia), GridVia);
}

/// `(E + D - 1) / D` or `(E + (D - 1)) / D` with D any integer expression.
static std::optional<GridCeil> symbolicCeil(const Expr *G) {
  const auto *Div = dyn_cast<BinaryOperator>(G->IgnoreParenImpCasts());
  if (!Div || Div->getOpcode() != BO_Div || !Div->getType()->isIntegerType())
    return std::nullopt;
  const Expr *D = Div->getRHS();
  auto Op = [](const Expr *X, BinaryOperatorKind K) {
    const auto *B = dyn_cast<BinaryOperator>(X->IgnoreParenImpCasts());
    return B && B->getOpcode() == K ? B : nullptr;
  };
  auto IsOne = [](const Expr *X) {
    const auto *I = dyn_cast<IntegerLiteral>(X->IgnoreParenImpCasts());
    return I && I->getValue() == 1;
  };
  const Expr *Num = Div->getLHS();
  if (const auto *Less = Op(Num, BO_Sub); Less && IsOne(Less->getRHS()))
    if (const auto *Sum = Op(Less->getLHS(), BO_Add);
        Sum && sameValueExpr(Sum->getRHS(), D))
      return GridCeil{Sum->getLHS(), D, std::nullopt};
  if (const auto *Sum = Op(Num, BO_Add))
    if (const auto *Less = Op(Sum->getRHS(), BO_Sub);
        Less && IsOne(Less->getRHS()) && sameValueExpr(Less->getLHS(), D))
      return GridCeil{Sum->getLHS(), D, std::nullopt};
  return std::nullopt;
}

std::string gridRowsCoverageProblem(const EditContext &Ctx, const LaunchSite &L,
                                    const Expr *Bound) {
  AxisCoverage A;
  if (std::string Why = coverageSetUp(Ctx, L, Bound, 0, A); !Why.empty())
    return Why;
  const ASTContext &AST = Ctx.AST;
  bool XVia = false, YVia = false, One = false;
  const Expr *Grid = A.Call->getConfig()->getArg(0);
  const Expr *GX0 = configExtent(Grid, 0, XVia, One);
  const Expr *GY0 = configExtent(Grid, 1, YVia, One);
  if (!GX0 || !GY0 || One)
    return gridCoverageProblem(Ctx, L, Bound, 0);
  const Expr *GX = gridValueExpr(GX0, AST, XVia);
  const Expr *GY = gridValueExpr(GY0, AST, YVia);
  std::optional<int64_t> XV = launchTimeValue(GX, AST),
                         YV = launchTimeValue(GY, AST),
                         NV = launchTimeValue(A.N, AST);
  if (XV && YV && A.BlkV && NV && *XV * *YV * *A.BlkV >= *NV)
    return "";
  // ceil(B / D) rows of GX blocks, D at most GX, count at least B blocks;
  // D may be GX's own expression (`(nb + gx - 1) / gx`).
  std::optional<GridCeil> C = gridCeil(GY, AST);
  if (!C)
    C = symbolicCeil(GY);
  std::optional<int64_t> GXV = launchTimeValue(GX, AST);
  auto SameAsX = [&](const Expr *X) {
    return sameValueExpr(C->Divisor, X) && stableExpr(X, AST);
  };
  bool Fits = C && ((C->DivisorValue && GXV && *C->DivisorValue > 0 &&
                     *C->DivisorValue <= *GXV) ||
                    SameAsX(GX0) || SameAsX(GX));
  bool Via = XVia || YVia;
  // ceil(E / D) rows of GX blocks of B threads, D at most GX * B
  // (`dim3(128, (n + 128 * 128 - 1) / (128 * 128))`), run at least E
  // threads.
  if (C && !Fits && C->DivisorValue && GXV && A.BlkV && *C->DivisorValue > 0 &&
      *C->DivisorValue <= *GXV * *A.BlkV) {
    const Expr *E = gridValueExpr(C->Numerator, AST, Via);
    if (sameValueExpr(E, A.N) &&
        ((Via || A.BoundVia) ? stableExpr(A.N, AST)
                             : !A.N->HasSideEffects(AST)))
      return "";
  }
  if (!Fits)
    return gridCoverageProblem(Ctx, L, Bound, 0);
  return blocksCoverProblem(Ctx, L, Bound, A,
                            gridValueExpr(C->Numerator, AST, Via), Via);
}

namespace {
/// Why \p G blocks of \p A's block may run fewer threads than \p A's
/// bound; "" when they are shown to reach it.
std::string blocksCoverProblem(const EditContext &Ctx, const LaunchSite &L,
                               const Expr *Bound, const AxisCoverage &A,
                               const Expr *G, bool GridVia) {
  const ASTContext &AST = Ctx.AST;
  const Expr *N = A.N, *Blk = A.Blk;
  const std::optional<int64_t> &BlkV = A.BlkV;
  const std::string &NText = A.NText, &Axis = A.Axis;
  bool BoundVia = A.BoundVia;
  // `ceil(n / B) + 1`: blocks added to a covering grid keep it covering.
  int64_t Added = 0;
  while (const auto *Add = dyn_cast<BinaryOperator>(G->IgnoreParenImpCasts())) {
    auto K = launchTimeValue(Add->getRHS(), AST);
    if (Add->getOpcode() != BO_Add || !K || *K < 0)
      break;
    Added += *K;
    G = gridValueExpr(Add->getLHS(), AST, GridVia);
  }
  std::optional<int64_t> GV = launchTimeValue(G, AST),
                         NV = launchTimeValue(N, AST);
  if (GV && BlkV && NV) {
    // The blocks added count too (`N / 256 + 1` with a constant N).
    if ((*GV + Added) * *BlkV >= *NV)
      return "";
    return "its grid runs " + std::to_string(*GV + Added) + " x " +
           std::to_string(*BlkV) + " threads along " + Axis + ", fewer than " +
           std::to_string(*NV) + " ('" + NText + "')";
  }
  std::optional<GridCeil> C = gridCeil(G, AST);
  // `n / B + 1`: floor(n / B) + 1 blocks are at least ceil(n / B).
  const auto *Floor = dyn_cast<BinaryOperator>(G->IgnoreParenImpCasts());
  if (!C && Added >= 1 && Floor && Floor->getOpcode() == BO_Div &&
      Floor->getType()->isIntegerType())
    C = GridCeil{Floor->getLHS(), Floor->getRHS(),
                 launchTimeValue(Floor->getRHS(), AST)};
  if (!C)
    return "its grid ('" + L.Grid + "') is not ceil(" + NText +
           " / block) (`(" + NText +
           " + B - 1) / B`, a macro or a helper computing it) nor " +
           "constants that multiply to at least the bound";
  std::string DText = looseExprText(Ctx, C->Divisor);
  bool DivisorFits =
      (C->DivisorValue && BlkV && *C->DivisorValue > 0 &&
       *C->DivisorValue <= *BlkV) ||
      (Blk && sameValueExpr(C->Divisor, Blk) && stableExpr(Blk, AST));
  if (!DivisorFits)
    return "its grid divides by " +
           (C->DivisorValue ? std::to_string(*C->DivisorValue)
                            : "'" + DText + "'") +
           ", which is not shown to be at most its block's " +
           (BlkV ? std::to_string(*BlkV) : "'" + L.Block + "'") +
           " threads along " + Axis;
  std::string NumText = looseExprText(Ctx, C->Numerator);
  std::optional<int64_t> EV = launchTimeValue(C->Numerator, AST);
  // The bound may be the grid's count less a constant (`len - 1`), in a
  // signed type, where it cannot wrap above it.
  const Expr *Counted = N;
  const auto *Less = dyn_cast<BinaryOperator>(N->IgnoreParenImpCasts());
  auto LessBy = Less && Less->getOpcode() == BO_Sub &&
                        Less->getType()->isSignedIntegerType()
                    ? launchTimeValue(Less->getRHS(), AST)
                    : std::nullopt;
  if (LessBy && *LessBy >= 0 && !sameValueExpr(C->Numerator, N))
    Counted = Less->getLHS();
  bool Covers = (EV && NV && *EV >= *NV) ||
                (sameValueExpr(C->Numerator, Counted) &&
                 ((GridVia || BoundVia) ? stableExpr(Counted, AST)
                                        : !Counted->HasSideEffects(AST)));
  // The grid reads the member of a struct variable never written after its
  // `{...}` initializer (`(m.n + 127) / 128` beside a launch passing `m`):
  // the member holds that initializer's value.
  if (const auto *M = dyn_cast<MemberExpr>(C->Numerator->IgnoreParenImpCasts());
      !Covers && M && !M->isArrow())
    if (const auto *F = dyn_cast<FieldDecl>(M->getMemberDecl())) {
      bool Via = false;
      const InitListExpr *IL = aggregateAt(M->getBase(), Via);
      unsigned I = F->getFieldIndex();
      Covers = IL && I < IL->getNumInits() &&
               !isa<ImplicitValueInitExpr>(IL->getInit(I)) &&
               sameValueExpr(IL->getInit(I), Counted) &&
               stableExpr(Counted, AST);
    }
  if (!Covers)
    return "its grid is sized from '" + NumText + "' but the kernel's bound '" +
           looseExprText(Ctx, Bound) + "' is '" + NText +
           "' there (or they may differ when the launch runs)";
  return "";
}
} // namespace

} // namespace optiml
