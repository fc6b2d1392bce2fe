//===- VectorizeKeepBlocks.cpp - vectorize keeping every block's elements -===//
//
// vectorize's second form (`blocks: "keep"`), for 1D maps whose body reads
// its block (`bias[blockIdx.x]`, gridDim.x, blockDim.x) or whose index
// steps by a constant equal to every launch's block:
//   int i = blockIdx.x * B + threadIdx.x;      // B: blockDim.x or constant
//   if (blockIdx.x > 0 && i < n) out[i] += sums[blockIdx.x - 1];
// The grid stays, the block shrinks by W: thread t of block b takes the
// elements that threads t * W .. t * W + W - 1 of block b took, each
// index computed by the original initializer with threadIdx.x replaced by
// `(threadIdx.x * W + k)` (and blockDim.x by `(blockDim.x * W)`):
//   int first = blockIdx.x * B + (threadIdx.x * 4 + 0);
//   bool full = true;
//   for (int k = 0; k < 4; ++k) {
//     int i = blockIdx.x * B + (threadIdx.x * 4 + k);
//     full = full && <i is first + k> && (blockIdx.x > 0 && i < n);
//   }
//   if (full && <every array + first aligned to its vector>) {
//     <vectorize's vector path: loads at out + first, lane copies of the
//      body with i = (first + K), sums[blockIdx.x - 1] kept, stores>
//   } else {
//     for (int k = 0; k < 4; ++k) {
//       int i = blockIdx.x * B + (threadIdx.x * 4 + k);
//       if (blockIdx.x > 0 && i < n) out[i] += sums[blockIdx.x - 1];
//     }
//   }
// and every launch's block x extent is divided by W (`B` -> `B / 4`).
//
// A map without a bounds guard (BabelStream's `c[i] = a[i] + b[i];`, its
// grid exactly n / B blocks) takes the same form with no guard: every
// thread of the original reached its element, so the W elements of a
// thread here were all reached; the guard-free body must access memory
// only unconditionally (not under an if, loop, ?:, && or ||), so every
// element the vector path loads or stores was loaded or stored by the
// original too.
//
// Why it is exact: each element is computed by the same statements, with
// the same i, blockIdx, gridDim and blockDim.x (written as the original
// block) as before, by one thread instead of W; the guard is read for all
// W elements first (it reads only the index, parameters, constants and
// block indices, so reading it again changes nothing), and the vector path
// runs only when all W pass it, their indices are consecutive and every
// array's vector is aligned. The vector path is vectorize's own
// (vectorBody()).
//
// Preconditions (else refused with the reason): the kernel is exactly the
// index declaration and `if (cond) body` (no else); the guard has a
// conjunct `i < bound` and reads nothing but the index, parameters,
// constants and block indices; every global access is p[i] as in the
// grid-stride form, or a read at an index the same for the whole block
// (parameters, constants, blockIdx, gridDim) of an array not written;
// threadIdx appears only in the index; no barrier, shuffle, vote, shared
// memory, early return, thread-shape helper, or write of a variable the
// body does not declare; every launch's block is known at the launch, a
// multiple of W (and, with a constant stride, equal to it).
//
//===----------------------------------------------------------------------===//

#include "VectorizeInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

using namespace clang;
using namespace llvm;

