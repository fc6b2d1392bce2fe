//===- SharedTilingInternal.h - shared-tiling's shared pieces ---*- C++ -*-===//
//
// Private to the shared-tiling transform: the matmul shape and the transform
// are in SharedTiling.cpp (its register tile in SharedTilingMicro.cpp), the
// block-sized product in SharedTilingBlock.cpp (with the products' pointer
// aliases and template accumulators), the 2D stencil shape in
// SharedTilingStencil.cpp (its rewrites, the tile and rows, in
// SharedTilingRows.cpp; a kernel template's window loops, read per
// instantiation, in SharedTilingMicro.cpp);
// both read launches' blocks and loop bounds with the helpers below, as
// vectorize-stencil (VectorizeStencil.cpp) reads its launches' blocks and
// grids.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_SHAREDTILINGINTERNAL_H
#define OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_SHAREDTILINGINTERNAL_H

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace optiml {
namespace sharedtiling {

using Dim3 = std::array<int64_t, 3>;

/// The constant (x, y, z) of a launch's block argument: an integer, a
/// `dim3(...)` of constants, or a local variable (never written after its
/// initialization) holding one.
std::optional<Dim3> constDim3(const EditContext &Ctx, const clang::Expr *A,
                              unsigned Depth = 0);
std::string dimText(const Dim3 &D);
/// The extent along \p Dim (0, 1, 2 for x, y, z) of a launch's grid: that
/// argument of a `dim3(...)` (x: also a plain integer grid), written at the
/// launch or in a local variable's initializer (never written after it).
/// \p Var is that variable, if any. y is read only where z is one.
const clang::Expr *gridExtent(const EditContext &Ctx, const LaunchSite &Site,
                              unsigned Dim, const clang::VarDecl *&Var);
/// The extent along \p Dim (0, 1, 2 for x, y, z) of \p Site's grid when
/// it is ceil(\p Bound / \p Block): `(B + Block - 1) / Block` (or another
/// spelling matchCeilDiv reads) with B written as \p Bound, whitespace and
/// \p Bound's outer parentheses aside. Then the grid covers exactly the
/// points below the bound along \p Dim, and dividing it there keeps
/// covering them (the points it adds lie past the bound). The extent is
/// that argument of a `dim3(...)` (x: also a plain integer grid), written
/// at the launch or in a local variable's initializer (never written after
/// it); \p Var is that variable, if any. y is read only where z is one.
/// Null when the grid is not that.
const clang::Expr *coveringExtent(const EditContext &Ctx,
                                  const LaunchSite &Site, unsigned Dim,
                                  int64_t Block, llvm::StringRef Bound,
                                  const clang::VarDecl *&Var);
/// `V < Bound` or `Bound > V` (Less) / `V >= Bound` or `Bound <= V`
/// (!Less): the bound.
const clang::Expr *boundOf(const clang::Expr *C, const clang::VarDecl *V,
                           bool Less);

/// `for (int k = 0; k < K; ++k)` (a counting loop, Patterns/CountingLoop.h,
/// from 0 up to K excluded): k, with \p Bound = K; null for any other loop.
const clang::VarDecl *zeroBasedLoop(const clang::ForStmt *L,
                                    const clang::ASTContext &AST,
                                    const clang::Expr *&Bound);
/// Every variable \p S names other than \p Allowed is the same for every
/// thread of a block; else the first one that is not.
std::string nonUniformRef(const clang::Stmt *S,
                          llvm::ArrayRef<const clang::ValueDecl *> Allowed,
                          const clang::FunctionDecl *Kernel);
/// The span of \p S as written (its `;` included for a \p Statement),
/// macros allowed at its edges; nothing when it cannot be read as one piece
/// (SharedTilingBlock.cpp).
std::optional<SourceSpan> wholeSpan(const EditContext &Ctx,
                                    const clang::Stmt *S, bool Statement);
/// The text of \p S (wholeSpan) with every reference to the given variables
/// replaced; nothing when one of them is written through a macro.
std::optional<std::string>
renamedText(const EditContext &Ctx, const clang::Stmt *S,
            llvm::ArrayRef<std::pair<const clang::ValueDecl *, std::string>> To,
            bool Statement);
/// The zero of an element type, as text (`0.0f`, `0.0`, `T(0)`).
std::string zeroOf(clang::QualType T, llvm::StringRef Name);

/// A local pointer that names a fixed place in a parameter array (an
/// alias, SharedTilingBlock.cpp): `const float *a = A + (size_t)row * lda;`
/// or `&A[e]`. Where it is one, `a[i]` reads `A[e + i]`: the products read
/// its offsets as part of the index, and their rewrites put the
/// initializer, parenthesized, where the pointer was (`(A + e)[i]`, the
/// same pointer arithmetic), so that it may be moved or renamed.
struct PointerAlias {
  const clang::DeclStmt *Decl = nullptr;
  const clang::VarDecl *Var = nullptr;
  const clang::ParmVarDecl *Param = nullptr;
  /// The integers added to the parameter (`e` of `A + e`; several in
  /// `A + e1 + e2`).
  llvm::SmallVector<const clang::Expr *, 2> Offsets;
};
/// \p DS as an alias of a pointer parameter of \p Kernel, with \p Scope
/// the statements after it in its block: a single pointer local whose
/// initializer is the parameter plus integer offsets (`P + e`, `e + P`,
/// `P + e1 + e2`, `&P[e]`), its pointee the parameter's (qualifiers aside).
/// The parameter is never written in the kernel; in \p Scope the pointer
/// is only the base of subscripts (never reassigned, its address never
/// taken, never passed on), and the offsets, without loads, calls or
/// writes, name only integers, enumerators and template parameters that
/// are not written. Nothing, with \p WhyNot set, otherwise.
std::optional<PointerAlias>
pointerAlias(const clang::DeclStmt *DS,
             llvm::ArrayRef<const clang::Stmt *> Scope,
             const clang::FunctionDecl *Kernel, std::string &WhyNot);
/// The subscript \p R (a reference to a pointer) is the base of, when that
/// element is only read (an rvalue); else null.
const clang::ArraySubscriptExpr *readThrough(clang::ASTContext &AST,
                                             const clang::DeclRefExpr *R);
/// The pointer locals of \p Kernel (in any block) initialized from
/// \p Param, each an alias (pointerAlias) only ever read through, into
/// \p Out; else why not ("'w', a pointer into 'c', is written through at
/// ..."), \p Out then partial.
std::string aliasesOfParam(const EditContext &Ctx,
                           const clang::FunctionDecl *Kernel,
                           const clang::ParmVarDecl *Param,
                           std::vector<PointerAlias> &Out);
/// analyzePointerParam() where \p Aliases are bound to \p Param: every use
/// of it is a read `Param[i]` or the parameter in an alias's initializer;
/// the loads are those reads, then each alias's reads (`w[i]`).
PointerUses usesThroughAliases(const EditContext &Ctx,
                               const clang::FunctionDecl *Kernel,
                               const clang::ParmVarDecl *Param,
                               llvm::ArrayRef<PointerAlias> Aliases);
/// The aliases \p Stmts (one block's statements) declares from \p At on;
/// \p At moves past them. \p WhyNot says why the pointer declaration that
/// ends them is not one (empty when that statement declares no pointer).
void takeAliases(llvm::ArrayRef<const clang::Stmt *> Stmts, size_t &At,
                 const clang::FunctionDecl *Kernel,
                 std::vector<PointerAlias> &Out, std::string &WhyNot);
/// Every row pointer into a parameter array that \p Body declares
/// (pointerAlias), in any block (SharedTilingStencil.cpp; vectorize-stencil
/// reads its rows through them too).
std::vector<PointerAlias> bodyAliases(const clang::CompoundStmt *Body,
                                      const clang::FunctionDecl *Kernel);
/// The alias \p Access reads through (its base names it), or null.
const PointerAlias *aliasOf(const clang::ArraySubscriptExpr *Access,
                            llvm::ArrayRef<PointerAlias> Aliases);
/// The renames that put each alias's initializer in place of the pointer,
/// parenthesized, with \p To applied inside it; nothing when one has no
/// place in the file. For renamedText.
std::optional<std::vector<std::pair<const clang::ValueDecl *, std::string>>>
inlinedAliases(
    const EditContext &Ctx, llvm::ArrayRef<PointerAlias> Aliases,
    llvm::ArrayRef<std::pair<const clang::ValueDecl *, std::string>> To);
/// The refusal when an alias is named anywhere in \p Body but inside
/// \p Allowed (the factors and the code after the loop, which the
/// rewrites rename); empty when none is.
std::string aliasUsedElsewhere(const clang::Stmt *Body,
                               llvm::ArrayRef<PointerAlias> Aliases,
                               llvm::ArrayRef<const clang::Stmt *> Allowed);

/// The variable \p Var of a kernel template's pattern \p Kernel as each
/// instantiation of it declares it (at the same place in the source), in
/// the order of templateInstantiations(); empty when there is none.
std::vector<const clang::VarDecl *>
instantiatedVars(const clang::VarDecl *Var, const clang::FunctionDecl *Kernel);
/// Why the accumulator \p Acc, whose type depends on template parameters,
/// is not arithmetic in every instantiation of \p Kernel (or the kernel
/// has none); empty when it is. Its declaration keeps the type as written.
std::string dependentAccumulatorProblem(const clang::VarDecl *Acc,
                                        const clang::FunctionDecl *Kernel);

/// One factor of a product: the load and its element type.
struct Operand {
  const clang::ArraySubscriptExpr *Access = nullptr;
  std::string ElemType, Zero;
};

/// A matmul-like kernel (SharedTiling.cpp): one thread per output of a
/// grid-wide product.
struct MatmulPlan {
  ResolvedKernel Kernel;
  const clang::VarDecl *Row = nullptr, *Col = nullptr, *K = nullptr;
  std::string RowBound, ColBound, KBound; ///< texts, parenthesized
  std::string StoreGuard;                 ///< `row < M && col < N`
  const clang::DeclStmt *AccDecl = nullptr;
  /// The k loop: a `for`, or `int k = 0; while (k < K) { ...; ++k; }` (its
  /// counter's declaration in CounterDecl).
  const clang::ForStmt *Loop = nullptr;
  const clang::WhileStmt *While = nullptr;
  const clang::DeclStmt *CounterDecl = nullptr;
  Operand A, B;
  /// The fused multiply-add the loop accumulates with (`fmaf`, as written),
  /// empty for `acc += a * b`.
  std::string Fma;
  std::vector<const clang::Stmt *> Post;
  /// Pointer aliases between the indices and the accumulator (before or
  /// after the guard).
  std::vector<PointerAlias> Aliases;
  unsigned RegionBegin = 0, RegionEnd = 0;
  std::string Indent;
  Dim3 Block{0, 0, 0}; ///< the block every launch uses
};
/// micro=8 (SharedTilingMicro.cpp): an 8 x 8 register tile per thread.
llvm::Expected<clang::tooling::Replacements>
rewriteMicroTile(const EditContext &Ctx, const Edit &E, const MatmulPlan &P);

/// A block-sized product's indices decoded from one flat index over 1D
/// blocks (SharedTilingFlat.cpp): every launch's block is D * D x 1 x 1,
///   gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;  // or a helper
///   if (gid >= n) return;                                  // optional
///   mat = gid / (D * D); row = (gid % (D * D)) / D; col = gid % D;
/// With blockDim.x == D * D, gid / (D * D) is blockIdx.x, the row
/// threadIdx.x / D and the column threadIdx.x % D (flatIndices checks each
/// division against the block): the product of a D x D block, one matrix
/// per block, written over one dimension.
struct FlatIndices {
  int64_t Threads = 0, D = 0; ///< every launch's block: Threads = D * D
  const clang::VarDecl *Gid = nullptr; ///< blockIdx.x * Threads + threadIdx.x
  const clang::DeclStmt *GidDecl = nullptr;
  /// Variables decoded to blockIdx.x (the matrix), the row and the column.
  std::vector<const clang::VarDecl *> Blocks;
  const clang::VarDecl *Row = nullptr, *Col = nullptr;
  /// Variables computed from the matrix without loads or calls (`base =
  /// mat * D * D`): the same in the block, as the matrix.
  std::vector<const clang::VarDecl *> Derived;
  /// The declarations from the flat index's on (uniform ones among them).
  std::vector<const clang::DeclStmt *> Decls;
  /// `if (gid >= n) return;`, or null: the threads past the end.
  const clang::IfStmt *Return = nullptr;
};
/// The flat indices that \p Stmts (the kernel's top-level statements)
/// declare from \p At on, \p At then past them. Nothing with \p Why empty
/// when \p Stmts[At] does not start a decoded flat index (the caller keeps
/// its own reason); nothing with \p Why set when it does but cannot be
/// shown to be one D x D matrix per block (the block, a division, the
/// early return, \p Tile).
std::optional<FlatIndices>
flatIndices(const EditContext &Ctx, const ResolvedKernel &K,
            llvm::ArrayRef<const clang::Stmt *> Stmts, size_t &At,
            std::optional<int64_t> Tile, std::string &Why);
/// The guards a flat index's early return (F.Return, `gid >= n`) becomes in
/// the rewrite, the names those of the template: \p AGuard (` && !(...)`)
/// for staging row \p Y of A, \p BGuard for column threadIdx.x of B, each
/// live when its first thread does not return; \p Live for the output at
/// row \p R, column threadIdx.x. False when the condition has no place in
/// the file.
bool flatGuards(const EditContext &Ctx, const FlatIndices &F, llvm::StringRef Y,
                llvm::StringRef R, std::string &AGuard, std::string &BGuard,
                std::string &Live);
/// Whether every call in \p S is to an index helper (indexHelperReturn)
/// whose expression, through its own calls, reads no memory, no threadIdx
/// and no blockDim: its value then depends on its arguments and the block
/// only (SharedTilingFlat.cpp).
bool plainIndexCalls(const clang::Stmt *S, const clang::ASTContext &AST,
                     unsigned Depth = 0);
/// Whether a function that \p S calls (or one those call) reads threadIdx
/// or blockDim in its body: where the rewrite moves the rows between
/// threads, such a call would see another thread's coordinates.
bool callsReadThreadCoords(const clang::Stmt *S, unsigned Depth = 0);

// Block-sized products (SharedTilingBlock.cpp): row = threadIdx.y, col =
// threadIdx.x, one output matrix per block; or decoded from a flat index
// (FlatIndices).
struct BlockProductPlan {
  ResolvedKernel Kernel;
  const clang::VarDecl *Row = nullptr, *Col = nullptr, *K = nullptr,
                       *Acc = nullptr;
  /// The declarations from the first one with an index to the last one
  /// before the accumulator (re-emitted without the row index).
  const clang::DeclStmt *FirstIndexDecl = nullptr;
  std::vector<const clang::DeclStmt *> Decls;
  const clang::ForStmt *Loop = nullptr;
  std::string KBound; ///< text, parenthesized
  Operand A, B;
  /// The fused multiply-add the loop accumulates with (`fmaf`, as written),
  /// empty for `acc += a * b`.
  std::string Fma;
  std::vector<const clang::Stmt *> Post;
  /// Pointer aliases between the indices and the accumulator.
  std::vector<PointerAlias> Aliases;
  unsigned RegionBegin = 0, RegionEnd = 0;
  std::string Indent;
  int64_t Tile = 0; ///< every launch's block is Tile x Tile
  /// Set when the indices are decoded from a flat index (every launch's
  /// block is then Tile * Tile x 1).
  std::optional<FlatIndices> Flat;
};
/// \p Shape is set once the product is recognized (later refusals are
/// about the launches).
llvm::Expected<BlockProductPlan>
analyzeBlockProduct(const EditContext &Ctx, const Edit &E,
                    std::optional<int64_t> Tile, bool &Shape);
/// \p Rows output rows per thread; the launches' blocks become Tile x
/// (Tile / Rows).
llvm::Expected<clang::tooling::Replacements>
rewriteBlockProduct(const EditContext &Ctx, const Edit &E,
                    const BlockProductPlan &P, int64_t Rows);

// Stencils (SharedTilingStencil.cpp).

/// A template parameter of a stencil kernel template whose value the
/// rewrite assumes: the one every instantiation in the file gives it.
struct TemplatePin {
  const clang::NonTypeTemplateParmDecl *Param = nullptr;
  int64_t Value = 0;
  std::string Seen; ///< the instantiations giving it ("k<3>, k<3u>")
};

/// An offset along one axis: Const + sum of Coef * loop variable.
struct Offset {
  int64_t Const = 0;
  std::vector<std::pair<const clang::ValueDecl *, int64_t>> Vars;
  int64_t Lo = 0, Hi = 0; ///< its range
};

/// One read of the staged array.
struct StencilRead {
  const clang::ArraySubscriptExpr *Access = nullptr;
  Offset DY, DX;
  /// Comparisons of the read's row or column with bounds (from enclosing
  /// `if`s), rendered with a placeholder for the coordinate.
  std::vector<std::string> GuardY, GuardX; ///< "$ >= 0", "$ < h"
  /// The conditions those comparisons make up: of each `if` around the
  /// read (true: it runs when the condition holds) and of each `if (...)
  /// continue;` before it (false).
  std::vector<std::pair<const clang::Expr *, bool>> OwnConds;
};

/// One comparison of a guard: the coordinate, the operator, the bound.
struct BoundCmp {
  bool Lower = false; ///< the coordinate is bounded from below
  std::string Text;   ///< with '$' for the coordinate
};

struct StencilPlan {
  ResolvedKernel Kernel;
  const clang::ParmVarDecl *In = nullptr;
  std::string ElemType, Pitch, IndexCast;
  std::vector<StencilRead> Reads;
  std::vector<BoundCmp> GuardY, GuardX; ///< the thread guard
  int64_t BX = 0, BY = 0;
  int64_t HaloYLo = 0, HaloYHi = 0, HaloXLo = 0, HaloXHi = 0;
  unsigned InsertAt = 0;
  std::string Indent;
  std::string Shape; ///< for prepare(): "5-point", "7x7 (loops)"
  // For the register window (rows): the indices, the guard and what
  // surrounds it.
  const clang::VarDecl *X = nullptr, *Y = nullptr;
  const clang::IfStmt *Guard = nullptr;
  bool EarlyReturn = false; ///< `if (<outside>) return;` and the rest
  std::vector<const clang::Stmt *> Before; ///< the statements before the guard
  std::vector<const clang::Stmt *> Inner;  ///< the guarded statements
  /// The loops whose variables the reads' offsets use.
  std::vector<const clang::ForStmt *> OffsetLoops;
  /// Row pointers into the staged array read only where it is staged: the
  /// rewrite removes them.
  std::vector<const clang::DeclStmt *> DeadAliases;
  /// The template parameters the window loops' ranges were read with
  /// (templateLoopRanges); the rewrites assert their values.
  std::vector<TemplatePin> Pins;
};

/// \p Pattern with every '$' replaced by \p Coord.
std::string fillIn(llvm::StringRef Pattern, llvm::StringRef Coord);
/// `Name`, `Name + 2`, `Name - 1`.
std::string plusConst(llvm::StringRef Name, int64_t C);
/// An offset rendered with \p Add added: "ky - 3", "1", "0".
std::string offsetText(const Offset &O, int64_t Add);

// The reads of a stencil, as analyzeStencil follows them
// (SharedTilingRows.cpp).

/// The parameter array \p AS reads, directly or through a row pointer.
const clang::ParmVarDecl *readArray(const clang::ArraySubscriptExpr *AS,
                                    llvm::ArrayRef<PointerAlias> Aliases);
/// The thread coordinates \p AS's element depends on (a row pointer's
/// offsets included; an index helper's call, `idx(x, y, w)`, depending on
/// those of its arguments).
Variance readVariance(const clang::ArraySubscriptExpr *AS,
                      llvm::ArrayRef<PointerAlias> Aliases,
                      const clang::FunctionDecl *FD);
/// Why a read of a pointer parameter in \p Inner was not followed to
/// offsets from the point: its index goes through a call, or depends on
/// template parameters (", ..." to append), or empty.
std::string unfollowedIndex(const EditContext &Ctx,
                            llvm::ArrayRef<const clang::Stmt *> Inner,
                            const clang::FunctionDecl *FD);
/// The loops around \p Reads in the kernel template's pattern \p Kernel
/// whose bounds depend on template parameters (`for (int dx = -R; dx <= R;
/// ++dx)` in a `template <int R>` kernel), read per instantiation
/// (SharedTilingMicro.cpp): each counts up over one constant range in every
/// instantiation, into \p LoopVars, and its bounds use only integer template
/// parameters of the kernel, each with one value in every instantiation,
/// into \p Pins (the rewrite assumes those values and asserts them). Why
/// not (the loop's shape, a bound through a type or a member, a template
/// never instantiated, a range not constant, two values), or empty.
std::string templateLoopRanges(
    const EditContext &Ctx, const clang::FunctionDecl *Kernel,
    llvm::ArrayRef<const clang::ArraySubscriptExpr *> Reads,
    std::map<const clang::ValueDecl *, std::pair<int64_t, int64_t>> &LoopVars,
    std::vector<TemplatePin> &Pins);
/// Where a loop around \p AS has no range in \p LoopVars (`for (dy = -r;
/// dy <= r; ++dy)` with r a parameter), the note saying so (" (...)" to
/// append); else empty.
std::string unknownLoopAround(
    const EditContext &Ctx, const clang::Stmt *AS,
    const std::map<const clang::ValueDecl *, std::pair<int64_t, int64_t>>
        &LoopVars);
/// " with R = 3 (k<3>), the value ..." for the stencil's shape; empty
/// without pins.
std::string pinsNote(llvm::ArrayRef<TemplatePin> Pins);
/// A `static_assert(R == 3, "...")` per pin at the top of the kernel's
/// body: an instantiation with another value (added later, elsewhere)
/// stops the build instead of reading outside the staged halo.
llvm::Error addPinAsserts(const EditContext &Ctx, const Edit &E,
                          const StencilPlan &P,
                          clang::tooling::Replacements &R);

// The register window of rows (SharedTilingRows.cpp), its loads and its
// interior form (SharedTilingWindow.cpp).

/// The names a rows rewrite adds, fresh in the kernel.
struct RowNames {
  std::string YBase, Win, R, C, Gy, Gx, Need, F, Yr, Run;
  std::string XBase, Cx; ///< with cols: the first column, a column's loop
};

/// The columns of a streamed rows rewrite with cols (SharedTilingCols.cpp):
/// each thread computes Cols adjacent columns of its rows, and where every
/// bound holds it loads each window row as whole vectors.
struct ColsForm {
  int64_t Cols = 1;
  int64_t Lo = 0;    ///< the first window column, from the thread's first
  int64_t Width = 0; ///< window columns (a multiple of the vector's)
  std::string Loads; ///< the vector loads of window row r into win[]
  std::string Cond;  ///< their condition: in range, aligned
  std::string XT, XInit;
  const clang::DeclStmt *XDecl = nullptr;
  /// The interior form's store of row RowNames::F as one vector of the
  /// thread's columns (planVectorStore), which Cond then also asks for;
  /// empty: each column stores its own element.
  std::string Store;
};

/// When the guarded code after the row loop (\p Post) is the one store
/// `out[y * pitch + x] = v;` of a row's own variable v (one of \p PerRow),
/// with the pitch of the window's vectors, the store of a row's Cols
/// columns as one vector (`*reinterpret_cast<float4 *>(&out[y * pitch +
/// xBase]) = make_float4(v[f][0], ...)`), and its condition (`out`
/// aligned) added to CF.Cond. Otherwise CF is left as it is.
void planVectorStore(const EditContext &Ctx, const StencilPlan &P, ColsForm &CF,
                     const RowNames &N,
                     llvm::ArrayRef<const clang::Stmt *> Post,
                     llvm::ArrayRef<const clang::VarDecl *> PerRow);

/// The loads of one window row: which of the thread's rows need the row
/// (once per window row), then each element.
struct WindowLoads {
  std::string PerRow, PerElement;
};

/// The window's loads: an element is loaded when one of the thread's rows
/// that passes the guard reads it and the read's own bounds admit it. With
/// \p Interior, for threads where interiorCondition() holds, the bounds
/// are left out (what remains is constant once the loops are unrolled).
/// \p Elem is the element the loads write (`win[r][c]`, `win[c]`); \p Fresh
/// names a new variable.
WindowLoads windowLoads(const StencilPlan &P, const RowNames &N, int64_t Rows,
                        llvm::StringRef YT, llvm::StringRef XT,
                        llvm::StringRef Elem, bool Interior,
                        llvm::function_ref<std::string(llvm::StringRef)> Fresh);
/// A condition on the thread's first row \p YBase and column \p X under
/// which every bound the guard and the reads' own `if`s test holds for each
/// of the thread's \p Rows rows, each offset loop's every value and each
/// read: each bound tested at the coordinate where it is tightest (a lower
/// bound at the least row or column the thread reads, an upper one at the
/// greatest). Empty when no bound is tested.
/// With \p Cols, \p X is the first of the thread's Cols columns.
std::string interiorCondition(const StencilPlan &P, llvm::StringRef YBase,
                              llvm::StringRef X, int64_t Rows,
                              int64_t Cols = 1);
/// The edits that write, for threads where interiorCondition() holds, what
/// the bounds tests evaluate to there: each read's own `if` goes (its
/// statement stays), as does each `if (...) continue;` before it, where the
/// text allows, else their conditions are written `true` and `false`; and,
/// with \p Guard, the kernel's guard (`true`; `false` for `if (...)
/// return;`).
std::vector<TextEdit> interiorEdits(const EditContext &Ctx,
                                    const StencilPlan &P, bool Guard);
/// Whether a reference to the local \p V under \p Root inside [\p Begin,
/// \p End) is left by those of \p Edits inside the region (as
/// spliceText() applies them); true for one in a macro expansion.
bool refSurvives(const EditContext &Ctx, const clang::Stmt *Root,
                 const clang::VarDecl *V, unsigned Begin, unsigned End,
                 llvm::ArrayRef<TextEdit> Edits);
/// Deletions of the declarations in [\p Begin, \p End) that \p Edits
/// leave idle: every reference to each of their locals inside text an edit
/// replaces (the interior form's tests, the reads), their initializers free
/// of side effects (then, in turn, those only they read). They go before
/// \p Edits, so that they win over edits inside them.
std::vector<TextEdit> idleDeclEdits(const EditContext &Ctx,
                                    const StencilPlan &P, unsigned Begin,
                                    unsigned End,
                                    const std::vector<TextEdit> &Edits);

/// \p Shape is set once the reads are recognized (later refusals are about
/// the launches or the tile's size).
llvm::Expected<StencilPlan> analyzeStencil(const EditContext &Ctx,
                                           const Edit &E,
                                           std::optional<int64_t> Tile,
                                           bool &Shape);
llvm::Expected<clang::tooling::Replacements>
rewriteStencil(const EditContext &Ctx, const Edit &E, const StencilPlan &P);
/// \p Rows consecutive output rows per thread, the input window in
/// registers (SharedTilingRows.cpp); the launches' grids shrink along y
/// (and, with \p Cols adjacent columns per thread, along x).
llvm::Expected<clang::tooling::Replacements>
rewriteStencilRows(const EditContext &Ctx, const Edit &E, const StencilPlan &P,
                   int64_t Rows, int64_t Cols = 1);
/// The upper bound `h` of a guard's `$ < h` (or `$ <= h - 1`, `$ < h - 1`)
/// on a coordinate, a name; empty when it has none.
std::string upperBoundName(llvm::ArrayRef<BoundCmp> Guard);
/// Each launch's grid divided by \p Rows along y and \p Cols along x
/// (SharedTilingCols.cpp): exact only where its extent along that axis is
/// ceil(bound / block) for the guard's bound (coveringExtent()).
llvm::Error shrinkStencilGrids(const EditContext &Ctx, const Edit &E,
                               const StencilPlan &P, int64_t Rows, int64_t Cols,
                               clang::tooling::Replacements &Repl);
/// Whether cols takes the streamed stencil \p P, and its form: the x
/// index's declaration, the vector loads (names from \p N, \p Fresh);
/// else why not (SharedTilingCols.cpp).
llvm::Expected<ColsForm>
planCols(const EditContext &Ctx, const Edit &E, const StencilPlan &P,
         int64_t Cols, const RowNames &N,
         llvm::function_ref<std::string(llvm::StringRef)> Fresh);
/// Whether rows would stream the input one register row at a time (the
/// guarded code loops over the window's rows) rather than hold the window.
bool streamsRows(const EditContext &Ctx, const StencilPlan &P);

} // namespace sharedtiling
} // namespace optiml

#endif // OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_SHAREDTILINGINTERNAL_H
