//===- AllPairsTiling.cpp - Stage an all-pairs loop's sequence in tiles ---===//
//
// Pattern: a loop that every thread of a block runs over the same sequence
// of global elements (n-body interactions, a matrix-vector product's shared
// vector): `for (int j = A; j < B; ++j)` or a counting `while (j < B)`,
// with A and B the same in every thread, reading `p[j]` for its value from
// arrays the kernel does not write, calling only functions that change
// nothing.
//
// Rewrite: the block walks the sequence in tiles; for each tile its threads
// copy `p[base .. base + tile)` into shared memory cooperatively,
// synchronize, run the original loop body over the tile (reading the shared
// copy), and synchronize again before the next tile; the last tile is
// partial. Threads outside the kernel's bounds guard still take part in the
// copies and barriers but skip the computation; their loads before the loop
// are skipped too.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/CountingLoop.h"
#include "../../Patterns/SideEffects.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "SharedStaging.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include <functional>

using namespace llvm;
using clang::dyn_cast;
using clang::dyn_cast_or_null;
using clang::isa;

namespace optiml {
namespace {

/// Statement \p S's text as written, with the `;` that ends it, a macro at
/// either end included (a type spelled `REAL` in `REAL ax = 0.f;`): these
/// statements are copied verbatim, so the macro may stay as it is. Nothing
/// when the statement is not written in the main file as a whole.
std::optional<SourceSpan> writtenStmtSpan(const EditContext &Ctx,
                                          const clang::Stmt *S) {
  if (auto Sp = looseStmtSpan(Ctx, S))
    return Sp;
  const clang::SourceManager &SM = Ctx.AST.getSourceManager();
  clang::SourceLocation B = SM.getExpansionRange(S->getBeginLoc()).getBegin();
  clang::SourceLocation End = SM.getExpansionRange(S->getEndLoc()).getEnd();
  if (!SM.isWrittenInMainFile(B) || !SM.isWrittenInMainFile(End))
    return std::nullopt;
  auto Sp = fileSpan(SM, Ctx.AST.getLangOpts(), clang::SourceRange(B, End));
  if (!Sp || Sp->End.Offset <= Sp->Begin.Offset)
    return std::nullopt;
  StringRef Code = Ctx.Code;
  unsigned P = Sp->End.Offset;
  if (Code[P - 1] == ';' || Code[P - 1] == '}')
    return Sp;
  while (P < Code.size() && (Code[P] == ' ' || Code[P] == '\t'))
    ++P;
  if (P < Code.size() && Code[P] == ';')
    Sp->End.Offset = P + 1;
  return Sp;
}

struct Staged {
  const clang::ValueDecl *Base = nullptr;
  std::string ElemType, Tile;
  std::vector<const clang::ArraySubscriptExpr *> Reads;
};

struct Plan {
  ResolvedLoop Loop;
  const clang::Stmt *For = nullptr;      ///< the loop: a for or a while
  const clang::Stmt *LoopBody = nullptr; ///< its body
  const clang::Expr *Cond = nullptr;     ///< its condition
  const clang::VarDecl *Var = nullptr;   ///< its counter
  const clang::Expr *Start = nullptr, *End = nullptr;
  std::optional<ThreadItem> Item; ///< the bounds guard, if any
  std::vector<const clang::Stmt *> Pre, Post;
  std::vector<Staged> Arrays;
  int64_t Tile = 256;
  std::string Description;
};

bool readsMemory(const clang::Stmt *S) {
  if (!S)
    return false;
  if (isa<clang::ArraySubscriptExpr>(S))
    return true;
  if (const auto *U = dyn_cast<clang::UnaryOperator>(S))
    if (U->getOpcode() == clang::UO_Deref)
      return true;
  if (isa<clang::CallExpr>(S))
    return true;
  return llvm::any_of(S->children(), readsMemory);
}

std::string flipped(const EditContext &Ctx, const clang::Expr *Cond) {
  if (const auto *B =
          dyn_cast<clang::BinaryOperator>(Cond->IgnoreParenImpCasts())) {
    const char *Op = nullptr;
    switch (B->getOpcode()) {
    case clang::BO_GE:
      Op = "<";
      break;
    case clang::BO_GT:
      Op = "<=";
      break;
    case clang::BO_LE:
      Op = ">";
      break;
    case clang::BO_LT:
      Op = ">=";
      break;
    default:
      break;
    }
    if (Op)
      return looseExprText(Ctx, B->getLHS()) + " " + Op + " " +
             looseExprText(Ctx, B->getRHS());
  }
  return "!(" + looseExprText(Ctx, Cond) + ")";
}

/// Removes up to \p N leading spaces from every line but the first.
std::string dedent(StringRef Text, unsigned N) {
  std::string Out;
  for (size_t I = 0; I < Text.size(); ++I) {
    Out += Text[I];
    if (Text[I] == '\n')
      for (unsigned K = 0; K < N && I + 1 < Text.size() && Text[I + 1] == ' ';
           ++K)
        ++I;
  }
  return Out;
}

/// The guard holding \p Loop among its statements, read by its shape: a
/// top-level `if (C) return;` (guarding the rest) or the last statement
/// `if (C) { ... }`. What C tests does not matter (`blockIdx.x * BLOCK +
/// threadIdx.x`, a helper): it is evaluated once where it stood.
std::optional<ThreadItem> guardAround(const clang::CompoundStmt *KBody,
                                      const clang::Stmt *Loop) {
  auto End = KBody->body_end();
  for (auto It = KBody->body_begin(); It != End; ++It) {
    const auto *If = dyn_cast<clang::IfStmt>(*It);
    if (!If || If->getInit() || If->getConditionVariable() || If->getElse())
      continue;
    std::vector<const clang::Stmt *> Branch;
    if (const auto *CS = dyn_cast<clang::CompoundStmt>(If->getThen()))
      Branch.assign(CS->body_begin(), CS->body_end());
    else
      Branch.push_back(If->getThen());
    ThreadItem T;
    T.Guard = If;
    T.Before.assign(KBody->body_begin(), It);
    const auto *Ret = Branch.size() == 1
                          ? dyn_cast<clang::ReturnStmt>(Branch.front())
                          : nullptr;
    if (Ret && !Ret->getRetValue()) {
      T.EarlyReturn = true;
      T.Body.assign(std::next(It), End);
    } else if (std::next(It) == End) {
      T.Body = std::move(Branch);
    } else {
      continue;
    }
    if (llvm::is_contained(T.Body, Loop))
      return T;
  }
  return std::nullopt;
}

/// Whether \p S, one of the statements \p Before the guard, is a
/// block-uniform `if (C) return;`: the whole block leaves.
bool uniformExit(const clang::Stmt *S, ArrayRef<const clang::Stmt *> Before,
                 const clang::FunctionDecl *Kernel) {
  const auto *If = dyn_cast<clang::IfStmt>(S);
  if (!If || !llvm::is_contained(Before, S) || If->getElse() || If->getInit() ||
      If->getConditionVariable() || !isBlockUniform(If->getCond(), Kernel))
    return false;
  const clang::Stmt *Then = If->getThen();
  if (const auto *CS = dyn_cast<clang::CompoundStmt>(Then))
    Then = CS->size() == 1 ? CS->body_front() : nullptr;
  const auto *Ret = dyn_cast_or_null<clang::ReturnStmt>(Then);
  return Ret && !Ret->getRetValue();
}

/// Every node of \p S, \p S included, in pre-order.
void forEachNode(const clang::Stmt *S,
                 llvm::function_ref<void(const clang::Stmt *)> F) {
  if (!S)
    return;
  F(S);
  for (const clang::Stmt *Ch : S->children())
    forEachNode(Ch, F);
}

/// memoryWrites() of \p S and whole struct elements assigned through
/// operator= (`p[k] = v` for a float4), which it does not see.
std::vector<MemWrite> elementWrites(const clang::Stmt *S) {
  std::vector<MemWrite> Out = memoryWrites(S);
  forEachNode(S, [&](const clang::Stmt *N) {
    const auto *Op = dyn_cast<clang::CXXOperatorCallExpr>(N);
    if (!Op || !Op->isAssignmentOp() || Op->getNumArgs() == 0)
      return;
    const clang::Expr *L = Op->getArg(0)->IgnoreParenImpCasts();
    while (const auto *M = dyn_cast<clang::MemberExpr>(L)) {
      if (M->isArrow())
        break;
      L = M->getBase()->IgnoreParenImpCasts();
    }
    if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(L))
      Out.push_back({A, A->getBase()->IgnoreParenImpCasts(), A->getIdx()});
    else if (const auto *U = dyn_cast<clang::UnaryOperator>(L);
             U && U->getOpcode() == clang::UO_Deref)
      Out.push_back({U, U->getSubExpr()->IgnoreParenImpCasts(), nullptr});
  });
  return Out;
}

/// The functions call \p C may run: its callee, or in a kernel template
/// the callees of the same call in every instantiation of \p Kernel (none
/// for a built-in operator there). Nothing when one is not known.
std::optional<std::vector<const clang::FunctionDecl *>>
calleesOf(const clang::CallExpr *C, const clang::FunctionDecl *Kernel) {
  if (const clang::FunctionDecl *FD = C->getDirectCallee())
    return std::vector<const clang::FunctionDecl *>{FD};
  std::vector<const clang::FunctionDecl *> Instances =
      templateInstantiations(Kernel);
  if (Instances.empty())
    return std::nullopt;
  // An operator is found by its operator's place, a call by its extent.
  const auto *Op = dyn_cast<clang::CXXOperatorCallExpr>(C);
  auto OpLoc = [](const clang::Stmt *S) {
    if (const auto *O = dyn_cast<clang::CXXOperatorCallExpr>(S))
      return O->getOperatorLoc();
    if (const auto *B = dyn_cast<clang::BinaryOperator>(S))
      return B->getOperatorLoc();
    if (const auto *U = dyn_cast<clang::UnaryOperator>(S))
      return U->getOperatorLoc();
    return clang::SourceLocation();
  };
  std::vector<const clang::FunctionDecl *> Out;
  for (const clang::FunctionDecl *Inst : Instances) {
    const clang::FunctionDecl *Callee = nullptr;
    bool Builtin = false;
    forEachNode(Inst->getBody(), [&](const clang::Stmt *S) {
      const auto *IC = dyn_cast<clang::CallExpr>(S);
      if (Op ? OpLoc(S) != Op->getOperatorLoc()
             : !IC || isa<clang::CXXOperatorCallExpr>(IC) ||
                   IC->getBeginLoc() != C->getBeginLoc() ||
                   IC->getEndLoc() != C->getEndLoc())
        return;
      if (IC && IC->getDirectCallee())
        Callee = IC->getDirectCallee();
      else if (!IC)
        Builtin = true;
    });
    if (Callee)
      Out.push_back(Callee);
    else if (!Builtin)
      return std::nullopt;
  }
  return Out;
}

/// The staged read of \p Reads that \p E designates as an object (through
/// parentheses, casts other than a load, `.member`); null otherwise.
const clang::Expr *
designatedRead(const clang::Expr *E,
               ArrayRef<const clang::ArraySubscriptExpr *> Reads) {
  while (E) {
    E = E->IgnoreParens();
    if (llvm::is_contained(Reads, E))
      return E;
    if (const auto *C = dyn_cast<clang::CastExpr>(E)) {
      if (C->getCastKind() == clang::CK_LValueToRValue)
        return nullptr;
      E = C->getSubExpr();
    } else if (const auto *M = dyn_cast<clang::MemberExpr>(E)) {
      E = M->isArrow() ? nullptr : M->getBase();
    } else if (const auto *D =
                   dyn_cast<clang::CXXDependentScopeMemberExpr>(E)) {
      E = D->isArrow() || D->isImplicitAccess() ? nullptr : D->getBase();
    } else if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(E)) {
      const clang::Expr *B = A->getBase()->IgnoreParenImpCasts();
      E = B->getType()->isArrayType() ? B : nullptr;
    } else {
      return nullptr;
    }
  }
  return nullptr;
}

