//===- WarpPerRow.cpp - One warp (or block) per outer item ----------------===//
//
// Pattern: each thread owns one item (a row, a CSR segment, an output of a
// matrix-vector product) behind a bounds guard and runs one or more
// sequential `for` loops over a range that is the same for every thread
// working on that item. Each loop either reduces into scalars (sum,
// product, max, min) or writes elements indexed by its induction variable.
//
// Rewrite: a warp (or a block) per item. The lanes stride every inner loop
// (so loads coalesce), reduced scalars are combined with butterfly shuffles
// (and shared memory across the warps of a block), which also leaves the
// result in every lane for later passes; statements that write memory
// outside the loops run in lane 0 only; elementwise loops are written by all
// lanes. Every launch gets a grid of one warp (block) per item.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/CountingLoop.h"
#include "../../Patterns/SideEffects.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "WarpPerRowInternal.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include <functional>

using namespace llvm;
using clang::dyn_cast;
using clang::dyn_cast_or_null;
using clang::isa;

namespace optiml {
namespace warpperrow {

/// Whether \p A and \p B are the same expression (up to parentheses and
/// implicit casts).
static bool sameExpr(const clang::Expr *A, const clang::Expr *B,
                     const clang::ASTContext &AST) {
  llvm::FoldingSetNodeID IA, IB;
  A->IgnoreParenImpCasts()->Profile(IA, AST, /*Canonical=*/true);
  B->IgnoreParenImpCasts()->Profile(IB, AST, /*Canonical=*/true);
  return IA == IB;
}

std::optional<Reduction>
matchSelect(const clang::Stmt *S, function_ref<bool(const clang::Expr *)> IsAcc,
            function_ref<bool(const clang::Expr *)> ReadsAcc,
            const clang::ASTContext &AST) {
  const clang::Expr *CondE = nullptr, *TrueE = nullptr, *FalseE = nullptr;
  if (const auto *If = dyn_cast<clang::IfStmt>(S)) {
    if (If->getElse() || If->getInit() || If->getConditionVariable() ||
        If->isConsteval() || If->isConstexpr())
      return std::nullopt;
    const clang::Stmt *Then = If->getThen();
    if (const auto *CS = dyn_cast<clang::CompoundStmt>(Then))
      Then = CS->size() == 1 ? CS->body_front() : nullptr;
    const auto *A = dyn_cast_or_null<clang::BinaryOperator>(
        dyn_cast_or_null<clang::Expr>(Then)
            ? cast<clang::Expr>(Then)->IgnoreParenImpCasts()
            : nullptr);
    if (!A || A->getOpcode() != clang::BO_Assign || !IsAcc(A->getLHS()))
      return std::nullopt;
    CondE = If->getCond();
    TrueE = A->getRHS();
    FalseE = A->getLHS();
  } else if (const auto *E = dyn_cast<clang::Expr>(S)) {
    const auto *A = dyn_cast<clang::BinaryOperator>(E->IgnoreParenImpCasts());
    if (!A || A->getOpcode() != clang::BO_Assign || !IsAcc(A->getLHS()))
      return std::nullopt;
    const auto *CO = dyn_cast<clang::ConditionalOperator>(
        A->getRHS()->IgnoreParenImpCasts());
    if (!CO)
      return std::nullopt;
    CondE = CO->getCond();
    TrueE = CO->getTrueExpr();
    FalseE = CO->getFalseExpr();
  } else {
    return std::nullopt;
  }
  const auto *C = dyn_cast<clang::BinaryOperator>(CondE->IgnoreParenImpCasts());
  if (!C || !C->isRelationalOp())
    return std::nullopt;
  Reduction::Select Sel;
  Sel.Op = clang::BinaryOperator::getOpcodeStr(C->getOpcode()).str();
  const clang::Expr *Elem = nullptr;
  if (IsAcc(C->getLHS())) {
    Sel.AccLeft = true;
    Elem = C->getRHS();
  } else if (IsAcc(C->getRHS())) {
    Elem = C->getLHS();
  } else {
    return std::nullopt;
  }
  if (IsAcc(TrueE) && !ReadsAcc(FalseE))
    Sel.AccIfTrue = true;
  else if (IsAcc(FalseE) && !ReadsAcc(TrueE))
    Sel.AccIfTrue = false;
  else
    return std::nullopt;
  // Kept when the comparison holds, the accumulator would take a NaN
  // element and the next element would replace it: the result would
  // depend on the order of the elements, which lanes do not keep.
  if (Sel.AccIfTrue && !C->getLHS()->getType()->isIntegerType())
    return std::nullopt;
  const clang::Expr *Taken = Sel.AccIfTrue ? FalseE : TrueE;
  if (ReadsAcc(Elem) || Elem->HasSideEffects(AST) ||
      !sameExpr(Elem, Taken, AST))
    return std::nullopt;
  Sel.Elem = Elem;
  // The element is taken when `e OP acc` holds (or fails, when acc is
  // the value taken): taking the larger is a max.
  StringRef Op = Sel.Op;
  bool ElemGreater = Sel.AccLeft ? Op.starts_with("<") : Op.starts_with(">");
  Reduction R;
  R.Op = ElemGreater != Sel.AccIfTrue ? Reduction::Max : Reduction::Min;
  R.Cond = Sel;
  return R;
}

/// Recognizes `acc += e`, `acc = acc + e`, `acc = fmaxf(acc, e)`,
/// `acc = e > acc ? e : acc`, `if (e > acc) acc = e;`, ...
std::optional<Reduction> matchAccumulate(const clang::Stmt *S,
                                         const clang::ValueDecl *D,
                                         const clang::ASTContext &AST) {
  Reduction R;
  R.Acc = dyn_cast<clang::VarDecl>(D);
  if (!R.Acc ||
      !(R.Acc->getType()->isArithmeticType() ||
        R.Acc->getType()->isDependentType()) ||
      R.Acc->getType()->isBooleanType())
    return std::nullopt;
  if (auto Sel = matchSelect(
          S, [&](const clang::Expr *X) { return referencedDecl(X) == D; },
          [&](const clang::Expr *X) { return mentions(X, D); }, AST)) {
    Sel->Acc = R.Acc;
    return Sel;
  }
  const auto *E = dyn_cast<clang::Expr>(S);
  if (!E)
    return std::nullopt;
  E = E->IgnoreParenImpCasts();
  if (const auto *CA = dyn_cast<clang::CompoundAssignOperator>(E)) {
    if (declOf(CA->getLHS()) != D || mentions(CA->getRHS(), D))
      return std::nullopt;
    switch (CA->getOpcode()) {
    case clang::BO_AddAssign:
    case clang::BO_SubAssign:
      R.Op = Reduction::Sum;
      return R;
    case clang::BO_MulAssign:
      R.Op = Reduction::Prod;
      return R;
    default:
      return std::nullopt;
    }
  }
  const auto *A = dyn_cast<clang::BinaryOperator>(E);
  if (!A || A->getOpcode() != clang::BO_Assign || declOf(A->getLHS()) != D)
    return std::nullopt;
  const clang::Expr *RHS = stripCasts(A->getRHS());
  if (const auto *B = dyn_cast<clang::BinaryOperator>(RHS)) {
    const clang::Expr *L = B->getLHS(), *Rt = B->getRHS();
    bool LIsAcc = declOf(L) == D, RIsAcc = declOf(Rt) == D;
    if (B->getOpcode() == clang::BO_Sub && LIsAcc && !mentions(Rt, D)) {
      R.Op = Reduction::Sum;
      return R;
    }
    if (B->getOpcode() != clang::BO_Add && B->getOpcode() != clang::BO_Mul)
      return std::nullopt;
    if (!((LIsAcc && !mentions(Rt, D)) || (RIsAcc && !mentions(L, D))))
      return std::nullopt;
    R.Op = B->getOpcode() == clang::BO_Add ? Reduction::Sum : Reduction::Prod;
    return R;
  }
  if (const auto *C = dyn_cast<clang::CallExpr>(RHS)) {
    const clang::FunctionDecl *FD = C->getDirectCallee();
    // In a template, `fmaxf(m, e)` on dependent types names no function
    // yet; every instantiation must resolve it (checked by the caller).
    const auto *ULE = dyn_cast<clang::UnresolvedLookupExpr>(
        C->getCallee()->IgnoreParenImpCasts());
    bool Unresolved =
        !FD && ULE && !ULE->getQualifier() && ULE->getName().isIdentifier();
    if ((!Unresolved && (!FD || !FD->getIdentifier())) || C->getNumArgs() != 2)
      return std::nullopt;
    std::string Name =
        Unresolved ? ULE->getName().getAsString() : FD->getName().str();
    StringRef N = Name;
    if (Unresolved && N != "fmaxf" && N != "fmax" && N != "fminf" &&
        N != "fmin")
      return std::nullopt;
    if (Unresolved)
      R.DependentCall = C;
    bool IsMax = N == "fmaxf" || N == "fmax" || N == "max";
    bool IsMin = N == "fminf" || N == "fmin" || N == "min";
    if (!IsMax && !IsMin)
      return std::nullopt;
    const clang::Expr *X = C->getArg(0), *Y = C->getArg(1);
    if (!((declOf(X) == D && !mentions(Y, D)) ||
          (declOf(Y) == D && !mentions(X, D))))
      return std::nullopt;
    R.Op = IsMax ? Reduction::Max : Reduction::Min;
    R.Func = N.str();
    if (FD && FD->isInStdNamespace())
      R.Func = "std::" + R.Func;
    return R;
  }
  return std::nullopt;
}

/// Why the call \p C in the pattern of the kernel template \p Kernel does
/// not become fmaxf or fmax (fminf or fmin with \p Min) on float or double
/// in every instantiation; empty when it does.
static std::string dependentMinMaxProblem(const clang::FunctionDecl *Kernel,
                                          const clang::CallExpr *C, bool Min) {
  std::string Name =
      "'" +
      cast<clang::UnresolvedLookupExpr>(C->getCallee()->IgnoreParenImpCasts())
          ->getName()
          .getAsString() +
      "'";
  std::vector<const clang::FunctionDecl *> Insts =
      templateInstantiations(Kernel);
  if (Insts.empty())
    return "the call to " + Name +
           " depends on template parameters and the kernel is never "
           "instantiated";
  for (const clang::FunctionDecl *I : Insts) {
    const clang::CallExpr *Found = nullptr;
    SmallVector<const clang::Stmt *, 32> Work = {I->getBody()};
    while (!Work.empty() && !Found) {
      const clang::Stmt *S = Work.pop_back_val();
      if (!S)
        continue;
      if (const auto *IC = dyn_cast<clang::CallExpr>(S);
          IC && IC->getBeginLoc() == C->getBeginLoc() &&
          IC->getEndLoc() == C->getEndLoc())
        Found = IC;
      for (const clang::Stmt *Ch : S->children())
        Work.push_back(Ch);
    }
    const clang::FunctionDecl *FD = Found ? Found->getDirectCallee() : nullptr;
    bool Ok = FD && FD->getIdentifier() && FD->getNumParams() == 2;
    if (Ok) {
      StringRef N = FD->getName();
      Ok = Min ? N == "fminf" || N == "fmin" : N == "fmaxf" || N == "fmax";
    }
    for (unsigned A = 0; Ok && A < 2; ++A) {
      const auto *BT =
          FD->getParamDecl(A)->getType()->getAs<clang::BuiltinType>();
      Ok = BT && (BT->getKind() == clang::BuiltinType::Float ||
                  BT->getKind() == clang::BuiltinType::Double);
    }
    if (!Ok)
      return "the call to " + Name + " in " + instantiationName(I) +
             " is not " + (Min ? "fminf or fmin" : "fmaxf or fmax") +
             " on float or double";
  }
  return "";
}

/// The first call in \p S to an atomic function (`atomicAdd`, ...), or null.
static const clang::CallExpr *firstAtomic(const clang::Stmt *S) {
  if (!S)
    return nullptr;
  if (const auto *C = dyn_cast<clang::CallExpr>(S))
    if (const auto *FD = C->getDirectCallee())
      if (FD->getIdentifier() && FD->getName().starts_with("atomic"))
        return C;
  for (const clang::Stmt *Ch : S->children())
    if (const clang::CallExpr *C = firstAtomic(Ch))
      return C;
  return nullptr;
}

std::vector<MemWrite> rowWrites(const clang::Stmt *S) {
  std::vector<MemWrite> Out = memoryWrites(S);
  std::function<void(const clang::Stmt *)> Walk = [&](const clang::Stmt *N) {
    if (!N)
      return;
    if (const auto *C = dyn_cast<clang::CXXOperatorCallExpr>(N);
        C && C->isAssignmentOp() && C->getNumArgs() > 0) {
      const clang::Expr *L = C->getArg(0)->IgnoreParens();
      while (const auto *M = dyn_cast<clang::MemberExpr>(L)) {
        if (M->isArrow())
          break;
        L = M->getBase()->IgnoreParens();
      }
      if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(L))
        Out.push_back({A, A->getBase()->IgnoreParenImpCasts(), A->getIdx()});
      else if (const auto *U = dyn_cast<clang::UnaryOperator>(L);
               U && U->getOpcode() == clang::UO_Deref)
        Out.push_back({U, U->getSubExpr()->IgnoreParenImpCasts(), nullptr});
    }
    for (const clang::Stmt *Ch : N->children())
      Walk(Ch);
  };
  Walk(S);
  return Out;
}

/// The first write in \p S through a pointer member (`p->x = v`, `p->n++`),
/// (also by a class's assignment operator), which memoryWrites() does not
/// list; null if none.
static const clang::Expr *arrowWrite(const clang::Stmt *S) {
  if (!S)
    return nullptr;
  const clang::Expr *LHS = nullptr;
  if (const auto *B = dyn_cast<clang::BinaryOperator>(S);
      B && B->isAssignmentOp())
    LHS = B->getLHS();
  else if (const auto *U = dyn_cast<clang::UnaryOperator>(S);
           U && U->isIncrementDecrementOp())
    LHS = U->getSubExpr();
  else if (const auto *C = dyn_cast<clang::CXXOperatorCallExpr>(S);
           C && C->isAssignmentOp() && C->getNumArgs() > 0)
    LHS = C->getArg(0);
  for (const clang::Expr *X = LHS; X;) {
    X = X->IgnoreParenImpCasts();
    if (const auto *M = dyn_cast<clang::MemberExpr>(X)) {
      if (M->isArrow())
        return LHS;
      X = M->getBase();
    } else if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(X)) {
      X = A->getBase();
    } else {
      X = nullptr;
    }
  }
  for (const clang::Stmt *C : S->children())
    if (const clang::Expr *W = arrowWrite(C))
      return W;
  return nullptr;
}

