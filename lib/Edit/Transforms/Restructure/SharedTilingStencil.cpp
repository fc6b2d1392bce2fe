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
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/CountingLoop.h"
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

std::optional<Poly> polyOf(const StencilCtx &S, const Expr *E,
                           unsigned Depth = 0) {
  if (Depth > 8)
    return std::nullopt;
  E = E->IgnoreParens();
  if (const auto *C = dyn_cast<CastExpr>(E)) {
    if (!C->getType()->isIntegerType() ||
        !C->getSubExpr()->getType()->isIntegerType())
      return std::nullopt;
    return polyOf(S, C->getSubExpr(), Depth);
  }
  if (auto V = intValue(E, S.Ctx.AST))
    return Poly{{Monomial{}, *V}};
  if (const auto *DR = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(DR->getDecl());
    if (!VD)
      return std::nullopt;
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
      auto P = polyOf(S, U->getSubExpr(), Depth);
      if (!P)
        return std::nullopt;
      Poly N;
      addTo(N, *P, -1);
      return N;
    }
    if (U->getOpcode() == UO_Plus)
      return polyOf(S, U->getSubExpr(), Depth);
    return std::nullopt;
  }
  const auto *B = dyn_cast<BinaryOperator>(E);
  if (!B)
    return std::nullopt;
  auto L = polyOf(S, B->getLHS(), Depth), R = polyOf(S, B->getRHS(), Depth);
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
      containsMacro(Bound)) {
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

/// Splits a && chain (or, negated, a || chain) into its comparisons.
void conjuncts(const Expr *E, BinaryOperatorKind Join,
               std::vector<const Expr *> &Out) {
  E = E->IgnoreParenImpCasts();
  if (const auto *B = dyn_cast<BinaryOperator>(E);
      B && B->getOpcode() == Join) {
    conjuncts(B->getLHS(), Join, Out);
    conjuncts(B->getRHS(), Join, Out);
    return;
  }
  Out.push_back(E);
}

} // namespace

std::string fillIn(StringRef Pattern, StringRef Coord) {
  std::string S;
  for (char C : Pattern)
    S += C == '$' ? Coord.str() : std::string(1, C);
  return S;
}

