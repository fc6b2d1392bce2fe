//===- WarpReduce.cpp - Reductions through warp shuffles
//-------------------===//
//
// Two shapes of reduction become warp shuffles.
//
// Per-thread atomics: threads that each add into one block-uniform address
//   if (i < n) atomicAdd(sum, x[i]);
// accumulate into a register instead, combine the 32 lanes of each warp with
// __shfl_down_sync, and let lane 0 do the one atomicAdd:
//   float warp_sum = 0;
//   if (i < n) warp_sum += x[i];
//   for (int off = 16; off > 0; off /= 2)
//     warp_sum += __shfl_down_sync(0xffffffffu, warp_sum, off);
//   if (threadIdx.x % 32 == 0)
//     atomicAdd(sum, warp_sum);
//
// Shared-memory trees: a block that stores one value per thread and halves
// a stride with a barrier per step
//   __shared__ int partial[BLOCK];
//   partial[tid] = value;
//   __syncthreads();
//   for (int s = blockDim.x / 2; s > 0; s >>= 1) {
//     if (tid < s) partial[tid] += partial[tid + s];
//     __syncthreads();
//   }
//   if (tid == 0) atomicAdd(total, partial[0]);
// (or a loop down to s > 32 and a warp-synchronous tail) keeps the value in
// a register, folds each warp with shuffles, passes one partial per warp
// through a shared array of BLOCK / 32 entries, and lets the first warp fold
// those; thread 0 then runs the original final statement on the register:
//   int v = value;
//   for (int off = 16; off > 0; off /= 2)
//     v += __shfl_down_sync(0xffffffff, v, off);
//   if (tid % 32 == 0)
//     partial[tid / 32] = v;
//   __syncthreads();
//   if (tid < 32) {
//     v = tid < blockDim.x / 32 ? partial[tid] : 0;
//     for (int off = 16; off > 0; off /= 2)
//       v += __shfl_down_sync(0xffffffff, v, off);
//   }
//   if (tid == 0) atomicAdd(total, v);
//
// With grid_stride, a tree fed by one guarded element per thread
//   s[tid] = (i < n) ? x[i] * y[i] : 0.f;
// first folds many elements per thread in the register
//   float v = 0.f;
//   for (int j = i; j < n; j += gridDim.x * blockDim.x)
//     v += x[j] * y[j];
// and every launch's 1D grid G becomes (G < M ? G : M), so the tree and
// the final atomic run once per block of a capped grid. Only a result that
// is one atomic per block into one location survives the cap.
//
// Both need every lane of every warp to reach the shuffles: no early
// return, one-dimensional blocks, blocks that are whole warps (and, for the
// tree, powers of two). Floating-point sums are reassociated; integer sums
// and max/min are exact.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
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
namespace {

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

const Expr *strip(const Expr *E) {
  return E ? E->IgnoreParenImpCasts() : nullptr;
}

/// A binary operation, built in or (in templates) a dependent operator call.
struct Binary {
  BinaryOperatorKind Op;
  const Expr *L, *R;
};
std::optional<Binary> binaryOf(const Stmt *S) {
  const auto *E = dyn_cast_or_null<Expr>(S);
  if (!E)
    return std::nullopt;
  E = strip(E);
  if (const auto *B = dyn_cast<BinaryOperator>(E))
    return Binary{B->getOpcode(), B->getLHS(), B->getRHS()};
  const auto *C = dyn_cast<CXXOperatorCallExpr>(E);
  if (!C || C->getNumArgs() != 2)
    return std::nullopt;
  std::optional<BinaryOperatorKind> K;
  switch (C->getOperator()) {
  case OO_Plus:
    K = BO_Add;
    break;
  case OO_PlusEqual:
    K = BO_AddAssign;
    break;
  case OO_Equal:
    K = BO_Assign;
    break;
  case OO_Less:
    K = BO_LT;
    break;
  case OO_Greater:
    K = BO_GT;
    break;
  case OO_EqualEqual:
    K = BO_EQ;
    break;
  default:
    break;
  }
  if (!K)
    return std::nullopt;
  return Binary{*K, C->getArg(0), C->getArg(1)};
}

/// The called function's name, also for calls not resolved in a template.
StringRef calleeName(const CallExpr *C) {
  if (const FunctionDecl *FD = C->getDirectCallee())
    return FD->getIdentifier() ? FD->getName() : "";
  if (const auto *UL = dyn_cast<UnresolvedLookupExpr>(strip(C->getCallee())))
    if (UL->getName().isIdentifier())
      return UL->getName().getAsIdentifierInfo()->getName();
  return "";
}

bool isCallTo(const Stmt *S, StringRef Name) {
  const auto *C = dyn_cast_or_null<CallExpr>(S);
  return C && calleeName(C) == Name;
}

/// A statement that is a block barrier: `__syncthreads()`, or a call the
/// kernel model takes for one (`cg::sync(cta)`, `cta.sync()`).
bool isBarrier(const Stmt *S) {
  const auto *C = dyn_cast_or_null<CallExpr>(S);
  return C && (calleeName(C) == "__syncthreads" ||
               isBlockBarrier(C->getDirectCallee()));
}

bool isThreadX(const Expr *E) {
  auto B = asBuiltinVar(stripCasts(E));
  return B && B->Var == "threadIdx" && B->Dim == 'x';
}

std::optional<ReduceOp> minMaxOp(StringRef Fn) {
  if (Fn == "max" || Fn == "fmaxf" || Fn == "fmax")
    return ReduceOp::Max;
  if (Fn == "min" || Fn == "fminf" || Fn == "fmin")
    return ReduceOp::Min;
  return std::nullopt;
}

bool isPowerOf2(int64_t V) { return V > 0 && (V & (V - 1)) == 0; }

/// Recognizes the shared-memory tree in one kernel.
class TreeMatcher {
public:
  TreeMatcher(const EditContext &Ctx, const Edit &E, const ResolvedKernel &K)
      : Ctx(Ctx), E(E), K(K), SM(Ctx.AST.getSourceManager()),
        Body(cast<CompoundStmt>(K.Decl->getBody())),
        Written(writtenVars(Body)) {}

  Expected<TreePlan> match();
  /// Whether match() found a loop halving a stride (a tree, maybe one it
  /// refused).
  bool foundLoop() const { return S != nullptr; }

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
      auto L = asBuiltinVar(stripCasts(M->L));
      auto R = asBuiltinVar(stripCasts(M->R));
      return L && R && L->Dim == 'x' && R->Dim == 'x' &&
             ((L->Var == "blockIdx" && R->Var == "blockDim") ||
              (L->Var == "blockDim" && R->Var == "blockIdx"));
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
  /// The operator must agree with earlier steps.
  const Expr *step(const Stmt *St, const ValueDecl *A,
                   function_ref<bool(const Expr *)> IsTid) {
    auto B = binaryOf(St);
    if (!B)
      return nullptr;
    auto IsOwn = [&](const Expr *X) {
      const Expr *I = indexInto(X, A);
      return I && IsTid(I);
    };
    auto Other = [&](const Expr *X) -> const Expr * {
      const Expr *I = indexInto(X, A);
      return I ? offsetFrom(I, IsTid) : nullptr;
    };
    if (!IsOwn(B->L))
      return nullptr;
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
    if (!OpSet) {
      // The first step fixes the operator.
      P.Op = *Op;
      P.Fn = Fn;
      OpSet = true;
    }
    return *Op == P.Op ? Off : nullptr;
  }
  bool OpSet = false;

