//===- WarpReduceInternal.h - warp-reduce's shared pieces -------*- C++ -*-===//
//
// Private to the warp-reduce transform (WarpReduce*.cpp): the plans its three
// matchers fill (per-thread atomics in WarpReduceAtomics.cpp, the shared-memory
// tree in WarpReduceTree.cpp, a tree written out step by step in
// WarpReduceUnrolled.cpp, a tree whose stride doubles in
// WarpReduceInterleaved.cpp, the tree's grid-stride leaf in
// WarpReduceLeaf.cpp),
// the statement helpers they share, and the tree matcher, whose members are
// defined in those files. WarpReduce.cpp plans and emits the rewrite.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_WARPREDUCEINTERNAL_H
#define OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_WARPREDUCEINTERNAL_H

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/OperationKinds.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <vector>

namespace optiml {
namespace warpreduce {

// The pieces were written against clang and llvm unqualified; the directives
// stay inside this private namespace.
using namespace clang;
using namespace llvm;

/// The per-thread-atomics form.
struct AtomicsPlan {
  std::vector<const CallExpr *> Atomics;
  std::string Target; ///< the address, as written
  std::string Type;   ///< accumulator type
  bool NeedsCast = false;
};

enum class ReduceOp { Sum, Max, Min };

/// Offsets [Begin, End) of the main file.
struct Range {
  unsigned Begin = 0, End = 0;
};

/// The shared-memory tree form: what to rewrite, and how.
struct TreePlan {
  const VarDecl *Array = nullptr;
  std::string ArrayName;
  std::string ElemType; ///< the register's type (no qualifiers)
  ReduceOp Op = ReduceOp::Sum;
  std::string Fn;        ///< max/min function as written ("fmaxf")
  bool Floating = false; ///< floating point or unknown (template)
  /// The declaration: its size expression is replaced by NewSize, or (for
  /// an array without a size) the whole declaration by NewDecl.
  Range Size, Decl;
  std::string NewSize, NewDecl;
  Range Store;                  ///< `A[tid] = value;`
  std::string StoreValue;       ///< value, as written
  std::optional<Range> PreSync; ///< the barrier before the loop, removed
  Range Region;                 ///< the loop and its warp tail
  std::vector<Range> Finals;    ///< `A[0]` in thread 0's statement
  /// `if (tid != 0) return;` after the tree: Leave spans it and the rest of
  /// the body (from RestBegin), rewritten as `if (LeaveGuard) { rest }`.
  std::optional<Range> Leave;
  unsigned RestBegin = 0;
  std::string LeaveGuard;
  std::string Tid; ///< thread index, as written in the loop's guard
  /// grid_stride: the store's replacement when it holds the guarded value
  /// itself, other replacements of the leaf, and the launches' capped grids.
  bool GridStride = false;
  std::string StoreText;
  std::vector<std::pair<Range, std::string>> LeafEdits, Caps;
  std::string LeafDescription;
  std::vector<std::string> Notes;
  std::string Description;
};

struct WarpReducePlan {
  ResolvedKernel Kernel;
  bool Tree = false;
  AtomicsPlan Atomics;
  TreePlan T;
  /// Whether floating-point sums are reassociated (unknown types count).
  bool Reassociates = true;
};

const Expr *strip(const Expr *E);

/// A binary operation, built in or (in templates) a dependent operator call.
struct Binary {
  BinaryOperatorKind Op;
  const Expr *L, *R;
};
std::optional<Binary> binaryOf(const Stmt *S);

/// The called function's name, also for calls not resolved in a template.
StringRef calleeName(const CallExpr *C);
bool isCallTo(const Stmt *S, StringRef Name);
/// A statement that is a block barrier: `__syncthreads()`, or a call the
/// kernel model takes for one (`cg::sync(cta)`, `cta.sync()`).
bool isBarrier(const Stmt *S);
/// `g.thread_rank()`, `g.size()` or `g.num_threads()` on a cooperative
/// groups `thread_block` (a variable, or `this_thread_block()` itself):
/// the member's name; "" for anything else. In a one-dimensional block
/// they are threadIdx.x and blockDim.x.
StringRef threadBlockMember(const Expr *E);
/// threadIdx.x, or the block's `thread_rank()` (see firstThreadBlockMember).
bool isThreadX(const Expr *E);
/// blockDim.x, or the block's `size()` / `num_threads()`.
bool isBlockDimX(const Expr *E);
/// The first call in \p S that threadBlockMember() names: a kernel that
/// reads one is rewritten only when every launch's block is known to be
/// one-dimensional.
const Expr *firstThreadBlockMember(const Stmt *S);
std::optional<ReduceOp> minMaxOp(StringRef Fn);
bool isPowerOf2(int64_t V);

/// A top-level loop that doubles a stride (`for (s = 1; ...; s *= 2)`, or a
/// while whose last statement doubles it) and holds a barrier or updates
/// an element of shared memory: an interleaved tree, maybe one to refuse
/// (WarpReduceInterleaved.cpp).
bool isInterleavedLoop(const Stmt *X);

/// The per-thread-atomics form (WarpReduceAtomics.cpp).
Error analyzeAtomics(const EditContext &Ctx, const Edit &E,
                     const ResolvedKernel *K, WarpReducePlan &Out);

/// Recognizes the shared-memory tree in one kernel.
class TreeMatcher {
public:
  TreeMatcher(const EditContext &Ctx, const Edit &E, const ResolvedKernel &K)
      : Ctx(Ctx), E(E), K(K), SM(Ctx.AST.getSourceManager()),
        Body(cast<CompoundStmt>(K.Decl->getBody())),
        Written(writtenVars(Body)) {}