/// Whether a parameter of type \p T takes only its argument's value.
bool readsArgumentValue(clang::QualType T) {
  if (!T->isReferenceType())
    return !T->isPointerType();
  clang::QualType Pointee = T->getPointeeType();
  return Pointee.isConstQualified() && !Pointee->isPointerType() &&
         !Pointee->isArrayType();
}

/// Whether the call \p C may keep or follow the address of its argument
/// \p Arg (pointer, non-const reference, `...`, unknown callee).
bool callKeepsAddress(const clang::CallExpr *C, unsigned Arg,
                      const clang::FunctionDecl *Kernel) {
  auto Callees = calleesOf(C, Kernel);
  if (!Callees)
    return true;
  for (const clang::FunctionDecl *FD : *Callees) {
    unsigned Param = Arg;
    // A member operator's object is its first argument.
    if (isa<clang::CXXOperatorCallExpr>(C) && isa<clang::CXXMethodDecl>(FD) &&
        !cast<clang::CXXMethodDecl>(FD)->isStatic()) {
      if (Arg == 0)
        return true;
      Param = Arg - 1;
    }
    if (Param >= FD->getNumParams() ||
        !readsArgumentValue(FD->getParamDecl(Param)->getType()))
      return true;
  }
  return false;
}

/// The first use in \p Body of one of \p Reads other than for its value
/// (`&p[j]`, `__ldg(&p[j])`, a method on it): on the staged copy it would
/// reach shared memory or run past the tile.
const clang::Stmt *
addressEscape(const clang::Stmt *Body,
              ArrayRef<const clang::ArraySubscriptExpr *> Reads,
              const clang::FunctionDecl *Kernel) {
  const clang::Stmt *Found = nullptr;
  auto Designates = [&](const clang::Expr *E) {
    return E && designatedRead(E, Reads);
  };
  forEachNode(Body, [&](const clang::Stmt *S) {
    if (Found)
      return;
    if (const auto *U = dyn_cast<clang::UnaryOperator>(S)) {
      if (U->getOpcode() == clang::UO_AddrOf && Designates(U->getSubExpr()))
        Found = S;
    } else if (const auto *DS = dyn_cast<clang::DeclStmt>(S)) {
      for (const clang::Decl *D : DS->decls())
        if (const auto *V = dyn_cast<clang::VarDecl>(D);
            V &&
            (V->getType()->isReferenceType() ||
             V->getType()->isPointerType()) &&
            Designates(V->getInit()))
          Found = S;
    } else if (const auto *C = dyn_cast<clang::CallExpr>(S)) {
      // A method called on the element sees its address as `this`.
      const clang::Expr *Callee = C->getCallee()->IgnoreParenImpCasts();
      if (const auto *MC = dyn_cast<clang::CXXMemberCallExpr>(C);
          MC && Designates(MC->getImplicitObjectArgument()))
        Found = S;
      if (const auto *D = dyn_cast<clang::CXXDependentScopeMemberExpr>(Callee);
          D && !D->isImplicitAccess() && Designates(D->getBase()))
        Found = S;
      if (const auto *D = dyn_cast<clang::UnresolvedMemberExpr>(Callee);
          D && !D->isImplicitAccess() && Designates(D->getBase()))
        Found = S;
      for (unsigned I = 0; I < C->getNumArgs() && !Found; ++I)
        if (Designates(C->getArg(I)) && callKeepsAddress(C, I, Kernel))
          Found = S;
    } else if (const auto *CE = dyn_cast<clang::CXXConstructExpr>(S)) {
      const clang::CXXConstructorDecl *Ctor = CE->getConstructor();
      if (Ctor->isCopyOrMoveConstructor() && Ctor->isTrivial())
        return;
      for (unsigned I = 0; I < CE->getNumArgs() && !Found; ++I)
        if (Designates(CE->getArg(I)) &&
            (I >= Ctor->getNumParams() ||
             !readsArgumentValue(Ctor->getParamDecl(I)->getType())))
          Found = S;
    }
  });
  return Found;
}

