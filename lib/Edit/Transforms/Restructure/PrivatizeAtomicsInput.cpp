//===- PrivatizeAtomicsInput.cpp - privatize-atomics: the input ----------===//
//
// What the kernel reads: the range of the bins its atomics pick (indexRange:
// how many elements the private copy needs), and the grid-stride loop over
// the input (written so, or made so from one item per thread), read for
// wide loads (vector_bytes): its index, bound and arrays, and the loads
// `p[i]` its body makes.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/SideEffects.h"
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

/// Whether an integer of type \p T holds every value in [0, \p Range): a
/// conversion to it keeps the index.
static bool holdsRange(clang::QualType T, int64_t Range,
                       const clang::ASTContext &AST) {
  T = T.getCanonicalType();
  if (T->isBooleanType())
    return Range <= 2;
  if (!T->isIntegerType() || T->isDependentType())
    return false;
  uint64_t Bits = AST.getTypeSize(T) - (T->isSignedIntegerType() ? 1 : 0);
  return Bits >= 62 || uint64_t(Range - 1) < (uint64_t(1) << Bits);
}

/// The two arguments of a call to CUDA's (or the standard library's)
/// integer min or max (`min`, `umax`, `llmin`, `std::max`, ...), declared
/// outside the file being edited, each argument of the type it computes in
/// or an integer constant (no conversion changes a value); \p IsMax says
/// which.
static std::optional<std::pair<const clang::Expr *, const clang::Expr *>>
minMaxArgs(const clang::CallExpr *C, const clang::ASTContext &AST,
           bool &IsMax) {
  const clang::FunctionDecl *FD = C->getDirectCallee();
  if (!FD || !FD->getIdentifier() || C->getNumArgs() != 2 ||
      isa<clang::CXXOperatorCallExpr, clang::CXXMemberCallExpr>(C))
    return std::nullopt;
  StringRef N = FD->getName();
  static const char *Names[] = {"min",   "max",   "umin",   "umax",
                                "llmin", "llmax", "ullmin", "ullmax"};
  const auto *It = llvm::find(Names, N);
  if (It == std::end(Names) ||
      (!FD->isInStdNamespace() &&
       !FD->getDeclContext()->getRedeclContext()->isTranslationUnit()))
    return std::nullopt;
  const clang::SourceManager &SM = AST.getSourceManager();
  if (SM.isWrittenInMainFile(SM.getSpellingLoc(FD->getLocation())))
    return std::nullopt;
  clang::QualType T = FD->getReturnType()
                          .getNonReferenceType()
                          .getCanonicalType()
                          .getUnqualifiedType();
  if (!T->isIntegerType())
    return std::nullopt;
  for (const clang::Expr *A : C->arguments())
    if (!integerConstantValue(A, AST) && A->IgnoreParenImpCasts()
                                                 ->getType()
                                                 .getCanonicalType()
                                                 .getUnqualifiedType() != T)
      return std::nullopt;
  IsMax = (It - std::begin(Names)) % 2 == 1;
  return std::make_pair(C->getArg(0), C->getArg(1));
}

/// Whether an integer expression is known not to be negative: of an
/// unsigned type, bounded by indexRange(), or a min of such values or a
/// max with one.
static bool nonNegative(const clang::Expr *E, const clang::ASTContext &AST,
                        const clang::FunctionDecl *K, unsigned Depth) {
  if (!E || Depth > 12)
    return false;
  if (E->IgnoreParenImpCasts()->getType()->isUnsignedIntegerType() ||
      indexRange(E, AST, K, Depth + 1))
    return true;
  bool IsMax = false;
  const auto *C = dyn_cast<clang::CallExpr>(E->IgnoreParenImpCasts());
  auto Args = C ? minMaxArgs(C, AST, IsMax) : std::nullopt;
  if (!Args)
    return false;
  bool A = nonNegative(Args->first, AST, K, Depth + 1),
       B = nonNegative(Args->second, AST, K, Depth + 1);
  return IsMax ? A || B : A && B;
}

