//===- Accumulation.cpp - Sums of products, as people write them ----------===//

#include "Accumulation.h"
#include "../Transforms/TransformSupport.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;
using namespace llvm;

namespace optiml {

static const BinaryOperator *asProduct(const Expr *X) {
  const auto *M = dyn_cast<BinaryOperator>(X->IgnoreParenImpCasts());
  return M && M->getOpcode() == BO_Mul ? M : nullptr;
}

std::optional<ProductUpdate> productUpdate(const Stmt *S, const VarDecl *Acc) {
  const BinaryOperator *Mul = nullptr;
  if (const auto *U = dyn_cast<CompoundAssignOperator>(S)) {
    if (U->getOpcode() == BO_AddAssign && refersTo(U->getLHS(), Acc))
      Mul = asProduct(U->getRHS());
  } else if (const auto *Set = dyn_cast<BinaryOperator>(S);
             Set && Set->getOpcode() == BO_Assign &&
             refersTo(Set->getLHS(), Acc)) {
    const Expr *R = Set->getRHS()->IgnoreParenImpCasts();
    if (const auto *Sum = dyn_cast<BinaryOperator>(R);
        Sum && Sum->getOpcode() == BO_Add) {
      if (refersTo(Sum->getLHS(), Acc))
        Mul = asProduct(Sum->getRHS());
      else if (refersTo(Sum->getRHS(), Acc))
        Mul = asProduct(Sum->getLHS());
    } else if (const auto *C = dyn_cast<CallExpr>(R)) {
      const FunctionDecl *F = C->getDirectCallee();
      if (F && F->getDeclName().isIdentifier() && C->getNumArgs() == 3 &&
          is_contained({"fma", "fmaf", "__fmaf_rn", "__fma_rn"},
                       F->getName()) &&
          refersTo(C->getArg(2), Acc))
        return ProductUpdate{C->getArg(0), C->getArg(1),
                             F->getQualifiedNameAsString()};
    }
  }
  if (!Mul)
    return std::nullopt;
  return ProductUpdate{Mul->getLHS(), Mul->getRHS(), ""};
}

bool uniformPointerLoad(const Expr *E, const FunctionDecl *Kernel) {
  const auto *A = dyn_cast<ArraySubscriptExpr>(E->IgnoreParenImpCasts());
  if (!A || !A->getType()->isPointerType() || !isBlockUniform(A, Kernel) ||
      opaqueCall(Kernel->getBody()))
    return false;
  return none_of(memoryWrites(Kernel->getBody()), [](const MemWrite &W) {
    QualType T = W.Target->getType();
    return T->isPointerType() || T->isAnyCharacterType() ||
           T->isDependentType();
  });
}

} // namespace optiml
