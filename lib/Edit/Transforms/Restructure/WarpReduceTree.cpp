//===- WarpReduceTree.cpp - warp-reduce: the shared-memory tree -----------===//
//
// The second matcher of warp-reduce: a block that stores one value per
// thread in shared memory and halves a stride with a barrier per step (the
// loop, its warp-synchronous tail, thread 0's final statement and the
// launches' block sizes). The grid-stride leaf is in WarpReduceLeaf.cpp,
// trees whose stride doubles in WarpReduceInterleaved.cpp.
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

namespace {

/// Whether \p S reads threadIdx.y or threadIdx.z: blocks of more than one
/// dimension, whose warps are not threadIdx.x / 32. (blockIdx.y, a 2D grid
/// of blocks, changes nothing inside a block.)
bool readsThreadYZ(const Stmt *S) {
  if (!S)
    return false;
  if (const auto *E = dyn_cast<Expr>(S))
    if (auto B = asBuiltinVar(E); B && B->Var == "threadIdx" && B->Dim != 'x')
      return true;
  return any_of(S->children(), [](const Stmt *C) { return readsThreadYZ(C); });
}

/// `s >>= 1`, `s /= 2`, `s = s >> 1`, `s = s / 2`: s.
const VarDecl *halvedVar(const Expr *Inc) {
  auto B = binaryOf(Inc);
  if (!B)
    return nullptr;
  auto IsHalf = [](BinaryOperatorKind Op, const Expr *R) {
    const auto *Lit = dyn_cast<IntegerLiteral>(strip(R));
    if (!Lit)
      return false;
    uint64_t V = Lit->getValue().getZExtValue();
    return (Op == BO_Shr && V == 1) || (Op == BO_Div && V == 2);
  };
  const auto *V = dyn_cast_or_null<VarDecl>(declOf(B->L));
  if (!V)
    return nullptr;
  if (B->Op == BO_ShrAssign || B->Op == BO_DivAssign)
    return IsHalf(B->Op == BO_ShrAssign ? BO_Shr : BO_Div, B->R) ? V : nullptr;
  if (B->Op != BO_Assign)
    return nullptr;
  auto R = binaryOf(B->R);
  if (R && declOf(R->L) == V && IsHalf(R->Op, R->R))
    return V;
  return nullptr;
}

/// The stride a tree loop halves: `for (...; ...; s >>= 1)`, or
/// `while (...) { ...; s /= 2; }` with the halving last.
const VarDecl *treeStride(const Stmt *X) {
  if (const auto *F = dyn_cast<ForStmt>(X))
    return halvedVar(F->getInc());
  if (const auto *W = dyn_cast<WhileStmt>(X))
    if (const auto *CS = dyn_cast<CompoundStmt>(W->getBody());
        CS && CS->size() > 1)
      return halvedVar(dyn_cast<Expr>(CS->body_back()));
  return nullptr;
}

} // namespace

const Expr *TreeMatcher::strideStart(const Stmt *InitS) const {
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(InitS)) {
    const auto *V =
        DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl()) : nullptr;
    return V == S ? V->getInit() : nullptr;
  }
  if (auto B = binaryOf(dyn_cast_or_null<Expr>(InitS));
      B && B->Op == BO_Assign && declOf(B->L) == S)
    return B->R;
  return nullptr;
}

Error TreeMatcher::loopParts(const Stmt *const *LoopIt, const Stmt *&Init,
                             const Expr *&Cond,
                             std::vector<const Stmt *> &LB) const {
  const Stmt *Loop = *LoopIt;
  if (const auto *F = dyn_cast<ForStmt>(Loop)) {
    Init = F->getInit();
    Cond = F->getCond();
    if (const auto *CS = dyn_cast<CompoundStmt>(F->getBody()))
      LB.assign(CS->body_begin(), CS->body_end());
    else
      LB.push_back(F->getBody());
    return Error::success();
  }
  const auto *W = cast<WhileStmt>(Loop);
  if (W->getConditionVariable())
    return no("the tree loop at " + at(Loop) +
                  " declares a variable in its condition",
              Loop);
  Init = LoopIt != Body->body_begin() ? *(LoopIt - 1) : nullptr;
  Cond = W->getCond();
  const auto *CS = cast<CompoundStmt>(W->getBody());
  LB.assign(CS->body_begin(), CS->body_end() - 1);
  return Error::success();
}

Error TreeMatcher::refuseReturn(const Stmt *Return) const {
  return no("returns at " + at(Return) +
                ": every lane of a warp must reach the shuffles (only "
                "'if (tid != 0) return;' after the tree, before thread "
                "0's statements, is accepted)",
            Return);
}