/// An inclusive upper bound of an integer expression that may be
/// negative: a constant, indexRange() less one, min (either argument's),
/// max or `?:` (both).
static std::optional<int64_t> upperBound(const clang::Expr *E,
                                         const clang::ASTContext &AST,
                                         const clang::FunctionDecl *K,
                                         unsigned Depth) {
  if (!E || Depth > 12)
    return std::nullopt;
  if (std::optional<int64_t> V = integerConstantValue(E, AST))
    return V;
  if (auto R = indexRange(E, AST, K, Depth + 1))
    return *R - 1;
  const clang::Expr *I = E->IgnoreParenImpCasts();
  std::optional<int64_t> A, B;
  bool IsMax = false;
  if (const auto *C = dyn_cast<clang::ConditionalOperator>(I)) {
    A = upperBound(C->getTrueExpr(), AST, K, Depth + 1);
    B = upperBound(C->getFalseExpr(), AST, K, Depth + 1);
    IsMax = true;
  } else if (const auto *C = dyn_cast<clang::CallExpr>(I)) {
    auto Args = minMaxArgs(C, AST, IsMax);
    if (!Args)
      return std::nullopt;
    A = upperBound(Args->first, AST, K, Depth + 1);
    B = upperBound(Args->second, AST, K, Depth + 1);
  }
  if (A && B)
    return IsMax ? std::max(*A, *B) : std::min(*A, *B);
  return IsMax ? std::nullopt : A ? A : B;
}

/// indexRange() of a binary operation: `%` of a non-negative value by a
/// constant, `&` with a constant, `>>` and `/` by constants, and +, *, <<,
/// | and ^ of bounded values (refused past 2^31, so that no int wraps).
static std::optional<int64_t> binaryRange(const clang::BinaryOperator *B,
                                          const clang::ASTContext &AST,
                                          const clang::FunctionDecl *K,
                                          unsigned Depth) {
  auto L = integerConstantValue(B->getLHS(), AST),
       R = integerConstantValue(B->getRHS(), AST);
  auto Range = [&](const clang::Expr *X) {
    return indexRange(X, AST, K, Depth + 1);
  };
  // Exclusive bounds of both operands, each below 2^31.
  auto Both = [&]() -> std::optional<std::pair<int64_t, int64_t>> {
    auto RL = Range(B->getLHS()), RR = Range(B->getRHS());
    constexpr int64_t Most = int64_t(1) << 31;
    if (!RL || !RR || *RL > Most || *RR > Most)
      return std::nullopt;
    return std::make_pair(*RL, *RR);
  };
  auto Capped = [](int64_t V) -> std::optional<int64_t> {
    return V <= (int64_t(1) << 31) ? std::optional<int64_t>(V) : std::nullopt;
  };
  switch (B->getOpcode()) {
  case clang::BO_Rem:
    if (R && *R > 0 && nonNegative(B->getLHS(), AST, K, Depth + 1))
      return R;
    break;
  case clang::BO_And:
    if (R && *R >= 0)
      return *R + 1;
    if (L && *L >= 0)
      return *L + 1;
    break;
  case clang::BO_Shr:
    if (R && *R >= 0 && *R < 63) {
      if (auto LR = Range(B->getLHS()))
        return ((*LR - 1) >> *R) + 1;
      clang::QualType LT = B->getLHS()->IgnoreParenImpCasts()->getType();
      if (LT->isUnsignedIntegerType()) {
        uint64_t W = AST.getTypeSize(LT);
        if (W > uint64_t(*R) && W - *R < 40)
          return int64_t(1) << (W - *R);
      }
    }
    break;
  case clang::BO_Div:
    if (R && *R > 0)
      if (auto LR = Range(B->getLHS()))
        return (*LR - 1) / *R + 1;
    break;
  case clang::BO_Add:
  case clang::BO_Or:
  case clang::BO_Xor: // a | b and a ^ b are at most a + b
    if (auto P = Both())
      return Capped(P->first + P->second - 1);
    break;
  case clang::BO_Mul:
    if (auto P = Both())
      return Capped((P->first - 1) * (P->second - 1) + 1);
    break;
  case clang::BO_Shl:
    if (R && *R >= 0 && *R < 31)
      if (auto P = Both())
        return Capped(((P->first - 1) << *R) + 1);
    break;
  default:
    break;
  }
  return std::nullopt;
}

