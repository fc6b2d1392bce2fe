//===- SharedTilingStencil.cpp - shared-tiling: 2D stencils ---------------===//
//
// Pattern: one thread per output point of a 2D grid,
//   x = blockIdx.x * blockDim.x + threadIdx.x;  y = ... .y ...;
//   if (<bounds on x and y>) { ... in[(y + dy) * P + (x + dx)] ... }
//   (or `if (<out of bounds>) return;` and the rest)
// where every read of the staged array `in` is at a constant offset
// (dy, dx), or at offsets that run over constant ranges through loops with
// constant bounds (`for (ky = 0; ky < K; ++ky) ... in[(y + ky - R) * w +
// x + kx - R]`), possibly behind an `if` that bounds the read's own row and
// column (zero padding).
//
// Rewrite: before the guard, the block stages the (BY + halo) x (BX + halo)
// tile of `in` its threads read, then synchronizes; each read becomes a
// tile read. A slot is loaded exactly when some thread of the block that
// passes the guard reads that element in the original (and the read's own
// `if` admits it), so no element the original does not read is touched and
// every slot the compute phase reads holds the element it read before.
// Everything else, the edge handling included, is the original code.
// (The rewrites, this one and rows, are in SharedTilingRows.cpp.)
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/CountingLoop.h"
#include "../../Patterns/SideEffects.h"
#include "../TransformSupport.h"
#include "SharedStaging.h"
#include "SharedTilingInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <array>
#include <functional>
#include <map>

using namespace clang;
using namespace llvm;