/// The first call in \p Body to a function that is neither a CUDA math
/// function nor free of side effects (isPureFunction: not printf, atomics,
/// a helper writing memory), or not known; its name in \p Name.
const clang::Stmt *effectfulCall(const EditContext &Ctx,
                                 const clang::Stmt *Body,
                                 const clang::FunctionDecl *Kernel,
                                 std::string &Name) {
  const clang::Stmt *Found = nullptr;
  forEachNode(Body, [&](const clang::Stmt *S) {
    if (Found)
      return;
    if (const auto *CE = dyn_cast<clang::CXXConstructExpr>(S)) {
      if (!CE->getConstructor()->isTrivial() &&
          mayHaveSideEffects(CE, Ctx.AST)) {
        Found = S;
        Name = CE->getConstructor()->getParent()->getNameAsString();
      }
      return;
    }
    const auto *C = dyn_cast<clang::CallExpr>(S);
    if (!C)
      return;
    auto Callees = calleesOf(C, Kernel);
    if (!Callees) {
      Found = S;
      Name = looseExprText(Ctx, C->getCallee());
      return;
    }
    for (const clang::FunctionDecl *FD : *Callees) {
      const auto *MD = dyn_cast<clang::CXXMethodDecl>(FD);
      // sincosf and the like write through their pointers.
      bool Math = FD->getIdentifier() && isMathFunction(FD->getName()) &&
                  llvm::none_of(FD->parameters(), [](const auto *Param) {
                    return Param->getType()->isPointerType() ||
                           Param->getType()->isReferenceType();
                  });
      if (Found || (MD && MD->isTrivial()) || Math ||
          isPureFunction(FD, Ctx.AST))
        continue;
      Found = S;
      Name = FD->getNameAsString();
    }
  });
  return Found;
}

