//===- SharedTiling.cpp - Matmul-like kernels through shared tiles --------===//
//
// Pattern: the classic one-thread-per-output matrix product
//   row = blockIdx.y * blockDim.y + threadIdx.y;
//   col = blockIdx.x * blockDim.x + threadIdx.x;
//   if (row < M && col < N) {          // or: if (row >= M || col >= N) return;
//     acc = <uniform init>;
//     for (k = 0; k < K; ++k)
//       acc += A[f(row, k)] * B[g(k, col)];
//     <statements that use acc>        // the store: C[...] = acc, alpha * acc
//   }
// where f depends on row, k and block-uniform values only, g on k, col and
// block-uniform values only.
//
// Rewrite: the standard TILE x TILE tiled product. Every thread of a block
// loads one element of an A tile (its row, column kTile + threadIdx.x) and
// one of a B tile (row kTile + threadIdx.y, its column), zero-filled outside
// the matrices; a barrier; the inner product over the tile; a barrier before
// the next tile overwrites it. The bounds guard moves to the loads and the
// store, so every thread reaches every barrier.
//
// Why it is exact: the thread (ty, kk) of a block has the same row as any
// thread (ty, tx), so As[ty][kk] = A[f(row, kTile + kk)]; likewise
// Bs[kk][tx] = B[g(kTile + kk, col)]. Per output the products are added in
// the same order (k ascending); the zero-filled tail adds +0.0f, which leaves
// any sum unchanged. Requires blockDim == (TILE, TILE, 1): every launch in
// the file must provably use that block.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "SharedStaging.h"
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
namespace {

using Dim3 = std::array<int64_t, 3>;

/// The constant (x, y, z) of a launch's block argument: an integer, a
/// `dim3(...)` of constants, or a local variable (never written after its
/// initialization) holding one.
std::optional<Dim3> constDim3(const EditContext &Ctx, const Expr *A,
                              unsigned Depth = 0) {
  if (!A || Depth > 4)
    return std::nullopt;
  while (true) {
    A = A->IgnoreParenImpCasts();
    if (const auto *M = dyn_cast<MaterializeTemporaryExpr>(A))
      A = M->getSubExpr();
    else if (const auto *B = dyn_cast<CXXBindTemporaryExpr>(A))
      A = B->getSubExpr();
    else if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(A))
      A = FC->getSubExpr();
    else
      break;
  }
  if (const auto *VD = dyn_cast_or_null<VarDecl>(referencedDecl(A))) {
    if (auto V = intValue(A, Ctx.AST))
      return Dim3{*V, 1, 1};
    const auto *Fn = dyn_cast<FunctionDecl>(VD->getDeclContext());
    if (!VD->isLocalVarDecl() || !VD->hasInit() || !Fn || !Fn->getBody() ||
        writtenVars(Fn->getBody()).contains(VD))
      return std::nullopt;
    return constDim3(Ctx, VD->getInit(), Depth + 1);
  }
  if (A->getType()->isIntegerType()) {
    if (auto V = intValue(A, Ctx.AST))
      return Dim3{*V, 1, 1};
    return std::nullopt;
  }
  const auto *CE = dyn_cast<CXXConstructExpr>(A);
  if (!CE || CE->getNumArgs() == 0 || CE->getNumArgs() > 3)
    return std::nullopt;
  // A copy: `dim3 b = block;`.
  if (CE->getNumArgs() == 1 && CE->getArg(0)->getType()->isRecordType())
    return constDim3(Ctx, CE->getArg(0), Depth + 1);
  Dim3 D{1, 1, 1};
  for (unsigned I = 0; I < CE->getNumArgs(); ++I) {
    const Expr *Arg = CE->getArg(I);
    if (isa<CXXDefaultArgExpr>(Arg))
      continue;
    auto V = intValue(Arg->IgnoreParenImpCasts(), Ctx.AST);
    if (!V) {
      // `int tile = 16; dim3 block(tile, tile);`
      const auto *VD = dyn_cast_or_null<VarDecl>(referencedDecl(Arg));
      const auto *Fn =
          VD ? dyn_cast<FunctionDecl>(VD->getDeclContext()) : nullptr;
      if (!VD || !VD->isLocalVarDecl() || !VD->hasInit() || !Fn ||
          !Fn->getBody() || writtenVars(Fn->getBody()).contains(VD))
        return std::nullopt;
      V = intValue(VD->getInit(), Ctx.AST);
      if (!V)
        return std::nullopt;
    }
    D[I] = *V;
  }
  return D;
}

