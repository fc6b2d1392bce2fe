//===- WarpPerRowMembers.cpp - Struct accumulators, member by member ------===//
//
// Part of warp-per-row (WarpPerRow.cpp): row accumulators of a vector type
// or a small struct, combined across lanes member by member.
//
// `float2 acc = make_float2(0.f, 0.f); ... acc.x += v.x; acc.y += v.y;`
// is two sums that happen to share a variable: each written member becomes
// a Reduction of its own (Reduction::Member), reset in lanes other than
// the first and combined by the scalar machinery. A max or min written as
// a comparison (`if (v > acc.hi) acc.hi = v;`) is matched as a scalar's is
// (matchSelect()) and combined with its own comparison. A member the loop
// never writes keeps, in every lane, the value it had before the loop and
// is not combined. Anything that could read or write the accumulator other
// than through those statements (a write of the whole object, its address,
// a reference to it, a read elsewhere in the loop) is refused.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "WarpPerRowInternal.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include <functional>

using namespace llvm;
using clang::dyn_cast;
using clang::dyn_cast_or_null;
using clang::isa;

namespace optiml {
namespace warpperrow {

const char *opName(Reduction::OpKind K) {
  switch (K) {
  case Reduction::Sum:
    return "sum";
  case Reduction::Prod:
    return "product";
  case Reduction::Max:
    return "max";
  case Reduction::Min:
    return "min";
  }
  return "";
}

bool isZero(const clang::Expr *E, const clang::ASTContext &AST, int One) {
  E = stripCasts(E);
  // `T(0)` in a template.
  if (const auto *U = dyn_cast<clang::CXXUnresolvedConstructExpr>(E);
      U && U->getNumArgs() == 1)
    return isZero(U->getArg(0), AST, One);
  if (const auto *F = dyn_cast<clang::FloatingLiteral>(E))
    return F->getValueAsApproximateDouble() == One;
  if (auto V = integerConstantValue(E, AST))
    return *V == One;
  return false;
}

std::string accText(const Reduction &R) {
  std::string Name = R.Acc->getName().str();
  return R.Member ? Name + "." + R.Member->getName().str() : Name;
}

std::string accStem(const Reduction &R) {
  std::string Name = R.Acc->getName().str();
  return R.Member ? Name + "_" + R.Member->getName().str() : Name;
}

std::string accType(const Reduction &R, const clang::ASTContext &AST) {
  clang::QualType T = R.Member ? R.Member->getType() : R.Acc->getType();
  return T.getUnqualifiedType().getAsString(AST.getPrintingPolicy());
}

namespace {

/// The member of \p V that \p E names (`v.x`, through parentheses and
/// implicit casts), or null.
const clang::FieldDecl *memberOf(const clang::Expr *E,
                                 const clang::VarDecl *V) {
  const auto *M = dyn_cast<clang::MemberExpr>(E->IgnoreParenImpCasts());
  if (!M || M->isArrow() || referencedDecl(M->getBase()) != V)
    return nullptr;
  return dyn_cast<clang::FieldDecl>(M->getMemberDecl());
}

/// Types a shuffle moves as they are (no overload to choose between).
bool shuffledAsIs(clang::QualType T) {
  const auto *BT = T->getAs<clang::BuiltinType>();
  if (!BT || T.isVolatileQualified())
    return false;
  switch (BT->getKind()) {
  case clang::BuiltinType::Float:
  case clang::BuiltinType::Double:
  case clang::BuiltinType::Int:
  case clang::BuiltinType::UInt:
  case clang::BuiltinType::Long:
  case clang::BuiltinType::ULong:
  case clang::BuiltinType::LongLong:
  case clang::BuiltinType::ULongLong:
    return true;
  default:
    return false;
  }
}

/// Why \p V cannot be combined member by member because of what it is
/// (not a local of a vector type or a small struct of arithmetic members);
/// "" when it can.
std::string kindProblem(const clang::VarDecl *V) {
  clang::QualType T = V->getType();
  if (!V->isLocalVarDecl() || V->isStaticLocal() ||
      V->hasAttr<clang::CUDASharedAttr>() || T->isReferenceType())
    return "it is not a local variable of the thread";
  if (T->isDependentType())
    return "its type depends on template parameters";
  const auto *RD = T->getAsCXXRecordDecl();
  std::string TN = "'" + T.getUnqualifiedType().getAsString() + "'";
  if (!RD || !RD->hasDefinition() || RD->isUnion() || RD->getNumBases() ||
      !RD->isTriviallyCopyable() || RD->field_empty())
    return "its type " + TN +
           " is not a vector type or a trivially copyable struct";
  for (const clang::FieldDecl *F : RD->fields())
    if (F->isBitField() || !shuffledAsIs(F->getType()))
      return "its type " + TN + " has the member '" + F->getName().str() +
             "' of type '" + F->getType().getAsString() +
             "'; only float, double and integer members of at least 32 "
             "bits are combined across lanes";
  return "";
}

/// The first place in \p Body where \p V's address is taken, a reference
/// is bound to it or one of its members (also by a lambda's capture or a
/// call's argument), or a method is called on it: a way to read or write
/// it that the loop's statements do not show. Null if none.
const clang::Stmt *addressUse(const clang::Stmt *Body,
                              const clang::VarDecl *V) {
  // Through member accesses: `&acc.x` is `acc`'s address too.
  auto IsV = [&](const clang::Expr *E) {
    E = E->IgnoreParenImpCasts();
    while (const auto *M = dyn_cast<clang::MemberExpr>(E)) {
      if (M->isArrow())
        return false;
      E = M->getBase()->IgnoreParenImpCasts();
    }
    return referencedDecl(E) == V;
  };
  const clang::Stmt *Found = nullptr;
  std::function<void(const clang::Stmt *)> Walk = [&](const clang::Stmt *S) {
    if (!S || Found)
      return;
    if (const auto *U = dyn_cast<clang::UnaryOperator>(S);
        U && U->getOpcode() == clang::UO_AddrOf && IsV(U->getSubExpr()))
      Found = S;
    if (const auto *DS = dyn_cast<clang::DeclStmt>(S))
      for (const clang::Decl *D : DS->decls())
        if (const auto *R = dyn_cast<clang::VarDecl>(D);
            R && R->getType()->isReferenceType() && R->getInit() &&
            IsV(R->getInit()))
          Found = S;
    // A lambda capturing it by reference reads and writes it wherever it
    // is called.
    if (const auto *LE = dyn_cast<clang::LambdaExpr>(S))
      for (const clang::LambdaCapture &C : LE->captures())
        if (C.capturesVariable() && C.getCapturedVar() == V &&
            C.getCaptureKind() == clang::LCK_ByRef)
          Found = S;
    if (const auto *MC = dyn_cast<clang::CXXMemberCallExpr>(S);
        MC && IsV(MC->getImplicitObjectArgument()))
      Found = S;
    // Arguments bound to a reference, except the copy a class's own
    // assignment or copy constructor makes (`out[r] = acc`).
    if (const auto *C = dyn_cast<clang::CallExpr>(S);
        C && !isa<clang::CXXOperatorCallExpr>(C))
      if (const clang::FunctionDecl *FD = C->getDirectCallee())
        for (unsigned I = 0; I < C->getNumArgs() && I < FD->getNumParams(); ++I)
          if (FD->getParamDecl(I)->getType()->isReferenceType() &&
              IsV(C->getArg(I)))
            Found = S;
    for (const clang::Stmt *Ch : S->children())
      Walk(Ch);
  };
  Walk(Body);
  return Found;
}

/// `acc.m += e`, `acc.m -= e`, `acc.m *= e`, `acc.m = acc.m + e` (either
/// order), `acc.m = acc.m - e`, `acc.m = acc.m * e`, `acc.m = fmaxf(acc.m,
/// e)` (fmax, max, and the minima; either order), or a max or min written
/// as a selection (`if (e > acc.m) acc.m = e;`, `acc.m = e > acc.m ? e :
/// acc.m`: matchSelect(), as for a scalar) for a member m of \p V, where e
/// does not mention \p V.
std::optional<Reduction> matchMember(const clang::Stmt *S,
                                     const clang::VarDecl *V,
                                     const clang::ASTContext &AST) {
  for (const clang::FieldDecl *F : V->getType()->getAsRecordDecl()->fields())
    if (auto Sel = matchSelect(
            S, [&](const clang::Expr *X) { return memberOf(X, V) == F; },
            [&](const clang::Expr *X) { return mentions(X, V); }, AST)) {
      Sel->Acc = V;
      Sel->Member = F;
      return Sel;
    }
  const auto *E = dyn_cast<clang::Expr>(S);
  if (!E)
    return std::nullopt;
  E = E->IgnoreParenImpCasts();
  Reduction R;
  R.Acc = V;
  if (const auto *CA = dyn_cast<clang::CompoundAssignOperator>(E)) {
    R.Member = memberOf(CA->getLHS(), V);
    if (!R.Member || mentions(CA->getRHS(), V))
      return std::nullopt;
    if (CA->getOpcode() == clang::BO_AddAssign ||
        CA->getOpcode() == clang::BO_SubAssign)
      R.Op = Reduction::Sum;
    else if (CA->getOpcode() == clang::BO_MulAssign)
      R.Op = Reduction::Prod;
    else
      return std::nullopt;
    return R;
  }
  const auto *A = dyn_cast<clang::BinaryOperator>(E);
  if (!A || A->getOpcode() != clang::BO_Assign)
    return std::nullopt;
  R.Member = memberOf(A->getLHS(), V);
  if (!R.Member)
    return std::nullopt;
  // One operand is the member, the other does not read the accumulator.
  auto AccAndElem = [&](const clang::Expr *X, const clang::Expr *Y,
                        bool Ordered) {
    return (memberOf(X, V) == R.Member && !mentions(Y, V)) ||
           (!Ordered && memberOf(Y, V) == R.Member && !mentions(X, V));
  };
  const clang::Expr *RHS = stripCasts(A->getRHS());
  if (const auto *B = dyn_cast<clang::BinaryOperator>(RHS)) {
    clang::BinaryOperatorKind Op = B->getOpcode();
    if ((Op != clang::BO_Add && Op != clang::BO_Sub && Op != clang::BO_Mul) ||
        !AccAndElem(B->getLHS(), B->getRHS(), Op == clang::BO_Sub))
      return std::nullopt;
    R.Op = Op == clang::BO_Mul ? Reduction::Prod : Reduction::Sum;
    return R;
  }
  const auto *C = dyn_cast<clang::CallExpr>(RHS);
  const clang::FunctionDecl *FD = C ? C->getDirectCallee() : nullptr;
  if (!FD || !FD->getIdentifier() || C->getNumArgs() != 2 ||
      !AccAndElem(C->getArg(0), C->getArg(1), false))
    return std::nullopt;
  StringRef N = FD->getName();
  if (N == "fmaxf" || N == "fmax" || N == "max")
    R.Op = Reduction::Max;
  else if (N == "fminf" || N == "fmin" || N == "min")
    R.Op = Reduction::Min;
  else
    return std::nullopt;
  R.Func = (FD->isInStdNamespace() ? "std::" : "") + N.str();
  return R;
}

/// Whether the member \p F of \p V starts, before the loop, from \p One
/// (0 for a sum, 1 for a product): `{0.f, 0.f}` (a member left out is
/// zero) or `make_float2(0.f, 0.f)` (CUDA's `make_<type>`, one argument
/// per member).
bool startsFrom(const clang::VarDecl *V, const clang::FieldDecl *F, int One,
                const clang::ASTContext &AST) {
  const clang::Expr *Init = V->getInit();
  if (!Init)
    return false;
  Init = Init->IgnoreImplicit();
  if (const auto *CE = dyn_cast<clang::CXXConstructExpr>(Init);
      CE && CE->getNumArgs() == 1 &&
      CE->getConstructor()->isCopyOrMoveConstructor())
    Init = CE->getArg(0)->IgnoreImplicit();
  unsigned I = F->getFieldIndex();
  const clang::RecordDecl *RD = F->getParent();
  if (const auto *IL = dyn_cast<clang::InitListExpr>(Init)) {
    if (IL->isSyntacticForm() && IL->getSemanticForm())
      IL = IL->getSemanticForm();
    if (I >= IL->getNumInits())
      return One == 0;
    const clang::Expr *X = IL->getInit(I);
    return isa<clang::ImplicitValueInitExpr>(X) ? One == 0
                                                : isZero(X, AST, One);
  }
  // CUDA's own `make_float2` (a system header's), whose arguments are the
  // members in order; a program's function of that name might not be.
  const auto *C = dyn_cast<clang::CallExpr>(stripCasts(Init));
  const clang::FunctionDecl *FD = C ? C->getDirectCallee() : nullptr;
  if (!FD || !FD->getIdentifier() || !RD->getIdentifier() ||
      FD->getName() != "make_" + RD->getName().str() ||
      !AST.getSourceManager().isInSystemHeader(FD->getLocation()))
    return false;
  unsigned Fields = std::distance(RD->field_begin(), RD->field_end());
  return C->getNumArgs() == Fields && isZero(C->getArg(I), AST, One);
}

/// The member reductions of the accumulator \p V in the loop \p L, added to
/// \p L.Reductions; or why not.
Error memberReductions(const EditContext &Ctx, const Edit &E, const Plan &P,
                       InnerLoop &L, const clang::VarDecl *V) {
  std::string At = "the loop at " + where(Ctx, L.For);
  std::string Name = "'" + V->getName().str() + "'";
  auto No = [&](const Twine &Why) {
    return reject(E, "not-applicable",
                  At + " writes " + Name + " member by member, but " + Why);
  };
  if (std::string Why = kindProblem(V); !Why.empty())
    return No(Why);
  if (mentions(L.Start, V) || mentions(L.Cond, V) || mentions(L.Inc, V))
    return No("its header reads it");
  if (const clang::Stmt *S = addressUse(P.Kernel.Decl->getBody(), V))
    return No("'" + looseExprText(Ctx, S) + "' at " + where(Ctx, S) +
              " takes its address or binds a reference to it: its members "
              "could be read or written out of sight");
  std::vector<Reduction> Found;
  for (const clang::Stmt *S : bodyStmts(L.body())) {
    if (!mentions(S, V))
      continue;
    auto M = matchMember(S, V, Ctx.AST);
    if (!M) {
      if (llvm::is_contained(writtenDecls(S), V))
        return No("also writes it whole at " + where(Ctx, S) +
                  "; only member by member sums, products, maxima and "
                  "minima are combined across lanes");
      return No("the statement at " + where(Ctx, S) +
                " reads or writes it in a way that is not a member's sum, "
                "product, max or min (loop-carried dependence)");
    }
    auto Same = llvm::find_if(
        Found, [&](const Reduction &R) { return R.Member == M->Member; });
    if (Same == Found.end()) {
      Found.push_back(*M);
      continue;
    }
    bool Selects = Same->Cond || M->Cond;
    if (Same->Op != M->Op || (!Selects && Same->Func != M->Func))
      return No("keeps its member '" + M->Member->getName() + "' as both a " +
                opName(Same->Op) + " and a " + opName(M->Op) + " (at " +
                where(Ctx, S) + ")");
    // As for a scalar, a selection is its accumulator's one statement: the
    // lanes combine with its comparison alone.
    if (Selects)
      return No("keeps its member '" + M->Member->getName() + "' as a " +
                opName(M->Op) + " in two statements (again at " +
                where(Ctx, S) +
                "), one a comparison; a max or min written as a comparison "
                "is combined only as its member's one statement");
  }
  for (Reduction &R : Found) {
    if (R.Op == Reduction::Sum || R.Op == Reduction::Prod) {
      // As for a scalar: lanes other than the first start from the
      // identity unless the member is known to hold it already.
      bool Identity =
          startsFrom(V, R.Member, R.Op == Reduction::Sum ? 0 : 1, Ctx.AST);
      for (const InnerLoop &Prev : P.Loops)
        Identity &= !mentions(Prev.For, V);
      for (const clang::Stmt *S : P.Item.Body) {
        if (containsStmt(S, L.For))
          break;
        Identity &= !writtenVars(S).contains(V);
      }
      R.NeedsZeroing = !Identity;
    }
    L.Reductions.push_back(R);
  }
  return Error::success();
}

} // namespace

Error partWrites(const EditContext &Ctx, const Edit &E, const Plan &P,
                 InnerLoop &L) {
  const clang::Stmt *Body = L.body();
  std::vector<const clang::ValueDecl *> Whole = writtenDecls(Body);
  // A member written in the loop: `acc.x += v` (also when the loop writes
  // `acc` whole as well, which memberReductions() refuses).
  auto MemberWritten = [&](const clang::ValueDecl *D) {
    const auto *V = dyn_cast<clang::VarDecl>(D);
    if (!V || !V->getType()->isRecordType())
      return false;
    bool Found = false;
    std::function<void(const clang::Stmt *)> Walk = [&](const clang::Stmt *S) {
      if (!S || Found)
        return;
      if (const auto *B = dyn_cast<clang::BinaryOperator>(S);
          B && B->isAssignmentOp())
        Found = memberOf(B->getLHS(), V);
      if (const auto *U = dyn_cast<clang::UnaryOperator>(S);
          U && U->isIncrementDecrementOp())
        Found = memberOf(U->getSubExpr(), V);
      for (const clang::Stmt *Ch : S->children())
        Walk(Ch);
    };
    Walk(Body);
    return Found;
  };
  std::vector<const clang::ValueDecl *> Parts;
  for (const clang::ValueDecl *D : writtenVars(Body))
    if (D != L.Var && !declaredIn(D, L.For, Ctx) &&
        (!llvm::is_contained(Whole, D) || MemberWritten(D)))
      Parts.push_back(D);
  // In the order they are declared, so the first refusal is stable.
  const clang::SourceManager &SM = Ctx.AST.getSourceManager();
  llvm::sort(Parts, [&](const clang::ValueDecl *A, const clang::ValueDecl *B) {
    return SM.isBeforeInTranslationUnit(A->getLocation(), B->getLocation());
  });
  for (const clang::ValueDecl *D : Parts) {
    if (MemberWritten(D)) {
      if (Error Err = memberReductions(Ctx, E, P, L, cast<clang::VarDecl>(D)))
        return Err;
      continue;
    }
    return reject(E, "not-applicable",
                  "the loop at " + where(Ctx, L.For) + " writes '" +
                      D->getName() +
                      "' in part (through a member, a pointer or a "
                      "reference); only whole scalars kept as a sum, "
                      "product, max or min, or members of a local vector "
                      "or small struct kept so, are combined across lanes");
  }
  return Error::success();
}

const clang::CallExpr *refCapturingLambdaCall(const clang::Stmt *S) {
  if (!S)
    return nullptr;
  if (const auto *C = dyn_cast<clang::CXXOperatorCallExpr>(S);
      C && C->getOperator() == clang::OO_Call && C->getNumArgs() > 0)
    if (const auto *RD = C->getArg(0)->getType()->getAsCXXRecordDecl();
        RD && RD->isLambda() &&
        llvm::any_of(RD->captures(), [](const clang::LambdaCapture &LC) {
          return LC.capturesVariable() &&
                 LC.getCaptureKind() == clang::LCK_ByRef;
        }))
      return C;
  for (const clang::Stmt *Ch : S->children())
    if (const clang::CallExpr *C = refCapturingLambdaCall(Ch))
      return C;
  return nullptr;
}

} // namespace warpperrow
} // namespace optiml