Error TreeMatcher::matchLoop(const Stmt *L, const Stmt *InitS, const Expr *Cond,
                             bool &Tail, std::optional<int64_t> &Start,
                             std::string &StartText) {
  // Start: `int s = X` or `s = X` (in a for's header, or just before a
  // while).
  const Expr *Init = strideStart(InitS);
  if (!Init)
    return no("the tree loop at " + at(L) + " does not start its stride '" +
                  S->getName() + "' " +
                  (isa<WhileStmt>(L) ? "in the statement just before it"
                                     : "in its header"),
              L);
  StartText = text(Init);
  auto SB = binaryOf(stripCasts(Init));
  bool BlockHalf = false;
  if (SB && (SB->Op == BO_Div || SB->Op == BO_Shr)) {
    auto V = intValue(SB->R, Ctx.AST);
    BlockHalf = isBlockDimX(SB->L) && V && *V == (SB->Op == BO_Div ? 2 : 1);
  }
  if (!BlockHalf) {
    Start = intValue(Init, Ctx.AST);
    if (!Start) {
      // The array's size over two, spelled like its declaration (a
      // template parameter, say).
      const auto *AT = Ctx.AST.getAsArrayType(P.Array->getType());
      const auto *DA = dyn_cast_or_null<DependentSizedArrayType>(AT);
      bool SizeHalf = false;
      if (DA && SB && SB->Op == BO_Div && intValue(SB->R, Ctx.AST) == 2)
        SizeHalf = text(SB->L) == text(DA->getSizeExpr());
      if (!SizeHalf)
        return no("the tree loop starts at '" + StartText +
                      "', not blockDim.x / 2, the array's size / 2 or a "
                      "constant",
                  L);
      P.Notes.push_back("the loop starts at '" + StartText +
                        "': blocks must have " + text(SB->L) + " threads");
    } else if (!isPowerOf2(*Start)) {
      return no("the tree loop starts at " + std::to_string(*Start) +
                    ", not a power of two",
                L);
    }
  }
  // Stop: s > 0 (the whole tree) or s > 32 (a warp-synchronous tail).
  auto C = binaryOf(Cond);
  std::optional<int64_t> Bound;
  bool Ge = false;
  if (C && (C->Op == BO_GT || C->Op == BO_GE || C->Op == BO_NE) &&
      declOf(C->L) == S) {
    Bound = intValue(C->R, Ctx.AST);
    Ge = C->Op == BO_GE;
    if (C->Op == BO_NE && Bound != 0)
      Bound.reset();
  } else if (C && C->Op == BO_LT && declOf(C->R) == S) {
    Bound = intValue(C->L, Ctx.AST);
  }
  // The last stride the loop runs: the least power of two above the bound.
  std::optional<int64_t> Last;
  if (Bound && *Bound >= 0 && *Bound < 1024) {
    Last = 1;
    while (Ge ? *Last < *Bound : *Last <= *Bound)
      *Last *= 2;
  }
  if (!Last || (*Last != 1 && *Last != 64))
    return no("the tree loop's condition '" + text(Cond) + "' is not '" +
                  S->getName() + " > 0' (or '" + S->getName() +
                  " > 32' followed by a warp-synchronous tail)",
              L);
  Tail = *Last == 64;
  return Error::success();
}

std::vector<const Stmt *>
TreeMatcher::lastWarpBlockSteps(const Stmt *Then, const ValueDecl *Array,
                                const ValueDecl *&Base) const {
  const auto *CS = dyn_cast<CompoundStmt>(Then);
  if (!CS)
    return {Then};
  std::vector<const Stmt *> Steps(CS->body_begin(), CS->body_end());
  if (Steps.empty())
    return Steps;
  if (const auto *DS = dyn_cast<DeclStmt>(Steps.front());
      DS && DS->isSingleDecl()) {
    const auto *V = dyn_cast<VarDecl>(DS->getSingleDecl());
    if (V && V->getType()->isPointerType() && V->hasInit() &&
        declOf(V->getInit()) == Array && !Written.contains(V)) {
      Base = V;
      Steps.erase(Steps.begin());
    }
  }
  return Steps;
}

Error TreeMatcher::matchTail(const Stmt *St) {
  auto Shape = [&] {
    return "the tree loop stops at 32 but is not followed by a warp tail 'if "
           "(" +
           P.Tid + " < 32) { " + P.ArrayName + "[" + P.Tid +
           "] += " + P.ArrayName + "[" + P.Tid + " + 32]; ... " + P.ArrayName +
           "[" + P.Tid + "] += " + P.ArrayName + "[" + P.Tid + " + 1]; }'";
  };
  const auto *If = dyn_cast_or_null<IfStmt>(St);
  if (!If || If->getElse() || If->getInit() || If->getConditionVariable())
    return no(Shape(), St);
  auto C = binaryOf(If->getCond());
  if (!C || C->Op != BO_LT || !isTid(C->L) || intValue(C->R, Ctx.AST) != 32)
    return no(Shape(), St);
  // The steps, on the array itself, a volatile alias of it, or the
  // parameters of a helper called as `helper(A, tid)`.
  const ValueDecl *Base = P.Array;
  std::function<bool(const Expr *)> IsTid = [&](const Expr *X) {
    return isTid(X);
  };
  std::vector<const Stmt *> Steps;
  const Stmt *Then = If->getThen();
  if (const auto *Call = dyn_cast<CallExpr>(Then)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    const FunctionDecl *Def = nullptr;
    if (FD && FD->getNumParams() == 2 && Call->getNumArgs() == 2 &&
        FD->hasBody(Def) && declOf(Call->getArg(0)) == P.Array &&
        isTid(Call->getArg(1))) {
      Base = Def->getParamDecl(0);
      const ParmVarDecl *T = Def->getParamDecl(1);
      IsTid = [T](const Expr *X) { return declOf(X) == T; };
      if (const auto *CS = dyn_cast<CompoundStmt>(Def->getBody()))
        Steps.assign(CS->body_begin(), CS->body_end());
      if (is_contained(writtenDecls(Def->getBody()), T))
        return no(Shape(), St);
    }
  } else {
    Steps = lastWarpBlockSteps(Then, P.Array, Base);
  }
  int64_t Want = 32;
  for (const Stmt *X : Steps) {
    if (isCallTo(X, "__syncwarp"))
      continue;
    const Expr *Off = step(X, Base, IsTid);
    std::optional<int64_t> V = Off ? intValue(Off, Ctx.AST) : std::nullopt;
    if (!V || *V != Want || Want == 0)
      return no(Shape(), X);
    Want /= 2;
  }
  if (Want != 0)
    return no(Shape(), St);
  return Error::success();
}