std::vector<const clang::Stmt *> bodyStmts(const clang::Stmt *Body) {
  if (const auto *CS = dyn_cast<clang::CompoundStmt>(Body))
    return {CS->body_begin(), CS->body_end()};
  return {Body};
}

bool declaredIn(const clang::ValueDecl *D, const clang::Stmt *S,
                const EditContext &Ctx) {
  const clang::SourceManager &SM = Ctx.AST.getSourceManager();
  clang::SourceLocation L = D->getLocation();
  clang::SourceRange R = S->getSourceRange();
  return !SM.isBeforeInTranslationUnit(L, R.getBegin()) &&
         !SM.isBeforeInTranslationUnit(R.getEnd(), L);
}

/// The text of \p S as written, also when it begins or ends in a macro
/// expansion (`j < COLS`).
std::string writtenText(const EditContext &Ctx, const clang::Stmt *S) {
  const clang::SourceManager &SM = Ctx.AST.getSourceManager();
  return clang::Lexer::getSourceText(
             clang::CharSourceRange::getTokenRange(S->getSourceRange()), SM,
             Ctx.AST.getLangOpts())
      .str();
}

/// The loop \p S is, also behind `#pragma unroll` (or another loop hint);
/// null when \p S is no `for` or `while` loop.
static const clang::Stmt *hintedLoop(const clang::Stmt *S) {
  if (const auto *A = dyn_cast<clang::AttributedStmt>(S))
    if (llvm::all_of(A->getAttrs(), [](const clang::Attr *At) {
          return isa<clang::LoopHintAttr>(At);
        }))
      S = A->getSubStmt();
  return isa<clang::ForStmt, clang::WhileStmt>(S) ? S : nullptr;
}

