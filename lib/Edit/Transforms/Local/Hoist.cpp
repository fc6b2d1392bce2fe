//===- Hoist.cpp - Loop-invariant code motion out of one loop -------------===//
//
// Target: a loop. Inside it, the largest expressions whose operands are all
// loop-invariant (parameters and locals not assigned in the loop and whose
// address is never taken, threadIdx/blockIdx/blockDim/gridDim, constants,
// `const`/`__constant__` globals) become typed locals declared just before
// the loop:
//
//   for (int k = 0; k < n; ++k)          const int optiml_h0 = row * n;
//     s += a[row * n + k];        ->     for (int k = 0; k < n; ++k)
//                                          s += a[optiml_h0 + k];
//
// Invariance is judged against the target loop: a variable assigned anywhere
// in it (inner loops included) varies. Expressions inside inner loops are
// hoisted to just before the target loop too; to hoist further out, target
// an enclosing loop.
//
// What keeps it exact:
//  - Arithmetic and calls to known math functions cannot trap, so they may
//    be evaluated even when the loop would not run; integer `/` and `%` by a
//    divisor that is not a nonzero constant are left alone (division by zero).
//  - A floating-point product that is an operand of `+`/`-` is not hoisted:
//    nvcc may contract it into an FMA in place, and a separate rounding
//    would change results.
//  - A load is hoisted only when it runs in every iteration (a top-level
//    statement of the body before any jump, not under `?:`, `&&`, `||`), its
//    pointer cannot be written through in the loop (see loadBlocker), and,
//    when the loop may run zero times, it is guarded by the loop's entry
//    condition so no new memory is read.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/FoldingSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include <functional>

using namespace clang;
using namespace llvm;

namespace optiml {
namespace {

/// The verdict on one expression.
struct Inv {
  bool Ok = true;
  /// Why an expression that uses no varying variable still cannot move
  /// (a call, a load that may alias, a division); empty when it varies.
  std::string Blocker;
  bool Work = false; ///< an operator, a call or a load: worth a local
  bool Load = false;
  bool Division = false; ///< integer `/` or `%` by a non-constant
  /// The invariant names it uses, with why each is invariant.
  std::vector<std::string> Leaves;
  std::vector<std::string> LoadWhy;

  void add(const Inv &C) {
    if (!C.Ok) {
      // A varying operand wins over a blocker: the expression varies anyway.
      if (Ok)
        Blocker = C.Blocker;
      else if (C.Blocker.empty())
        Blocker.clear();
      Ok = false;
    }
    Work |= C.Work;
    Load |= C.Load;
    Division |= C.Division;
    for (const std::string &L : C.Leaves)
      if (!is_contained(Leaves, L))
        Leaves.push_back(L);
    for (const std::string &L : C.LoadWhy)
      LoadWhy.push_back(L);
  }
};

Inv varies() {
  Inv I;
  I.Ok = false;
  return I;
}
Inv blocked(std::string Why) {
  Inv I;
  I.Ok = false;
  I.Blocker = std::move(Why);
  return I;
}

std::string typeText(QualType T, const ASTContext &AST) {
  PrintingPolicy PP(AST.getLangOpts());
  PP.SuppressTagKeyword = true;
  PP.SuppressScope = false;
  return T.getUnqualifiedType().getAsString(PP);
}

/// One expression to hoist (all its occurrences).
struct Item {
  std::vector<const Expr *> Uses;
  std::string Text, Type, Why;
  bool Load = false;
};

struct HoistPlan {
  ResolvedLoop Loop;
  std::vector<Item> Items;
  /// Why some invariant-looking expressions stay (shown in refusals).
  std::vector<std::string> Kept;
  std::string EntryCond; ///< guard for hoisted loads ("" when not needed)
};

class Analyzer {
public:
  Analyzer(const EditContext &Ctx, const ResolvedLoop &L, bool Loads)
      : Ctx(Ctx), L(L), Loads(Loads) {
    const Stmt *Body = L.Kernel.Decl->getBody();
    for (const ValueDecl *D : writtenVars(L.S))
      Written.insert(D);
    collectAddressTaken(Body);
    collectDeclaredIn(L.S);
    Writes = memoryWrites(L.S);
    findSync(L.S);
  }

  HoistPlan run();

private:
  const EditContext &Ctx;
  const ResolvedLoop &L;
  bool Loads;
  SmallPtrSet<const ValueDecl *, 16> Written, AddressTaken, DeclaredIn;
  std::vector<MemWrite> Writes;
  const Stmt *Sync = nullptr; ///< a barrier, fence, atomic or opaque call
  std::vector<std::pair<const Expr *, bool /*unconditional*/>> Candidates;
  std::vector<std::string> Kept;