const Expr *TreeMatcher::leavesUnlessThread0(const Stmt *St) const {
  const auto *If = dyn_cast_or_null<IfStmt>(St);
  if (!If || If->getElse() || If->getInit() || If->getConditionVariable() ||
      If->isConstexpr() || If->isConsteval())
    return nullptr;
  const Stmt *Then = If->getThen();
  if (const auto *CS = dyn_cast<CompoundStmt>(Then))
    Then = CS->size() == 1 ? CS->body_front() : nullptr;
  const auto *Ret = dyn_cast_or_null<ReturnStmt>(Then);
  if (!Ret || Ret->getRetValue())
    return nullptr;
  // tid != 0, 0 != tid, tid > 0, 0 < tid, or tid itself (threadIdx.x is
  // never negative).
  const Expr *Cond = strip(If->getCond());
  if (isTid(Cond))
    return Cond;
  auto C = binaryOf(Cond);
  if (!C)
    return nullptr;
  if ((C->Op == BO_NE || C->Op == BO_GT) && isTid(C->L) &&
      intValue(C->R, Ctx.AST) == 0)
    return C->L;
  if ((C->Op == BO_NE || C->Op == BO_LT) && isTid(C->R) &&
      intValue(C->L, Ctx.AST) == 0)
    return C->R;
  return nullptr;
}

Error TreeMatcher::matchFinal(const Stmt *Then) {
  // Every use of the array in thread 0's statement reads A[0].
  // Every use of the register the steps keep (Cached) reads the result too.
  struct Uses : RecursiveASTVisitor<Uses> {
    const ValueDecl *A, *R;
    unsigned Refs = 0;
    std::vector<const ArraySubscriptExpr *> Reads;
    std::vector<const DeclRefExpr *> RegReads;
    const Stmt *Bad = nullptr;
    bool VisitDeclRefExpr(DeclRefExpr *D) {
      Refs += D->getDecl() == A;
      if (R && D->getDecl() == R)
        RegReads.push_back(D);
      return true;
    }
    bool VisitArraySubscriptExpr(ArraySubscriptExpr *AS) {
      if (declOf(AS->getBase()) == A)
        Reads.push_back(AS);
      return true;
    }
    void write(const Expr *X, const Stmt *At) {
      if (const auto *AS = dyn_cast<ArraySubscriptExpr>(strip(X));
          AS && declOf(AS->getBase()) == A && !Bad)
        Bad = At;
      if (R && declOf(strip(X)) == R && !Bad)
        Bad = At;
    }
    bool VisitBinaryOperator(BinaryOperator *B) {
      if (B->isAssignmentOp())
        write(B->getLHS(), B);
      return true;
    }
    bool VisitUnaryOperator(UnaryOperator *U) {
      if (U->isIncrementDecrementOp() || U->getOpcode() == UO_AddrOf)
        write(U->getSubExpr(), U);
      return true;
    }
  } U;
  U.A = P.Array;
  U.R = Cached;
  U.TraverseStmt(const_cast<Stmt *>(Then));
  if (U.Bad)
    return no("'" + P.ArrayName + "'" +
                  (Cached ? " or '" + Cached->getName().str() + "'" : "") +
                  " is written or its address taken at " + at(U.Bad) +
                  " after the loop",
              U.Bad);
  for (const DeclRefExpr *D : U.RegReads) {
    auto R = span(D, false);
    if (!R)
      return no("'" + Cached->getName() + "' is written with a macro", D);
    P.Finals.push_back(*R);
  }
  if (U.Refs != U.Reads.size())
    return no("'" + P.ArrayName + "' is used other than as '" + P.ArrayName +
                  "[0]' after the loop",
              Then);
  for (const ArraySubscriptExpr *AS : U.Reads) {
    if (intValue(AS->getIdx(), Ctx.AST) != 0)
      return no("thread 0 reads '" + text(AS) + "' after the loop; only '" +
                    P.ArrayName + "[0]' holds the result",
                AS);
    auto R = span(AS, false);
    if (!R)
      return no("'" + P.ArrayName + "[0]' is written with a macro", AS);
    P.Finals.push_back(*R);
  }
  return Error::success();
}

