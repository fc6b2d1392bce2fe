//===- ThreadPerItem.h - One item per thread behind a bounds guard -*- C++
//-*-===//
//
// Private to lib/Edit. The shape most naive kernels have: each thread
// computes its global index, checks it against a bound and handles one item
//   int i = blockIdx.x * blockDim.x + threadIdx.x;
//   if (i < n) body            // or: if (i >= n) return; body
// Two recognizers with the rules their transforms need:
//  - MapPattern (grid-stride, vectorize, coarsen, warp-reduce): x only, the
//    index declared anywhere at the top level, the guard at once after it,
//    a thread-uniform bound, no macros; it also carries the text a rewrite
//    regenerates (the guarded body as one block, its indentation).
//  - ThreadItem (warp-per-row, privatize-atomics, all-pairs-tiling): any
//    dimension, an index computed through a `__device__` helper too, the
//    statements before the index kept for the caller to judge.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_PATTERNS_THREADPERITEM_H
#define OPTIML_LIB_EDIT_PATTERNS_THREADPERITEM_H

#include "optiml/Edit/Transform.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <optional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class DeclStmt;
class Expr;
class FunctionDecl;
class IfStmt;
class Stmt;
class VarDecl;
} // namespace clang

namespace optiml {

//===--- The map shape
//-----------------------------------------------------===//

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
  /// early return), and the span of each (with its `;`).
  std::vector<const clang::Stmt *> Body;
  std::vector<SourceSpan> BodySpans;
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
/// found instead. With \p IndexByMeaning, the index may also be any
/// integer of at least 32 bits whose initializer linearIndexByMeaning()
/// reads as the x index of a 1D grid (through a helper, casts, any order).
/// With \p ConstantMacros, the guard's condition and the body may use
/// macros that name no variable and call nothing (onlyConstantMacros():
/// `#define N 4096`); BoundText is then the bound as written (`N`), to be
/// parenthesized where it is not compared.
std::optional<MapPattern> matchMapPattern(const EditContext &Ctx,
                                          const clang::FunctionDecl *Kernel,
                                          std::string &WhyNot,
                                          bool IndexByMeaning = false,
                                          bool ConstantMacros = false);

/// The body of a map kernel can run once per element in any order and any
/// number of times per thread: it does not use thread or block indices other
/// than through the index, does not synchronize, use shared memory or warp
/// primitives, return, or write the index or the bound. Empty when fine,
/// else the reason.
std::string elementwiseBodyProblem(const EditContext &Ctx, const MapPattern &P);

//===--- The one-item-per-thread shape, any dimension
//----------------------===//

/// `T i = <linear index in D>;` followed by `if (i < n) body` as the last
/// statement of the kernel, or by `if (i >= n) return;` and the rest.
struct ThreadItem {
  const clang::VarDecl *Index = nullptr;
  const clang::DeclStmt *IndexDecl = nullptr;
  char Dim = 'x';
  const clang::Expr *Bound = nullptr; ///< n
  const clang::IfStmt *Guard = nullptr;
  bool EarlyReturn = false;
  /// Statements before the index declaration (must be uniform
  /// declarations; callers check).
  std::vector<const clang::Stmt *> Before;
  /// The guarded statements.
  std::vector<const clang::Stmt *> Body;
  /// The index counts the blocks of a 2D grid row by row (only with
  /// ThreadItemOptions::ByMeaning).
  bool GridRows = false;
};

/// What matchThreadItem accepts beyond the index written out; a caller
/// opts in to what its rewrite handles.
struct ThreadItemOptions {
  /// The index read by its meaning (linearIndexByMeaning): also over a 2D
  /// grid of blocks read row by row; in a kernel template, an index whose
  /// type or value depends on template parameters when every
  /// instantiation declares an integer of at least 32 bits holding the
  /// same index. Declared as an integer of at least 32 bits.
  bool ByMeaning = false;
};

std::optional<ThreadItem> matchThreadItem(const clang::FunctionDecl *Kernel,
                                          std::string &WhyNot,
                                          const ThreadItemOptions &Opts = {});

/// The global thread index an expression computes, read by its meaning.
struct LinearIndex {
  char Dim = 'x';
  /// `(blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x`:
  /// the blocks of a 2D grid counted row by row.
  bool GridRows = false;
};

/// \p E expanded into a sum of products of thread and block coordinates
/// (through parentheses, casts to integers of at least 32 bits, integer
/// constants and calls without arguments to a function whose body is
/// `return <expr>;`), when that sum is `blockIdx.D * blockDim.D +
/// threadIdx.D` or the 2D-grid form above, in any order and grouping.
std::optional<LinearIndex> linearIndexByMeaning(const clang::Expr *E,
                                                const clang::ASTContext &AST);
/// The same, where a variable may stand for an expression: \p Local gives
/// it (a local's initializer when the caller knows the local is never
/// written and its type keeps every value, an integer of at least 32
/// bits) or null (the variable is not read through). The expression is
/// read as if written in the variable's place.
std::optional<LinearIndex> linearIndexByMeaning(
    const clang::Expr *E, const clang::ASTContext &AST,
    llvm::function_ref<const clang::Expr *(const clang::VarDecl *)> Local);

/// The variable declared at \p V's position in \p Inst, an instantiation
/// of the kernel template whose pattern declares \p V; null if none.
const clang::VarDecl *instantiatedVar(const clang::VarDecl *V,
                                      const clang::FunctionDecl *Inst);

} // namespace optiml

#endif