  void collectAddressTaken(const Stmt *S) {
    if (!S)
      return;
    if (const auto *U = dyn_cast<UnaryOperator>(S))
      if (U->getOpcode() == UO_AddrOf)
        if (const ValueDecl *D = referencedDecl(U->getSubExpr()))
          AddressTaken.insert(D);
    // A reference bound to a local can write it.
    if (const auto *VD = dyn_cast<DeclStmt>(S))
      for (const Decl *D : VD->decls())
        if (const auto *V = dyn_cast<VarDecl>(D))
          if (V->getType()->isReferenceType() && V->getInit())
            if (const ValueDecl *R = referencedDecl(V->getInit()))
              AddressTaken.insert(R);
    for (const Stmt *C : S->children())
      collectAddressTaken(C);
  }
  void collectDeclaredIn(const Stmt *S) {
    if (!S)
      return;
    if (const auto *DS = dyn_cast<DeclStmt>(S))
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<ValueDecl>(D))
          DeclaredIn.insert(V);
    if (const auto *RF = dyn_cast<CXXForRangeStmt>(S))
      DeclaredIn.insert(RF->getLoopVariable());
    for (const Stmt *C : S->children())
      collectDeclaredIn(C);
  }
  void findSync(const Stmt *S) {
    if (!S || Sync)
      return;
    if (const auto *C = dyn_cast<CallExpr>(S)) {
      const FunctionDecl *FD = C->getDirectCallee();
      StringRef Name = FD && FD->getIdentifier() ? FD->getName() : "";
      if (isThreadCall(Name)) {
        Sync = C;
        return;
      }
    }
    if (!Sync)
      Sync = opaqueCall(S) ? opaqueCall(S) : nullptr;
    if (Sync)
      return;
    for (const Stmt *C : S->children())
      findSync(C);
  }

  std::string at(const Stmt *S) { return where(Ctx, S); }
  std::string text(const Expr *E) { return exprText(Ctx, E); }

