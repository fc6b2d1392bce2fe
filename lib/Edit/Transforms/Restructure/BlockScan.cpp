//===- BlockScan.cpp - A block's prefix sum through warp shuffles ---------===//
//
// Pattern: the textbook shared-memory scan of one block (Hillis-Steele).
// Each thread stores one value into a shared array at its own index, the
// block synchronizes, and a loop over a doubling offset adds, for every
// thread at or past the offset, the element `offset` places to its left:
//
//   buf[tid] = v;  __syncthreads();
//   for (int off = 1; off < N; off <<= 1) { <one step> }
//
// The step is recognized by what it computes, not by how it is spelled: it
// is run symbolically for a thread on each side of `tid >= off`, over its
// locals and the shared element it owns, with one or two shared buffers
// (`buf[cur][tid]`, the current one chosen by a variable the step flips,
// or two arrays read and written through two pointers the step swaps).
// It is accepted when, at the end of the step, the current buffer holds
// own + left for threads at or past the offset and own for the others; the
// neighbour is read before anyone writes that buffer in the step, every
// write is followed by a barrier, and nothing outside the step is written.
// That covers double buffering, a temporary read before a barrier and
// added after it, `+=` or `=`, if/else or a conditional expression.
//
// Rewrite: log2(N) barrier steps become an inclusive scan of the value in
// registers: a shuffle scan inside each warp, the warps' totals through a
// 32-entry shared array scanned by the first warp, and each warp adding the
// total of the warps before it; the result is stored where the loop left
// it (the current buffer at the thread's own index) and the block
// synchronizes once, so the code after the loop reads what it read before.
//
// Preconditions: one-dimensional launches whose block sizes are known
// multiples of 32 (the shuffles take whole warps) no larger than the loop's
// bound; the store, the barrier and the loop at the kernel's top level with
// no return before them (every thread reaches the shuffles); elements of a
// type the shuffles move (32/64-bit integers, float, double). Integer sums
// are exact; floating-point sums are added in another order.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "BlockScanInternal.h"
#include "PlannedTransform.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/Type.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <functional>
#include <map>

using namespace llvm;
using clang::dyn_cast;
using clang::dyn_cast_or_null;
using clang::isa;

namespace optiml {
namespace {
using block_scan::doubles;
using block_scan::ExprTest;
using block_scan::isBarrierStmt;
using block_scan::isBlockDimX;
using block_scan::loopBound;
using block_scan::shuffleType;
using block_scan::splitHalfIndex;
using block_scan::stepsApart;

/// A value during the symbolic run of one step.
struct Val {
  enum KindT { Unknown, Data, Buffer, Int } K = Unknown;
  /// Data: Own * (own element at the step's start) + Left * (the element
  /// `off` to the left at the step's start).
  int Own = 0, Left = 0;
  /// Buffer: 0 is the buffer holding the values at the step's start.
  int Buf = 0;
  int64_t N = 0; ///< Int
  static Val data(int O, int L) {
    Val V;
    V.K = Data;
    V.Own = O;
    V.Left = L;
    return V;
  }
  static Val buffer(int B) {
    Val V;
    V.K = Buffer;
    V.Buf = B;
    return V;
  }
  static Val integer(int64_t N) {
    Val V;
    V.K = Int;
    V.N = N;
    return V;
  }
  /// Data, reading the literal 0 as nothing added.
  std::optional<Val> asData() const {
    if (K == Data)
      return *this;
    if (K == Int && N == 0)
      return data(0, 0);
    return std::nullopt;
  }
};

struct Plan {
  ResolvedKernel Kernel;
  const clang::VarDecl *Buf = nullptr;
  bool TwoBuffers = false;
  /// Two halves of one array, `buf[h * len + i]`; `len` is blockDim.x or,
  /// where set, this constant.
  bool Halves = false;
  std::optional<int64_t> HalfLen;
  const clang::VarDecl *Cur = nullptr; ///< picks the current buffer
  /// A second variable the step flips with `Cur` (`pin` beside `pout`),
  /// and whether it starts at the other buffer (1) or the same one (0).
  const clang::VarDecl *Peer = nullptr;
  int PeerStart = 1;
  /// Pointer swap: `Src` starts at `Buf`, `Dst` at `Other`; each step
  /// reads through one and writes through the other, then swaps them.
  const clang::VarDecl *Src = nullptr, *Dst = nullptr, *Other = nullptr;
  const clang::VarDecl *Off = nullptr;
  const clang::BinaryOperator *Store = nullptr; ///< buf[..][tid] = v
  const clang::ForStmt *Loop = nullptr;
  std::string ElemType;
  unsigned RegionBegin = 0, RegionEnd = 0;
  std::string Description;
  block_scan::ItemsInput Items; ///< for `items` (BlockScanItems.cpp)
};

/// Per phase of a step (the code between two barriers), the buffers some
/// thread writes and the buffers some thread reads a neighbour's element
/// of, as bit masks; both runs of a step add to one log.
struct PhaseLog {
  std::map<int, unsigned> Writes, LeftReads;
  /// A phase where a neighbour's element is read while some thread may
  /// write that buffer, or -1.
  int race() const {
    for (const auto &[Phase, Reads] : LeftReads) {
      auto It = Writes.find(Phase);
      if (It != Writes.end() && (It->second & Reads))
        return Phase;
    }
    return -1;
  }
};

/// The symbolic run of one step of the loop for one side of `tid >= off`.
class StepRun {
public:
  StepRun(const EditContext &Ctx, const Plan &P, ExprTest IsTid, ExprTest IsLen,
          bool InRange, PhaseLog &Log)
      : Ctx(Ctx), P(P), IsTid(std::move(IsTid)), IsLen(std::move(IsLen)),
        InRange(InRange), Log(Log) {
    Slot[0] = Val::data(1, 0);
    if (P.Cur)
      Locals[P.Cur] = Val::buffer(0);
    if (P.Peer)
      Locals[P.Peer] = Val::buffer(P.PeerStart);
    if (P.Src) {
      Locals[P.Src] = Val::buffer(0);
      Locals[P.Dst] = Val::buffer(1);
    }
  }