std::string dimText(const Dim3 &D) {
  return std::to_string(D[0]) + "x" + std::to_string(D[1]) + "x" +
         std::to_string(D[2]);
}

/// `V < Bound` or `Bound > V` (Less) / `V >= Bound` or `Bound <= V`
/// (!Less): the bound.
const Expr *boundOf(const Expr *C, const VarDecl *V, bool Less) {
  const auto *B = dyn_cast<BinaryOperator>(C->IgnoreParenImpCasts());
  if (!B)
    return nullptr;
  BinaryOperatorKind Op = B->getOpcode();
  if (refersTo(B->getLHS(), V) && Op == (Less ? BO_LT : BO_GE))
    return B->getRHS();
  if (refersTo(B->getRHS(), V) && Op == (Less ? BO_GT : BO_LE))
    return B->getLHS();
  return nullptr;
}

/// Reads, calls, assignments or increments inside an index expression.
bool hasLoadOrEffect(const Stmt *S) {
  if (!S)
    return false;
  if (isa<ArraySubscriptExpr, CallExpr, MemberExpr, CXXMemberCallExpr>(S))
    return true;
  if (const auto *U = dyn_cast<UnaryOperator>(S))
    if (U->getOpcode() == UO_Deref || U->isIncrementDecrementOp() ||
        U->getOpcode() == UO_AddrOf)
      return true;
  if (const auto *B = dyn_cast<BinaryOperator>(S))
    if (B->isAssignmentOp())
      return true;
  for (const Stmt *C : S->children())
    if (hasLoadOrEffect(C))
      return true;
  return false;
}

void collectRefs(const Stmt *S, const ValueDecl *D,
                 std::vector<const DeclRefExpr *> &Out) {
  if (!S)
    return;
  if (const auto *DR = dyn_cast<DeclRefExpr>(S); DR && DR->getDecl() == D)
    Out.push_back(DR);
  for (const Stmt *C : S->children())
    collectRefs(C, D, Out);
}

/// Every variable \p S names other than \p Allowed is the same for every
/// thread of a block; else the first one that is not.
std::string nonUniformRef(const Stmt *S, ArrayRef<const ValueDecl *> Allowed,
                          const FunctionDecl *Kernel) {
  if (!S)
    return "";
  if (const auto *DR = dyn_cast<DeclRefExpr>(S))
    if (!is_contained(Allowed, DR->getDecl()) &&
        !threadVariance(DR, Kernel).uniform())
      return DR->getDecl()->getNameAsString();
  for (const Stmt *C : S->children())
    if (std::string N = nonUniformRef(C, Allowed, Kernel); !N.empty())
      return N;
  return "";
}

std::string typeName(QualType T, const ASTContext &AST) {
  PrintingPolicy PP(AST.getLangOpts());
  PP.SuppressTagKeyword = true;
  return T.getUnqualifiedType().getAsString(PP);
}

std::string zeroOf(QualType T, StringRef Name) {
  if (const auto *B = T->getAs<BuiltinType>()) {
    if (B->getKind() == BuiltinType::Float)
      return "0.0f";
    if (B->getKind() == BuiltinType::Double)
      return "0.0";
  }
  return Name.str() + "(0)";
}

//===--- Stencils
//-----------------------------------------------------------===//
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

/// An offset along one axis: Const + sum of Coef * loop variable.
struct Offset {
  int64_t Const = 0;
  std::vector<std::pair<const ValueDecl *, int64_t>> Vars;
  int64_t Lo = 0, Hi = 0; ///< its range
};

/// One read of the staged array.
struct StencilRead {
  const ArraySubscriptExpr *Access = nullptr;
  Offset DY, DX;
  /// Comparisons of the read's row or column with bounds (from enclosing
  /// `if`s), rendered with a placeholder for the coordinate.
  std::vector<std::string> GuardY, GuardX; ///< "$ >= 0", "$ < h"
};

/// One comparison of a guard: the coordinate, the operator, the bound.
struct BoundCmp {
  bool Lower = false; ///< the coordinate is bounded from below
  std::string Text;   ///< with '$' for the coordinate
};

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

struct StencilPlan {
  ResolvedKernel Kernel;
  const ParmVarDecl *In = nullptr;
  std::string ElemType, Pitch, IndexCast;
  std::vector<StencilRead> Reads;
  std::vector<BoundCmp> GuardY, GuardX; ///< the thread guard
  int64_t BX = 0, BY = 0;
  int64_t HaloYLo = 0, HaloYHi = 0, HaloXLo = 0, HaloXHi = 0;
  unsigned InsertAt = 0;
  std::string Indent;
  std::string Shape; ///< for prepare(): "5-point", "7x7 (loops)"
};