/// The first `return`, `goto`, `break` (or `continue` unless \p ContinueOk:
/// a for loop's still runs the increment) that leaves the loop body.
const clang::Stmt *leavesLoop(const clang::Stmt *Body, bool ContinueOk) {
  const clang::Stmt *Found = nullptr;
  std::function<void(const clang::Stmt *, bool, bool)> Walk =
      [&](const clang::Stmt *S, bool BreakInside, bool ContinueInside) {
        if (!S || Found)
          return;
        if (isa<clang::ReturnStmt, clang::GotoStmt, clang::IndirectGotoStmt>(
                S) ||
            (isa<clang::BreakStmt>(S) && !BreakInside) ||
            (isa<clang::ContinueStmt>(S) && !ContinueInside && !ContinueOk)) {
          Found = S;
          return;
        }
        bool Loop = isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt,
                        clang::CXXForRangeStmt>(S);
        for (const clang::Stmt *Ch : S->children())
          Walk(Ch, BreakInside || Loop || isa<clang::SwitchStmt>(S),
               ContinueInside || Loop);
      };
  Walk(Body, false, false);
  return Found;
}

/// Whether \p Idx reads no memory and no variable the loop \p Body
/// declares, writes or counts (\p Var): the own body's `x[i]`.
bool invariantIndex(const clang::Expr *Idx, const clang::Stmt *Body,
                    const clang::VarDecl *Var) {
  if (readsMemory(Idx))
    return false;
  llvm::DenseSet<const clang::ValueDecl *> Inner = writtenVars(Body);
  Inner.insert(Var);
  forEachNode(Body, [&](const clang::Stmt *S) {
    if (const auto *DS = dyn_cast<clang::DeclStmt>(S))
      for (const clang::Decl *D : DS->decls())
        if (const auto *V = dyn_cast<clang::ValueDecl>(D))
          Inner.insert(V);
  });
  bool Invariant = true;
  forEachNode(Idx, [&](const clang::Stmt *S) {
    if (const auto *R = dyn_cast<clang::DeclRefExpr>(S))
      Invariant &= !Inner.contains(R->getDecl());
  });
  return Invariant;
}

class AllPairsTiling : public PlannedTransform<Plan> {
public:
  StringRef kind() const override { return "all-pairs-tiling"; }
  StringRef description() const override {
    return "stage the sequence an all-pairs loop walks in shared-memory "
           "tiles copied cooperatively by the block";
  }
  TargetKind targetKind() const override { return TargetKind::Loop; }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec::integer("tile", "elements per staged tile", 32, 4096, 256)};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E;
    auto P = planDefault(Ctx, Target, A, E);
    if (!P)
      return A;
    A.Reason = P->Description;
    Edit S = E;
    S.Params["tile"] = int64_t(256);
    A.Suggestions = {S};
    return A;
  }

private:
  Expected<Plan> analyze(const EditContext &Ctx, const Edit &E) const override;
  Expected<clang::tooling::Replacements>
  rewrite(const EditContext &Ctx, const Edit &E, const Plan &P) const override;
};

