//===- CountingLoop.cpp - Loops that count by one -------------------------===//

#include "CountingLoop.h"

#include "../Transforms/TransformSupport.h"

#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"

using namespace clang;
using namespace llvm;

namespace optiml {

/// +1 when \p Inc steps \p V up by one (v++, ++v, v += 1), -1 down, else 0.
static int unitStep(const Expr *Inc, const VarDecl *V, const ASTContext &AST) {
  Inc = Inc ? Inc->IgnoreParenImpCasts() : nullptr;
  if (const auto *U = dyn_cast_or_null<UnaryOperator>(Inc);
      U && refersTo(U->getSubExpr(), V))
    return U->isIncrementOp() ? 1 : U->isDecrementOp() ? -1 : 0;
  if (const auto *CA = dyn_cast_or_null<CompoundAssignOperator>(Inc);
      CA && refersTo(CA->getLHS(), V) && intValue(CA->getRHS(), AST) == 1)
    return CA->getOpcode() == BO_AddAssign   ? 1
           : CA->getOpcode() == BO_SubAssign ? -1
                                             : 0;
  return 0;
}

/// Fills \p C's bound from \p Cond, `v < BOUND` and the like on either
/// side, in the direction of C.Step; false when it is not one.
static bool boundOf(const Expr *Cond, CountingLoop &C) {
  const auto *B = dyn_cast_or_null<BinaryOperator>(
      Cond ? Cond->IgnoreParenImpCasts() : nullptr);
  if (!B || !B->isRelationalOp())
    return false;
  BinaryOperatorKind Op = B->getOpcode();
  if (refersTo(B->getLHS(), C.Var)) {
    C.Bound = B->getRHS();
  } else if (refersTo(B->getRHS(), C.Var)) {
    C.Bound = B->getLHS();
    Op = BinaryOperator::reverseComparisonOp(Op);
  } else {
    return false;
  }
  if (C.Step == 1 && (Op == BO_LT || Op == BO_LE))
    C.Inclusive = Op == BO_LE;
  else if (C.Step == -1 && (Op == BO_GT || Op == BO_GE))
    C.Inclusive = Op == BO_GE;
  else
    return false;
  return true;
}

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
  C.Step = unitStep(L->getInc(), V, AST);
  if (!C.Step || !boundOf(L->getCond(), C))
    return std::nullopt;
  return C;
}

std::optional<CountingWhile> countingWhile(const WhileStmt *W,
                                           const Stmt *Before,
                                           const ASTContext &AST,
                                           std::string *WhyNot) {
  auto No = [&](const char *Why) -> std::optional<CountingWhile> {
    if (WhyNot)
      *WhyNot = Why;
    return std::nullopt;
  };
  const auto *DS = dyn_cast_or_null<DeclStmt>(Before);
  const auto *V = DS && DS->isSingleDecl()
                      ? dyn_cast<VarDecl>(DS->getSingleDecl())
                      : nullptr;
  if (!W || !V || !V->hasInit() ||
      !(V->getType()->isIntegerType() || V->getType()->isDependentType()) ||
      W->getConditionVariable())
    return No("its counter is not an integer declared with its start just "
              "before the loop");
  const auto *Body = dyn_cast<CompoundStmt>(W->getBody());
  const auto *Last =
      Body && !Body->body_empty() ? dyn_cast<Expr>(Body->body_back()) : nullptr;
  CountingWhile C;
  C.Var = V;
  C.Start = V->getInit();
  C.Step = unitStep(Last, V, AST);
  if (!C.Step)
    return No("its body does not end by stepping the counter by one");
  if (!boundOf(W->getCond(), C))
    return No("its condition does not compare the counter with a bound in "
              "the direction it counts");
  for (const Stmt *S : Body->body())
    if (S != Last && writtenVars(S).contains(V))
      return No("its body writes the counter before the step");
  if (mentions(C.Bound, V))
    return No("its bound depends on the counter");
  for (const Stmt *S : Body->body())
    if (S != Last)
      if (const Stmt *J = firstJump(S); J && !isa<ReturnStmt, GotoStmt>(J))
        return No("it has a 'continue' or 'break', which skips or leaves "
                  "the step");
  C.Decl = DS;
  C.Inc = Last;
  return C;
}

std::optional<CountingWhile> countingWhile(const WhileStmt *W,
                                           ArrayRef<const Stmt *> Earlier,
                                           const ASTContext &AST,
                                           std::string *WhyNot) {
  const auto *Body = W ? dyn_cast<CompoundStmt>(W->getBody()) : nullptr;
  const Stmt *Last = Body && !Body->body_empty() ? Body->body_back() : nullptr;
  // The counter: declared alone by an earlier statement, named by the
  // condition and by the body's last statement (its step); the statements
  // between its declaration and the loop never name it, so the loop starts
  // from its initializer.
  for (size_t I = Earlier.size(); I-- > 0;) {
    const auto *DS = dyn_cast_or_null<DeclStmt>(Earlier[I]);
    const auto *V = DS && DS->isSingleDecl()
                        ? dyn_cast<VarDecl>(DS->getSingleDecl())
                        : nullptr;
    if (!V || !Last || !mentions(W->getCond(), V) || !mentions(Last, V))
      continue;
    if (llvm::any_of(Earlier.drop_front(I + 1),
                     [&](const Stmt *S) { return mentions(S, V); })) {
      if (WhyNot)
        *WhyNot = "its counter '" + V->getNameAsString() +
                  "' is used between its declaration and the loop";
      return std::nullopt;
    }
    return countingWhile(W, DS, AST, WhyNot);
  }
  return countingWhile(W, Earlier.empty() ? nullptr : Earlier.back(), AST,
                       WhyNot);
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