  /// Runs the loop body; false with why() on anything outside a step.
  bool run(const clang::Stmt *Body) { return exec(Body); }

  /// The step left own + left (at or past the offset) or own (before it)
  /// in the buffer that is current afterwards.
  bool check() {
    if (!Named.empty())
      return fail(nullptr, Named);
    Val C = P.Cur ? Locals[P.Cur] : P.Src ? Locals[P.Src] : Val::buffer(0);
    if (C.K != Val::Buffer)
      return fail(nullptr, "the variable choosing the current buffer does "
                           "not name one of the two at the end of a step");
    if (P.Src &&
        (Locals[P.Dst].K != Val::Buffer || Locals[P.Dst].Buf != 1 - C.Buf))
      return fail(nullptr, "at the end of a step '" + P.Dst->getName() +
                               "' does not name the buffer '" +
                               P.Src->getName() + "' does not");
    if (P.Peer && (Locals[P.Peer].K != Val::Buffer ||
                   Locals[P.Peer].Buf != (P.PeerStart ^ C.Buf)))
      return fail(nullptr, "at the end of a step '" + P.Peer->getName() +
                               "' does not stand to '" + P.Cur->getName() +
                               "' as at its start (the same buffer or the "
                               "other one)");
    FinalBuf = C.Buf;
    std::optional<Val> D = Slot[C.Buf].asData();
    if (!D || D->Own != 1 || D->Left != (InRange ? 1 : 0))
      return fail(nullptr,
                  InRange ? "a step does not leave own + left in the current "
                            "buffer for threads at or past the offset"
                          : "a step does not leave the own value in the "
                            "current buffer for threads before the offset");
    return true;
  }
  int finalBuffer() const { return FinalBuf; }
  const std::string &why() const { return Why; }

private:
  const EditContext &Ctx;
  const Plan &P;
  ExprTest IsTid, IsLen;
  bool InRange;
  PhaseLog &Log;
  std::map<const clang::VarDecl *, Val> Locals;
  Val Slot[2];
  bool Written[2] = {false, false};
  int Branches = 0;
  int Phase = 0;
  int FinalBuf = 0;
  std::string Why;
  /// Why not, when the step names one of the swapped arrays itself.
  std::string Named;

  bool fail(const clang::Stmt *S, const Twine &Msg) {
    Why = Msg.str();
    if (S)
      Why += " (" + where(Ctx, S) + ")";
    return false;
  }

  /// `tid >= off` and its spellings, on this path.
  std::optional<bool> cond(const clang::Expr *E) {
    return block_scan::offsetTest(E, IsTid, P.Off, Ctx.AST, InRange);
  }

  bool isLeft(const clang::Expr *I) {
    const auto *S = dyn_cast<clang::BinaryOperator>(stripCasts(I));
    return S && S->getOpcode() == clang::BO_Sub && IsTid(S->getLHS()) &&
           declOf(S->getRHS()) == P.Off;
  }

  /// Where an index points: the thread's own element, the one `off` to
  /// its left, or elsewhere.
  enum class At { Own, Left, Elsewhere };

  /// For `buf[b][i]` / `buf[i]` / `buf[h * len + i]`: the buffer and where
  /// in it.
  bool element(const clang::Expr *E, int &Which, At &Where) {
    const auto *A = dyn_cast<clang::ArraySubscriptExpr>(E->IgnoreParens());
    if (!A)
      return false;
    const clang::Expr *Base = A->getBase()->IgnoreParenImpCasts();
    if (P.Halves)
      return half(A, Which, Where);
    if (P.TwoBuffers) {
      const auto *Outer = dyn_cast<clang::ArraySubscriptExpr>(Base);
      if (!Outer || declOf(Outer->getBase()) != P.Buf)
        return false;
      Val B = eval(Outer->getIdx());
      if (B.K != Val::Buffer) {
        fail(Outer->getIdx(), "the buffer index '" +
                                  looseExprText(Ctx, Outer->getIdx()) +
                                  "' is not the current buffer or the other "
                                  "one");
        return false;
      }
      Which = B.Buf;
    } else if (P.Src) {
      const auto *V = dyn_cast_or_null<clang::VarDecl>(declOf(Base));
      if (V && (V == P.Buf || V == P.Other)) {
        Named = ("the step names '" + V->getName() +
                 "' directly; which buffer that is changes from step to step")
                    .str();
        return false;
      }
      auto It = Locals.find(V);
      if (It == Locals.end() || It->second.K != Val::Buffer)
        return false;
      Which = It->second.Buf;
    } else {
      if (declOf(Base) != P.Buf)
        return false;
      Which = 0;
    }
    const clang::Expr *I = A->getIdx();
    Where = IsTid(I) ? At::Own : isLeft(I) ? At::Left : At::Elsewhere;
    return true;
  }

