//===- PrivatizeAtomicsInput.cpp - privatize-atomics: the input loop ------===//
//
// The grid-stride loop over the input (written so, or made so from one item
// per thread), read for wide loads (vector_bytes): its index, bound and
// arrays, and the loads `p[i]` its body makes.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "PrivatizeAtomicsInternal.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include <functional>
#include <map>

using namespace llvm;
using clang::dyn_cast;
using clang::dyn_cast_or_null;
using clang::isa;

namespace optiml {
namespace privatizeatomics {

namespace {

/// A binary operation: a built-in operator, or, in a template whose
/// operands are dependent, an operator call (once operator overloads such
/// as cuda_fp16.h's are visible).
struct BinaryOp {
  clang::BinaryOperatorKind Op;
  const clang::Expr *LHS, *RHS;
};

} // namespace

static std::optional<BinaryOp> binaryOp(const clang::Expr *E) {
  if (!E)
    return std::nullopt;
  E = E->IgnoreParenImpCasts();
  if (const auto *B = dyn_cast<clang::BinaryOperator>(E))
    return BinaryOp{B->getOpcode(), B->getLHS(), B->getRHS()};
  if (const auto *C = dyn_cast<clang::CXXOperatorCallExpr>(E))
    if (C->getNumArgs() == 2 && C->isInfixBinaryOp())
      return BinaryOp{
          clang::BinaryOperator::getOverloadedOpcode(C->getOperator()),
          C->getArg(0), C->getArg(1)};
  return std::nullopt;
}

/// `i += blockDim.x * gridDim.x` (either order) on \p I.
static bool isGridStrideStep(const clang::Expr *Inc, const clang::VarDecl *I) {
  auto B = binaryOp(Inc);
  if (!B || B->Op != clang::BO_AddAssign || declOf(B->LHS) != I)
    return false;
  const auto *M = dyn_cast<clang::BinaryOperator>(stripCasts(B->RHS));
  return M && M->getOpcode() == clang::BO_Mul &&
         mentionsBuiltin(M, "blockDim") && mentionsBuiltin(M, "gridDim") &&
         !mentionsBuiltin(M, "threadIdx") && !mentionsBuiltin(M, "blockIdx");
}

Expected<InputLoop> PrivatizeAtomics::inputLoop(const EditContext &Ctx,
                                                const Edit &E,
                                                const Plan &P) const {
  auto No = [&](const Twine &Why) {
    return reject(E, "not-applicable",
                  "params.vector_bytes " + Twine(P.VectorBytes) + ": " + Why);
  };
  InputLoop L;
  const clang::FunctionDecl *K = P.Kernel.Decl;
  std::vector<const clang::Stmt *> Body;
  if (P.Map) {
    L.Index = P.Map->Index;
    L.Bound = P.Map->Bound;
    Body = P.Map->Body;
  } else {
    const auto *KB = cast<clang::CompoundStmt>(K->getBody());
    for (const clang::Stmt *S : KB->body()) {
      const auto *F = dyn_cast<clang::ForStmt>(S);
      if (!F) {
        if (isa<clang::DeclStmt>(S) && !mentionsBuiltin(S, "threadIdx") &&
            !L.For)
          continue;
        return No("the kernel is not a single grid-stride loop over the "
                  "input (statement at " +
                  where(Ctx, S) + ")");
      }
      const auto *DS = dyn_cast_or_null<clang::DeclStmt>(F->getInit());
      const auto *V = DS && DS->isSingleDecl()
                          ? dyn_cast<clang::VarDecl>(DS->getSingleDecl())
                          : nullptr;
      auto C = binaryOp(F->getCond());
      if (L.For || !V || !V->getInit() ||
          linearIndexDim(V->getInit(), /*ThroughHelpers=*/true) != 'x' || !C ||
          C->Op != clang::BO_LT || declOf(C->LHS) != V ||
          !isGridStrideStep(F->getInc(), V))
        return No("the loop at " + where(Ctx, F) +
                  " is not 'for (i = blockIdx.x * blockDim.x + threadIdx.x; "
                  "i < n; i += blockDim.x * gridDim.x)'");
      if (!isBlockUniform(C->RHS, K) || mentions(C->RHS, V))
        return No("the loop bound '" + looseExprText(Ctx, C->RHS) +
                  "' is not the same in every thread");
      if (llvm::is_contained(writtenDecls(F->getBody()), V))
        return No("the loop variable '" + V->getName() +
                  "' is written in "
                  "the loop");
      L.For = F;
      L.Index = V;
      L.Bound = C->RHS;
      Body = {F->getBody()};
    }
    if (!L.For)
      return No("the kernel has no grid-stride loop over the input");
  }
  std::string I = L.Index->getName().str();

  // Every use of i is a load p[i] from a pointer parameter.
  // Enclosing: the subscript whose index \p S is part of, if any.
  std::string Problem;
  std::function<void(const clang::Stmt *, const clang::ArraySubscriptExpr *)>
      Walk = [&](const clang::Stmt *S,
                 const clang::ArraySubscriptExpr *Enclosing) {
        if (!S || !Problem.empty())
          return;
        if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(S)) {
          // In a template, `p[i]` with `i` of a dependent type keeps its
          // operands in written order (getBase() cannot tell them apart).
          auto IsIndex = [&](const clang::Expr *X) {
            const auto *R =
                dyn_cast<clang::DeclRefExpr>(X->IgnoreParenImpCasts());
            return R && R->getDecl() == L.Index;
          };
          if (IsIndex(A->getRHS()) || IsIndex(A->getLHS())) {
            const auto *Base = dyn_cast<clang::DeclRefExpr>(
                (IsIndex(A->getRHS()) ? A->getLHS() : A->getRHS())
                    ->IgnoreParenImpCasts());
            const auto *PV =
                Base ? dyn_cast<clang::ParmVarDecl>(Base->getDecl()) : nullptr;
            if (!PV || !PV->getType()->isPointerType()) {
              Problem = "'" + looseExprText(Ctx, A) +
                        "' is not a load from a pointer parameter";
              return;
            }
            L.Loads.push_back({A, PV});
            if (!llvm::is_contained(L.Arrays, PV))
              L.Arrays.push_back(PV);
            return;
          }
          // The privatized array's subscript is the bin, not a load.
          Walk(A->getBase(), Enclosing);
          bool Bin = llvm::any_of(P.Uses, [&](const AtomicUse &U) {
            return U.Base == A->getLHS()->IgnoreParenImpCasts() ||
                   U.Base == A->getRHS()->IgnoreParenImpCasts();
          });
          Walk(A->getIdx(), Bin ? nullptr : A);
          return;
        }
        if (const auto *R = dyn_cast<clang::DeclRefExpr>(S))
          if (R->getDecl() == L.Index) {
            if (Enclosing)
              Problem = "the load '" + looseExprText(Ctx, Enclosing) +
                        "' is not unit-stride in '" + I + "'";
            else
              Problem = "'" + I + "' is used at " + where(Ctx, R) +
                        " other than as the index of a load p[" + I + "]";
            return;
          }
        for (const clang::Stmt *C : S->children())
          Walk(C, Enclosing);
      };
  for (const clang::Stmt *S : Body)
    Walk(S, nullptr);
  if (!Problem.empty())
    return No(Problem);
  if (L.Loads.empty())
    return No("the loop loads nothing at '" + I + "'");