namespace optiml {
namespace sharedtiling {
namespace {

/// A polynomial over declarations (degree <= 2), for index expressions.
using Monomial = std::vector<const ValueDecl *>; // sorted
using Poly = std::map<Monomial, int64_t>;

void addTo(Poly &P, const Poly &Q, int64_t Scale) {
  for (const auto &[M, C] : Q)
    if ((P[M] += Scale * C) == 0)
      P.erase(M);
}

struct StencilCtx {
  const EditContext &Ctx;
  const FunctionDecl *FD;
  const VarDecl *X, *Y;
  /// Loop variables with constant ranges [Lo, Hi] inside the guarded code.
  std::map<const ValueDecl *, std::pair<int64_t, int64_t>> LoopVars;
  DenseSet<const ValueDecl *> Written;
};

/// A helper's parameters, each standing for its argument at the call.
using HelperArgs = std::map<const ValueDecl *, Poly>;

/// \p E as a polynomial over the indices, loop variables and values the
/// same for every thread; inside an index helper's return (\p Args set),
/// over the call's arguments.
std::optional<Poly> polyOf(const StencilCtx &S, const Expr *E,
                           unsigned Depth = 0,
                           const HelperArgs *Args = nullptr) {
  if (Depth > 8)
    return std::nullopt;
  E = E->IgnoreParens();
  // An index helper (`idx(x, y, w)`, Patterns/SideEffects.h): what it
  // returns, its parameters replaced by the arguments.
  if (const auto *C = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *H = nullptr;
    const Expr *R = indexHelperReturn(C, S.Ctx.AST, H);
    // Its parameters and result hold any int (no narrowing on the way).
    auto Wide = [&](QualType T) {
      return T->isIntegerType() &&
             S.Ctx.AST.getTypeSize(T) >= S.Ctx.AST.getTypeSize(S.Ctx.AST.IntTy);
    };
    if (!R || !Wide(H->getReturnType()) ||
        !all_of(H->parameters(),
                [&](const ParmVarDecl *Pm) { return Wide(Pm->getType()); }))
      return std::nullopt;
    HelperArgs Sub;
    for (unsigned I = 0; I < C->getNumArgs(); ++I) {
      auto A = polyOf(S, C->getArg(I), Depth + 1, Args);
      if (!A)
        return std::nullopt;
      Sub[H->getParamDecl(I)] = std::move(*A);
    }
    return polyOf(S, R, Depth + 1, &Sub);
  }
  if (const auto *C = dyn_cast<CastExpr>(E)) {
    if (!C->getType()->isIntegerType() ||
        !C->getSubExpr()->getType()->isIntegerType())
      return std::nullopt;
    return polyOf(S, C->getSubExpr(), Depth, Args);
  }
  if (auto V = intValue(E, S.Ctx.AST))
    return Poly{{Monomial{}, *V}};
  if (const auto *DR = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(DR->getDecl());
    if (!VD)
      return std::nullopt;
    // Inside a helper only its parameters (and constants) are followed.
    if (Args) {
      auto It = Args->find(VD);
      if (It == Args->end())
        return std::nullopt;
      return It->second;
    }
    if (VD == S.X || VD == S.Y || S.LoopVars.count(VD))
      return Poly{{Monomial{VD}, 1}};
    if (S.Written.contains(VD))
      return std::nullopt;
    // A local computed from the indices: follow it to its initializer.
    if (VD->isLocalVarDecl() && VD->hasInit() &&
        !threadVariance(DR, S.FD).uniform())
      return polyOf(S, VD->getInit(), Depth + 1);
    if (threadVariance(DR, S.FD).uniform())
      return Poly{{Monomial{VD}, 1}};
    return std::nullopt;
  }
  if (const auto *U = dyn_cast<UnaryOperator>(E)) {
    if (U->getOpcode() == UO_Minus) {
      auto P = polyOf(S, U->getSubExpr(), Depth, Args);
      if (!P)
        return std::nullopt;
      Poly N;
      addTo(N, *P, -1);
      return N;
    }
    if (U->getOpcode() == UO_Plus)
      return polyOf(S, U->getSubExpr(), Depth, Args);
    return std::nullopt;
  }
  const auto *B = dyn_cast<BinaryOperator>(E);
  if (!B)
    return std::nullopt;
  auto L = polyOf(S, B->getLHS(), Depth, Args),
       R = polyOf(S, B->getRHS(), Depth, Args);
  if (!L || !R)
    return std::nullopt;
  Poly Out;
  switch (B->getOpcode()) {
  case BO_Add:
    addTo(Out, *L, 1);
    addTo(Out, *R, 1);
    return Out;
  case BO_Sub:
    addTo(Out, *L, 1);
    addTo(Out, *R, -1);
    return Out;
  case BO_Mul:
    for (const auto &[ML, CL] : *L)
      for (const auto &[MR, CR] : *R) {
        Monomial M = ML;
        M.insert(M.end(), MR.begin(), MR.end());
        if (M.size() > 2)
          return std::nullopt;
        llvm::sort(M);
        if ((Out[M] += CL * CR) == 0)
          Out.erase(M);
      }
    return Out;
  default:
    return std::nullopt;
  }
}

/// `V op B` / `B op V` as a BoundCmp with '$' for V, or nothing.
std::optional<BoundCmp> boundCmp(const EditContext &Ctx,
                                 const BinaryOperator *B,
                                 llvm::function_ref<bool(const Expr *)> IsV,
                                 const FunctionDecl *FD, std::string &WhyNot) {
  if (!B->isRelationalOp())
    return std::nullopt;
  bool VLeft = IsV(B->getLHS()), VRight = IsV(B->getRHS());
  if (VLeft == VRight)
    return std::nullopt;
  const Expr *Bound = VLeft ? B->getRHS() : B->getLHS();
  if (!threadVariance(Bound, FD).uniform() || Bound->HasSideEffects(Ctx.AST) ||
      exprText(Ctx, Bound).empty()) {
    WhyNot = "the bound '" + exprText(Ctx, Bound) +
             "' is not the same for every thread or is written with a macro";
    return std::nullopt;
  }
  QualType T = B->getLHS()->getType();
  if (!T->isSignedIntegerType() ||
      !B->getRHS()->getType()->isSignedIntegerType()) {
    WhyNot = "the comparison '" + exprText(Ctx, B) +
             "' is not between signed integers";
    return std::nullopt;
  }
  BinaryOperatorKind Op = B->getOpcode();
  if (!VLeft)
    Op = BinaryOperator::reverseComparisonOp(Op);
  BoundCmp C;
  C.Lower = Op == BO_GT || Op == BO_GE;
  C.Text = "$ " + BinaryOperator::getOpcodeStr(Op).str() + " " +
           parenthesize(exprText(Ctx, Bound));
  return C;
}

} // namespace

/// Any `return`, `break`, `continue` or `goto` inside \p St, or null.
static const Stmt *anyJump(const Stmt *St) {
  if (!St)
    return nullptr;
  if (isa<ReturnStmt, BreakStmt, ContinueStmt, GotoStmt>(St))
    return St;
  for (const Stmt *C : St->children())
    if (const Stmt *J = anyJump(C))
      return J;
  return nullptr;
}

/// `return;` alone, braced or not.
static bool isBareReturn(const Stmt *St) {
  if (const auto *CS = dyn_cast<CompoundStmt>(St); CS && CS->size() == 1)
    St = CS->body_front();
  const auto *R = dyn_cast<ReturnStmt>(St);
  return R && !R->getRetValue();
}

/// \p C with the opposite comparison (`$ < h` becomes `$ >= h`).
static void negateCmp(BoundCmp &C) {
  static const std::pair<StringRef, StringRef> Neg[] = {
      {"< ", ">= "}, {">= ", "< "}, {"> ", "<= "}, {"<= ", "> "}};
  for (const auto &[From, To] : Neg)
    if (StringRef(C.Text).substr(2).starts_with(From)) {
      C.Text = "$ " + To.str() + C.Text.substr(2 + From.size());
      break;
    }
  C.Lower = !C.Lower;
}

/// `if (<cond>) continue;` (braced or not, no else), or null.
static const IfStmt *continueGuard(const Stmt *St) {
  const auto *If = dyn_cast_or_null<IfStmt>(St);
  if (!If || If->getElse() || If->getInit() || If->getConditionVariable())
    return nullptr;
  const Stmt *T = If->getThen();
  if (const auto *CS = dyn_cast<CompoundStmt>(T); CS && CS->size() == 1)
    T = CS->body_front();
  return isa<ContinueStmt>(T) && !anyJump(If->getCond()) ? If : nullptr;
}

/// A `return`, `break`, `continue` or `goto` inside \p St, but for the
/// `if (...) continue;` statements of a body of a loop over \p LoopVars
/// (whose bounds the reads after them take, ownGuards); or null.
static const Stmt *unguardedJump(const Stmt *St, const StencilCtx &S) {
  if (!St)
    return nullptr;
  if (isa<ReturnStmt, BreakStmt, ContinueStmt, GotoStmt>(St))
    return St;
  if (const auto *F = dyn_cast<ForStmt>(St)) {
    const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit());
    const auto *V = DS && DS->isSingleDecl()
                        ? dyn_cast<ValueDecl>(DS->getSingleDecl())
                        : nullptr;
    const auto *CS = dyn_cast_or_null<CompoundStmt>(F->getBody());
    if (V && CS && S.LoopVars.count(V)) {
      for (const Stmt *C :
           {F->getInit(), static_cast<const Stmt *>(F->getCond()),
            static_cast<const Stmt *>(F->getInc())})
        if (const Stmt *J = unguardedJump(C, S))
          return J;
      for (const Stmt *C : CS->body())
        if (const Stmt *J = continueGuard(C) ? nullptr : unguardedJump(C, S))
          return J;
      return nullptr;
    }
  }
  for (const Stmt *C : St->children())
    if (const Stmt *J = unguardedJump(C, S))
      return J;
  return nullptr;
}

/// Splits \p Idx, a read's index, into (y + DY) * pitch + (x + DX) (into
/// \p R), the pitch a value the same for every thread (\p Pitch) or a
/// constant greater than one (\p ConstPitch: a term that is a multiple of
/// it moves the row, the constant rounds to the nearest row); the offsets
/// constants and loop variables with constant ranges. Why not, or empty.
std::string splitIndex(const StencilCtx &S, const Poly &Idx, StencilRead &R,
                       const ValueDecl *&Pitch, int64_t &ConstPitch) {
  auto Is = [&](const ValueDecl *D) {
    return D == S.X || D == S.Y || S.LoopVars.count(D);
  };
  // The pitch multiplies the row index; any other value that is not a
  // constant is an offset that differs between launches.
  for (const auto &[M, C] : Idx)
    if (M.size() == 2 && (M[0] == S.Y || M[1] == S.Y))
      Pitch = M[0] == S.Y ? M[1] : M[0];
  if (auto It = Idx.find(Monomial{S.Y}); !Pitch && It != Idx.end())
    ConstPitch = It->second > 1 ? It->second : 0;
  for (const auto &[M, C] : Idx)
    for (const ValueDecl *D : M)
      if (!Is(D) && D != Pitch)
        return ("is at an offset '" + D->getName() +
                "' that is not a constant (only constant offsets, or "
                "loop variables with constant ranges, can be staged)")
            .str();
  std::string Y = S.Y->getName().str(), X = S.X->getName().str();
  bool SawYP = false, SawX = false;
  for (const auto &[M, C] : Idx) {
    // Split each term into the pitch factor and the rest.
    const ValueDecl *Uniform = nullptr;
    Monomial Rest;
    for (const ValueDecl *D : M) {
      if (!Is(D) && !Uniform)
        Uniform = D;
      else
        Rest.push_back(D);
    }
    for (const ValueDecl *D : Rest)
      if (!Is(D))
        return "has a term that is not constant";
    if (Rest.size() > 1)
      return "multiplies two indices";
    const ValueDecl *V = Rest.empty() ? nullptr : Rest.front();
    bool RowTerm = Uniform || (ConstPitch && V != S.X && C % ConstPitch == 0);
    Offset &O = RowTerm ? R.DY : R.DX;
    int64_t K = ConstPitch && RowTerm ? C / ConstPitch : C;
    if (V == S.Y) {
      if (!RowTerm || K != 1)
        return "does not use '" + Y + "' as (" + Y + " + dy) * pitch";
      SawYP = true;
    } else if (V == S.X) {
      if (RowTerm || C != 1)
        return "does not use '" + X + "' as + (" + X + " + dx)";
      SawX = true;
    } else if (V) {
      if (ConstPitch && !RowTerm && (C >= ConstPitch || -C >= ConstPitch))
        return "moves by " + std::to_string(C) + " with '" +
               V->getNameAsString() + "', which is not a whole number of rows";
      O.Vars.push_back({V, K});
    } else if (ConstPitch) {
      // The nearest row, then the column within it.
      int64_t Q = C + ConstPitch / 2;
      Q = Q >= 0 ? Q / ConstPitch : -((-Q + ConstPitch - 1) / ConstPitch);
      R.DY.Const += Q;
      R.DX.Const += C - Q * ConstPitch;
    } else {
      O.Const += C;
    }
  }
  if (!SawYP || !SawX || (!Pitch && !ConstPitch))
    return "is not at an offset from the point (" + Y + ", " + X +
           ") of a row-major grid";
  for (Offset *O : {&R.DY, &R.DX}) {
    O->Lo = O->Hi = O->Const;
    for (const auto &[V, C] : O->Vars) {
      auto [L, H] = S.LoopVars.at(V);
      O->Lo += std::min(C * L, C * H);
      O->Hi += std::max(C * L, C * H);
    }
  }
  for (const auto &[V, C] : R.DY.Vars)
    for (const auto &[W, D] : R.DX.Vars)
      if (V == W)
        return "moves along a diagonal with '" + V->getNameAsString() +
               "' (a staged box would hold elements it never reads)";
  return "";
}

std::vector<PointerAlias> bodyAliases(const CompoundStmt *Body,
                                      const FunctionDecl *FD) {
  std::vector<PointerAlias> Out;
  std::function<void(const Stmt *)> Walk = [&](const Stmt *St) {
    if (!St)
      return;
    if (const auto *CS = dyn_cast<CompoundStmt>(St)) {
      SmallVector<const Stmt *, 8> Stmts(CS->body_begin(), CS->body_end());
      for (size_t I = 0; I < Stmts.size(); ++I) {
        std::string Why;
        if (const auto *DS = dyn_cast<DeclStmt>(Stmts[I]))
          if (auto A =
                  pointerAlias(DS, ArrayRef(Stmts).drop_front(I + 1), FD, Why))
            Out.push_back(std::move(*A));
      }
    }
    for (const Stmt *C : St->children())
      Walk(C);
  };
  Walk(Body);
  return Out;
}

/// The index of the element \p AS reads in its parameter array: through a
/// row pointer, its offsets plus the subscript.
static std::optional<Poly> readPoly(const StencilCtx &S,
                                    const ArraySubscriptExpr *AS,
                                    ArrayRef<PointerAlias> Aliases) {
  auto P = polyOf(S, AS->getIdx());
  if (const PointerAlias *A = aliasOf(AS, Aliases))
    for (const Expr *O : A->Offsets) {
      auto Q = polyOf(S, O);
      if (!P || !Q)
        return std::nullopt;
      addTo(*P, *Q, 1);
    }
  return P;
}

/// How the reads spell the constant pitch \p V: a named constant of the
/// file (`W`) that one of them uses, else the number.
static std::string constantText(const EditContext &Ctx,
                                ArrayRef<StencilRead> Reads,
                                ArrayRef<PointerAlias> Aliases, int64_t V) {
  std::string Found;
  std::function<void(const Stmt *)> Walk = [&](const Stmt *St) {
    if (!St || !Found.empty())
      return;
    if (const auto *DR = dyn_cast<DeclRefExpr>(St))
      if (const auto *VD = dyn_cast<VarDecl>(DR->getDecl());
          VD && VD->isFileVarDecl() && intValue(DR, Ctx.AST) == V)
        Found = exprText(Ctx, DR);
    for (const Stmt *C : St->children())
      Walk(C);
  };
  for (const StencilRead &R : Reads) {
    Walk(R.Access->getIdx());
    if (const PointerAlias *A = aliasOf(R.Access, Aliases))
      for (const Expr *O : A->Offsets)
        Walk(O);
  }
  return Found.empty() ? std::to_string(V) : Found;
}

/// The bounds the read \p R takes from what encloses it in the guarded
/// code (into R.GuardY, R.GuardX): the `if`s around it and the
/// `if (...) continue;` before it in a constant loop's body, each part a
/// bound on the read's own row or column (anything else would make the
/// read set smaller than a box); why not, or empty. Loops around it must
/// be constant ones.
std::string ownGuards(const StencilCtx &S, const IfStmt *If,
                      const CompoundStmt *Body, StencilRead &R) {
  const EditContext &Ctx = S.Ctx;
  const FunctionDecl *FD = S.FD;
  const ArraySubscriptExpr *AS = R.Access;
  // One comparison C (negated: the read runs when it fails), of the
  // read's own row or column plus a constant (`x > 0` for a read at x - 1
  // bounds its column from below by -1).
  auto Take = [&](const Expr *C, bool Negate) -> std::string {
    const auto *B = dyn_cast<BinaryOperator>(C);
    // What \p X is beyond the read's row (column): a constant, if it is.
    auto Beyond = [&](const Expr *X, const Offset &O,
                      bool Row) -> std::optional<int64_t> {
      auto Q = polyOf(S, X);
      if (!Q)
        return std::nullopt;
      Poly Want;
      Want[{Row ? static_cast<const ValueDecl *>(S.Y) : S.X}] = 1;
      if (O.Const)
        Want[{}] = O.Const;
      for (const auto &[V, K2] : O.Vars)
        Want[{V}] = K2;
      int64_t K = 0;
      if (auto It = Q->find(Monomial()); It != Q->end())
        K += It->second;
      if (auto It = Want.find(Monomial()); It != Want.end())
        K -= It->second;
      Q->erase(Monomial());
      Want.erase(Monomial());
      if (*Q != Want)
        return std::nullopt;
      return K;
    };
    auto Same = [&](const Expr *X, const Offset &O, bool Row) {
      return Beyond(X, O, Row).has_value();
    };
    std::string Why;
    std::optional<BoundCmp> BC;
    bool Row = false;
    if (B)
      BC = boundCmp(
          Ctx, B, [&](const Expr *X) { return Same(X, R.DY, true); }, FD, Why);
    if (BC)
      Row = true;
    else if (B && Why.empty())
      BC = boundCmp(
          Ctx, B, [&](const Expr *X) { return Same(X, R.DX, false); }, FD, Why);
    if (!BC)
      return std::string("is guarded by '" + exprText(Ctx, C) +
                         "', which does not bound its own row or column");
    // The staging runs before the guard: the bound's variables must
    // exist there.
    std::function<const VarDecl *(const Stmt *)> Late =
        [&](const Stmt *X) -> const VarDecl * {
      if (const auto *DR = dyn_cast_or_null<DeclRefExpr>(X))
        if (const auto *V = dyn_cast<VarDecl>(DR->getDecl()))
          if (V->isLocalVarDecl() &&
              !Ctx.AST.getSourceManager().isBeforeInTranslationUnit(
                  V->getLocation(), If->getBeginLoc()))
            return V;
      for (const Stmt *Ch :
           X ? X->children() : Stmt::const_child_range(nullptr, nullptr))
        if (const VarDecl *V = Late(Ch))
          return V;
      return nullptr;
    };
    for (const Expr *Side : {B->getLHS(), B->getRHS()})
      if (!Same(Side, Row ? R.DY : R.DX, Row))
        if (const VarDecl *V = Late(Side))
          return ("is guarded by a bound that uses '" + V->getName() +
                  "', declared after the bounds guard")
              .str();
    // `$ + K op b` is `$ op b - K`.
    const Offset &O = Row ? R.DY : R.DX;
    const Expr *Side = Same(B->getLHS(), O, Row) ? B->getLHS() : B->getRHS();
    if (int64_t K = *Beyond(Side, O, Row); K != 0) {
      StringRef T(BC->Text);
      size_t Sp = T.find(' ', 2);
      BC->Text = (T.take_front(Sp + 1) +
                  plusConst("(" + T.drop_front(Sp + 1).str() + ")", -K))
                     .str();
    }
    if (Negate)
      negateCmp(*BC);
    (Row ? R.GuardY : R.GuardX).push_back(BC->Text);
    return std::string();
  };
  const Stmt *Child = AS;
  DynTypedNodeList Ps = Ctx.AST.getParents(*Child);
  while (!Ps.empty()) {
    const Stmt *Par = Ps[0].get<Stmt>();
    if (const auto *D = Ps[0].get<VarDecl>(); D && !Par) {
      // A read in a local's initializer: on to the declaration's
      // statement, whose `if`s guard it as well.
      DynTypedNodeList DPs = Ctx.AST.getParents(*D);
      if (DPs.empty() || !DPs[0].get<DeclStmt>())
        return std::string("initializes a variable that is not declared by its "
                           "own statement");
      Child = DPs[0].get<DeclStmt>();
      Ps = Ctx.AST.getParents(*Child);
      continue;
    }
    if (!Par || Par == If || Par == Body)
      break;
    // `c ? read : v`: the read runs when c holds, as under an `if`.
    if (const auto *CO = dyn_cast<ConditionalOperator>(Par);
        CO && CO->getCond() != Child) {
      if (CO->getTrueExpr() != Child)
        return std::string("is in the false arm of a conditional expression");
      for (const Expr *C : splitJoined(CO->getCond(), BO_LAnd))
        if (std::string Why = Take(C->IgnoreParenImpCasts(), false);
            !Why.empty())
          return Why;
      R.OwnConds.push_back({CO->getCond(), true});
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(Par);
        BO && BO->isLogicalOp() && BO->getRHS() == Child)
      return ("is on the right of '" + BO->getOpcodeStr() + "'").str();
    if (const auto *PI = dyn_cast<IfStmt>(Par)) {
      if (PI->getCond() == Child || PI->getElse() == Child)
        return std::string("is in the condition or the else branch of an if");
      for (const Expr *C : splitJoined(PI->getCond(), BO_LAnd))
        if (std::string Why = Take(C->IgnoreParenImpCasts(), false);
            !Why.empty())
          return Why;
      R.OwnConds.push_back({PI->getCond(), true});
    }
    // `if (a || b) continue;` before it: it runs when neither holds.
    if (const auto *CS = dyn_cast<CompoundStmt>(Par))
      for (const Stmt *Sib : CS->body()) {
        if (Sib == Child)
          break;
        if (const IfStmt *CI = continueGuard(Sib)) {
          for (const Expr *D : splitJoined(CI->getCond(), BO_LOr))
            if (std::string Why = Take(D->IgnoreParenImpCasts(), true);
                !Why.empty())
              return Why;
          R.OwnConds.push_back({CI->getCond(), false});
        }
      }
    if (isa<WhileStmt, DoStmt, CXXForRangeStmt>(Par))
      return std::string("is inside a loop without a constant range");
    if (const auto *F = dyn_cast<ForStmt>(Par)) {
      const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit());
      const Decl *V = DS && DS->isSingleDecl() ? DS->getSingleDecl() : nullptr;
      if (F->getBody() != Child || !V || !S.LoopVars.count(cast<ValueDecl>(V)))
        return std::string(
            "is inside a loop without a constant range (its "
            "elements would be staged even when the loop does not "
            "run)");
    }
    Child = Par;
    Ps = Ctx.AST.getParents(*Child);
  }
  return "";
}