  /// element() for two halves of one array: `buf[h * len + i]`, `h` the
  /// current buffer or the other one, `i` the thread's own index or it
  /// minus the offset.
  bool half(const clang::ArraySubscriptExpr *A, int &Which, At &Where) {
    if (declOf(A->getBase()) != P.Buf)
      return false;
    block_scan::IndexTerms Rest;
    const clang::Expr *H = splitHalfIndex(A->getIdx(), IsLen, Rest);
    if (!H)
      return fail(A, "the index '" + looseExprText(Ctx, A->getIdx()) +
                         "' of '" + P.Buf->getName() +
                         "' is not 'h * len + i', h choosing one of its "
                         "halves of the block's size");
    Val B = eval(H);
    if (B.K != Val::Buffer)
      return fail(H, "the half '" + looseExprText(Ctx, H) +
                         "' is not the current buffer or the other one");
    Which = B.Buf;
    auto Is = [&](size_t K, bool Minus, bool Tid) {
      return Rest[K].second == Minus &&
             (Tid ? IsTid(Rest[K].first) : declOf(Rest[K].first) == P.Off);
    };
    if (Rest.size() == 1 && Is(0, false, true))
      Where = At::Own;
    else if (Rest.size() == 2 && ((Is(0, false, true) && Is(1, true, false)) ||
                                  (Is(1, false, true) && Is(0, true, false))))
      Where = At::Left;
    else
      Where = At::Elsewhere;
    return true;
  }

  Val eval(const clang::Expr *E) {
    E = E->IgnoreParenImpCasts();
    if (const auto *IL = dyn_cast<clang::IntegerLiteral>(E))
      return Val::integer(IL->getValue().getSExtValue());
    if (const auto *FL = dyn_cast<clang::FloatingLiteral>(E))
      return FL->getValue().isZero() ? Val::integer(0) : Val();
    if (const auto *R = dyn_cast<clang::DeclRefExpr>(E)) {
      const auto *V = dyn_cast<clang::VarDecl>(R->getDecl());
      auto It = Locals.find(V);
      return It == Locals.end() ? Val() : It->second;
    }
    if (isa<clang::ArraySubscriptExpr>(E)) {
      int B = 0;
      At Where = At::Elsewhere;
      if (!element(E, B, Where))
        return Val();
      if (Where == At::Own)
        return Slot[B];
      if (Where == At::Left && InRange && B == 0 && !Written[0]) {
        Log.LeftReads[Phase] |= 1u << B;
        return Val::data(0, 1);
      }
      return Val();
    }
    if (const auto *C = dyn_cast<clang::ConditionalOperator>(E)) {
      auto Side = cond(C->getCond());
      if (!Side)
        return Val();
      return eval(*Side ? C->getTrueExpr() : C->getFalseExpr());
    }
    if (const auto *B = dyn_cast<clang::BinaryOperator>(E)) {
      Val L = eval(B->getLHS()), R = eval(B->getRHS());
      switch (B->getOpcode()) {
      case clang::BO_Add: {
        auto DL = L.asData(), DR = R.asData();
        if (DL && DR)
          return Val::data(DL->Own + DR->Own, DL->Left + DR->Left);
        return Val();
      }
      case clang::BO_Sub: // 1 - cur
        if (L.K == Val::Int && L.N == 1 && R.K == Val::Buffer)
          return Val::buffer(1 - R.Buf);
        return Val();
      case clang::BO_Xor: // cur ^ 1
        if (L.K == Val::Buffer && R.K == Val::Int && R.N == 1)
          return Val::buffer(1 - L.Buf);
        return Val();
      default:
        return Val();
      }
    }
    if (const auto *U = dyn_cast<clang::UnaryOperator>(E))
      if (U->getOpcode() == clang::UO_LNot) {
        Val S = eval(U->getSubExpr());
        if (S.K == Val::Buffer)
          return Val::buffer(1 - S.Buf);
      }
    return Val();
  }

