//===- TransformSupport.h - Text, expressions and launch sites -*- C++ -*-===//
//
// Private to lib/Edit. The one helper library of the catalog's transforms:
// spans and text of the input, facts about expressions (which declarations
// and thread coordinates they use, what they write, whether they vary across
// the threads of a block) and the launch-site forms the transforms rewrite.
// Spans are SourceSpan throughout. The shapes a kernel has (one item per
// thread, ...) are recognized in lib/Edit/Patterns on top of this.
//
// Where two transforms families needed a different rule, both are here under
// names that say the difference (stmtSpan / looseStmtSpan, intValue /
// integerConstantValue, writtenVars / writtenDecls, referencedDecl /
// declOf); merging those would change what some edits accept.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_TRANSFORMS_TRANSFORMSUPPORT_H
#define OPTIML_LIB_EDIT_TRANSFORMS_TRANSFORMSUPPORT_H

#include "optiml/Edit/Transform.h"
#include "clang/AST/OperationKinds.h"
#include "clang/AST/Type.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class CUDAKernelCallExpr;
class DeclRefExpr;
class Expr;
class FunctionDecl;
class ParmVarDecl;
class Stmt;
class ValueDecl;
class VarDecl;
} // namespace clang

namespace optiml {

//===--- Spans and text
//----------------------------------------------------===//

/// A span known by its offsets only (line and column 0), for regions a
/// rewrite computes.
inline SourceSpan offsetSpan(unsigned Begin, unsigned End) {
  return SourceSpan{{0, 0, Begin}, {0, 0, End}};
}

/// A replacement inside a region that is being regenerated as text.
struct TextEdit {
  unsigned Offset = 0; ///< absolute file offset
  unsigned Length = 0;
  std::string Text;
};

/// [\p B, \p E) of \p Code widened to its whole lines (their line break
/// included) when nothing else stands on them: what removing a statement
/// removes.
std::pair<unsigned, unsigned> ownLines(llvm::StringRef Code, unsigned B,
                                       unsigned E);

/// Whether \p Text names \p Name as a whole identifier token (not in a
/// comment or a string literal).
bool namesIdentifier(llvm::StringRef Text, llvm::StringRef Name);

/// The text of [Begin, End) of \p Code with \p Edits (inside the region,
/// non-overlapping; insertions at one offset keep their order) applied.
std::string spliceText(llvm::StringRef Code, unsigned Begin, unsigned End,
                       std::vector<TextEdit> Edits);

/// The main-file span of a statement or expression; for statements that end
/// in `;` (expression statements, `return`, `break`) the `;` is included.
/// Nothing when a macro other than a constant wrote part of it
/// (constantMacroSpan()).
std::optional<SourceSpan> stmtSpan(const EditContext &Ctx,
                                   const clang::Stmt *S);
/// The source text of an expression as written (empty if it has no file
/// span or uses a macro other than constants: constantMacroText()).
std::string exprText(const EditContext &Ctx, const clang::Expr *E);
/// The source text of \p S as written (empty if it has no file span).
std::string stmtText(const EditContext &Ctx, const clang::Stmt *S);

/// \p Sp extended over the `;` that ends its statement, when the range
/// stops before it (only the end offset moves).
SourceSpan withSemicolon(const EditContext &Ctx, SourceSpan Sp);
/// The span of an expression or statement whose two ends are written in the
/// main file (macros inside it are allowed), or end in constant macros at
/// their edges (constantMacroSpan(): `x < W`), without a trailing `;`.
std::optional<SourceSpan> looseExprSpan(const EditContext &Ctx,
                                        const clang::Stmt *S);
/// looseExprSpan() plus the `;` that ends a statement, unless the range
/// already ends in `;` or `}`.
std::optional<SourceSpan> looseStmtSpan(const EditContext &Ctx,
                                        const clang::Stmt *S);
/// The text of looseExprSpan() (empty without one); constantMacroText()'s
/// where an end is in a macro.
std::string looseExprText(const EditContext &Ctx, const clang::Stmt *S);

/// True if \p S or anything in it was written inside a macro expansion.
bool containsMacro(const clang::Stmt *S);

/// Where the token at \p L is written once the macro arguments it was
/// passed through are undone: in the file, or in a macro's body. \p Uses
/// gets the parameter use in the body of each argument passed through.
clang::SourceLocation
throughArguments(const clang::SourceManager &SM, clang::SourceLocation L,
                 llvm::SmallVectorImpl<clang::SourceLocation> &Uses);
/// The ends of \p S as written: its first and last tokens where they are
/// written (throughArguments()), through the same uses of the same macro
/// arguments (an expression inside `LAUNCH(k, (N + 255) / 256, ...)` is read
/// in the invocation). False where the ends came through different
/// arguments or uses (`x + y` of `#define M(x, y) x + y`): the text between
/// them is not the expression.
bool writtenEnds(const clang::SourceManager &SM, const clang::Stmt *S,
                 clang::SourceLocation &B, clang::SourceLocation &E);

/// Whether every macro expansion inside \p S names no variable (threadIdx
/// included) and calls nothing (`#define N 1024`, `D * D`) or is a constant
/// the compiler evaluates (`INFINITY`), and no
/// expression of \p S starts or ends inside an expansion other than at
/// its edges: the text of \p S as written is then what the compiler saw,
/// and renaming a variable of \p S never reaches into a macro. As in
/// containsMacro(), macros in a declaration's specifiers (`__shared__`, a
/// macro type) are allowed; its name and initializer are checked.
bool onlyConstantMacros(const clang::Stmt *S, const clang::ASTContext &AST);

/// The span of \p S as written where every macro inside it is a constant
/// (onlyConstantMacros(): `y * W`, `(N + 255) / 256`, `N` alone, with
/// `#define W 1024`) and each end is written in the file or is the edge of
/// an expansion written there; inside a function-like macro's arguments,
/// both ends through the same use of the same argument (`DIV_UP(N, 256)`'s
/// `N`, not `x + y` of `#define ADD(x, y) x + y`): the text, read again in
/// the same function, is what the compiler saw. Nothing otherwise.
std::optional<SourceSpan> constantMacroSpan(const EditContext &Ctx,
                                            const clang::Stmt *S);
/// The text of \p S as the definition of the macro whose expansion holds it
/// writes it, where that macro is invoked in this file and \p S comes from
/// its body alone (no argument's token; macros the body invokes whole):
/// `N + THREADS - 1` of `#define BLOCKS ((N + THREADS - 1) / THREADS)`.
/// Put back where the macro was invoked, the text expands as it did there.
/// Empty otherwise (stringizing, pasting or a line continuation inside).
std::string macroBodyText(const EditContext &Ctx, const clang::Stmt *S);
/// The text of constantMacroSpan() (empty without one); a macro written
/// alone whose expansion is more than one token comes in parentheses, so
/// that it stays one value in any text it is put into (`#define N 1000 +
/// 24`, then `N / 4`).
std::string constantMacroText(const EditContext &Ctx, const clang::Stmt *S);

/// \p Text, wrapped in parentheses unless it is one token or already
/// parenthesized as a whole.
std::string parenthesize(llvm::StringRef Text);

/// The thread count of \p Kernel's `__launch_bounds__`, when it has one
/// whose value is known (not a template parameter): a rewrite must not
/// launch more threads per block (the launches would fail).
std::optional<int64_t> launchBoundsThreads(const clang::FunctionDecl *Kernel,
                                           const clang::ASTContext &AST);
/// \p Want threads per block, or under a smaller bound \p Max as many
/// whole warps as it allows (at least one).
int64_t blockWithin(std::optional<int64_t> Max, int64_t Want);

/// Shifts every line of \p Text after the first by \p Delta columns
/// (negative: removes up to that much leading whitespace).
std::string reindent(llvm::StringRef Text, int Delta);
/// \p Text with \p Prefix added at the start of every non-empty line but
/// the first.
std::string indentLines(llvm::StringRef Text, llvm::StringRef Prefix);

/// An identifier starting with \p Base that does not occur in \p Code.
std::string freshName(llvm::StringRef Code, llvm::StringRef Base);

/// "L:C" of \p S in the main file.
std::string where(const EditContext &Ctx, const clang::Stmt *S);

//===--- Expressions
//-------------------------------------------------------===//

/// The dimension D of `blockIdx.D * blockDim.D + threadIdx.D` (operands in
/// any order, through casts), or nothing. With \p ThroughHelpers, also a
/// call without arguments to a function whose body is `return <that>;`.
std::optional<char> linearIndexDim(const clang::Expr *E,
                                   bool ThroughHelpers = false);

/// \p E without parentheses, implicit casts and explicit casts.
const clang::Expr *stripCasts(const clang::Expr *E);
/// The declaration \p E names (through parentheses and implicit casts).
const clang::ValueDecl *referencedDecl(const clang::Expr *E);
/// The declaration \p E names through parentheses and any casts, or null.
const clang::ValueDecl *declOf(const clang::Expr *E);
/// \p E names \p D.
bool refersTo(const clang::Expr *E, const clang::ValueDecl *D);
/// \p S mentions \p D anywhere.
bool mentions(const clang::Stmt *S, const clang::ValueDecl *D);
/// The operands of a chain of \p Join (`a && b && c` for BO_LAnd, the
/// terms of a guard; BO_LOr for an early return's), left to right, each as
/// written (parentheses kept: `(a || b)` stays one term); \p E alone when it
/// is no such chain.
llvm::SmallVector<const clang::Expr *, 4>
splitJoined(const clang::Expr *E, clang::BinaryOperatorKind Join);
/// \p S mentions threadIdx/blockIdx/blockDim/gridDim (any dimension) when
/// \p Var is empty, or the named one.
bool mentionsBuiltin(const clang::Stmt *S, llvm::StringRef Var = "");
/// Calls in \p S to a function whose name starts with \p Prefix.
bool callsFunction(const clang::Stmt *S, llvm::StringRef Prefix);
/// A function that orders threads or reads other threads' values: barriers,
/// fences, atomics, shuffles, votes and warp reductions.
bool isThreadCall(llvm::StringRef Name);
/// The first function \p S calls whose result depends on which thread runs
/// it: a barrier, shuffle, vote, warp mask or warp reduction, or a function
/// of the program (not a system header's) whose body reads threadIdx,
/// blockIdx, blockDim or gridDim or makes such a call, followed through the
/// functions it calls. Null if none. A rewrite that moves elements to other
/// threads, or changes the block or grid, must not take a body that
/// mentionsBuiltin() alone would pass through a helper.
const clang::FunctionDecl *threadShapeCall(const clang::Stmt *S,
                                           const clang::SourceManager &SM);
/// Why \p Body cannot run from other threads or under another launch
/// shape: it makes a threadShapeCall(); "" when none of its statements does.
std::string threadShapeCallProblem(llvm::ArrayRef<const clang::Stmt *> Body,
                                   const clang::SourceManager &SM);

/// An integer constant expression's value, folding what the evaluator can
/// (EvaluateAsInt).
std::optional<int64_t> intValue(const clang::Expr *E,
                                const clang::ASTContext &AST);
/// The value of \p E when it is an integer constant expression by the
/// language's rules (no further folding).
std::optional<int64_t> integerConstantValue(const clang::Expr *E,
                                            const clang::ASTContext &AST);

/// Whether \p Target is \p S or inside it.
bool containsStmt(const clang::Stmt *S, const clang::Stmt *Target);
/// Every reference to \p D inside \p S.
void collectRefs(const clang::Stmt *S, const clang::ValueDecl *D,
                 std::vector<const clang::DeclRefExpr *> &Out);
/// \p T without qualifiers as source text (`float`, `float2`, `T`).
std::string typeName(clang::QualType T, const clang::ASTContext &AST);

/// Variables written in \p S: assigned (also through a member), incremented,
/// address taken, or passed to a non-const reference parameter.
llvm::DenseSet<const clang::ValueDecl *> writtenVars(const clang::Stmt *S);
/// Variables assigned, incremented or whose address is taken in \p S, in
/// the order first met (members and reference arguments not followed).
std::vector<const clang::ValueDecl *> writtenDecls(const clang::Stmt *S);

/// Element writes in \p S: the base expression of each `b[i] = ...`,
/// `*p = ...`, `b[i] += ...`, `b[i]++`.
struct MemWrite {
  const clang::Expr *Target = nullptr; ///< the written lvalue
  const clang::Expr *Base = nullptr;   ///< pointer or array being written
  const clang::Expr *Index = nullptr;  ///< null for `*p`
};
std::vector<MemWrite> memoryWrites(const clang::Stmt *S);
/// The first call in \p S to a function that is not a math function, an
/// atomic, or a warp primitive and takes a pointer or reference argument
/// (its writes cannot be followed); null if none.
const clang::Stmt *opaqueCall(const clang::Stmt *S);
/// The first `return`, `break`, `continue` or `goto` in \p S (`break`
/// and `continue` only when they leave \p S), or null.
const clang::Stmt *firstJump(const clang::Stmt *S);

/// What varies across the threads of one block.
struct Variance {
  bool X = false, Y = false, Z = false;
  bool Unknown = false; ///< loads, calls, variables written after their init
  bool uniform() const { return !X && !Y && !Z && !Unknown; }
};
/// Which thread coordinates \p E depends on, following locals of \p Kernel
/// to their initializers (locals written again make it Unknown).
Variance threadVariance(const clang::Expr *E,
                        const clang::FunctionDecl *Kernel);
/// Whether \p E, in \p Kernel, has the same value in every thread of a
/// block: no thread index, no calls but math functions, locals followed to
/// their initializers (locals assigned again are not uniform). Unlike
/// threadVariance(), a load whose address is uniform is uniform.
bool isBlockUniform(const clang::Expr *E, const clang::FunctionDecl *Kernel);

/// A variable whose value is the same wherever it is read: const-qualified
/// and initialized, or a local variable or parameter its function never
/// writes (writtenVars()).
bool stableVar(const clang::VarDecl *V);

/// The first reference in \p S (depth first, through every child) that
/// \p Match accepts, or null.
const clang::DeclRefExpr *
findDeclRef(const clang::Stmt *S,
            llvm::function_ref<bool(const clang::DeclRefExpr *)> Match);
/// \p E has no side effects and reads only stable variables: computed
/// apart from a launch (a grid variable, a struct's initializer), it has
/// the value it would have at the launch.
bool stableExpr(const clang::Expr *E, const clang::ASTContext &AST);
/// \p A and \p B compute the same value: the same operators, explicit
/// casts, integer constants and declarations, parentheses and implicit
/// conversions aside. (Where \p B is a launch argument, its conversion to
/// the parameter's type narrows a non-negative value, if at all, to a
/// smaller one; a negative ceil(n / B) grid makes the launch fail.)
bool sameValueExpr(const clang::Expr *A, const clang::Expr *B);

//===--- Launch sites
//------------------------------------------------------===//

/// The function that declares \p V when \p Caller is the call operator of
/// a lambda written inside it (lambdas nested in lambdas included), or
/// null: a launch in `[&] { k<<<blocks, threads>>>(a, b); }` (a timing
/// harness) reads the variables of the function around it, whose body holds
/// their writes and allocations.
const clang::FunctionDecl *lambdaOwner(const clang::FunctionDecl *Caller,
                                       const clang::VarDecl *V);

/// The launch expression a launch site of the model names, or null.
const clang::CUDAKernelCallExpr *findLaunchCall(const EditContext &Ctx,
                                                const LaunchSite &L);

/// Deletions of the declarations (their lines, where nothing else stands
/// on them) of host locals that \p Repls leaves unused by rewriting the
/// launch configurations of \p Kernel: locals a rewritten configuration
/// names, each reference inside replaced text, none named by the new text,
/// every local of the declaration so, initializers without side effects
/// (a dim3 of such values included). IdleLaunchLocals.cpp.
std::vector<clang::tooling::Replacement>
idleLaunchLocals(const EditContext &Ctx, llvm::StringRef Kernel,
                 const clang::tooling::Replacements &Repls);

/// The span (text) of \p E, a part of a launch, as written: where no macro
/// wrote it, or where it reads as written with constant macros
/// (constantMacroSpan(); through a launch macro, an argument written in the
/// invocation, inside the parentheses the macro's body puts around it);
/// nothing (empty) otherwise. Whether the text may be rewritten is
/// LaunchSite::GridInPlace's question.
std::optional<SourceSpan> spelledSpan(const EditContext &Ctx,
                                      const clang::Expr *E);
std::string spelledText(const EditContext &Ctx, const clang::Expr *E);
/// spelledSpan(), or, where \p E is the whole expansion of one macro
/// invoked in the file (`DIV_UP(n, 256)`; also as a launch macro's argument,
/// inside the parentheses its body puts around it), the invocation's span:
/// a grid replaced whole no longer reads the macro there. gridText(): its
/// text.
std::optional<SourceSpan> gridSpan(const EditContext &Ctx,
                                   const clang::Expr *E);
std::string gridText(const EditContext &Ctx, const clang::Expr *E);
/// The text of \p E, a part of a grid, as written: spelledText(), or, in a
/// grid that is one macro's whole expansion (`#define BLOCKS ((N + 255) /
/// 256)`), as the macro's definition writes it (macroBodyText()), for the
/// grid's new text put where the macro was invoked.
std::string gridPartText(const EditContext &Ctx, const clang::Expr *E);

/// The grid of a 1D launch as an integer expression (through an implicit or
/// explicit `dim3(g)` / `dim3(g, 1, 1)`), with its span; nothing (and
/// \p WhyNot) otherwise.
struct GridExpr {
  const clang::Expr *E = nullptr;
  SourceSpan Span;
  std::string Text;
};
std::optional<GridExpr> grid1D(const EditContext &Ctx, const LaunchSite &L,
                               std::string &WhyNot);

/// `(E + B - 1) / B`, `(E + (B - 1)) / B` and `(E + B') / B` with B' = B-1
/// literal, `E / B + (E % B != 0)` (the remainder's test spelled any of
/// the usual ways; E plain arithmetic), and `E / B` where E is known (\p
/// Value) to be a multiple of B: E's text and the literal B.
struct CeilDiv {
  const clang::Expr *Numerator = nullptr; ///< E
  int64_t Divisor = 0;
  const clang::Expr *DivisorExpr = nullptr;
};
/// \p Value gives the integer an operand stands for (default: integer
/// literals only); a caller that knows more (a local constant) passes its
/// own.
std::optional<CeilDiv> matchCeilDiv(
    const clang::Expr *E,
    llvm::function_ref<std::optional<int64_t>(const clang::Expr *)> Value = {});
/// matchCeilDiv(), or a call to a helper whose body is `return <one of
/// its forms over the parameters>;` (`iDivUp(n, 256)`, `ceil_div(n, 256)`),
/// read with each parameter standing for the call's argument: the
/// numerator is then the argument (of no narrower type than the parameter
/// and without side effects), the divisor known at the call.
std::optional<CeilDiv> matchCeilDivOrHelper(
    const clang::Expr *E, const clang::ASTContext &AST,
    llvm::function_ref<std::optional<int64_t>(const clang::Expr *)> Value = {});

/// Folds one operand for foldLaunchInteger(): the expression it stands for
/// (an initializer, a cast's operand), folded one step deeper.
using LaunchFoldNext =
    llvm::function_ref<std::optional<int64_t>(const clang::Expr *)>;
/// The value of an operand foldLaunchInteger() does not fold itself (given
/// without parentheses and implicit casts), or nothing when it is unknown.
using LaunchFoldLeaf = llvm::function_ref<std::optional<int64_t>(
    const clang::Expr *, LaunchFoldNext)>;
/// The integer \p E stands for at a launch: an integer constant (intValue():
/// literals, constant macros, `/` and the rest of a constant expression),
/// or +, - and * of such values, where \p Leaf gives every other operand
/// (typically a variable never written, through its initializer with the
/// LaunchFoldNext it is handed). Nothing when an operand is unknown, for
/// another operator (`n / 4` with n a variable), or past 8 steps.
std::optional<int64_t> foldLaunchInteger(const clang::Expr *E,
                                         const clang::ASTContext &AST,
                                         LaunchFoldLeaf Leaf);

/// The value of \p E at a launch (foldLaunchInteger()): a stable integer
/// variable (stableVar()) stands for its initializer, `v.x` (y, z) of a
/// stable `dim3` variable for that extent, a cast to a wide integer for its
/// operand. Defined in GridCoverage.cpp.
std::optional<int64_t> launchTimeValue(const clang::Expr *E,
                                       const clang::ASTContext &AST);

/// Text of \p G's value divided by \p K, rounded up, written the readable
/// way: `(n + 1023) / 1024` for `(n + 255) / 256`, else `(G + K - 1) / K`.
std::string ceilDivGridText(const EditContext &Ctx, const GridExpr &G,
                            int64_t K);

/// Every block size a launch of \p K is known to use (x dimension, when the
/// block is a constant, a `dim3` of constants, or a local variable
/// initialized with one); nothing if any launch's is unknown.
std::optional<std::vector<int64_t>> launchBlockSizesX(const EditContext &Ctx,
                                                      const KernelInfo &K,
                                                      std::string &WhyNot);

/// The text a launch passes for \p Bound (a kernel parameter, or an
/// integer constant written in the kernel); nothing, with \p WhyNot, when
/// the value cannot be named at the launch.
std::optional<std::string> boundAtLaunch(const EditContext &Ctx,
                                         const clang::Expr *Bound,
                                         const LaunchSite &L,
                                         std::string &WhyNot);

/// Dimension \p D of the block \p Call launches with, when it is a
/// constant, a `dim3` of constants, or a local variable initialized with one
/// and not written again.
std::optional<int64_t> blockDimAt(const clang::ASTContext &AST,
                                  const clang::CUDAKernelCallExpr *Call,
                                  char D);

/// The z of the grid \p L launches with, as text to write in a new grid at
/// that launch: the third argument of a `dim3(x, y, z)`, `g.z` for a
/// variable `g`, otherwise `(<grid>).z`; empty where z is 1 (an integer
/// grid, `dim3(x, y)`).
std::string gridZText(const EditContext &Ctx, const LaunchSite &L);

/// Every launch of \p K can have its grid and block rewritten (written out,
/// or through a macro whose invocation spells both in place:
/// LaunchSite::GridInPlace); else the reason.
std::string launchProblem(const KernelInfo &K);

/// Why the grid (block) of \p L, a launch written through a macro whose
/// invocation does not spell it in place, cannot be rewritten.
std::string macroGridProblem(const LaunchSite &L);
std::string macroBlockProblem(const LaunchSite &L);

/// Whether the grid of \p L is a plain integer (not a `dim3`).
bool gridIsInteger(const EditContext &Ctx, const LaunchSite &L);

/// The text of a plain integer grid capped at \p Max blocks: a literal
/// becomes min(literal, Max), anything else `G < Max ? G : Max`.
std::string cappedGrid(llvm::StringRef Grid, int64_t Max);

/// What launch \p Call passes for \p Bound, a kernel's bound: the argument
/// for a parameter; for `p.n`, a member of a struct parameter passed by
/// value, that member's initializer in the aggregate the launch passes
/// (`{n, a, x, y}` written at the launch, or the initializer of a variable
/// never written after: \p Via set); \p Bound itself when it is an integer
/// constant. Null, with \p WhyNot, otherwise.
const clang::Expr *boundExprAtLaunch(const EditContext &Ctx,
                                     const clang::Expr *Bound,
                                     const clang::CUDAKernelCallExpr *Call,
                                     bool &Via, std::string &WhyNot);

/// Why launch \p L may run fewer threads along \p Dim (0, 1, 2: x, y, z)
/// than \p Bound, a bound the kernel's guard compares that dimension's
/// index with, counts (boundExprAtLaunch()); empty when grid times block is
/// shown to reach it: the grid is ceil(bound / D) with D at most the block
/// (`(n + B - 1) / B` and matchCeilDiv's other spellings, written out or by
/// a macro, D a constant or the block's own expression, or a call to a
/// helper `return (a + b - 1) / b;` whose numerator narrows nothing), or
/// grid, block and bound are constants whose product reaches the bound.
/// Grid and block may be stable local variables (never written after their
/// initialization, `dim3` ones too); what is computed apart from the launch
/// (a grid variable, a struct's member) reads only constants and such
/// variables. Casts to integers of 32 bits or more are looked through: a
/// grid of 2^31 blocks or more does not launch.
std::string gridCoverageProblem(const EditContext &Ctx, const LaunchSite &L,
                                const clang::Expr *Bound, unsigned Dim);

/// The extent of launch \p L's block along \p Dim (0, 1, 2: x, y, z) when
/// it is known at the launch (an integer block is 1 along y and z; a
/// `dim3` of constants or of stable variables holding them); else nothing.
std::optional<int64_t> blockExtentAt(const EditContext &Ctx,
                                     const LaunchSite &L, unsigned Dim);

/// gridCoverageProblem() along x for an index that counts the blocks of a 2D
/// grid row by row (`(blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x +
/// threadIdx.x`): also shown when the grid is (X, ceil(NB / D)) with D at
/// most X, so that it holds at least NB blocks, and NB blocks cover the
/// bound as a 1D grid would.
std::string gridRowsCoverageProblem(const EditContext &Ctx, const LaunchSite &L,
                                    const clang::Expr *Bound);

//===--- Template instantiations
//-----------------------------------------===//
//
// A kernel template is analyzed in its pattern, where element types and
// sizes may depend on template parameters; what they are comes from the
// instantiations the translation unit makes. Instantiated statements keep
// the pattern's source locations, so text found in an instantiation is the
// pattern's text.

/// The instantiations of the function template whose pattern is
/// \p Pattern that have a body in this translation unit (implicit or
/// explicit), in the order clang made them. Empty when \p Pattern is not
/// a template's pattern or the template is never instantiated.
std::vector<const clang::FunctionDecl *>
templateInstantiations(const clang::FunctionDecl *Pattern);

/// Parameter \p Param of a template's pattern in \p Instantiation (one of
/// templateInstantiations()): the one at the same position; null if none.
const clang::ParmVarDecl *
instantiatedParam(const clang::ParmVarDecl *Param,
                  const clang::FunctionDecl *Instantiation);

/// The name of \p FD with its template arguments, as diagnostics print it
/// (`blas::axpy_kernel<float>`).
std::string instantiationName(const clang::FunctionDecl *FD);

} // namespace optiml

#endif