void TreeMatcher::checkLaunches(bool Tail, std::optional<int64_t> Start,
                                const std::string &StartText, Error &Err) {
  const KernelInfo &Info = *K.Info;
  if (Info.Launches.empty()) {
    P.Notes.push_back("the kernel is not launched in this file: every "
                      "launch's block must be a power of two and a multiple "
                      "of 32");
    return;
  }
  std::optional<int64_t> Size;
  if (const auto *CA = Ctx.AST.getAsConstantArrayType(P.Array->getType()))
    Size = CA->getSize().getSExtValue();
  for (const LaunchSite &L : Info.Launches) {
    KernelInfo One = Info;
    One.Launches = {L};
    std::string Why;
    auto Blocks = launchBlockSizesX(Ctx, One, Why);
    if (!Blocks || Blocks->size() != 1) {
      // What is known of the block must fit: one dimension (the tree reads
      // threadIdx.x alone) and whole warps.
      std::optional<int64_t> BX = blockExtentAt(Ctx, L, 0),
                             BY = blockExtentAt(Ctx, L, 1),
                             BZ = blockExtentAt(Ctx, L, 2);
      bool TwoD = (BY && *BY != 1) || (BZ && *BZ != 1);
      if (TwoD || (BX && (*BX % 32 != 0 || !isPowerOf2(*BX)))) {
        Err = no("launch " + L.Id + "'s block ('" + L.Block + "') is " +
                 (TwoD ? std::string("not one-dimensional")
                       : std::to_string(*BX) + " threads wide") +
                 ": the tree reads threadIdx.x alone and needs a power of "
                 "two, the shuffles whole warps");
        return;
      }
      // An interleaved tree of another size leaves values out of A[0] (or
      // reads past the block): its blocks must be seen.
      if (Interleaved) {
        Err = no(Why + ": an interleaved tree adds up a whole block only when "
                       "it is a power of two, and the shuffles need a "
                       "multiple of 32");
        return;
      }
      P.Notes.push_back(
          Why +
          ": it must be a power of two and a multiple "
          "of 32" +
          (Start ? ", " + std::to_string(*Start * 2) + " like the loop's start"
                 : std::string()));
      continue;
    }
    int64_t B = Blocks->front();
    std::string Launch =
        "launch " + L.Id + " uses blocks of " + std::to_string(B) + " threads";
    if (B % 32 != 0 || !isPowerOf2(B)) {
      Err = no(Launch + ": the tree needs a power of two, the shuffles a "
                        "multiple of 32");
      return;
    }
    if (Start && *Start * 2 != B) {
      Err = no(Launch +
               (Interleaved
                    ? " but the interleaved tree stops at '" + StartText + "'"
                    : " but the loop starts at " + StartText) +
               ", which reduces " + std::to_string(*Start * 2) + " values");
      return;
    }
    if (Size && B > *Size) {
      Err = no(Launch + ", more than '" + P.ArrayName + "' holds (" +
               std::to_string(*Size) + ")");
      return;
    }
    if (Tail && B < 64) {
      Err = no(Launch + "; the warp tail reads " + P.ArrayName + "[" + P.Tid +
               " + 32], which needs at least 64");
      return;
    }
  }
}

Error TreeMatcher::matchThread0(ArrayRef<const Stmt *> After, const Stmt *Leave,
                                std::vector<const Stmt *> &Thread0,
                                const Stmt *&Then) {
  const auto *LeaveIt = Leave ? find(After, Leave) : After.end();
  if (Leave && LeaveIt == After.end())
    return no("returns early at " + at(Leave) +
                  ", before the tree is done: every lane of a warp must "
                  "reach the shuffles, and every thread the barriers",
              Leave);
  // Before the early return (if any), every thread runs the statements:
  // only `if (tid == 0) ...` may read A[0].
  const IfStmt *Final = nullptr;
  auto Uses = [&](const Stmt *X) {
    return mentions(X, P.Array) || (Cached && mentions(X, Cached));
  };
  for (const auto *It = After.begin(); It != LeaveIt; ++It) {
    if (!Uses(*It))
      continue;
    const auto *If = dyn_cast<IfStmt>(*It);
    auto C = If ? binaryOf(If->getCond()) : std::nullopt;
    bool IsThread0 = C && C->Op == BO_EQ &&
                     ((isTid(C->L) && intValue(C->R, Ctx.AST) == 0) ||
                      (isTid(C->R) && intValue(C->L, Ctx.AST) == 0));
    if (!IsThread0 || Final || If->getElse() || If->getInit() ||
        Uses(If->getCond()))
      return no(
          "'" +
              (mentions(*It, P.Array) ? P.ArrayName : Cached->getName().str()) +
              "' is read at " + at(*It) +
              " after the loop by threads other than thread 0 (only "
              "'if (" +
              P.Tid + " == 0) ... " + P.ArrayName + "[0] ...' is rewritten)",
          *It);
    Final = If;
  }
  // After `if (tid != 0) return;`, thread 0 alone runs the rest of the
  // body: `if (tid == 0) { rest }` computes the same, and every lane has
  // passed the shuffles before it.
  bool ReadAfter = Leave && std::any_of(LeaveIt + 1, After.end(),
                                        [&](const Stmt *X) { return Uses(X); });
  if (Final && ReadAfter)
    return no("'" + P.ArrayName + "' is read both by 'if (" + P.Tid +
                  " == 0) ...' at " + at(Final) +
                  " and after the early return at " + at(Leave),
              Leave);
  if (Final) {
    Thread0 = {Final};
    Then = Final->getThen();
    if (const auto *CS = dyn_cast<CompoundStmt>(Then); CS && CS->size() == 1)
      Then = CS->body_front();
    return matchFinal(Final->getThen());
  }
  if (!ReadAfter)
    return no("the result '" + P.ArrayName +
              "[0]' is not read after the loop by 'if (" + P.Tid +
              " == 0) ...' (or after 'if (" + P.Tid + " != 0) return;')");
  Thread0.assign(LeaveIt, After.end());
  if (After.end() - LeaveIt == 2)
    Then = After.back();
  for (const auto *It = LeaveIt + 1; It != After.end(); ++It)
    if (Error Err = matchFinal(*It))
      return Err;
  auto LR = span(Leave, true);
  auto FR = span(*(LeaveIt + 1), true);
  auto ER = span(After.back(), true);
  if (!LR || !FR || !ER)
    return no("the early return at " + at(Leave) +
                  " or what follows it is written with a macro",
              Leave);
  P.Leave = Range{LR->Begin, ER->End};
  // The rest starts after the return, comments before its first statement
  // included.
  P.RestBegin = LR->End;
  while (P.RestBegin < FR->Begin &&
         isspace(static_cast<unsigned char>(Ctx.Code[P.RestBegin])))
    ++P.RestBegin;
  P.LeaveGuard = parenthesize(text(leavesUnlessThread0(Leave))) + " == 0";
  P.Notes.push_back("the early return at " + at(Leave) + " becomes 'if (" +
                    P.LeaveGuard + ") { ... }' around thread 0's statements");
  return Error::success();
}