  bool assign(const clang::BinaryOperator *B) {
    clang::BinaryOperatorKind Op = B->getOpcode();
    if (Op != clang::BO_Assign && Op != clang::BO_AddAssign &&
        Op != clang::BO_XorAssign)
      return fail(B, "'" + looseExprText(Ctx, B) + "' is not part of a scan");
    Val R = eval(B->getRHS());
    const clang::Expr *L = B->getLHS()->IgnoreParenImpCasts();
    int Which = 0;
    At Where = At::Elsewhere;
    if (isa<clang::ArraySubscriptExpr>(L)) {
      if (!element(L, Which, Where))
        return Why.empty()
                   ? fail(B, "the step writes '" + looseExprText(Ctx, L) +
                                 "', outside the scanned array")
                   : false;
      if (Where != At::Own)
        return fail(B, "the step writes another thread's element");
      Val New = R;
      if (Op == clang::BO_AddAssign) {
        auto Old = Slot[Which].asData(), Add = R.asData();
        New = Old && Add ? Val::data(Old->Own + Add->Own, Old->Left + Add->Left)
                         : Val();
      } else if (Op != clang::BO_Assign) {
        return fail(B, "'" + looseExprText(Ctx, B) + "' is not a sum");
      }
      Slot[Which] = New;
      Written[Which] = true;
      Log.Writes[Phase] |= 1u << Which;
      return true;
    }
    const auto *V = dyn_cast_or_null<clang::VarDecl>(declOf(L));
    if (!V || !Locals.count(V))
      return fail(B, "the step writes '" + looseExprText(Ctx, L) +
                         "', which lives on after it");
    Val &Cell = Locals[V];
    if (Op == clang::BO_Assign) {
      Cell = R;
    } else if (Op == clang::BO_AddAssign) {
      auto Old = Cell.asData(), Add = R.asData();
      Cell = Old && Add ? Val::data(Old->Own + Add->Own, Old->Left + Add->Left)
                        : Val();
    } else { // ^= 1 flips the buffer
      Cell = Cell.K == Val::Buffer && R.K == Val::Int && R.N == 1
                 ? Val::buffer(1 - Cell.Buf)
                 : Val();
    }
    return true;
  }

  bool exec(const clang::Stmt *S) {
    if (!S || isa<clang::NullStmt>(S))
      return true;
    if (const auto *CS = dyn_cast<clang::CompoundStmt>(S)) {
      for (const clang::Stmt *C : CS->body())
        if (!exec(C))
          return false;
      return true;
    }
    if (const auto *DS = dyn_cast<clang::DeclStmt>(S)) {
      for (const clang::Decl *D : DS->decls()) {
        const auto *V = dyn_cast<clang::VarDecl>(D);
        if (!V || !V->isLocalVarDecl() || V->isStaticLocal())
          return fail(S, "the step declares something other than a local");
        Locals[V] = V->getInit() ? eval(V->getInit()) : Val();
      }
      return true;
    }
    if (const auto *If = dyn_cast<clang::IfStmt>(S)) {
      if (If->getInit() || If->getConditionVariable())
        return fail(S, "the step's 'if' declares a variable");
      auto Side = cond(If->getCond());
      if (!Side)
        return fail(S, "the step's condition '" +
                           looseExprText(Ctx, If->getCond()) +
                           "' is not 'tid >= offset' or its negation");
      ++Branches;
      bool Ok = exec(*Side ? If->getThen() : If->getElse());
      --Branches;
      return Ok;
    }
    if (const auto *Call = dyn_cast<clang::CallExpr>(S)) {
      const clang::FunctionDecl *F = Call->getDirectCallee();
      if (!F || !isBlockBarrier(F))
        return fail(S, "the step calls '" + looseExprText(Ctx, Call) + "'");
      if (Branches)
        return fail(S, "a barrier inside a branch of the step");
      ++Phase;
      return true;
    }
    if (const auto *B = dyn_cast<clang::BinaryOperator>(S))
      return assign(B);
    return fail(S, "'" + looseStmtText(S) + "' is not part of a scan step");
  }