  Expected<TreePlan> match();
  /// Whether match() found a loop halving or doubling a stride (a tree,
  /// maybe one it refused).
  bool foundLoop() const { return S != nullptr || Unrolled; }

private:
  const EditContext &Ctx;
  const Edit &E;
  const ResolvedKernel &K;
  const SourceManager &SM;
  const CompoundStmt *Body;
  DenseSet<const ValueDecl *> Written;
  TreePlan P;
  const VarDecl *S = nullptr; ///< the loop's stride

  Error no(const Twine &Why, const Stmt *At = nullptr) const {
    return reject(E, "not-applicable", "kernel '" + E.Target + "': " + Why,
                  At ? filePos(SM, SM.getExpansionLoc(At->getBeginLoc()))
                     : SourcePos{});
  }
  Error no(const Twine &Why, const Decl *At) const {
    return reject(E, "not-applicable", "kernel '" + E.Target + "': " + Why,
                  filePos(SM, SM.getExpansionLoc(At->getLocation())));
  }
  std::string at(const Stmt *St) const {
    SourcePos Pos = filePos(SM, SM.getExpansionLoc(St->getBeginLoc()));
    return std::to_string(Pos.Line) + ":" + std::to_string(Pos.Column);
  }

  /// The main-file span of \p St with macros inside it expanded to their
  /// invocations; with \p Semi, a `;` that ends it is included. Nothing when
  /// it starts or ends inside a macro (unless \p AllowMacroEnds).
  std::optional<Range> span(const Stmt *St, bool Semi,
                            bool AllowMacroEnds = false) const {
    SourceLocation B = St->getBeginLoc(), End = St->getEndLoc();
    if (B.isInvalid() || End.isInvalid())
      return std::nullopt;
    if (!AllowMacroEnds && (B.isMacroID() || End.isMacroID()))
      return std::nullopt;
    B = SM.getExpansionRange(B).getBegin();
    End = SM.getExpansionRange(End).getEnd();
    if (!Ctx.inFile(B) || !Ctx.inFile(End))
      return std::nullopt;
    Range R{SM.getFileOffset(B),
            SM.getFileOffset(End) +
                Lexer::MeasureTokenLength(End, SM, Ctx.AST.getLangOpts())};
    if (Semi && R.End > 0 && Ctx.Code[R.End - 1] != ';' &&
        Ctx.Code[R.End - 1] != '}') {
      unsigned Q = R.End;
      while (Q < Ctx.Code.size() && (Ctx.Code[Q] == ' ' || Ctx.Code[Q] == '\t'))
        ++Q;
      if (Q < Ctx.Code.size() && Ctx.Code[Q] == ';')
        R.End = Q + 1;
    }
    return R;
  }
  std::string text(const Stmt *St) const {
    auto R = span(St, false, true);
    return R ? Ctx.Code.slice(R->Begin, R->End).str() : "";
  }

