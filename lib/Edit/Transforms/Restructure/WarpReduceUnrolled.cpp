//===- WarpReduceUnrolled.cpp - warp-reduce: a tree written out -----------===//
//
// The CUDA samples' unrolled tree: the loop's steps written one by one,
// each under a condition on the block size (a template parameter or a
// constant) with its barrier, then the last warp's steps in a helper or
// inline, through volatile shared memory:
//   if (BLOCK >= 512) { if (tid < 256) s[tid] += s[tid + 256]; __syncthreads();
//   } if (BLOCK >= 256) { if (tid < 128) s[tid] += s[tid + 128];
//   __syncthreads(); }
//   ...
//   if (tid < 32) warp_reduce<BLOCK>(s, tid);
// (or `if (tid < K) step; __syncthreads();` without a condition). Which
// steps run is known per instantiation: every launch must run exactly the
// strides its block needs, B/2 down to 1, so that the block's values all
// reach s[0]; the rest of the match is the loop's (TreeMatcher::finish).
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
#include "clang/AST/Stmt.h"

using namespace clang;
using namespace llvm;

namespace optiml {
namespace warpreduce {

namespace {

/// Whether \p S is or contains a block barrier.
bool hasBarrier(const Stmt *S) {
  if (!S)
    return false;
  if (isBarrier(S))
    return true;
  return any_of(S->children(), [](const Stmt *C) { return hasBarrier(C); });
}

/// `if (C) X` without else, init or variable: C and X (a block of one
/// statement read as that statement).
std::optional<std::pair<const Expr *, const Stmt *>> plainIf(const Stmt *S) {
  const auto *If = dyn_cast_or_null<IfStmt>(S);
  if (!If || If->getElse() || If->getInit() || If->getConditionVariable() ||
      If->isConsteval())
    return std::nullopt;
  const Stmt *Then = If->getThen();
  if (const auto *CS = dyn_cast<CompoundStmt>(Then); CS && CS->size() == 1)
    Then = CS->body_front();
  return std::make_pair(If->getCond(), Then);
}

/// Whether \p E reads no variable, thread index or call: constants and
/// template parameters only (a condition on the block size).
bool onlyConstants(const Stmt *E) {
  if (!E || isa<CallExpr>(E))
    return false;
  if (const auto *D = dyn_cast<DeclRefExpr>(E)) {
    const auto *V = dyn_cast<VarDecl>(D->getDecl());
    return !V || V->isConstexpr();
  }
  return all_of(E->children(), [](const Stmt *C) { return onlyConstants(C); });
}

} // namespace

Error TreeMatcher::walkUnrolledTail(const Stmt *Then, bool Evaluate,
                                    UnrolledWalk &W) {
  const ValueDecl *Base = W.A;
  std::function<bool(const Expr *)> IsTid = [&](const Expr *X) {
    return isTid(X);
  };
  std::vector<const Stmt *> Steps;
  auto Bad = [&](const Stmt *At) {
    return no("the last warp's steps at " + at(At) +
                  " are not 'A[tid] += A[tid + K];' for K = 32, 16, ..., 1, "
                  "each maybe under a condition on the block size",
              At);
  };
  if (const auto *Call = dyn_cast<CallExpr>(Then)) {
    if (Call->getNumArgs() != 2 || declOf(Call->getArg(0)) != W.A ||
        !isTid(Call->getArg(1)))
      return Bad(Then);
    const FunctionDecl *FD = Call->getDirectCallee();
    const FunctionDecl *Def = nullptr;
    if (!FD || !FD->hasBody(Def) || Def->getNumParams() != 2) {
      if (Evaluate)
        return Bad(Then);
      return Error::success(); // a call in a template, seen per instance
    }
    Base = Def->getParamDecl(0);
    const ParmVarDecl *T = Def->getParamDecl(1);
    if (is_contained(writtenDecls(Def->getBody()), T))
      return Bad(Then);
    IsTid = [T](const Expr *X) { return declOf(X) == T; };
    if (const auto *CS = dyn_cast<CompoundStmt>(Def->getBody()))
      Steps.assign(CS->body_begin(), CS->body_end());
  } else {
    Steps = lastWarpBlockSteps(Then, W.A, Base);
  }
  if (Steps.empty())
    return Bad(Then);
  for (const Stmt *X : Steps) {
    if (isCallTo(X, "__syncwarp"))
      continue;
    const Stmt *StepS = X;
    std::optional<bool> Runs = true;
    if (auto If = plainIf(X)) {
      if (!onlyConstants(If->first))
        return Bad(X);
      StepS = If->second;
      Runs = std::nullopt;
      bool R = false;
      if (!If->first->isValueDependent() &&
          If->first->EvaluateAsBooleanCondition(R, Ctx.AST))
        Runs = R;
      if (!Runs && Evaluate)
        return Bad(X);
    }
    const Expr *Off = step(StepS, Base, IsTid);
    if (!Off)
      return Bad(X);
    ++W.Steps;
    if (!Evaluate || !*Runs)
      continue;
    std::optional<int64_t> K = intValue(Off, Ctx.AST);
    if (!K || *K < 1 || *K > 32)
      return no("the last warp's step at " + at(X) +
                    " adds an element more than 32 away: only the first "
                    "warp runs it",
                X);
    W.Strides.push_back(*K);
  }
  return Error::success();
}

// Why long: one walk over the statement forms a written-out tree may
// take (a step under a condition with its barrier, a step followed by a
// barrier, the last warp's steps), each checked where it is met.
Error TreeMatcher::walkUnrolled(ArrayRef<const Stmt *> Stmts, unsigned First,
                                bool Evaluate, UnrolledWalk &W) {
  // `if (tid < K) A[tid] op= A[tid + K];`: K, or null.
  auto Guarded = [&](const Stmt *X, const Stmt *&StepS) -> const Expr * {
    auto If = plainIf(X);
    auto C = If ? binaryOf(If->first) : std::nullopt;
    if (!C || C->Op != BO_LT || !isTid(C->L))
      return nullptr;
    StepS = If->second;
    if (!W.A)
      if (auto B = binaryOf(StepS))
        if (const auto *AS = dyn_cast<ArraySubscriptExpr>(strip(B->L))) {
          W.A = declOf(AS->getBase());
          W.FirstStep = StepS;
          W.Tid = C->L;
        }
    const Expr *Off =
        W.A ? step(StepS, W.A, [&](const Expr *Y) { return isTid(Y); })
            : nullptr;
    if (!Off)
      return nullptr;
    auto KV = intValue(C->R, Ctx.AST), OV = intValue(Off, Ctx.AST);
    bool Same = KV && OV ? *KV == *OV : text(C->R) == text(Off);
    return Same ? C->R : nullptr;
  };
  auto Stride = [&](const Expr *KE, const Stmt *At) -> Error {
    ++W.Steps;
    if (!Evaluate)
      return Error::success();
    std::optional<int64_t> K = intValue(KE, Ctx.AST);
    if (!K || *K < 1)
      return no("the tree's step at " + at(At) + " has no constant stride", At);
    W.Strides.push_back(*K);
    return Error::success();
  };
  unsigned I = First;
  for (; I < Stmts.size(); ++I) {
    const Stmt *X = Stmts[I];
    const Stmt *StepS = nullptr;
    // `if (tid < K) step;` then `__syncthreads();`.
    if (I + 1 < Stmts.size() && isBarrier(Stmts[I + 1]))
      if (const Expr *KE = Guarded(X, StepS)) {
        if (Error Err = Stride(KE, X))
          return Err;
        ++I;
        continue;
      }
    auto If = plainIf(X);
    if (!If)
      break;
    // The last warp: `if (tid < 32) ...`, the end of the tree.
    auto C = binaryOf(If->first);
    if (C && C->Op == BO_LT && isTid(C->L) && intValue(C->R, Ctx.AST) == 32 &&
        W.A) {
      if (Error Err = walkUnrolledTail(If->second, Evaluate, W))
        return Err;
      ++I;
      break;
    }
    // `if (BLOCK >= 2K) { if (tid < K) step; __syncthreads(); }`.
    const auto *CS = dyn_cast<CompoundStmt>(cast<IfStmt>(X)->getThen());
    if (!onlyConstants(If->first) || !CS || CS->size() != 2 ||
        !isBarrier(CS->body_back()))
      break;
    const Expr *KE = Guarded(CS->body_front(), StepS);
    if (!KE)
      break;
    std::optional<bool> Runs;
    bool R = false;
    if (!If->first->isValueDependent() &&
        If->first->EvaluateAsBooleanCondition(R, Ctx.AST))
      Runs = R;
    if (!Runs && (Evaluate || !If->first->isValueDependent()))
      return no("the condition '" + text(If->first) + "' at " + at(X) +
                    " is not a constant",
                X);
    if (!Runs || !*Runs) {
      // Written, but not run (or, in a template, known per instance).
      ++W.Steps;
      continue;
    }
    if (Error Err = Stride(KE, X))
      return Err;
  }
  W.End = I;
  return Error::success();
}

Expected<TreePlan> TreeMatcher::matchUnrolled(const Stmt *Leave,
                                              const Stmt *Return) {
  auto Stmts = Body->body();
  std::vector<const Stmt *> List(Stmts.begin(), Stmts.end());
  // The first `if` with a barrier inside or right after it.
  unsigned First = 0;
  while (First < List.size() &&
         !(isa<IfStmt>(List[First]) &&
           (hasBarrier(List[First]) ||
            (First + 1 < List.size() && isBarrier(List[First + 1])))))
    ++First;
  if (First == List.size())
    return no("no shared-memory tree loop 'for (... s = blockDim.x / 2; s > 0; "
              "s >>= 1)' at the top level of the kernel");
  UnrolledWalk W;
  Error Walked = walkUnrolled(List, First, /*Evaluate=*/false, W);
  // Found once a step is written (else the kernel may be per-thread
  // atomics beside other shared memory).
  Unrolled = W.Steps && W.FirstStep;
  if (Walked)
    return std::move(Walked);
  if (Unrolled && Return)
    return no("returns at " + at(Return) +
                  ": every lane of a warp must reach the shuffles (only "
                  "'if (tid != 0) return;' after the tree, before thread "
                  "0's statements, is accepted)",
              Return);
  if (!Unrolled)
    return no("no tree loop at the top level of the kernel, and the "
              "statement at " +
                  at(List[First]) +
                  " is not a step of a tree written out one by one ('if "
                  "(tid < K) a[tid] += a[tid + K]; __syncthreads();', maybe "
                  "under 'if (BLOCK >= 2 * K)')",
              List[First]);
  P.Tid = text(W.Tid);
  bool ViaHelper = false;
  if (Error Err = matchArray(W.FirstStep, ViaHelper))
    return std::move(Err);
  UnrolledFirst = First;
  UnrolledEnd = W.End;
  TreeShape Sh;
  Sh.Begin = Stmts.begin() + First;
  Sh.End = Stmts.begin() + W.End;
  Sh.First = List[First];
  Sh.Parts.assign(List.begin() + First, List.begin() + W.End);
  return finish(Sh, Leave, ViaHelper);
}

Error TreeMatcher::checkUnrolledLaunches() {
  const KernelInfo &Info = *K.Info;
  if (Info.Launches.empty())
    return no("the tree is written out step by step and the kernel is not "
              "launched in this file: which steps run depends on the block "
              "size, unknown here");
  for (const LaunchSite &L : Info.Launches) {
    KernelInfo One = Info;
    One.Launches = {L};
    std::string Why;
    auto Blocks = launchBlockSizesX(Ctx, One, Why);
    const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
    const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
    const auto *FB =
        FD ? dyn_cast_or_null<CompoundStmt>(FD->getBody()) : nullptr;
    if (!Blocks || Blocks->size() != 1 || !FB)
      return no(
          "the tree is written out step by step, so which steps run "
          "depends on the block size, and " +
          (Why.empty() ? "launch " + L.Id + "'s kernel is not known" : Why));
    int64_t B = Blocks->front();
    UnrolledWalk W;
    std::vector<const Stmt *> List(FB->body_begin(), FB->body_end());
    if (Error Err = walkUnrolled(List, UnrolledFirst, /*Evaluate=*/true, W))
      return Err;
    std::vector<int64_t> Want;
    for (int64_t S = B / 2; S >= 1; S /= 2)
      Want.push_back(S);
    auto Join = [](ArrayRef<int64_t> V) {
      std::string Out;
      for (int64_t X : V)
        Out += (Out.empty() ? "" : ", ") + std::to_string(X);
      return Out.empty() ? std::string("none") : Out;
    };
    if (W.End != UnrolledEnd || W.Strides != Want)
      return no("launch " + L.Id + " uses blocks of " + std::to_string(B) +
                " threads, whose tree needs the strides " + Join(Want) +
                ", but the steps written out run " + Join(W.Strides));
    const auto *AV = dyn_cast_or_null<VarDecl>(W.A);
    if (const auto *CA =
            AV ? Ctx.AST.getAsConstantArrayType(AV->getType()) : nullptr;
        CA && CA->getSize().getSExtValue() < B)
      return no("launch " + L.Id + " uses blocks of " + std::to_string(B) +
                " threads, more than '" + P.ArrayName + "' holds (" +
                std::to_string(CA->getSize().getSExtValue()) + ")");
  }
  return Error::success();
}

} // namespace warpreduce
} // namespace optiml