namespace optiml {

namespace {

/// What an expression of the form that keeps the blocks reads: its uses of
/// the index, threadIdx.x and blockDim.x (recorded, BlockDim set for
/// blockDim.x), threadIdx, locals other than the index, and anything that
/// is not plain arithmetic on values (a call other than the builtin
/// indices', an access, an assignment, a macro hiding an index).
struct KeepScan : RecursiveASTVisitor<KeepScan> {
  const EditContext &Ctx;
  const ValueDecl *Index;
  std::vector<BodyUse> Uses;
  unsigned ThreadX = 0;
  bool Thread = false, Local = false, Impure = false;
  KeepScan(const EditContext &Ctx, const ValueDecl *Index)
      : Ctx(Ctx), Index(Index) {}
  bool record(const Expr *E, bool BlockDim) {
    auto Span = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                         E->getSourceRange(), Ctx.file());
    Impure |= !Span;
    if (Span && (Uses.empty() || Uses.back().Offset != Span->Begin.Offset))
      Uses.push_back({Span->Begin.Offset, Span->End.Offset - Span->Begin.Offset,
                      std::nullopt, BlockDim});
    return true;
  }
  bool VisitMSPropertyRefExpr(MSPropertyRefExpr *E) {
    auto B = asBuiltinVar(E);
    if (!B)
      return true;
    if (B->Var == "threadIdx") {
      Thread = true;
      if (B->Dim == 'x')
        ++ThreadX;
      return B->Dim != 'x' || record(E, false);
    }
    return B->Var != "blockDim" || B->Dim != 'x' || record(E, true);
  }
  bool VisitDeclRefExpr(DeclRefExpr *DR) {
    if (DR->getDecl() == Index)
      return record(DR, false);
    const auto *V = dyn_cast<VarDecl>(DR->getDecl());
    Local |= V && V->isLocalVarDecl();
    return true;
  }
  bool VisitCallExpr(CallExpr *C) {
    const FunctionDecl *F = C->getDirectCallee();
    Impure |= !F || !F->getName().starts_with("__fetch_builtin");
    return true;
  }
  bool VisitStmt(Stmt *S) {
    const auto *U = dyn_cast<UnaryOperator>(S);
    const auto *B = dyn_cast<BinaryOperator>(S);
    Impure |=
        isa<ArraySubscriptExpr>(S) ||
        (U && (U->isIncrementDecrementOp() || U->getOpcode() == UO_Deref)) ||
        (B && B->isAssignmentOp());
    return true;
  }
};

/// The S of an index `blockIdx.x * S + threadIdx.x` (an integer of at
/// least 32 bits, in any order and through casts): 0 for blockDim.x, the
/// constant otherwise; nothing for another index.
std::optional<int64_t> blockStride(const VarDecl *V, const ASTContext &AST) {
  QualType T = V->getType();
  if (!V->getInit() || !T->isIntegerType() || T->isBooleanType() ||
      T->isDependentType() || AST.getTypeSize(T) < 32)
    return std::nullopt;
  if (auto L = linearIndexByMeaning(V->getInit(), AST))
    return L->Dim == 'x' && !L->GridRows ? std::optional<int64_t>(0)
                                         : std::nullopt;
  const auto *Add =
      dyn_cast<BinaryOperator>(V->getInit()->IgnoreParenImpCasts());
  if (!Add || Add->getOpcode() != BO_Add)
    return std::nullopt;
  const Expr *Tid = Add->getRHS(), *Blocks = Add->getLHS();
  if (!asBuiltinVar(Tid))
    std::swap(Tid, Blocks);
  const auto *Mul = dyn_cast<BinaryOperator>(Blocks->IgnoreParenImpCasts());
  auto B = asBuiltinVar(Tid);
  if (!B || B->Var != "threadIdx" || B->Dim != 'x' || !Mul ||
      Mul->getOpcode() != BO_Mul)
    return std::nullopt;
  const Expr *Bid = Mul->getLHS(), *Stride = Mul->getRHS();
  if (!asBuiltinVar(Bid))
    std::swap(Bid, Stride);
  auto Bx = asBuiltinVar(Bid);
  std::optional<int64_t> C = intValue(Stride, AST);
  if (!Bx || Bx->Var != "blockIdx" || Bx->Dim != 'x' || !C || *C < 1)
    return std::nullopt;
  return C;
}

/// Whether \p C, a guard, has a conjunct `Index < bound`.
bool hasBoundConjunct(const Expr *C, const ValueDecl *Index) {
  const auto *B = dyn_cast<BinaryOperator>(C->IgnoreParenImpCasts());
  if (!B)
    return false;
  if (B->getOpcode() == BO_LAnd)
    return hasBoundConjunct(B->getLHS(), Index) ||
           hasBoundConjunct(B->getRHS(), Index);
  return B->getOpcode() == BO_LT &&
         referencedDecl(B->getLHS()->IgnoreParenImpCasts()) == Index;
}

/// Whether \p S declares only locals whose values are the same for every
/// thread of a block before and after the rewrite: initialized from
/// parameters, constants and block indices, without calls, accesses,
/// threadIdx or blockDim (the block shrinks), and not an index.
bool uniformDecl(const EditContext &Ctx, const Stmt *S) {
  const auto *DS = dyn_cast<DeclStmt>(S);
  if (!DS)
    return false;
  for (const Decl *D : DS->decls()) {
    const auto *V = dyn_cast<VarDecl>(D);
    if (!V || !V->isLocalVarDecl() || V->isStaticLocal() || !V->getInit() ||
        V->hasAttr<CUDASharedAttr>() || V->getType()->isReferenceType() ||
        blockStride(V, Ctx.AST))
      return false;
    KeepScan Scan(Ctx, nullptr);
    Scan.TraverseStmt(const_cast<Expr *>(V->getInit()));
    if (Scan.Thread || Scan.Impure || !Scan.Uses.empty())
      return false;
  }
  return true;
}

/// Whether \p S holds a return statement (outside lambdas).
bool hasReturn(const Stmt *S) {
  struct Finder : RecursiveASTVisitor<Finder> {
    bool Found = false;
    bool VisitReturnStmt(ReturnStmt *) { return !(Found = true); }
    bool TraverseLambdaExpr(LambdaExpr *) { return true; }
  } F;
  F.TraverseStmt(const_cast<Stmt *>(S));
  return F.Found;
}

/// The guard (the whole if statement), or without one the body.
std::vector<const Stmt *> guardOrBody(const MapPattern &M) {
  if (M.Guard)
    return {M.Guard};
  return M.Body;
}

/// The first memory access (subscript, `*p`, `p->f`) made under a
/// condition (an if, loop, switch, `?:`, `&&` or `||` that the statement
/// holds), or null.
const Expr *conditionalAccess(const Stmt *S) {
  struct Finder : RecursiveASTVisitor<Finder> {
    unsigned Depth = 0;
    const Expr *Found = nullptr;
    bool under(Stmt *Cond, ArrayRef<Stmt *> Branches) {
      if (Cond && !TraverseStmt(Cond))
        return false;
      ++Depth;
      for (Stmt *B : Branches)
        if (B && !TraverseStmt(B))
          return false;
      --Depth;
      return true;
    }
    bool TraverseIfStmt(IfStmt *If) {
      return under(If->getCond(), {If->getThen(), If->getElse()});
    }
    bool TraverseForStmt(ForStmt *F) {
      return under(F->getInit(), {F->getCond(), F->getInc(), F->getBody()});
    }
    bool TraverseWhileStmt(WhileStmt *W) {
      return under(nullptr, {W->getCond(), W->getBody()});
    }
    bool TraverseDoStmt(DoStmt *D) {
      return under(nullptr, {D->getBody(), D->getCond()});
    }
    bool TraverseSwitchStmt(SwitchStmt *Sw) {
      return under(Sw->getCond(), {Sw->getBody()});
    }
    bool TraverseConditionalOperator(ConditionalOperator *C) {
      return under(C->getCond(), {C->getTrueExpr(), C->getFalseExpr()});
    }
    bool TraverseBinaryOperator(BinaryOperator *B) {
      if (!B->isLogicalOp())
        return RecursiveASTVisitor::TraverseBinaryOperator(B);
      return under(B->getLHS(), {B->getRHS()});
    }
    bool access(Expr *E) {
      if (Depth == 0)
        return true;
      Found = E;
      return false;
    }
    bool VisitArraySubscriptExpr(ArraySubscriptExpr *E) { return access(E); }
    bool VisitUnaryOperator(UnaryOperator *U) {
      return U->getOpcode() != UO_Deref || access(U);
    }
    bool VisitMemberExpr(MemberExpr *M) { return !M->isArrow() || access(M); }
  } F;
  F.TraverseStmt(const_cast<Stmt *>(S));
  return F.Found;
}

/// Why the body of the form that keeps the blocks cannot run for W
/// elements in one thread (records its accesses); "" when it can.
std::string keepBodyProblem(const EditContext &Ctx, VectorizePlan &Plan) {
  const MapPattern &M = Plan.Map;
  const SourceManager &SM = Ctx.AST.getSourceManager();
  for (const Stmt *S : M.Body)
    for (StringRef F : {"__syncthreads", "__syncwarp", "__shfl", "__ballot",
                        "__any_sync", "__all_sync"})
      if (callsFunction(S, F))
        return "the body calls '" + F.str() +
               "', which works with the other threads of the block";
  if (std::string Why = threadShapeCallProblem(M.Body, SM); !Why.empty())
    return Why;
  for (const Stmt *S : guardOrBody(M))
    if (writtenVars(S).contains(M.Index))
      return "the body writes the index '" + M.IndexName + "'";
  struct Finder : RecursiveASTVisitor<Finder> {
    bool Return = false, Shared = false;
    bool VisitReturnStmt(ReturnStmt *) { return !(Return = true); }
    bool VisitVarDecl(VarDecl *V) {
      Shared |= V && V->hasAttr<CUDASharedAttr>();
      return true;
    }
    bool VisitDeclRefExpr(DeclRefExpr *DR) {
      return VisitVarDecl(dyn_cast<VarDecl>(DR->getDecl()));
    }
    bool TraverseLambdaExpr(LambdaExpr *) { return true; }
  } F;
  for (const Stmt *S : guardOrBody(M))
    F.TraverseStmt(const_cast<Stmt *>(S));
  if (F.Return || F.Shared)
    return F.Return ? "the body returns early" : "the body uses shared memory";
  if (std::string Why = walkMapBody(Ctx, Plan); !Why.empty())
    return Why;
  if (Plan.Arrays.empty())
    return "the body accesses no global array at '" + M.IndexName + "'";
  for (auto &[Key, U] : Plan.Arrays) {
    if (U.Written && Plan.BlockReads.count(Key))
      return "'" + U.Text +
             "' is written at the thread's own element and read at an index "
             "the same for the whole block: the original's threads race on "
             "it";
  }
  if (std::string Why = resolveDependentTypes(Ctx, Plan); !Why.empty())
    return Why;
  return outsideWriteProblem(Ctx, M.Body, M.Index);
}

/// Each launch's block along x, read at the launch; with a constant
/// stride \p S, equal to it. The reason otherwise.
std::string keepBlocks(const EditContext &Ctx, VectorizePlan &Plan, int64_t S) {
  const KernelInfo &K = *Plan.Kernel.Info;
  if (K.Launches.empty())
    return "it is never launched in this file, so the block it is "
           "launched with cannot be shrunk";
  if (std::string Why = launchProblem(K); !Why.empty())
    return Why;
  for (const LaunchSite &L : K.Launches) {
    std::optional<int64_t> X = blockExtentAt(Ctx, L, 0);
    if (!X)
      return "the block of launch " + L.Id + " ('" + L.Block +
             "') cannot be read at the launch: keeping the blocks divides "
             "it by the width";
    if (S > 0 && *X != S)
      return "the index steps by " + std::to_string(S) +
             " elements a block, but launch " + L.Id + " runs blocks of " +
             std::to_string(*X) + " threads";
    Plan.Blocks.push_back({&L, *X});
  }
  return "";
}

/// The kernel's shape for the form: the index declaration (statement \p At
/// of \p Body) and the guarded body, with their spans, in \p M; the reason
/// otherwise.
std::string keepShape(const EditContext &Ctx, const CompoundStmt *Body,
                      unsigned At, MapPattern &M) {
  const SourceManager &SM = Ctx.AST.getSourceManager();
  const IfStmt *If = M.Guard;
  M.IndexName = M.Index->getNameAsString();
  M.IndexType = typeName(M.Index->getType().getUnqualifiedType(), Ctx.AST);
  if (!If)
    M.Body.assign(Body->body_begin() + At + 1, Body->body_end());
  else if (const auto *CS = dyn_cast<CompoundStmt>(If->getThen()))
    M.Body.assign(CS->body_begin(), CS->body_end());
  else
    M.Body.push_back(If->getThen());
  auto DSSpan = fileSpan(SM, Ctx.AST.getLangOpts(),
                         M.IndexDecl->getSourceRange(), Ctx.file());
  const Stmt *Last = If ? If : Body->body_back();
  auto IfSpan =
      fileSpan(SM, Ctx.AST.getLangOpts(), Last->getSourceRange(), Ctx.file());
  if (!DSSpan || !IfSpan || (If && !onlyConstantMacros(If, Ctx.AST)))
    return "the index or the guard is written with a macro that names a "
           "variable or calls a function";
  if (!If && any_of(M.Body, [&](const Stmt *St) {
        return !onlyConstantMacros(St, Ctx.AST);
      }))
    return "the body is written with a macro that names a variable or calls "
           "a function";
  for (const Stmt *St : M.Body) {
    auto Sp =
        fileSpan(SM, Ctx.AST.getLangOpts(), St->getSourceRange(), Ctx.file());
    if (!Sp)
      return "the guarded body uses a macro";
    M.BodySpans.push_back(withSemicolon(Ctx, *Sp));
  }
  M.Indent = indentationAt(Ctx.Code, DSSpan->Begin.Offset);
  M.RegionBegin = DSSpan->Begin.Offset;
  M.RegionEnd = withSemicolon(Ctx, *IfSpan).End.Offset;
  return "";
}

/// The launch's block expression to rewrite and its new text for width
/// \p W; the reason when it cannot be.
std::string blockRewrite(const EditContext &Ctx, const LaunchSite &L, int64_t W,
                         SourceSpan &Span, std::string &Text) {
  const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
  if (!Call || !Call->getConfig() || Call->getConfig()->getNumArgs() < 2)
    return "launch " + L.Id + " has no block to divide";
  const Expr *B = Call->getConfig()->getArg(1)->IgnoreImplicit();
  std::string Wd = std::to_string(W);
  // An integer converted to dim3, or dim3(x, ...) written at the launch:
  // x is divided; a dim3 variable: dim3(v.x / W, v.y, v.z).
  const Expr *X = nullptr;
  if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(B))
    B = FC->getSubExpr()->IgnoreImplicit();
  if (const auto *C = dyn_cast<CXXConstructExpr>(B);
      C && C->getNumArgs() >= 1 &&
      !C->getConstructor()->isCopyOrMoveConstructor())
    X = C->getArg(0)->IgnoreImpCasts();
  else if (const auto *C = dyn_cast<CXXConstructExpr>(B);
           C && C->getNumArgs() == 1)
    B = C->getArg(0)->IgnoreImplicit();
  const Expr *Whole = X ? X : B;
  auto Sp = spelledSpan(Ctx, Whole);
  std::string Old = spelledText(Ctx, Whole);
  // A macro constant written whole at the launch (`B`), parenthesized as
  // one value (`#define B 512 + 512`).
  const SourceManager &SM = Ctx.AST.getSourceManager();
  SourceLocation MBegin, MEnd;
  SourceRange R = Whole->getSourceRange();
  if (!Sp && X && R.getBegin().isMacroID() &&
      Lexer::isAtStartOfMacroExpansion(R.getBegin(), SM, Ctx.AST.getLangOpts(),
                                       &MBegin) &&
      Lexer::isAtEndOfMacroExpansion(R.getEnd(), SM, Ctx.AST.getLangOpts(),
                                     &MEnd))
    if ((Sp = fileSpan(SM, Ctx.AST.getLangOpts(), SourceRange(MBegin, MEnd),
                       Ctx.file())))
      Old = "(" +
            StringRef(Ctx.Code).slice(Sp->Begin.Offset, Sp->End.Offset).str() +
            ")";
  if (!Sp)
    return "the block of launch " + L.Id + " is written with a macro";
  Span = *Sp;
  if (isa_and_nonnull<IntegerLiteral>(X) && !R.getBegin().isMacroID())
    Text = std::to_string(*intValue(X, Ctx.AST) / W);
  else if (X)
    Text = parenthesize(Old) + " / " + Wd;
  else if (isa<DeclRefExpr>(B->IgnoreParens()))
    Text = "dim3(" + Old + ".x / " + Wd + ", " + Old + ".y, " + Old + ".z)";
  else
    return "the block of launch " + L.Id + " ('" + L.Block +
           "') is neither an integer, dim3(...) written there nor a dim3 "
           "variable";
  return "";
}

} // namespace