  /// threadIdx.x, or a local initialized with it and never written.
  bool isTid(const Expr *X) const {
    if (isThreadX(X))
      return true;
    const auto *VD = dyn_cast_or_null<VarDecl>(declOf(X));
    return VD && VD->isLocalVarDecl() && VD->hasInit() &&
           isThreadX(VD->getInit()) && !Written.contains(VD);
  }
  /// `blockIdx.x * blockDim.x + threadIdx.x` in any operand order, the
  /// thread index possibly through a local (isTid).
  bool isLinearIndex(const Expr *X) const {
    if (linearIndexDim(X) == 'x')
      return true;
    auto B = binaryOf(stripCasts(X));
    if (!B || B->Op != BO_Add)
      return false;
    auto BlockOffset = [](const Expr *Y) {
      auto M = binaryOf(stripCasts(Y));
      if (!M || M->Op != BO_Mul)
        return false;
      auto IsBlockX = [](const Expr *Z) {
        auto V = asBuiltinVar(stripCasts(Z));
        return V && V->Var == "blockIdx" && V->Dim == 'x';
      };
      return (IsBlockX(M->L) && isBlockDimX(M->R)) ||
             (isBlockDimX(M->L) && IsBlockX(M->R));
    };
    return (isTid(B->L) && BlockOffset(B->R)) ||
           (isTid(B->R) && BlockOffset(B->L));
  }
  /// Base[i] with Base naming \p Base: the index i, or null.
  static const Expr *indexInto(const Expr *X, const ValueDecl *Base) {
    const auto *AS = dyn_cast_or_null<ArraySubscriptExpr>(strip(X));
    if (!AS || declOf(AS->getBase()) != Base)
      return nullptr;
    return AS->getIdx();
  }
  /// tid + o or o + tid: o.
  const Expr *offsetFrom(const Expr *Idx,
                         function_ref<bool(const Expr *)> IsTid) const {
    auto B = binaryOf(Idx);
    if (!B || B->Op != BO_Add)
      return nullptr;
    if (IsTid(B->L))
      return B->R;
    if (IsTid(B->R))
      return B->L;
    return nullptr;
  }

  /// One step `A[tid] += A[tid + o];`, `A[tid] = A[tid] + A[tid + o];` or
  /// `A[tid] = max(A[tid], A[tid + o]);` (operands in either order): o.
  /// Also with the thread's running value kept in a local beside its
  /// element (the CUDA samples' `A[tid] = r = r + A[tid + o];`, or `A[tid]
  /// = r += A[tid + o];`): the local is the tree's Cached register, the
  /// same in every step (a step without it, after one with it, is no
  /// step). The operator must agree with earlier steps.
  const Expr *step(const Stmt *St, const ValueDecl *A,
                   function_ref<bool(const Expr *)> IsTid) {
    auto B = binaryOf(St);
    if (!B)
      return nullptr;
    auto IsElement = [&](const Expr *X) {
      const Expr *I = indexInto(X, A);
      return I && IsTid(I);
    };
    auto Other = [&](const Expr *X) -> const Expr * {
      const Expr *I = indexInto(X, A);
      return I ? offsetFrom(I, IsTid) : nullptr;
    };
    if (!IsElement(B->L))
      return nullptr;
    const VarDecl *Reg = nullptr;
    if (auto In = B->Op == BO_Assign ? binaryOf(B->R) : std::nullopt;
        In && (In->Op == BO_Assign || In->Op == BO_AddAssign)) {
      Reg = dyn_cast_or_null<VarDecl>(declOf(In->L));
      if (!Reg || !Reg->isLocalVarDecl() || Reg->hasAttr<CUDASharedAttr>() ||
          !isa<DeclRefExpr>(strip(In->L)))
        return nullptr;
      B = In;
    }
    if (CachedSet && Reg != Cached)
      return nullptr;
    auto IsOwn = [&](const Expr *X) {
      return Reg ? declOf(strip(X)) == Reg : IsElement(X);
    };
    std::optional<ReduceOp> Op;
    std::string Fn;
    const Expr *Off = nullptr;
    if (B->Op == BO_AddAssign) {
      Op = ReduceOp::Sum;
      Off = Other(B->R);
    } else if (B->Op == BO_Assign) {
      const Expr *X = nullptr, *Y = nullptr;
      if (auto Sum = binaryOf(B->R); Sum && Sum->Op == BO_Add) {
        Op = ReduceOp::Sum;
        X = Sum->L;
        Y = Sum->R;
      } else if (const auto *C = dyn_cast<CallExpr>(strip(B->R));
                 C && C->getNumArgs() == 2 && !isa<CXXOperatorCallExpr>(C)) {
        Op = minMaxOp(calleeName(C));
        Fn = text(C->getCallee());
        X = C->getArg(0);
        Y = C->getArg(1);
      }
      if (Op && X && Y) {
        if (IsOwn(X))
          Off = Other(Y);
        else if (IsOwn(Y))
          Off = Other(X);
      }
    }
    if (!Op || !Off)
      return nullptr;
    if (!CachedSet) {
      Cached = Reg;
      CachedSet = true;
    }
    if (!OpSet) {
      // The first step fixes the operator.
      P.Op = *Op;
      P.Fn = Fn;
      OpSet = true;
    }
    return *Op == P.Op ? Off : nullptr;
  }
  bool OpSet = false;
  /// The local a tree's steps keep equal to the thread's element (see
  /// step()), once the first step is seen; null when they keep none.
  const VarDecl *Cached = nullptr;
  bool CachedSet = false;

