//===- WarpPerRowVariants.cpp - warp-per-row: the plan variants -----------===//
//
// The variants of the warp-per-row plan: rows loaded once into registers,
// a max pass fused with the next sum (online softmax), and the edits
// prepare() suggests for a kernel.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "WarpPerRowInternal.h"
#include "clang/AST/ASTContext.h"
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
#include <set>

using namespace llvm;
using clang::dyn_cast;
using clang::dyn_cast_or_null;
using clang::isa;

namespace optiml {
namespace warpperrow {

/// The compile-time value of a non-type template parameter of \p Kernel in
/// each of its instantiations; the largest, or nothing.
std::optional<int64_t>
largestInstantiation(const clang::FunctionDecl *Kernel,
                     const clang::NonTypeTemplateParmDecl *NT,
                     std::string &WhyNot) {
  const clang::FunctionTemplateDecl *FT =
      Kernel->getDescribedFunctionTemplate();
  if (!FT || NT->getDepth() != 0) {
    WhyNot = "'" + NT->getName().str() +
             "' is not a template parameter of the kernel";
    return std::nullopt;
  }
  std::optional<int64_t> Max;
  for (const clang::FunctionDecl *Spec : FT->specializations()) {
    const clang::TemplateArgumentList *Args =
        Spec->getTemplateSpecializationArgs();
    if (!Args || NT->getIndex() >= Args->size() ||
        Args->get(NT->getIndex()).getKind() !=
            clang::TemplateArgument::Integral)
      continue;
    int64_t V = Args->get(NT->getIndex()).getAsIntegral().getExtValue();
    Max = std::max(Max.value_or(V), V);
  }
  if (!Max)
    WhyNot =
        "no instantiation of the kernel fixes '" + NT->getName().str() + "'";
  return Max;
}

/// How many elements the loop \p L runs at most, when its start is a
/// constant and its end is a constant, a template parameter, or a kernel
/// parameter that every launch passes as a constant.
RowLength rowLength(const EditContext &Ctx, const Plan &P, const InnerLoop &L) {
  RowLength R;
  std::string At = "the loop at " + where(Ctx, L.For);
  std::optional<int64_t> Start = integerConstantValue(L.Start, Ctx.AST);
  if (!Start) {
    R.WhyNot = At + " starts at '" + writtenText(Ctx, L.Start) +
               "', not at a compile-time constant";
    return R;
  }
  const clang::Expr *End = L.Cond->getRHS();
  std::string EndText = writtenText(Ctx, End);
  std::optional<int64_t> Max = integerConstantValue(End, Ctx.AST);
  const clang::ValueDecl *D = Max ? nullptr : declOf(End);
  if (Max) {
    // A constant: a literal, a macro, a constexpr or static const.
  } else if (const auto *NT =
                 dyn_cast_or_null<clang::NonTypeTemplateParmDecl>(D)) {
    std::string Why;
    Max = largestInstantiation(P.Kernel.Decl, NT, Why);
    if (!Max) {
      R.WhyNot = At + " runs to '" + EndText + "': " + Why;
      return R;
    }
  } else if (const auto *Parm = dyn_cast_or_null<clang::ParmVarDecl>(D)) {
    unsigned I = Parm->getFunctionScopeIndex();
    if (P.Kernel.Info->Launches.empty()) {
      R.WhyNot = At + " runs to the parameter '" + EndText +
                 "' and no launch of the kernel fixes it";
      return R;
    }
    for (const LaunchSite &LS : P.Kernel.Info->Launches) {
      const clang::CUDAKernelCallExpr *C = findLaunchCall(Ctx, LS);
      std::optional<int64_t> V;
      if (C && I < C->getNumArgs())
        V = integerConstantValue(C->getArg(I), Ctx.AST);
      if (!V) {
        R.WhyNot = At + " runs to the parameter '" + EndText + "', and " +
                   LS.Id + " passes '" +
                   (I < LS.Args.size() ? LS.Args[I] : std::string("?")) +
                   "', which is not a compile-time constant";
        return R;
      }
      Max = std::max(Max.value_or(*V), *V);
    }
  } else {
    R.WhyNot = At + " runs to '" + EndText +
               "', which is neither a constant, a template parameter nor a "
               "kernel parameter that the launches pass as a constant";
    return R;
  }
  int64_t Len = *Max - *Start + (L.Cond->getOpcode() == clang::BO_LE ? 1 : 0);
  if (Len <= 0) {
    R.WhyNot = At + " runs no iteration";
    return R;
  }
  R.Max = Len;
  return R;
}

/// Reads `a[j]` in \p S, with `a` a variable and `j` the loop variable.
std::optional<const clang::VarDecl *>
rowOffset(const clang::ArraySubscriptExpr *A, const clang::VarDecl *J) {
  const clang::Expr *Idx = A->getIdx()->IgnoreParenImpCasts();
  if (referencedDecl(Idx) == J)
    return nullptr;
  const auto *B = dyn_cast<clang::BinaryOperator>(Idx);
  if (!B || B->getOpcode() != clang::BO_Add)
    return std::nullopt;
  const clang::ValueDecl *L = referencedDecl(B->getLHS()),
                         *R = referencedDecl(B->getRHS());
  const auto *Other = dyn_cast_or_null<clang::VarDecl>(L == J ? R : L);
  if ((L == J) == (R == J) || !Other)
    return std::nullopt;
  return Other;
}

std::vector<const clang::ArraySubscriptExpr *>
rowReads(const clang::Stmt *S, const clang::VarDecl *J) {
  std::vector<const clang::ArraySubscriptExpr *> Out;
  std::function<void(const clang::Stmt *)> Walk = [&](const clang::Stmt *N) {
    if (!N)
      return;
    if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(N))
      if (rowOffset(A, J) && declOf(A->getBase()) &&
          isa<clang::VarDecl>(declOf(A->getBase())))
        Out.push_back(A);
    for (const clang::Stmt *C : N->children())
      Walk(C);
  };
  Walk(S);
  return Out;
}

int64_t nextPowerOfTwo(int64_t V) {
  int64_t P = 1;
  while (P < V)
    P *= 2;
  return P;
}

Error WarpPerRow::planRegisters(const EditContext &Ctx, const Edit &E,
                                Plan &P) const {
  auto Refuse = [&](const Twine &Why) {
    return reject(E, "not-applicable", "params.registers: " + Why);
  };
  // The passes over one range that read each array at the loop's element:
  // the same end, and the same start or constant starts (the registers
  // hold the elements from the smallest; a pass starting later skips the
  // first ones).
  auto SameRange = [&](const InnerLoop &A, const InnerLoop &B) {
    auto End = [&](const InnerLoop &L) {
      return writtenText(Ctx, L.Cond->getRHS()) +
             (L.Cond->getOpcode() == clang::BO_LE ? "<=" : "<");
    };
    return End(A) == End(B) &&
           (writtenText(Ctx, A.Start) == writtenText(Ctx, B.Start) ||
            (integerConstantValue(A.Start, Ctx.AST) &&
             integerConstantValue(B.Start, Ctx.AST)));
  };
  // Arrays the item writes stay in memory.
  std::map<const clang::ValueDecl *, const clang::Expr *> WrittenAt;
  for (const clang::Stmt *S : P.Item.Body)
    for (const MemWrite &W : rowWrites(S))
      if (const clang::ValueDecl *D = declOf(W.Base))
        WrittenAt.try_emplace(D, W.Target);
  std::vector<const clang::ValueDecl *> Arrays;
  std::map<const clang::ValueDecl *, std::vector<size_t>> Passes;
  // Each array's offset (`base` in `a[base + j]`): one variable for all its
  // reads, never written in the item's body; else the array stays in
  // memory (Mixed).
  std::map<const clang::ValueDecl *, const clang::VarDecl *> Offsets;
  std::set<const clang::ValueDecl *> Mixed;
  for (size_t I = 0; I < P.Loops.size(); ++I)
    for (const clang::ArraySubscriptExpr *A :
         rowReads(P.Loops[I].body(), P.Loops[I].Var)) {
      const clang::ValueDecl *D = declOf(A->getBase());
      const clang::VarDecl *Off = *rowOffset(A, P.Loops[I].Var);
      auto [It, New] = Offsets.try_emplace(D, Off);
      if (It->second != Off ||
          (Off && (llvm::any_of(P.Loops,
                                [&](const InnerLoop &L) {
                                  return L.Var == Off ||
                                         declaredIn(Off, L.For, Ctx);
                                }) ||
                   llvm::any_of(P.Item.Body, [&](const clang::Stmt *S) {
                     return llvm::is_contained(writtenDecls(S), Off);
                   }))))
        Mixed.insert(D);
      if (P.Fused && I == P.Fused->SumLoop && !P.Fused->SumStmt)
        continue; // folded into the max pass
      std::vector<size_t> &Ls = Passes[D];
      if (Ls.empty())
        Arrays.push_back(D);
      if (Ls.empty() ||
          (Ls.back() != I && SameRange(P.Loops[Ls.front()], P.Loops[I])))
        if (!llvm::is_contained(Ls, I))
          Ls.push_back(I);
    }
  std::optional<size_t> Key;
  const clang::ValueDecl *Written = nullptr;
  for (const clang::ValueDecl *D : Arrays) {
    const std::vector<size_t> &Ls = Passes[D];
    if (Ls.size() < 2 || Mixed.count(D))
      continue;
    if (WrittenAt.count(D)) {
      Written = Written ? Written : D;
      continue;
    }
    if (!Key)
      Key = Ls.front();
    if (!SameRange(P.Loops[Ls.front()], P.Loops[*Key]))
      continue;
    CachedArray C;
    C.Array = D;
    clang::QualType T = D->getType();
    clang::QualType Elem;
    if (T->isPointerType())
      Elem = T->getPointeeType();
    else if (T->isArrayType())
      Elem = clang::QualType(T->getArrayElementTypeNoTypeQual(), 0);
    if (Elem.isNull())
      continue;
    C.ElemType =
        Elem.getUnqualifiedType().getAsString(Ctx.AST.getPrintingPolicy());
    C.Name = freshName(Ctx.Code, D->getName().str() + "_reg");
    C.Offset = Offsets[D];
    P.Cached.push_back(C);
    for (size_t I : Ls)
      if (!llvm::is_contained(P.CachedLoops, I))
        P.CachedLoops.push_back(I);
  }
  if (P.Cached.empty() && Written)
    return Refuse("'" + Written->getName() + "' is written at " +
                  where(Ctx, WrittenAt[Written]) +
                  "; registers would hold stale values");
  if (P.Cached.empty())
    return Refuse("no array is read at the loop's element ('x[j]') by two "
                  "or more passes over the same range; there is nothing to "
                  "keep");
  llvm::sort(P.CachedLoops);
  const InnerLoop &First = P.Loops[P.CachedLoops.front()];
  const InnerLoop &Last = P.Loops[P.CachedLoops.back()];
  // The registers hold the elements from the smallest start on.
  const InnerLoop *Widest = &First;
  for (size_t I : P.CachedLoops)
    if (auto S = integerConstantValue(P.Loops[I].Start, Ctx.AST))
      if (*S < *integerConstantValue(Widest->Start, Ctx.AST))
        Widest = &P.Loops[I];
  P.RegStart = Widest->Start;
  // The registers must hold what the memory would: the arrays are not
  // written (above), not reassigned, and nothing else writes memory
  // before the last pass reads them.
  for (const CachedArray &C : P.Cached)
    for (const clang::Stmt *S : P.Item.Body)
      if (llvm::is_contained(writtenDecls(S), C.Array))
        return Refuse("'" + C.Array->getName() + "' is reassigned at " +
                      where(Ctx, S));
  bool Between = false;
  for (const clang::Stmt *S : P.Item.Body) {
    if (S == First.For)
      Between = true;
    if (S == Last.For)
      break;
    if (Between && !rowWrites(S).empty())
      return Refuse("the statement at " + where(Ctx, S) +
                    " writes memory before the last pass that reads '" +
                    P.Cached.front().Array->getName() +
                    "'; registers would hold stale values if they alias");
  }
  RowLength Len = rowLength(Ctx, P, *Widest);
  if (!Len.Max)
    return Refuse("the row length must be fixed at compile time: " +
                  Len.WhyNot);
  int64_t Stride = P.stride();
  P.PerLane = (*Len.Max + Stride - 1) / Stride;
  int64_t Total = P.PerLane * int64_t(P.Cached.size());
  if (Total > MaxValuesPerLane)
    return Refuse("rows of up to " + Twine(*Len.Max) + " elements need " +
                  Twine(Total) + " values per lane with " + Twine(Stride) +
                  " lanes per row (at most " + Twine(MaxValuesPerLane) +
                  "); use per \"block\" or a larger block_size");
  return Error::success();
}

/// The element \p X of the pass \p L as text, read through the locals
/// \p Locals the pass declares (`v` for `const float v = x[j];` reads
/// `x[j]`) when such a local holds its initializer's value unchanged (of
/// its type before any conversion: `int v = x[j]` truncates).
static std::string elementText(const EditContext &Ctx, const clang::Expr *X,
                               ArrayRef<const clang::Stmt *> Locals) {
  const auto *V = dyn_cast_or_null<clang::VarDecl>(referencedDecl(X));
  for (const clang::Stmt *S : Locals)
    if (V && cast<clang::DeclStmt>(S)->getSingleDecl() == V &&
        Ctx.AST.hasSameUnqualifiedType(
            V->getType(), V->getInit()->IgnoreImpCasts()->getType()))
      return writtenText(Ctx, V->getInit());
  return writtenText(Ctx, X);
}

/// The statements of the max pass \p L before it takes the max, when each
/// declares one local that the pass never writes, initialized without side
/// effects; else nothing.
static std::optional<std::vector<const clang::Stmt *>>
maxPassLocals(const EditContext &Ctx, const InnerLoop &L) {
  std::vector<const clang::Stmt *> Body = bodyStmts(L.body());
  if (Body.empty())
    return std::nullopt;
  Body.pop_back();
  std::vector<const clang::ValueDecl *> Written = writtenDecls(L.body());
  for (const clang::Stmt *S : Body) {
    const auto *DS = dyn_cast<clang::DeclStmt>(S);
    const auto *V = DS && DS->isSingleDecl()
                        ? dyn_cast<clang::VarDecl>(DS->getSingleDecl())
                        : nullptr;
    if (!V || !V->getInit() || V->getInit()->HasSideEffects(Ctx.AST) ||
        llvm::is_contained(Written, V))
      return std::nullopt;
  }
  return Body;
}

/// The element e whose max the pass \p L keeps: the other operand of
/// `m = fmaxf(m, e)` as its last statement, or the element a selection
/// compares; null if neither.
static const clang::Expr *maxElement(const InnerLoop &L) {
  const Reduction &R = L.Reductions[0];
  if (R.Cond)
    return R.Cond->Elem;
  std::vector<const clang::Stmt *> Body = bodyStmts(L.body());
  const auto *Asg = Body.empty() ? nullptr
                                 : dyn_cast_or_null<clang::BinaryOperator>(
                                       dyn_cast<clang::Expr>(Body.back()));
  const auto *Call =
      Asg ? dyn_cast<clang::CallExpr>(stripCasts(Asg->getRHS())) : nullptr;
  if (!Call || Call->getNumArgs() != 2)
    return nullptr;
  return declOf(Call->getArg(0)) == R.Acc ? Call->getArg(1) : Call->getArg(0);
}

/// The name of the function \p C calls, also when a template leaves it
/// unresolved (`expf(x[j] - m)` with x of a dependent type); "" if none.
static StringRef calledName(const clang::CallExpr *C) {
  if (const clang::FunctionDecl *FD = C->getDirectCallee())
    return FD->getIdentifier() ? FD->getName() : "";
  if (const auto *UL = dyn_cast<clang::UnresolvedLookupExpr>(
          C->getCallee()->IgnoreParenImpCasts()))
    if (UL->getName().isIdentifier())
      return UL->getName().getAsIdentifierInfo()->getName();
  return "";
}

/// `expf(...)`, `exp(...)` or `__expf(...)` with one argument, through
/// casts; null if \p X is something else.
static const clang::CallExpr *expCall(const clang::Expr *X) {
  const auto *C = X ? dyn_cast<clang::CallExpr>(stripCasts(X)) : nullptr;
  if (!C || C->getNumArgs() != 1)
    return nullptr;
  StringRef N = calledName(C);
  return N == "expf" || N == "exp" || N == "__expf" ? C : nullptr;
}

const clang::Expr *addedTerm(const clang::Stmt *St, const clang::VarDecl *Acc) {
  const auto *SB = dyn_cast_or_null<clang::Expr>(St);
  if (!SB)
    return nullptr;
  SB = SB->IgnoreParenImpCasts();
  if (const auto *CA = dyn_cast<clang::CompoundAssignOperator>(SB))
    return CA->getOpcode() == clang::BO_AddAssign && declOf(CA->getLHS()) == Acc
               ? CA->getRHS()
               : nullptr;
  const auto *BA = dyn_cast<clang::BinaryOperator>(SB);
  if (!BA || BA->getOpcode() != clang::BO_Assign || declOf(BA->getLHS()) != Acc)
    return nullptr;
  const auto *Sum = dyn_cast<clang::BinaryOperator>(stripCasts(BA->getRHS()));
  if (!Sum || Sum->getOpcode() != clang::BO_Add)
    return nullptr;
  if (declOf(Sum->getLHS()) == Acc)
    return Sum->getRHS();
  return declOf(Sum->getRHS()) == Acc ? Sum->getLHS() : nullptr;
}

/// The call `expf(e - m)` the pass \p L (one statement, `s += ...` or
/// `s = s + ...`) adds to its sum; null if it adds something else.
static const clang::CallExpr *summedExp(const InnerLoop &L) {
  std::vector<const clang::Stmt *> Body = bodyStmts(L.body());
  if (Body.size() != 1 || L.Reductions.size() != 1)
    return nullptr;
  return expCall(addedTerm(Body.front(), L.Reductions[0].Acc));
}

/// A pass \p L that also stores (stashed exponentials): one statement of
/// its body, \p SumStmt, adds to the sum either `expf(e - m)` or a local
/// the body declares with that value and never writes; nothing else in the
/// pass reads or writes the sum, and the pass does not write \p M (the
/// local has the sum's type: adding it converts nothing else). The
/// call; null if the pass has another shape.
static const clang::CallExpr *stashedExp(const InnerLoop &L,
                                         const clang::VarDecl *M,
                                         const clang::Stmt *&SumStmt) {
  if (L.Reductions.size() != 1)
    return nullptr;
  const clang::VarDecl *S = L.Reductions[0].Acc;
  std::vector<const clang::ValueDecl *> Written = writtenDecls(L.body());
  if (llvm::is_contained(Written, M))
    return nullptr;
  std::vector<const clang::Stmt *> Body = bodyStmts(L.body());
  const clang::Stmt *Found = nullptr;
  for (const clang::Stmt *St : Body)
    if (mentions(St, S)) {
      if (Found)
        return nullptr;
      Found = St;
    }
  const clang::Expr *Term = addedTerm(Found, S);
  if (!Term || mentions(Term, S))
    return nullptr;
  const clang::CallExpr *Call = expCall(Term);
  if (const auto *V =
          dyn_cast_or_null<clang::VarDecl>(declOf(Term->IgnoreParenImpCasts()));
      !Call && V && V->hasLocalStorage() && !isa<clang::ParmVarDecl>(V) &&
      !llvm::is_contained(Written, V) &&
      V->getType().getCanonicalType().getUnqualifiedType() ==
          S->getType().getCanonicalType().getUnqualifiedType())
    for (const clang::Stmt *St : Body)
      if (const auto *DS = dyn_cast<clang::DeclStmt>(St);
          DS && DS->isSingleDecl() && DS->getSingleDecl() == V)
        Call = expCall(V->getInit());
  if (Call)
    SumStmt = Found;
  return Call;
}

/// The max pass \p LA starts one element after the sum pass \p LB (at 1,
/// LB at 0; the same variable and condition) and its max \p M starts from
/// the row's element 0 (`m = x[base]` where the pass reads `x[base + j]`,
/// or `m = x[0]` for `x[j]`), set at the top level of the item, with
/// nothing writing memory or \p M before the max pass. The fused pass may
/// then run over LB's range: element 0 leaves the max as it is.
static bool startsOneLater(const EditContext &Ctx, const Plan &P,
                           const InnerLoop &LA, const InnerLoop &LB,
                           const clang::VarDecl *M, const clang::Expr *Elem) {
  if (LA.Var->getName() != LB.Var->getName() ||
      LA.InitDeclares != LB.InitDeclares ||
      writtenText(Ctx, LA.Cond) != writtenText(Ctx, LB.Cond) ||
      integerConstantValue(LA.Start, Ctx.AST) != std::optional<int64_t>(1) ||
      integerConstantValue(LB.Start, Ctx.AST) != std::optional<int64_t>(0))
    return false;
  const auto *AE =
      dyn_cast_or_null<clang::ArraySubscriptExpr>(Elem->IgnoreParenImpCasts());
  const auto *AI = M->getInit() ? dyn_cast<clang::ArraySubscriptExpr>(
                                      M->getInit()->IgnoreParenImpCasts())
                                : nullptr;
  if (!AE || !AI || !declOf(AE->getBase()) ||
      declOf(AE->getBase()) != declOf(AI->getBase()))
    return false;
  // The element's index: j, or o + j / j + o with o a variable the item
  // never writes; the max's start reads index 0, or o.
  const clang::Expr *Idx = stripCasts(AE->getIdx());
  const clang::Expr *Init = stripCasts(AI->getIdx());
  const clang::ValueDecl *O = nullptr;
  if (declOf(Idx) == LA.Var) {
    if (integerConstantValue(Init, Ctx.AST) != std::optional<int64_t>(0))
      return false;
  } else if (const auto *B = dyn_cast<clang::BinaryOperator>(Idx);
             B && B->getOpcode() == clang::BO_Add) {
    const clang::Expr *L = stripCasts(B->getLHS()),
                      *R = stripCasts(B->getRHS());
    O = declOf(L) == LA.Var   ? declOf(R)
        : declOf(R) == LA.Var ? declOf(L)
                              : nullptr;
    if (!O || declOf(Init) != O)
      return false;
  } else {
    return false;
  }
  // Set at the top level, and nothing writes memory, m or o until the
  // max pass.
  bool Declared = false;
  for (const clang::Stmt *St : P.Item.Body) {
    if (St == LA.For)
      return Declared;
    if (const auto *DS = dyn_cast<clang::DeclStmt>(St);
        DS && llvm::is_contained(DS->decls(), M)) {
      Declared = true;
      continue;
    }
    std::vector<const clang::ValueDecl *> W = writtenDecls(St);
    if (llvm::is_contained(W, M) || (O && llvm::is_contained(W, O)) ||
        (Declared && !rowWrites(St).empty()))
      return false;
  }
  return false;
}

// Why long: the fused pair's preconditions in order (the max pass's form,
// the next pass's, the element they share, what lies between), each
// refusal noting its reason for the message.
Error WarpPerRow::planOnline(const EditContext &Ctx, const Edit &E,
                             Plan &P) const {
  auto Header = [&](const InnerLoop &L) {
    return L.Var->getName().str() + ";" + writtenText(Ctx, L.Start) + ";" +
           writtenText(Ctx, L.Cond);
  };
  // Why the first max pass was not fused, for the refusal.
  std::string Why;
  auto Note = [&](const Twine &W) {
    if (Why.empty())
      Why = W.str();
  };
  for (size_t A = 0; A < P.Loops.size(); ++A) {
    const InnerLoop &LA = P.Loops[A];
    // A member of a struct accumulator is no variable to fuse.
    if (LA.Reductions.size() != 1 || LA.Reductions[0].Op != Reduction::Max ||
        LA.Reductions[0].Member)
      continue;
    const clang::VarDecl *M = LA.Reductions[0].Acc;
    std::string MaxAt = "the max pass at " + where(Ctx, LA.For);
    auto Locals = maxPassLocals(Ctx, LA);
    const clang::Expr *Elem = maxElement(LA);
    if (LA.Writes || !Locals || !Elem) {
      Note(MaxAt + " does more than declare locals and keep the max of '" +
           M->getName() + "'");
      continue;
    }
    // The next pass over the same range: `s += expf(e - m)`.
    size_t B = A + 1;
    if (B >= P.Loops.size()) {
      Note(MaxAt + " is the last pass; no pass after it sums 'expf(e - " +
           M->getName() + ")'");
      continue;
    }
    const InnerLoop &LB = P.Loops[B];
    std::string SumAt = "the pass at " + where(Ctx, LB.For);
    // A pass that also stores (stashed exponentials) keeps its stores,
    // run after the combine with the final max.
    const clang::Stmt *SumStmt = nullptr;
    const clang::CallExpr *ExpCall =
        LB.Writes ? stashedExp(LB, M, SumStmt) : summedExp(LB);
    if (LB.Reductions.size() != 1 || LB.Reductions[0].Op != Reduction::Sum ||
        LB.Reductions[0].Member || !ExpCall) {
      if (LB.Writes)
        Note(SumAt + " after " + MaxAt +
             " also writes memory, but does not add 'expf(e - " + M->getName() +
             ")' (or a local holding it) to one sum in a statement of its "
             "own that nothing else in the pass reads");
      else
        Note(SumAt + " after " + MaxAt + " does not only sum 'expf(e - " +
             M->getName() + ")'");
      continue;
    }
    bool Widened = false;
    if (Header(LA) != Header(LB)) {
      Widened = startsOneLater(Ctx, P, LA, LB, M, Elem);
      if (!Widened) {
        Note(SumAt + " runs over another range than " + MaxAt +
             " (a max pass may start one element later only when '" +
             M->getName() + "' starts from that element)");
        continue;
      }
    }
    const clang::VarDecl *S = LB.Reductions[0].Acc;
    const auto *Diff =
        dyn_cast<clang::BinaryOperator>(stripCasts(ExpCall->getArg(0)));
    if (!Diff || Diff->getOpcode() != clang::BO_Sub ||
        declOf(Diff->getRHS()) != M ||
        writtenText(Ctx, Diff->getLHS()) != elementText(Ctx, Elem, *Locals)) {
      Note(SumAt + " does not sum 'expf(e - " + M->getName() +
           ")' of the element e = '" + elementText(Ctx, Elem, *Locals) +
           "' whose max " + MaxAt + " keeps");
      continue;
    }
    // Between the passes: nothing may change m or memory (the fused pass
    // reads the elements earlier).
    bool Between = false;
    const clang::Stmt *Bad = nullptr;
    for (const clang::Stmt *St : P.Item.Body) {
      if (St == LB.For)
        break;
      if (Between &&
          (llvm::is_contained(writtenDecls(St), M) || !rowWrites(St).empty()))
        Bad = Bad ? Bad : St;
      if (St == LA.For)
        Between = true;
    }
    if (Bad)
      return reject(E, "not-applicable",
                    "params.online: the statement at " + where(Ctx, Bad) +
                        " between the max pass and the sum pass writes '" +
                        M->getName() + "' or memory");
    Plan::Online O;
    O.MaxLoop = A;
    O.SumLoop = B;
    O.Max = M;
    O.Sum = S;
    O.Elem = Elem;
    O.Locals = *Locals;
    O.MaxFunc = LA.Reductions[0].Func;
    O.Cond = LA.Reductions[0].Cond;
    const clang::FunctionDecl *FD = ExpCall->getDirectCallee();
    O.Exp = (FD && FD->isInStdNamespace() ? "std::" : "") +
            calledName(ExpCall).str();
    O.SumStmt = SumStmt;
    O.Widened = Widened;
    P.Fused = O;
    return Error::success();
  }
  if (!Why.empty())
    return reject(E, "not-applicable", "params.online: " + Why);
  return reject(E, "not-applicable",
                "params.online: no pass computing a max ('m = fmaxf(m, e)') "
                "is followed by a pass over the same range that only sums "
                "'expf(e - m)'");
}

/// Whether \p E reads its value from memory (`row_ptr[r]`, `*p`), directly
/// or through the initializer of a local: a loop bound taken from data, as
/// in CSR, where rows are usually short.
static bool boundFromMemory(const clang::Expr *E, unsigned Depth = 0) {
  if (!E || Depth > 3)
    return false;
  E = E->IgnoreParenImpCasts();
  if (isa<clang::ArraySubscriptExpr>(E))
    return true;
  if (const auto *U = dyn_cast<clang::UnaryOperator>(E))
    return U->getOpcode() == clang::UO_Deref;
  if (const auto *D = dyn_cast<clang::DeclRefExpr>(E))
    if (const auto *V = dyn_cast<clang::VarDecl>(D->getDecl()))
      if (V->hasLocalStorage() && !isa<clang::ParmVarDecl>(V))
        return boundFromMemory(V->getInit(), Depth + 1);
  return false;
}

std::vector<Edit> WarpPerRow::suggest(const EditContext &Ctx, const Edit &E,
                                      const Plan &P) const {
  // Never more threads per block than the kernel's __launch_bounds__
  // allows (its launches would fail).
  std::optional<int64_t> Bound = launchBoundsThreads(P.Kernel.Decl, Ctx.AST);
  auto Make = [&](StringRef Per, int64_t Lanes, int64_t BS) {
    BS = blockWithin(Bound, BS);
    Edit S = E;
    S.Params["per"] = Per.str();
    if (Per != "block")
      S.Params["lanes"] = Lanes;
    S.Params["block_size"] = BS;
    if (Per == "stream")
      return S;
    // Keep rows in registers where that applies; else fuse a softmax's max
    // and sum passes, which saves one read of the row.
    for (StringRef Extra : {"registers", "online"}) {
      Edit R = S;
      R.Params[Extra.str()] = true;
      if (auto Ok = analyze(Ctx, R))
        return R;
      else
        consumeError(Ok.takeError());
    }
    return S;
  };
  if (!P.RowMax) {
    // Row lengths are only known at run time. Rows whose bounds are read
    // from memory (CSR) are usually short: groups of 8 lanes first, then 4
    // (the suite's SpMV, 8-24 nonzeros per row, ran 1.33x faster than
    // thread-per-row with 8 lanes and 0.70x with a full warp on the H200;
    // side by side on an H100, 4 lanes took 0.403 ms where 8 took 0.469,
    // run 2026-12-07-spmv-conv2d-s31). Where the rows are CSR rows the
    // stream form takes (planStream), 64 rows per block of 256 threads
    // first: 0.363 ms in that run, 0.95x cuSPARSE's time; generated with
    // two terms per thread per chunk 0.354 ms against cuSPARSE's 0.348,
    // with one 0.410, with four 0.358 (H100, run
    // 2026-12-08-stream-spmv-conv2d): terms=2 first, then 1. Dense rows
    // of a run-time length (softmax, norms, GEMV) are usually long: a
    // full warp first.
    bool Sparse = llvm::any_of(P.Loops, [](const InnerLoop &L) {
      return boundFromMemory(L.Start) ||
             (L.Cond && boundFromMemory(L.Cond->getRHS()));
    });
    if (Sparse) {
      std::vector<Edit> Out;
      Edit St = Make("stream", 4, 256);
      if (auto Ok = analyze(Ctx, St)) {
        Edit Two = St;
        Two.Params["terms"] = int64_t(2);
        Out.push_back(std::move(Two));
        Out.push_back(St);
      } else {
        consumeError(Ok.takeError());
      }
      for (Edit W : {Make("warp", 8, 256), Make("warp", 4, 256),
                     Make("warp", 32, 256), Make("block", 32, 256)})
        Out.push_back(std::move(W));
      return Out;
    }
    return {Make("warp", 32, 256), Make("warp", 8, 256),
            Make("block", 32, 256)};
  }
  int64_t L = *P.RowMax;
  int64_t Lanes = std::clamp<int64_t>(nextPowerOfTwo(L), 4, 32);
  // About 16 elements per thread in the block form.
  int64_t BS = std::clamp<int64_t>(nextPowerOfTwo((L + 15) / 16), 128, 1024);
  Edit W = Make("warp", Lanes, 256), B = Make("block", 32, BS);
  if (L > 32 * 16)
    return {B, W};
  return {W, B};
}

} // namespace warpperrow
} // namespace optiml