/// A statement of the item's body outside its loops, \p S, which every
/// lane now runs with the same values: lane 0 alone runs it when it writes
/// memory the lanes share (an atomic too), every lane when it writes only
/// arrays each thread holds privately (each lane needs its copy). \p
/// Escapes: the kernel lets a local's address escape.
static Error laneStatement(const EditContext &Ctx, const Edit &E, Plan &P,
                           const clang::Stmt *S,
                           ArrayRef<const clang::Stmt *> Later, bool Escapes) {
  std::vector<MemWrite> Writes = rowWrites(S);
  const clang::Expr *Private = nullptr, *Unknown = nullptr;
  bool SharedWrite = firstAtomic(S) || arrowWrite(S);
  for (const MemWrite &W : Writes) {
    WriteStorage St = writeStorage(declOf(W.Base), Escapes);
    if (St == WriteStorage::Private)
      Private = Private ? Private : W.Target;
    else if (St == WriteStorage::Unknown)
      Unknown = Unknown ? Unknown : W.Target;
    else
      SharedWrite = true;
  }
  if (Unknown)
    return reject(E, "not-applicable",
                  "the statement at " + where(Ctx, S) + " writes '" +
                      looseExprText(Ctx, Unknown) +
                      "' through a local pointer or reference that may point "
                      "at a thread's own locals (the kernel takes a local's "
                      "address): neither lane 0 alone nor every lane is "
                      "sure to run it as the thread did");
  if (Private && SharedWrite)
    return reject(E, "not-applicable",
                  "the statement at " + where(Ctx, S) + " writes both '" +
                      looseExprText(Ctx, Private) +
                      "', in an array each thread holds privately (every "
                      "lane needs it), and memory the lanes share (lane 0 "
                      "alone may write it)");
  if (!SharedWrite)
    return Error::success();
  if (isa<clang::DeclStmt>(S))
    return reject(E, "not-applicable",
                  "the declaration at " + where(Ctx, S) +
                      " writes memory; only one lane may do that");
  P.LaneZero.push_back(S);
  bool Sync = arrowWrite(S) != nullptr;
  for (const MemWrite &W : Writes)
    if (const clang::ValueDecl *B = declOf(W.Base))
      Sync |= llvm::any_of(
          Later, [&](const clang::Stmt *L) { return mentions(L, B); });
  if (Sync)
    P.SyncAfter.push_back(S);
  return Error::success();
}