  /// The statements a tree spans, and what the rest of the match needs.
  struct TreeShape {
    const Stmt *const *Begin = nullptr; ///< the loop or the first step
    const Stmt *const *End = nullptr;   ///< after it (a loop's tail not yet)
    const Stmt *First = nullptr;        ///< where the rewritten region starts
    bool Tail = false; ///< a loop to 32 followed by a warp tail
    /// The loop's barrier comes before its step (then none need come
    /// between the store and the loop).
    bool BarrierFirst = false;
    std::optional<int64_t> Start;
    std::string StartText;
    std::vector<const Stmt *> Parts; ///< the tree's statements (grid_stride)
  };
  /// The rest of the match once the tree \p Sh is known (match()'s or
  /// matchUnrolled()'s): the array's type and declaration, the one store
  /// and barrier before the tree, thread 0's statements, the launches.
  Expected<TreePlan> finish(const TreeShape &Sh, const Stmt *Leave,
                            bool ViaHelper);
  /// The array \p StepS updates (P.Array): a __shared__ array of the
  /// kernel, or memory from a SharedMemory<T>() helper (\p ViaHelper),
  /// indexed by the thread (or by \p Index, an interleaved tree's
  /// `2 * s * tid`).
  Error matchArray(const Stmt *StepS, bool &ViaHelper,
                   const VarDecl *Index = nullptr);
  /// The tree loop \p Loop's start statement \p Init (its header's, or for
  /// a while the statement just before), condition \p Cond and body \p LB
  /// (without a while's last statement, the stride's step).
  Error loopParts(const Stmt *const *LoopIt, const Stmt *&Init,
                  const Expr *&Cond, std::vector<const Stmt *> &LB) const;
  /// The value \p InitS gives the stride S (`int s = X` or `s = X`), or null.
  const Expr *strideStart(const Stmt *InitS) const;
  /// The refusal of a return \p Return before the tree is done.
  Error refuseReturn(const Stmt *Return) const;
  /// A tree whose stride doubles, \p LoopIt (WarpReduceInterleaved.cpp):
  /// `for (s = 1; s < blockDim.x; s *= 2) { if (tid % (2 * s) == 0)
  /// A[tid] += A[tid + s]; __syncthreads(); }`, or its guard on an index
  /// `int i = 2 * s * tid; if (i < blockDim.x) A[i] += A[i + s];`. \p Leave
  /// and \p Return as match() found them.
  Expected<TreePlan> matchInterleaved(const Stmt *const *LoopIt,
                                      const Stmt *Leave, const Stmt *Return);
  /// The thread index of an interleaved tree's guard \p Guard (through its
  /// index \p Index when there is one), with the block size it compares
  /// with when that is a constant (\p Bound).
  Expected<const Expr *> interleavedGuard(const IfStmt *Guard,
                                          const VarDecl *Index,
                                          std::optional<int64_t> &Bound);
  /// Whether the tree's stride doubles (matchInterleaved()): every launch's
  /// block must then be known.
  bool Interleaved = false;
  /// A tree written out step by step (WarpReduceUnrolled.cpp), the
  /// kernel's early return \p Leave and other return \p Return as match()
  /// found them.
  Expected<TreePlan> matchUnrolled(const Stmt *Leave, const Stmt *Return);
  /// The steps of an unrolled tree in one body (the pattern, or with
  /// \p Evaluate an instantiation or a plain kernel, its conditions
  /// constant), from its statement \p First on.
  struct UnrolledWalk {
    const ValueDecl *A = nullptr; ///< the array of the first step
    const Stmt *FirstStep = nullptr;
    const Expr *Tid = nullptr;
    unsigned Steps = 0;           ///< the steps written
    std::vector<int64_t> Strides; ///< with Evaluate: those run, in order
    unsigned End = 0;             ///< the statement after the tree
  };
  Error walkUnrolled(ArrayRef<const Stmt *> Stmts, unsigned First,
                     bool Evaluate, UnrolledWalk &W);
  /// The steps of the last warp after `if (tid < 32)`: \p Then, a call
  /// `helper(A, tid)` or a block of steps, maybe through a volatile alias.
  Error walkUnrolledTail(const Stmt *Then, bool Evaluate, UnrolledWalk &W);
  /// Every launch of an unrolled tree runs exactly the strides its block
  /// needs, B/2 down to 1 (WarpReduceUnrolled.cpp).
  Error checkUnrolledLaunches();
  bool Unrolled = false;
  unsigned UnrolledFirst = 0, UnrolledEnd = 0;
  Error matchLoop(const Stmt *L, const Stmt *InitS, const Expr *Cond,
                  bool &Tail, std::optional<int64_t> &Start,
                  std::string &StartText);
  Error matchTail(const Stmt *St);
  /// The steps of a last-warp block \p Then that is not a helper call (a
  /// block, or one statement); a first declaration `volatile T *v = A;` of
  /// a pointer to \p Array never written after is taken off and becomes
  /// \p Base, on which the steps work.
  std::vector<const Stmt *> lastWarpBlockSteps(const Stmt *Then,
                                               const ValueDecl *Array,
                                               const ValueDecl *&Base) const;
  /// \p Then runs in thread 0 alone after the tree: it reads A[0] only.
  Error matchFinal(const Stmt *Then);
  /// After the tree (\p After): `if (tid == 0) ...` reading A[0], or an
  /// early return \p Leave (`if (tid != 0) return;`) and thread 0's
  /// statements after it; fills \p Thread0 and \p Then (see matchLeaf).
  Error matchThread0(ArrayRef<const Stmt *> After, const Stmt *Leave,
                     std::vector<const Stmt *> &Thread0, const Stmt *&Then);
  /// `if (tid != 0) return;` (or `tid > 0`, `tid`): the thread index.
  const Expr *leavesUnlessThread0(const Stmt *St) const;
  /// \p Thread0: the statements only thread 0 runs (the final `if`, or
  /// the early return and what follows it); \p Then: the one statement
  /// thread 0 runs (null when there are several).
  Error matchLeaf(ArrayRef<const Stmt *> Stmts, const Stmt *Store,
                  ArrayRef<const Stmt *> Thread0, const Stmt *Then,
                  ArrayRef<const Stmt *> TreeStmts);
  void checkLaunches(bool Tail, std::optional<int64_t> Start,
                     const std::string &StartText, Error &Err);
  /// The leaf's index \p Index is the thread's global linear index read by
  /// its meaning (through locals never written and helpers 'return
  /// <index>;'): over a 1D grid (\p GridRows false) or a 2D grid whose
  /// blocks are counted row by row (true). Nothing for another index.
  std::optional<bool> indexByMeaning(const VarDecl *Index) const;
  /// Where the kernel (or an instantiation, or a helper it calls) reads
  /// blockIdx or gridDim outside \p Index's initializer: a capped grid
  /// changes them. Success when nowhere.
  Error gridReadsElsewhere(const VarDecl *Index) const;
  /// Caps every launch's grid at \p Max blocks (P.Caps); a kernel whose
  /// index counts a 2D grid's blocks (\p GridRows) may be launched with a
  /// `dim3` grid, which becomes one dimension (rowsGrid()).
  Error capLaunches(int64_t Max, bool GridRows);
  /// A launch's `dim3(x, y[, z])` grid, or a `dim3` variable g, for a
  /// kernel whose index counts the blocks row by row: its x * y blocks
  /// capped at \p Max as one dimension, z kept (`dim3(cap, 1, z)`) unless it
  /// is 1. Nothing, with \p Why, for another grid.
  std::optional<std::string> rowsGrid(const LaunchSite &L, int64_t Max,
                                      std::string &Why) const;
};

} // namespace warpreduce
} // namespace optiml

#endif // OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_WARPREDUCEINTERNAL_H