/// \p Shape is set once the reads are recognized (later refusals are about
/// the launches or the tile's size).
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
  auto IsBareReturn = [](const Stmt *St) {
    if (const auto *CS = dyn_cast<CompoundStmt>(St); CS && CS->size() == 1)
      St = CS->body_front();
    const auto *R = dyn_cast<ReturnStmt>(St);
    return R && !R->getRetValue();
  };
  bool EarlyReturn = IsBareReturn(If->getThen());
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
  std::function<const Stmt *(const Stmt *)> AnyJump =
      [&](const Stmt *St) -> const Stmt * {
    if (!St)
      return nullptr;
    if (isa<ReturnStmt, BreakStmt, ContinueStmt, GotoStmt>(St))
      return St;
    for (const Stmt *C : St->children())
      if (const Stmt *J = AnyJump(C))
        return J;
    return nullptr;
  };
  for (const Stmt *St : Inner)
    if (const Stmt *J = AnyJump(St))
      return NotApplicable("the guarded code leaves early at " +
                           where(Ctx, J) +
                           ": the reads after it do not always run");

  // Loops with constant ranges inside the guarded code.
  std::string Problem;
  std::function<void(const Stmt *)> FindLoops = [&](const Stmt *St) {
    if (!St || !Problem.empty())
      return;
    if (const auto *F = dyn_cast<ForStmt>(St)) {
      const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit());
      const VarDecl *V = DS && DS->isSingleDecl()
                             ? dyn_cast<VarDecl>(DS->getSingleDecl())
                             : nullptr;
      std::optional<int64_t> Lo =
          V && V->hasInit() ? intValue(V->getInit(), Ctx.AST) : std::nullopt;
      const Expr *Bd =
          V && F->getCond() ? boundOf(F->getCond(), V, true) : nullptr;
      std::optional<int64_t> Hi = Bd ? intValue(Bd, Ctx.AST) : std::nullopt;
      bool Step1 = false;
      if (const Expr *Inc =
              F->getInc() ? F->getInc()->IgnoreParenImpCasts() : nullptr)
        if (const auto *U = dyn_cast<UnaryOperator>(Inc))
          Step1 = U->isIncrementOp() && V && refersTo(U->getSubExpr(), V);
      if (V && Lo && Hi && Step1 && *Hi > *Lo &&
          !writtenVars(F->getBody()).contains(V))
        S.LoopVars[V] = {*Lo, *Hi - 1};
    }
    for (const Stmt *C : St->children())
      FindLoops(C);
  };
  for (const Stmt *St : Inner)
    FindLoops(St);

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
          return NotApplicable("the kernel writes into the array '" +
                               C.Param->getName() +
                               "' it reads at neighbouring points (at " +
                               where(Ctx, W.Target) +
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
                           P.In->getName() + "' at " +
                           where(Ctx, W.Target));
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
  std::string Staging =
      haloTileLoad(T, P.Indent) + "\n" + P.Indent;
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
    if (Error Err =
            addReplacement(R,
                           tooling::Replacement(
                               Ctx.FileName, S->Begin.Offset,
                               S->End.Offset - S->Begin.Offset, Text),
                           E))
      return std::move(Err);
  }
  return R;
}

struct Operand {
  const ArraySubscriptExpr *Access = nullptr;
  std::string ElemType, Zero;
};

struct MatmulPlan {
  ResolvedKernel Kernel;
  const VarDecl *Row = nullptr, *Col = nullptr, *K = nullptr;
  std::string RowBound, ColBound, KBound; ///< texts, parenthesized
  std::string StoreGuard;                 ///< `row < M && col < N`
  const DeclStmt *AccDecl = nullptr;
  const ForStmt *Loop = nullptr;
  Operand A, B;
  std::vector<const Stmt *> Post;
  unsigned RegionBegin = 0, RegionEnd = 0;
  std::string Indent;
  Dim3 Block{0, 0, 0}; ///< the block every launch uses
};

class SharedTilingTransform : public Transform {
public:
  StringRef kind() const override { return "shared-tiling"; }
  StringRef description() const override {
    return "stage the A and B tiles of a matmul-like kernel (TILE x TILE "
           "blocks, zero-filled edges), or a 2D stencil's input tile with its "
           "halo, in shared memory";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec::integer(
        "tile",
        "the tile edge: 8, 16 or 32 (every launch's block must be "
        "dim3(tile, tile))",
        8, 32)};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Edit E = defaultEdit(kind(), Target);
    Applicability A;
    if (auto R = plan(Ctx, E, std::nullopt, &A); !R)
      A.Reason = rejectionReason(R.takeError());
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    std::optional<int64_t> Tile = E.getInt("tile");
    if (Tile && *Tile != 8 && *Tile != 16 && *Tile != 32)
      return reject(E, "params",
                    "tile must be 8, 16 or 32 (got " + Twine(*Tile) + ")");
    return plan(Ctx, E, Tile, nullptr);
  }

