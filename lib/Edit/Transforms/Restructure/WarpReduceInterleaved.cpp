//===- WarpReduceInterleaved.cpp - Interleaved shared-memory trees --------===//
//
// Part of warp-reduce's tree matcher (WarpReduceTree.cpp): trees whose
// stride doubles (interleaved addressing).
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "WarpReduceInternal.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include <functional>

using namespace clang;
using namespace llvm;

// The textbook's first two trees (the CUDA samples' reduce0 and reduce1)
// double the stride from 1 while it is below the block:
//   if (tid % (2 * s) == 0) A[tid] += A[tid + s];
// or, with the working threads packed at the front,
//   int i = 2 * s * tid; if (i < blockDim.x) A[i] += A[i + s];
// with a barrier after each step. Both leave the block's total in A[0]
// when the block is a power of two, so they become the same shuffles as a
// halving tree; only the order of the additions differs (floating-point
// sums are reassociated, as for every tree). Every launch's block must be
// known: in a block that is not a power of two A[0] misses values.

namespace optiml {
namespace warpreduce {

namespace {

/// \p X is the integer literal \p V (through parentheses and casts).
bool isLiteral(const Expr *X, uint64_t V) {
  const auto *L = dyn_cast_or_null<IntegerLiteral>(stripCasts(X));
  return L && L->getValue() == V;
}

/// `2 * s`, `s * 2`, `s << 1` or `s + s`.
bool isTwice(const Expr *X, const ValueDecl *S) {
  auto B = binaryOf(stripCasts(X));
  if (!B)
    return false;
  auto IsS = [&](const Expr *Y) { return declOf(Y) == S; };
  switch (B->Op) {
  case BO_Mul:
    return (IsS(B->L) && isLiteral(B->R, 2)) ||
           (isLiteral(B->L, 2) && IsS(B->R));
  case BO_Shl:
    return IsS(B->L) && isLiteral(B->R, 1);
  case BO_Add:
    return IsS(B->L) && IsS(B->R);
  default:
    return false;
  }
}

/// `s *= 2`, `s <<= 1`, `s += s` or `s = <twice s>`: s.
const VarDecl *doubledVar(const Expr *Inc) {
  auto B = binaryOf(Inc);
  const auto *V = B ? dyn_cast_or_null<VarDecl>(declOf(B->L)) : nullptr;
  if (!V)
    return nullptr;
  bool Doubles = (B->Op == BO_MulAssign && isLiteral(B->R, 2)) ||
                 (B->Op == BO_ShlAssign && isLiteral(B->R, 1)) ||
                 (B->Op == BO_AddAssign && declOf(B->R) == V) ||
                 (B->Op == BO_Assign && isTwice(B->R, V));
  return Doubles ? V : nullptr;
}

/// The stride a loop doubles: in a for's increment, or as the last
/// statement of a while's body.
const VarDecl *doubledStride(const Stmt *X) {
  if (const auto *F = dyn_cast<ForStmt>(X))
    return doubledVar(F->getInc());
  if (const auto *W = dyn_cast<WhileStmt>(X))
    if (const auto *CS = dyn_cast<CompoundStmt>(W->getBody());
        CS && CS->size() > 1)
      return doubledVar(dyn_cast<Expr>(CS->body_back()));
  return nullptr;
}

bool hasBarrier(const Stmt *S) {
  return S && (isBarrier(S) || any_of(S->children(), hasBarrier));
}

/// \p S assigns to an element of a __shared__ array or of memory from a
/// SharedMemory<T>() helper.
bool updatesShared(const Stmt *S) {
  if (!S)
    return false;
  auto B = binaryOf(S);
  const auto *AS = B && BinaryOperator::isAssignmentOp(B->Op)
                       ? dyn_cast<ArraySubscriptExpr>(strip(B->L))
                       : nullptr;
  const auto *V =
      AS ? dyn_cast_or_null<VarDecl>(declOf(AS->getBase())) : nullptr;
  if (V && (V->hasAttr<CUDASharedAttr>() ||
            (V->hasInit() && sharedVarBehind(V->getInit()))))
    return true;
  return any_of(S->children(), updatesShared);
}

/// `t % (2 * s) == 0` or `(t & (2 * s - 1)) == 0` (0 on either side, or
/// `!(...)`): t. For a power of two 2s and t >= 0 the two are the same.
const Expr *moduloTid(const Expr *Cond, const ValueDecl *S) {
  const Expr *X = nullptr;
  Cond = stripCasts(Cond);
  if (const auto *U = dyn_cast<UnaryOperator>(Cond);
      U && U->getOpcode() == UO_LNot)
    X = U->getSubExpr();
  else if (auto C = binaryOf(Cond); C && C->Op == BO_EQ)
    X = isLiteral(C->R, 0) ? C->L : isLiteral(C->L, 0) ? C->R : nullptr;
  auto M = X ? binaryOf(stripCasts(X)) : std::nullopt;
  if (!M)
    return nullptr;
  if (M->Op == BO_Rem)
    return isTwice(M->R, S) ? M->L : nullptr;
  auto IsMask = [&](const Expr *Y) {
    auto D = binaryOf(stripCasts(Y));
    return D && D->Op == BO_Sub && isTwice(D->L, S) && isLiteral(D->R, 1);
  };
  if (M->Op != BO_And)
    return nullptr;
  return IsMask(M->R) ? M->L : IsMask(M->L) ? M->R : nullptr;
}

/// `2 * s * t`, its three factors in any order and grouping: t.
const Expr *stridedTid(const Expr *Init, const ValueDecl *S) {
  SmallVector<const Expr *, 4> Factors;
  std::function<void(const Expr *)> Flatten = [&](const Expr *X) {
    auto B = binaryOf(stripCasts(X));
    if (B && B->Op == BO_Mul && Factors.size() < 4) {
      Flatten(B->L);
      Flatten(B->R);
    } else {
      Factors.push_back(X);
    }
  };
  Flatten(Init);
  if (Factors.size() != 3)
    return nullptr;
  const Expr *Two = nullptr, *Stride = nullptr, *T = nullptr;
  for (const Expr *X : Factors) {
    if (!Two && isLiteral(X, 2))
      Two = X;
    else if (!Stride && declOf(X) == S)
      Stride = X;
    else if (!T)
      T = X;
    else
      return nullptr;
  }
  return Two && Stride ? T : nullptr;
}

/// `v < Bound` or `Bound > v` with \p V the variable: Bound.
const Expr *upperBound(const Expr *Cond, const ValueDecl *V) {
  auto C = binaryOf(Cond);
  if (C && C->Op == BO_LT && declOf(C->L) == V)
    return C->R;
  if (C && C->Op == BO_GT && declOf(C->R) == V)
    return C->L;
  return nullptr;
}

} // namespace

bool isInterleavedLoop(const Stmt *X) {
  return doubledStride(X) && (hasBarrier(X) || updatesShared(X));
}

Expected<const Expr *>
TreeMatcher::interleavedGuard(const IfStmt *Guard, const VarDecl *Index,
                              std::optional<int64_t> &Bound) {
  std::string SName = S->getName().str();
  if (!Index) {
    if (const Expr *T = moduloTid(Guard->getCond(), S))
      return T;
    return no("the interleaved tree loop's guard '" + text(Guard->getCond()) +
                  "' is not 'tid % (2 * " + SName +
                  ") == 0' (or '(tid & (2 * " + SName + " - 1)) == 0')",
              Guard);
  }
  // The index must hold 2 * s * tid for the whole step, in an integer
  // wide enough for it.
  QualType IT = Index->getType();
  const Expr *T = Index->hasInit() && IT->isIntegerType() &&
                          Ctx.AST.getTypeSize(IT) >= 32 &&
                          !Written.contains(Index)
                      ? stridedTid(Index->getInit(), S)
                      : nullptr;
  if (!T)
    return no("the interleaved tree loop's index '" + Index->getName() +
                  "' is not an integer '2 * " + SName +
                  " * tid' that the loop never writes",
              Index);
  const Expr *B = upperBound(Guard->getCond(), Index);
  if (B && !isBlockDimX(B))
    Bound = intValue(B, Ctx.AST);
  if (!B || (!isBlockDimX(B) && !Bound))
    return no("the interleaved tree loop's guard '" + text(Guard->getCond()) +
                  "' is not '" + Index->getName() +
                  " < blockDim.x' (or a constant block size)",
              Guard);
  return T;
}

// The interleaved loop's preconditions in order (its body's shape, the
// guard, the step, the start and the stop, the block size they imply),
// each refusal naming its reason; the rest is finish()'s.
Expected<TreePlan> TreeMatcher::matchInterleaved(const Stmt *const *LoopIt,
                                                 const Stmt *Leave,
                                                 const Stmt *Return) {
  const Stmt *Loop = *LoopIt;
  S = doubledStride(Loop);
  Interleaved = true;
  if (Return)
    return refuseReturn(Return);
  std::string SName = S->getName().str();
  // Up to 2 * 1024 (the largest block), whatever the integer's sign.
  if (!S->getType()->isIntegerType() || Ctx.AST.getTypeSize(S->getType()) < 16)
    return no("the interleaved tree loop's stride '" + SName +
                  "' is not an integer of at least 16 bits",
              S);
  const Stmt *LoopInit = nullptr;
  const Expr *LoopCond = nullptr;
  std::vector<const Stmt *> LB;
  if (Error Err = loopParts(LoopIt, LoopInit, LoopCond, LB))
    return std::move(Err);
  // The body: [`int i = 2 * s * tid;`] `if (...) <step>` `__syncthreads();`.
  const VarDecl *Index = nullptr;
  const IfStmt *Guard = nullptr;
  bool Sync = false, Other = false;
  for (const Stmt *X : LB) {
    const auto *DS = dyn_cast<DeclStmt>(X);
    if (isBarrier(X) && Guard && !Sync)
      Sync = true;
    else if (isa<IfStmt>(X) && !Guard)
      Guard = cast<IfStmt>(X);
    else if (DS && DS->isSingleDecl() && isa<VarDecl>(DS->getSingleDecl()) &&
             !Guard && !Index)
      Index = cast<VarDecl>(DS->getSingleDecl());
    else
      Other = true;
    if (is_contained(writtenDecls(X), S))
      return no("the interleaved tree loop writes its stride '" + SName +
                    "' at " + at(X) + ", not only in its step",
                X);
  }
  if (!Guard || Other || Guard->getElse() || Guard->getInit() ||
      Guard->getConditionVariable() || Guard->isConstexpr())
    return no("the body of the interleaved tree loop at " + at(Loop) +
                  " is not 'if (tid % (2 * " + SName +
                  ") == 0) a[tid] += a[tid + " + SName +
                  "]; __syncthreads();' (or 'int i = 2 * " + SName +
                  " * tid; if (i < blockDim.x) a[i] += a[i + " + SName +
                  "]; __syncthreads();')",
              Loop);
  if (!Sync)
    return no("the tree loop at " + at(Loop) +
                  " has no __syncthreads() after its step: its steps race",
              Loop);
  std::optional<int64_t> GuardBound;
  auto TidOr = interleavedGuard(Guard, Index, GuardBound);
  if (!TidOr)
    return TidOr.takeError();
  const Expr *TidE = *TidOr;
  if (!isTid(TidE))
    return no("the interleaved tree loop's guard reads '" + text(TidE) +
                  "': not threadIdx.x or a local equal to it",
              Guard);
  P.Tid = text(TidE);
  // The step: A[i] += A[i + s] (or max/min), i the thread or its index.
  const Stmt *StepS = Guard->getThen();
  if (const auto *CS = dyn_cast<CompoundStmt>(StepS); CS && CS->size() == 1)
    StepS = CS->body_front();
  bool ViaHelper = false;
  if (Error Err = matchArray(StepS, ViaHelper, Index))
    return std::move(Err);
  auto IsOwn = [&](const Expr *X) {
    return Index ? declOf(X) == Index : isTid(X);
  };
  const Expr *Off = step(StepS, P.Array, IsOwn);
  std::string I = Index ? Index->getName().str() : P.Tid;
  // A register kept beside the element is followed in the halving tree
  // only, where each thread's element stays its own.
  if (Off && Cached)
    return no("the interleaved tree loop's step '" + text(StepS) +
                  "' also keeps the value in '" + Cached->getName() +
                  "': not followed in an interleaved tree",
              StepS);
  if (!Off || declOf(Off) != S)
    return no("the interleaved tree loop's step '" + text(StepS) +
                  "' is not '" + P.ArrayName + "[" + I + "] += " + P.ArrayName +
                  "[" + I + " + " + SName + "]' (or max/min of the two)",
              StepS);
  // The stride runs 1, 2, 4, ... while below the block.
  const Expr *Init = strideStart(LoopInit);
  if (!Init)
    return no("the tree loop at " + at(Loop) + " does not start its stride '" +
                  SName + "' " +
                  (isa<WhileStmt>(Loop) ? "in the statement just before it"
                                        : "in its header"),
              Loop);
  if (intValue(Init, Ctx.AST) != 1)
    return no("the interleaved tree loop starts at '" + text(Init) + "', not 1",
              Loop);
  const Expr *Stop = upperBound(LoopCond, S);
  std::optional<int64_t> LoopBound;
  if (Stop && !isBlockDimX(Stop))
    LoopBound = intValue(Stop, Ctx.AST);
  if (!Stop || (!isBlockDimX(Stop) && !LoopBound))
    return no("the interleaved tree loop's condition '" + text(LoopCond) +
                  "' is not '" + SName + " < blockDim.x' (or '" + SName +
                  " < B' with B a constant block size)",
              Loop);
  // A constant block size in the condition or the guard: every launch
  // must use it (checkLaunches(), as for a halving tree's start).
  if (LoopBound && GuardBound && *LoopBound != *GuardBound)
    return no("the interleaved tree loop runs while '" + text(LoopCond) +
                  "' but its guard is '" + text(Guard->getCond()) + "'",
              Guard);
  TreeShape Sh;
  if (std::optional<int64_t> B = LoopBound ? LoopBound : GuardBound) {
    if (!isPowerOf2(*B) || *B % 32 != 0)
      return no("the interleaved tree reduces " + std::to_string(*B) +
                    " values: the tree needs a power of two, the shuffles a "
                    "multiple of 32",
                Loop);
    Sh.Start = *B / 2;
    Sh.StartText = LoopBound ? text(LoopCond) : text(Guard->getCond());
  }
  Sh.Begin = LoopIt;
  Sh.End = LoopIt + 1;
  Sh.First = isa<WhileStmt>(Loop) ? LoopInit : Loop;
  Sh.Parts = {Loop};
  if (isa<WhileStmt>(Loop))
    Sh.Parts.push_back(LoopInit);
  return finish(Sh, Leave, ViaHelper);
}

} // namespace warpreduce
} // namespace optiml