bool keepBlockUniform(const EditContext &Ctx, const Expr *Idx,
                      const ValueDecl *Index) {
  KeepScan Scan(Ctx, Index);
  Scan.TraverseStmt(const_cast<Expr *>(Idx));
  return Scan.Uses.empty() && !Scan.Thread && !Scan.Local && !Scan.Impure &&
         !mentionsBuiltin(Idx, "blockDim");
}

Expected<VectorizePlan> analyzeKeepBlocks(const EditContext &Ctx, const Edit &E,
                                          bool &Shaped) {
  auto K = resolveKernel(Ctx, E, E.Target);
  if (!K)
    return K.takeError();
  auto No = [&](const Twine &Why) {
    return reject(E, "not-applicable", "kernel '" + E.Target + "': " + Why);
  };
  const auto *Body = dyn_cast_or_null<CompoundStmt>(K->Decl->getBody());
  // Declarations the same for every thread of a block may come first
  // (BabelStream's `const T scalar = SCALAR;`); they stay where they are.
  unsigned At = 0;
  while (Body && At + 1 < Body->size() &&
         uniformDecl(Ctx, Body->body_begin()[At]))
    ++At;
  const auto *DS = Body && At + 1 < Body->size()
                       ? dyn_cast<DeclStmt>(Body->body_begin()[At])
                       : nullptr;
  const auto *If = DS && Body->size() == At + 2
                       ? dyn_cast<IfStmt>(Body->body_back())
                       : nullptr;
  const auto *Index = DS && DS->isSingleDecl()
                          ? dyn_cast<VarDecl>(DS->getSingleDecl())
                          : nullptr;
  std::optional<int64_t> S = Index ? blockStride(Index, Ctx.AST) : std::nullopt;
  // Without a bounds guard after the index, everything after it is the
  // body (an if that bounds nothing is part of it).
  if (If && !If->getElse() && !If->getInit() && !If->getConditionVariable() &&
      !hasBoundConjunct(If->getCond(), Index) && !mentionsBuiltin(If))
    If = nullptr;
  if (!DS || !S ||
      (If && (If->getElse() || If->getInit() || If->getConditionVariable())) ||
      K->Info->Uses2DThreads)
    return No("not 'i = blockIdx.x * S + threadIdx.x; if (...) ...', the "
              "form that keeps the blocks");
  // The grid-stride form takes a guarded map that does not read its block,
  // and an early return as the guard.
  Shaped = *S > 0 || (If && mentionsBuiltin(If)) ||
           (!If && none_of(Body->body(), hasReturn));
  VectorizePlan Plan;
  Plan.Kernel = *K;
  Plan.KeepBlocks = true;
  MapPattern &M = Plan.Map;
  M.Index = Index;
  M.IndexDecl = DS;
  M.Guard = If;
  if (std::string Why = keepShape(Ctx, Body, At, M); !Why.empty())
    return No(Why);
  KeepScan Init(Ctx, nullptr), Guard(Ctx, Index);
  Init.TraverseStmt(const_cast<Expr *>(Index->getInit()));
  if (If)
    Guard.TraverseStmt(const_cast<Expr *>(If->getCond()));
  if (Init.Impure || Init.Local || Init.ThreadX != 1)
    return No("the index '" + exprText(Ctx, Index->getInit()) +
              "' must read threadIdx.x once, written out, and no local or "
              "call");
  Plan.IndexUses = std::move(Init.Uses);
  Plan.GuardUses = std::move(Guard.Uses);
  if (If && (Guard.Thread || Guard.Local || Guard.Impure))
    return No("the guard '" + exprText(Ctx, If->getCond()) +
              "' reads more than the index, parameters, constants and "
              "block indices, or calls or accesses something");
  if (If && !hasBoundConjunct(If->getCond(), Index))
    return No("the guard '" + exprText(Ctx, If->getCond()) +
              "' has no conjunct '" + M.IndexName +
              " < bound': the vector path reads and writes whole vectors, "
              "which stay among the map's elements only under such a bound");
  if (!If)
    for (const Stmt *St : M.Body)
      if (const Expr *A = conditionalAccess(St))
        return No("no bounds guard, and '" + exprText(Ctx, A) +
                  "' is accessed under a condition: without a guard the "
                  "vector path may touch only what every thread of the "
                  "original touched");
  if (std::string Why = keepBodyProblem(Ctx, Plan); !Why.empty())
    return No(Why);
  if (std::string Why = keepBlocks(Ctx, Plan, *S); !Why.empty())
    return No(Why);
  return Plan;
}

