//===- BlockScanInternal.h - block-scan's recognizers -----------*- C++ -*-===//
//
// Private to the block-scan transform: the recognizers and the text that
// need no plan (BlockScanInput.cpp), used by the plan, the symbolic run of
// a step and the rewrite (BlockScan.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_BLOCKSCANINTERNAL_H
#define OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_BLOCKSCANINTERNAL_H

#include "../../CatalogInternal.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/Type.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace optiml {
namespace block_scan {

/// A test of an expression (the thread index, the block size).
using ExprTest = std::function<bool(const clang::Expr *)>;

/// \p S is a call of `__syncthreads()` (or another block barrier).
bool isBarrierStmt(const clang::Stmt *S);
/// The element types the shuffles move.
bool shuffleType(clang::QualType T);
/// `off <<= 1`, `off *= 2`, `off += off`, `off = off * 2`, `off = 2 * off`,
/// `off = off << 1`, `off = off + off`.
bool doubles(const clang::Expr *Inc, const clang::VarDecl *Off,
             const clang::ASTContext &AST);
/// The loop's steps are apart: its body starts with a barrier, or ends
/// with one followed at most by statements that only change locals (the
/// swap of two pointers).
bool stepsApart(const clang::CompoundStmt *Body);
/// The loop's constant bound \p Bound; where it is a template parameter,
/// the least value the instantiations give it.
std::optional<int64_t> loopBound(const EditContext &Ctx,
                                 const clang::FunctionDecl *Kernel,
                                 const clang::Expr *Bound);
/// \p E is blockDim.x, or a local never written (\p Written) after its
/// initializer blockDim.x.
bool isBlockDimX(const clang::Expr *E,
                 const llvm::DenseSet<const clang::ValueDecl *> &Written);

/// The terms of an index, each with whether it is subtracted.
using IndexTerms = llvm::SmallVector<std::pair<const clang::Expr *, bool>, 2>;
/// For an index into one array split in two halves of `len` elements,
/// `h * len + i` (the product in either order, the terms of `i` anywhere
/// in the sum; \p IsLen says what is `len`): `h`, with the terms of `i`
/// in \p Rest. Null when no term or two terms are a product with `len`.
const clang::Expr *splitHalfIndex(const clang::Expr *Index,
                                  const ExprTest &IsLen, IndexTerms &Rest);

/// Which side of `tid >= off` (or a spelling of it) \p E says a thread
/// is on, for one \p InRange (at or past the offset) or the other.
std::optional<bool> offsetTest(const clang::Expr *E, const ExprTest &IsTid,
                               const clang::VarDecl *Off,
                               const clang::ASTContext &AST, bool InRange);
/// The store's index as `h * len + tid`, two halves of one array, `len`
/// the block size (\p IsLen) or a constant (then in \p Len, and every
/// launch must use it): h, or null when the index is not of that form.
const clang::Expr *storeHalf(const clang::Expr *Index, const ExprTest &IsLen,
                             const ExprTest &IsTid,
                             const clang::ASTContext &AST,
                             std::optional<int64_t> &Len);
/// Double buffering through an index: the loop changes one integer local
/// that picks the current buffer (`cur`), or two it flips together (`pout`
/// and `pin`); each starts at 0 or 1 and keeps that value until the loop,
/// and the store (its buffer index \p FirstIndex) writes the buffer the one
/// it names picks. Fills \p Cur, \p Peer and \p PeerStart (whether the
/// peer starts at the other buffer), or returns why not.
std::string bufferChoice(const EditContext &Ctx, const clang::ForStmt *Loop,
                         const clang::Stmt *Store,
                         llvm::ArrayRef<const clang::VarDecl *> Changed,
                         const clang::Expr *FirstIndex,
                         llvm::ArrayRef<const clang::Stmt *> BeforeLoop,
                         const clang::VarDecl *&Cur,
                         const clang::VarDecl *&Peer, int &PeerStart);
/// A statement before the scan's store leaves the scanned \p Arrays
/// alone: it neither names them nor declares a pointer into them (reads
/// and writes through such an alias are not followed), but for the
/// pointers the loop swaps (\p Swapped). Why not, or "".
std::string beforeStoreWhy(const EditContext &Ctx, const clang::Stmt *S,
                           llvm::ArrayRef<const clang::VarDecl *> Arrays,
                           llvm::ArrayRef<const clang::VarDecl *> Swapped);

/// The rewritten scan, to replace the code from the store to the loop's
/// end at \p RegionBegin: \p Value scanned in registers and stored into
/// \p Dest, then one barrier.
std::string scanText(const EditContext &Ctx, unsigned RegionBegin,
                     llvm::StringRef ElemType, llvm::StringRef Value,
                     llvm::StringRef Dest);

/// What to delete so that \p V, a local of \p Body that only the code the
/// rewrite removes names (the ranges \p Removed: the replaced region
/// first, then declarators already dropped; but for \p Kept, which the
/// region keeps), is no longer declared: its declarator and the comma
/// joining it to another (`, pin = 1` of `int pout = 0, pin = 1;`), or its
/// whole declaration (with its line when alone on it). Nothing when \p V
/// is named elsewhere, is declared inside the region, or a macro writes
/// its declaration.
std::optional<std::pair<unsigned, unsigned>>
unusedDeclaration(const EditContext &Ctx, const clang::Stmt *Body,
                  const clang::VarDecl *V,
                  llvm::ArrayRef<std::pair<unsigned, unsigned>> Removed,
                  const clang::Stmt *Kept);

/// What block-scan's `items` needs of its plan (BlockScanItems.cpp).
struct ItemsInput {
  const clang::FunctionDecl *Kernel = nullptr;
  const KernelInfo *Info = nullptr;
  /// The kernel's top-level statements before the store, and after the
  /// loop.
  std::vector<const clang::Stmt *> Before, After;
  const clang::BinaryOperator *Store = nullptr;
  std::string ElemType;
};
/// Why \p Items elements a thread cannot be given to this scan, or "".
std::string itemsProblem(const EditContext &Ctx, const ItemsInput &In,
                         int64_t Items);
/// The kernel's body with each thread doing the work of \p Items of the
/// original threads (stage, scan, the code after it), every launch's block
/// divided by \p Items.
llvm::Expected<clang::tooling::Replacements>
itemsRewrite(const EditContext &Ctx, const Edit &E, const ItemsInput &In,
             int64_t Items);

} // namespace block_scan
} // namespace optiml

#endif // OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_BLOCKSCANINTERNAL_H