// Why long: one ordered list of the reduction tree's preconditions (the
// shared array, the tree loop or its unrolled steps, the barriers, the
// final write, the launches), each refusal naming its reason; they share
// the partial match as locals.
Expected<TreePlan> TreeMatcher::match() {
  const KernelInfo &Info = *K.Info;
  if (Info.Uses2DThreads && readsThreadYZ(Body))
    return no("uses 2D thread indices; warp lanes are threadIdx.x % 32 only "
              "in one-dimensional blocks");
  // No jump, except one `if (tid != 0) return;` at the top level; it must
  // come after the tree (checked below). Another return is refused once
  // the tree loop is found (the atomics form refuses returns too).
  const Stmt *Leave = nullptr, *Return = nullptr;
  for (const Stmt *X : Body->body()) {
    if (!Leave && leavesUnlessThread0(X)) {
      Leave = X;
      continue;
    }
    const Stmt *J = firstJump(X);
    if (J && !isa<ReturnStmt>(J))
      return no("returns or jumps at " + at(J) +
                    ": every lane of a warp must reach the shuffles",
                J);
    if (J && !Return)
      Return = J;
  }
  // The tree loop: the first top-level loop that halves a variable, in a
  // for's increment or as the last statement of a while's body; without
  // one, a loop that doubles it (an interleaved tree).
  auto Stmts = Body->body();
  auto LoopIt = find_if(Stmts, [](const Stmt *X) { return treeStride(X); });
  if (LoopIt == Stmts.end()) {
    if (const auto *It = find_if(Stmts, isInterleavedLoop); It != Stmts.end())
      return matchInterleaved(It, Leave, Return);
    for (const Stmt *X : Stmts)
      if (isa<ForStmt, WhileStmt, DoStmt>(X) &&
          callsFunction(X, "__syncthreads"))
        return no("the loop at " + at(X) +
                      " is not a tree loop 'for (... s = ...; s > 0; s >>= 1)'",
                  X);
    // Perhaps the steps are written out one by one.
    return matchUnrolled(Leave, Return);
  }
  const Stmt *Loop = *LoopIt;
  S = treeStride(Loop);
  if (Return)
    return refuseReturn(Return);
  // The loop's body: `if (tid < s) <step>` and `__syncthreads();` (and the
  // halving, last, in a while).
  const Stmt *LoopInit = nullptr;
  const Expr *LoopCond = nullptr;
  std::vector<const Stmt *> LB;
  if (Error Err = loopParts(LoopIt, LoopInit, LoopCond, LB))
    return std::move(Err);
  // The barrier after the step, or before it (the samples' histogram
  // merge: `sync; if (tid < s) step`), where the loop's first barrier
  // orders the store and thread 0 reads its own last step.
  const IfStmt *Guard = nullptr;
  bool Sync = false, SyncFirst = false, Other = false;
  for (const Stmt *X : LB) {
    if (isBarrier(X) && Guard && !Sync && !SyncFirst)
      Sync = true;
    else if (isBarrier(X) && !Guard && !SyncFirst)
      SyncFirst = true;
    else if (isa<IfStmt>(X) && !Guard && !Sync)
      Guard = cast<IfStmt>(X);
    else
      Other = true;
  }
  Sync |= SyncFirst && Guard;
  auto Shape = [&] {
    return std::string("'if (tid < ") + S->getName().str() +
           ") a[tid] += a[tid + " + S->getName().str() + "]; __syncthreads();'";
  };
  if (!Guard || Other)
    return no("the body of the tree loop at " + at(Loop) + " is not " + Shape(),
              Loop);
  if (!Sync)
    return no("the tree loop at " + at(Loop) +
                  " has no __syncthreads() after its step: its steps race",
              Loop);
  auto GC = binaryOf(Guard->getCond());
  const Expr *TidE = nullptr;
  if (GC && GC->Op == BO_LT && declOf(GC->R) == S)
    TidE = GC->L;
  else if (GC && GC->Op == BO_GT && declOf(GC->L) == S)
    TidE = GC->R;
  if (Guard->getElse() || !TidE)
    return no("the tree loop's guard '" + text(Guard->getCond()) +
                  "' is not 'tid < " + S->getName() + "'",
              Guard);
  if (!isTid(TidE))
    return no("the tree loop's guard compares '" + text(TidE) +
                  "' with the stride: not threadIdx.x or a local equal to it",
              Guard);
  P.Tid = text(TidE);
  const Stmt *StepS = Guard->getThen();
  if (const auto *CS = dyn_cast<CompoundStmt>(StepS); CS && CS->size() == 1)
    StepS = CS->body_front();
  bool ViaHelper = false;
  if (Error Err = matchArray(StepS, ViaHelper))
    return std::move(Err);
  const VarDecl *AV = P.Array;
  const Expr *Off = step(StepS, AV, [&](const Expr *X) { return isTid(X); });
  if (!Off || declOf(Off) != S)
    return no("the tree loop's step '" + text(StepS) + "' is not '" +
                  P.ArrayName + "[" + P.Tid + "] += " + P.ArrayName + "[" +
                  P.Tid + " + " + S->getName() +
                  "]' (or max/min of the two, or '" + P.ArrayName + "[" +
                  P.Tid + "] = r = r + " + P.ArrayName + "[" + P.Tid + " + " +
                  S->getName() + "]' with r the value stored)",
              StepS);
  bool Tail = false;
  std::optional<int64_t> Start;
  std::string StartText;
  if (Error Err = matchLoop(Loop, LoopInit, LoopCond, Tail, Start, StartText))
    return std::move(Err);
  TreeShape Sh;
  Sh.Begin = LoopIt;
  Sh.End = LoopIt + 1;
  // A while's start goes with it: the statement just before.
  Sh.First = isa<WhileStmt>(Loop) ? LoopInit : Loop;
  Sh.Tail = Tail;
  Sh.BarrierFirst = SyncFirst;
  Sh.Start = Start;
  Sh.StartText = StartText;
  Sh.Parts = {Loop};
  if (isa<WhileStmt>(Loop))
    Sh.Parts.push_back(LoopInit);
  return finish(Sh, Leave, ViaHelper);
}

