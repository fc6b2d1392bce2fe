//===- CountingLoop.cpp - Loops that count by one -------------------------===//

#include "CountingLoop.h"

#include "../Transforms/TransformSupport.h"

#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"

using namespace clang;
using namespace llvm;

namespace optiml {

std::optional<CountingLoop> countingLoop(const ForStmt *L,
                                         const ASTContext &AST) {
  const auto *DS = dyn_cast_or_null<DeclStmt>(L ? L->getInit() : nullptr);
  const auto *V = DS && DS->isSingleDecl()
                      ? dyn_cast<VarDecl>(DS->getSingleDecl())
                      : nullptr;
  if (!V || !V->hasInit() || !V->getType()->isIntegerType())
    return std::nullopt;
  CountingLoop C;
  C.Var = V;
  C.Start = V->getInit();
  // The step: by one, up or down.
  const Expr *Inc = L->getInc() ? L->getInc()->IgnoreParenImpCasts() : nullptr;
  if (const auto *U = dyn_cast_or_null<UnaryOperator>(Inc);
      U && refersTo(U->getSubExpr(), V))
    C.Step = U->isIncrementOp() ? 1 : U->isDecrementOp() ? -1 : 0;
  if (const auto *CA = dyn_cast_or_null<CompoundAssignOperator>(Inc);
      CA && refersTo(CA->getLHS(), V) && intValue(CA->getRHS(), AST) == 1)
    C.Step = CA->getOpcode() == BO_AddAssign   ? 1
             : CA->getOpcode() == BO_SubAssign ? -1
                                               : 0;
  if (!C.Step)
    return std::nullopt;
  // The condition: v against its bound, on either side.
  const auto *B = dyn_cast_or_null<BinaryOperator>(
      L->getCond() ? L->getCond()->IgnoreParenImpCasts() : nullptr);
  if (!B || !B->isRelationalOp())
    return std::nullopt;
  BinaryOperatorKind Op = B->getOpcode();
  if (refersTo(B->getLHS(), V)) {
    C.Bound = B->getRHS();
  } else if (refersTo(B->getRHS(), V)) {
    C.Bound = B->getLHS();
    Op = BinaryOperator::reverseComparisonOp(Op);
  } else {
    return std::nullopt;
  }
  if (C.Step == 1 && (Op == BO_LT || Op == BO_LE))
    C.Inclusive = Op == BO_LE;
  else if (C.Step == -1 && (Op == BO_GT || Op == BO_GE))
    C.Inclusive = Op == BO_GE;
  else
    return std::nullopt;
  return C;
}

std::optional<std::pair<int64_t, int64_t>>
constantRange(const ForStmt *L, const ASTContext &AST) {
  std::optional<CountingLoop> C = countingLoop(L, AST);
  if (!C || writtenVars(L->getBody()).contains(C->Var))
    return std::nullopt;
  std::optional<int64_t> Start = intValue(C->Start, AST),
                         End = intValue(C->Bound, AST);
  if (!Start || !End)
    return std::nullopt;
  int64_t Last = C->Inclusive ? *End : *End - C->Step;
  if (C->Step == 1 ? Last < *Start : Last > *Start)
    return std::nullopt;
  return C->Step == 1 ? std::pair(*Start, Last) : std::pair(Last, *Start);
}

DenseMap<const VarDecl *, std::pair<int64_t, int64_t>>
constantLoopRanges(const Stmt *S, const ASTContext &AST, bool UpOnly) {
  DenseMap<const VarDecl *, std::pair<int64_t, int64_t>> Out;
  SmallVector<const Stmt *, 16> Work = {S};
  while (!Work.empty()) {
    const Stmt *T = Work.pop_back_val();
    if (!T)
      continue;
    if (const auto *F = dyn_cast<ForStmt>(T))
      if (auto R = constantRange(F, AST)) {
        CountingLoop C = *countingLoop(F, AST);
        if (!UpOnly || C.Step == 1)
          Out[C.Var] = *R;
      }
    for (const Stmt *Ch : T->children())
      Work.push_back(Ch);
  }
  return Out;
}

} // namespace optiml