// Why long: one ordered list of the row-loop pattern's preconditions (the
// row index, the loop, the accumulators and their reductions, the uses
// after the loop, the launches), each refusal naming its reason; they
// share the partial match as locals.
Expected<Plan> WarpPerRow::analyze(const EditContext &Ctx,
                                   const Edit &E) const {
  Plan P;
  auto K = resolveKernel(Ctx, E, E.Target);
  if (!K)
    return K.takeError();
  P.Kernel = *K;
  const KernelInfo &KI = *K->Info;
  std::string Per = E.getString("per").value_or("warp");
  if (Per != "warp" && Per != "block" && Per != "stream")
    return reject(E, "params",
                  "params.per must be 'warp', 'block' or 'stream'");
  P.PerBlock = Per == "block";
  std::optional<int64_t> MaxThreads = launchBoundsThreads(K->Decl, Ctx.AST);
  // The default: 256 threads, or as many as __launch_bounds__ allows.
  P.BlockSize = E.getInt("block_size").value_or(blockWithin(MaxThreads, 256));
  if (P.BlockSize < 32 || P.BlockSize > 1024 || P.BlockSize % 32)
    return reject(E, "params",
                  "params.block_size must be a multiple of 32 in [32, 1024]");
  if (MaxThreads && P.BlockSize > *MaxThreads)
    return reject(E, "params",
                  "params.block_size " + Twine(P.BlockSize) +
                      " exceeds the kernel's __launch_bounds__(" +
                      Twine(*MaxThreads) + "): its launches would fail");
  P.Lanes = E.getInt("lanes").value_or(32);
  if (P.Lanes != 4 && P.Lanes != 8 && P.Lanes != 16 && P.Lanes != 32)
    return reject(E, "params", "params.lanes must be 4, 8, 16 or 32");
  if (P.PerBlock && P.Lanes != 32)
    return reject(E, "params",
                  "params.lanes applies to the warp form only; a block "
                  "shares one item among all its threads");
  bool Registers = E.getBool("registers").value_or(false);
  bool Online = E.getBool("online").value_or(false);
  if (auto Terms = E.getInt("terms"); Terms && *Terms != 1 && Per != "stream")
    return reject(E, "params", "params.terms applies to per=stream only");
  if (Per == "stream" && (Registers || Online))
    return reject(E, "params",
                  std::string(Online ? "params.online" : "params.registers") +
                      " does not apply to per=stream (each row's terms are "
                      "computed once, by the block's threads in turn)");
  if (KI.InMacro)
    return reject(E, "macro",
                  "kernel '" + E.Target +
                      "' is defined inside a macro expansion");
  if (!KI.Shared.empty() || !KI.Syncthreads.empty() ||
      !KI.WarpPrimitives.empty())
    return reject(E, "not-applicable",
                  "kernel '" + E.Target +
                      "' already cooperates across threads (shared memory, "
                      "__syncthreads or warp primitives)");
  std::string Why;
  ThreadItemOptions Opts;
  Opts.ByMeaning = true;
  auto Item = matchThreadItem(K->Decl, Why, Opts);
  if (!Item)
    return reject(E, "not-applicable", Why);
  P.Item = *Item;
  std::string IName = Item->Index->getName().str();
  if (Item->Dim != 'x')
    return reject(E, "not-applicable",
                  "the item index '" + IName + "' is in dimension " +
                      Twine(Item->Dim) + "; only x is supported");
  for (const clang::Stmt *S : Item->Before) {
    const auto *DS = dyn_cast<clang::DeclStmt>(S);
    bool Ok = DS != nullptr;
    if (DS)
      for (const clang::Decl *D : DS->decls()) {
        const auto *V = dyn_cast<clang::VarDecl>(D);
        Ok &=
            V && (!V->getInit() || !mentionsBuiltin(V->getInit(), "threadIdx"));
      }
    if (!Ok)
      return reject(E, "not-applicable",
                    "statement at " + where(Ctx, S) +
                        " comes before the item index and is not a "
                        "thread-independent declaration");
  }
  if (!isBlockUniform(Item->Bound, K->Decl))
    return reject(E, "not-applicable",
                  "the bound '" + looseExprText(Ctx, Item->Bound) +
                      "' differs between threads");
  for (const clang::Stmt *S : Item->Body) {
    if (mentionsBuiltin(S))
      return reject(E, "not-applicable",
                    "the body uses thread or block indices at " +
                        where(Ctx, S) + " other than through '" + IName +
                        "'; lanes sharing an item would disagree");
    if (const clang::Stmt *C = opaqueCall(S))
      return reject(E, "not-applicable",
                    "the call at " + where(Ctx, C) +
                        " takes a pointer or reference; its writes cannot "
                        "be followed");
  }

  // Each top-level statement: an inner loop, or a statement every lane runs
  // (lane 0 alone when it writes memory).
  bool Escapes = localAddressEscapes(K->Decl->getBody());
  for (size_t I = 0; I < Item->Body.size(); ++I) {
    const clang::Stmt *S = Item->Body[I];
    ArrayRef<const clang::Stmt *> Later =
        ArrayRef(Item->Body).drop_front(I + 1);
    if (const clang::Stmt *Loop = hintedLoop(S)) {
      if (Error Err = analyzeLoop(Ctx, E, P, Loop,
                                  ArrayRef(Item->Body).take_front(I), Later))
        return std::move(Err);
      if (Loop != S)
        P.Loops.back().Hinted = S;
      continue;
    }
    if (isa<clang::DoStmt, clang::CXXForRangeStmt>(S))
      return reject(E, "not-applicable",
                    "the inner loop at " + where(Ctx, S) +
                        " is not a 'for' loop with a unit step");
    bool HasLoop = false;
    std::function<void(const clang::Stmt *)> Find = [&](const clang::Stmt *N) {
      if (!N)
        return;
      HasLoop |= isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt,
                     clang::CXXForRangeStmt>(N);
      for (const clang::Stmt *C : N->children())
        Find(C);
    };
    Find(S);
    if (HasLoop)
      return reject(E, "not-applicable",
                    "the loop inside the statement at " + where(Ctx, S) +
                        " is not at the top level of the item's body");
    if (const clang::Stmt *J = firstJump(S))
      return reject(E, "not-applicable",
                    "the jump at " + where(Ctx, J) +
                        " leaves the item's body early");
    if (Error Err = laneStatement(Ctx, E, P, S, Later, Escapes))
      return std::move(Err);
  }
  if (P.Loops.empty())
    return reject(E, "not-applicable",
                  "the item's body has no inner 'for' loop to share among "
                  "the lanes");
  if (std::string Why = launchProblem(KI); !Why.empty())
    return reject(E, "launch", Why);
  for (const LaunchSite &L : KI.Launches) {
    std::string WhyL;
    if (!itemsAtLaunch(Ctx, K->Decl, Item->Bound, L, WhyL))
      return reject(E, "launch", WhyL, L.Range.Begin);
    if (WhyL = itemCoverageProblem(Ctx, *Item, L); !WhyL.empty())
      return reject(E, "launch", WhyL, L.Range.Begin);
  }

  // The longest row, when every loop's length is fixed at compile time.
  for (const InnerLoop &L : P.Loops) {
    RowLength Len = rowLength(Ctx, P, L);
    if (!Len.Max) {
      P.RowMax.reset();
      break;
    }
    P.RowMax = std::max(P.RowMax.value_or(0), *Len.Max);
  }
  for (const InnerLoop &L : P.Loops) {
    if (!L.Hinted)
      continue;
    if (Online || Registers)
      return reject(E, "not-applicable",
                    std::string(Online ? "params.online" : "params.registers") +
                        ": '#pragma unroll' stands before the loop at " +
                        where(Ctx, L.For) +
                        ", which would be rewritten whole; drop the pragma");
    for (const Reduction &R : L.Reductions)
      if (R.NeedsZeroing)
        return reject(E, "not-applicable",
                      "'#pragma unroll' stands before the loop at " +
                          where(Ctx, L.For) +
                          ", and lanes other than the "
                          "first must reset '" +
                          accText(R) + "' before it (it does not start from " +
                          (R.Op == Reduction::Sum ? "0" : "1") +
                          "): nothing may come between the pragma and "
                          "its loop");
  }
  for (const InnerLoop &L : P.Loops)
    if ((Online || Registers) && L.isWhile())
      return reject(E, "not-applicable",
                    std::string(Online ? "params.online" : "params.registers") +
                        ": the loop at " + where(Ctx, L.For) +
                        " is a 'while' loop; only 'for' loops are fused or "
                        "run from registers");
  if (Online)
    if (Error Err = planOnline(Ctx, E, P))
      return std::move(Err);
  if (Registers)
    if (Error Err = planRegisters(Ctx, E, P))
      return std::move(Err);

  if (Per == "stream")
    if (Error Err = planStream(Ctx, E, P))
      return std::move(Err);

  std::string D;
  raw_string_ostream OS(D);
  OS << "one thread per item '" << IName << "' (bound '"
     << looseExprText(Ctx, Item->Bound) << "') with " << P.Loops.size()
     << " inner loop" << (P.Loops.size() > 1 ? "s" : "") << ":";
  for (const InnerLoop &L : P.Loops) {
    OS << " " << (L.Id.empty() ? std::string("loop") : L.Id) << " (";
    std::vector<std::string> Parts;
    for (const Reduction &R : L.Reductions)
      Parts.push_back(std::string(opName(R.Op)) + " of '" + accText(R) + "'");
    if (L.Writes)
      Parts.push_back("elementwise writes");
    OS << join(Parts, ", ") << ")";
  }
  if (P.RowMax)
    OS << "; rows of at most " << *P.RowMax << " elements";
  if (P.Streamed)
    OS << "; rewrite: " << P.itemsPerBlock() << " rows per block of "
       << P.BlockSize
       << " threads, which compute the rows' terms together, chunk by chunk "
          "(CSR-stream)";
  else if (P.PerBlock || P.Lanes == 32)
    OS << "; rewrite: one " << (P.PerBlock ? "block" : "warp")
       << " per item, lanes stride the loops";
  else
    OS << "; rewrite: one group of " << P.Lanes << " lanes per item ("
       << 32 / P.Lanes << " items per warp), lanes stride the loops";
  if (P.Fused)
    OS << ", '" << P.Fused->Max->getName() << "' and '"
       << P.Fused->Sum->getName() << "' in one pass (online softmax)";
  if (!P.Cached.empty()) {
    std::vector<std::string> Names;
    for (const CachedArray &C : P.Cached)
      Names.push_back("'" + C.Array->getName().str() + "'");
    OS << ", " << join(Names, ", ") << " kept in registers (" << P.PerLane
       << " per lane)";
  }
  P.Description = D;
  return P;
}