private:
  /// \p Shape is set once the matmul shape is recognized.
  Expected<MatmulPlan> analyze(const EditContext &Ctx, const Edit &E,
                               std::optional<int64_t> Tile, bool &Shape) const;
  /// The matmul rewrite, else the stencil rewrite, else why neither
  /// applies: the reason of a shape that was recognized, or both reasons.
  Expected<tooling::Replacements> plan(const EditContext &Ctx, const Edit &E,
                                       std::optional<int64_t> Tile,
                                       Applicability *A) const;
  Expected<tooling::Replacements> rewrite(const EditContext &Ctx, const Edit &E,
                                          const MatmulPlan &P) const;
};

Expected<tooling::Replacements>
SharedTilingTransform::plan(const EditContext &Ctx, const Edit &E,
                            std::optional<int64_t> Tile,
                            Applicability *A) const {
  auto K = resolveKernel(Ctx, E, E.Target);
  if (!K)
    return K.takeError();
  bool MatmulShape = false, StencilShape = false;
  auto M = analyze(Ctx, E, Tile, MatmulShape);
  if (M) {
    if (!A)
      return rewrite(Ctx, E, *M);
    int64_t T = M->Block[0];
    A->Applies = true;
    A->Reason = "matmul-like: '" + M->Kernel.Info->Name + "' accumulates '" +
                exprText(Ctx, M->A.Access) + " * " +
                exprText(Ctx, M->B.Access) + "' over '" +
                M->K->getNameAsString() + "' and its launches use " +
                std::to_string(T) + "x" + std::to_string(T) +
                " blocks: both operands can be staged in " + std::to_string(T) +
                "x" + std::to_string(T) + " shared tiles";
    Edit S = E;
    S.Params["tile"] = T;
    A->Suggestions.push_back(S);
    return tooling::Replacements();
  }
  Error MErr = M.takeError();
  if (MatmulShape)
    return std::move(MErr);
  std::string Matmul = rejectionReason(std::move(MErr));
  auto St = analyzeStencil(Ctx, E, Tile, StencilShape);
  if (St) {
    if (!A)
      return rewriteStencil(Ctx, E, *St);
    A->Applies = true;
    A->Reason = "2D stencil: " + St->Shape + "; its launches use " +
                std::to_string(St->BX) + "x" + std::to_string(St->BY) +
                " blocks: each block can stage its " +
                std::to_string(St->BY + St->HaloYLo + St->HaloYHi) + "x" +
                std::to_string(St->BX + St->HaloXLo + St->HaloXHi) +
                " tile with the halo in shared memory";
    A->Suggestions.push_back(E);
    return tooling::Replacements();
  }
  Error SErr = St.takeError();
  if (StencilShape)
    return std::move(SErr);
  std::string Stencil = rejectionReason(std::move(SErr));
  std::string Prefix = "kernel '" + E.Target + "': ";
  StringRef MS(Matmul), SS(Stencil);
  MS.consume_front(Prefix);
  SS.consume_front(Prefix);
  return reject(E, "not-applicable",
                Prefix + "not matmul-like (" + MS + "); not a 2D stencil (" +
                    SS + ")");
}

