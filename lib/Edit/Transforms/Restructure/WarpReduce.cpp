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
// is one atomic per block into one location survives the cap. An index
// over a 2D grid's blocks counted row by row steps by every thread of the
// grid, and a dim3 grid g becomes one dimension (g.x * g.y capped).
//
// Both need every lane of every warp to reach the shuffles: no early
// return, one-dimensional blocks, blocks that are whole warps (and, for the
// tree, powers of two). The one early return a tree may have is
// `if (tid != 0) return;` after it, before thread 0's statements: it
// becomes `if (tid == 0) { ... }` around them. Floating-point sums are
// reassociated; integer sums and max/min are exact.
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

const Expr *strip(const Expr *E) {
  return E ? E->IgnoreParenImpCasts() : nullptr;
}

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

StringRef threadBlockMember(const Expr *E) {
  const auto *C = dyn_cast_or_null<CallExpr>(stripCasts(E));
  if (!C || C->getNumArgs() != 0)
    return "";
  const auto *M = dyn_cast_or_null<CXXMethodDecl>(C->getDirectCallee());
  if (!M || !M->getIdentifier() || !M->getParent()->getIdentifier() ||
      M->getParent()->getName() != "thread_block")
    return "";
  // The class is cooperative_groups' own (in its versioned namespace).
  bool InCG = false;
  for (const DeclContext *DC = M->getParent()->getDeclContext(); DC;
       DC = DC->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(DC))
      InCG |= NS->getIdentifier() && NS->getName() == "cooperative_groups";
  if (!InCG)
    return "";
  // The object, when the member is called through one, only names the
  // block: a variable or this_thread_block() itself.
  if (const auto *ME = dyn_cast<MemberExpr>(strip(C->getCallee()))) {
    const Expr *Obj = strip(ME->getBase());
    if (const auto *Copy = dyn_cast<CXXConstructExpr>(Obj);
        Copy && Copy->getNumArgs() == 1)
      Obj = strip(Copy->getArg(0));
    const auto *Get = dyn_cast<CallExpr>(Obj);
    if (!isa<DeclRefExpr>(Obj) && !(Get && Get->getNumArgs() == 0 &&
                                    calleeName(Get) == "this_thread_block"))
      return "";
  }
  StringRef Name = M->getName();
  return Name == "thread_rank" || Name == "size" || Name == "num_threads" ? Name
                                                                          : "";
}

bool isThreadX(const Expr *E) {
  auto B = asBuiltinVar(stripCasts(E));
  return (B && B->Var == "threadIdx" && B->Dim == 'x') ||
         threadBlockMember(E) == "thread_rank";
}

bool isBlockDimX(const Expr *E) {
  auto B = asBuiltinVar(stripCasts(E));
  StringRef M = threadBlockMember(E);
  return (B && B->Var == "blockDim" && B->Dim == 'x') || M == "size" ||
         M == "num_threads";
}

const Expr *firstThreadBlockMember(const Stmt *S) {
  if (!S)
    return nullptr;
  if (const auto *E = dyn_cast<Expr>(S); E && !threadBlockMember(E).empty())
    return E;
  for (const Stmt *C : S->children())
    if (const Expr *Found = firstThreadBlockMember(C))
      return Found;
  return nullptr;
}

std::optional<ReduceOp> minMaxOp(StringRef Fn) {
  if (Fn == "max" || Fn == "fmaxf" || Fn == "fmax")
    return ReduceOp::Max;
  if (Fn == "min" || Fn == "fminf" || Fn == "fmin")
    return ReduceOp::Min;
  return std::nullopt;
}

bool isPowerOf2(int64_t V) { return V > 0 && (V & (V - 1)) == 0; }

namespace {

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
    std::vector<TextEdit> InRest;
    for (const Range &F : T.Finals) {
      if (T.Leave && F.Begin >= T.RestBegin && F.End <= T.Leave->End) {
        InRest.push_back({F.Begin, F.End - F.Begin, V});
        continue;
      }
      if (Error Err = Add(F.Begin, F.End, V))
        return std::move(Err);
    }
    if (T.Leave) {
      // `if (tid != 0) return; rest` -> `if (tid == 0) { rest }`.
      std::string LI = indentationAt(Ctx.Code, T.Leave->Begin);
      std::string Rest =
          spliceText(Ctx.Code, T.RestBegin, T.Leave->End, std::move(InRest));
      if (Error Err = Add(T.Leave->Begin, T.Leave->End,
                          "if (" + T.LeaveGuard + ") {\n" + LI + "  " +
                              indentLines(Rest, "  ") + "\n" + LI + "}"))
        return std::move(Err);
    }
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
      auto Span =
          fileSpan(SM, Ctx.AST.getLangOpts(), C->getSourceRange(), Ctx.file());
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
};

} // namespace

} // namespace warpreduce

std::unique_ptr<Transform> createWarpReduceTransform() {
  return std::make_unique<warpreduce::WarpReduceTransform>();
}

} // namespace optiml