/// The loop's counter, start and bound into \p P: `for (T j = A; j < B;
/// ++j)` (or `j++`, `j += 1`, `B > j`), or a counting while, `T j = A;
/// while (j < B) { ...; ++j; }` whose declaration is \p Before.
Error loopHeader(const EditContext &Ctx, const Edit &E, Plan &P,
                 const clang::Stmt *Before, const std::string &At) {
  if (const auto *W = dyn_cast<clang::WhileStmt>(P.For)) {
    std::string Why;
    auto C = countingWhile(W, Before, Ctx.AST, &Why);
    if (!C || C->Step != 1 || C->Inclusive)
      return reject(
          E, "not-applicable",
          At +
              " is a 'while' loop that does not count by one up "
              "to a bound it stays below: " +
              (C ? std::string(C->Step != 1 ? "it counts down"
                                            : "its bound is inclusive")
                 : Why));
    P.Var = C->Var;
    P.Start = C->Start;
    P.End = C->Bound;
    P.Cond = W->getCond();
    P.LoopBody = W->getBody();
    return Error::success();
  }
  const auto *F = dyn_cast<clang::ForStmt>(P.For);
  if (!F)
    return reject(E, "not-applicable",
                  At + " is neither a 'for' loop nor a counting 'while'");
  P.Cond = F->getCond();
  P.LoopBody = F->getBody();
  if (const auto *DS = dyn_cast_or_null<clang::DeclStmt>(F->getInit()))
    if (DS->isSingleDecl())
      P.Var = dyn_cast<clang::VarDecl>(DS->getSingleDecl());
  if (!P.Var || !P.Var->getInit())
    return reject(E, "not-applicable",
                  At + " does not declare its induction variable");
  std::string J = P.Var->getName().str();
  auto C = countingLoop(F, Ctx.AST);
  if (!C || C->Step != 1 || C->Inclusive) {
    const auto *B = dyn_cast_or_null<clang::BinaryOperator>(
        P.Cond ? P.Cond->IgnoreParenImpCasts() : nullptr);
    bool Below =
        B &&
        ((B->getOpcode() == clang::BO_LT && declOf(B->getLHS()) == P.Var) ||
         (B->getOpcode() == clang::BO_GT && declOf(B->getRHS()) == P.Var));
    return reject(E, "not-applicable",
                  At + (Below ? " does not step '" + J + "' by one"
                              : " is not bounded as '" + J + " < end'"));
  }
  P.Start = C->Start;
  P.End = C->Bound;
  if (llvm::is_contained(writtenDecls(P.LoopBody), P.Var))
    return reject(E, "not-applicable", At + " writes '" + J + "'");
  return Error::success();
}

/// The arrays the loop reads at [j] into \p P.Arrays, checked so that a
/// shared copy equals what the loop read.
Error stagedArrays(const EditContext &Ctx, const Edit &E, Plan &P,
                   const std::string &At) {
  const clang::FunctionDecl *K = P.Loop.Kernel.Decl;
  const clang::Stmt *Body = P.LoopBody;
  std::string J = P.Var->getName().str();
  std::function<void(const clang::Stmt *)> Walk = [&](const clang::Stmt *S) {
    if (!S)
      return;
    if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(S)) {
      const clang::ValueDecl *B = declOf(A->getBase());
      if (B && declOf(A->getIdx()) == P.Var &&
          A->getBase()->IgnoreParenImpCasts()->getType()->isPointerType()) {
        auto It = llvm::find_if(P.Arrays,
                                [&](const Staged &X) { return X.Base == B; });
        if (It == P.Arrays.end()) {
          P.Arrays.push_back({B, "", "", {}});
          It = std::prev(P.Arrays.end());
        }
        It->Reads.push_back(A);
        return;
      }
    }
    for (const clang::Stmt *Ch : S->children())
      Walk(Ch);
  };
  Walk(Body);
  // A pointer that differs between threads (a row pointer `A + r * cols`)
  // reads no shared sequence: its reads stay as they are.
  llvm::erase_if(P.Arrays, [&](const Staged &S) {
    const auto *V = dyn_cast<clang::VarDecl>(S.Base);
    return V && !isa<clang::ParmVarDecl>(V) &&
           (!V->getInit() || !isBlockUniform(V->getInit(), K) ||
            llvm::is_contained(writtenDecls(K->getBody()), V));
  });
  if (P.Arrays.empty())
    return reject(E, "not-applicable",
                  At + " reads no array at '[" + J +
                      "]' that points to the same data in every thread: no "
                      "sequence shared by the block");
  bool LoopWrites = !elementWrites(Body).empty();
  for (const Staged &S : P.Arrays) {
    std::string N = S.Base->getName().str();
    // Other reads of the same array inside the loop stay global reads;
    // only those at an index the loop does not change are kept.
    bool OtherUse = false;
    std::function<void(const clang::Stmt *)> Uses = [&](const clang::Stmt *X) {
      if (!X)
        return;
      if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(X))
        if (llvm::is_contained(S.Reads, A) ||
            (declOf(A->getBase()) == S.Base &&
             invariantIndex(A->getIdx(), Body, P.Var)))
          return;
      if (const auto *R = dyn_cast<clang::DeclRefExpr>(X))
        OtherUse |= R->getDecl() == S.Base;
      for (const clang::Stmt *Ch : X->children())
        Uses(Ch);
    };
    Uses(Body);
    if (OtherUse)
      return reject(E, "not-applicable",
                    "'" + N + "' is used in " + At + " other than as '" + N +
                        "[" + J +
                        "]' or at an index the loop does not "
                        "change");
    if (const clang::Stmt *Esc = addressEscape(Body, S.Reads, K))
      return reject(E, "not-applicable",
                    "'" + N + "[" + J + "]' is used at " + where(Ctx, Esc) +
                        " other than for its value (its address taken or "
                        "passed on); the staged copy is one tile in shared "
                        "memory");
    for (const MemWrite &W : elementWrites(K->getBody()))
      if (declOf(W.Base) == S.Base)
        return reject(E, "not-applicable",
                      "'" + N + "' is written at " + where(Ctx, W.Target) +
                          "; a staged copy would be stale");
    if (LoopWrites && !S.Base->getType()->getPointeeType().isConstQualified())
      return reject(E, "not-applicable",
                    At + " writes memory and '" + N +
                        "' is not a pointer to const: they may alias");
  }
  return Error::success();
}