/// \p V is an integer; in the kernel template \p Kernel, one in every
/// instantiation when its type depends on the template's parameters.
static bool integerVar(const clang::VarDecl *V,
                       const clang::FunctionDecl *Kernel) {
  if (!V->getType()->isDependentType())
    return V->getType()->isIntegerType();
  std::vector<const clang::FunctionDecl *> Insts =
      templateInstantiations(Kernel);
  return !Insts.empty() &&
         llvm::all_of(Insts, [&](const clang::FunctionDecl *I) {
           const clang::VarDecl *IV = instantiatedVar(V, I);
           return IV && IV->getType()->isIntegerType();
         });
}

/// The header of the inner loop \p L.For: its counter, start, bound and
/// step, from a `for` header or from a counting `while` and its counter's
/// declaration among the statements \p Before it.
static Error loopHeader(const EditContext &Ctx, const Edit &E, InnerLoop &L,
                        ArrayRef<const clang::Stmt *> Before,
                        const clang::FunctionDecl *Kernel) {
  std::string At = "the loop at " + where(Ctx, L.For);
  const auto *For = dyn_cast<clang::ForStmt>(L.For);
  const clang::Expr *Cond = nullptr;
  if (const auto *W = dyn_cast<clang::WhileStmt>(L.For)) {
    std::string Why;
    auto C = countingWhile(W, Before, Ctx.AST, &Why);
    if (!C || C->Step != 1)
      return reject(E, "not-applicable",
                    "the inner loop at " + where(Ctx, W) +
                        " is a 'while' loop that does not count by one up "
                        "to a bound: " +
                        (C ? std::string("it counts down") : Why));
    L.Var = C->Var;
    L.Start = C->Start;
    L.Inc = C->Inc;
    Cond = W->getCond();
  } else {
    // Induction variable and start.
    if (const auto *DS = dyn_cast_or_null<clang::DeclStmt>(For->getInit())) {
      if (DS->isSingleDecl())
        if (const auto *V = dyn_cast<clang::VarDecl>(DS->getSingleDecl())) {
          L.Var = V;
          L.Start = V->getInit();
          L.InitDeclares = true;
        }
    } else if (const auto *A =
                   dyn_cast_or_null<clang::BinaryOperator>(For->getInit())) {
      if (A->getOpcode() == clang::BO_Assign)
        if (const auto *V =
                dyn_cast_or_null<clang::VarDecl>(declOf(A->getLHS()))) {
          L.Var = V;
          L.Start = A->getRHS();
        }
    }
    L.Inc = For->getInc();
    Cond = For->getCond();
  }
  if (!L.Var || !L.Start || !integerVar(L.Var, Kernel))
    return reject(E, "not-applicable",
                  At + " has no integer induction variable initialized in "
                       "its header");
  std::string J = L.Var->getName().str();
  // Condition: j < B or j <= B.
  const auto *C = dyn_cast_or_null<clang::BinaryOperator>(
      Cond ? Cond->IgnoreParenImpCasts() : nullptr);
  if (!C ||
      (C->getOpcode() != clang::BO_LT && C->getOpcode() != clang::BO_LE) ||
      declOf(C->getLHS()) != L.Var || mentions(C->getRHS(), L.Var))
    return reject(E, "not-applicable",
                  At + " is not bounded as '" + J + " < end'");
  L.Cond = C;
  // Step: ++j, j++, j += 1, j = j + 1.
  bool Unit = false;
  if (L.Inc) {
    const clang::Expr *I = L.Inc->IgnoreParenImpCasts();
    if (const auto *U = dyn_cast<clang::UnaryOperator>(I))
      Unit = U->isIncrementOp() && declOf(U->getSubExpr()) == L.Var;
    else if (const auto *CA = dyn_cast<clang::CompoundAssignOperator>(I))
      Unit = CA->getOpcode() == clang::BO_AddAssign &&
             declOf(CA->getLHS()) == L.Var && isZero(CA->getRHS(), Ctx.AST, 1);
    else if (const auto *A = dyn_cast<clang::BinaryOperator>(I))
      if (A->getOpcode() == clang::BO_Assign && declOf(A->getLHS()) == L.Var)
        if (const auto *Add =
                dyn_cast<clang::BinaryOperator>(stripCasts(A->getRHS())))
          Unit = Add->getOpcode() == clang::BO_Add &&
                 declOf(Add->getLHS()) == L.Var &&
                 isZero(Add->getRHS(), Ctx.AST, 1);
  }
  if (!Unit)
    return reject(E, "not-applicable",
                  At + " does not step '" + J +
                      "' by one; only contiguous inner loops are strided");
  return Error::success();
}