// Why long: the preconditions every tree shares once its steps are known
// (the array's type and declaration, the one store and barrier before the
// tree, thread 0's statements, the launches), in order, each refusal
// naming its reason; they share the partial match as locals.
Expected<TreePlan> TreeMatcher::finish(const TreeShape &Sh, const Stmt *Leave,
                                       bool ViaHelper) {
  const KernelInfo &Info = *K.Info;
  auto Stmts = Body->body();
  const Stmt *const *LoopIt = Sh.Begin;
  const Stmt *Loop = *Sh.Begin;
  const VarDecl *AV = P.Array;
  bool Tail = Sh.Tail;

  // The element type.
  QualType Elem = ViaHelper
                      ? AV->getType()->getPointeeType()
                      : Ctx.AST.getAsArrayType(AV->getType())->getElementType();
  if (!Elem->isDependentType() &&
      (!Elem->isArithmeticType() || Elem->isBooleanType() ||
       Elem->isAnyComplexType()))
    return no("'" + P.ArrayName + "' holds '" +
                  Elem.getAsString(Ctx.AST.getPrintingPolicy()) +
                  "': warp shuffles move integers and floating-point values "
                  "only",
              AV);
  P.ElemType =
      Elem.getUnqualifiedType().getAsString(Ctx.AST.getPrintingPolicy());
  // The element type as written ("unsigned", "T", a typedef), without
  // qualifiers such as volatile.
  if (ViaHelper) {
    if (auto PTL = AV->getTypeSourceInfo()
                       ->getTypeLoc()
                       .getUnqualifiedLoc()
                       .getAs<PointerTypeLoc>()) {
      SourceRange R = PTL.getPointeeLoc().getUnqualifiedLoc().getSourceRange();
      if (R.isValid() && R.getBegin().isFileID() && R.getEnd().isFileID()) {
        StringRef Written = Lexer::getSourceText(
            CharSourceRange::getTokenRange(R), SM, Ctx.AST.getLangOpts());
        if (!Written.empty())
          P.ElemType = Written.str();
      }
    }
  } else if (auto ATL = AV->getTypeSourceInfo()
                            ->getTypeLoc()
                            .getUnqualifiedLoc()
                            .getAs<ArrayTypeLoc>()) {
    SourceRange R = ATL.getElementLoc().getUnqualifiedLoc().getSourceRange();
    if (R.isValid() && R.getBegin().isFileID() && R.getEnd().isFileID()) {
      StringRef Written = Lexer::getSourceText(
          CharSourceRange::getTokenRange(R), SM, Ctx.AST.getLangOpts());
      if (!Written.empty())
        P.ElemType = Written.str();
    }
  }
  P.Floating = Elem->isDependentType() || Elem->isFloatingType();

  // The declaration: a statement of its own at the top level.
  auto DeclIt = find_if(Stmts, [&](const Stmt *X) {
    const auto *DS = dyn_cast<DeclStmt>(X);
    return DS && is_contained(DS->decls(), AV);
  });
  if (DeclIt == Stmts.end() || DeclIt > LoopIt)
    return no("'" + P.ArrayName +
                  "' is not declared at the top level of the kernel before "
                  "the loop",
              AV);
  if (!cast<DeclStmt>(*DeclIt)->isSingleDecl())
    return no("'" + P.ArrayName +
                  "' is declared together with other "
                  "variables; declare it on its own",
              *DeclIt);
  {
    // `__shared__` itself is a macro in the SDK's headers.
    auto DR = span(*DeclIt, true, /*AllowMacroEnds=*/true);
    if (!DR)
      return no("the declaration of '" + P.ArrayName +
                    "' is written with a "
                    "macro",
                *DeclIt);
    P.Decl = *DR;
    TypeLoc TL = AV->getTypeSourceInfo()->getTypeLoc().getUnqualifiedLoc();
    auto ATL = TL.getAs<ArrayTypeLoc>();
    if (ViaHelper) {
      P.NewDecl = "__shared__ " + P.ElemType + " " + P.ArrayName + "[32];";
    } else if (ATL && ATL.getSizeExpr()) {
      const Expr *SizeE = ATL.getSizeExpr();
      if (const auto *CA = Ctx.AST.getAsConstantArrayType(AV->getType());
          CA && CA->getSize().getSExtValue() < 32)
        return no("'" + P.ArrayName + "' has " +
                      std::to_string(CA->getSize().getSExtValue()) +
                      " elements, fewer than a warp",
                  AV);
      auto SR = span(SizeE, false, true);
      if (!SR)
        return no("the size of '" + P.ArrayName + "' cannot be rewritten", AV);
      P.Size = *SR;
      P.NewSize = parenthesize(text(SizeE)) + " / 32";
    } else {
      // No size (extern): one slot per warp of the largest block.
      P.NewDecl = "__shared__ " +
                  Elem.getAsString(Ctx.AST.getPrintingPolicy()) + " " +
                  P.ArrayName + "[32];";
    }
  }

  // Before the loop: one `A[tid] = value;` every thread runs, then a
  // barrier; nothing else touches the array.
  const Stmt *Store = nullptr;
  const Stmt *PreSync = nullptr;
  for (auto It = DeclIt + 1; It != LoopIt; ++It) {
    const Stmt *X = *It;
    if (Store && isBarrier(X)) {
      PreSync = X;
      continue;
    }
    if (!mentions(X, AV))
      continue;
    auto B = binaryOf(X);
    const Expr *Idx = B && B->Op == BO_Assign ? indexInto(B->L, AV) : nullptr;
    if (!Idx)
      return no("'" + P.ArrayName + "' is used at " + at(X) +
                    " before the loop other than by one plain store '" +
                    P.ArrayName + "[tid] = value;' that every thread runs",
                X);
    if (!isTid(Idx))
      return no("'" + P.ArrayName + "' is written at " + at(X) +
                    " with index '" + text(Idx) + "', not threadIdx.x",
                X);
    if (Store)
      return no("'" + P.ArrayName + "' is written twice before the loop (" +
                    at(Store) + " and " + at(X) + ")",
                X);
    if (mentions(B->R, AV))
      return no("the value stored at " + at(X) + " reads '" + P.ArrayName +
                    "' itself",
                X);
    Store = X;
  }
  if (!Store)
    return no("no store 'A[tid] = value;' into '" + P.ArrayName +
              "' at the top level of the kernel before the loop");
  if (!PreSync && !Sh.BarrierFirst)
    return no("no __syncthreads() between the store at " + at(Store) +
                  " and the tree loop",
              Store);
  if (Sh.BarrierFirst && Tail)
    return no("the tree loop at " + at(Loop) +
                  " synchronizes before each step, so nothing orders its "
                  "last step before the warp tail reads it",
              Loop);
  // A value ending in a macro (`: -INFINITY`) is fine: the span ends after
  // its invocation.
  auto StR = span(Store, true, Store->getBeginLoc().isFileID());
  if (!StR)
    return no("the store at " + at(Store) + " is written with a macro", Store);
  P.Store = *StR;
  P.StoreValue = text(binaryOf(Store)->R);
  if (Cached) {
    // The steps keep the register equal to the element: so must the store,
    // and nothing between it and the tree may change either.
    if (declOf(strip(binaryOf(Store)->R)) != Cached)
      return no("the tree's steps keep '" + Cached->getName() + "' equal to " +
                    P.ArrayName + "[" + P.Tid + "], but the store at " +
                    at(Store) + " stores '" + P.StoreValue + "', not '" +
                    Cached->getName() + "'",
                Store);
    for (auto It = find(Stmts, Store) + 1; It != LoopIt; ++It)
      if (mentions(*It, Cached))
        return no("'" + Cached->getName() + "' is used at " + at(*It) +
                      " between the store and the tree",
                  *It);
  }
  // The barrier before the loop only orders the array, unless the kernel
  // uses other shared memory.
  struct OtherShared : RecursiveASTVisitor<OtherShared> {
    const VarDecl *A;
    bool Found = false;
    bool VisitDeclRefExpr(DeclRefExpr *D) {
      const auto *V = dyn_cast<VarDecl>(D->getDecl());
      Found |= V && V != A && V->hasAttr<CUDASharedAttr>();
      return true;
    }
    bool VisitVarDecl(VarDecl *V) {
      Found |= V != A && V->hasAttr<CUDASharedAttr>();
      return true;
    }
  } OS;
  OS.A = AV;
  OS.TraverseStmt(const_cast<CompoundStmt *>(Body));
  if (!OS.Found && PreSync) {
    if (auto R = span(PreSync, true))
      P.PreSync = *R;
  } else if (PreSync) {
    P.Notes.push_back("the kernel uses other shared memory: the barrier "
                      "before the loop stays");
  }

  // The loop (and its tail) become the shuffles.
  auto AfterIt = Sh.End;
  if (Tail) {
    if (AfterIt == Stmts.end())
      return no("the tree loop stops at 32 but no warp tail follows it", Loop);
    if (Error Err = matchTail(*AfterIt))
      return std::move(Err);
    ++AfterIt;
  }
  auto LR = span(Sh.First, true);
  auto TR = span(*(AfterIt - 1), true);
  if (!LR || !TR)
    return no("the tree loop at " + at(Loop) + " starts or ends inside a macro",
              Loop);
  P.Region = {LR->Begin, TR->End};

  // A stride declared before the loop ends at 0 there; the rewrite drops
  // the loop, so nothing after it may read the stride.
  for (auto It = AfterIt; S && It != Stmts.end(); ++It)
    if (mentions(*It, S))
      return no("the stride '" + S->getName() + "' is used at " + at(*It) +
                    " after the loop",
                *It);

  // After the loop: thread 0 reads A[0]; nobody else reads the array.
  std::vector<const Stmt *> Thread0;
  const Stmt *Then = nullptr;
  if (Error Err = matchThread0(ArrayRef<const Stmt *>(AfterIt, Stmts.end()),
                               Leave, Thread0, Then))
    return std::move(Err);

  // A thread_block's rank and size are threadIdx.x and blockDim.x only in
  // one-dimensional blocks; the rewrite's warps and slots assume them.
  if (const Expr *G = firstThreadBlockMember(Body)) {
    std::string Why;
    if (!launchBlockSizesX(Ctx, Info, Why))
      return no("reads '" + text(G) +
                    "', which the rewrite takes for threadIdx.x or "
                    "blockDim.x, true only in one-dimensional blocks: " +
                    Why,
                G);
  }
  Error Err = Error::success();
  checkLaunches(Tail, Sh.Start, Sh.StartText, Err);
  if (Err)
    return std::move(Err);
  if (!S)
    if (Error Err = checkUnrolledLaunches())
      return std::move(Err);
  if (!P.NewDecl.empty()) {
    // Size the per-warp array from the launches when all are known.
    std::string Why;
    if (auto Blocks = launchBlockSizesX(Ctx, Info, Why);
        Blocks && !Blocks->empty())
      P.NewDecl = "__shared__ " +
                  (ViaHelper ? P.ElemType
                             : Elem.getAsString(Ctx.AST.getPrintingPolicy())) +
                  " " + P.ArrayName + "[" +
                  std::to_string(
                      *std::max_element(Blocks->begin(), Blocks->end()) / 32) +
                  "];";
  }

  if (E.getBool("grid_stride").value_or(false)) {
    std::vector<const Stmt *> TreeStmts = {*DeclIt, Store};
    if (PreSync)
      TreeStmts.push_back(PreSync);
    TreeStmts.insert(TreeStmts.end(), Sh.Parts.begin(), Sh.Parts.end());
    if (Tail)
      TreeStmts.push_back(*(AfterIt - 1));
    if (Error Err =
            matchLeaf(ArrayRef<const Stmt *>(Stmts.begin(), Stmts.end()), Store,
                      Thread0, Then, TreeStmts))
      return std::move(Err);
  }

  static const char *OpNames[] = {"+", "max", "min"};
  P.Description =
      "shared-memory tree reduction (" + std::string(OpNames[int(P.Op)]) +
      ") of " + P.ElemType + " in '" + P.ArrayName + "'" +
      (Unrolled ? " written out step by step" : "") +
      (Interleaved ? " with interleaved addressing" : "") +
      (Tail ? " with a warp-synchronous tail" : "") +
      (Cached
           ? " keeping its running value in '" + Cached->getName().str() + "'"
           : std::string()) +
      ": warp shuffles and one __syncthreads() instead of one per step; "
      "thread 0 keeps its final statement";
  if (P.GridStride)
    P.Description += "; " + P.LeafDescription;
  for (const std::string &N : P.Notes)
    P.Description += "; note: " + N;
  return std::move(P);
}