  Inv judge(const Expr *E);
  Inv judgeVar(const VarDecl *V, const Expr *Ref);
  std::string loadBlocker(const Expr *Access, const VarDecl *Ptr,
                          std::string &Why);
  void walk(const Stmt *S, bool Unconditional, const Expr *Parent);
  bool worthHoisting(const Expr *E, const Expr *Parent, const Inv &I,
                     bool Unconditional);
  std::string entryCondition(std::string &WhyNot);
};

Inv Analyzer::judgeVar(const VarDecl *V, const Expr *Ref) {
  std::string Name = V->getNameAsString();
  if (DeclaredIn.contains(V))
    return varies();
  if (Written.contains(V))
    return varies();
  if (V->getType().isVolatileQualified())
    return blocked("'" + Name + "' is volatile");
  if (V->getType()->isReferenceType())
    return blocked("'" + Name + "' is a reference");
  Inv I;
  if (isa<ParmVarDecl>(V)) {
    if (AddressTaken.contains(V))
      return blocked("the address of '" + Name + "' is taken");
    I.Leaves.push_back("'" + Name + "' (a parameter not assigned in the loop)");
    return I;
  }
  if (V->isLocalVarDecl() && !V->isStaticLocal()) {
    if (AddressTaken.contains(V))
      return blocked("the address of '" + Name + "' is taken");
    if (V->hasAttr<CUDASharedAttr>())
      return blocked("'" + Name + "' is in shared memory");
    I.Leaves.push_back("'" + Name + "' (a local not assigned in the loop)");
    return I;
  }
  // Globals: only constants.
  if (V->getType().isConstQualified() || V->hasAttr<CUDAConstantAttr>()) {
    I.Leaves.push_back("'" + Name + "' (a constant)");
    return I;
  }
  return blocked("'" + Name + "' is a global variable other threads may write");
}

Inv Analyzer::judge(const Expr *E) {
  E = E->IgnoreParens();
  if (auto B = asBuiltinVar(E)) {
    Inv I;
    I.Leaves.push_back(B->Var.str() + "." + std::string(1, B->Dim));
    return I;
  }
  if (isa<IntegerLiteral, FloatingLiteral, CharacterLiteral, CXXBoolLiteralExpr,
          UnaryExprOrTypeTraitExpr, SubstNonTypeTemplateParmExpr>(E))
    return Inv();
  if (const auto *DR = dyn_cast<DeclRefExpr>(E)) {
    const ValueDecl *D = DR->getDecl();
    if (isa<EnumConstantDecl, NonTypeTemplateParmDecl>(D))
      return Inv();
    if (const auto *V = dyn_cast<VarDecl>(D))
      return judgeVar(V, DR);
    return varies();
  }
  if (const auto *C = dyn_cast<CastExpr>(E)) {
    if (isa<ImplicitCastExpr>(C) || isa<CStyleCastExpr>(C) ||
        isa<CXXStaticCastExpr>(C) || isa<CXXFunctionalCastExpr>(C)) {
      if (C->getCastKind() == CK_LValueToRValue ||
          C->getCastKind() == CK_NoOp || C->getType()->isScalarType())
        return judge(C->getSubExpr());
    }
    return varies();
  }
  if (const auto *B = dyn_cast<BinaryOperator>(E)) {
    if (B->isAssignmentOp() || B->getOpcode() == BO_Comma)
      return blocked("'" + text(E) + "' has a side effect");
    Inv I;
    I.Work = true;
    I.add(judge(B->getLHS()));
    I.add(judge(B->getRHS()));
    if ((B->getOpcode() == BO_Div || B->getOpcode() == BO_Rem) &&
        B->getType()->isIntegerType()) {
      std::optional<int64_t> D = intValue(B->getRHS(), Ctx.AST);
      if (!D || *D == 0)
        I.Division = true;
    }
    return I;
  }
  if (const auto *U = dyn_cast<UnaryOperator>(E)) {
    switch (U->getOpcode()) {
    case UO_Minus:
    case UO_Plus:
    case UO_Not:
    case UO_LNot: {
      Inv I = judge(U->getSubExpr());
      I.Work = true;
      return I;
    }
    case UO_Deref:
      break; // a load, below
    default:
      return blocked("'" + text(E) + "' has a side effect or takes an address");
    }
  }
  if (const auto *CO = dyn_cast<ConditionalOperator>(E)) {
    Inv I;
    I.Work = true;
    I.add(judge(CO->getCond()));
    Inv T = judge(CO->getTrueExpr()), F = judge(CO->getFalseExpr());
    // Only one arm runs: loads and divisions in either may not be safe.
    if ((T.Ok && (T.Load || T.Division)) || (F.Ok && (F.Load || F.Division)))
      return blocked("'" + text(E) + "' loads or divides in a branch of '?:'");
    I.add(T);
    I.add(F);
    return I;
  }
  if (isa<ArraySubscriptExpr>(E) ||
      (isa<UnaryOperator>(E) &&
       cast<UnaryOperator>(E)->getOpcode() == UO_Deref)) {
    const Expr *Ptr = nullptr, *Idx = nullptr;
    if (const auto *AS = dyn_cast<ArraySubscriptExpr>(E)) {
      Ptr = AS->getBase();
      Idx = AS->getIdx();
    } else {
      Ptr = cast<UnaryOperator>(E)->getSubExpr();
    }
    const auto *PV = dyn_cast_or_null<VarDecl>(referencedDecl(Ptr));
    if (!PV || !PV->getType()->isPointerType())
      return varies();
    Inv I;
    I.add(judge(Ptr));
    if (Idx)
      I.add(judge(Idx));
    if (!I.Ok)
      return I;
    std::string Why;
    if (!Loads)
      return blocked("the load '" + text(E) +
                     "' is invariant, but params.loads is false");
    if (std::string B = loadBlocker(E, PV, Why); !B.empty())
      return blocked(B);
    I.Work = true;
    I.Load = true;
    I.LoadWhy.push_back(Why);
    return I;
  }
  if (const auto *C = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *FD = C->getDirectCallee();
    StringRef Name = FD && FD->getIdentifier() ? FD->getName() : "";
    if (!FD || !isMathFunction(Name) || isa<CXXMemberCallExpr>(C))
      return blocked(
          "'" + text(E) + "' calls " +
          (Name.empty() ? std::string("a function") : "'" + Name.str() + "'") +
          ", which is not a known side-effect-free math function");
    Inv I;
    I.Work = true;
    for (const Expr *A : C->arguments())
      I.add(judge(A));
    return I;
  }
  return varies();
}

/// Empty when the load \p Access through \p Ptr sees the same value in every
/// iteration (and \p Why says why); else the reason it may not.
std::string Analyzer::loadBlocker(const Expr *Access, const VarDecl *Ptr,
                                  std::string &Why) {
  std::string Name = Ptr->getNameAsString();
  std::string Load = "the load '" + text(Access) + "'";
  QualType Pointee = Ptr->getType()->getPointeeType();
  if (Pointee.isVolatileQualified())
    return Load + " is volatile";
  bool Restrict = Ptr->getType().isRestrictQualified();
  bool Const = Pointee.isConstQualified();
  bool ReadOnlyInKernel = false;
  if (const auto *P = dyn_cast<ParmVarDecl>(Ptr))
    ReadOnlyInKernel =
        analyzePointerParam(Ctx.AST, L.Kernel.Decl, P).Blocker.empty();
  if (Restrict && ReadOnlyInKernel) {
    Why = "'" + Name + "' is __restrict__ and never written in the kernel";
    return "";
  }
  if (Sync) {
    const FunctionDecl *Callee = cast<CallExpr>(Sync)->getDirectCallee();
    return Load + " may change between iterations: the loop calls '" +
           (Callee ? Callee->getNameAsString() : std::string("a function")) +
           "' at " + at(Sync) +
           ", after which other threads' stores can be visible ('" + Name +
           "' is not both __restrict__ and read-only)";
  }
  for (const MemWrite &W : Writes) {
    const ValueDecl *Base = referencedDecl(W.Base);
    if (Base == Ptr)
      return Load + " may alias the store to '" + text(W.Target) + "' at " +
             at(W.Target);
  }
  for (const MemWrite &W : Writes) {
    const ValueDecl *Base = referencedDecl(W.Base);
    if (Base && !Base->getType()->isPointerType())
      continue; // a local array cannot alias a pointer parameter's memory
    if (!Const && !Restrict)
      return Load + " may alias the store to '" + text(W.Target) + "' at " +
             at(W.Target) + " ('" + Name +
             "' is neither const-qualified nor __restrict__)";
  }
  Why = Writes.empty()
            ? "the loop stores through no pointer"
            : "'" + Name + "' is " + (Restrict ? "__restrict__" : "const") +
                  " and the loop does not store through it";
  return "";
}

bool Analyzer::worthHoisting(const Expr *E, const Expr *Parent, const Inv &I,
                             bool Unconditional) {
  if (!I.Ok || !I.Work || !E->isPRValue())
    return false;
  QualType T = E->getType();
  if (E->isTypeDependent() || T->isDependentType() ||
      !(T->isArithmeticType() || T->isPointerType()))
    return false;
  if (!E->isValueDependent() && E->isEvaluatable(Ctx.AST))
    return false; // constants fold anyway
  // Constant macros (`r * COLS`) are read as written; others are not.
  if (containsMacro(E) && text(E).empty()) {
    Kept.push_back("'" +
                   sourceText(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                              E->getSourceRange()) +
                   "' is written with a macro that is not a constant");
    return false;
  }
  if ((I.Load || I.Division) && !Unconditional) {
    Kept.push_back("'" + text(E) + "' " +
                   (I.Load ? "loads" : "divides by a value that may be zero") +
                   " but does not run in every iteration");
    return false;
  }
  if (I.Load && T->isPointerType())
    return false;
  // nvcc may contract `x * y + z` into an FMA; a hoisted product is rounded
  // on its own and the sum would differ.
  if (const auto *B = dyn_cast<BinaryOperator>(E->IgnoreParens());
      B && B->getOpcode() == BO_Mul && T->isFloatingType() && Parent) {
    const auto *PB = dyn_cast<BinaryOperator>(Parent->IgnoreParenImpCasts());
    if (PB && (PB->isAdditiveOp() || PB->getOpcode() == BO_AddAssign ||
               PB->getOpcode() == BO_SubAssign)) {
      Kept.push_back("'" + text(E) +
                     "' is a floating-point product added to something: "
                     "hoisting it would stop an FMA contraction and change "
                     "rounding");
      return false;
    }
  }
  return true;
}

/// Whether \p E is written inside a function-like macro's invocation or
/// body (its text there is never rewritten); an object-like macro at either
/// end (`N * i`) is spelled in the file.
bool inMacroText(const Expr *E, const ASTContext &AST) {
  const SourceManager &SM = AST.getSourceManager();
  SourceLocation B = E->getBeginLoc(), End = E->getEndLoc();
  if (!B.isMacroID() && !End.isMacroID())
    return false;
  if ((B.isMacroID() && SM.isMacroArgExpansion(B)) ||
      (End.isMacroID() && SM.isMacroArgExpansion(End)))
    return true;
  return Lexer::makeFileCharRange(
             CharSourceRange::getTokenRange(E->getSourceRange()), SM,
             AST.getLangOpts())
      .isInvalid();
}

void Analyzer::walk(const Stmt *S, bool Unconditional, const Expr *Parent) {
  if (!S)
    return;
  if (const auto *E = dyn_cast<Expr>(S)) {
    if (isa<UnaryExprOrTypeTraitExpr, LambdaExpr>(E) || asBuiltinVar(E) ||
        isa<PseudoObjectExpr>(E))
      return;
    // Lvalues (a store's target, an operand of `&`) are not values to
    // hoist; their parts are. Parentheses and conversions stay in place
    // around the hoisted value (a load is its lvalue-to-rvalue conversion).
    const auto *IC = dyn_cast<ImplicitCastExpr>(E);
    bool Wrapper =
        isa<ParenExpr>(E) || (IC && IC->getCastKind() != CK_LValueToRValue);
    // Text in a macro's expansion (its body or an argument) is never
    // rewritten: no candidate there.
    if (E->isPRValue() && !Wrapper && inMacroText(E, Ctx.AST)) {
      Inv I = judge(E);
      if (worthHoisting(E, Parent, I, Unconditional)) {
        std::string T = text(E);
        Kept.push_back(
            (T.empty() ? std::string("an invariant") : "'" + T + "'") +
            " is written in a macro's expansion, which an edit "
            "never rewrites");
        return;
      }
    } else if (E->isPRValue() && !Wrapper) {
      Inv I = judge(E);
      if (worthHoisting(E, Parent, I, Unconditional)) {
        Candidates.push_back({E, Unconditional});
        return;
      }
      if (!I.Ok && !I.Blocker.empty() &&
          (E->getType()->isArithmeticType() || E->getType()->isPointerType()))
        Kept.push_back(I.Blocker);
    }
    // Short-circuit and conditional operands run only sometimes.
    if (const auto *B = dyn_cast<BinaryOperator>(E);
        B && (B->getOpcode() == BO_LAnd || B->getOpcode() == BO_LOr)) {
      walk(B->getLHS(), Unconditional, E);
      walk(B->getRHS(), false, E);
      return;
    }
    if (const auto *CO = dyn_cast<ConditionalOperator>(E)) {
      walk(CO->getCond(), Unconditional, E);
      walk(CO->getTrueExpr(), false, E);
      walk(CO->getFalseExpr(), false, E);
      return;
    }
    // Skip parentheses and implicit casts when naming the parent.
    const Expr *P = isa<ParenExpr, ImplicitCastExpr>(E) ? Parent : E;
    for (const Stmt *C : S->children())
      walk(C, Unconditional, P);
    return;
  }
  if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
    bool Jumped = false;
    for (const Stmt *C : CS->body()) {
      walk(C, Unconditional && !Jumped, nullptr);
      if (firstJump(C) || isa<ReturnStmt>(C))
        Jumped = true;
    }
    return;
  }
  if (const auto *DS = dyn_cast<DeclStmt>(S)) {
    for (const Decl *D : DS->decls())
      if (const auto *V = dyn_cast<VarDecl>(D); V && V->getInit())
        walk(V->getInit(), Unconditional, nullptr);
    return;
  }
  // Conditions that run whenever the statement does; everything else
  // (branches, inner loop bodies) runs only sometimes.
  if (const auto *If = dyn_cast<IfStmt>(S)) {
    walk(If->getInit(), Unconditional, nullptr);
    walk(If->getCond(), Unconditional, nullptr);
    walk(If->getThen(), false, nullptr);
    walk(If->getElse(), false, nullptr);
    return;
  }
  if (const auto *F = dyn_cast<ForStmt>(S)) {
    walk(F->getInit(), Unconditional, nullptr);
    walk(F->getCond(), Unconditional, nullptr);
    walk(F->getInc(), false, nullptr);
    walk(F->getBody(), false, nullptr);
    return;
  }
  if (const auto *W = dyn_cast<WhileStmt>(S)) {
    walk(W->getCond(), Unconditional, nullptr);
    walk(W->getBody(), false, nullptr);
    return;
  }
  for (const Stmt *C : S->children())
    walk(C, false, nullptr);
}

