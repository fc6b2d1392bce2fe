//===- VectorizeInternal.h - vectorize's parts shared by its files -*- C++
//-*-===//
//
// Private to vectorize: the vector types of element types, the body's
// writes, the 1D map's plan and its vector path (Vectorize.cpp), the form
// that keeps the blocks (VectorizeKeepBlocks.cpp), the walk over a map's
// body and the 2D map along matrix rows (VectorizeRows.cpp);
// vectorize-stencil's index arithmetic and launch reading
// (VectorizeStencilInput.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_VECTORIZEINTERNAL_H
#define OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_VECTORIZEINTERNAL_H

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "optiml/Edit/Transform.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Type.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace clang {
class ASTContext;
class CUDAKernelCallExpr;
class Expr;
class FieldDecl;
class FunctionDecl;
class IfStmt;
class ParmVarDecl;
class Stmt;
class ValueDecl;
class VarDecl;
} // namespace clang

namespace optiml {

/// A scalar type with CUDA vector types: `<Prefix>2`, `<Prefix>4`, or for
/// __half only `__half2`.
struct VectorForm {
  std::string Prefix; ///< "float", "uchar", "__half"
  int64_t Bytes = 0;  ///< of one element
  int64_t MaxWidth = 4;
  std::string type(int64_t W) const { return Prefix + std::to_string(W); }
};

/// The vector form of element type \p T, if it has one here.
std::optional<VectorForm> vectorForm(clang::QualType T,
                                     const clang::ASTContext &AST);

/// A row pointer of a 2D map: `T *p = matrix + r * stride;`; in a flat
/// 2D map, the matrix parameter itself.
struct RowPointer {
  const clang::ParmVarDecl *Matrix = nullptr;
  VectorForm Form;
  bool Read = false, Written = false;
  bool OnlyPlainWrites = true;
  /// Flat 2D map: the thread's element as an access writes it, with no
  /// local but the indices (`y * cols + x`, `idx(x, y, cols)`).
  std::string Base = "";
};

/// A use in a 2D map's body: p[c] (Ptr set) or another use of c; Inner:
/// a use of c inside a flat access's index (rewritten only where the
/// access is kept).
struct RowUse {
  unsigned Offset, Length;
  const clang::VarDecl *Ptr;
  bool Inner = false;
};

/// The 2D map along matrix rows (see the file comment).
struct RowMap {
  const clang::VarDecl *Col = nullptr, *Row = nullptr;
  const clang::Expr *ColBound = nullptr, *RowBound = nullptr;
  const clang::Expr *Stride = nullptr; ///< every row pointer's row length
  /// Accesses p[y * cols + x] at a flat index instead of row pointers.
  bool Flat = false;
  const clang::IfStmt *Guard = nullptr;
  llvm::MapVector<const clang::VarDecl *, RowPointer> Ptrs;
  std::vector<const clang::Stmt *> Body;
  std::vector<std::vector<RowUse>> Uses; ///< per body statement
  /// Body statements the vector lanes leave out (skipIndexLocals()).
  std::set<size_t> LaneSkips;
  bool NeedsScope = false;
  /// Launch grids: the span to replace and its new text, per width.
  struct Grid {
    SourceSpan Span;
    std::string Before, After; ///< around the divided x dimension
    std::string X;
  };
  std::vector<Grid> Grids;
};

/// The walk over a map's body that both forms of vectorize make (MapWalker
/// in Vectorize.cpp, RowWalker in VectorizeRows.cpp): every element access
/// goes to `Derived::access(A, Read, Write, Plain)` (Plain: the whole
/// statement is `p[e] = v`, TopLevelAssign being set by the caller before
/// each statement), and the walk goes on into the stored value; `*p` and
/// `&x` go to `Derived::pointerUse(U)`. Each returns whether to go on.
template <class Derived>
struct AccessWalker : clang::RecursiveASTVisitor<Derived> {
  using Base = clang::RecursiveASTVisitor<Derived>;
  bool TopLevelAssign = false;

