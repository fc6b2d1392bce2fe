//===- WarpPerRowInternal.h - warp-per-row's plan ---------------*- C++ -*-===//
//
// Private to the warp-per-row transform: the plan its analysis fills
// (WarpPerRow.cpp), the register and online variants and the suggestions
// (WarpPerRowVariants.cpp), and the rewrite that carries it out
// (WarpPerRowRewrite.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_WARPPERROWINTERNAL_H
#define OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_WARPPERROWINTERNAL_H

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace optiml {
namespace warpperrow {

struct Reduction {
  const clang::VarDecl *Acc = nullptr;
  enum OpKind { Sum, Prod, Max, Min } Op = Sum;
  std::string Func; ///< fmaxf, max, ... for Max/Min
  bool NeedsZeroing = false;
  /// A max or min written as a selection, `acc = a OP b ? t : f` or
  /// `if (a OP b) acc = e;`, kept as written (NaN and signed zeros): OP,
  /// whether the accumulator is the comparison's left operand, and whether
  /// it is the value taken when the comparison holds.
  struct Select {
    std::string Op;
    bool AccLeft = false;
    bool AccIfTrue = false;
    const clang::Expr *Elem = nullptr; ///< the element compared with acc
  };
  std::optional<Select> Cond;
  /// `fmaxf(m, e)` in a template, resolved only in its instantiations.
  const clang::CallExpr *DependentCall = nullptr;
  /// For a local of a vector type or a small struct kept member by member
  /// (`acc.x += e`): the member this reduction keeps (Acc is the local).
  const clang::FieldDecl *Member = nullptr;
};

/// "sum", "product", "max" or "min".
const char *opName(Reduction::OpKind K);
/// The accumulator as the rewrite writes it: `acc`, or `acc.x` for a
/// member.
std::string accText(const Reduction &R);
/// The accumulator as the stem of a fresh name: `acc`, or `acc_x`.
std::string accStem(const Reduction &R);
/// The type of the accumulator (of its member), as source text.
std::string accType(const Reduction &R, const clang::ASTContext &AST);

struct InnerLoop {
  /// The `for` loop, or a `while` loop counting with a counter declared
  /// just before it (CountingLoop.h).
  const clang::Stmt *For = nullptr;
  const clang::Expr *Inc = nullptr; ///< the step: `++j`, `j += 1`, ...
  const clang::VarDecl *Var = nullptr;
  const clang::Expr *Start = nullptr;
  const clang::BinaryOperator *Cond = nullptr; ///< `j < end` or `j <= end`
  bool InitDeclares = false; ///< `for (int j = ...` rather than `j = ...`
  std::vector<Reduction> Reductions;
  bool Writes = false;
  std::string Id; ///< loop id from the model
  /// `#pragma unroll` (or another loop hint) written before the loop: the
  /// statement holding both, or null.
  const clang::Stmt *Hinted = nullptr;

  bool isWhile() const { return llvm::isa<clang::WhileStmt>(For); }
  const clang::Stmt *body() const {
    if (const auto *W = llvm::dyn_cast<clang::WhileStmt>(For))
      return W->getBody();
    return llvm::cast<clang::ForStmt>(For)->getBody();
  }
  /// The `)` closing the loop's header.
  clang::SourceLocation rParen() const {
    if (const auto *W = llvm::dyn_cast<clang::WhileStmt>(For))
      return W->getRParenLoc();
    return llvm::cast<clang::ForStmt>(For)->getRParenLoc();
  }
};

/// An array whose row elements stay in registers across passes.
struct CachedArray {
  const clang::ValueDecl *Array = nullptr;
  std::string ElemType;
  std::string Name; ///< the register array
  /// `base` when the passes read `a[base + j]`: the row's offset, the same
  /// variable in every pass and never written.
  const clang::VarDecl *Offset = nullptr;
};

/// The largest row length a loop can run, when every launch (or template
/// instantiation) fixes it at compile time; else why not.
struct RowLength {
  std::optional<int64_t> Max;
  std::string WhyNot;
};

struct Plan {
  ResolvedKernel Kernel;
  ThreadItem Item;
  std::vector<InnerLoop> Loops;
  std::vector<const clang::Stmt *> LaneZero; ///< memory writes outside loops
  /// Statements after which the lanes must see each other's writes.
  std::vector<const clang::Stmt *> SyncAfter;
  bool PerBlock = false;
  int64_t BlockSize = 256;
  int64_t Lanes = 32; ///< lanes per item in the warp form
  /// Keeping rows in registers: the arrays, the passes that read them
  /// (indices into Loops), values per lane.
  std::vector<CachedArray> Cached;
  std::vector<size_t> CachedLoops;
  int64_t PerLane = 0;
  /// Where the registers' elements start: the smallest start of the
  /// passes run from them (a later one skips the first elements).
  const clang::Expr *RegStart = nullptr;
  /// The online softmax combine: a max pass fused with the following
  /// pass that sums exp(e - max).
  struct Online {
    size_t MaxLoop = 0, SumLoop = 0;
    const clang::VarDecl *Max = nullptr, *Sum = nullptr;
    const clang::Expr *Elem = nullptr; ///< e in `m = fmaxf(m, e)`
    /// Declarations of locals the max pass makes before taking the max
    /// (`const float v = x[j];`), kept in the fused pass.
    std::vector<const clang::Stmt *> Locals;
    std::string MaxFunc, Exp;
    /// A max written as a selection (`m = e > m ? e : m`): the fused pass
    /// and the combine keep its comparison instead of calling MaxFunc.
    std::optional<Reduction::Select> Cond;
    /// The sum pass also stores (stashed exponentials): its statement
    /// adding to the sum, dropped; the pass keeps its stores and runs
    /// after the combine, with the final max.
    const clang::Stmt *SumStmt = nullptr;
    /// The max pass starts one element after the sum pass, from that
    /// element: the fused pass runs over the sum pass's range.
    bool Widened = false;
  };
  std::optional<Online> Fused;
  /// per=stream (WarpPerRowStream.cpp): a block's rows share one pass over
  /// their CSR terms, which every thread of the block computes in turn.
  struct Stream {
    /// The row offsets: the loop runs from Offsets[i] to Offsets[i + 1];
    /// a pointer parameter, or a pointer member of a struct parameter
    /// passed by value (`A.rowptr`).
    const clang::Expr *Offsets = nullptr;
    const clang::Expr *Term = nullptr; ///< e in `acc += e`
    std::string OffsetType, TermType, AccType, IndexType;
    int64_t Terms = 1; ///< terms per thread per chunk
  };
  std::optional<Stream> Streamed;
  /// The longest row, when the launches fix it (for suggestions).
  std::optional<int64_t> RowMax;
  std::string Description;

  int64_t stride() const { return PerBlock ? BlockSize : Lanes; }
  /// Items per block at the new launches.
  int64_t itemsPerBlock() const { return PerBlock ? 1 : BlockSize / Lanes; }
};

/// Values per lane above which the register form is refused.
constexpr int64_t MaxValuesPerLane = 64;

bool isZero(const clang::Expr *E, const clang::ASTContext &AST, int One);
/// A max or min written as a selection between an accumulator and an
/// element e: `acc = COND ? T : F` with {T, F} = {acc, e}, or
/// `if (COND) acc = e;` (no else, nothing else in the branch), where COND
/// compares acc with e by <, <=, > or >=: its Op and Cond (Acc and Member
/// left to the caller). \p IsAcc tells the accumulator (`acc`, or one
/// member `acc.m`), \p ReadsAcc whether an expression reads any of it; the
/// element must read none of it and the same value wherever it appears (no
/// side effects). The accumulator may be the value kept when COND holds
/// only for an integer comparison (no NaN).
std::optional<Reduction>
matchSelect(const clang::Stmt *S,
            llvm::function_ref<bool(const clang::Expr *)> IsAcc,
            llvm::function_ref<bool(const clang::Expr *)> ReadsAcc,
            const clang::ASTContext &AST);
/// The element writes in \p S: memoryWrites(), and also the stores a
/// class's assignment operator makes (`out[r] = make_float2(x, y)`).
std::vector<MemWrite> rowWrites(const clang::Stmt *S);
std::vector<const clang::Stmt *> bodyStmts(const clang::Stmt *Body);
/// \p D is declared inside \p S.
bool declaredIn(const clang::ValueDecl *D, const clang::Stmt *S,
                const EditContext &Ctx);
/// The text of \p S as written, also when it begins or ends in a macro
/// expansion (`j < COLS`).
std::string writtenText(const EditContext &Ctx, const clang::Stmt *S);
/// How many elements the loop \p L runs at most, when its start is a
/// constant and its end is a constant, a template parameter, or a kernel
/// parameter that every launch passes as a constant.
RowLength rowLength(const EditContext &Ctx, const Plan &P, const InnerLoop &L);
/// Reads `a[j]` (or `a[base + j]`) in \p S, with `a` a variable and `j`
/// the loop variable.
std::vector<const clang::ArraySubscriptExpr *>
rowReads(const clang::Stmt *S, const clang::VarDecl *J);
/// How \p A reads at the element \p J: null for `a[j]`, the variable
/// `base` for `a[base + j]` or `a[j + base]`; nothing otherwise.
std::optional<const clang::VarDecl *>
rowOffset(const clang::ArraySubscriptExpr *A, const clang::VarDecl *J);
int64_t nextPowerOfTwo(int64_t V);
/// The variables from outside the loop \p L that its body writes other than
/// whole (WarpPerRowMembers.cpp): a local of a vector type or a small
/// struct whose members are each kept as a sum, product, max or min adds
/// a Reduction per member to \p L; anything else (`p->n++`, passed by
/// reference) is refused, since the lanes would each keep a part.
llvm::Error partWrites(const EditContext &Ctx, const Edit &E, const Plan &P,
                       InnerLoop &L);
/// The text the launch \p L of \p Kernel passes for the item bound
/// \p Bound: what boundAtLaunch() gives for a kernel parameter or a
/// constant, or for a member of a struct parameter passed by value
/// (`A.n`) the same member of the variable the launch passes
/// (memberAtLaunch()); nothing, with \p WhyNot, otherwise.
std::optional<std::string> itemsAtLaunch(const EditContext &Ctx,
                                         const clang::FunctionDecl *Kernel,
                                         const clang::Expr *Bound,
                                         const LaunchSite &L,
                                         std::string &WhyNot);
/// Why launch \p L may run fewer threads than \p Item has items below its
/// bound (gridCoverageProblem(), or gridRowsCoverageProblem() for an index
/// over a 2D grid's rows); "" when shown to reach it. The new launch runs a
/// warp (block) for every item, so a grid that stops short on purpose
/// would have items computed that the original left alone.
std::string itemCoverageProblem(const EditContext &Ctx, const ThreadItem &Item,
                                const LaunchSite &L);

/// The term \p St (`acc += t`, `acc = acc + t` or `acc = t + acc`) adds
/// to \p Acc; null if it is not such a statement.
const clang::Expr *addedTerm(const clang::Stmt *St, const clang::VarDecl *Acc);
/// Checks that \p P's one loop is a CSR row, `for (int k = off[i]; k <
/// off[i + 1]; ++k) acc += e;` with acc zero before it and e a function of
/// k and the kernel's unwritten parameters, and fills P.Streamed
/// (WarpPerRowStream.cpp).
llvm::Error planStream(const EditContext &Ctx, const Edit &E, Plan &P);
/// The per=stream rewrite of \p P (planStream()).
llvm::Expected<clang::tooling::Replacements>
rewriteStream(const EditContext &Ctx, const Edit &E, const Plan &P);
/// Each launch of \p P's kernel made to run P.itemsPerBlock() items per
/// block of P.BlockSize threads, into \p Repls.
llvm::Error rewriteLaunches(const EditContext &Ctx, const Edit &E,
                            const Plan &P, clang::tooling::Replacements &Repls);

/// The first call in \p S to a lambda that captures something by reference
/// (its reads and writes of the kernel's locals are not in the statements
/// that call it, so a loop calling it cannot be shared among lanes), or
/// null.
const clang::CallExpr *refCapturingLambdaCall(const clang::Stmt *S);

class WarpPerRow : public PlannedTransform<Plan> {
public:
  llvm::StringRef kind() const override { return "warp-per-row"; }
  llvm::StringRef description() const override {
    return "one warp (or block) per outer item: lanes stride the inner "
           "loops, shuffles combine sums, maxima and minima";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec::string(
            "per",
            "who owns an item: a warp (short rows), a whole block (long "
            "rows), or stream: block_size / lanes CSR rows per block, whose "
            "terms all the block's threads compute together",
            {"warp", "block", "stream"}, "warp"),
        ParamSpec::integer(
            "block_size",
            "threads per block at every launch (a multiple of 32)", 32, 1024,
            256),
        ParamSpec::integer("lanes",
                           "lanes per item in the warp form (4, 8, 16 or 32): "
                           "32 / lanes items share a warp (short rows); with "
                           "per=stream, threads per row",
                           4, 32, 32),
        ParamSpec::boolean(
            "registers",
            "load the row once into registers and run every later pass from "
            "them (rows whose length is fixed at compile time, at most 64 "
            "values per lane)",
            false),
        ParamSpec::boolean(
            "online",
            "fuse a max pass and the next pass summing exp(e - max) into one "
            "pass with a running max and a rescaled sum (online softmax)",
            false),
        ParamSpec::integer(
            "terms",
            "with per=stream, terms each thread computes per chunk: a chunk "
            "holds block_size * terms terms, each thread's loads in flight "
            "together",
            1, 8, 1)};
  }
  bool changesPrecision(const Edit &) const override {
    // Sums and products are reassociated across lanes.
    return true;
  }

  Applicability prepare(const EditContext &Ctx,
                        llvm::StringRef Target) const override {
    Applicability A;
    Edit E;
    auto P = planDefault(Ctx, Target, A, E);
    if (!P)
      return A;
    A.Reason = P->Description;
    A.Suggestions = suggest(Ctx, E, *P);
    return A;
  }

private:
  llvm::Expected<Plan> analyze(const EditContext &Ctx,
                               const Edit &E) const override;
  llvm::Error planRegisters(const EditContext &Ctx, const Edit &E,
                            Plan &P) const;
  llvm::Error planOnline(const EditContext &Ctx, const Edit &E, Plan &P) const;
  std::vector<Edit> suggest(const EditContext &Ctx, const Edit &E,
                            const Plan &P) const;
  llvm::Error analyzeLoop(const EditContext &Ctx, const Edit &E, Plan &P,
                          const clang::Stmt *For,
                          llvm::ArrayRef<const clang::Stmt *> Before,
                          llvm::ArrayRef<const clang::Stmt *> Later) const;
  llvm::Expected<clang::tooling::Replacements>
  rewrite(const EditContext &Ctx, const Edit &E, const Plan &P) const override;
};

} // namespace warpperrow
} // namespace optiml

#endif // OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_WARPPERROWINTERNAL_H
