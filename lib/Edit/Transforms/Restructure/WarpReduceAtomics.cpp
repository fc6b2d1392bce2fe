//===- WarpReduceAtomics.cpp - warp-reduce: per-thread atomics ------------===//
//
// The first matcher of warp-reduce: threads that each atomicAdd into one
// block-uniform address (see WarpReduce.cpp for the rewrite).
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "WarpReduceInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace clang;
using namespace llvm;

namespace optiml {
namespace warpreduce {

/// The part of \p Cond (through `&&`) that holds in few threads: a value
/// that depends on the thread index (and on nothing unknown) compared for
/// equality with a block-uniform one, or negated (`!tid`); null if none.
static const Expr *selectsOneThread(const Expr *Cond, const FunctionDecl *Fn) {
  Cond = Cond->IgnoreParenImpCasts();
  auto ThreadOnly = [&](const Expr *E) {
    Variance V = threadVariance(E, Fn);
    return !V.Unknown && !V.uniform();
  };
  if (const auto *B = dyn_cast<BinaryOperator>(Cond)) {
    if (B->getOpcode() == BO_LAnd) {
      if (const Expr *L = selectsOneThread(B->getLHS(), Fn))
        return L;
      return selectsOneThread(B->getRHS(), Fn);
    }
    if (B->getOpcode() == BO_EQ &&
        ((ThreadOnly(B->getLHS()) && isBlockUniform(B->getRHS(), Fn)) ||
         (ThreadOnly(B->getRHS()) && isBlockUniform(B->getLHS(), Fn))))
      return B;
  }
  if (const auto *U = dyn_cast<UnaryOperator>(Cond))
    if (U->getOpcode() == UO_LNot && ThreadOnly(U->getSubExpr()))
      return U;
  return nullptr;
}

/// The per-thread-atomics form.
Error analyzeAtomics(const EditContext &Ctx, const Edit &E,
                     const ResolvedKernel *K, WarpReducePlan &Out) {
  AtomicsPlan &Plan = Out.Atomics;
  auto No = [&](const Twine &Why, SourcePos Pos = {}) {
    return reject(E, "not-applicable", "kernel '" + E.Target + "': " + Why,
                  Pos);
  };
  const auto *Body = cast<CompoundStmt>(K->Decl->getBody());
  if (K->Info->Uses2DThreads)
    return No("uses 2D thread indices; warp lanes are threadIdx.x % 32 only "
              "in one-dimensional blocks");
  if (!onlyConstantMacros(Body, Ctx.AST))
    return No("its body uses macros other than constants");

  // Atomics used as statements, and all atomics; the conditions each
  // atomic runs under (the `then` branches it is in).
  struct Finder : RecursiveASTVisitor<Finder> {
    std::vector<const CallExpr *> All, AsStmt;
    std::vector<const Expr *> Conds;
    std::vector<std::pair<const CallExpr *, const Expr *>> Guarded;
    bool Return = false;
    bool TraverseIfStmt(IfStmt *S) {
      if (!WalkUpFromIfStmt(S) || !TraverseStmt(S->getInit()) ||
          !TraverseStmt(S->getConditionVariableDeclStmt()) ||
          !TraverseStmt(S->getCond()))
        return false;
      Conds.push_back(S->getCond());
      bool Ok = TraverseStmt(S->getThen());
      Conds.pop_back();
      return Ok && TraverseStmt(S->getElse());
    }
    static bool isAtomicCall(const Stmt *S) {
      const auto *C = dyn_cast_or_null<CallExpr>(S);
      const FunctionDecl *FD = C ? C->getDirectCallee() : nullptr;
      return FD && FD->getDeclName().isIdentifier() &&
             FD->getName().starts_with("atomic");
    }
    void noteChild(const Stmt *S) {
      if (isAtomicCall(S))
        AsStmt.push_back(cast<CallExpr>(S));
    }
    bool VisitCompoundStmt(CompoundStmt *CS) {
      for (const Stmt *S : CS->body())
        noteChild(S);
      return true;
    }
    bool VisitIfStmt(IfStmt *S) {
      noteChild(S->getThen());
      noteChild(S->getElse());
      return true;
    }
    bool VisitForStmt(ForStmt *S) {
      noteChild(S->getBody());
      return true;
    }
    bool VisitWhileStmt(WhileStmt *S) {
      noteChild(S->getBody());
      return true;
    }
    bool VisitDoStmt(DoStmt *S) {
      noteChild(S->getBody());
      return true;
    }
    bool VisitCallExpr(CallExpr *C) {
      if (isAtomicCall(C)) {
        All.push_back(C);
        for (const Expr *Cond : Conds)
          Guarded.push_back({C, Cond});
      }
      return true;
    }
    bool VisitReturnStmt(ReturnStmt *) {
      Return = true;
      return true;
    }
    bool TraverseLambdaExpr(LambdaExpr *) { return true; }
  } F;
  F.TraverseStmt(const_cast<CompoundStmt *>(Body));
  const SourceManager &SM = Ctx.AST.getSourceManager();
  if (F.All.empty())
    return No("has no atomics to combine and no shared-memory tree");
  if (F.All.size() != F.AsStmt.size())
    return No("the result of an atomic is used",
              filePos(SM, F.All.front()->getBeginLoc()));
  if (F.Return)
    return No("returns early: every lane of a warp must reach the shuffles");
  for (const auto &[C, Cond] : F.Guarded)
    if (const Expr *Sel = selectsOneThread(Cond, K->Decl))
      return No("the atomic runs only where '" + exprText(Ctx, Sel) +
                    "' holds (a thread index compared for equality: few "
                    "threads, not every thread), so sums per warp would "
                    "only add atomics of zeros",
                filePos(SM, C->getBeginLoc()));
  for (const CallExpr *C : F.All) {
    StringRef Name = C->getDirectCallee()->getName();
    SourcePos Pos = filePos(SM, C->getBeginLoc());
    if (Name != "atomicAdd")
      return No("uses " + Name + "; only atomicAdd is combined", Pos);
    if (C->getNumArgs() != 2)
      return No("atomicAdd with an unexpected number of arguments", Pos);
    std::string T = exprText(Ctx, C->getArg(0));
    T.erase(std::remove_if(T.begin(), T.end(), ::isspace), T.end());
    if (Plan.Target.empty())
      Plan.Target = exprText(Ctx, C->getArg(0));
    std::string First = Plan.Target;
    First.erase(std::remove_if(First.begin(), First.end(), ::isspace),
                First.end());
    if (T != First)
      return No("atomics go to different addresses ('" + Plan.Target +
                    "' and '" + exprText(Ctx, C->getArg(0)) + "')",
                Pos);
    if (!threadVariance(C->getArg(0), K->Decl).uniform())
      return No("the address '" + exprText(Ctx, C->getArg(0)) +
                    "' is not the same for every thread",
                Pos);
    QualType PT = C->getArg(0)->IgnoreImpCasts()->getType();
    if (!PT->isPointerType())
      return No("the atomic's address is not a pointer", Pos);
    QualType VT = PT->getPointeeType().getCanonicalType().getUnqualifiedType();
    std::string Type;
    if (VT == Ctx.AST.FloatTy)
      Type = "float";
    else if (VT == Ctx.AST.DoubleTy)
      Type = "double";
    else if (VT == Ctx.AST.IntTy)
      Type = "int";
    else if (VT == Ctx.AST.UnsignedIntTy)
      Type = "unsigned";
    else
      return No("atomicAdd on '" + VT.getAsString() +
                    "': only float, double, int and unsigned are combined",
                Pos);
    if (!Plan.Type.empty() && Plan.Type != Type)
      return No("atomics of different types", Pos);
    Plan.Type = Type;
    QualType ArgT =
        C->getArg(1)->IgnoreImpCasts()->getType().getCanonicalType();
    if (ArgT.getUnqualifiedType() != VT)
      Plan.NeedsCast = true;
  }
  Plan.Atomics = F.All;
  std::string Why;
  auto Blocks = launchBlockSizesX(Ctx, *K->Info, Why);
  if (!Blocks)
    return No(Why + "; warp shuffles need blocks that are whole warps");
  for (size_t I = 0; I < Blocks->size(); ++I)
    if ((*Blocks)[I] % 32 != 0)
      return No("launch " + K->Info->Launches[I].Id + " uses blocks of " +
                std::to_string((*Blocks)[I]) +
                " threads, not a multiple of 32");
  Out.Reassociates = Plan.Type == "float" || Plan.Type == "double";
  return Error::success();
}

} // namespace warpreduce
} // namespace optiml
