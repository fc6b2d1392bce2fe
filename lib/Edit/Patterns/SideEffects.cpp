//===- SideEffects.cpp - What an expression may change --------------------===//

#include "SideEffects.h"
#include "../Transforms/TransformSupport.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/Builtins.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;

namespace optiml {
namespace {

constexpr unsigned MaxDepth = 6;

bool isValueType(QualType T) {
  T = T.getCanonicalType();
  if (T->isArithmeticType() || T->isVectorType())
    return true;
  // CUDA's float4 and friends are small structs of arithmetic fields.
  if (const auto *RD = T->getAsCXXRecordDecl()) {
    if (!RD->hasDefinition() || !RD->isTriviallyCopyable())
      return false;
    for (const FieldDecl *F : RD->fields())
      if (!F->getType()->isArithmeticType())
        return false;
    return true;
  }
  return false;
}

/// A body-less device function of the toolkit's math library (see the
/// header for the rule).
bool isToolkitMathFunction(const FunctionDecl *FD, const ASTContext &AST) {
  if (FD->hasBody() || FD->isVariadic() || FD->param_empty() ||
      !FD->hasAttr<CUDADeviceAttr>() || FD->getReturnType()->isVoidType() ||
      !isValueType(FD->getReturnType()))
    return false;
  if (!AST.getSourceManager().isInSystemHeader(FD->getLocation()))
    return false;
  for (const ParmVarDecl *P : FD->parameters())
    if (!isValueType(P->getType()))
      return false;
  return true;
}

class Analysis {
public:
  Analysis(const ASTContext &AST) : AST(AST) {}

  /// Effects of \p S; inside a function body (\p Owner non-null), writes to
  /// Owner's own non-static locals and by-value parameters are allowed.
  bool effects(const Stmt *S, const FunctionDecl *Owner, unsigned Depth) {
    if (!S)
      return false;
    if (isa<GCCAsmStmt>(S) || isa<MSAsmStmt>(S) || isa<CXXNewExpr>(S) ||
        isa<CXXDeleteExpr>(S) || isa<CXXThrowExpr>(S) || isa<CXXTryStmt>(S) ||
        isa<GotoStmt>(S) || isa<IndirectGotoStmt>(S))
      return true;
    if (const auto *E = dyn_cast<Expr>(S)) {
      if (E->isGLValue() && E->getType().isVolatileQualified())
        return true;
    }
    if (const auto *B = dyn_cast<BinaryOperator>(S))
      if (B->isAssignmentOp() && !writesOwnLocal(B->getLHS(), Owner))
        return true;
    if (const auto *U = dyn_cast<UnaryOperator>(S))
      if (U->isIncrementDecrementOp() &&
          !writesOwnLocal(U->getSubExpr(), Owner))
        return true;
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S))
      if (Op->isAssignmentOp() && !writesOwnLocal(Op->getArg(0), Owner))
        return true;
    if (const auto *DS = dyn_cast<DeclStmt>(S))
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D)) {
          if (V->isStaticLocal() || V->getType().isVolatileQualified())
            return true;
          if (effects(V->getInit(), Owner, Depth))
            return true;
        }
    if (const auto *C = dyn_cast<CallExpr>(S)) {
      const FunctionDecl *FD = C->getDirectCallee();
      // A trivial operator= of a value type is a plain copy: its target
      // was judged above.
      const auto *MD = dyn_cast_or_null<CXXMethodDecl>(FD);
      if (!(MD && MD->isTrivial()) && !pureCallee(FD, Depth))
        return true;
      // An argument bound to a non-const reference may be written.
      if (FD)
        for (const ParmVarDecl *P : FD->parameters())
          if (P->getType()->isReferenceType() &&
              !P->getType()->getPointeeType().isConstQualified())
            return true;
    }
    if (const auto *CE = dyn_cast<CXXConstructExpr>(S)) {
      const CXXConstructorDecl *Ctor = CE->getConstructor();
      if (!Ctor->isTrivial() && !pureConstructor(Ctor, Depth))
        return true;
    }
    for (const Stmt *Child : S->children())
      if (effects(Child, Owner, Depth))
        return true;
    return false;
  }

  bool pureCallee(const FunctionDecl *FD, unsigned Depth) {
    if (!FD)
      return false; // through a pointer: anything
    if (FD->hasAttr<ConstAttr>() || FD->hasAttr<PureAttr>())
      return true;
    if (unsigned ID = FD->getBuiltinID())
      return AST.BuiltinInfo.isConst(ID) || AST.BuiltinInfo.isPure(ID);
    if (isToolkitMathFunction(FD, AST))
      return true;
    const FunctionDecl *Def = nullptr;
    if (!FD->hasBody(Def) || !Def || Depth >= MaxDepth)
      return false;
    return !effects(Def->getBody(), Def, Depth + 1);
  }

  bool pureConstructor(const CXXConstructorDecl *Ctor, unsigned Depth) {
    const FunctionDecl *Def = nullptr;
    if (!Ctor->hasBody(Def) || !Def || Depth >= MaxDepth)
      return false;
    const auto *CDef = cast<CXXConstructorDecl>(Def);
    for (const CXXCtorInitializer *I : CDef->inits())
      if (effects(I->getInit(), nullptr, Depth + 1))
        return false;
    // The object under construction is the constructor's own.
    return !effects(Def->getBody(), Def, Depth + 1);
  }

  /// Whether \p LHS names (a part of) a non-static local or a by-value
  /// parameter of \p Owner, or a member of the object a constructor or
  /// method of a value type builds (`this->x`).
  bool writesOwnLocal(const Expr *LHS, const FunctionDecl *Owner) {
    if (!Owner)
      return false;
    const Expr *E = LHS->IgnoreParenImpCasts();
    while (true) {
      if (const auto *M = dyn_cast<MemberExpr>(E)) {
        if (M->isArrow()) {
          if (isa<CXXThisExpr>(M->getBase()->IgnoreParenImpCasts()))
            return isa<CXXConstructorDecl>(Owner);
          return false;
        }
        E = M->getBase()->IgnoreParenImpCasts();
        continue;
      }
      if (const auto *A = dyn_cast<ArraySubscriptExpr>(E)) {
        const Expr *Base = A->getBase()->IgnoreParenImpCasts();
        // Only a local array, not memory a pointer leads to.
        if (!Base->getType()->isArrayType() &&
            !(isa<DeclRefExpr>(Base) &&
              cast<DeclRefExpr>(Base)->getDecl()->getType()->isArrayType()))
          return false;
        E = Base;
        continue;
      }
      break;
    }
    const auto *R = dyn_cast<DeclRefExpr>(E);
    if (!R)
      return false;
    const auto *V = dyn_cast<VarDecl>(R->getDecl());
    if (!V || V->getType()->isReferenceType())
      return false;
    if (isa<ParmVarDecl>(V))
      return V->getDeclContext() == Owner;
    return V->isLocalVarDecl() && !V->isStaticLocal() &&
           V->getParentFunctionOrMethod() == Owner;
  }

