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

Error WarpPerRow::planRegisters(const EditContext &Ctx, const Edit &E,
                                Plan &P) const {
  auto Refuse = [&](const Twine &Why) {
    return reject(E, "not-applicable", "params.registers: " + Why);
  };
  // The passes over one range (same start, same end) that read each array
  // at the loop's element.
  auto Header = [&](const InnerLoop &L) {
    return writtenText(Ctx, L.Start) + ";" +
           writtenText(Ctx, L.Cond->getRHS()) +
           (L.Cond->getOpcode() == clang::BO_LE ? "<=" : "<");
  };
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
      if (P.Fused && I == P.Fused->SumLoop)
        continue; // folded into the max pass
      std::vector<size_t> &Ls = Passes[D];
      if (Ls.empty())
        Arrays.push_back(D);
      if (Ls.empty() ||
          (Ls.back() != I && Header(P.Loops[Ls.front()]) == Header(P.Loops[I])))
        if (!llvm::is_contained(Ls, I))
          Ls.push_back(I);
    }
  std::string Key;
  for (const clang::ValueDecl *D : Arrays) {
    const std::vector<size_t> &Ls = Passes[D];
    if (Ls.size() < 2 || Mixed.count(D))
      continue;
    if (Key.empty())
      Key = Header(P.Loops[Ls.front()]);
    if (Header(P.Loops[Ls.front()]) != Key)
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
  if (P.Cached.empty())
    return Refuse("no array is read at the loop's element ('x[j]') by two "
                  "or more passes over the same range; there is nothing to "
                  "keep");
  llvm::sort(P.CachedLoops);
  const InnerLoop &First = P.Loops[P.CachedLoops.front()];
  const InnerLoop &Last = P.Loops[P.CachedLoops.back()];
  // The registers must hold what the memory would: the arrays are not
  // written, and nothing else writes memory before the last pass reads
  // them.
  for (const CachedArray &C : P.Cached) {
    std::string N = C.Array->getName().str();
    for (const clang::Stmt *S : P.Item.Body) {
      for (const MemWrite &W : memoryWrites(S))
        if (declOf(W.Base) == C.Array)
          return Refuse("'" + N + "' is written at " + where(Ctx, W.Target) +
                        "; registers would hold stale values");
      if (llvm::is_contained(writtenDecls(S), C.Array))
        return Refuse("'" + N + "' is reassigned at " + where(Ctx, S));
    }
  }
  bool Between = false;
  for (const clang::Stmt *S : P.Item.Body) {
    if (S == First.For)
      Between = true;
    if (S == Last.For)
      break;
    if (Between && !memoryWrites(S).empty())
      return Refuse("the statement at " + where(Ctx, S) +
                    " writes memory before the last pass that reads '" +
                    P.Cached.front().Array->getName() +
                    "'; registers would hold stale values if they alias");
  }
  RowLength Len = rowLength(Ctx, P, First);
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

Error WarpPerRow::planOnline(const EditContext &Ctx, const Edit &E,
                             Plan &P) const {
  auto Single = [](const clang::Stmt *F) -> const clang::Expr * {
    const auto *For = dyn_cast<clang::ForStmt>(F);
    if (!For)
      return nullptr;
    std::vector<const clang::Stmt *> B = bodyStmts(For->getBody());
    return B.size() == 1 ? dyn_cast<clang::Expr>(B.front()) : nullptr;
  };
  auto Header = [&](const InnerLoop &L) {
    return L.Var->getName().str() + ";" + writtenText(Ctx, L.Start) + ";" +
           writtenText(Ctx, L.Cond);
  };
  for (size_t A = 0; A < P.Loops.size(); ++A) {
    const InnerLoop &LA = P.Loops[A];
    if (LA.Reductions.size() != 1 || LA.Writes ||
        LA.Reductions[0].Op != Reduction::Max)
      continue;
    // `m = fmaxf(m, e)`: the element e.
    const auto *Asg = dyn_cast_or_null<clang::BinaryOperator>(Single(LA.For));
    const auto *Call =
        Asg ? dyn_cast<clang::CallExpr>(stripCasts(Asg->getRHS())) : nullptr;
    if (!Call || Call->getNumArgs() != 2)
      continue;
    const clang::VarDecl *M = LA.Reductions[0].Acc;
    const clang::Expr *Elem =
        declOf(Call->getArg(0)) == M ? Call->getArg(1) : Call->getArg(0);
    // The next pass over the same range: `s += expf(e - m)`.
    size_t B = A + 1;
    if (B >= P.Loops.size())
      continue;
    const InnerLoop &LB = P.Loops[B];
    if (LB.Reductions.size() != 1 || LB.Writes ||
        LB.Reductions[0].Op != Reduction::Sum || Header(LA) != Header(LB))
      continue;
    const clang::VarDecl *S = LB.Reductions[0].Acc;
    const clang::Expr *Term = nullptr;
    const clang::Expr *SB = Single(LB.For);
    if (!SB)
      continue;
    SB = SB->IgnoreParenImpCasts();
    if (const auto *CA = dyn_cast<clang::CompoundAssignOperator>(SB)) {
      if (CA->getOpcode() == clang::BO_AddAssign)
        Term = CA->getRHS();
    } else if (const auto *BA = dyn_cast<clang::BinaryOperator>(SB)) {
      if (const auto *Sum =
              dyn_cast<clang::BinaryOperator>(stripCasts(BA->getRHS())))
        if (Sum->getOpcode() == clang::BO_Add)
          Term = declOf(Sum->getLHS()) == S ? Sum->getRHS() : Sum->getLHS();
    }
    const auto *ExpCall =
        Term ? dyn_cast<clang::CallExpr>(stripCasts(Term)) : nullptr;
    const clang::FunctionDecl *FD =
        ExpCall ? ExpCall->getDirectCallee() : nullptr;
    if (!FD || !FD->getIdentifier() || ExpCall->getNumArgs() != 1 ||
        !(FD->getName() == "expf" || FD->getName() == "exp" ||
          FD->getName() == "__expf"))
      continue;
    const auto *Diff =
        dyn_cast<clang::BinaryOperator>(stripCasts(ExpCall->getArg(0)));
    if (!Diff || Diff->getOpcode() != clang::BO_Sub ||
        declOf(Diff->getRHS()) != M ||
        writtenText(Ctx, Diff->getLHS()) != writtenText(Ctx, Elem))
      continue;
    // Between the passes: nothing may change m or memory (the fused pass
    // reads the elements earlier).
    bool Between = false;
    const clang::Stmt *Bad = nullptr;
    for (const clang::Stmt *St : P.Item.Body) {
      if (St == LB.For)
        break;
      if (Between && (llvm::is_contained(writtenDecls(St), M) ||
                      !memoryWrites(St).empty()))
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
    O.MaxFunc = LA.Reductions[0].Func;
    O.Exp = (FD->isInStdNamespace() ? "std::" : "") + FD->getName().str();
    P.Fused = O;
    return Error::success();
  }
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
  auto Make = [&](StringRef Per, int64_t Lanes, int64_t BS) {
    Edit S = E;
    S.Params["per"] = Per.str();
    if (Per == "warp")
      S.Params["lanes"] = Lanes;
    S.Params["block_size"] = BS;
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
    // from memory (CSR) are usually short: groups of 8 lanes first (the
    // suite's SpMV, 8-24 nonzeros per row, ran 1.33x faster than
    // thread-per-row with 8 lanes and 0.70x with a full warp on the H200).
    // Dense rows of a run-time length (softmax, norms, GEMV) are usually
    // long: a full warp first.
    bool Sparse = llvm::any_of(P.Loops, [](const InnerLoop &L) {
      return boundFromMemory(L.Start) ||
             (L.Cond && boundFromMemory(L.Cond->getRHS()));
    });
    if (Sparse)
      return {Make("warp", 8, 256), Make("warp", 32, 256),
              Make("block", 32, 256)};
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