  // The loaded elements: integers or floats of one size dividing the word.
  std::vector<const clang::ValueDecl *> Written = writtenDecls(K->getBody());
  for (const MemWrite &W : memoryWrites(K->getBody()))
    if (const clang::ValueDecl *D = declOf(W.Base))
      Written.push_back(D);
  for (const clang::ParmVarDecl *A : L.Arrays) {
    clang::QualType T = A->getType()->getPointeeType();
    std::string Name = A->getName().str();
    if (T->isDependentType())
      return No("the element type of '" + Name +
                "' depends on a template parameter");
    if (T.isVolatileQualified())
      return No("'" + Name + "' is volatile");
    if (!(T->isIntegerType() || T->isRealFloatingType()) || T->isBooleanType())
      return No(
          "'" + Name + "' has element type '" +
          T.getUnqualifiedType().getAsString(Ctx.AST.getPrintingPolicy()) +
          "', which has no vector form (integers and floats have)");
    int64_t Size = Ctx.AST.getTypeSizeInChars(T).getQuantity();
    if (Size > P.VectorBytes || P.VectorBytes % Size)
      return No("'" + Name + "' has " + Twine(Size) +
                "-byte elements, which do not fill a " + Twine(P.VectorBytes) +
                "-byte word");
    if (L.ElemBytes && L.ElemBytes != Size)
      return No("the loaded arrays have elements of different sizes");
    L.ElemBytes = Size;
    if (llvm::is_contained(Written, A))
      return No("'" + Name + "' is written in the kernel");
  }
  if (L.ElemBytes == P.VectorBytes)
    return No("one element is already " + Twine(L.ElemBytes) + " bytes");

  // The body runs on the word's elements in another order: it may only
  // update atomics and its own locals.
  for (const clang::Stmt *S : Body) {
    if (const clang::Stmt *J = firstJump(S))
      return No("the loop body leaves early at " + where(Ctx, J));
    if (const clang::Stmt *C = opaqueCall(S))
      return No("the loop body calls a function at " + where(Ctx, C) +
                " that may write memory");
    auto Writes = memoryWrites(S);
    if (!Writes.empty())
      return No("the loop body writes memory ('" +
                looseExprText(Ctx, Writes.front().Target) +
                "'); only atomics may be reordered");
  }
  std::vector<const clang::ValueDecl *> Local;
  std::function<void(const clang::Stmt *)> Decls = [&](const clang::Stmt *S) {
    if (!S)
      return;
    if (const auto *DS = dyn_cast<clang::DeclStmt>(S))
      for (const clang::Decl *D : DS->decls())
        if (const auto *V = dyn_cast<clang::ValueDecl>(D))
          Local.push_back(V);
    for (const clang::Stmt *C : S->children())
      Decls(C);
  };
  for (const clang::Stmt *S : Body)
    Decls(S);
  for (const clang::Stmt *S : Body)
    for (const clang::ValueDecl *D : writtenDecls(S))
      if (!llvm::is_contained(Local, D) && D != L.Index)
        return No("the loop body updates '" + D->getName() +
                  "', declared outside it; its order would change");
  return L;
}

} // namespace privatizeatomics
} // namespace optiml