/// The edit that makes the variable \p V, declared before the loop, load
/// nothing in threads outside the bounds: its initializer, when it reads
/// memory, becomes `Active ? (init) : T()`; one written as a constructor's
/// arguments (`Vec3 me(p[i].x, ...)`, `float3 me{...}`) becomes
/// `me = Active ? T(...) : T()`. Nothing when the initializer reads no
/// memory or is not written in the file.
std::optional<TextEdit> guardedInit(const EditContext &Ctx,
                                    const clang::VarDecl *V,
                                    llvm::StringRef Active) {
  if (!V->getInit() || !readsMemory(V->getInit()))
    return std::nullopt;
  auto Sp = looseExprSpan(Ctx, V->getInit());
  if (!Sp)
    return std::nullopt;
  std::string Ty = V->getType().getUnqualifiedType().getAsString(
      Ctx.AST.getPrintingPolicy());
  if (V->getInitStyle() == clang::VarDecl::CInit)
    return TextEdit{Sp->Begin.Offset, Sp->End.Offset - Sp->Begin.Offset,
                    Active.str() + " ? " +
                        parenthesize(looseExprText(Ctx, V->getInit())) + " : " +
                        Ty + "()"};
  const clang::SourceManager &SM = Ctx.AST.getSourceManager();
  if (V->getLocation().isMacroID())
    return std::nullopt;
  unsigned Name = SM.getFileOffset(V->getLocation());
  unsigned Args = Name + V->getName().size();
  if (Args > Sp->End.Offset)
    return std::nullopt;
  std::string Written =
      Ctx.Code.substr(Args, Sp->End.Offset - Args).ltrim().str();
  return TextEdit{Name, Sp->End.Offset - Name,
                  V->getName().str() + " = " + Active.str() + " ? " + Ty +
                      Written + " : " + Ty + "()"};
}