  Error matchLoop(const ForStmt *L, bool &Tail, std::optional<int64_t> &Start,
                  std::string &StartText);
  Error matchTail(const Stmt *St);
  Error matchFinal(const IfStmt *If);
  Error matchLeaf(ArrayRef<const Stmt *> Stmts, const Stmt *Store,
                  const IfStmt *Final, ArrayRef<const Stmt *> TreeStmts);
  void checkLaunches(bool Tail, std::optional<int64_t> Start,
                     const std::string &StartText, Error &Err);
};

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

Error TreeMatcher::matchLoop(const ForStmt *L, bool &Tail,
                             std::optional<int64_t> &Start,
                             std::string &StartText) {
  // Start: `int s = X` or `s = X`.
  const Expr *Init = nullptr;
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(L->getInit())) {
    const auto *V =
        DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl()) : nullptr;
    if (V == S)
      Init = V->getInit();
  } else if (auto B = binaryOf(L->getInit());
             B && B->Op == BO_Assign && declOf(B->L) == S) {
    Init = B->R;
  }
  if (!Init)
    return no("the tree loop at " + at(L) + " does not start its stride '" +
                  S->getName() + "' in its header",
              L);
  StartText = text(Init);
  auto SB = binaryOf(stripCasts(Init));
  bool BlockHalf = false;
  if (SB && (SB->Op == BO_Div || SB->Op == BO_Shr)) {
    auto D = asBuiltinVar(stripCasts(SB->L));
    auto V = intValue(SB->R, Ctx.AST);
    BlockHalf = D && D->Var == "blockDim" && D->Dim == 'x' && V &&
                *V == (SB->Op == BO_Div ? 2 : 1);
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
  auto C = binaryOf(L->getCond());
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
    return no("the tree loop's condition '" + text(L->getCond()) +
                  "' is not '" + S->getName() + " > 0' (or '" + S->getName() +
                  " > 32' followed by a warp-synchronous tail)",
              L);
  Tail = *Last == 64;
  return Error::success();
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
  } else if (const auto *CS = dyn_cast<CompoundStmt>(Then)) {
    Steps.assign(CS->body_begin(), CS->body_end());
    if (!Steps.empty())
      if (const auto *DS = dyn_cast<DeclStmt>(Steps.front());
          DS && DS->isSingleDecl()) {
        const auto *V = dyn_cast<VarDecl>(DS->getSingleDecl());
        if (V && V->getType()->isPointerType() && V->hasInit() &&
            declOf(V->getInit()) == P.Array &&
            !Written.contains(V)) {
          Base = V;
          Steps.erase(Steps.begin());
        }
      }
  } else {
    Steps.push_back(Then);
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

Error TreeMatcher::matchFinal(const IfStmt *If) {
  // Every use of the array in thread 0's statement reads A[0].
  struct Uses : RecursiveASTVisitor<Uses> {
    const ValueDecl *A;
    unsigned Refs = 0;
    std::vector<const ArraySubscriptExpr *> Reads;
    const Stmt *Bad = nullptr;
    bool VisitDeclRefExpr(DeclRefExpr *D) {
      Refs += D->getDecl() == A;
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
  U.TraverseStmt(const_cast<Stmt *>(If->getThen()));
  if (U.Bad)
    return no("'" + P.ArrayName + "' is written or its address taken at " +
                  at(U.Bad) + " after the loop",
              U.Bad);
  if (U.Refs != U.Reads.size())
    return no("'" + P.ArrayName + "' is used other than as '" + P.ArrayName +
                  "[0]' after the loop",
              If);
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

//===--- grid_stride: the leaf --------------------------------------------===//

/// Whether \p Id is the identity of \p Op for elements of type \p Elem:
/// 0 for +; -INFINITY, the lowest finite value or the type's minimum for
/// max; their opposites for min.
bool isIdentity(const Expr *Id, ReduceOp Op, QualType Elem,
                const ASTContext &AST) {
  if (!Id || Id->isValueDependent() || Id->isTypeDependent())
    return false;
  Expr::EvalResult R;
  if (!Id->EvaluateAsRValue(R, AST))
    return false;
  const APValue &V = R.Val;
  if (Op == ReduceOp::Sum)
    return (V.isInt() && V.getInt().isZero()) ||
           (V.isFloat() && V.getFloat().isZero());
  if (Elem->isDependentType())
    return false;
  bool Max = Op == ReduceOp::Max;
  if (V.isFloat()) {
    const APFloat &F = V.getFloat();
    if (F.isInfinity())
      return F.isNegative() == Max;
    if (!Elem->isRealFloatingType())
      return false;
    APFloat L = APFloat::getLargest(AST.getFloatTypeSemantics(Elem), Max);
    APFloat G = F;
    bool Lost = false;
    G.convert(L.getSemantics(), APFloat::rmNearestTiesToEven, &Lost);
    return !Lost && G.bitwiseIsEqual(L);
  }
  if (V.isInt() && Elem->isIntegerType()) {
    unsigned W = AST.getIntWidth(Elem);
    bool Unsigned = Elem->isUnsignedIntegerType();
    APSInt Want = Max ? APSInt::getMinValue(W, Unsigned)
                      : APSInt::getMaxValue(W, Unsigned);
    return APSInt::isSameValue(V.getInt(), Want);
  }
  return false;
}

StringRef identityName(ReduceOp Op) {
  switch (Op) {
  case ReduceOp::Sum:
    return "0";
  case ReduceOp::Max:
    return "-INFINITY, the lowest finite value or the type's minimum";
  case ReduceOp::Min:
    return "INFINITY, the largest finite value or the type's maximum";
  }
  return "";
}

/// The leaf value reads elements only at the index: every subscript is
/// `p[i]`, no pointer is dereferenced otherwise, nothing is written, no
/// thread or block index, shared memory, barrier or warp primitive is used,
/// and locals it reads are the same for every thread of the grid. Helpers
/// it calls obey the same rules and read no memory at all.
class LeafCheck : public RecursiveASTVisitor<LeafCheck> {
public:
  LeafCheck(const VarDecl *Index, const FunctionDecl *Kernel,
            const DenseSet<const ValueDecl *> &Written,
            function_ref<std::string(const Stmt *)> Text)
      : Index(Index), Kernel(Kernel), Written(Written), Text(Text) {}

  std::string Why;
  const Stmt *At = nullptr;

  bool check(const Stmt *S) {
    if (mentionsBuiltin(S))
      return fail("uses a thread or block index other than through '" +
                      Index->getName().str() + "'",
                  S);
    return TraverseStmt(const_cast<Stmt *>(S));
  }

  bool VisitArraySubscriptExpr(ArraySubscriptExpr *AS) {
    if (Helper)
      return fail("calls '" + Helper->getName().str() +
                      "', which reads memory ('" + Text(AS) + "')",
                  AS);
    if (declOf(AS->getIdx()) != Index)
      return fail("reads '" + Text(AS) + "' at an index other than '" +
                      Index->getName().str() + "'",
                  AS);
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *U) {
    if (U->getOpcode() == UO_Deref)
      return fail("reads through the pointer '" + Text(U) + "'", U);
    if (U->isIncrementDecrementOp())
      return fail("writes '" + Text(U->getSubExpr()) + "'", U);
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator *B) {
    if (B->isAssignmentOp())
      return fail("writes '" + Text(B->getLHS()) + "'", B);
    return true;
  }
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *C) {
    if (C->isAssignmentOp())
      return fail("writes '" + Text(C->getArg(0)) + "'", C);
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *D) {
    const auto *V = dyn_cast<VarDecl>(D->getDecl());
    if (!V || V == Index)
      return true;
    if (V->hasAttr<CUDASharedAttr>())
      return fail("reads the shared array '" + V->getName().str() + "'", D);
    if (Helper)
      return true; // the helper's own parameters and locals
    if (Written.contains(V))
      return fail("reads '" + V->getName().str() + "', which the kernel writes",
                  D);
    if (V->isLocalVarDecl() && !isa<ParmVarDecl>(V) &&
        !gridUniform(D, Kernel, 0))
      return fail("reads '" + V->getName().str() +
                      "', which differs between threads or blocks",
                  D);
    return true;
  }
  bool VisitCallExpr(CallExpr *C) {
    const FunctionDecl *FD = C->getDirectCallee();
    if (!FD || !FD->getIdentifier())
      return fail("calls '" + Text(C->getCallee()) +
                      "', which is not a plain function",
                  C);
    StringRef Name = FD->getName();
    if (isThreadCall(Name))
      return fail("calls " + Name.str(), C);
    // __ldg(&x[i]) only reads (read-only-cache writes it).
    if (Name == "__ldg")
      return true;
    for (const ParmVarDecl *PV : FD->parameters())
      if (PV->getType()->isPointerType() || PV->getType()->isReferenceType())
        return fail("passes a pointer or reference to '" + Name.str() + "'", C);
    const FunctionDecl *Def = nullptr;
    if (!FD->hasBody(Def))
      return true; // a math function
    if (Depth >= 4)
      return fail("calls helpers nested too deeply ('" + Name.str() + "')", C);
    if (mentionsBuiltin(Def->getBody()))
      return fail(
          "calls '" + Name.str() + "', which reads thread or block indices", C);
    const FunctionDecl *Outer = Helper;
    Helper = Def;
    ++Depth;
    bool Ok = TraverseStmt(Def->getBody());
    --Depth;
    Helper = Outer;
    return Ok;
  }
  bool TraverseLambdaExpr(LambdaExpr *L) { return fail("uses a lambda", L); }

  /// \p E has the same value in every thread of the grid: block-uniform,
  /// and no local it reads comes from blockIdx.
  static bool gridUniform(const Expr *E, const FunctionDecl *K,
                          unsigned Depth) {
    if (Depth > 16 || !isBlockUniform(E, K) ||
        mentionsBuiltin(E, "blockIdx"))
      return false;
    bool Ok = true;
    struct Refs : RecursiveASTVisitor<Refs> {
      std::vector<const VarDecl *> Locals;
      bool VisitDeclRefExpr(DeclRefExpr *D) {
        if (const auto *V = dyn_cast<VarDecl>(D->getDecl()))
          if (V->isLocalVarDecl() && !isa<ParmVarDecl>(V))
            Locals.push_back(V);
        return true;
      }
    } R;
    R.TraverseStmt(const_cast<Expr *>(E));
    for (const VarDecl *V : R.Locals)
      Ok &= V->getInit() && gridUniform(V->getInit(), K, Depth + 1);
    return Ok;
  }

private:
  const VarDecl *Index;
  const FunctionDecl *Kernel;
  const DenseSet<const ValueDecl *> &Written;
  function_ref<std::string(const Stmt *)> Text;
  const FunctionDecl *Helper = nullptr;
  unsigned Depth = 0;

  bool fail(std::string W, const Stmt *S) {
    if (Why.empty()) {
      Why = std::move(W);
      At = S;
    }
    return false;
  }
};

/// The leaf: the value each thread stores before the tree, guarded by the
/// index's bound, becomes a register folded over a grid-stride loop.
Error TreeMatcher::matchLeaf(ArrayRef<const Stmt *> Stmts, const Stmt *Store,
                             const IfStmt *Final,
                             ArrayRef<const Stmt *> TreeStmts) {
  auto StoreB = binaryOf(Store);
  if (!StoreB)
    return no("the store '" + text(Store) + "' is not an assignment");
  const Expr *Value = strip(StoreB->R);
  QualType AT = P.Array->getType();
  QualType Elem = AT->isPointerType()
                      ? AT->getPointeeType()
                      : Ctx.AST.getAsArrayType(AT)->getElementType();
  static const char *OpNames[] = {"+", "max", "min"};
  std::string OpName = OpNames[int(P.Op)];
  auto Shapes = [&] {
    return "'" + P.ArrayName + "[tid] = (i < n) ? value : " +
           (P.Op == ReduceOp::Sum ? "0" : "<identity>") +
           ";' or 'T v = " + (P.Op == ReduceOp::Sum ? "0" : "<identity>") +
           "; if (i < n) v = value; " + P.ArrayName +
           "[tid] = v;' with i = blockIdx.x * blockDim.x + threadIdx.x";
  };

  // The three spellings: the guard, the guarded value and the identity,
  // and the local (if any) that carries them to the store.
  const Expr *Cond = nullptr, *Val = nullptr, *Id = nullptr;
  const VarDecl *Local = nullptr;
  const Stmt *LocalDecl = nullptr, *LocalIf = nullptr;
  auto Conditional = [&](const Expr *X) {
    if (const auto *C = dyn_cast<ConditionalOperator>(strip(X))) {
      Cond = C->getCond();
      Val = C->getTrueExpr();
      Id = C->getFalseExpr();
      return true;
    }
    return false;
  };
  size_t StoreIdx = find(Stmts, Store) - Stmts.begin();
  if (const auto *LV = dyn_cast_or_null<VarDecl>(declOf(Value));
      LV && LV->isLocalVarDecl() && !isa<ParmVarDecl>(LV) &&
      isa<DeclRefExpr>(Value)) {
    Local = LV;
    for (size_t Ix = 0; Ix < Stmts.size(); ++Ix) {
      const Stmt *X = Stmts[Ix];
      const auto *DS = dyn_cast<DeclStmt>(X);
      if (DS && DS->isSingleDecl() && DS->getSingleDecl() == LV) {
        LocalDecl = X;
        continue;
      }
      if (X == Store || !mentions(X, LV))
        continue;
      const auto *If = dyn_cast<IfStmt>(X);
      const Stmt *Then = If ? If->getThen() : nullptr;
      if (const auto *CS = dyn_cast_or_null<CompoundStmt>(Then);
          CS && CS->size() == 1)
        Then = CS->body_front();
      auto B = binaryOf(Then);
      if (LocalDecl && !LocalIf && If && !If->getElse() && !If->getInit() &&
          !If->getConditionVariable() && B && B->Op == BO_Assign &&
          declOf(B->L) == LV && !mentions(If->getCond(), LV) &&
          !mentions(B->R, LV) && Ix < StoreIdx) {
        LocalIf = X;
        Cond = If->getCond();
        Val = B->R;
        continue;
      }
      return no("the value stored into '" + P.ArrayName + "' comes from '" +
                    LV->getName() + "', which is used at " + at(X) +
                    "; grid_stride expects " + Shapes(),
                X);
    }
    if (!LocalDecl || !LV->hasInit())
      return no("'" + LV->getName() + "', stored into '" + P.ArrayName +
                    "', is not declared with a value at the top level of "
                    "the kernel; grid_stride expects " +
                    Shapes(),
                Store);
    if (LocalIf) {
      Id = LV->getInit();
    } else if (!Conditional(LV->getInit()) || Written.contains(LV)) {
      return no("'" + LV->getName() + "' is not '(i < n) ? value : " +
                    (P.Op == ReduceOp::Sum ? "0" : "<identity>") +
                    "' nor set by one 'if (i < n) " + LV->getName() +
                    " = value;'; grid_stride expects " + Shapes(),
                LocalDecl);
    }
  } else if (!Conditional(Value)) {
    return no("the value stored into '" + P.ArrayName + "' at " + at(Store) +
                  " is not guarded by the index's bound; grid_stride expects " +
                  Shapes(),
              Store);
  }

  // The guard: `i < n` (or `n > i`), then any further conjuncts.
  std::vector<const Expr *> Rest;
  const Expr *Check = strip(Cond);
  while (const auto *B = dyn_cast<BinaryOperator>(Check)) {
    if (B->getOpcode() != BO_LAnd)
      break;
    Rest.insert(Rest.begin(), B->getRHS());
    Check = strip(B->getLHS());
  }
  auto CB = binaryOf(Check);
  const Expr *IdxE = nullptr, *Bound = nullptr;
  if (CB && CB->Op == BO_LT) {
    IdxE = CB->L;
    Bound = CB->R;
  } else if (CB && CB->Op == BO_GT) {
    IdxE = CB->R;
    Bound = CB->L;
  }
  if (!IdxE)
    return no("the leaf's guard '" + text(Cond) +
                  "' does not start with 'i < n'; grid_stride expects " +
                  Shapes(),
              Cond);
  const auto *Index = dyn_cast_or_null<VarDecl>(declOf(IdxE));
  if (!Index || !Index->isLocalVarDecl() || !Index->hasInit() ||
      !isLinearIndex(Index->getInit()) || Written.contains(Index))
    return no("the leaf's guard compares '" + text(IdxE) +
                  "', not a local index 'i = blockIdx.x * blockDim.x + "
                  "threadIdx.x' that is never written",
              Cond);
  if (const ValueDecl *BD = declOf(Bound);
      BD && Written.contains(BD))
    return no("the bound '" + text(Bound) +
                  "' is written in the kernel; the grid-stride loop needs "
                  "it fixed",
              Bound);
  if (!LeafCheck::gridUniform(Bound, K.Decl, 0))
    return no("the bound '" + text(Bound) +
                  "' is not the same for every thread of the grid",
              Bound);
  if (!isIdentity(Id, P.Op, Elem, Ctx.AST))
    return no("out-of-range threads contribute '" + text(Id) +
                  "', not the identity of " + OpName + " (" +
                  identityName(P.Op).str() +
                  "); the grid-stride loop would fold it in once per thread",
              Id);

  // The leaf value and the further conjuncts read elements at i only.
  auto TextFn = [&](const Stmt *S) { return text(S); };
  std::vector<const Expr *> Parts = Rest;
  Parts.push_back(Val);
  for (const Expr *X : Parts) {
    if (containsMacro(X))
      return no("the leaf '" + text(X) + "' is written with a macro", X);
    LeafCheck LC(Index, K.Decl, Written, TextFn);
    if (!LC.check(X))
      return no("the leaf '" + text(X) + "' " + LC.Why +
                    "; grid_stride needs an elementwise value of x[" +
                    Index->getName() + "]",
                LC.At ? LC.At : X);
  }

  // With a capped grid, a block's other work would run for fewer blocks:
  // nothing outside the tree writes memory but the final atomic.
  for (const Stmt *X : Stmts) {
    if (X == Final || is_contained(TreeStmts, X))
      continue;
    for (const MemWrite &W : memoryWrites(X))
      if (declOf(W.Base) != P.Array)
        return no("writes '" + text(W.Target) + "' at " + at(X) +
                      " (per thread): with a capped grid, grid_stride would "
                      "skip it for the blocks that no longer exist",
                  X);
    if (const Stmt *C = opaqueCall(X))
      return no("calls '" + text(C) + "' at " + at(X) +
                    ", whose writes cannot be followed; grid_stride needs a "
                    "kernel that only reduces",
                C);
  }

  // The result: one atomic per block into one location.
  const Stmt *Then = Final->getThen();
  if (const auto *CS = dyn_cast<CompoundStmt>(Then); CS && CS->size() == 1)
    Then = CS->body_front();
  StringRef Want = P.Op == ReduceOp::Sum   ? "atomicAdd"
                   : P.Op == ReduceOp::Max ? "atomicMax"
                                           : "atomicMin";
  const auto *Atomic = dyn_cast<CallExpr>(Then);
  // max/min of floats have no atomic of their own: a helper named
  // atomicMax... (atomicMaxFloat) counts.
  bool Combines =
      Atomic && Atomic->getNumArgs() == 2 &&
      (P.Op == ReduceOp::Sum ? calleeName(Atomic) == Want
                             : calleeName(Atomic).starts_with(Want));
  if (!Combines) {
    std::string Per;
    if (auto B = binaryOf(Then); B && B->Op == BO_Assign &&
                                 mentionsBuiltin(B->L, "blockIdx"))
      Per = "stores one result per block ('" + text(B->L) +
            "'): capping the grid would change which blocks exist, so "
            "grid_stride needs the blocks' results combined by ";
    else
      Per = "thread 0's statement '" + text(Then) + "' is not ";
    return no(Per + Want + "(p, " + P.ArrayName +
                  "[0]) into one location for all blocks",
              Then);
  }
  if (!LeafCheck::gridUniform(Atomic->getArg(0), K.Decl, 0))
    return no("the atomic's address '" + text(Atomic->getArg(0)) +
                  "' differs between blocks: capping the grid would change "
                  "which blocks exist, so grid_stride needs one location for "
                  "all blocks",
              Atomic);

  // An integer sum combined in a wider type (int elements, an unsigned long
  // long total): a block now sums many more elements in the narrow type,
  // which may overflow where 256 did not.
  if (QualType PT = Atomic->getArg(0)->IgnoreParenImpCasts()->getType();
      P.Op == ReduceOp::Sum && !Elem->isDependentType() &&
      Elem->isIntegerType() && PT->isPointerType() &&
      PT->getPointeeType()->isIntegerType() &&
      !PT->getPointeeType()->isDependentType() &&
      Ctx.AST.getTypeSize(PT->getPointeeType()) > Ctx.AST.getTypeSize(Elem))
    return no(
        "the block's sum is '" +
            Elem.getUnqualifiedType().getAsString(Ctx.AST.getPrintingPolicy()) +
            "' but the total is '" +
            PT->getPointeeType().getUnqualifiedType().getAsString(
                Ctx.AST.getPrintingPolicy()) +
            "': with grid_stride each block sums many more elements "
            "and could overflow; widen '" +
            P.ArrayName + "' first",
        Atomic);

  // Launches: 1D grids, capped.
  int64_t Max = E.getInt("max_blocks").value_or(DefaultGridCap);
  if (Max < 1)
    return reject(E, "params", "params.max_blocks must be at least 1");
  for (const LaunchSite &L : K.Info->Launches) {
    std::string Why;
    auto G = grid1D(Ctx, L, Why);
    if (G && G->E->HasSideEffects(Ctx.AST))
      Why = "the grid of " + L.Id + " has side effects", G.reset();
    std::string M = std::to_string(Max);
    if (!G) {
      // A plain integer grid written with a macro ('(n + BLOCK - 1) /
      // BLOCK') is capped as written, like privatize-atomics does.
      const CUDAKernelCallExpr *C = findLaunchCall(Ctx, L);
      const Expr *GE = C && C->getConfig() && C->getConfig()->getNumArgs()
                           ? C->getConfig()->getArg(0)->IgnoreImplicit()
                           : nullptr;
      if (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(GE);
          CE && CE->getNumArgs() >= 1)
        GE = CE->getArg(0); // the implicit dim3(g)
      if (!L.InMacro && GE && !GE->HasSideEffects(Ctx.AST) &&
          gridIsInteger(Ctx, L) &&
          L.GridRange.End.Offset > L.GridRange.Begin.Offset) {
        P.Caps.push_back({{L.GridRange.Begin.Offset, L.GridRange.End.Offset},
                          cappedGrid(L.Grid, Max)});
        continue;
      }
      return no(Why + "; grid_stride must cap the grid of every launch (a "
                      "one-dimensional grid that can be rewritten)");
    }
    std::string Cap;
    if (auto Lit = intValue(G->E, Ctx.AST);
        Lit && isa<IntegerLiteral>(G->E->IgnoreParenImpCasts())) {
      Cap = std::to_string(std::min(*Lit, Max));
    } else {
      const Expr *X = G->E->IgnoreParenImpCasts();
      std::string T = G->Text;
      if (isa<ConditionalOperator>(X) ||
          (isa<BinaryOperator>(X) && !cast<BinaryOperator>(X)->isAdditiveOp() &&
           !cast<BinaryOperator>(X)->isMultiplicativeOp()))
        T = "(" + T + ")";
      Cap = T + " < " + M + " ? " + T + " : " + M;
    }
    P.Caps.push_back({{G->Span.Begin.Offset, G->Span.End.Offset}, Cap});
  }
  if (K.Info->Launches.empty())
    P.Notes.push_back("the kernel is not launched in this file: its grids "
                      "are not capped (any grid is correct)");

  // The rewrite.
  StringRef KText =
      Ctx.Code.slice(K.Info->Range.Begin.Offset, K.Info->Range.End.Offset);
  std::string J = freshName(KText, "j");
  auto Subst = [&](const Expr *X) {
    auto R = span(X, false);
    std::vector<TextEdit> Edits;
    struct Refs : RecursiveASTVisitor<Refs> {
      const VarDecl *I;
      std::vector<const DeclRefExpr *> Found;
      bool VisitDeclRefExpr(DeclRefExpr *D) {
        if (D->getDecl() == I)
          Found.push_back(D);
        return true;
      }
    } F;
    F.I = Index;
    F.TraverseStmt(const_cast<Expr *>(X));
    for (const DeclRefExpr *D : F.Found)
      if (auto DR = span(D, false))
        Edits.push_back({DR->Begin, DR->End - DR->Begin, J});
    return spliceText(Ctx.Code, R->Begin, R->End, std::move(Edits));
  };
  std::string Elem1 = Subst(Val);
  if (!Rest.empty()) {
    std::string C;
    for (const Expr *X : Rest)
      C += (C.empty() ? "" : " && ") + Subst(X);
    Elem1 = parenthesize(C) + " ? " + Elem1 + " : " + text(Id);
  }
  std::string IndexType = Index->getType().getUnqualifiedType().getAsString(
      Ctx.AST.getPrintingPolicy());
  if (auto TR = Index->getTypeSourceInfo()
                    ->getTypeLoc()
                    .getUnqualifiedLoc()
                    .getSourceRange();
      TR.isValid() && TR.getBegin().isFileID() && TR.getEnd().isFileID()) {
    StringRef W = Lexer::getSourceText(CharSourceRange::getTokenRange(TR), SM,
                                       Ctx.AST.getLangOpts());
    if (!W.empty())
      IndexType = W.str();
  }
  std::string BoundText = text(Bound);
  auto Loop = [&](StringRef Acc, StringRef Indent) {
    std::string Fold =
        P.Op == ReduceOp::Sum
            ? Acc.str() + " += " + Elem1 + ";"
            : Acc.str() + " = " + P.Fn + "(" + Acc.str() + ", " + Elem1 + ");";
    return "for (" + IndexType + " " + J + " = " + Index->getName().str() +
           "; " + J + " < " + BoundText + "; " + J +
           " += gridDim.x * blockDim.x)\n" + Indent.str() + "  " + Fold;
  };
  std::string Indent = indentationAt(Ctx.Code, P.Store.Begin);
  if (!Local) {
    // `A[tid] = (i < n) ? E : id;` -> `T v = id; for (...) v += E[j];`
    std::string V = freshName(KText, "v");
    P.StoreText = P.ElemType + " " + V + " = " + text(Id) + ";\n" + Indent +
                  Loop(V, Indent);
  } else if (LocalIf) {
    // `if (i < n) v = E;` -> `for (...) v += E[j];`
    auto R = span(LocalIf, true);
    if (!R)
      return no("the leaf at " + at(LocalIf) + " is written with a macro",
                LocalIf);
    P.LeafEdits.push_back(
        {*R, Loop(Local->getName(), indentationAt(Ctx.Code, R->Begin))});
  } else {
    // `T v = (i < n) ? E : id;` -> `T v = id; for (...) v += E[j];`
    // The identity may be a macro (-INFINITY): the spans end after it.
    auto IR = span(Local->getInit(), false, /*AllowMacroEnds=*/true);
    auto DR = span(LocalDecl, true, /*AllowMacroEnds=*/true);
    if (!IR || !DR)
      return no("the leaf at " + at(LocalDecl) + " is written with a macro",
                LocalDecl);
    std::string DI = indentationAt(Ctx.Code, DR->Begin);
    P.LeafEdits.push_back({*IR, text(Id)});
    P.LeafEdits.push_back(
        {{DR->End, DR->End}, "\n" + DI + Loop(Local->getName(), DI)});
  }
  P.GridStride = true;
  P.LeafDescription =
      "grid_stride: each thread first folds '" + text(Val) + "' over " +
      Index->getName().str() + ", " + Index->getName().str() +
      " + gridDim.x * blockDim.x, ... below " + BoundText +
      " in a register, and grids are capped at " + std::to_string(Max) +
      " blocks (one " + Want.str() + " per block)";
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
      Err = no(Launch + " but the loop starts at " + StartText +
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

Expected<TreePlan> TreeMatcher::match() {
  const KernelInfo &Info = *K.Info;
  if (Info.Uses2DThreads)
    return no("uses 2D thread indices; warp lanes are threadIdx.x % 32 only "
              "in one-dimensional blocks");
  if (const Stmt *J = firstJump(Body))
    return no("returns or jumps at " + at(J) +
                  ": every lane of a warp must reach the shuffles",
              J);
  // The tree loop: the first top-level loop that halves a variable.
  auto Stmts = Body->body();
  auto LoopIt = find_if(Stmts, [](const Stmt *X) {
    const auto *F = dyn_cast<ForStmt>(X);
    return F && halvedVar(F->getInc());
  });
  if (LoopIt == Stmts.end()) {
    for (const Stmt *X : Stmts)
      if (isa<ForStmt, WhileStmt, DoStmt>(X) &&
          callsFunction(X, "__syncthreads"))
        return no("the loop at " + at(X) +
                      " is not a tree loop 'for (... s = ...; s > 0; s >>= 1)'",
                  X);
    return no("no shared-memory tree loop 'for (... s = blockDim.x / 2; s > 0; "
              "s >>= 1)' at the top level of the kernel");
  }
  const auto *Loop = cast<ForStmt>(*LoopIt);
  S = halvedVar(Loop->getInc());
  // The loop's body: `if (tid < s) <step>` and `__syncthreads();`.
  std::vector<const Stmt *> LB;
  if (const auto *CS = dyn_cast<CompoundStmt>(Loop->getBody()))
    LB.assign(CS->body_begin(), CS->body_end());
  else
    LB.push_back(Loop->getBody());
  const IfStmt *Guard = nullptr;
  bool Sync = false, Other = false;
  for (const Stmt *X : LB) {
    if (isBarrier(X) && Guard && !Sync)
      Sync = true;
    else if (isa<IfStmt>(X) && !Guard && !Sync)
      Guard = cast<IfStmt>(X);
    else
      Other = true;
  }
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
  bool ViaHelper = AV->isLocalVarDecl() && AV->getType()->isPointerType() &&
                   AV->hasInit() && sharedVarBehind(AV->getInit());
  if (!ViaHelper && (!AV->hasAttr<CUDASharedAttr>() || !AV->isLocalVarDecl()))
    return no("'" + P.ArrayName +
                  "' is not a __shared__ array declared in the kernel",
              StepS);
  if (!ViaHelper && !Ctx.AST.getAsArrayType(AV->getType()))
    return no("'" + P.ArrayName + "' is not an array", StepS);
  {
    const Expr *Own = indexInto(cast<Expr>(binaryOf(StepS)->L), AV);
    if (!isTid(Own))
      return no("'" + P.ArrayName + "' is indexed by '" + text(Own) +
                    "' in the tree loop, not by threadIdx.x",
                StepS);
  }
  const Expr *Off = step(StepS, AV, [&](const Expr *X) { return isTid(X); });
  if (!Off || declOf(Off) != S)
    return no("the tree loop's step '" + text(StepS) + "' is not '" +
                  P.ArrayName + "[" + P.Tid + "] += " + P.ArrayName + "[" +
                  P.Tid + " + " + S->getName() + "]' (or max/min of the two)",
              StepS);
  bool Tail = false;
  std::optional<int64_t> Start;
  std::string StartText;
  if (Error Err = matchLoop(Loop, Tail, Start, StartText))
    return std::move(Err);

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
      SourceRange R =
          PTL.getPointeeLoc().getUnqualifiedLoc().getSourceRange();
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
  if (!PreSync)
    return no("no __syncthreads() between the store at " + at(Store) +
                  " and the tree loop",
              Store);
  // A value ending in a macro (`: -INFINITY`) is fine: the span ends after
  // its invocation.
  auto StR = span(Store, true, Store->getBeginLoc().isFileID());
  if (!StR)
    return no("the store at " + at(Store) + " is written with a macro", Store);
  P.Store = *StR;
  P.StoreValue = text(binaryOf(Store)->R);
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
  if (!OS.Found) {
    if (auto R = span(PreSync, true))
      P.PreSync = *R;
  } else {
    P.Notes.push_back("the kernel uses other shared memory: the barrier "
                      "before the loop stays");
  }

  // The loop (and its tail) become the shuffles.
  auto AfterIt = LoopIt + 1;
  if (Tail) {
    if (AfterIt == Stmts.end())
      return no("the tree loop stops at 32 but no warp tail follows it", Loop);
    if (Error Err = matchTail(*AfterIt))
      return std::move(Err);
    ++AfterIt;
  }
  auto LR = span(Loop, true);
  auto TR = span(*(AfterIt - 1), true);
  if (!LR || !TR)
    return no("the tree loop at " + at(Loop) + " starts or ends inside a macro",
              Loop);
  P.Region = {LR->Begin, TR->End};

  // A stride declared before the loop ends at 0 there; the rewrite drops
  // the loop, so nothing after it may read the stride.
  for (auto It = AfterIt; It != Stmts.end(); ++It)
    if (mentions(*It, S))
      return no("the stride '" + S->getName() + "' is used at " + at(*It) +
                    " after the loop",
                *It);

  // After the loop: thread 0 reads A[0]; nobody else reads the array.
  const IfStmt *Final = nullptr;
  for (auto It = AfterIt; It != Stmts.end(); ++It) {
    if (!mentions(*It, AV))
      continue;
    const auto *If = dyn_cast<IfStmt>(*It);
    auto C = If ? binaryOf(If->getCond()) : std::nullopt;
    bool Thread0 = C && C->Op == BO_EQ &&
                   ((isTid(C->L) && intValue(C->R, Ctx.AST) == 0) ||
                    (isTid(C->R) && intValue(C->L, Ctx.AST) == 0));
    if (!Thread0 || Final || If->getElse() || If->getInit() ||
        mentions(If->getCond(), AV))
      return no("'" + P.ArrayName + "' is read at " + at(*It) +
                    " after the loop by threads other than thread 0 (only "
                    "'if (" +
                    P.Tid + " == 0) ... " + P.ArrayName +
                    "[0] ...' is rewritten)",
                *It);
    Final = If;
  }
  if (!Final)
    return no("the result '" + P.ArrayName +
              "[0]' is not read after the loop by 'if (" + P.Tid +
              " == 0) ...'");
  if (Error Err = matchFinal(Final))
    return std::move(Err);

  Error Err = Error::success();
  checkLaunches(Tail, Start, StartText, Err);
  if (Err)
    return std::move(Err);
  if (!P.NewDecl.empty()) {
    // Size the per-warp array from the launches when all are known.
    std::string Why;
    if (auto Blocks = launchBlockSizesX(Ctx, Info, Why);
        Blocks && !Blocks->empty())
      P.NewDecl =
          "__shared__ " +
          (ViaHelper ? P.ElemType
                     : Elem.getAsString(Ctx.AST.getPrintingPolicy())) +
          " " + P.ArrayName + "[" +
          std::to_string(*std::max_element(Blocks->begin(), Blocks->end()) /
                         32) +
          "];";
  }

  if (E.getBool("grid_stride").value_or(false)) {
    std::vector<const Stmt *> TreeStmts = {*DeclIt, Store, PreSync, Loop};
    if (Tail)
      TreeStmts.push_back(*(AfterIt - 1));
    if (Error Err =
            matchLeaf(ArrayRef<const Stmt *>(Stmts.begin(), Stmts.end()), Store,
                      Final, TreeStmts))
      return std::move(Err);
  }

  static const char *OpNames[] = {"+", "max", "min"};
  P.Description =
      "shared-memory tree reduction (" + std::string(OpNames[int(P.Op)]) +
      ") of " + P.ElemType + " in '" + P.ArrayName + "'" +
      (Tail ? " with a warp-synchronous tail" : "") +
      ": warp shuffles and one __syncthreads() instead of one per step; "
      "thread 0 keeps its final statement";
  if (P.GridStride)
    P.Description += "; " + P.LeafDescription;
  for (const std::string &N : P.Notes)
    P.Description += "; note: " + N;
  return std::move(P);
}

class WarpReduceTransform : public Transform {
public:
  StringRef kind() const override { return "warp-reduce"; }
  StringRef description() const override {
    return "replace per-thread atomicAdd into one address, or a shared-memory "
           "tree reduction, with warp shuffles and one atomic/store per warp "
           "or block (reassociates floating-point sums)";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec::boolean(
                "changes_precision",
                "whether the reduced values are floating point (sums "
                "are reassociated); prepare() sets it, apply() refuses "
                "false for a floating-point reduction",
                true),
            ParamSpec::boolean(
                "grid_stride",
                "shared-memory trees fed by one guarded element per "
                "thread ('(i < n) ? x[i] : 0'): each thread first folds "
                "a grid-stride loop over the elements in a register, and "
                "the launches' grids are capped at max_blocks (the "
                "result must be one atomic per block into one location); "
                "default false"),
            ParamSpec::integer(
                "max_blocks",
                "grid cap with grid_stride (a multiple of the SM count: "
                "132 on H200); default 1056",
                1, 1 << 20)};
  }
  bool changesPrecision(const Edit &E) const override {
    return E.getBool("changes_precision").value_or(true);
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E = defaultEdit(kind(), Target);
    auto Plan = planOrReason(A, analyze(Ctx, E));
    if (!Plan)
      return A;
    if (Plan->Tree)
      A.Reason = Plan->T.Description;
    else
      A.Reason = std::to_string(Plan->Atomics.Atomics.size()) +
                 " atomicAdd(s) per thread into '" + Plan->Atomics.Target +
                 "', the same address for every thread: one per warp instead";
    E.Params["changes_precision"] = Plan->Reassociates;
    A.Suggestions.push_back(E);
    if (Plan->Tree) {
      // The grid-stride leaf, when the tree is fed one element per thread.
      Edit G = E;
      G.Params["grid_stride"] = true;
      G.Params["max_blocks"] = int64_t(DefaultGridCap);
      if (auto GP = analyze(Ctx, G))
        A.Suggestions.push_back(G);
      else
        consumeError(GP.takeError());
    }
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    auto Plan = analyze(Ctx, E);
    if (!Plan)
      return Plan.takeError();
    if (Plan->Reassociates && E.getBool("changes_precision") == false)
      return reject(E, "params",
                    "kernel '" + E.Target +
                        "': changes_precision is false, but the reduction "
                        "reassociates floating-point sums");
    return Plan->Tree ? applyTree(Ctx, E, *Plan) : applyAtomics(Ctx, E, *Plan);
  }

private:
  Expected<WarpReducePlan> analyze(const EditContext &Ctx,
                                   const Edit &E) const {
    auto K = resolveKernel(Ctx, E, E.Target);
    if (!K)
      return K.takeError();
    WarpReducePlan Plan;
    Plan.Kernel = *K;
    const auto *Body = dyn_cast_or_null<CompoundStmt>(K->Decl->getBody());
    if (!Body || Body->body_empty())
      return reject(E, "not-applicable",
                    "kernel '" + E.Target + "': has no body");
    // A kernel with shared memory and barriers is read as a tree; one
    // without a tree loop but with atomics (shared memory used otherwise)
    // and any other kernel as per-thread atomics.
    if (!K->Info->Shared.empty() && !K->Info->Syncthreads.empty()) {
      TreeMatcher M(Ctx, E, *K);
      auto T = M.match();
      if (T) {
        Plan.Tree = true;
        Plan.T = std::move(*T);
        Plan.Reassociates = Plan.T.Op == ReduceOp::Sum && Plan.T.Floating;
        return Plan;
      }
      if (M.foundLoop() || K->Info->Atomics.empty() ||
          E.getBool("grid_stride").value_or(false))
        return T.takeError();
      consumeError(T.takeError());
    }
    if (E.getBool("grid_stride").value_or(false))
      return reject(E, "not-applicable",
                    "kernel '" + E.Target +
                        "': grid_stride applies to shared-memory tree "
                        "reductions only, and the kernel has none");
    if (Error Err = analyzeAtomics(Ctx, E, &*K, Plan))
      return std::move(Err);
    return Plan;
  }

  Expected<tooling::Replacements> applyTree(const EditContext &Ctx,
                                            const Edit &E,
                                            const WarpReducePlan &Plan) const {
    const TreePlan &T = Plan.T;
    StringRef KText = Ctx.Code.slice(Plan.Kernel.Info->Range.Begin.Offset,
                                     Plan.Kernel.Info->Range.End.Offset);
    std::string V = freshName(KText, "v");
    std::string Off = freshName(KText, "off");
    std::string Indent = indentationAt(Ctx.Code, T.Region.Begin);
    std::string Shfl = "__shfl_down_sync(0xffffffff, " + V + ", " + Off + ")";
    std::string Fold = T.Op == ReduceOp::Sum
                           ? V + " += " + Shfl + ";"
                           : V + " = " + T.Fn + "(" + V + ", " + Shfl + ");";
    std::string Fill = T.Op == ReduceOp::Sum ? "0" : T.ArrayName + "[0]";
    std::string Loop =
        "for (int " + Off + " = 16; " + Off + " > 0; " + Off + " /= 2)";
    std::string Tid = parenthesize(T.Tid);
    std::vector<std::string> Lines = {
        Loop,
        "  " + Fold,
        "if (" + Tid + " % 32 == 0)",
        "  " + T.ArrayName + "[" + Tid + " / 32] = " + V + ";",
        "__syncthreads();",
        "if (" + Tid + " < 32) {",
        "  " + V + " = " + Tid + " < blockDim.x / 32 ? " + T.ArrayName + "[" +
            T.Tid + "] : " + Fill + ";",
        "  " + Loop,
        "    " + Fold,
        "}"};
    std::string Region;
    for (size_t I = 0; I < Lines.size(); ++I)
      Region += (I ? "\n" + Indent : "") + Lines[I];

    tooling::Replacements R;
    auto Add = [&](unsigned B, unsigned End, StringRef Text) {
      return addReplacement(
          R, tooling::Replacement(Ctx.FileName, B, End - B, Text), E);
    };
    if (!T.NewDecl.empty()) {
      if (Error Err = Add(T.Decl.Begin, T.Decl.End, T.NewDecl))
        return std::move(Err);
    } else if (Error Err = Add(T.Size.Begin, T.Size.End, T.NewSize)) {
      return std::move(Err);
    }
    if (Error Err = Add(T.Store.Begin, T.Store.End,
                        T.StoreText.empty()
                            ? T.ElemType + " " + V + " = " + T.StoreValue + ";"
                            : T.StoreText))
      return std::move(Err);
    for (const auto &[Where, Text] : T.LeafEdits)
      if (Error Err = Add(Where.Begin, Where.End, Text))
        return std::move(Err);
    for (const auto &[Where, Text] : T.Caps)
      if (Error Err = Add(Where.Begin, Where.End, Text))
        return std::move(Err);
    if (T.PreSync) {
      // The barrier's whole line when it stands alone on it.
      unsigned B = T.PreSync->Begin, End = T.PreSync->End;
      while (B > 0 && (Ctx.Code[B - 1] == ' ' || Ctx.Code[B - 1] == '\t'))
        --B;
      unsigned Q = End;
      while (Q < Ctx.Code.size() && (Ctx.Code[Q] == ' ' || Ctx.Code[Q] == '\t'))
        ++Q;
      if ((B == 0 || Ctx.Code[B - 1] == '\n') && Q < Ctx.Code.size() &&
          Ctx.Code[Q] == '\n')
        End = Q + 1;
      else
        B = T.PreSync->Begin;
      if (Error Err = Add(B, End, ""))
        return std::move(Err);
    }
    if (Error Err = Add(T.Region.Begin, T.Region.End, Region))
      return std::move(Err);
    for (const Range &F : T.Finals)
      if (Error Err = Add(F.Begin, F.End, V))
        return std::move(Err);
    return R;
  }

  Expected<tooling::Replacements> applyAtomics(const EditContext &Ctx,
                                               const Edit &E,
                                               const WarpReducePlan &WP) const {
    const AtomicsPlan *Plan = &WP.Atomics;
    const auto *Body = cast<CompoundStmt>(WP.Kernel.Decl->getBody());
    const SourceManager &SM = Ctx.AST.getSourceManager();
    // Fresh names need only be new within the kernel.
    StringRef KText = StringRef(Ctx.Code).slice(
        WP.Kernel.Info->Range.Begin.Offset, WP.Kernel.Info->Range.End.Offset);
    std::string Acc = freshName(KText, "warp_sum");
    std::string Off = freshName(KText, "off");
    tooling::Replacements R;
    auto First = stmtSpan(Ctx, Body->body_front());
    std::string Indent = indentationAt(Ctx.Code, First->Begin.Offset);
    if (Error Err = addReplacement(
            R,
            insertAt(Ctx, First->Begin.Offset,
                     Plan->Type + " " + Acc + " = 0;\n" + Indent),
            E))
      return std::move(Err);
    for (const CallExpr *C : Plan->Atomics) {
      auto Span = fileSpan(SM, Ctx.AST.getLangOpts(), C->getSourceRange(),
                           Ctx.file());
      std::string V = exprText(Ctx, C->getArg(1));
      if (Plan->NeedsCast)
        V = "static_cast<" + Plan->Type + ">(" + V + ")";
      if (Error Err =
              addReplacement(R, replaceSpan(Ctx, *Span, Acc + " += " + V), E))
        return std::move(Err);
    }
    unsigned RBrace = SM.getFileOffset(SM.getExpansionLoc(Body->getRBracLoc()));
    std::string Tail = Indent + "for (int " + Off + " = 16; " + Off + " > 0; " +
                       Off + " /= 2)\n" + Indent + "  " + Acc +
                       " += __shfl_down_sync(0xffffffffu, " + Acc + ", " + Off +
                       ");\n" + Indent + "if (threadIdx.x % 32 == 0)\n" +
                       Indent + "  atomicAdd(" + Plan->Target + ", " + Acc +
                       ");\n";
    // Insert at the start of the closing brace's line.
    unsigned LineStart = RBrace;
    while (LineStart > 0 &&
           (Ctx.Code[LineStart - 1] == ' ' || Ctx.Code[LineStart - 1] == '\t'))
      --LineStart;
    if (LineStart == 0 || Ctx.Code[LineStart - 1] != '\n') {
      Tail = "\n" + Tail;
      LineStart = RBrace;
    }
    if (Error Err = addReplacement(R, insertAt(Ctx, LineStart, Tail), E))
      return std::move(Err);
    return R;
  }

  /// The per-thread-atomics form.
  static Error analyzeAtomics(const EditContext &Ctx, const Edit &E,
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
    if (containsMacro(Body))
      return No("its body uses macros");

    // Atomics used as statements, and all atomics.
    struct Finder : RecursiveASTVisitor<Finder> {
      std::vector<const CallExpr *> All, AsStmt;
      bool Return = false;
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
        if (isAtomicCall(C))
          All.push_back(C);
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
      QualType VT =
          PT->getPointeeType().getCanonicalType().getUnqualifiedType();
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
};

} // namespace

std::unique_ptr<Transform> createWarpReduceTransform() {
  return std::make_unique<WarpReduceTransform>();
}

} // namespace optiml