/// `Name`, `Name + 2`, `Name - 1`.
std::string plusConst(StringRef Name, int64_t C) {
  if (C == 0)
    return Name.str();
  return (Name + (C > 0 ? " + " : " - ") + Twine(C > 0 ? C : -C)).str();
}

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
  std::vector<const Expr *> Parts;
  conjuncts(If->getCond(), EarlyReturn ? BO_LOr : BO_LAnd, Parts);
  for (const Expr *Part : Parts) {
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
    if (EarlyReturn) {
      // `x >= w` returns: the thread runs when `x < w`.
      static const std::pair<StringRef, StringRef> Neg[] = {
          {"< ", ">= "}, {">= ", "< "}, {"> ", "<= "}, {"<= ", "> "}};
      for (const auto &[From, To] : Neg)
        if (StringRef(C->Text).substr(2).starts_with(From)) {
          C->Text = "$ " + To.str() + C->Text.substr(2 + From.size());
          break;
        }
      C->Lower = !C->Lower;
    }
    (OnY ? P.GuardY : P.GuardX).push_back(*C);
  }
  std::vector<const Stmt *> Inner;
  if (EarlyReturn)
    Inner.assign(Stmts.begin() + At + 1, Stmts.end());
  else
    Inner.push_back(If->getThen());
  if (Inner.empty())
    return NotApplicable("nothing follows the guard");

  // Every read below must run whenever its thread passes the guard.
  for (const Stmt *St : Inner)
    if (const Stmt *J = anyJump(St))
      return NotApplicable("the guarded code leaves early at " + where(Ctx, J) +
                           ": the reads after it do not always run");

  // Loops counting up over constant ranges inside the guarded code (the
  // rows form keeps the order in which each output adds its terms only
  // for these).
  for (const Stmt *St : Inner)
    for (const auto &[V, R] : constantLoopRanges(St, Ctx.AST, /*UpOnly=*/true))
      S.LoopVars[V] = R;

  // The staged array: the pointer parameter read at offsets from (y, x).
  struct Cand {
    const ParmVarDecl *Param;
    std::vector<const ArraySubscriptExpr *> Reads;
  };
  std::vector<Cand> Cands;
  std::function<void(const Stmt *)> FindReads = [&](const Stmt *St) {
    if (!St)
      return;
    if (const auto *AS = dyn_cast<ArraySubscriptExpr>(St))
      if (const auto *PV =
              dyn_cast_or_null<ParmVarDecl>(referencedDecl(AS->getBase())))
        if (Variance V = threadVariance(AS->getIdx(), FD);
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
                         ", " + S.X->getName() + ")");
  }
  P.In = Best->Param;
  if (std::string B = analyzePointerParam(Ctx.AST, FD, P.In).Blocker;
      !B.empty())
    return NotApplicable("the staged array cannot be followed: " + B);
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

  // Every read of it: (y + dy) * P + (x + dx).
  const ValueDecl *Pitch = nullptr;
  for (const ArraySubscriptExpr *AS : Best->Reads) {
    std::string Text = exprText(Ctx, AS);
    auto Bad = [&](const Twine &Why) {
      return NotApplicable("the read '" +
                           (Text.empty() ? std::string("(in a macro)") : Text) +
                           "' " + Why);
    };
    if (Text.empty())
      return Bad("is written with a macro");
    auto IdxPoly = polyOf(S, AS->getIdx());
    if (!IdxPoly)
      return Bad("has an index that is not (y + dy) * pitch + (x + dx) with "
                 "constant offsets");
    StencilRead R;
    R.Access = AS;
    // The pitch multiplies the row index; any other value that is not a
    // constant is an offset that differs between launches.
    const ValueDecl *ThisPitch = nullptr;
    for (const auto &[M, C] : *IdxPoly)
      if (M.size() == 2 && (M[0] == S.Y || M[1] == S.Y))
        ThisPitch = M[0] == S.Y ? M[1] : M[0];
    for (const auto &[M, C] : *IdxPoly)
      for (const ValueDecl *D : M)
        if (D != S.X && D != S.Y && !S.LoopVars.count(D) && D != ThisPitch)
          return Bad("is at an offset '" + D->getName() +
                     "' that is not a constant (only constant offsets, or "
                     "loop variables with constant ranges, can be staged)");
    bool SawYP = false, SawX = false;
    for (const auto &[M, C] : *IdxPoly) {
      // Split each term into the pitch factor and the rest.
      const ValueDecl *Uniform = nullptr;
      Monomial Rest;
      for (const ValueDecl *D : M) {
        bool Var = D == S.X || D == S.Y || S.LoopVars.count(D);
        if (!Var && !Uniform)
          Uniform = D;
        else
          Rest.push_back(D);
      }
      for (const ValueDecl *D : Rest)
        if (!(D == S.X || D == S.Y || S.LoopVars.count(D)))
          return Bad("has a term that is not constant");
      if (Rest.size() > 1)
        return Bad("multiplies two indices");
      const ValueDecl *V = Rest.empty() ? nullptr : Rest.front();
      Offset &O = Uniform ? R.DY : R.DX;
      if (V == S.Y) {
        if (!Uniform || C != 1)
          return Bad("does not use '" + S.Y->getName() + "' as (" +
                     S.Y->getName() + " + dy) * pitch");
        SawYP = true;
      } else if (V == S.X) {
        if (Uniform || C != 1)
          return Bad("does not use '" + S.X->getName() + "' as + (" +
                     S.X->getName() + " + dx)");
        SawX = true;
      } else if (V) {
        O.Vars.push_back({V, C});
      } else {
        O.Const += C;
      }
    }
    if (!SawYP || !SawX || !ThisPitch)
      return Bad("is not at an offset from the point (" + S.Y->getName() +
                 ", " + S.X->getName() + ") of a row-major grid");
    if (Pitch && Pitch != ThisPitch)
      return Bad("uses a different pitch than the other reads");
    Pitch = ThisPitch;
    for (Offset *O : {&R.DY, &R.DX}) {
      O->Lo = O->Hi = O->Const;
      for (const auto &[V, C] : O->Vars) {
        auto [L, H] = S.LoopVars[V];
        O->Lo += std::min(C * L, C * H);
        O->Hi += std::max(C * L, C * H);
      }
    }
    for (const auto &[V, C] : R.DY.Vars)
      for (const auto &[W, D] : R.DX.Vars)
        if (V == W)
          return Bad("moves along a diagonal with '" + V->getName() +
                     "' (a staged box would hold elements it never reads)");

    // Enclosing `if`s inside the guarded code bound the read's own row or
    // column; anything else would make the read set smaller than a box.
    const Stmt *Child = AS;
    DynTypedNodeList Ps = Ctx.AST.getParents(*Child);
    while (!Ps.empty()) {
      const Stmt *Par = Ps[0].get<Stmt>();
      if (const auto *D = Ps[0].get<VarDecl>(); D && !Par) {
        // A read in a local's initializer: on to the declaration's
        // statement, whose `if`s guard it as well.
        DynTypedNodeList DPs = Ctx.AST.getParents(*D);
        if (DPs.empty() || !DPs[0].get<DeclStmt>())
          return Bad("initializes a variable that is not declared by its "
                     "own statement");
        Child = DPs[0].get<DeclStmt>();
        Ps = Ctx.AST.getParents(*Child);
        continue;
      }
      if (!Par || Par == If || Par == Body)
        break;
      if (const auto *CO = dyn_cast<ConditionalOperator>(Par);
          CO && CO->getCond() != Child)
        return Bad("is inside a conditional expression");
      if (const auto *BO = dyn_cast<BinaryOperator>(Par);
          BO && BO->isLogicalOp() && BO->getRHS() == Child)
        return Bad("is on the right of '" + BO->getOpcodeStr() + "'");
      if (const auto *PI = dyn_cast<IfStmt>(Par)) {
        if (PI->getCond() == Child || PI->getElse() == Child)
          return Bad("is in the condition or the else branch of an if");
        std::vector<const Expr *> Cs;
        conjuncts(PI->getCond(), BO_LAnd, Cs);
        for (const Expr *C : Cs) {
          const auto *B = dyn_cast<BinaryOperator>(C);
          auto Same = [&](const Expr *X, const Offset &O, bool Row) {
            auto Q = polyOf(S, X);
            if (!Q)
              return false;
            Poly Want;
            Want[{Row ? static_cast<const ValueDecl *>(S.Y) : S.X}] = 1;
            if (O.Const)
              Want[{}] = O.Const;
            for (const auto &[V, K2] : O.Vars)
              Want[{V}] = K2;
            return *Q == Want;
          };
          std::string Why;
          std::optional<BoundCmp> BC;
          bool Row = false;
          if (B)
            BC = boundCmp(
                Ctx, B, [&](const Expr *X) { return Same(X, R.DY, true); }, FD,
                Why);
          if (BC)
            Row = true;
          else if (B && Why.empty())
            BC = boundCmp(
                Ctx, B, [&](const Expr *X) { return Same(X, R.DX, false); }, FD,
                Why);
          if (!BC)
            return Bad("is guarded by '" + exprText(Ctx, C) +
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
                return Bad("is guarded by a bound that uses '" + V->getName() +
                           "', declared after the bounds guard");
          (Row ? R.GuardY : R.GuardX).push_back(BC->Text);
        }
      }
      if (isa<WhileStmt, DoStmt, CXXForRangeStmt>(Par))
        return Bad("is inside a loop without a constant range");
      if (const auto *F = dyn_cast<ForStmt>(Par)) {
        const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit());
        const Decl *V =
            DS && DS->isSingleDecl() ? DS->getSingleDecl() : nullptr;
        if (F->getBody() != Child || !V ||
            !S.LoopVars.count(cast<ValueDecl>(V)))
          return Bad("is inside a loop without a constant range (its "
                     "elements would be staged even when the loop does not "
                     "run)");
      }
      Child = Par;
      Ps = Ctx.AST.getParents(*Child);
    }
    P.Reads.push_back(std::move(R));
  }
  if (P.Reads.size() < 2 && P.Reads.front().DY.Lo == P.Reads.front().DY.Hi &&
      P.Reads.front().DX.Lo == P.Reads.front().DX.Hi)
    return NotApplicable("'" + P.In->getName() +
                         "' is read at one point only: nothing to share");
  P.Pitch = Pitch->getNameAsString();
  if (const auto *PV = dyn_cast<VarDecl>(Pitch);
      PV && !isa<ParmVarDecl>(PV) && !PV->isFileVarDecl()) {
    // A local pitch must be declared before the guard.
    if (!Ctx.AST.getSourceManager().isBeforeInTranslationUnit(
            PV->getLocation(), If->getBeginLoc()))
      return NotApplicable("the pitch '" + P.Pitch +
                           "' is declared inside the guarded code");
  }
  QualType IT = P.Reads.front().Access->getIdx()->IgnoreImpCasts()->getType();
  if (Ctx.AST.getTypeSize(IT) > Ctx.AST.getTypeSize(Ctx.AST.IntTy))
    P.IndexCast = "(" + typeName(IT, Ctx.AST) + ")";
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
            plusConst(S.X->getName(), P.HaloXHi);
  return P;
}