std::optional<int64_t> indexRange(const clang::Expr *E,
                                  const clang::ASTContext &AST,
                                  const clang::FunctionDecl *K,
                                  unsigned Depth) {
  if (!E || Depth > 12)
    return std::nullopt;
  if (auto V = integerConstantValue(E, AST))
    return *V >= 0 ? std::optional<int64_t>(*V + 1) : std::nullopt;
  const clang::Expr *I = E->IgnoreParenImpCasts();
  auto Small = [](clang::QualType T) -> std::optional<int64_t> {
    T = T.getCanonicalType();
    if (T->isSpecificBuiltinType(clang::BuiltinType::UChar) ||
        T->isSpecificBuiltinType(clang::BuiltinType::Char8))
      return 256;
    if (T->isBooleanType())
      return 2;
    return std::nullopt;
  };
  // \p R where type \p T holds it (a conversion to T keeps the value).
  auto In = [&](clang::QualType T,
                std::optional<int64_t> R) -> std::optional<int64_t> {
    return R && holdsRange(T, *R, AST) ? R : std::nullopt;
  };
  if (auto R = Small(I->getType()))
    return R;
  if (const auto *C = dyn_cast<clang::ExplicitCastExpr>(I)) {
    if (auto R = Small(C->getType()))
      return R;
    if (C->getType()->isIntegerType())
      return In(C->getType(), indexRange(C->getSubExpr(), AST, K, Depth + 1));
  }
  auto NonNeg = [&](const clang::Expr *X) {
    return nonNegative(X, AST, K, Depth + 1);
  };
  if (const auto *B = dyn_cast<clang::BinaryOperator>(I))
    return binaryRange(B, AST, K, Depth);
  if (const auto *C = dyn_cast<clang::ConditionalOperator>(I)) {
    auto A = indexRange(C->getTrueExpr(), AST, K, Depth + 1);
    auto B = indexRange(C->getFalseExpr(), AST, K, Depth + 1);
    if (A && B)
      return std::max(*A, *B);
    return std::nullopt;
  }
  if (const auto *C = dyn_cast<clang::CallExpr>(I)) {
    bool IsMax = false;
    if (auto Args = minMaxArgs(C, AST, IsMax)) {
      auto [A, B] = *Args;
      if (IsMax) {
        // Not negative when one side is not; below both sides' bounds.
        auto UA = upperBound(A, AST, K, Depth + 1),
             UB = upperBound(B, AST, K, Depth + 1);
        if ((NonNeg(A) || NonNeg(B)) && UA && UB)
          return std::max(*UA, *UB) + 1;
        return std::nullopt;
      }
      // Not negative when neither side is; below either side's bound.
      if (!NonNeg(A) || !NonNeg(B))
        return std::nullopt;
      auto RA = indexRange(A, AST, K, Depth + 1),
           RB = indexRange(B, AST, K, Depth + 1);
      if (RA && RB)
        return std::min(*RA, *RB);
      return RA ? RA : RB;
    }
    const clang::FunctionDecl *FD = nullptr;
    if (const clang::Expr *Ret = indexHelperReturn(C, AST, FD))
      return In(FD->getReturnType(), indexRange(Ret, AST, FD, Depth + 1));
    return std::nullopt;
  }
  if (const auto *V = dyn_cast_or_null<clang::VarDecl>(declOf(I)))
    if (V->isLocalVarDecl() && V->getInit() &&
        !llvm::is_contained(writtenDecls(K->getBody()), V))
      return In(V->getType(), indexRange(V->getInit(), AST, K, Depth + 1));
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