  std::string looseStmtText(const clang::Stmt *S) {
    std::string T = looseExprText(Ctx, S);
    return T.empty() ? std::string("a statement") : T;
  }
};

/// The pointer-swap form of double buffering: the loop changes exactly
/// two local pointers, one starting at the stored array and the other at a
/// second __shared__ array of the same type, and nothing before the loop
/// names either pointer or array but their declarations. Fills P.Src,
/// P.Dst and P.Other, or returns why not.
std::string pointerSwap(const EditContext &Ctx, Plan &P,
                        ArrayRef<const clang::VarDecl *> Changed,
                        ArrayRef<const clang::Stmt *> Before) {
  auto ArrayOf = [&](const clang::VarDecl *V) -> const clang::VarDecl * {
    bool Ptr = V && V->isLocalVarDecl() && V->getType()->isPointerType();
    const auto *A = dyn_cast_or_null<clang::VarDecl>(
        Ptr && V->getInit() ? declOf(V->getInit()) : nullptr);
    bool Shared = A && A->hasAttr<clang::CUDASharedAttr>();
    return Shared && A->getType()->isArrayType() ? A : nullptr;
  };
  if (Changed.size() == 1 && ArrayOf(Changed[0]))
    return "the loop at " + where(Ctx, P.Loop) + " moves the pointer '" +
           Changed[0]->getName().str() +
           "' but no second one; a double buffer swaps two";
  if (Changed.size() != 2 || !ArrayOf(Changed[0]) || !ArrayOf(Changed[1]))
    return "the loop at " + where(Ctx, P.Loop) + " changes '" +
           (Changed[0] ? Changed[0]->getName().str()
                       : std::string("a variable")) +
           "', declared outside it";
  bool SrcFirst = ArrayOf(Changed[0]) == P.Buf;
  P.Src = Changed[SrcFirst ? 0 : 1];
  P.Dst = Changed[SrcFirst ? 1 : 0];
  P.Other = ArrayOf(P.Dst);
  if (ArrayOf(P.Src) != P.Buf || P.Other == P.Buf)
    return "the pointers '" + P.Src->getName().str() + "' and '" +
           P.Dst->getName().str() + "' the loop swaps do not start at '" +
           P.Buf->getName().str() +
           "', where the values are stored, and "
           "another __shared__ array";
  if (!Ctx.AST.hasSameType(P.Buf->getType(), P.Other->getType()))
    return "the buffers '" + P.Buf->getName().str() + "' and '" +
           P.Other->getName().str() + "' differ in type";
  const clang::VarDecl *Named[] = {P.Src, P.Dst, P.Buf, P.Other};
  for (const clang::Stmt *S : Before) {
    const auto *DS = dyn_cast<clang::DeclStmt>(S);
    if (DS && llvm::all_of(DS->decls(), [&](const clang::Decl *D) {
          return llvm::is_contained(Named, D);
        }))
      continue;
    for (const clang::VarDecl *V : Named)
      if (mentions(S, V))
        return "'" + V->getName().str() + "' is used at " + where(Ctx, S) +
               ", before the loop that swaps the buffers";
  }
  return "";
}

/// Code after the loop reads the result where the loop left it: with the
/// buffer choice as the first index (`buf[cur][i]`) or through the pointer
/// the last step left at it (`src[i]`); why not, or "".
std::string afterLoopWhy(const EditContext &Ctx, const Plan &P,
                         const clang::Stmt *S, const ExprTest &IsLen,
                         const ExprTest &IsTid) {
  if (!S)
    return "";
  if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(S);
      A && P.Halves && declOf(A->getBase()) == P.Buf) {
    block_scan::IndexTerms Rest;
    const clang::Expr *H = splitHalfIndex(A->getIdx(), IsLen, Rest);
    if (!H || declOf(H) != P.Cur)
      return "'" + looseExprText(Ctx, A) + "' reads a part of '" +
             P.Buf->getName().str() + "' other than the current half '" +
             P.Cur->getName().str() + " * len + i'";
    // Another index may cross into the other half, which the loop left
    // holding the step before last and the rewrite leaves unwritten.
    if (Rest.size() != 1 || Rest[0].second || !IsTid(Rest[0].first))
      return "'" + looseExprText(Ctx, A) +
             "' reads another element than the thread's own of the current "
             "half; after the loop only '" +
             P.Cur->getName().str() + " * len + tid' is known to stay in it";
    return "";
  }
  if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(S)) {
    const auto *O = dyn_cast<clang::ArraySubscriptExpr>(
        A->getBase()->IgnoreParenImpCasts());
    if (P.Cur && O && declOf(O->getBase()) == P.Buf &&
        declOf(O->getIdx()) != P.Cur)
      return "'" + looseExprText(Ctx, A) +
             "' reads a buffer other than the current one";
    if ((P.Cur && O && declOf(O->getBase()) == P.Buf) ||
        (P.Src && declOf(A->getBase()) == P.Src))
      return afterLoopWhy(Ctx, P, A->getIdx(), IsLen, IsTid);
  }
  if (const auto *R = dyn_cast<clang::DeclRefExpr>(S)) {
    const clang::ValueDecl *D = R->getDecl();
    if (P.Cur && D == P.Cur)
      return "'" + P.Cur->getName().str() +
             "' is used after the loop other than to pick the buffer";
    if (P.Peer && D == P.Peer)
      return "'" + P.Peer->getName().str() + "' at " + where(Ctx, R) +
             " is used after the loop; without the loop it names another "
             "buffer than it did";
    if (P.Cur && D == P.Buf)
      return "'" + P.Buf->getName().str() + "' at " + where(Ctx, R) +
             " is used after the loop other than to read an element of the "
             "current buffer";
    if (P.Src && (D == P.Src || D == P.Dst || D == P.Buf || D == P.Other))
      return "'" + looseExprText(Ctx, R) + "' at " + where(Ctx, R) +
             " is used after the loop other than to read an element "
             "through '" +
             P.Src->getName().str() +
             "', where the loop leaves "
             "the result";
  }
  for (const clang::Stmt *C : S->children())
    if (std::string Why = afterLoopWhy(Ctx, P, C, IsLen, IsTid); !Why.empty())
      return Why;
  return "";
}

class BlockScan : public PlannedTransform<Plan> {
public:
  StringRef kind() const override { return "block-scan"; }
  StringRef description() const override {
    return "replace a block's shared-memory prefix-sum loop (one barrier per "
           "step) by warp-shuffle scans and one exchange of warp totals";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec::integer(
        "items",
        "elements a thread scans (1, 2, 4 or 8): each thread does the work "
        "of that many of the original threads, the launches' blocks "
        "divided by it",
        1, 8)};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E;
    auto P = planDefault(Ctx, Target, A, E);
    if (!P)
      return A;
    A.Reason = P->Description;
    A.Suggestions = {E};
    // Several elements a thread: as many loads in flight.
    if (block_scan::itemsProblem(Ctx, P->Items, 4).empty()) {
      Edit I = E;
      I.Params["items"] = int64_t(4);
      A.Suggestions.push_back(I);
    }
    return A;
  }

private:
  Expected<Plan> analyze(const EditContext &Ctx, const Edit &E) const override;
  Expected<clang::tooling::Replacements>
  rewrite(const EditContext &Ctx, const Edit &E, const Plan &P) const override;
};