private:
  const ASTContext &AST;
};

} // namespace

bool mayHaveSideEffects(const Expr *E, const ASTContext &AST) {
  return Analysis(AST).effects(E, nullptr, 0);
}

bool isPureFunction(const FunctionDecl *FD, const ASTContext &AST) {
  return Analysis(AST).pureCallee(FD, 0);
}

const Expr *indexHelperReturn(const CallExpr *C, const ASTContext &AST,
                              const FunctionDecl *&FD) {
  FD = C->getDirectCallee();
  if (!FD || FD->isVariadic() || C->getNumArgs() != FD->getNumParams() ||
      isa<CXXOperatorCallExpr, CXXMemberCallExpr>(C))
    return nullptr;
  const FunctionDecl *Def = nullptr;
  if (!FD->hasBody(Def) || !isPureFunction(Def, AST))
    return nullptr;
  FD = Def;
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Def->getBody());
  const auto *Ret = Body && Body->size() == 1
                        ? dyn_cast<ReturnStmt>(Body->body_front())
                        : nullptr;
  return Ret ? Ret->getRetValue() : nullptr;
}

bool readsOrWritesMemory(const Stmt *S, const ASTContext *AST,
                         BuiltinRules Builtins) {
  if (!S)
    return false;
  if (const auto *E = dyn_cast<Expr>(S);
      E && (Builtins.ThreadCoords || Builtins.BlockCoords))
    if (auto B = asBuiltinVar(E->IgnoreParenImpCasts())) {
      bool Block = B->Var == "blockIdx" || B->Var == "gridDim";
      return !(Block ? Builtins.BlockCoords : Builtins.ThreadCoords);
    }
  if (const auto *C = dyn_cast<CallExpr>(S)) {
    const FunctionDecl *FD = C->getDirectCallee();
    if (!AST || !FD || isa<CXXMemberCallExpr>(C) || !isPureFunction(FD, *AST))
      return true;
  } else if (isa<ArraySubscriptExpr, MemberExpr>(S)) {
    return true;
  }
  if (const auto *U = dyn_cast<UnaryOperator>(S))
    if (U->getOpcode() == UO_Deref || U->isIncrementDecrementOp() ||
        U->getOpcode() == UO_AddrOf)
      return true;
  if (const auto *B = dyn_cast<BinaryOperator>(S); B && B->isAssignmentOp())
    return true;
  for (const Stmt *Child : S->children())
    if (readsOrWritesMemory(Child, AST, Builtins))
      return true;
  return false;
}