std::string Analyzer::entryCondition(std::string &WhyNot) {
  if (isa<DoStmt>(L.S) || (L.Info->TripCount && *L.Info->TripCount > 0))
    return "";
  const auto *F = dyn_cast<ForStmt>(L.S);
  const auto *W = dyn_cast<WhileStmt>(L.S);
  const Expr *Cond = F ? F->getCond() : W ? W->getCond() : nullptr;
  if (!Cond || Cond->HasSideEffects(Ctx.AST) ||
      (containsMacro(Cond) && exprText(Ctx, Cond).empty())) {
    WhyNot = "the loop may run zero times and its condition cannot be "
             "evaluated before it";
    return "";
  }
  const VarDecl *IV = nullptr;
  const Expr *Init = nullptr;
  if (F && F->getInit()) {
    const auto *DS = dyn_cast<DeclStmt>(F->getInit());
    if (DS && DS->isSingleDecl())
      if (const auto *V = dyn_cast<VarDecl>(DS->getSingleDecl()))
        if (V->getInit() && !V->getType()->isReferenceType()) {
          IV = V;
          Init = V->getInit();
        }
    if (!IV) {
      WhyNot = "the loop may run zero times and its initialization is not a "
               "single variable declaration";
      return "";
    }
  }
  // The condition before the first iteration: the induction variable
  // replaced by its initial value; everything else must be invariant.
  std::string CondText = exprText(Ctx, Cond);
  auto CS = looseExprSpan(Ctx, Cond);
  if (CondText.empty() || !CS) {
    WhyNot = "the loop condition has no place in the file";
    return "";
  }
  std::vector<TextEdit> Edits;
  std::string Bad;
  std::function<void(const Stmt *)> Visit = [&](const Stmt *S) {
    if (!S || !Bad.empty())
      return;
    if (const auto *DR = dyn_cast<DeclRefExpr>(S)) {
      if (IV && DR->getDecl() == IV) {
        auto RS = looseExprSpan(Ctx, DR);
        if (!RS) {
          Bad = "macro";
          return;
        }
        Edits.push_back({RS->Begin.Offset, RS->End.Offset - RS->Begin.Offset,
                         parenthesize(exprText(Ctx, Init))});
        return;
      }
    }
    if (const auto *E = dyn_cast<Expr>(S)) {
      if (isa<ArraySubscriptExpr, CallExpr>(E) ||
          (isa<UnaryOperator>(E) &&
           cast<UnaryOperator>(E)->getOpcode() == UO_Deref)) {
        Bad = "'" + exprText(Ctx, E) + "' reads memory or calls a function";
        return;
      }
      if (const auto *DR = dyn_cast<DeclRefExpr>(E))
        if (const auto *V = dyn_cast<VarDecl>(DR->getDecl()))
          if (!judgeVar(V, DR).Ok) {
            Bad = "'" + V->getNameAsString() + "' changes in the loop";
            return;
          }
    }
    for (const Stmt *C : S->children())
      Visit(C);
  };
  Visit(Cond);
  if (Init) {
    Inv II = judge(Init);
    if (!II.Ok || II.Load)
      Bad = "its initial value '" + exprText(Ctx, Init) + "' is not invariant";
  }
  if (!Bad.empty()) {
    WhyNot = "the loop may run zero times and its entry condition cannot be "
             "evaluated before it (" +
             Bad + ")";
    return "";
  }
  return parenthesize(
      spliceText(Ctx.Code, CS->Begin.Offset, CS->End.Offset, std::move(Edits)));
}