// Why long: the preconditions are checked in the order a reader meets the
// kernel (the loop, the step, the store before it, the code after it, the
// launches), each with its own rejection; split, they would pass a dozen
// facts between functions.
Expected<Plan> BlockScan::analyze(const EditContext &Ctx, const Edit &E) const {
  Plan P;
  auto K = resolveKernel(Ctx, E, E.Target);
  if (!K)
    return K.takeError();
  P.Kernel = *K;
  const KernelInfo &KI = *K->Info;
  if (KI.InMacro)
    return reject(E, "macro",
                  "kernel '" + E.Target +
                      "' is defined inside a macro expansion");
  const auto *Body = cast<clang::CompoundStmt>(K->Decl->getBody());
  std::vector<const clang::Stmt *> Stmts(Body->body_begin(), Body->body_end());
  auto Written = writtenVars(Body);
  auto IsTid = [&](const clang::Expr *X) {
    const clang::Expr *S = stripCasts(X);
    if (auto B = asBuiltinVar(S))
      return B->Var == "threadIdx" && B->Dim == 'x';
    const auto *V = dyn_cast_or_null<clang::VarDecl>(declOf(S));
    if (!V || !V->isLocalVarDecl() || !V->getInit() || Written.contains(V))
      return false;
    auto B = asBuiltinVar(stripCasts(V->getInit()));
    return B && B->Var == "threadIdx" && B->Dim == 'x';
  };

  // The loop: for (off = 1; off < N; off doubles), at the top level, after
  // a store and a barrier.
  size_t L = 0;
  std::string LoopWhy;
  for (; L < Stmts.size(); ++L) {
    const auto *F = dyn_cast<clang::ForStmt>(Stmts[L]);
    if (!F || !F->getCond())
      continue;
    const auto *C =
        dyn_cast<clang::BinaryOperator>(F->getCond()->IgnoreParenImpCasts());
    if (!C || C->getOpcode() != clang::BO_LT)
      continue;
    const auto *Off = dyn_cast_or_null<clang::VarDecl>(declOf(C->getLHS()));
    if (!Off)
      continue;
    const clang::Expr *Init = nullptr;
    if (const auto *DS = dyn_cast_or_null<clang::DeclStmt>(F->getInit())) {
      if (DS->isSingleDecl() && DS->getSingleDecl() == Off)
        Init = Off->getInit();
    } else if (const auto *A = dyn_cast_or_null<clang::BinaryOperator>(
                   dyn_cast_or_null<clang::Expr>(F->getInit()))) {
      if (A->getOpcode() == clang::BO_Assign && declOf(A->getLHS()) == Off)
        Init = A->getRHS();
    }
    auto One = Init ? intValue(Init, Ctx.AST) : std::nullopt;
    if (!One || *One != 1 || !doubles(F->getInc(), Off, Ctx.AST))
      continue;
    if (writtenVars(F->getBody()).contains(Off)) {
      LoopWhy = "the loop at " + where(Ctx, F) + " changes its offset '" +
                Off->getName().str() + "' in its body";
      continue;
    }
    P.Loop = F;
    P.Off = Off;
    break;
  }
  if (!P.Loop)
    return reject(E, "not-applicable",
                  LoopWhy.empty()
                      ? "kernel '" + E.Target +
                            "' has no loop 'for (off = 1; off < n; off *= 2)' "
                            "at its top level"
                      : LoopWhy);
  const clang::ForStmt *Loop = P.Loop;
  if (L < 2 || !isBarrierStmt(Stmts[L - 1]))
    return reject(E, "not-applicable",
                  "the doubling loop at " + where(Ctx, Loop) +
                      " is not preceded by a store to shared memory and "
                      "'__syncthreads()'");
  const auto *Store = dyn_cast<clang::BinaryOperator>(Stmts[L - 2]);
  if (!Store || Store->getOpcode() != clang::BO_Assign)
    return reject(E, "not-applicable",
                  "the statement before the barrier at " +
                      where(Ctx, Stmts[L - 1]) +
                      " is not a store of each thread's value");
  P.Store = Store;
  // The store names the array and, with two buffers, how one is chosen.
  const auto *SA =
      dyn_cast<clang::ArraySubscriptExpr>(Store->getLHS()->IgnoreParens());
  const clang::Expr *FirstIndex = nullptr;
  if (SA) {
    const clang::Expr *Base = SA->getBase()->IgnoreParenImpCasts();
    if (const auto *Outer = dyn_cast<clang::ArraySubscriptExpr>(Base)) {
      P.TwoBuffers = true;
      FirstIndex = Outer->getIdx();
      Base = Outer->getBase()->IgnoreParenImpCasts();
    }
    P.Buf = dyn_cast_or_null<clang::VarDecl>(declOf(Base));
  }
  ExprTest IsLen = [&](const clang::Expr *X) {
    auto V = P.HalfLen ? intValue(X, Ctx.AST) : std::nullopt;
    return P.HalfLen ? V == P.HalfLen : isBlockDimX(X, Written);
  };
  if (SA && P.Buf && !P.TwoBuffers && !IsTid(SA->getIdx())) {
    FirstIndex =
        block_scan::storeHalf(SA->getIdx(), IsLen, IsTid, Ctx.AST, P.HalfLen);
    P.Halves = FirstIndex != nullptr;
  }
  if (!SA || !P.Buf || !P.Buf->hasAttr<clang::CUDASharedAttr>() ||
      (!IsTid(SA->getIdx()) && !P.Halves))
    return reject(E, "not-applicable",
                  "'" + looseExprText(Ctx, Store) +
                      "' does not store into a __shared__ array at the "
                      "thread's own index 'threadIdx.x'");
  clang::QualType ElemT = P.Buf->getType();
  while (const auto *AT = Ctx.AST.getAsArrayType(ElemT))
    ElemT = AT->getElementType();
  if (ElemT->isDependentType() || !shuffleType(ElemT))
    return reject(E, "not-applicable",
                  "the scanned elements are '" +
                      ElemT.getAsString(Ctx.AST.getPrintingPolicy()) +
                      "': warp shuffles move 32- and 64-bit integers, float "
                      "and double");
  P.ElemType =
      ElemT.getUnqualifiedType().getAsString(Ctx.AST.getPrintingPolicy());
  if (mentions(Store->getRHS(), P.Buf))
    return reject(E, "not-applicable",
                  "the stored value reads the array it is stored into");

  // Variables of the kernel the step changes: at most the buffer choice.
  llvm::DenseSet<const clang::ValueDecl *> Inner;
  std::function<void(const clang::Stmt *)> CollectDecls =
      [&](const clang::Stmt *S) {
        if (const auto *DS = dyn_cast<clang::DeclStmt>(S))
          for (const clang::Decl *D : DS->decls())
            if (const auto *V = dyn_cast<clang::ValueDecl>(D))
              Inner.insert(V);
        for (const clang::Stmt *C : S->children())
          if (C)
            CollectDecls(C);
      };
  CollectDecls(Loop->getBody());
  std::vector<const clang::VarDecl *> Outer;
  for (const clang::ValueDecl *V : writtenVars(Loop->getBody()))
    if (!Inner.contains(V))
      Outer.push_back(dyn_cast<clang::VarDecl>(V));
  if (P.TwoBuffers || P.Halves) {
    if (std::string Why = block_scan::bufferChoice(
            Ctx, Loop, Store, Outer, FirstIndex,
            ArrayRef<const clang::Stmt *>(Stmts).take_front(L - 1), P.Cur,
            P.Peer, P.PeerStart);
        !Why.empty())
      return reject(E, "not-applicable", Why);
  } else if (!Outer.empty()) {
    std::vector<const clang::Stmt *> Before(Stmts.begin(), Stmts.begin() + L);
    Before[L - 2] = Store->getRHS();
    Before.pop_back(); // the barrier
    if (std::string Why = pointerSwap(Ctx, P, Outer, Before); !Why.empty())
      return reject(E, "not-applicable", Why);
  }

  // One step, run for a thread on each side of the offset. Consecutive
  // steps are apart when the step ends or starts with a barrier.
  if (!stepsApart(dyn_cast<clang::CompoundStmt>(Loop->getBody())))
    return reject(E, "not-applicable",
                  "the loop at " + where(Ctx, Loop) +
                      " has no barrier between one step and the next");
  int Final[2] = {0, 0};
  PhaseLog Log;
  for (bool InRange : {true, false}) {
    StepRun R(Ctx, P, IsTid, IsLen, InRange, Log);
    if (!R.run(Loop->getBody()) || !R.check())
      return reject(E, "not-applicable",
                    "the loop at " + where(Ctx, Loop) +
                        " is not a prefix-sum step: " + R.why());
    Final[InRange] = R.finalBuffer();
  }
  if (Final[0] != Final[1])
    return reject(E, "not-applicable",
                  "threads on either side of the offset end the step in "
                  "different buffers");
  if (Log.race() >= 0)
    return reject(E, "not-applicable",
                  "the loop at " + where(Ctx, Loop) +
                      " reads a neighbour's element while threads write that "
                      "buffer, with no barrier between");

  // Before: nothing leaves early (every thread must reach the shuffles) or
  // touches the array; after: the current buffer only.
  for (size_t I = 0; I + 2 < L; ++I) {
    if (const clang::Stmt *J = firstJump(Stmts[I]))
      return reject(E, "not-applicable",
                    "'" + looseExprText(Ctx, J) + "' at " + where(Ctx, J) +
                        " may leave before the scan; every thread of the "
                        "block must reach it");
    if (std::string Why = block_scan::beforeStoreWhy(
            Ctx, Stmts[I], {P.Buf, P.Other}, {P.Src, P.Dst});
        !Why.empty())
      return reject(E, "not-applicable", Why);
  }
  // After: the buffer choice or the pointers stay; the result is read
  // where the loop left it.
  for (size_t I = L + 1; (P.Cur || P.Src) && I < Stmts.size(); ++I) {
    const clang::VarDecl *Moved = P.Cur ? P.Cur : P.Src;
    if (writtenVars(Stmts[I]).contains(Moved))
      return reject(E, "not-applicable",
                    "'" + Moved->getName().str() + "' changes after the loop");
    if (std::string Why = afterLoopWhy(Ctx, P, Stmts[I], IsLen, IsTid);
        !Why.empty())
      return reject(E, "not-applicable", Why);
  }

  // The launches: whole warps, no more threads than the loop covers.
  std::string Why;
  auto Sizes = launchBlockSizesX(Ctx, KI, Why);
  if (!Sizes)
    return reject(E, "launch", Why);
  const auto *C =
      cast<clang::BinaryOperator>(Loop->getCond()->IgnoreParenImpCasts());
  std::optional<int64_t> N;
  if (!isBlockDimX(C->getRHS(), Written)) {
    N = loopBound(Ctx, P.Kernel.Decl, C->getRHS());
    if (!N)
      return reject(E, "not-applicable",
                    "the loop's bound '" + looseExprText(Ctx, C->getRHS()) +
                        "' is neither a constant nor blockDim.x");
  }
  for (int64_t S : *Sizes) {
    if (S < 32 || S > 1024 || S % 32)
      return reject(E, "launch",
                    "a launch uses blocks of " + Twine(S) +
                        " threads; the shuffles need a multiple of 32");
    if (N && *N < S)
      return reject(E, "launch",
                    "a launch uses blocks of " + Twine(S) +
                        " threads, but the loop scans only the first " +
                        Twine(*N));
    if (P.HalfLen && *P.HalfLen != S)
      return reject(E, "launch",
                    "a launch uses blocks of " + Twine(S) + " threads, but '" +
                        P.Buf->getName() + "' is split in halves of " +
                        Twine(*P.HalfLen) + "; a half must be the block");
  }

  auto First = looseStmtSpan(Ctx, Store);
  auto Last = looseStmtSpan(Ctx, Loop);
  if (!First || !Last)
    return reject(E, "macro", "the scan is written with a macro expansion");
  P.RegionBegin = First->Begin.Offset;
  P.RegionEnd = Last->End.Offset;
  int64_t MaxBlock = *std::max_element(Sizes->begin(), Sizes->end());
  int Steps = 0;
  for (int64_t O = 1; O < (N ? *N : MaxBlock); O <<= 1)
    ++Steps;
  std::string Shape = P.TwoBuffers ? ", double-buffered"
                      : P.Halves   ? ", double-buffered in two halves"
                                   : "";
  if (P.Src)
    Shape = ", pointers '" + P.Src->getName().str() + "' and '" +
            P.Dst->getName().str() + "' swapped";
  P.Description =
      (Twine("prefix sum of '") + P.Buf->getName() + "' over '" +
       P.Off->getName() + "' (" + Twine(Steps) +
       " barrier steps at blocks of " + Twine(MaxBlock) + Shape +
       "); rewrite: shuffle scans in each warp and one exchange of the "
       "warps' totals")
          .str();
  P.Items.Kernel = K->Decl;
  P.Items.Info = K->Info;
  P.Items.Before.assign(Stmts.begin(), Stmts.begin() + (L - 2));
  // A barrier right after the loop: the rewrite ends the scan with one.
  size_t AfterBegin = L + 1;
  while (AfterBegin < Stmts.size() && isBarrierStmt(Stmts[AfterBegin]))
    ++AfterBegin;
  P.Items.After.assign(Stmts.begin() + AfterBegin, Stmts.end());
  P.Items.Store = Store;
  P.Items.ElemType = P.ElemType;
  if (std::optional<int64_t> It = E.getInt("items"); It && *It != 1) {
    if (*It != 2 && *It != 4 && *It != 8)
      return reject(E, "params", "items must be 1, 2, 4 or 8");
    if (std::string Why = block_scan::itemsProblem(Ctx, P.Items, *It);
        !Why.empty())
      return reject(E, "not-applicable", "items " + Twine(*It) + ": " + Why);
  }
  return P;
}