Error TreeMatcher::matchArray(const Stmt *StepS, bool &ViaHelper,
                              const VarDecl *Index) {
  // The array: the base of the step's left-hand side.
  const ValueDecl *A = nullptr;
  if (auto B = binaryOf(StepS))
    if (const auto *AS = dyn_cast<ArraySubscriptExpr>(strip(B->L)))
      A = declOf(AS->getBase());
  const auto *AV = dyn_cast_or_null<VarDecl>(A);
  if (!AV)
    return no("the tree loop's step '" + text(StepS) +
                  "' does not update an element of a shared array",
              StepS);
  P.Array = AV;
  P.ArrayName = AV->getName().str();
  // Dynamic shared memory handed out by a helper (`T *sdata =
  // SharedMemory<T>();`, the CUDA samples' form) is an extern array under
  // another name: its declaration becomes a per-warp array like one.
  ViaHelper = AV->isLocalVarDecl() && AV->getType()->isPointerType() &&
              AV->hasInit() && sharedVarBehind(AV->getInit());
  if (!ViaHelper && (!AV->hasAttr<CUDASharedAttr>() || !AV->isLocalVarDecl()))
    return no("'" + P.ArrayName +
                  "' is not a __shared__ array declared in the kernel",
              StepS);
  if (!ViaHelper && !Ctx.AST.getAsArrayType(AV->getType()))
    return no("'" + P.ArrayName + "' is not an array", StepS);
  {
    const Expr *Own = indexInto(cast<Expr>(binaryOf(StepS)->L), AV);
    if (Index ? declOf(Own) != Index : !isTid(Own))
      return no("'" + P.ArrayName + "' is indexed by '" + text(Own) +
                    "' in the tree loop, not by " +
                    (Index ? "'" + Index->getName().str() + "'"
                           : std::string("threadIdx.x")),
                StepS);
  }
  return Error::success();
}

} // namespace warpreduce
} // namespace optiml