HoistPlan Analyzer::run() {
  HoistPlan P;
  P.Loop = L;
  // The condition also runs when the body never does: a guarded load there
  // would see its fallback value, so loads are not taken from it.
  if (const auto *F = dyn_cast<ForStmt>(L.S)) {
    walk(F->getCond(), false, nullptr);
    walk(F->getInc(), false, nullptr);
    walk(F->getBody(), true, nullptr);
  } else if (const auto *W = dyn_cast<WhileStmt>(L.S)) {
    walk(W->getCond(), false, nullptr);
    walk(W->getBody(), true, nullptr);
  } else if (const auto *D = dyn_cast<DoStmt>(L.S)) {
    walk(D->getBody(), true, nullptr);
    walk(D->getCond(), false, nullptr);
  } else if (const auto *R = dyn_cast<CXXForRangeStmt>(L.S)) {
    walk(R->getBody(), true, nullptr);
  }

  // Group equal expressions (same structure, same declarations).
  std::vector<std::pair<llvm::FoldingSetNodeID, size_t>> ByProfile;
  std::string EntryWhyNot;
  bool EntryDone = false;
  for (auto &[E, Uncond] : Candidates) {
    Inv I = judge(E);
    if (I.Load && !EntryDone) {
      P.EntryCond = entryCondition(EntryWhyNot);
      EntryDone = true;
    }
    if (I.Load && !EntryWhyNot.empty()) {
      Kept.push_back("the load in '" + exprText(Ctx, E) +
                     "' stays: " + EntryWhyNot);
      continue;
    }
    llvm::FoldingSetNodeID ID;
    E->Profile(ID, Ctx.AST, /*Canonical=*/true);
    auto Same =
        find_if(ByProfile, [&](const auto &B) { return B.first == ID; });
    if (Same != ByProfile.end()) {
      P.Items[Same->second].Uses.push_back(E);
      continue;
    }
    Item Item;
    Item.Uses.push_back(E);
    Item.Text = exprText(Ctx, E);
    Item.Type = typeText(E->getType(), Ctx.AST);
    Item.Load = I.Load;
    std::string Why = I.Leaves.empty() ? std::string("constants only")
                                       : "uses only " + join(I.Leaves, ", ");
    for (const std::string &LW : I.LoadWhy)
      Why += "; loads: " + LW;
    Item.Why = Why;
    if (Item.Text.empty())
      continue;
    ByProfile.push_back({ID, P.Items.size()});
    P.Items.push_back(std::move(Item));
  }
  if (!P.Items.empty() &&
      none_of(P.Items, [](const Item &I) { return I.Load; }))
    P.EntryCond.clear();
  P.Kept = Kept;
  return P;
}