/// \p Shape is set once the reads are recognized (later refusals are about
/// the launches or the tile's size).
/// Why long: one ordered list of the stencil pattern's preconditions (the
/// indices, the guard, every read of the staged array and its offsets or
/// loop ranges, writes, barriers, the launches and the tile), each refusal
/// naming its reason; they share the partial match as locals.
Expected<StencilPlan> analyzeStencil(const EditContext &Ctx, const Edit &E,
                                     std::optional<int64_t> Tile, bool &Shape) {
  auto K = resolveKernel(Ctx, E, E.Target);
  if (!K)
    return K.takeError();
  StencilPlan P;
  P.Kernel = *K;
  const FunctionDecl *FD = K->Decl;
  std::string Name = "kernel '" + E.Target + "'";
  auto NotApplicable = [&](const Twine &Why) {
    return reject(E, "not-applicable", Name + ": " + Why);
  };
  const auto *Body = dyn_cast_or_null<CompoundStmt>(FD->getBody());
  if (!Body)
    return NotApplicable("has no body");
  if (K->Info->InMacro)
    return NotApplicable("it is written inside a macro");
  if (!K->Info->Shared.empty())
    return NotApplicable("already uses shared memory");
  if (!K->Info->Syncthreads.empty())
    return NotApplicable("already synchronizes threads");

  // The indices, then the guard.
  StencilCtx S{Ctx, FD, nullptr, nullptr, {}, writtenVars(Body)};
  SmallVector<const Stmt *, 8> Stmts(Body->body_begin(), Body->body_end());
  size_t At = 0;
  for (; At < Stmts.size(); ++At) {
    const auto *DS = dyn_cast<DeclStmt>(Stmts[At]);
    if (!DS)
      break;
    for (const Decl *D : DS->decls()) {
      const auto *VD = dyn_cast<VarDecl>(D);
      if (!VD || !VD->hasInit())
        continue;
      auto Dim = VD->getType()->isIntegerType() ? linearIndexDim(VD->getInit())
                                                : std::nullopt;
      if (Dim == 'x' && !S.X)
        S.X = VD;
      else if (Dim == 'y' && !S.Y)
        S.Y = VD;
    }
    if (firstJump(DS) || callsFunction(DS, "__sync"))
      return NotApplicable("a declaration before the guard jumps or "
                           "synchronizes");
  }
  if (!S.X || !S.Y)
    return NotApplicable(
        "the body does not start with a column index 'x = blockIdx.x * "
        "blockDim.x + threadIdx.x' and a row index 'y = blockIdx.y * "
        "blockDim.y + threadIdx.y' (a 2D stencil needs both)");
  for (const VarDecl *V : {S.X, S.Y})
    if (S.Written.contains(V))
      return NotApplicable("the index '" + V->getName() + "' is written");
  if (At >= Stmts.size())
    return NotApplicable("no bounds guard follows the indices");
  const auto *If = dyn_cast<IfStmt>(Stmts[At]);
  if (!If || If->getElse() || If->getInit() || If->getConditionVariable())
    return NotApplicable("the indices are not followed by a bounds guard "
                         "'if (x > 0 && x < w - 1 && ...)' or 'if (x >= w || "
                         "...) return;'");
  bool EarlyReturn = isBareReturn(If->getThen());
  if (!EarlyReturn && At + 1 != Stmts.size())
    return NotApplicable("the guard is not the last statement of the kernel");
  for (const Expr *Part :
       splitJoined(If->getCond(), EarlyReturn ? BO_LOr : BO_LAnd)) {
    Part = Part->IgnoreParenImpCasts();
    const auto *B = dyn_cast<BinaryOperator>(Part);
    std::string Why;
    auto IsX = [&](const Expr *X) { return refersTo(X, S.X); };
    auto IsY = [&](const Expr *X) { return refersTo(X, S.Y); };
    std::optional<BoundCmp> C;
    bool OnY = false;
    if (B && (C = boundCmp(Ctx, B, IsX, FD, Why))) {
    } else if (B && Why.empty() && (C = boundCmp(Ctx, B, IsY, FD, Why))) {
      OnY = true;
    }
    if (!C)
      return NotApplicable("the guard part '" + exprText(Ctx, Part) +
                           "' is not a bound on '" + S.X->getName() + "' or '" +
                           S.Y->getName() + "'" +
                           (Why.empty() ? std::string() : " (" + Why + ")"));
    // `x >= w` returns: the thread runs when `x < w`.
    if (EarlyReturn)
      negateCmp(*C);
    (OnY ? P.GuardY : P.GuardX).push_back(*C);
  }
  std::vector<const Stmt *> Inner;
  if (EarlyReturn)
    Inner.assign(Stmts.begin() + At + 1, Stmts.end());
  else
    Inner.push_back(If->getThen());
  if (Inner.empty())
    return NotApplicable("nothing follows the guard");

  // Loops counting up over constant ranges inside the guarded code (the
  // rows form keeps the order in which each output adds its terms only
  // for these).
  for (const Stmt *St : Inner)
    for (const auto &[V, R] : constantLoopRanges(St, Ctx.AST, /*UpOnly=*/true))
      S.LoopVars[V] = R;

  // Every read below must run whenever its thread passes the guard (and
  // its own bounds admit it, which a `continue` may test).
  for (const Stmt *St : Inner)
    if (const Stmt *J = unguardedJump(St, S))
      return NotApplicable("the guarded code leaves early at " + where(Ctx, J) +
                           ": the reads after it do not always run");

  // The staged array: the pointer parameter read at offsets from (y, x).
  struct Cand {
    const ParmVarDecl *Param;
    std::vector<const ArraySubscriptExpr *> Reads;
  };
  std::vector<Cand> Cands;
  // Row pointers into the arrays (`const float *src = in + iy * w;`).
  std::vector<PointerAlias> Aliases = bodyAliases(Body, FD);
  std::function<void(const Stmt *)> FindReads = [&](const Stmt *St) {
    if (!St)
      return;
    if (const auto *AS = dyn_cast<ArraySubscriptExpr>(St))
      if (const auto *PV = readArray(AS, Aliases))
        if (Variance V = readVariance(AS, Aliases, FD);
            PV->getType()->isPointerType() && (V.X || V.Y)) {
          auto It =
              find_if(Cands, [&](const Cand &C) { return C.Param == PV; });
          if (It == Cands.end())
            Cands.push_back({PV, {AS}});
          else
            It->Reads.push_back(AS);
        }
    for (const Stmt *C : St->children())
      FindReads(C);
  };
  for (const Stmt *St : Inner)
    FindReads(St);
  // The output is the array written at the thread's own point; the staged
  // array is the one read there most often and never written.
  const Cand *Best = nullptr;
  for (const Cand &C : Cands) {
    if (!analyzePointerParam(Ctx.AST, FD, C.Param).Blocker.empty() ||
        !C.Param->getType()->getPointeeType().isConstQualified()) {
      bool Written = false;
      for (const MemWrite &W : memoryWrites(Body))
        if (referencedDecl(W.Base) == C.Param)
          Written = true;
      if (Written)
        continue;
    }
    if (!Best || C.Reads.size() > Best->Reads.size())
      Best = &C;
  }
  if (!Best) {
    for (const Cand &C : Cands)
      for (const MemWrite &W : memoryWrites(Body))
        if (referencedDecl(W.Base) == C.Param && C.Reads.size() > 1)
          return NotApplicable(
              "the kernel writes into the array '" + C.Param->getName() +
              "' it reads at neighbouring points (at " + where(Ctx, W.Target) +
              "): a staged copy would be stale");
    return NotApplicable("no array is read at offsets from (" + S.Y->getName() +
                         ", " + S.X->getName() + ")" +
                         unfollowedIndex(Ctx, Inner, FD));
  }
  P.In = Best->Param;
  std::vector<PointerAlias> InAliases;
  std::string Blocker = aliasesOfParam(Ctx, FD, P.In, InAliases);
  if (Blocker.empty())
    Blocker = InAliases.empty()
                  ? analyzePointerParam(Ctx.AST, FD, P.In).Blocker
                  : usesThroughAliases(Ctx, FD, P.In, InAliases).Blocker;
  if (!Blocker.empty())
    return NotApplicable("the staged array cannot be followed: " + Blocker);
  for (const MemWrite &W : memoryWrites(Body))
    if (referencedDecl(W.Base) == P.In)
      return NotApplicable("the kernel writes into its input '" +
                           P.In->getName() + "' at " + where(Ctx, W.Target));
  if (const Stmt *Call = opaqueCall(Body))
    return NotApplicable("the call at " + where(Ctx, Call) +
                         " may write memory");
  for (const Stmt *St : Inner)
    if (callsFunction(St, "atomic") || callsFunction(St, "__shfl"))
      return NotApplicable("the guarded code uses atomics or warp "
                           "primitives");
  QualType ET = P.In->getType()->getPointeeType();
  P.ElemType = typeName(ET, Ctx.AST);
  if (!ET->isArithmeticType())
    return NotApplicable("the staged array's elements are not arithmetic");

  // In a kernel template, window loops over template parameters (`for (dx
  // = -R; dx <= R; ++dx)`) take the range every instantiation gives them.
  if (std::string Why =
          templateLoopRanges(Ctx, FD, Best->Reads, S.LoopVars, P.Pins);
      !Why.empty())
    return NotApplicable(Why);
  // Every read of it: (y + dy) * P + (x + dx).
  const ValueDecl *Pitch = nullptr;
  int64_t ConstPitch = 0;
  for (const ArraySubscriptExpr *AS : Best->Reads) {
    std::string Text = exprText(Ctx, AS);
    auto Bad = [&](const Twine &Why) {
      return NotApplicable("the read '" +
                           (Text.empty() ? std::string("(in a macro)") : Text) +
                           "' " + Why);
    };
    if (Text.empty())
      return Bad("is written with a macro");
    auto IdxPoly = readPoly(S, AS, Aliases);
    if (!IdxPoly)
      return Bad("has an index that is not (y + dy) * pitch + (x + dx) with "
                 "constant offsets" +
                 unknownLoopAround(Ctx, AS, S.LoopVars));
    StencilRead R;
    R.Access = AS;
    const ValueDecl *ThisPitch = nullptr;
    int64_t ThisConst = 0;
    if (std::string Why = splitIndex(S, *IdxPoly, R, ThisPitch, ThisConst);
        !Why.empty())
      return Bad(Why);
    if ((Pitch || ConstPitch) &&
        (Pitch != ThisPitch || ConstPitch != ThisConst))
      return Bad("uses a different pitch than the other reads");
    Pitch = ThisPitch;
    ConstPitch = ThisConst;
    if (std::string Why = ownGuards(S, If, Body, R); !Why.empty())
      return Bad(Why);
    P.Reads.push_back(std::move(R));
  }
  if (P.Reads.size() < 2 && P.Reads.front().DY.Lo == P.Reads.front().DY.Hi &&
      P.Reads.front().DX.Lo == P.Reads.front().DX.Hi)
    return NotApplicable("'" + P.In->getName() +
                         "' is read at one point only: nothing to share");
  P.Pitch = Pitch ? Pitch->getNameAsString()
                  : constantText(Ctx, P.Reads, Aliases, ConstPitch);
  if (const auto *PV = dyn_cast_or_null<VarDecl>(Pitch);
      PV && !isa<ParmVarDecl>(PV) && !PV->isFileVarDecl()) {
    // A local pitch must be declared before the guard.
    if (!Ctx.AST.getSourceManager().isBeforeInTranslationUnit(
            PV->getLocation(), If->getBeginLoc()))
      return NotApplicable("the pitch '" + P.Pitch +
                           "' is declared inside the guarded code");
  }
  // The index type, or a row pointer's offset type, when wider than int.
  QualType IT = P.Reads.front().Access->getIdx()->IgnoreImpCasts()->getType();
  for (const StencilRead &R : P.Reads)
    if (const PointerAlias *A = aliasOf(R.Access, Aliases))
      for (const Expr *O : A->Offsets)
        if (QualType T = O->IgnoreImpCasts()->getType();
            T->isIntegerType() &&
            Ctx.AST.getTypeSize(T) > Ctx.AST.getTypeSize(IT))
          IT = T;
  if (Ctx.AST.getTypeSize(IT) > Ctx.AST.getTypeSize(Ctx.AST.IntTy))
    P.IndexCast = "(" + typeName(IT, Ctx.AST) + ")";
  // Row pointers whose reads all become tile reads go.
  for (const PointerAlias &A : InAliases) {
    std::vector<const DeclRefExpr *> Uses;
    collectRefs(Body, A.Var, Uses);
    if (all_of(Uses, [&](const DeclRefExpr *U) {
          return any_of(P.Reads, [&](const StencilRead &R) {
            return R.Access->getBase()->IgnoreParenImpCasts() == U;
          });
        }))
      P.DeadAliases.push_back(A.Decl);
  }
  for (const StencilRead &R : P.Reads) {
    P.HaloYLo = std::max(P.HaloYLo, -R.DY.Lo);
    P.HaloYHi = std::max(P.HaloYHi, R.DY.Hi);
    P.HaloXLo = std::max(P.HaloXLo, -R.DX.Lo);
    P.HaloXHi = std::max(P.HaloXHi, R.DX.Hi);
  }

  // Every launch: a constant 2D block.
  Shape = true;
  if (K->Info->Launches.empty())
    return NotApplicable("it is never launched in this file, so its block "
                         "is unknown");
  for (const LaunchSite &Site : K->Info->Launches) {
    const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, Site);
    std::optional<Dim3> D;
    if (Call && Call->getConfig() && Call->getConfig()->getNumArgs() >= 2)
      D = constDim3(Ctx, Call->getConfig()->getArg(1));
    if (!D)
      return NotApplicable("the block of " + Site.Id + " ('" + Site.Block +
                           "') is not a constant; the tile is sized by it");
    if ((*D)[1] == 1 || (*D)[2] != 1)
      return NotApplicable("the block of " + Site.Id + " ('" + Site.Block +
                           "') is " + dimText(*D) +
                           ": a 2D tile needs a 2D block (BX x BY x 1, BY > "
                           "1; change it with launch-config first)");
    if (P.BX && (P.BX != (*D)[0] || P.BY != (*D)[1]))
      return NotApplicable("the launches use different blocks");
    P.BX = (*D)[0];
    P.BY = (*D)[1];
  }
  if (Tile && (P.BX != *Tile || P.BY != *Tile))
    return NotApplicable("the launches use " + dimText({P.BX, P.BY, 1}) +
                         " blocks, not " + std::to_string(*Tile) + "x" +
                         std::to_string(*Tile) + "x1");
  int64_t Bytes = (P.BY + P.HaloYLo + P.HaloYHi) *
                  (P.BX + P.HaloXLo + P.HaloXHi) *
                  int64_t(Ctx.AST.getTypeSizeInChars(ET).getQuantity());
  if (Bytes > 48 * 1024)
    return NotApplicable("the tile would take " + std::to_string(Bytes) +
                         " bytes of shared memory (more than 48 KiB)");
  auto IfSpan = looseStmtSpan(Ctx, If);
  if (!IfSpan)
    return NotApplicable("the guard has no place in the file");
  P.InsertAt = IfSpan->Begin.Offset;
  P.Indent = indentationAt(Ctx.Code, P.InsertAt);
  P.X = S.X;
  P.Y = S.Y;
  P.Guard = If;
  P.EarlyReturn = EarlyReturn;
  P.Before.assign(Stmts.begin(), Stmts.begin() + At);
  P.Inner = Inner;
  std::function<void(const Stmt *)> OffsetLoops = [&](const Stmt *St) {
    if (!St)
      return;
    if (const auto *F = dyn_cast<ForStmt>(St)) {
      const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit());
      const Decl *V = DS && DS->isSingleDecl() ? DS->getSingleDecl() : nullptr;
      for (const StencilRead &R : P.Reads)
        for (const Offset *O : {&R.DY, &R.DX})
          for (const auto &[D, C] : O->Vars)
            if (D == V && !is_contained(P.OffsetLoops, F))
              P.OffsetLoops.push_back(F);
    }
    for (const Stmt *C : St->children())
      OffsetLoops(C);
  };
  for (const Stmt *St : Inner)
    OffsetLoops(St);
  P.Shape = std::to_string(P.Reads.size()) + " read" +
            (P.Reads.size() > 1 ? "s" : "") + " of '" + P.In->getName().str() +
            "' at rows " + plusConst(S.Y->getName(), -P.HaloYLo) + ".." +
            plusConst(S.Y->getName(), P.HaloYHi) + ", columns " +
            plusConst(S.X->getName(), -P.HaloXLo) + ".." +
            plusConst(S.X->getName(), P.HaloXHi) + pinsNote(P.Pins);
  return P;
}

} // namespace sharedtiling
} // namespace optiml