// Why long: one ordered list of the pattern's preconditions (the loop, its
// place under the guard, the statements before it, the barriers every
// thread must reach), each refusal naming its reason; the header and the
// staged arrays are checked by loopHeader() and stagedArrays().
Expected<Plan> AllPairsTiling::analyze(const EditContext &Ctx,
                                       const Edit &E) const {
  Plan P;
  auto L = resolveLoop(Ctx, E, E.Target);
  if (!L)
    return L.takeError();
  P.Loop = *L;
  P.Tile = E.getInt("tile").value_or(256);
  if (P.Tile < 32 || P.Tile > 4096)
    return reject(E, "params", "params.tile must be in [32, 4096]");
  const clang::FunctionDecl *K = L->Kernel.Decl;
  P.For = L->S;
  std::string At = "loop " + E.Target;
  if (!isa<clang::ForStmt, clang::WhileStmt>(P.For))
    return reject(E, "not-applicable",
                  At + " is neither a 'for' loop nor a counting 'while'");
  if (L->Info->Depth != 0)
    return reject(E, "not-applicable",
                  At + " is nested in another loop; only a top-level loop "
                       "can be walked tile by tile by the whole block");
  if (L->Kernel.Info->Uses2DThreads)
    return reject(E, "not-applicable",
                  "kernel '" + L->Kernel.Info->QualifiedName +
                      "' uses 2D thread indices");
  // Where the loop sits: at the top of the kernel or of its guarded body.
  const auto *KBody = cast<clang::CompoundStmt>(K->getBody());
  std::vector<const clang::Stmt *> Seq;
  P.Item = guardAround(KBody, P.For);
  if (P.Item) {
    Seq = P.Item->Body;
  } else if (llvm::is_contained(KBody->body(), P.For)) {
    Seq.assign(KBody->body_begin(), KBody->body_end());
  } else {
    return reject(E, "not-applicable",
                  At + " is neither at the top of the kernel nor at the "
                       "top of its 'if (i < n)' body; every thread of the "
                       "block must reach its barriers");
  }
  bool SeenLoop = false;
  const clang::Stmt *Before = nullptr;
  for (const clang::Stmt *S : Seq) {
    if (S == P.For) {
      SeenLoop = true;
      continue;
    }
    if (!SeenLoop)
      Before = S;
    if (!P.Item)
      continue;
    (SeenLoop ? P.Post : P.Pre).push_back(S);
  }
  for (const clang::Stmt *S : P.Pre) {
    const auto *DS = dyn_cast<clang::DeclStmt>(S);
    bool Ok = DS != nullptr;
    if (DS)
      for (const clang::Decl *D : DS->decls()) {
        const auto *V = dyn_cast<clang::VarDecl>(D);
        Ok &= V && !V->getType()->isReferenceType() &&
              !V->getType()->getContainedAutoType() &&
              !isa<clang::ArrayType>(V->getType().getTypePtr()) &&
              (!V->getInit() || !mayHaveSideEffects(V->getInit(), Ctx.AST));
      }
    if (!Ok)
      return reject(E, "not-applicable",
                    "the statement at " + where(Ctx, S) +
                        " before the loop is not a declaration without "
                        "side effects; threads outside the bounds must be "
                        "able to skip it");
    // Threads outside the bounds declare it without loading: `T()`.
    for (const clang::Decl *D : DS->decls()) {
      const auto *V = cast<clang::VarDecl>(D);
      const auto *RD = V->getType()->getAsCXXRecordDecl();
      if (V->getInit() && readsMemory(V->getInit()) && RD &&
          (!RD->hasDefinition() || !RD->hasDefaultConstructor()))
        return reject(E, "not-applicable",
                      "'" + V->getName() + "' (at " + where(Ctx, S) +
                          ") loads memory and its type has no default "
                          "constructor; threads outside the bounds could "
                          "not declare it without loading");
    }
  }
  // Every thread must reach the barriers: nothing before the guard or
  // in it leaves (the guard itself is rewritten away).
  // A block-uniform `if (C) return;` before the guard lets whole blocks
  // leave together.
  std::vector<const clang::Stmt *> Checked = {K->getBody()}, Outside;
  if (P.Item) {
    Checked = Outside = P.Item->Before;
    llvm::append_range(Checked, P.Item->Body);
  }
  for (const clang::Stmt *S : Checked)
    if (const clang::Stmt *Jmp = firstJump(S);
        Jmp && !uniformExit(S, Outside, K))
      return reject(E, "not-applicable",
                    "the kernel leaves early at " + where(Ctx, Jmp) +
                        "; every thread must reach the barriers");
  if (!L->Kernel.Info->Syncthreads.empty())
    return reject(E, "not-applicable",
                  "kernel '" + L->Kernel.Info->QualifiedName +
                      "' already synchronizes its threads");

  // The loop: j from a uniform start to a uniform end, step one.
  if (Error Err = loopHeader(Ctx, E, P, Before, At))
    return std::move(Err);
  std::string J = P.Var->getName().str();
  if (!isBlockUniform(P.Start, K) || !isBlockUniform(P.End, K))
    return reject(E, "not-applicable",
                  At + " runs over a range that differs between the threads "
                       "of a block; nothing is shared");
  if (const clang::Stmt *Jmp =
          leavesLoop(P.LoopBody, isa<clang::ForStmt>(P.For)))
    return reject(E, "not-applicable",
                  At + " leaves early at " + where(Ctx, Jmp) +
                      "; a tile would end it, not the loop");
  std::string Callee;
  if (const clang::Stmt *C = effectfulCall(Ctx, P.LoopBody, K, Callee))
    return reject(E, "not-applicable",
                  At + " calls '" + Callee + "' at " + where(Ctx, C) +
                      ", which may change memory or depend on when it "
                      "runs; only calls that change nothing can run on a "
                      "staged copy");

  // The arrays read at [j].
  if (Error Err = stagedArrays(Ctx, E, P, At))
    return std::move(Err);
  int64_t Bytes = 0;
  for (Staged &S : P.Arrays) {
    clang::QualType T =
        S.Base->getType()->getPointeeType().getUnqualifiedType();
    S.ElemType = T.getAsString(Ctx.AST.getPrintingPolicy());
    S.Tile = freshName(Ctx.Code, S.Base->getName().str() + "_tile");
    if (!T->isDependentType())
      Bytes += Ctx.AST.getTypeSizeInChars(T).getQuantity() * P.Tile;
  }
  if (Bytes > 48 * 1024)
    return reject(E, "params",
                  "the tiles need " + Twine(Bytes) +
                      " bytes of shared memory, more than 49152; use a "
                      "smaller params.tile");
  std::vector<std::string> Names;
  for (const Staged &S : P.Arrays)
    Names.push_back("'" + S.Base->getName().str() + "[" + J + "]'");
  P.Description = "every thread of a block walks " + J + " over [" +
                  looseExprText(Ctx, P.Start) + ", " +
                  looseExprText(Ctx, P.End) + ") reading " + join(Names, ", ") +
                  "; rewrite: stage tiles of " + std::to_string(P.Tile) +
                  " elements in shared memory" +
                  (P.Item ? " (threads outside the bounds help copy)" : "");
  return P;
}