std::vector<int64_t> keepBlocksWidths(const VectorizePlan &Plan) {
  int64_t MaxWidth = 4;
  for (auto &[Key, U] : Plan.Arrays)
    MaxWidth = std::min(MaxWidth, U.Form.MaxWidth);
  std::vector<int64_t> Widths;
  for (int64_t W : {4, 2})
    if (W <= MaxWidth &&
        all_of(Plan.Blocks, [&](const VectorizePlan::Block &B) {
          return B.X % W == 0 && B.X / W >= 32;
        }))
      Widths.push_back(W);
  return Widths;
}

namespace {

/// \p Span's text with \p Uses applied: the index's threadIdx.x (not
/// BlockDim) becomes \p Thread, blockDim.x `(blockDim.x * W)`; other uses
/// (the index itself) stay unless \p Thread applies to them.
std::string keepSplice(const EditContext &Ctx, unsigned Begin, unsigned End,
                       ArrayRef<const std::vector<BodyUse> *> Uses, int64_t W,
                       StringRef Thread) {
  std::vector<TextEdit> Edits;
  for (const std::vector<BodyUse> *List : Uses)
    for (const BodyUse &U : *List)
      if (U.Offset >= Begin && U.Offset + U.Length <= End &&
          (U.BlockDim || (!U.Array && !Thread.empty())))
        Edits.push_back({U.Offset, U.Length,
                         U.BlockDim ? "(blockDim.x * " + std::to_string(W) + ")"
                                    : Thread.str()});
  return spliceText(Ctx.Code, Begin, End, std::move(Edits));
}

} // namespace