  bool TraverseBinaryOperator(clang::BinaryOperator *B) {
    bool Top = TopLevelAssign;
    TopLevelAssign = false;
    if (B->isAssignmentOp())
      if (auto *A = llvm::dyn_cast<clang::ArraySubscriptExpr>(
              B->getLHS()->IgnoreParens()))
        return self().access(A, B->getOpcode() != clang::BO_Assign, true,
                             Top && B->getOpcode() == clang::BO_Assign) &&
               self().TraverseStmt(B->getRHS());
    return Base::TraverseBinaryOperator(B);
  }
  bool TraverseCompoundAssignOperator(clang::CompoundAssignOperator *B) {
    return TraverseBinaryOperator(B);
  }
  // Elements of class type (__half) are assigned through operators.
  bool TraverseCXXOperatorCallExpr(clang::CXXOperatorCallExpr *C) {
    bool Top = TopLevelAssign;
    TopLevelAssign = false;
    clang::OverloadedOperatorKind Op = C->getOperator();
    if (C->getNumArgs() > 0)
      if (auto *A = llvm::dyn_cast<clang::ArraySubscriptExpr>(
              C->getArg(0)->IgnoreParens())) {
        if (C->isAssignmentOp())
          return self().access(A, Op != clang::OO_Equal, true,
                               Top && Op == clang::OO_Equal) &&
                 self().TraverseStmt(C->getArg(1));
        if (Op == clang::OO_PlusPlus || Op == clang::OO_MinusMinus)
          return self().access(A, true, true, false);
      }
    return Base::TraverseCXXOperatorCallExpr(C);
  }
  bool TraverseUnaryOperator(clang::UnaryOperator *U) {
    if (U->isIncrementDecrementOp())
      if (auto *A = llvm::dyn_cast<clang::ArraySubscriptExpr>(
              U->getSubExpr()->IgnoreParens()))
        return self().access(A, true, true, false);
    if (U->getOpcode() == clang::UO_Deref || U->getOpcode() == clang::UO_AddrOf)
      return self().pointerUse(U);
    return Base::TraverseUnaryOperator(U);
  }
  bool TraverseArraySubscriptExpr(clang::ArraySubscriptExpr *A) {
    return self().access(A, true, false, false);
  }

private:
  Derived &self() { return static_cast<Derived &>(*this); }
};

/// An array a 1D map's body accesses at the thread's own element.
struct ArrayUse {
  /// The pointer parameter, or the struct parameter (passed by value) whose
  /// pointer member Field is.
  const clang::ParmVarDecl *Param = nullptr;
  const clang::FieldDecl *Field = nullptr;
  clang::QualType Pointer; ///< the pointer's type
  std::string Text;        ///< as the kernel names it: "x", "p.x"
  VectorForm Form;
  bool Read = false, Written = false;
  bool OnlyPlainWrites = true; ///< every write is a top-level `p[i] = ...;`
  bool Dependent = false; ///< the element type depends on template parameters
};

/// An array by its parameter's index and its member's (0: the parameter
/// itself, else the field index + 1).
using ArrayKey = std::pair<unsigned, unsigned>;

/// One rewrite inside a body statement: an access p[i] (Array set) or
/// another use of the index.
struct BodyUse {
  unsigned Offset, Length;
  std::optional<ArrayKey> Array; ///< none: a use of the index itself
  bool BlockDim = false; ///< `blockDim.x` (the form that keeps the blocks)
};

/// What vectorize found in a 1D map kernel (or a 2D map along rows).
struct VectorizePlan {
  ResolvedKernel Kernel;
  MapPattern Map;
  std::map<ArrayKey, ArrayUse> Arrays;
  std::vector<std::vector<BodyUse>> Uses; ///< per body statement
  std::vector<GridExpr> Grids;
  /// Grids that are a local dim3 variable: the launch's span and its text.
  std::vector<std::pair<SourceSpan, std::string>> GridVars;
  bool NeedsScope = false; ///< the body declares locals
  /// Arrays read at another index than the element's (`bias[i % cols]`):
  /// each lane's copy of the body reads them as written, with its index.
  std::set<ArrayKey> LaneReads;
  /// Dependent element types: `std::is_same<T, float>::value`, one per
  /// written type, and the instantiations that take the vector path.
  std::vector<std::string> TypeGuards;
  std::vector<const clang::FunctionDecl *> VectorInstantiations;
  std::optional<RowMap> Rows; ///< a 2D map along matrix rows
  /// The form that keeps the blocks (VectorizeKeepBlocks.cpp): the index's
  /// uses of threadIdx.x and blockDim.x (BlockDim set), the guard's of the
  /// index and blockDim.x, the arrays also read at a per-block index, each
  /// launch's block with its x extent.
  bool KeepBlocks = false;
  std::vector<BodyUse> IndexUses, GuardUses;
  std::set<ArrayKey> BlockReads;
  struct Block {
    const LaunchSite *Launch;
    int64_t X;
  };
  std::vector<Block> Blocks;
};

/// Walks \p Plan's map body (Plan.Map.Body): records each access p[i] in
/// Plan.Arrays and each statement's uses in Plan.Uses; with
/// Plan.KeepBlocks, also reads at a per-block index (keepBlockUniform())
/// and blockDim.x. The reason when an access or use cannot be rewritten.
std::string walkMapBody(const EditContext &Ctx, VectorizePlan &Plan);

/// In a kernel template, the element types of arrays that depend on its
/// parameters, from the file's instantiations (the first whose arrays all
/// have vector types, one without double arrays first): fills each array's
/// form, the plan's `std::is_same` guards and the instantiations the vector
/// path is for. "" when done or nothing depends; the problem otherwise.
std::string resolveDependentTypes(const EditContext &Ctx, VectorizePlan &Plan);

/// A name for each array's vector, new in \p KText and distinct (`p.x` and
/// `q.x`).
std::map<ArrayKey, std::string> vectorNames(const VectorizePlan &Plan,
                                            llvm::StringRef KText);

/// The vector path for one vector per array: its load (a declaration when
/// the array is only written whole), the body's lane copies on .x .y .z .w,
/// its store. \p At gives the pointer and the subscript of an array's
/// vector, \p IndexAt the element of lane K; `blockDim.x` in the body of the
/// form that keeps the blocks reads the original block.
std::string vectorBody(
    const EditContext &Ctx, const VectorizePlan &Plan, int64_t W,
    const std::map<ArrayKey, std::string> &VecName, llvm::StringRef In,
    llvm::function_ref<std::pair<std::string, std::string>(const ArrayUse &)>
        At,
    llvm::function_ref<std::string(int64_t)> IndexAt);

/// Whether \p Idx, an array index in the form that keeps the blocks, is the
/// same for every thread of a block: made of parameters, constants,
/// blockIdx and gridDim only (no \p Index, threadIdx, blockDim, local,
/// call, access or assignment).
bool keepBlockUniform(const EditContext &Ctx, const clang::Expr *Idx,
                      const clang::ValueDecl *Index);

/// The form that keeps the blocks (VectorizeKeepBlocks.cpp's comment):
/// its plan, or the reason. \p Shaped: the kernel has the form's shape and
/// reads its block, so that the reason given is this form's.
llvm::Expected<VectorizePlan> analyzeKeepBlocks(const EditContext &Ctx,
                                                const Edit &E, bool &Shaped);
/// The widths the form that keeps the blocks suggests for \p Plan: those
/// dividing every launch's block into at least 32 threads.
std::vector<int64_t> keepBlocksWidths(const VectorizePlan &Plan);
/// The rewrite of the form that keeps the blocks for width \p W.
llvm::Expected<clang::tooling::Replacements>
applyKeepBlocks(const EditContext &Ctx, const Edit &E,
                const VectorizePlan &Plan, int64_t W);

/// Matches the 2D map along matrix rows in \p K (VectorizeRows.cpp's
/// comment): the indices, the guard, the row pointers. \p Shape stays false
/// until a row pointer is found, or without one an access at an index of
/// both x and y (M.Flat); the kernel is then read as such a map. With it
/// set, an empty result means matched, else the reason.
std::string matchRowMap(const EditContext &Ctx, const clang::FunctionDecl *K,
                        RowMap &M, bool &Shape);
/// The body of a matched \p M can run for W columns one after another and
/// its accesses are all p[c] (records them); else the reason.
std::string rowBodyProblem(const EditContext &Ctx, RowMap &M);
/// Each launch's grid with its x dimension to divide; else the reason.
std::string rowGrids(const EditContext &Ctx, const KernelInfo &KI, RowMap &M);
/// The text replacing \p M's body for width \p W; fresh names are new in
/// \p KText.
std::string rowMapText(const EditContext &Ctx, const RowMap &M, int64_t W,
                       llvm::StringRef KText);
/// Why vectorize applies to the matched \p M, whose arrays are \p Arrays.
std::string rowMapReason(const EditContext &Ctx, const RowMap &M,
                         llvm::StringRef Arrays);
/// A variable \p Body writes but does not declare (a parameter, a local
/// before the index) other than \p Index: a thread running the body for
/// several elements would see its own earlier writes. The reason, or "".
std::string outsideWriteProblem(const EditContext &Ctx,
                                llvm::ArrayRef<const clang::Stmt *> Body,
                                const clang::ValueDecl *Index);

namespace vectorizestencil {

// vectorize-stencil's index arithmetic (VectorizeStencilInput.cpp).

/// Locals whose value depends on \p X (through initializers), \p X
/// included.
llvm::DenseSet<const clang::ValueDecl *>
dependents(const clang::VarDecl *X, llvm::ArrayRef<const clang::Stmt *> Decls);
/// Whether \p S names one of \p D.
bool mentionsAny(const clang::Stmt *S,
                 const llvm::DenseSet<const clang::ValueDecl *> &D);
/// How much \p E grows when x grows by one (locals followed to their
/// initializers, index helpers to what they return), or nothing when that
/// is not a constant; \p Dep are the locals that depend on x.
std::optional<int64_t>
xSlope(const clang::Expr *E, const clang::VarDecl *X,
       const llvm::DenseSet<const clang::ValueDecl *> &Dep,
       const clang::ASTContext &AST, unsigned Depth = 0);
/// \p E as a sum: its integer constants added into \p Lit, the other terms
/// (with their signs) appended to \p Terms. False when a term has no text.
/// An index helper's call is one term, the constant of its one argument
/// that depends on x moved out: `idx(x - 1, y, w)` is `idx(x, y, w) - 1`
/// when idx grows by one with that parameter.
bool sumTerms(const EditContext &Ctx, const clang::Expr *E, int Sign,
              int64_t &Lit, std::vector<std::pair<int, std::string>> &Terms,
              const llvm::DenseSet<const clang::ValueDecl *> &Dep);

/// The value and the text at the launch \p Call of the kernel template's
/// non-type parameter \p B names (`Dim` of `jacobi<N>`): the argument as
/// the launch writes it, else its value. Nothing when \p B is not one.
std::optional<std::pair<int64_t, std::string>>
templateArgAtLaunch(const EditContext &Ctx, const clang::Expr *B,
                    const clang::CUDAKernelCallExpr *Call);
/// \p L's grid along x when it is a constant equal to ceil(\p N /
/// \p Block) for the bound's constant value \p N (`N / 16` with N a
/// multiple of 16): then, as with sharedtiling::coveringExtent, the grid
/// covers exactly the points below the bound. Null otherwise (a grid that
/// depends on a runtime value included); \p Var as coveringExtent sets it.
const clang::Expr *constantCoveringExtent(const EditContext &Ctx,
                                          const LaunchSite &L, int64_t Block,
                                          std::optional<int64_t> N,
                                          const clang::VarDecl *&Var);

} // namespace vectorizestencil

} // namespace optiml

#endif