Expected<clang::tooling::Replacements>
BlockScan::rewrite(const EditContext &Ctx, const Edit &E, const Plan &P) const {
  if (std::optional<int64_t> It = E.getInt("items"); It && *It > 1)
    return block_scan::itemsRewrite(Ctx, E, P.Items, *It);
  std::string Text = block_scan::scanText(
      Ctx, P.RegionBegin, P.ElemType, looseExprText(Ctx, P.Store->getRHS()),
      looseExprText(Ctx, P.Store->getLHS()));
  clang::tooling::Replacements Repls;
  if (Error Err = addReplacement(
          Repls,
          clang::tooling::Replacement(Ctx.FileName, P.RegionBegin,
                                      P.RegionEnd - P.RegionBegin, Text),
          E))
    return std::move(Err);
  // What only the loop read goes with it (else nvcc warns it is unused):
  // the second buffer choice (`pin` beside `pout`); the swapped pointer
  // `dst`, then the array it started at, named only in its initializer.
  std::vector<std::pair<unsigned, unsigned>> Removed = {
      {P.RegionBegin, P.RegionEnd}};
  for (const clang::VarDecl *V : {P.Peer, P.Dst, P.Other}) {
    auto Drop = V ? block_scan::unusedDeclaration(Ctx, P.Kernel.Decl->getBody(),
                                                  V, Removed, P.Store)
                  : std::nullopt;
    if (!Drop)
      continue;
    if (Error Err = addReplacement(
            Repls,
            clang::tooling::Replacement(Ctx.FileName, Drop->first,
                                        Drop->second - Drop->first, ""),
            E))
      return std::move(Err);
    Removed.push_back(*Drop);
  }
  return Repls;
}

} // namespace

std::unique_ptr<Transform> createBlockScanTransform() {
  return std::make_unique<BlockScan>();
}

} // namespace optiml