class HoistTransform : public Transform {
public:
  /// Launch-independent: it neither reads nor rewrites the launches.
  bool readsLaunches() const override { return false; }
  StringRef kind() const override { return "hoist"; }
  StringRef description() const override {
    return "move loop-invariant arithmetic and loads out of a loop into "
           "typed locals declared just before it";
  }
  TargetKind targetKind() const override { return TargetKind::Loop; }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec::boolean("loads",
                           "also hoist invariant loads whose memory the loop "
                           "provably does not write (default true)",
                           true)};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E = defaultEdit(kind(), Target);
    auto Plan = planOrReason(A, analyze(Ctx, E));
    if (!Plan)
      return A;
    std::vector<std::string> Parts;
    for (const Item &I : Plan->Items)
      Parts.push_back("'" + I.Text + "'" +
                      (I.Uses.size() > 1
                           ? " (" + std::to_string(I.Uses.size()) + " uses)"
                           : std::string()) +
                      ": " + I.Why);
    A.Reason = "hoists " + join(Parts, "; ");
    A.Suggestions.push_back(E);
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    auto Plan = analyze(Ctx, E);
    if (!Plan)
      return Plan.takeError();
    return rewrite(Ctx, E, *Plan);
  }

  std::string summary(const Edit &E) const override {
    std::string S = "hoist invariants out of " + E.Target;
    if (E.getBool("loads") == false)
      S += " (no loads)";
    return S;
  }