Expected<tooling::Replacements> applyKeepBlocks(const EditContext &Ctx,
                                                const Edit &E,
                                                const VectorizePlan &Plan,
                                                int64_t W) {
  const MapPattern &M = Plan.Map;
  const std::string &I = M.Indent;
  std::string Wd = std::to_string(W);
  for (const VectorizePlan::Block &B : Plan.Blocks)
    if (B.X % W != 0)
      return reject(E, "not-applicable",
                    "kernel '" + E.Target + "': launch " + B.Launch->Id +
                        " runs blocks of " + std::to_string(B.X) +
                        " threads, not a multiple of the width " + Wd);
  StringRef KText = StringRef(Ctx.Code).slice(
      Plan.Kernel.Info->Range.Begin.Offset, Plan.Kernel.Info->Range.End.Offset);
  std::string Taken = KText.str();
  auto Fresh = [&](StringRef Base) {
    std::string N = freshName(Taken, Base);
    Taken += " " + N;
    return N;
  };
  std::string First = Fresh("first"), Full = Fresh("full"), K = Fresh("k");
  const SourceManager &SM = Ctx.AST.getSourceManager();
  auto InitSp = fileSpan(SM, Ctx.AST.getLangOpts(),
                         M.Index->getInit()->getSourceRange(), Ctx.file());
  // Without a guard, the condition is empty and the body's statements
  // stand where the if statement would.
  const Stmt *Guarded =
      M.Guard ? static_cast<const Stmt *>(M.Guard) : M.Body.front();
  auto CondSp = M.Guard
                    ? fileSpan(SM, Ctx.AST.getLangOpts(),
                               M.Guard->getCond()->getSourceRange(), Ctx.file())
                    : InitSp;
  auto IfSp = fileSpan(SM, Ctx.AST.getLangOpts(), Guarded->getSourceRange(),
                       Ctx.file());
  if (!InitSp || !CondSp || !IfSp)
    return reject(E, "macro", "the index or the guard is written with a macro");
  auto InitAt = [&](StringRef Lane) {
    std::string Thread = "threadIdx.x * " + Wd;
    return keepSplice(
        Ctx, InitSp->Begin.Offset, InitSp->End.Offset, {&Plan.IndexUses}, W,
        "(" + (Lane == "0" ? Thread : Thread + " + " + Lane.str()) + ")");
  };
  std::string Cond =
      M.Guard ? keepSplice(Ctx, CondSp->Begin.Offset, CondSp->End.Offset,
                           {&Plan.GuardUses}, W, "")
              : "";
  std::string Decl = M.IndexType + " " + M.IndexName + " = ";
  std::string In2 = I + "  ", In3 = I + "    ";
  std::string Loop =
      "for (int " + K + " = 0; " + K + " < " + Wd + "; ++" + K + ") {\n";
  auto ULL = [](StringRef S) {
    return "static_cast<unsigned long long>(" + S.str() + ")";
  };
  std::string Out = M.IndexType + " " + First + " = " + InitAt("0") + ";\n";
  Out += I + "bool " + Full + " = true;\n" + I + Loop;
  Out += In2 + Decl + InitAt(K) + ";\n";
  Out += In2 + Full + " = " + Full + " && " +
         (Cond.empty() ? "" : "(" + Cond + ") &&\n" + In2 + "       ") +
         ULL(M.IndexName) + " ==\n" + In2 + "           " + ULL(First) + " + " +
         K + ";\n" + I + "}\n";
  std::vector<std::string> Aligned{Full};
  for (auto &[Key, U] : Plan.Arrays)
    Aligned.push_back("reinterpret_cast<unsigned long long>(" + U.Text + " + " +
                      First + ") % " + std::to_string(W * U.Form.Bytes) +
                      " == 0");
  Out += I + "if (" + join(Aligned, " &&\n" + I + "    ") + ") {\n";
  Out += vectorBody(
      Ctx, Plan, W, vectorNames(Plan, Taken), In2,
      [&](const ArrayUse &U) {
        return std::make_pair(U.Text + " + " + First, std::string("0"));
      },
      [&](int64_t L) { return "(" + First + " + " + std::to_string(L) + ")"; });
  std::vector<const std::vector<BodyUse> *> Uses{&Plan.GuardUses};
  for (const std::vector<BodyUse> &S : Plan.Uses)
    Uses.push_back(&S);
  std::string IfText =
      keepSplice(Ctx, IfSp->Begin.Offset, M.RegionEnd, Uses, W, "");
  int Col = int(indentationAt(Ctx.Code, IfSp->Begin.Offset).size());
  std::string Scalar = Loop + In3 + Decl + InitAt(K) + ";\n" + In3 +
                       reindent(IfText, int(In3.size()) - Col) + "\n" + In2 +
                       "}";
  Out += I + "} else {\n" + In2 + Scalar + "\n" + I + "}";
  // In a template, other element types take the scalar loop: every
  // instantiation's launches get the smaller block, so each runs the body
  // for its W elements.
  if (!Plan.TypeGuards.empty())
    Out = "if constexpr (" + join(Plan.TypeGuards, " &&\n" + I + "    ") +
          ") {\n" + In2 + reindent(Out, 2) + "\n" + I + "} else {\n" + In2 +
          Scalar + "\n" + I + "}";

  tooling::Replacements R;
  SourceSpan Region{{0, 0, M.RegionBegin}, {0, 0, M.RegionEnd}};
  if (Error Err = addReplacement(R, replaceSpan(Ctx, Region, Out), E))
    return std::move(Err);
  for (const VectorizePlan::Block &B : Plan.Blocks) {
    SourceSpan Span;
    std::string Text;
    if (std::string Why = blockRewrite(Ctx, *B.Launch, W, Span, Text);
        !Why.empty())
      return reject(E, "not-applicable", "kernel '" + E.Target + "': " + Why);
    if (Error Err = addReplacement(R, replaceSpan(Ctx, Span, Text), E))
      return std::move(Err);
  }
  return R;
}

} // namespace optiml