/// Offsets rendered: "ky - 3", "1", "0".
std::string offsetText(const Offset &O, int64_t Add) {
  std::string S;
  for (const auto &[V, C] : O.Vars) {
    std::string Term = (C == 1 || C == -1) ? V->getNameAsString()
                                           : std::to_string(C < 0 ? -C : C) +
                                                 " * " + V->getNameAsString();
    if (S.empty())
      S = C < 0 ? "-" + Term : Term;
    else
      S += (C < 0 ? " - " : " + ") + Term;
  }
  int64_t K = O.Const + Add;
  if (S.empty())
    return std::to_string(K);
  return plusConst(S, K);
}

Expected<tooling::Replacements>
rewriteStencil(const EditContext &Ctx, const Edit &E, const StencilPlan &P) {
  const KernelInfo &K = *P.Kernel.Info;
  std::string FnText =
      Ctx.Code.slice(K.Range.Begin.Offset, K.Range.End.Offset).str();
  HaloTile T;
  T.ElemType = P.ElemType;
  T.Tile = freshName(FnText, P.In->getName().str() + "Tile");
  T.Slot = freshName(FnText, "slot");
  T.Ty = freshName(FnText, "ty");
  T.Tx = freshName(FnText, "tx");
  T.Gy = freshName(FnText, "gy");
  T.Gx = freshName(FnText, "gx");
  T.BX = P.BX;
  T.BY = P.BY;
  T.HaloY = P.HaloYLo;
  T.HaloX = P.HaloXLo;
  T.Rows = P.BY + P.HaloYLo + P.HaloYHi;
  T.Cols = P.BX + P.HaloXLo + P.HaloXHi;
  T.Load = P.In->getNameAsString() + "[" + P.IndexCast + T.Gy + " * " +
           P.Pitch + " + " + T.Gx + "]";

  // One condition per box of reads: some thread of the block that passes
  // the guard reads the slot. Boxes of reads with the same own guards merge
  // when they touch.
  struct Box {
    int64_t YLo, YHi, XLo, XHi;
    std::vector<std::string> GY, GX;
  };
  std::vector<Box> Boxes;
  for (const StencilRead &R : P.Reads) {
    Box B{R.DY.Lo, R.DY.Hi, R.DX.Lo, R.DX.Hi, R.GuardY, R.GuardX};
    if (none_of(Boxes, [&](const Box &O) {
          return O.YLo == B.YLo && O.YHi == B.YHi && O.XLo == B.XLo &&
                 O.XHi == B.XHi && O.GY == B.GY && O.GX == B.GX;
        }))
      Boxes.push_back(B);
  }
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (size_t I = 0; I < Boxes.size() && !Changed; ++I)
      for (size_t J = I + 1; J < Boxes.size() && !Changed; ++J) {
        Box &A = Boxes[I], &B = Boxes[J];
        if (A.GY != B.GY || A.GX != B.GX)
          continue;
        bool SameY = A.YLo == B.YLo && A.YHi == B.YHi;
        bool SameX = A.XLo == B.XLo && A.XHi == B.XHi;
        bool TouchX = A.XLo <= B.XHi + 1 && B.XLo <= A.XHi + 1;
        bool TouchY = A.YLo <= B.YHi + 1 && B.YLo <= A.YHi + 1;
        if ((SameY && TouchX) || (SameX && TouchY)) {
          A.YLo = std::min(A.YLo, B.YLo);
          A.YHi = std::max(A.YHi, B.YHi);
          A.XLo = std::min(A.XLo, B.XLo);
          A.XHi = std::max(A.XHi, B.XHi);
          Boxes.erase(Boxes.begin() + J);
          Changed = true;
        }
      }
  }
  std::vector<std::string> Conds;
  for (const Box &B : Boxes) {
    std::vector<std::string> Parts;
    // A reader row r = gy - d for some d in [YLo, YHi]: the guard's lower
    // bounds hold for the largest r, its upper bounds for the smallest.
    for (const BoundCmp &C : P.GuardY)
      Parts.push_back(
          fillIn(C.Text, plusConst(T.Gy, C.Lower ? -B.YLo : -B.YHi)));
    for (const BoundCmp &C : P.GuardX)
      Parts.push_back(
          fillIn(C.Text, plusConst(T.Gx, C.Lower ? -B.XLo : -B.XHi)));
    // ... and the reader lies in this block.
    if (P.HaloYLo + B.YLo > 0)
      Parts.push_back(T.Ty + " >= " + std::to_string(P.HaloYLo + B.YLo));
    if (P.HaloYLo + P.BY + B.YHi < T.Rows)
      Parts.push_back(T.Ty + " < " + std::to_string(P.HaloYLo + P.BY + B.YHi));
    if (P.HaloXLo + B.XLo > 0)
      Parts.push_back(T.Tx + " >= " + std::to_string(P.HaloXLo + B.XLo));
    if (P.HaloXLo + P.BX + B.XHi < T.Cols)
      Parts.push_back(T.Tx + " < " + std::to_string(P.HaloXLo + P.BX + B.XHi));
    // The read's own guard admits the element.
    for (const std::string &G : B.GY)
      Parts.push_back(fillIn(G, T.Gy));
    for (const std::string &G : B.GX)
      Parts.push_back(fillIn(G, T.Gx));
    Conds.push_back(Parts.empty() ? "true" : join(Parts, " && "));
  }
  if (Conds.size() == 1)
    T.Cond = Conds.front();
  else {
    for (std::string &C : Conds)
      C = "(" + C + ")";
    T.Cond = join(Conds, " ||\n" + P.Indent + "      ");
  }

  tooling::Replacements R;
  std::string Staging = haloTileLoad(T, P.Indent) + "\n" + P.Indent;
  if (Error Err = addReplacement(R, insertAt(Ctx, P.InsertAt, Staging), E))
    return std::move(Err);
  for (const StencilRead &Rd : P.Reads) {
    auto S = looseExprSpan(Ctx, Rd.Access);
    if (!S)
      return reject(E, "internal",
                    "kernel '" + E.Target + "': the read '" +
                        exprText(Ctx, Rd.Access) +
                        "' has no place in the file");
    std::string Text = T.Tile + "[" + plusConst("threadIdx.y", 0) +
                       (offsetText(Rd.DY, P.HaloYLo) == "0"
                            ? ""
                            : " + " + offsetText(Rd.DY, P.HaloYLo)) +
                       "][threadIdx.x" +
                       (offsetText(Rd.DX, P.HaloXLo) == "0"
                            ? ""
                            : " + " + offsetText(Rd.DX, P.HaloXLo)) +
                       "]";
    if (Error Err = addReplacement(
            R,
            tooling::Replacement(Ctx.FileName, S->Begin.Offset,
                                 S->End.Offset - S->Begin.Offset, Text),
            E))
      return std::move(Err);
  }
  return R;
}

} // namespace sharedtiling
} // namespace optiml