private:
  Expected<HoistPlan> analyze(const EditContext &Ctx, const Edit &E) const;
  Expected<tooling::Replacements> rewrite(const EditContext &Ctx, const Edit &E,
                                          const HoistPlan &P) const;
};

Expected<HoistPlan> HoistTransform::analyze(const EditContext &Ctx,
                                            const Edit &E) const {
  auto L = resolveLoop(Ctx, E, E.Target);
  if (!L)
    return L.takeError();
  std::string Name = "loop " + E.Target;
  if (L->S->getBeginLoc().isMacroID() || L->Info->Range.End.Offset == 0)
    return reject(E, "macro", Name + " is written inside a macro expansion",
                  L->Info->Range.Begin);
  bool Loads = E.getBool("loads").value_or(true);
  Analyzer A(Ctx, *L, Loads);
  HoistPlan P = A.run();
  if (P.Items.empty()) {
    std::string Why = Name + ": nothing in it is loop-invariant and worth "
                             "hoisting";
    if (!P.Kept.empty()) {
      std::vector<std::string> Uniq;
      for (const std::string &K : P.Kept)
        if (!is_contained(Uniq, K))
          Uniq.push_back(K);
      Why += " (" + join(Uniq, "; ") + ")";
    } else {
      Why += " (every expression uses a variable assigned in the loop)";
    }
    return reject(E, "not-applicable", Why, L->Info->Range.Begin);
  }
  return P;
}