Expected<clang::tooling::Replacements>
AllPairsTiling::rewrite(const EditContext &Ctx, const Edit &E,
                        const Plan &P) const {
  auto ForSp = looseStmtSpan(Ctx, P.For);
  if (!ForSp)
    return reject(E, "macro", "the loop is written inside a macro");
  std::string Base = freshName(Ctx.Code, "base");
  std::string T = freshName(Ctx.Code, "t");
  std::string Tile = std::to_string(P.Tile);
  std::string Active = freshName(Ctx.Code, "active");
  std::string End = looseExprText(Ctx, P.End);
  std::string J = P.Var->getName().str();

  // Every piece copied or replaced must be written in the file.
  auto Written = [&](const clang::Stmt *S) {
    return S && bool(writtenStmtSpan(Ctx, S));
  };
  if (!looseExprSpan(Ctx, P.Cond) || !looseExprSpan(Ctx, P.Start) ||
      (P.Item &&
       (!looseStmtSpan(Ctx, P.Item->Guard) ||
        (P.Item->EarlyReturn && !looseStmtSpan(Ctx, P.Item->Body.back())))) ||
      !llvm::all_of(P.Pre, Written) || !llvm::all_of(P.Post, Written))
    return reject(E, "macro",
                  "a part of the kernel the rewrite moves is written inside "
                  "a macro");
  for (const clang::Stmt *S : P.Pre)
    for (const clang::Decl *D : cast<clang::DeclStmt>(S)->decls())
      if (const auto *V = cast<clang::VarDecl>(D); V->getInit() &&
                                                   readsMemory(V->getInit()) &&
                                                   !guardedInit(Ctx, V, Active))
        return reject(E, "macro",
                      "the initializer of '" + V->getName() +
                          "' is written inside a macro");

  // Where the new text goes and its indentation.
  unsigned RegionBegin = ForSp->Begin.Offset, RegionEnd = ForSp->End.Offset;
  if (P.Item) {
    auto GSp = looseStmtSpan(Ctx, P.Item->Guard);
    RegionBegin = GSp->Begin.Offset;
    RegionEnd = P.Item->EarlyReturn
                    ? looseStmtSpan(Ctx, P.Item->Body.back())->End.Offset
                    : GSp->End.Offset;
  }
  std::string I = indentationAt(Ctx.Code, RegionBegin);
  // Lines of the loop as written sit one level deeper inside a guard.
  unsigned Depth = P.Item && !P.Item->EarlyReturn ? 2 : 0;

  // The loop over one tile: reads of p[j] come from the shared copy.
  std::vector<TextEdit> Reads;
  for (const Staged &S : P.Arrays)
    for (const clang::ArraySubscriptExpr *A : S.Reads) {
      auto Sp = looseExprSpan(Ctx, A);
      if (!Sp)
        return reject(E, "macro", "a read is written inside a macro");
      Reads.push_back({Sp->Begin.Offset, Sp->End.Offset - Sp->Begin.Offset,
                       S.Tile + "[" + J + " - " + Base + "]"});
    }
  // A for loop starts each tile at its base; a while loop's counter
  // reaches the next base as the tile before ends.
  auto CondSp = looseExprSpan(Ctx, P.Cond);
  auto InitSp = looseExprSpan(Ctx, P.Start);
  if (isa<clang::ForStmt>(P.For))
    Reads.push_back({InitSp->Begin.Offset,
                     InitSp->End.Offset - InitSp->Begin.Offset, Base});
  Reads.push_back(
      {CondSp->Begin.Offset, 0, J + " < " + Base + " + " + Tile + " && "});
  std::string Loop =
      spliceText(Ctx.Code, ForSp->Begin.Offset, ForSp->End.Offset, Reads);
  std::string Inner = I + "  ";
  std::string LoopText = P.Item ? "if (" + Active + ")\n" + Inner + "  " +
                                      indentLines(dedent(Loop, Depth), "    ")
                                : indentLines(dedent(Loop, Depth), "  ");

  std::string Load;
  std::string Idx = Base + " + " + T;
  if (P.Arrays.size() == 1) {
    const Staged &S = P.Arrays.front();
    Load =
        S.Tile + "[" + T + "] = " + S.Base->getName().str() + "[" + Idx + "];";
  } else {
    Load = "{";
    for (const Staged &S : P.Arrays)
      Load += "\n" + Inner + "    " + S.Tile + "[" + T +
              "] = " + S.Base->getName().str() + "[" + Idx + "];";
    Load += "\n" + Inner + "  }";
  }
  std::string Count = Tile + " && " + Idx + " < " + End;
  std::string Out;
  auto Line = [&](const std::string &S) {
    if (!Out.empty())
      Out += "\n" + I;
    Out += S;
  };
  if (P.Item) {
    std::string Cond = P.Item->EarlyReturn
                           ? flipped(Ctx, P.Item->Guard->getCond())
                           : looseExprText(Ctx, P.Item->Guard->getCond());
    Line("bool " + Active + " = " + Cond + ";");
    for (const clang::Stmt *S : P.Pre) {
      // Loads of threads outside the bounds are skipped.
      const auto *DS = cast<clang::DeclStmt>(S);
      std::vector<TextEdit> Guarded;
      for (const clang::Decl *D : DS->decls())
        if (auto G = guardedInit(Ctx, cast<clang::VarDecl>(D), Active))
          Guarded.push_back(*G);
      auto Sp = writtenStmtSpan(Ctx, S);
      Line(dedent(
          spliceText(Ctx.Code, Sp->Begin.Offset, Sp->End.Offset, Guarded),
          Depth));
    }
  }
  for (const Staged &S : P.Arrays)
    Line(sharedTileDecl(S.ElemType, S.Tile, {P.Tile}));
  Line(tileLoopHead(Base, looseExprText(Ctx, P.Start), End, P.Tile,
                    typeName(P.Var->getType(), Ctx.AST)) +
       " {");
  Line("  " + cooperativeLoop(T, Count, Load, Inner));
  Line("  __syncthreads();");
  Line("  " + LoopText);
  Line("  __syncthreads();");
  Line("}");
  if (P.Item && !P.Post.empty()) {
    Line("if (" + Active + ") {");
    for (const clang::Stmt *S : P.Post) {
      auto Sp = writtenStmtSpan(Ctx, S);
      Line("  " + indentLines(
                      dedent(Ctx.Code.substr(Sp->Begin.Offset,
                                             Sp->End.Offset - Sp->Begin.Offset),
                             Depth),
                      "  "));
    }
    Line("}");
  }
  clang::tooling::Replacements Repls;
  if (Error Err = addReplacement(
          Repls,
          clang::tooling::Replacement(Ctx.FileName, RegionBegin,
                                      RegionEnd - RegionBegin, Out),
          E))
    return std::move(Err);
  return Repls;
}

} // namespace

std::unique_ptr<Transform> createAllPairsTilingTransform() {
  return std::make_unique<AllPairsTiling>();
}

} // namespace optiml