Expected<MatmulPlan> SharedTilingTransform::analyze(const EditContext &Ctx,
                                                    const Edit &E,
                                                    std::optional<int64_t> Tile,
                                                    bool &ShapeFound) const {
  auto K = resolveKernel(Ctx, E, E.Target);
  if (!K)
    return K.takeError();
  MatmulPlan P;
  P.Kernel = *K;
  const FunctionDecl *FD = K->Decl;
  std::string Name = "kernel '" + E.Target + "'";
  auto NotApplicable = [&](const Twine &Why) {
    return reject(E, "not-applicable", Name + ": " + Why);
  };
  const auto *Body = dyn_cast_or_null<CompoundStmt>(FD->getBody());
  if (!Body)
    return NotApplicable("has no body");
  if (K->Info->InMacro || containsMacro(Body))
    return NotApplicable("its body is written with macros");
  if (!K->Info->Shared.empty())
    return NotApplicable("already uses shared memory");
  if (!K->Info->Syncthreads.empty())
    return NotApplicable("already synchronizes threads");

  // The row and column indices, then the guard.
  SmallVector<const Stmt *, 8> Stmts(Body->body_begin(), Body->body_end());
  size_t At = 0;
  for (; At < Stmts.size(); ++At) {
    const auto *DS = dyn_cast<DeclStmt>(Stmts[At]);
    const VarDecl *VD = DS && DS->isSingleDecl()
                            ? dyn_cast<VarDecl>(DS->getSingleDecl())
                            : nullptr;
    auto Dim = VD && VD->hasInit() && VD->getType()->isIntegerType()
                   ? linearIndexDim(VD->getInit())
                   : std::nullopt;
    if (Dim == 'y' && !P.Row)
      P.Row = VD;
    else if (Dim == 'x' && !P.Col)
      P.Col = VD;
    else
      break;
  }
  if (!P.Row || !P.Col)
    return NotApplicable(
        "the body does not start with a row index 'row = blockIdx.y * "
        "blockDim.y + threadIdx.y' and a column index 'col = blockIdx.x * "
        "blockDim.x + threadIdx.x'");
  DenseSet<const ValueDecl *> Written = writtenVars(Body);
  for (const VarDecl *V : {P.Row, P.Col})
    if (Written.contains(V))
      return NotApplicable("the index '" + V->getName() + "' is written");
  std::string RowN = P.Row->getNameAsString(), ColN = P.Col->getNameAsString();
  std::string Expected = "'if (" + RowN + " < M && " + ColN +
                         " < N)' or 'if (" + RowN + " >= M || " + ColN +
                         " >= N) return;'";
  const auto *If = At < Stmts.size() ? dyn_cast<IfStmt>(Stmts[At]) : nullptr;
  if (!If || If->getElse() || If->getInit() || If->getConditionVariable())
    return NotApplicable("the indices are not followed at once by the guard " +
                         Expected);
  const auto *Cond = dyn_cast<BinaryOperator>(If->getCond()->IgnoreParens());
  std::string CondText = exprText(Ctx, If->getCond());
  auto IsBareReturn = [](const Stmt *S) {
    if (const auto *CS = dyn_cast<CompoundStmt>(S); CS && CS->size() == 1)
      S = CS->body_front();
    const auto *R = dyn_cast<ReturnStmt>(S);
    return R && !R->getRetValue();
  };
  bool EarlyReturn = Cond && Cond->getOpcode() == BO_LOr;
  if (!Cond || (Cond->getOpcode() != BO_LAnd && !EarlyReturn) ||
      (EarlyReturn && !IsBareReturn(If->getThen())))
    return NotApplicable("the guard 'if (" + CondText + ")' is not " +
                         Expected);
  const Expr *RowB = nullptr, *ColB = nullptr;
  for (int Swap = 0; Swap < 2 && !(RowB && ColB); ++Swap) {
    const Expr *L = Swap ? Cond->getRHS() : Cond->getLHS();
    const Expr *R = Swap ? Cond->getLHS() : Cond->getRHS();
    RowB = boundOf(L, P.Row, !EarlyReturn);
    ColB = boundOf(R, P.Col, !EarlyReturn);
  }
  if (!RowB || !ColB)
    return NotApplicable("the guard 'if (" + CondText + ")' is not " +
                         Expected);
  for (const Expr *Bd : {RowB, ColB})
    if (!threadVariance(Bd, FD).uniform() || Bd->HasSideEffects(Ctx.AST))
      return NotApplicable("the bound '" + exprText(Ctx, Bd) +
                           "' is not the same for every thread");
  P.RowBound = parenthesize(exprText(Ctx, RowB));
  P.ColBound = parenthesize(exprText(Ctx, ColB));
  P.StoreGuard = EarlyReturn ? RowN + " < " + P.RowBound + " && " + ColN +
                                   " < " + P.ColBound
                             : CondText;

  // The guarded statements: the accumulator, the k loop, the rest.
  std::vector<const Stmt *> Inner;
  if (EarlyReturn) {
    Inner.assign(Stmts.begin() + At + 1, Stmts.end());
  } else {
    if (At + 1 != Stmts.size())
      return NotApplicable("the guard is not the last statement of the "
                           "kernel");
    if (const auto *CS = dyn_cast<CompoundStmt>(If->getThen()))
      Inner.assign(CS->body_begin(), CS->body_end());
    else
      Inner.push_back(If->getThen());
  }
  const char *Shape = "the guarded code is not 'acc = <init>; for (k = 0; k < "
                      "K; ++k) acc += A[...] * B[...]; <store>'";
  if (Inner.size() < 3)
    return NotApplicable(Shape);
  P.AccDecl = dyn_cast<DeclStmt>(Inner[0]);
  P.Loop = dyn_cast<ForStmt>(Inner[1]);
  const VarDecl *Acc = P.AccDecl && P.AccDecl->isSingleDecl()
                           ? dyn_cast<VarDecl>(P.AccDecl->getSingleDecl())
                           : nullptr;
  if (!Acc || !P.Loop || !Acc->hasInit() || !Acc->isLocalVarDecl() ||
      Acc->isStaticLocal() || !Acc->getType()->isArithmeticType())
    return NotApplicable(Shape);
  if (!threadVariance(Acc->getInit(), FD).uniform() ||
      Acc->getInit()->HasSideEffects(Ctx.AST))
    return NotApplicable("the accumulator '" + Acc->getName() +
                         "' starts from a value that is not the same for "
                         "every thread ('" +
                         exprText(Ctx, Acc->getInit()) + "')");
  P.Post.assign(Inner.begin() + 2, Inner.end());

  // for (k = 0; k < K; ++k)
  const ForStmt *L = P.Loop;
  const auto *InitDS = dyn_cast_or_null<DeclStmt>(L->getInit());
  P.K = InitDS && InitDS->isSingleDecl()
            ? dyn_cast<VarDecl>(InitDS->getSingleDecl())
            : nullptr;
  std::string LoopShape = "the loop is not 'for (int k = 0; k < K; ++k)'";
  if (!P.K || !P.K->hasInit() || !P.K->getType()->isIntegerType() ||
      intValue(P.K->getInit(), Ctx.AST) != 0)
    return NotApplicable(LoopShape);
  const Expr *KB =
      L->getCond() ? boundOf(L->getCond(), P.K, /*Less=*/true) : nullptr;
  bool Step1 = false;
  if (const Expr *Inc =
          L->getInc() ? L->getInc()->IgnoreParenImpCasts() : nullptr) {
    if (const auto *U = dyn_cast<UnaryOperator>(Inc))
      Step1 = U->isIncrementOp() && refersTo(U->getSubExpr(), P.K);
    else if (const auto *CA = dyn_cast<CompoundAssignOperator>(Inc))
      Step1 = CA->getOpcode() == BO_AddAssign && refersTo(CA->getLHS(), P.K) &&
              intValue(CA->getRHS(), Ctx.AST) == 1;
  }
  if (!KB || !Step1)
    return NotApplicable(LoopShape);
  if (!threadVariance(KB, FD).uniform() || KB->HasSideEffects(Ctx.AST))
    return NotApplicable("the loop bound '" + exprText(Ctx, KB) +
                         "' is not the same for every thread");
  P.KBound = parenthesize(exprText(Ctx, KB));

  // acc += A[f(row, k)] * B[g(k, col)];
  const Stmt *LB = L->getBody();
  if (const auto *CS = dyn_cast<CompoundStmt>(LB); CS && CS->size() == 1)
    LB = CS->body_front();
  const auto *Upd = dyn_cast<CompoundAssignOperator>(LB);
  const auto *Mul =
      Upd ? dyn_cast<BinaryOperator>(Upd->getRHS()->IgnoreParenImpCasts())
          : nullptr;
  if (!Upd || Upd->getOpcode() != BO_AddAssign ||
      !refersTo(Upd->getLHS(), Acc) || !Mul || Mul->getOpcode() != BO_Mul)
    return NotApplicable("the loop body is not '" + Acc->getName() +
                         " += A[...] * B[...];' (found '" +
                         StringRef(stmtText(Ctx, LB)).split('\n').first + "')");
  for (const Expr *Side : {Mul->getLHS(), Mul->getRHS()}) {
    const auto *Access =
        dyn_cast<ArraySubscriptExpr>(Side->IgnoreParenImpCasts());
    std::string Text = exprText(Ctx, Side);
    if (!Access)
      return NotApplicable("the factor '" + Text + "' is not an array element");
    const Expr *Idx = Access->getIdx(), *Base = Access->getBase();
    if (hasLoadOrEffect(Idx) || mentionsBuiltin(Idx) ||
        !threadVariance(Base, FD).uniform() || hasLoadOrEffect(Base) ||
        mentions(Access, Acc))
      return NotApplicable("the factor '" + Text +
                           "' is not a plain load at an index computed from "
                           "the indices and values the same for every "
                           "thread");
    bool R = mentions(Idx, P.Row), C = mentions(Idx, P.Col);
    if (!mentions(Idx, P.K) || R == C)
      return NotApplicable("the factor '" + Text + "' does not depend on '" +
                           P.K->getName() + "' and exactly one of '" + RowN +
                           "', '" + ColN + "'");
    const VarDecl *Own = R ? P.Row : P.Col;
    if (std::string V = nonUniformRef(Idx, {Own, P.K}, FD); !V.empty())
      return NotApplicable("the index of '" + Text + "' uses '" + V +
                           "', which differs between threads");
    Operand &O = R ? P.A : P.B;
    if (O.Access)
      return NotApplicable("both factors depend on '" + (R ? RowN : ColN) +
                           "'");
    O.Access = Access;
    QualType T = Access->getType();
    O.ElemType = typeName(T, Ctx.AST);
    O.Zero = zeroOf(T, O.ElemType);
  }
  if (Written.contains(P.K) && writtenVars(LB).contains(P.K))
    return NotApplicable("the loop body writes '" + P.K->getName() + "'");

  // What follows the loop stays guarded; it must not need the barrier.
  for (const Stmt *S : P.Post) {
    if (callsFunction(S, "__syncthreads") || callsFunction(S, "__syncwarp") ||
        callsFunction(S, "__shfl"))
      return NotApplicable("the code after the loop synchronizes threads");
    if (mentions(S, P.K))
      return NotApplicable("the code after the loop uses '" + P.K->getName() +
                           "'");
  }
  auto IfSpan = stmtSpan(Ctx, If);
  auto LastSpan = stmtSpan(Ctx, Stmts.back());
  if (!IfSpan || !LastSpan)
    return NotApplicable("the guard has no place in the file");
  P.RegionBegin = IfSpan->Begin.Offset;
  P.RegionEnd = EarlyReturn ? LastSpan->End.Offset : IfSpan->End.Offset;
  P.Indent = indentationAt(Ctx.Code, P.RegionBegin);

  // Every launch must use a TILE x TILE block.
  ShapeFound = true;
  if (K->Info->Launches.empty())
    return NotApplicable("it is never launched in this file, so its block "
                         "cannot be shown to be TILE x TILE");
  for (const LaunchSite &Site : K->Info->Launches) {
    const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, Site);
    std::optional<Dim3> D;
    if (Call && Call->getConfig() && Call->getConfig()->getNumArgs() >= 2)
      D = constDim3(Ctx, Call->getConfig()->getArg(1));
    if (!D)
      return NotApplicable("the block of " + Site.Id + " ('" + Site.Block +
                           "') is not a constant; tiling needs TILE x TILE "
                           "blocks");
    int64_t Want = Tile.value_or((*D)[0]);
    if ((*D)[0] != Want || (*D)[1] != Want || (*D)[2] != 1 ||
        (Want != 8 && Want != 16 && Want != 32))
      return NotApplicable(
          "the block of " + Site.Id + " ('" + Site.Block + "') is " +
          dimText(*D) + ", not " +
          (Tile ? std::to_string(*Tile) + "x" + std::to_string(*Tile)
                : std::string("8x8, 16x16 or 32x32")) +
          "x1 (change it with launch-config first)");
    if (!Tile)
      Tile = Want;
  }
  P.Block = {*Tile, *Tile, 1};
  return P;
}