/// The element writes of the loop \p L must land in memory every lane
/// sees, and no read in the loop may reach the written array through
/// another pointer (`prev = row - 1`): each lane now runs other iterations.
static Error loopWriteProblem(const EditContext &Ctx, const Edit &E,
                              const Plan &P, const InnerLoop &L,
                              const MemWrite &W, bool Escapes) {
  std::string At = "the loop at " + where(Ctx, L.For);
  const clang::ValueDecl *Base = declOf(W.Base);
  std::string Target = looseExprText(Ctx, W.Target);
  WriteStorage St = writeStorage(Base, Escapes);
  if (St == WriteStorage::Private)
    return reject(E, "not-applicable",
                  At + " writes '" + Target + "' in '" + Base->getName() +
                      "', an array each thread holds privately: each lane "
                      "would fill only its own elements of its own copy");
  if (St == WriteStorage::Unknown)
    return reject(E, "not-applicable",
                  At + " writes '" + Target + "' through '" + Base->getName() +
                      "', which may point at a thread's own locals (the "
                      "kernel takes a local's address)");
  const clang::Stmt *KBody = P.Kernel.Decl->getBody();
  const clang::ValueDecl *Root = pointerRoot(Base, KBody);
  const clang::Expr *Alias = nullptr;
  std::function<void(const clang::Stmt *)> Find = [&](const clang::Stmt *N) {
    if (!N || Alias)
      return;
    const clang::Expr *RB = nullptr;
    if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(N))
      RB = A->getBase();
    else if (const auto *U = dyn_cast<clang::UnaryOperator>(N);
             U && U->getOpcode() == clang::UO_Deref)
      RB = U->getSubExpr();
    const clang::ValueDecl *RD = RB ? declOf(RB) : nullptr;
    if (RD && RD != Base &&
        RB->IgnoreParenImpCasts()->getType()->isPointerType()) {
      const clang::ValueDecl *RR = pointerRoot(RD, KBody);
      if (!Root || !RR || RR == Root)
        Alias = cast<clang::Expr>(N);
    }
    for (const clang::Stmt *C : N->children())
      Find(C);
  };
  Find(L.body());
  if (Alias)
    return reject(E, "not-applicable",
                  At + " writes '" + Target + "' and reads '" +
                      looseExprText(Ctx, Alias) +
                      "', which may be the same array through another "
                      "pointer: a dependence between iterations");
  return Error::success();
}