/// Where the declarations go: the start of the loop's line, before any
/// `#pragma` lines that belong to the loop.
unsigned insertionPoint(StringRef Code, unsigned LoopBegin, bool &OwnLine) {
  size_t LineStart = Code.rfind('\n', LoopBegin ? LoopBegin - 1 : 0);
  LineStart =
      LineStart == StringRef::npos || LoopBegin == 0 ? 0 : LineStart + 1;
  OwnLine = Code.slice(LineStart, LoopBegin).trim().empty();
  if (!OwnLine)
    return LoopBegin;
  unsigned At = LineStart;
  while (At > 0) {
    size_t Prev = Code.rfind('\n', At - 1 ? At - 2 : 0);
    size_t PrevStart = Prev == StringRef::npos || At < 2 ? 0 : Prev + 1;
    if (!Code.slice(PrevStart, At).trim().starts_with("#pragma"))
      break;
    At = PrevStart;
  }
  return At;
}

Expected<tooling::Replacements>
HoistTransform::rewrite(const EditContext &Ctx, const Edit &E,
                        const HoistPlan &P) const {
  const KernelInfo &K = *P.Loop.Kernel.Info;
  StringRef FnText = Ctx.Code.slice(K.Range.Begin.Offset, K.Range.End.Offset);
  std::string Code = FnText.str();
  unsigned LoopBegin = P.Loop.Info->Range.Begin.Offset;
  unsigned LoopEnd = P.Loop.Info->Range.End.Offset;
  // A body without braces ends at its `;`, after the loop's token range.
  const Stmt *LoopBody = nullptr;
  if (const auto *F = dyn_cast<ForStmt>(P.Loop.S))
    LoopBody = F->getBody();
  else if (const auto *W = dyn_cast<WhileStmt>(P.Loop.S))
    LoopBody = W->getBody();
  else if (const auto *RF = dyn_cast<CXXForRangeStmt>(P.Loop.S))
    LoopBody = RF->getBody();
  if (LoopBody)
    if (auto BS = stmtSpan(Ctx, LoopBody))
      LoopEnd = std::max(LoopEnd, BS->End.Offset);
  bool OwnLine = true;
  unsigned At = insertionPoint(Ctx.Code, LoopBegin, OwnLine);
  std::string Indent = indentationAt(Ctx.Code, LoopBegin);

  // The loop must sit in a block for new declarations to go before it.
  const Stmt *Parent = nullptr;
  {
    const Stmt *Child = P.Loop.S;
    DynTypedNodeList Ps = Ctx.AST.getParents(*Child);
    while (!Ps.empty() && Ps[0].get<AttributedStmt>()) {
      Child = Ps[0].get<AttributedStmt>();
      Ps = Ctx.AST.getParents(*Child);
    }
    Parent = Ps.empty() ? nullptr : Ps[0].get<Stmt>();
  }
  bool Wrap = !Parent || !isa<CompoundStmt>(Parent);

  std::string Decls;
  tooling::Replacements R;
  std::string Used = Code;
  for (size_t N = 0; N < P.Items.size(); ++N) {
    const Item &I = P.Items[N];
    std::string Name = freshName(Used, "optiml_h" + std::to_string(N));
    Used += " " + Name;
    std::string Init = I.Text;
    if (I.Load && !P.EntryCond.empty())
      Init = P.EntryCond + " ? " + I.Text + " : static_cast<" + I.Type + ">(0)";
    // `const T x` for values, `T *const x` for pointers.
    std::string Decl = StringRef(I.Type).ends_with("*")
                           ? I.Type + "const " + Name
                           : "const " + I.Type + " " + Name;
    Decls += Indent + Decl + " = " + Init + ";\n";
    for (const Expr *U : I.Uses) {
      auto S = looseExprSpan(Ctx, U);
      if (!S)
        return reject(E, "internal",
                      "loop " + E.Target + ": '" + I.Text +
                          "' has no place in the file");
      if (Error Err = addReplacement(
              R,
              tooling::Replacement(Ctx.FileName, S->Begin.Offset,
                                   S->End.Offset - S->Begin.Offset, Name),
              E))
        return std::move(Err);
    }
  }
  // At the start of the loop's line: whole indented lines. Mid-line (after
  // `if (c)` or `else`): a new line, and the loop moves to one of its own.
  std::string Before = Wrap ? Indent + "{\n" + Decls : Decls;
  if (!OwnLine)
    Before = "\n" + Before + Indent;
  if (Error Err = addReplacement(R, insertAt(Ctx, At, Before), E))
    return std::move(Err);
  if (Wrap)
    if (Error Err =
            addReplacement(R, insertAt(Ctx, LoopEnd, "\n" + Indent + "}"), E))
      return std::move(Err);
  return R;
}

} // namespace

std::unique_ptr<Transform> createHoistTransform() {
  return std::make_unique<HoistTransform>();
}

} // namespace optiml