Expected<tooling::Replacements>
SharedTilingTransform::rewrite(const EditContext &Ctx, const Edit &E,
                               const MatmulPlan &P) const {
  int64_t T = P.Block[0];
  std::string TS = std::to_string(T);
  StringRef Code = Ctx.Code;
  const FunctionDecl *FD = P.Kernel.Decl;
  std::string FnText = Code.slice(P.Kernel.Info->Range.Begin.Offset,
                                  P.Kernel.Info->Range.End.Offset)
                           .str();
  std::string As = freshName(FnText, "As"), Bs = freshName(FnText, "Bs");
  std::string Base = freshName(FnText, "kTile");
  std::string ACol = freshName(FnText, "aCol"),
              BRow = freshName(FnText, "bRow");
  std::string KType = typeName(P.K->getType(), Ctx.AST);
  const std::string &I = P.Indent;

  auto Span = [&](const Stmt *S) { return stmtSpan(Ctx, S); };
  // An expression's span, without the `;` a statement span takes.
  auto ESpan = [&](const Expr *X) -> std::optional<SourceSpan> {
    if (containsMacro(X))
      return std::nullopt;
    return fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                    X->getSourceRange(), Ctx.file());
  };
  // A load with k renamed.
  auto LoadText = [&](const ArraySubscriptExpr *Access,
                      StringRef NewK) -> std::optional<std::string> {
    auto S = ESpan(Access);
    if (!S)
      return std::nullopt;
    std::vector<const DeclRefExpr *> Refs;
    collectRefs(Access, P.K, Refs);
    std::vector<TextEdit> Edits;
    for (const DeclRefExpr *R : Refs) {
      auto RS = ESpan(R);
      if (!RS)
        return std::nullopt;
      Edits.push_back(
          {RS->Begin.Offset, RS->End.Offset - RS->Begin.Offset, NewK.str()});
    }
    return spliceText(Code, S->Begin.Offset, S->End.Offset, std::move(Edits));
  };
  auto ALoad = LoadText(P.A.Access, ACol);
  auto BLoad = LoadText(P.B.Access, BRow);
  auto LoopSpan = Span(P.Loop);
  auto ASpan = ESpan(P.A.Access), BSpan = ESpan(P.B.Access);
  auto KBSpan = ESpan(boundOf(P.Loop->getCond(), P.K, true));
  auto AccSpan = Span(P.AccDecl);
  if (!ALoad || !BLoad || !LoopSpan || !ASpan || !BSpan || !KBSpan || !AccSpan)
    return reject(E, "internal",
                  "kernel '" + E.Target +
                      "': a part of the loop has no place in "
                      "the file");
  std::string RowN = P.Row->getNameAsString(), ColN = P.Col->getNameAsString();
  std::string KN = P.K->getNameAsString();

  // The inner loop: the original one over one tile, reading the tiles.
  std::string InnerLoop = spliceText(
      Code, LoopSpan->Begin.Offset, LoopSpan->End.Offset,
      {{KBSpan->Begin.Offset, KBSpan->End.Offset - KBSpan->Begin.Offset, TS},
       {ASpan->Begin.Offset, ASpan->End.Offset - ASpan->Begin.Offset,
        As + "[threadIdx.y][" + KN + "]"},
       {BSpan->Begin.Offset, BSpan->End.Offset - BSpan->Begin.Offset,
        Bs + "[" + KN + "][threadIdx.x]"}});
  int LoopDelta = int(I.size() + 2) -
                  int(indentationAt(Code, LoopSpan->Begin.Offset).size());
  InnerLoop = reindent(InnerLoop, LoopDelta);

  std::string Out;
  raw_string_ostream OS(Out);
  OS << sharedTileDecl(P.A.ElemType, As, {T, T}) << "\n"
     << I << sharedTileDecl(P.B.ElemType, Bs, {T, T}) << "\n"
     << I << Code.slice(AccSpan->Begin.Offset, AccSpan->End.Offset) << "\n"
     << I << tileLoopHead(Base, "0", P.KBound, T, KType) << " {\n"
     << I << "  " << KType << " " << ACol << " = " << Base
     << " + threadIdx.x;\n"
     << I << "  " << KType << " " << BRow << " = " << Base
     << " + threadIdx.y;\n"
     << I << "  "
     << guardedTileLoad(As + "[threadIdx.y][threadIdx.x]",
                        RowN + " < " + P.RowBound + " && " + ACol + " < " +
                            P.KBound,
                        *ALoad, P.A.Zero)
     << "\n"
     << I << "  "
     << guardedTileLoad(Bs + "[threadIdx.y][threadIdx.x]",
                        BRow + " < " + P.KBound + " && " + ColN + " < " +
                            P.ColBound,
                        *BLoad, P.B.Zero)
     << "\n"
     << I << "  __syncthreads();\n"
     << I << "  " << InnerLoop << "\n"
     << I << "  __syncthreads();\n"
     << I << "}\n";
  // The rest stays behind the bounds guard.
  auto First = Span(P.Post.front()), Last = Span(P.Post.back());
  if (!First || !Last)
    return reject(E, "internal",
                  "kernel '" + E.Target +
                      "': the code after the loop has no "
                      "place in the file");
  std::string Rest = Code.slice(First->Begin.Offset, Last->End.Offset).str();
  int RestDelta =
      int(I.size() + 2) - int(indentationAt(Code, First->Begin.Offset).size());
  OS << I << "if (" << P.StoreGuard << ") {\n"
     << I << "  " << reindent(Rest, RestDelta) << "\n"
     << I << "}";
  (void)FD;
  tooling::Replacements R;
  SourceSpan Region{{0, 0, P.RegionBegin}, {0, 0, P.RegionEnd}};
  if (Error Err = addReplacement(R, replaceSpan(Ctx, Region, Out), E))
    return std::move(Err);
  return R;
}

} // namespace

std::unique_ptr<Transform> createSharedTilingTransform() {
  return std::make_unique<SharedTilingTransform>();
}

} // namespace optiml
