//===- KernelPatterns.h - Kernel shapes the restructuring edits share -*- C++ -*-===//
//
// Private to lib/Edit/Transforms. The catalog's restructuring transforms
// (grid-stride, vectorize, coarsen, warp-reduce, launch-config,
// shared-tiling) recognize the same few kernel shapes and rewrite the same
// launch-site forms; this header is where they are recognized once:
//
//  - the one-element-per-thread map shape
//      i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) body
//    (or `if (i >= n) return; body`),
//  - which values vary across the threads of a block,
//  - the launch-site grid forms ((n + B - 1) / B, n / B, constants),
//  - splicing text: a region of the input with some sub-ranges replaced.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_TRANSFORMS_KERNELPATTERNS_H
#define OPTIML_LIB_EDIT_TRANSFORMS_KERNELPATTERNS_H

#include "optiml/Edit/Transform.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>
#include <vector>

namespace clang {
class CUDAKernelCallExpr;
class DeclStmt;
class Expr;
class FunctionDecl;
class IfStmt;
class Stmt;
class ValueDecl;
class VarDecl;
} // namespace clang

namespace optiml {

//===--- Text --------------------------------------------------------------===//

/// A replacement inside a region that is being regenerated as text.
struct TextEdit {
  unsigned Offset = 0; ///< absolute file offset
  unsigned Length = 0;
  std::string Text;
};

/// The text of [Begin, End) of \p Code with \p Edits (inside the region,
/// non-overlapping) applied.
std::string spliceText(llvm::StringRef Code, unsigned Begin, unsigned End,
                       std::vector<TextEdit> Edits);

/// The main-file span of a statement or expression; for statements that end
/// in `;` (expression statements, `return`, `break`) the `;` is included.
/// Nothing when any part of it comes from a macro expansion.
std::optional<SourceSpan> stmtSpan(const EditContext &Ctx,
                                   const clang::Stmt *S);
/// The source text of an expression as written (empty if it has no file
/// span or uses a macro).
std::string exprText(const EditContext &Ctx, const clang::Expr *E);
/// The source text of \p S as written (empty if it has no file span).
std::string stmtText(const EditContext &Ctx, const clang::Stmt *S);

/// True if \p S or anything in it was written inside a macro expansion.
bool containsMacro(const clang::Stmt *S);

/// \p Text, wrapped in parentheses unless it is one token or already
/// parenthesized as a whole.
std::string parenthesize(llvm::StringRef Text);

/// Shifts every line of \p Text after the first by \p Delta columns
/// (negative: removes up to that much leading whitespace).
std::string reindent(llvm::StringRef Text, int Delta);

/// An identifier starting with \p Base that does not occur in \p Code.
std::string freshName(llvm::StringRef Code, llvm::StringRef Base);

//===--- Expressions -------------------------------------------------------===//

/// The dimension D of `blockIdx.D * blockDim.D + threadIdx.D` (operands in
/// any order), or nothing.
std::optional<char> linearIndexDim(const clang::Expr *E);

/// The declaration \p E names (through parentheses and implicit casts).
const clang::ValueDecl *referencedDecl(const clang::Expr *E);
/// \p E names \p D.
bool refersTo(const clang::Expr *E, const clang::ValueDecl *D);
/// \p S mentions \p D anywhere.
bool mentions(const clang::Stmt *S, const clang::ValueDecl *D);
/// \p S mentions threadIdx/blockIdx/blockDim/gridDim (any dimension) when
/// \p Var is empty, or the named one.
bool mentionsBuiltin(const clang::Stmt *S, llvm::StringRef Var = "");
/// Calls in \p S to a function whose name starts with \p Prefix.
bool callsFunction(const clang::Stmt *S, llvm::StringRef Prefix);
/// A function that orders threads or reads other threads' values: barriers,
/// fences, atomics, shuffles, votes and warp reductions.
bool isThreadCall(llvm::StringRef Name);

/// Variables written in \p S: assigned, incremented, or address taken.
llvm::DenseSet<const clang::ValueDecl *> writtenVars(const clang::Stmt *S);

/// What varies across the threads of one block.
struct Variance {
  bool X = false, Y = false, Z = false;
  bool Unknown = false; ///< loads, calls, variables written after their init
  bool uniform() const { return !X && !Y && !Z && !Unknown; }
};
/// Which thread coordinates \p E depends on, following locals of \p Kernel
/// to their initializers (locals written again make it Unknown).
Variance threadVariance(const clang::Expr *E, const clang::FunctionDecl *Kernel);

//===--- The map shape -----------------------------------------------------===//

/// `T i = blockIdx.x * blockDim.x + threadIdx.x;` followed at once by the
/// guard `if (i < n) body` as the kernel's last statement, or by
/// `if (i >= n) return;` and the rest of the body.
struct MapPattern {
  const clang::VarDecl *Index = nullptr;
  const clang::DeclStmt *IndexDecl = nullptr;
  const clang::IfStmt *Guard = nullptr;
  bool EarlyReturn = false;
  const clang::Expr *Bound = nullptr;
  std::string IndexName, IndexType, InitText, BoundText;
  /// The guarded statements (the `then` branch, or everything after the
  /// early return).
  std::vector<const clang::Stmt *> Body;
  /// Offsets of the guarded statements' text (BodyBegin..BodyEnd), and of
  /// the whole region a rewrite replaces (the index declaration to the end
  /// of the body).
  unsigned BodyBegin = 0, BodyEnd = 0, RegionBegin = 0, RegionEnd = 0;
  /// The guarded body as one statement: `{ ... }` (braces added when the
  /// source had a single statement or the early-return form).
  std::string BodyBlock;
  /// Indentation of the index declaration's line.
  std::string Indent;
};

/// Matches the map shape in \p Kernel; on failure \p WhyNot says what was
/// found instead.
std::optional<MapPattern> matchMapPattern(const EditContext &Ctx,
                                          const clang::FunctionDecl *Kernel,
                                          std::string &WhyNot);

/// The body of a map kernel can run once per element in any order and any
/// number of times per thread: it does not use thread or block indices other
/// than through the index, does not synchronize, use shared memory or warp
/// primitives, return, or write the index or the bound. Empty when fine,
/// else the reason.
std::string elementwiseBodyProblem(const EditContext &Ctx,
                                   const MapPattern &P);

//===--- Launch sites ------------------------------------------------------===//

/// The launch expression a launch site of the model names.
const clang::CUDAKernelCallExpr *findLaunchCall(const EditContext &Ctx,
                                                const LaunchSite &L);

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
/// literal: E's text and the literal B.
struct CeilDiv {
  const clang::Expr *Numerator = nullptr; ///< E
  int64_t Divisor = 0;
  const clang::Expr *DivisorExpr = nullptr;
};
std::optional<CeilDiv> matchCeilDiv(const clang::Expr *E);

/// Text of \p G's value divided by \p K, rounded up, written the readable
/// way: `(n + 1023) / 1024` for `(n + 255) / 256`, else `(G + K - 1) / K`.
std::string ceilDivGridText(const EditContext &Ctx, const GridExpr &G,
                            int64_t K);

/// An integer constant expression's value.
std::optional<int64_t> intValue(const clang::Expr *E,
                                const clang::ASTContext &AST);

/// Every block size a launch of \p K is known to use (x dimension, when the
/// block is a constant, a `dim3` of constants, or a local variable
/// initialized with one); nothing if any launch's is unknown.
std::optional<std::vector<int64_t>> launchBlockSizesX(const EditContext &Ctx,
                                                      const KernelInfo &K,
                                                      std::string &WhyNot);

} // namespace optiml

#endif