/// The local variable whose own storage \p E names (`v`, `a[i]` of a local
/// array `a`, `s.x`), or null when \p E reaches memory through a pointer.
static const VarDecl *localStorage(const Expr *E) {
  while (true) {
    E = E->IgnoreParenImpCasts();
    if (const auto *M = dyn_cast<MemberExpr>(E)) {
      if (M->isArrow())
        return nullptr;
      E = M->getBase();
    } else if (const auto *A = dyn_cast<ArraySubscriptExpr>(E)) {
      if (!A->getBase()->IgnoreParenImpCasts()->getType()->isArrayType())
        return nullptr;
      E = A->getBase();
    } else {
      const auto *V = dyn_cast_or_null<VarDecl>(referencedDecl(E));
      return V && V->isLocalVarDecl() && !V->isStaticLocal() &&
                     !V->hasAttr<CUDASharedAttr>()
                 ? V
                 : nullptr;
    }
  }
}

bool localAddressEscapes(const Stmt *S) {
  if (!S)
    return false;
  if (const auto *A = dyn_cast<ArraySubscriptExpr>(S)) {
    // `a[i]`: the array decays to be indexed, its address stays here.
    const Expr *B = A->getBase()->IgnoreParens();
    if (const auto *C = dyn_cast<ImplicitCastExpr>(B);
        C && C->getCastKind() == CK_ArrayToPointerDecay)
      B = C->getSubExpr();
    return localAddressEscapes(B) || localAddressEscapes(A->getIdx());
  }
  if (const auto *U = dyn_cast<UnaryOperator>(S);
      U && U->getOpcode() == UO_AddrOf && localStorage(U->getSubExpr()))
    return true;
  if (const auto *C = dyn_cast<ImplicitCastExpr>(S);
      C && C->getCastKind() == CK_ArrayToPointerDecay &&
      localStorage(C->getSubExpr()))
    return true;
  if (const auto *DS = dyn_cast<DeclStmt>(S))
    for (const Decl *D : DS->decls())
      if (const auto *V = dyn_cast<VarDecl>(D))
        if (V->getType()->isReferenceType() && V->getInit() &&
            localStorage(V->getInit()))
          return true;
  return llvm::any_of(S->children(),
                      [](const Stmt *C) { return localAddressEscapes(C); });
}

WriteStorage writeStorage(const ValueDecl *D, bool Escapes) {
  const auto *V = dyn_cast_or_null<VarDecl>(D);
  if (!V || !V->isLocalVarDecl() || V->isStaticLocal() ||
      V->hasAttr<CUDASharedAttr>())
    return WriteStorage::Shared;
  if (V->getType()->isArrayType())
    return WriteStorage::Private;
  if (V->getType()->isReferenceType() ||
      (V->getType()->isPointerType() && Escapes))
    return WriteStorage::Unknown;
  return WriteStorage::Shared;
}

const ValueDecl *pointerRoot(const ValueDecl *D, const Stmt *Body) {
  for (unsigned Depth = 0; D && Depth < 8; ++Depth) {
    const auto *V = dyn_cast<VarDecl>(D);
    if (!V || !V->isLocalVarDecl() || !V->getType()->isPointerType())
      return D;
    if (!V->getInit() || writtenVars(Body).contains(V))
      return nullptr;
    const Expr *I = stripCasts(V->getInit());
    if (const auto *U = dyn_cast<UnaryOperator>(I);
        U && U->getOpcode() == UO_AddrOf)
      if (const auto *A =
              dyn_cast<ArraySubscriptExpr>(U->getSubExpr()->IgnoreParens()))
        I = stripCasts(A->getBase());
    if (const auto *B = dyn_cast<BinaryOperator>(I);
        B && (B->getOpcode() == BO_Add || B->getOpcode() == BO_Sub)) {
      bool LP = B->getLHS()->getType()->isPointerType();
      if (!LP && (B->getOpcode() == BO_Sub ||
                  !B->getRHS()->getType()->isPointerType()))
        return nullptr;
      I = stripCasts(LP ? B->getLHS() : B->getRHS());
    }
    D = declOf(I);
  }
  return nullptr;
}

} // namespace optiml