Error WarpPerRow::analyzeLoop(const EditContext &Ctx, const Edit &E, Plan &P,
                              const clang::Stmt *For,
                              ArrayRef<const clang::Stmt *> Before,
                              ArrayRef<const clang::Stmt *> Later) const {
  InnerLoop L;
  L.For = For;
  for (const LoopInfo &LI : P.Kernel.Info->Loops)
    if (auto Sp = looseExprSpan(Ctx, For))
      if (LI.Range.Begin.Offset == Sp->Begin.Offset)
        L.Id = LI.Id;
  std::string At = "the loop at " + where(Ctx, For);
  if (Error Err = loopHeader(Ctx, E, L, Before, P.Kernel.Decl))
    return Err;
  std::string J = L.Var->getName().str();
  // A while loop's counter lives on after it, at a value that now differs
  // between the lanes.
  if (L.isWhile())
    for (const clang::Stmt *S : Later)
      if (mentions(S, L.Var))
        return reject(E, "not-applicable",
                      "the statement at " + where(Ctx, S) + " reads '" + J +
                          "' after the loop at " + where(Ctx, For) +
                          ", where each lane stops at another value");
  const clang::Stmt *Body = L.body();
  if (!L.isWhile() && llvm::is_contained(writtenDecls(Body), L.Var))
    return reject(E, "not-applicable",
                  At + " writes its induction variable '" + J + "'");
  if (const clang::Stmt *Jmp = firstJump(Body))
    return reject(E, "not-applicable",
                  At + " leaves early at " + where(Ctx, Jmp) +
                      "; lanes would stop at different elements");
  if (const clang::CallExpr *A = firstAtomic(Body))
    return reject(E, "not-applicable",
                  At + " updates memory atomically at " + where(Ctx, A) +
                      "; the lanes' updates would not be ordered with the "
                      "item's other reads and writes");
  if (const clang::CallExpr *C = refCapturingLambdaCall(Body))
    return reject(E, "not-applicable",
                  At + " calls the lambda at " + where(Ctx, C) +
                      ", which captures by reference: what it reads and "
                      "writes is not in the loop's statements");
  if (const clang::Expr *W = arrowWrite(Body))
    return reject(E, "not-applicable",
                  At + " writes '" + looseExprText(Ctx, W) +
                      "' through a pointer member; whether each iteration "
                      "writes its own element cannot be told");
  if (Error Err = partWrites(Ctx, E, P, L))
    return Err;

  // Scalars from outside the loop: only reductions.
  std::vector<const clang::Stmt *> Top = bodyStmts(Body);
  for (const clang::ValueDecl *D : writtenDecls(Body)) {
    if (D == L.Var || declaredIn(D, For, Ctx))
      continue;
    std::optional<Reduction> R;
    for (const clang::Stmt *S : Top) {
      if (!mentions(S, D))
        continue;
      auto M = matchAccumulate(S, D, Ctx.AST);
      if (!M || R) {
        R.reset();
        break;
      }
      R = M;
    }
    // The accumulator may not be read elsewhere in the loop.
    unsigned Mentioning = 0;
    for (const clang::Stmt *S : Top)
      Mentioning += mentions(S, D);
    if (!R || Mentioning != 1)
      return reject(E, "not-applicable",
                    At + " carries '" + D->getName() +
                        "' from one element to the next in a way that is "
                        "not a sum, product, max or min (loop-carried "
                        "dependence)");
    if (R->DependentCall)
      if (std::string Why = dependentMinMaxProblem(
              P.Kernel.Decl, R->DependentCall, R->Op == Reduction::Min);
          !Why.empty())
        return reject(E, "not-applicable",
                      At + " keeps the " + opName(R->Op) + " of '" +
                          D->getName() + "', but " + Why);
    if (R->Op == Reduction::Sum || R->Op == Reduction::Prod) {
      // Lanes other than the first start from the identity unless the
      // value before the loop is known to be it.
      bool Identity = false;
      if (const clang::Expr *Init = R->Acc->getInit())
        if (isZero(Init, Ctx.AST, R->Op == Reduction::Sum ? 0 : 1)) {
          Identity = true;
          for (const InnerLoop &Prev : P.Loops)
            Identity &= !mentions(Prev.For, R->Acc);
          for (const clang::Stmt *S : P.Item.Body) {
            if (S == For || hintedLoop(S) == For)
              break;
            Identity &= !llvm::is_contained(writtenDecls(S), R->Acc);
          }
        }
      R->NeedsZeroing = !Identity;
    }
    L.Reductions.push_back(*R);
  }
  // Memory: each lane writes only elements of its own iterations.
  bool Escapes = localAddressEscapes(P.Kernel.Decl->getBody());
  std::vector<MemWrite> Writes = rowWrites(Body);
  for (const MemWrite &W : Writes) {
    const clang::ValueDecl *Base = declOf(W.Base);
    bool OwnElement = W.Index && mentions(W.Index, L.Var);
    if (!OwnElement || !Base)
      return reject(E, "not-applicable",
                    At + " writes '" + looseExprText(Ctx, W.Target) +
                        "', which does not depend on '" + J +
                        "'; every lane would write it");
    if (declaredIn(Base, For, Ctx))
      continue;
    if (Error Err = loopWriteProblem(Ctx, E, P, L, W, Escapes))
      return Err;
    L.Writes = true;
    // Reads of the same array at another element are a dependence
    // between iterations that other lanes now run.
    std::string WIdx = looseExprText(Ctx, W.Index);
    std::function<Error(const clang::Stmt *)> Check =
        [&](const clang::Stmt *N) -> Error {
      if (!N)
        return Error::success();
      if (const auto *AS = dyn_cast<clang::ArraySubscriptExpr>(N))
        if (declOf(AS->getBase()) == Base &&
            looseExprText(Ctx, AS->getIdx()) != WIdx)
          return reject(E, "not-applicable",
                        At + " reads '" + looseExprText(Ctx, AS) +
                            "' and writes '" + looseExprText(Ctx, W.Target) +
                            "': a dependence between iterations");
      for (const clang::Stmt *Ch : N->children())
        if (Error Err = Check(Ch))
          return Err;
      return Error::success();
    };
    if (Error Err = Check(Body))
      return Err;
    if (llvm::any_of(Later,
                     [&](const clang::Stmt *S) { return mentions(S, Base); }) &&
        !llvm::is_contained(P.SyncAfter, For))
      P.SyncAfter.push_back(For);
  }
  P.Loops.push_back(std::move(L));
  return Error::success();
}

} // namespace warpperrow

std::unique_ptr<Transform> createWarpPerRowTransform() {
  return std::make_unique<warpperrow::WarpPerRow>();
}

} // namespace optiml
