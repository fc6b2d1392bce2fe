//===- SharedTiling.cpp - Matmul-like kernels through shared tiles --------===//
//
// Pattern: the classic one-thread-per-output matrix product
//   row = blockIdx.y * blockDim.y + threadIdx.y;
//   col = blockIdx.x * blockDim.x + threadIdx.x;
//   if (row < M && col < N) {          // or: if (row >= M || col >= N) return;
//     acc = <uniform init>;
//     for (k = 0; k < K; ++k)
//       acc += A[f(row, k)] * B[g(k, col)];
//     <statements that use acc>        // the store: C[...] = acc, alpha * acc
//   }
// where f depends on row, k and block-uniform values only, g on k, col and
// block-uniform values only.
//
// Rewrite: the standard TILE x TILE tiled product. Every thread of a block
// loads one element of an A tile (its row, column kTile + threadIdx.x) and
// one of a B tile (row kTile + threadIdx.y, its column), zero-filled outside
// the matrices; a barrier; the inner product over the tile; a barrier before
// the next tile overwrites it. The bounds guard moves to the loads and the
// store, so every thread reaches every barrier.
//
// Why it is exact: the thread (ty, kk) of a block has the same row as any
// thread (ty, tx), so As[ty][kk] = A[f(row, kTile + kk)]; likewise
// Bs[kk][tx] = B[g(kTile + kk, col)]. Per output the products are added in
// the same order (k ascending); the zero-filled tail adds +0.0f, which leaves
// any sum unchanged. Requires blockDim == (TILE, TILE, 1): every launch in
// the file must provably use that block.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "SharedStaging.h"
#include "SharedTilingInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Support/TextTemplate.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <array>
#include <functional>
#include <map>

using namespace clang;
using namespace llvm;

namespace optiml {
namespace sharedtiling {

/// The constant (x, y, z) of a launch's block argument: an integer, a
/// `dim3(...)` of constants, or a local variable (never written after its
/// initialization) holding one.
std::optional<Dim3> constDim3(const EditContext &Ctx, const Expr *A,
                              unsigned Depth) {
  if (!A || Depth > 4)
    return std::nullopt;
  while (true) {
    A = A->IgnoreParenImpCasts();
    if (const auto *M = dyn_cast<MaterializeTemporaryExpr>(A))
      A = M->getSubExpr();
    else if (const auto *B = dyn_cast<CXXBindTemporaryExpr>(A))
      A = B->getSubExpr();
    else if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(A))
      A = FC->getSubExpr();
    else
      break;
  }
  if (const auto *VD = dyn_cast_or_null<VarDecl>(referencedDecl(A))) {
    if (auto V = intValue(A, Ctx.AST))
      return Dim3{*V, 1, 1};
    const auto *Fn = dyn_cast<FunctionDecl>(VD->getDeclContext());
    if (!VD->isLocalVarDecl() || !VD->hasInit() || !Fn || !Fn->getBody() ||
        writtenVars(Fn->getBody()).contains(VD))
      return std::nullopt;
    return constDim3(Ctx, VD->getInit(), Depth + 1);
  }
  if (A->getType()->isIntegerType()) {
    if (auto V = intValue(A, Ctx.AST))
      return Dim3{*V, 1, 1};
    return std::nullopt;
  }
  const auto *CE = dyn_cast<CXXConstructExpr>(A);
  if (!CE || CE->getNumArgs() == 0 || CE->getNumArgs() > 3)
    return std::nullopt;
  // A copy: `dim3 b = block;`.
  if (CE->getNumArgs() == 1 && CE->getArg(0)->getType()->isRecordType())
    return constDim3(Ctx, CE->getArg(0), Depth + 1);
  Dim3 D{1, 1, 1};
  for (unsigned I = 0; I < CE->getNumArgs(); ++I) {
    const Expr *Arg = CE->getArg(I);
    if (isa<CXXDefaultArgExpr>(Arg))
      continue;
    auto V = intValue(Arg->IgnoreParenImpCasts(), Ctx.AST);
    if (!V) {
      // `int tile = 16; dim3 block(tile, tile);`
      const auto *VD = dyn_cast_or_null<VarDecl>(referencedDecl(Arg));
      const auto *Fn =
          VD ? dyn_cast<FunctionDecl>(VD->getDeclContext()) : nullptr;
      if (!VD || !VD->isLocalVarDecl() || !VD->hasInit() || !Fn ||
          !Fn->getBody() || writtenVars(Fn->getBody()).contains(VD))
        return std::nullopt;
      V = intValue(VD->getInit(), Ctx.AST);
      if (!V)
        return std::nullopt;
    }
    D[I] = *V;
  }
  return D;
}

std::string dimText(const Dim3 &D) {
  return std::to_string(D[0]) + "x" + std::to_string(D[1]) + "x" +
         std::to_string(D[2]);
}

/// `V < Bound` or `Bound > V` (Less) / `V >= Bound` or `Bound <= V`
/// (!Less): the bound.
const Expr *boundOf(const Expr *C, const VarDecl *V, bool Less) {
  const auto *B = dyn_cast<BinaryOperator>(C->IgnoreParenImpCasts());
  if (!B)
    return nullptr;
  BinaryOperatorKind Op = B->getOpcode();
  if (refersTo(B->getLHS(), V) && Op == (Less ? BO_LT : BO_GE))
    return B->getRHS();
  if (refersTo(B->getRHS(), V) && Op == (Less ? BO_GT : BO_LE))
    return B->getLHS();
  return nullptr;
}

/// `for (int k = 0; k < K; ++k)` (or `k += 1`): k, with \p Bound = K.
const VarDecl *countingLoop(const ForStmt *L, const ASTContext &AST,
                            const Expr *&Bound) {
  const auto *InitDS = dyn_cast_or_null<DeclStmt>(L->getInit());
  const VarDecl *K = InitDS && InitDS->isSingleDecl()
                         ? dyn_cast<VarDecl>(InitDS->getSingleDecl())
                         : nullptr;
  if (!K || !K->hasInit() || !K->getType()->isIntegerType() ||
      intValue(K->getInit(), AST) != 0)
    return nullptr;
  Bound = L->getCond() ? boundOf(L->getCond(), K, /*Less=*/true) : nullptr;
  bool Step1 = false;
  if (const Expr *Inc =
          L->getInc() ? L->getInc()->IgnoreParenImpCasts() : nullptr) {
    if (const auto *U = dyn_cast<UnaryOperator>(Inc))
      Step1 = U->isIncrementOp() && refersTo(U->getSubExpr(), K);
    else if (const auto *CA = dyn_cast<CompoundAssignOperator>(Inc))
      Step1 = CA->getOpcode() == BO_AddAssign && refersTo(CA->getLHS(), K) &&
              intValue(CA->getRHS(), AST) == 1;
  }
  return Bound && Step1 ? K : nullptr;
}

/// Reads, calls, assignments or increments inside an index expression.
bool hasLoadOrEffect(const Stmt *S) {
  if (!S)
    return false;
  if (isa<ArraySubscriptExpr, CallExpr, MemberExpr, CXXMemberCallExpr>(S))
    return true;
  if (const auto *U = dyn_cast<UnaryOperator>(S))
    if (U->getOpcode() == UO_Deref || U->isIncrementDecrementOp() ||
        U->getOpcode() == UO_AddrOf)
      return true;
  if (const auto *B = dyn_cast<BinaryOperator>(S))
    if (B->isAssignmentOp())
      return true;
  for (const Stmt *C : S->children())
    if (hasLoadOrEffect(C))
      return true;
  return false;
}

/// Every variable \p S names other than \p Allowed is the same for every
/// thread of a block; else the first one that is not.
std::string nonUniformRef(const Stmt *S, ArrayRef<const ValueDecl *> Allowed,
                          const FunctionDecl *Kernel) {
  if (!S)
    return "";
  if (const auto *DR = dyn_cast<DeclRefExpr>(S))
    if (!is_contained(Allowed, DR->getDecl()) &&
        !threadVariance(DR, Kernel).uniform())
      return DR->getDecl()->getNameAsString();
  for (const Stmt *C : S->children())
    if (std::string N = nonUniformRef(C, Allowed, Kernel); !N.empty())
      return N;
  return "";
}

std::string zeroOf(QualType T, StringRef Name) {
  if (const auto *B = T->getAs<BuiltinType>()) {
    if (B->getKind() == BuiltinType::Float)
      return "0.0f";
    if (B->getKind() == BuiltinType::Double)
      return "0.0";
  }
  return Name.str() + "(0)";
}

namespace {

struct MatmulPlan {
  ResolvedKernel Kernel;
  const VarDecl *Row = nullptr, *Col = nullptr, *K = nullptr;
  std::string RowBound, ColBound, KBound; ///< texts, parenthesized
  std::string StoreGuard;                 ///< `row < M && col < N`
  const DeclStmt *AccDecl = nullptr;
  const ForStmt *Loop = nullptr;
  Operand A, B;
  std::vector<const Stmt *> Post;
  unsigned RegionBegin = 0, RegionEnd = 0;
  std::string Indent;
  Dim3 Block{0, 0, 0}; ///< the block every launch uses
};

class SharedTilingTransform : public Transform {
public:
  StringRef kind() const override { return "shared-tiling"; }
  StringRef description() const override {
    return "stage the A and B tiles of a matmul-like kernel (TILE x TILE "
           "blocks, zero-filled edges), or a 2D stencil's input tile with its "
           "halo, in shared memory; with rows, several outputs per thread "
           "reusing what they load";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec::integer(
                "tile",
                "the tile edge: 8, 16 or 32 (every launch's block must be "
                "dim3(tile, tile))",
                8, 32),
            ParamSpec::integer(
                "micro",
                "outputs per thread along each axis of a matmul: 1, or 8 "
                "(an 8 x 8 register tile per thread, 128 x 128 outputs per "
                "16 x 16 block, K in double-buffered steps of 8; tile 16; "
                "default 1)",
                1, 8),
            ParamSpec::integer(
                "rows",
                "output rows per thread: in a block-sized product (row = "
                "threadIdx.y, one TILE x TILE output per block, as in "
                "batched small GEMMs) the launches' blocks become TILE x "
                "(TILE / rows); in a 2D stencil each thread computes rows "
                "consecutive rows from an input window in registers and the "
                "grids shrink along y; 1, 2, 4 or 8 (default 1)",
                1, 8)};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Edit E = defaultEdit(kind(), Target);
    Applicability A;
    if (auto R = plan(Ctx, E, std::nullopt, &A); !R)
      A.Reason = rejectionReason(R.takeError());
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    std::optional<int64_t> Tile = E.getInt("tile");
    if (Tile && *Tile != 8 && *Tile != 16 && *Tile != 32)
      return reject(E, "params",
                    "tile must be 8, 16 or 32 (got " + Twine(*Tile) + ")");
    int64_t Micro = E.getInt("micro").value_or(1);
    if (Micro != 1 && Micro != 8)
      return reject(E, "params",
                    "micro must be 1 or 8 (got " + Twine(Micro) + ")");
    if (Micro == 8 && Tile && *Tile != 16)
      return reject(E, "params",
                    "micro 8 works on 16 x 16 blocks: tile must be 16 (got " +
                        Twine(*Tile) + ")");
    int64_t Rows = E.getInt("rows").value_or(1);
    if (Rows != 1 && Rows != 2 && Rows != 4 && Rows != 8)
      return reject(E, "params",
                    "rows must be 1, 2, 4 or 8 (got " + Twine(Rows) + ")");
    if (Rows != 1 && Micro != 1)
      return reject(E, "params", "rows and micro do not combine");
    return plan(Ctx, E, Tile, nullptr);
  }

private:
  /// \p Shape is set once the matmul shape is recognized.
  Expected<MatmulPlan> analyze(const EditContext &Ctx, const Edit &E,
                               std::optional<int64_t> Tile, bool &Shape) const;
  /// The matmul rewrite, else the stencil rewrite, else why neither
  /// applies: the reason of a shape that was recognized, or both reasons.
  Expected<tooling::Replacements> plan(const EditContext &Ctx, const Edit &E,
                                       std::optional<int64_t> Tile,
                                       Applicability *A) const;
  Expected<tooling::Replacements> rewrite(const EditContext &Ctx, const Edit &E,
                                          const MatmulPlan &P) const;
  /// micro=8: an 8 x 8 register tile per thread.
  Expected<tooling::Replacements> rewriteBlocked(const EditContext &Ctx,
                                                 const Edit &E,
                                                 const MatmulPlan &P) const;
};

Expected<tooling::Replacements>
SharedTilingTransform::plan(const EditContext &Ctx, const Edit &E,
                            std::optional<int64_t> Tile,
                            Applicability *A) const {
  auto K = resolveKernel(Ctx, E, E.Target);
  if (!K)
    return K.takeError();
  bool MatmulShape = false, StencilShape = false;
  auto M = analyze(Ctx, E, Tile, MatmulShape);
  int64_t Micro = E.getInt("micro").value_or(1);
  int64_t Rows = E.getInt("rows").value_or(1);
  if (M && !A && Rows != 1)
    return reject(E, "not-applicable",
                  "kernel '" + E.Target +
                      "': rows applies to block-sized products (row = "
                      "threadIdx.y); this matmul spans the grid (use micro)");
  if (M) {
    if (!A && Micro == 8 && M->Block[0] != 16)
      return reject(E, "not-applicable",
                    "kernel '" + E.Target +
                        "': micro 8 needs 16 x 16 blocks; its launches use " +
                        std::to_string(M->Block[0]) + "x" +
                        std::to_string(M->Block[0]));
    if (!A)
      return Micro == 8 ? rewriteBlocked(Ctx, E, *M) : rewrite(Ctx, E, *M);
    int64_t T = M->Block[0];
    A->Applies = true;
    A->Reason = "matmul-like: '" + M->Kernel.Info->Name + "' accumulates '" +
                exprText(Ctx, M->A.Access) + " * " +
                exprText(Ctx, M->B.Access) + "' over '" +
                M->K->getNameAsString() + "' and its launches use " +
                std::to_string(T) + "x" + std::to_string(T) +
                " blocks: both operands can be staged in " + std::to_string(T) +
                "x" + std::to_string(T) + " shared tiles";
    Edit S = E;
    S.Params["tile"] = T;
    if (T == 16) {
      // The register tile first: on large products it is several times
      // faster than the plain tiles.
      Edit B = S;
      B.Params["micro"] = int64_t(8);
      A->Suggestions.push_back(B);
    }
    A->Suggestions.push_back(S);
    return tooling::Replacements();
  }
  Error MErr = M.takeError();
  if (MatmulShape)
    return std::move(MErr);
  std::string Matmul = rejectionReason(std::move(MErr));
  bool BlockShape = false;
  auto BP = analyzeBlockProduct(Ctx, E, Tile, BlockShape);
  if (BP) {
    if (!A) {
      if (Micro != 1)
        return reject(E, "not-applicable",
                      "kernel '" + E.Target +
                          "': micro applies to matmuls that span the grid; "
                          "this product is block-sized (use rows)");
      return rewriteBlockProduct(Ctx, E, *BP, Rows);
    }
    int64_t T = BP->Tile;
    A->Applies = true;
    A->Reason = "block-sized product: '" + BP->Kernel.Info->Name +
                "' accumulates '" + looseExprText(Ctx, BP->A.Access) + " * " +
                looseExprText(Ctx, BP->B.Access) + "' over '" +
                BP->K->getNameAsString() + "', one " + std::to_string(T) + "x" +
                std::to_string(T) +
                " output per block: both operands can be staged in shared "
                "tiles, several rows per thread";
    Edit S = E;
    S.Params["tile"] = T;
    // The most rows per thread that keeps 128 threads a block first: each
    // B element read from shared memory then serves that many outputs.
    for (int64_t R : {8, 4, 2})
      if (R <= T && T * T / R >= 128) {
        Edit W = S;
        W.Params["rows"] = R;
        A->Suggestions.push_back(W);
        break;
      }
    A->Suggestions.push_back(S);
    return tooling::Replacements();
  }
  Error BErr = BP.takeError();
  if (BlockShape)
    return std::move(BErr);
  std::string Block = rejectionReason(std::move(BErr));
  auto St = analyzeStencil(Ctx, E, Tile, StencilShape);
  if (St && !A && Micro != 1)
    return reject(E, "not-applicable",
                  "kernel '" + E.Target +
                      "': micro applies to products; this kernel is a 2D "
                      "stencil");
  if (St) {
    if (!A)
      return Rows != 1 ? rewriteStencilRows(Ctx, E, *St, Rows)
                       : rewriteStencil(Ctx, E, *St);
    A->Applies = true;
    A->Reason = "2D stencil: " + St->Shape + "; its launches use " +
                std::to_string(St->BX) + "x" + std::to_string(St->BY) +
                " blocks: each block can stage its " +
                std::to_string(St->BY + St->HaloYLo + St->HaloYHi) + "x" +
                std::to_string(St->BX + St->HaloXLo + St->HaloXHi) +
                " tile with the halo in shared memory";
    // Rows first: they remove the repeated loads of a row's neighbours,
    // which shared memory only moves. A window small enough for registers
    // takes 4 rows (jacobi2d on the H200: 1.52x); a loop over the window's
    // rows streams one register row at a time and takes 8 (conv2d with its
    // filter in constant memory: 2.1x, against 1.8x with 4; run
    // 2026-12-03-rows-factored). A large window that cannot stream is not
    // offered (conv2d's 10 x 7 window took 153 registers, 0.30x).
    bool Streams = streamsRows(Ctx, *St);
    int64_t R = Streams ? 8 : 4;
    Edit W = E;
    W.Params["rows"] = R;
    int64_t Window =
        (R + St->HaloYLo + St->HaloYHi) * (1 + St->HaloXLo + St->HaloXHi);
    if (auto RowsEdit = rewriteStencilRows(Ctx, W, *St, R);
        RowsEdit && (Streams || Window <= 32))
      A->Suggestions.push_back(W);
    else if (!RowsEdit)
      consumeError(RowsEdit.takeError());
    A->Suggestions.push_back(E);
    return tooling::Replacements();
  }
  Error SErr = St.takeError();
  if (StencilShape)
    return std::move(SErr);
  std::string Stencil = rejectionReason(std::move(SErr));
  std::string Prefix = "kernel '" + E.Target + "': ";
  StringRef MS(Matmul), BS(Block), SS(Stencil);
  MS.consume_front(Prefix);
  BS.consume_front(Prefix);
  SS.consume_front(Prefix);
  return reject(E, "not-applicable",
                Prefix + "not matmul-like (" + MS +
                    "); not a block-sized product (" + BS +
                    "); not a 2D stencil (" + SS + ")");
}

// Why long: one ordered list of the matmul pattern's preconditions (indices,
// guard, the k loop, both operands' reads, the tile, the launches), each
// refusal naming its reason; they share the partial match as locals.
Expected<MatmulPlan> SharedTilingTransform::analyze(const EditContext &Ctx,
                                                    const Edit &E,
                                                    std::optional<int64_t> Tile,
                                                    bool &ShapeFound) const {
  auto K = resolveKernel(Ctx, E, E.Target);
  if (!K)
    return K.takeError();
  MatmulPlan P;
  P.Kernel = *K;
  const FunctionDecl *FD = K->Decl;
  std::string Name = "kernel '" + E.Target + "'";
  auto NotApplicable = [&](const Twine &Why) {
    return reject(E, "not-applicable", Name + ": " + Why);
  };
  const auto *Body = dyn_cast_or_null<CompoundStmt>(FD->getBody());
  if (!Body)
    return NotApplicable("has no body");
  if (K->Info->InMacro || containsMacro(Body))
    return NotApplicable("its body is written with macros");
  if (!K->Info->Shared.empty())
    return NotApplicable("already uses shared memory");
  if (!K->Info->Syncthreads.empty())
    return NotApplicable("already synchronizes threads");

  // The row and column indices, then the guard.
  SmallVector<const Stmt *, 8> Stmts(Body->body_begin(), Body->body_end());
  size_t At = 0;
  for (; At < Stmts.size(); ++At) {
    const auto *DS = dyn_cast<DeclStmt>(Stmts[At]);
    const VarDecl *VD = DS && DS->isSingleDecl()
                            ? dyn_cast<VarDecl>(DS->getSingleDecl())
                            : nullptr;
    auto Dim = VD && VD->hasInit() && VD->getType()->isIntegerType()
                   ? linearIndexDim(VD->getInit())
                   : std::nullopt;
    if (Dim == 'y' && !P.Row)
      P.Row = VD;
    else if (Dim == 'x' && !P.Col)
      P.Col = VD;
    else
      break;
  }
  if (!P.Row || !P.Col)
    return NotApplicable(
        "the body does not start with a row index 'row = blockIdx.y * "
        "blockDim.y + threadIdx.y' and a column index 'col = blockIdx.x * "
        "blockDim.x + threadIdx.x'");
  DenseSet<const ValueDecl *> Written = writtenVars(Body);
  for (const VarDecl *V : {P.Row, P.Col})
    if (Written.contains(V))
      return NotApplicable("the index '" + V->getName() + "' is written");
  std::string RowN = P.Row->getNameAsString(), ColN = P.Col->getNameAsString();
  std::string Expected = "'if (" + RowN + " < M && " + ColN +
                         " < N)' or 'if (" + RowN + " >= M || " + ColN +
                         " >= N) return;'";
  const auto *If = At < Stmts.size() ? dyn_cast<IfStmt>(Stmts[At]) : nullptr;
  if (!If || If->getElse() || If->getInit() || If->getConditionVariable())
    return NotApplicable("the indices are not followed at once by the guard " +
                         Expected);
  const auto *Cond = dyn_cast<BinaryOperator>(If->getCond()->IgnoreParens());
  std::string CondText = exprText(Ctx, If->getCond());
  auto IsBareReturn = [](const Stmt *S) {
    if (const auto *CS = dyn_cast<CompoundStmt>(S); CS && CS->size() == 1)
      S = CS->body_front();
    const auto *R = dyn_cast<ReturnStmt>(S);
    return R && !R->getRetValue();
  };
  bool EarlyReturn = Cond && Cond->getOpcode() == BO_LOr;
  if (!Cond || (Cond->getOpcode() != BO_LAnd && !EarlyReturn) ||
      (EarlyReturn && !IsBareReturn(If->getThen())))
    return NotApplicable("the guard 'if (" + CondText + ")' is not " +
                         Expected);
  const Expr *RowB = nullptr, *ColB = nullptr;
  for (int Swap = 0; Swap < 2 && !(RowB && ColB); ++Swap) {
    const Expr *L = Swap ? Cond->getRHS() : Cond->getLHS();
    const Expr *R = Swap ? Cond->getLHS() : Cond->getRHS();
    RowB = boundOf(L, P.Row, !EarlyReturn);
    ColB = boundOf(R, P.Col, !EarlyReturn);
  }
  if (!RowB || !ColB)
    return NotApplicable("the guard 'if (" + CondText + ")' is not " +
                         Expected);
  for (const Expr *Bd : {RowB, ColB})
    if (!threadVariance(Bd, FD).uniform() || Bd->HasSideEffects(Ctx.AST))
      return NotApplicable("the bound '" + exprText(Ctx, Bd) +
                           "' is not the same for every thread");
  P.RowBound = parenthesize(exprText(Ctx, RowB));
  P.ColBound = parenthesize(exprText(Ctx, ColB));
  P.StoreGuard = EarlyReturn ? RowN + " < " + P.RowBound + " && " + ColN +
                                   " < " + P.ColBound
                             : CondText;

  // The guarded statements: the accumulator, the k loop, the rest.
  std::vector<const Stmt *> Inner;
  if (EarlyReturn) {
    Inner.assign(Stmts.begin() + At + 1, Stmts.end());
  } else {
    if (At + 1 != Stmts.size())
      return NotApplicable("the guard is not the last statement of the "
                           "kernel");
    if (const auto *CS = dyn_cast<CompoundStmt>(If->getThen()))
      Inner.assign(CS->body_begin(), CS->body_end());
    else
      Inner.push_back(If->getThen());
  }
  const char *Shape = "the guarded code is not 'acc = <init>; for (k = 0; k < "
                      "K; ++k) acc += A[...] * B[...]; <store>'";
  if (Inner.size() < 3)
    return NotApplicable(Shape);
  P.AccDecl = dyn_cast<DeclStmt>(Inner[0]);
  P.Loop = dyn_cast<ForStmt>(Inner[1]);
  const VarDecl *Acc = P.AccDecl && P.AccDecl->isSingleDecl()
                           ? dyn_cast<VarDecl>(P.AccDecl->getSingleDecl())
                           : nullptr;
  if (!Acc || !P.Loop || !Acc->hasInit() || !Acc->isLocalVarDecl() ||
      Acc->isStaticLocal() || !Acc->getType()->isArithmeticType())
    return NotApplicable(Shape);
  if (!threadVariance(Acc->getInit(), FD).uniform() ||
      Acc->getInit()->HasSideEffects(Ctx.AST))
    return NotApplicable("the accumulator '" + Acc->getName() +
                         "' starts from a value that is not the same for "
                         "every thread ('" +
                         exprText(Ctx, Acc->getInit()) + "')");
  P.Post.assign(Inner.begin() + 2, Inner.end());

  // for (k = 0; k < K; ++k)
  const ForStmt *L = P.Loop;
  const Expr *KB = nullptr;
  P.K = countingLoop(L, Ctx.AST, KB);
  if (!P.K)
    return NotApplicable("the loop is not 'for (int k = 0; k < K; ++k)'");
  if (!threadVariance(KB, FD).uniform() || KB->HasSideEffects(Ctx.AST))
    return NotApplicable("the loop bound '" + exprText(Ctx, KB) +
                         "' is not the same for every thread");
  P.KBound = parenthesize(exprText(Ctx, KB));

  // acc += A[f(row, k)] * B[g(k, col)];
  const Stmt *LB = L->getBody();
  if (const auto *CS = dyn_cast<CompoundStmt>(LB); CS && CS->size() == 1)
    LB = CS->body_front();
  const auto *Upd = dyn_cast<CompoundAssignOperator>(LB);
  const auto *Mul =
      Upd ? dyn_cast<BinaryOperator>(Upd->getRHS()->IgnoreParenImpCasts())
          : nullptr;
  if (!Upd || Upd->getOpcode() != BO_AddAssign ||
      !refersTo(Upd->getLHS(), Acc) || !Mul || Mul->getOpcode() != BO_Mul)
    return NotApplicable("the loop body is not '" + Acc->getName() +
                         " += A[...] * B[...];' (found '" +
                         StringRef(stmtText(Ctx, LB)).split('\n').first + "')");
  for (const Expr *Side : {Mul->getLHS(), Mul->getRHS()}) {
    const auto *Access =
        dyn_cast<ArraySubscriptExpr>(Side->IgnoreParenImpCasts());
    std::string Text = exprText(Ctx, Side);
    if (!Access)
      return NotApplicable("the factor '" + Text + "' is not an array element");
    const Expr *Idx = Access->getIdx(), *Base = Access->getBase();
    if (hasLoadOrEffect(Idx) || mentionsBuiltin(Idx) ||
        !threadVariance(Base, FD).uniform() || hasLoadOrEffect(Base) ||
        mentions(Access, Acc))
      return NotApplicable("the factor '" + Text +
                           "' is not a plain load at an index computed from "
                           "the indices and values the same for every "
                           "thread");
    bool R = mentions(Idx, P.Row), C = mentions(Idx, P.Col);
    if (!mentions(Idx, P.K) || R == C)
      return NotApplicable("the factor '" + Text + "' does not depend on '" +
                           P.K->getName() + "' and exactly one of '" + RowN +
                           "', '" + ColN + "'");
    const VarDecl *Own = R ? P.Row : P.Col;
    if (std::string V = nonUniformRef(Idx, {Own, P.K}, FD); !V.empty())
      return NotApplicable("the index of '" + Text + "' uses '" + V +
                           "', which differs between threads");
    Operand &O = R ? P.A : P.B;
    if (O.Access)
      return NotApplicable("both factors depend on '" + (R ? RowN : ColN) +
                           "'");
    O.Access = Access;
    QualType T = Access->getType();
    O.ElemType = typeName(T, Ctx.AST);
    O.Zero = zeroOf(T, O.ElemType);
  }
  if (Written.contains(P.K) && writtenVars(LB).contains(P.K))
    return NotApplicable("the loop body writes '" + P.K->getName() + "'");

  // What follows the loop stays guarded; it must not need the barrier.
  for (const Stmt *S : P.Post) {
    if (callsFunction(S, "__syncthreads") || callsFunction(S, "__syncwarp") ||
        callsFunction(S, "__shfl"))
      return NotApplicable("the code after the loop synchronizes threads");
    if (mentions(S, P.K))
      return NotApplicable("the code after the loop uses '" + P.K->getName() +
                           "'");
  }
  auto IfSpan = stmtSpan(Ctx, If);
  auto LastSpan = stmtSpan(Ctx, Stmts.back());
  if (!IfSpan || !LastSpan)
    return NotApplicable("the guard has no place in the file");
  P.RegionBegin = IfSpan->Begin.Offset;
  P.RegionEnd = EarlyReturn ? LastSpan->End.Offset : IfSpan->End.Offset;
  P.Indent = indentationAt(Ctx.Code, P.RegionBegin);

  // Every launch must use a TILE x TILE block.
  ShapeFound = true;
  if (K->Info->Launches.empty())
    return NotApplicable("it is never launched in this file, so its block "
                         "cannot be shown to be TILE x TILE");
  for (const LaunchSite &Site : K->Info->Launches) {
    const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, Site);
    std::optional<Dim3> D;
    if (Call && Call->getConfig() && Call->getConfig()->getNumArgs() >= 2)
      D = constDim3(Ctx, Call->getConfig()->getArg(1));
    if (!D)
      return NotApplicable("the block of " + Site.Id + " ('" + Site.Block +
                           "') is not a constant; tiling needs TILE x TILE "
                           "blocks");
    int64_t Want = Tile.value_or((*D)[0]);
    if ((*D)[0] != Want || (*D)[1] != Want || (*D)[2] != 1 ||
        (Want != 8 && Want != 16 && Want != 32))
      return NotApplicable(
          "the block of " + Site.Id + " ('" + Site.Block + "') is " +
          dimText(*D) + ", not " +
          (Tile ? std::to_string(*Tile) + "x" + std::to_string(*Tile)
                : std::string("8x8, 16x16 or 32x32")) +
          "x1 (change it with launch-config first)");
    if (!Tile)
      Tile = Want;
  }
  P.Block = {*Tile, *Tile, 1};
  return P;
}

Expected<tooling::Replacements>
SharedTilingTransform::rewrite(const EditContext &Ctx, const Edit &E,
                               const MatmulPlan &P) const {
  int64_t T = P.Block[0];
  std::string TS = std::to_string(T);
  StringRef Code = Ctx.Code;
  const FunctionDecl *FD = P.Kernel.Decl;
  std::string FnText = Code.slice(P.Kernel.Info->Range.Begin.Offset,
                                  P.Kernel.Info->Range.End.Offset)
                           .str();
  std::string As = freshName(FnText, "As"), Bs = freshName(FnText, "Bs");
  std::string Base = freshName(FnText, "kTile");
  std::string ACol = freshName(FnText, "aCol"),
              BRow = freshName(FnText, "bRow");
  std::string KType = typeName(P.K->getType(), Ctx.AST);
  const std::string &I = P.Indent;

  auto Span = [&](const Stmt *S) { return stmtSpan(Ctx, S); };
  // An expression's span, without the `;` a statement span takes.
  auto ESpan = [&](const Expr *X) -> std::optional<SourceSpan> {
    if (containsMacro(X))
      return std::nullopt;
    return fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                    X->getSourceRange(), Ctx.file());
  };
  // A load with k renamed.
  auto LoadText = [&](const ArraySubscriptExpr *Access,
                      StringRef NewK) -> std::optional<std::string> {
    auto S = ESpan(Access);
    if (!S)
      return std::nullopt;
    std::vector<const DeclRefExpr *> Refs;
    collectRefs(Access, P.K, Refs);
    std::vector<TextEdit> Edits;
    for (const DeclRefExpr *R : Refs) {
      auto RS = ESpan(R);
      if (!RS)
        return std::nullopt;
      Edits.push_back(
          {RS->Begin.Offset, RS->End.Offset - RS->Begin.Offset, NewK.str()});
    }
    return spliceText(Code, S->Begin.Offset, S->End.Offset, std::move(Edits));
  };
  auto ALoad = LoadText(P.A.Access, ACol);
  auto BLoad = LoadText(P.B.Access, BRow);
  auto LoopSpan = Span(P.Loop);
  auto ASpan = ESpan(P.A.Access), BSpan = ESpan(P.B.Access);
  auto KBSpan = ESpan(boundOf(P.Loop->getCond(), P.K, true));
  auto AccSpan = Span(P.AccDecl);
  if (!ALoad || !BLoad || !LoopSpan || !ASpan || !BSpan || !KBSpan || !AccSpan)
    return reject(E, "internal",
                  "kernel '" + E.Target +
                      "': a part of the loop has no place in "
                      "the file");
  std::string RowN = P.Row->getNameAsString(), ColN = P.Col->getNameAsString();
  std::string KN = P.K->getNameAsString();

  // The inner loop: the original one over one tile, reading the tiles.
  std::string InnerLoop = spliceText(
      Code, LoopSpan->Begin.Offset, LoopSpan->End.Offset,
      {{KBSpan->Begin.Offset, KBSpan->End.Offset - KBSpan->Begin.Offset, TS},
       {ASpan->Begin.Offset, ASpan->End.Offset - ASpan->Begin.Offset,
        As + "[threadIdx.y][" + KN + "]"},
       {BSpan->Begin.Offset, BSpan->End.Offset - BSpan->Begin.Offset,
        Bs + "[" + KN + "][threadIdx.x]"}});
  int LoopDelta = int(I.size() + 2) -
                  int(indentationAt(Code, LoopSpan->Begin.Offset).size());
  InnerLoop = reindent(InnerLoop, LoopDelta);

  std::string Out;
  raw_string_ostream OS(Out);
  OS << sharedTileDecl(P.A.ElemType, As, {T, T}) << "\n"
     << I << sharedTileDecl(P.B.ElemType, Bs, {T, T}) << "\n"
     << I << Code.slice(AccSpan->Begin.Offset, AccSpan->End.Offset) << "\n"
     << I << tileLoopHead(Base, "0", P.KBound, T, KType) << " {\n"
     << I << "  " << KType << " " << ACol << " = " << Base
     << " + threadIdx.x;\n"
     << I << "  " << KType << " " << BRow << " = " << Base
     << " + threadIdx.y;\n"
     << I << "  "
     << guardedTileLoad(As + "[threadIdx.y][threadIdx.x]",
                        RowN + " < " + P.RowBound + " && " + ACol + " < " +
                            P.KBound,
                        *ALoad, P.A.Zero)
     << "\n"
     << I << "  "
     << guardedTileLoad(Bs + "[threadIdx.y][threadIdx.x]",
                        BRow + " < " + P.KBound + " && " + ColN + " < " +
                            P.ColBound,
                        *BLoad, P.B.Zero)
     << "\n"
     << I << "  __syncthreads();\n"
     << I << "  " << InnerLoop << "\n"
     << I << "  __syncthreads();\n"
     << I << "}\n";
  // The rest stays behind the bounds guard.
  auto First = Span(P.Post.front()), Last = Span(P.Post.back());
  if (!First || !Last)
    return reject(E, "internal",
                  "kernel '" + E.Target +
                      "': the code after the loop has no "
                      "place in the file");
  std::string Rest = Code.slice(First->Begin.Offset, Last->End.Offset).str();
  int RestDelta =
      int(I.size() + 2) - int(indentationAt(Code, First->Begin.Offset).size());
  OS << I << "if (" << P.StoreGuard << ") {\n"
     << I << "  " << reindent(Rest, RestDelta) << "\n"
     << I << "}";
  (void)FD;
  tooling::Replacements R;
  SourceSpan Region{{0, 0, P.RegionBegin}, {0, 0, P.RegionEnd}};
  if (Error Err = addReplacement(R, replaceSpan(Ctx, Region, Out), E))
    return std::move(Err);
  return R;
}

/// The register-blocked product's text (rewriteBlocked fills it in).
constexpr StringRef BlockedTemplate =
    R"(// ${Micro}: 128 x 128 outputs per block, 8 x 8 per thread.
__shared__ ${TA} ${As}[2][8][132];
__shared__ ${TB} ${Bs}[2][8][128];
const int ${Tid} = threadIdx.y * 16 + threadIdx.x;
const ${RowT} ${RowBase} = blockIdx.y * 128;
const ${ColT} ${ColBase} = blockIdx.x * 128;
if (${RowBase} >= gridDim.y * 16 || ${ColBase} >= gridDim.x * 16)
  return;
${AccT} ${AccR}[8][8];
for (int ${I} = 0; ${I} < 8; ++${I})
  for (int ${J} = 0; ${J} < 8; ++${J})
    ${AccR}[${I}][${J}] = ${Init};
${TA} ${Av}[4];
${TB} ${Bv}[4];
${Load0}for (int ${I} = 0; ${I} < 4; ++${I}) {
  ${As}[0][${Tid} % 8][${Tid} / 8 + 32 * ${I}] = ${Av}[${I}];
  ${Bs}[0][${Tid} / 128 + 2 * ${I}][${Tid} % 128] = ${Bv}[${I}];
}
__syncthreads();
int ${Buf} = 0;
for (${KT} ${K0} = 0; ${K0} < ${K}; ${K0} += 8) {
  const bool ${More} = ${K0} + 8 < ${K};
  if (${More}) {
${LoadNext}  }
#pragma unroll
  for (int ${Kk} = 0; ${Kk} < 8; ++${Kk}) {
    ${TA} ${Ra}[8];
    ${TB} ${Rb}[8];
    for (int ${I} = 0; ${I} < 4; ++${I}) {
      ${Ra}[${I}] = ${As}[${Buf}][${Kk}][threadIdx.y * 4 + ${I}];
      ${Ra}[4 + ${I}] = ${As}[${Buf}][${Kk}][64 + threadIdx.y * 4 + ${I}];
      ${Rb}[${I}] = ${Bs}[${Buf}][${Kk}][threadIdx.x * 4 + ${I}];
      ${Rb}[4 + ${I}] = ${Bs}[${Buf}][${Kk}][64 + threadIdx.x * 4 + ${I}];
    }
    for (int ${I} = 0; ${I} < 8; ++${I})
      for (int ${J} = 0; ${J} < 8; ++${J})
        ${AccR}[${I}][${J}] += ${Ra}[${I}] * ${Rb}[${J}];
  }
  if (${More}) {
    for (int ${I} = 0; ${I} < 4; ++${I}) {
      ${As}[1 - ${Buf}][${Tid} % 8][${Tid} / 8 + 32 * ${I}] = ${Av}[${I}];
      ${Bs}[1 - ${Buf}][${Tid} / 128 + 2 * ${I}][${Tid} % 128] = ${Bv}[${I}];
    }
    __syncthreads();
    ${Buf} = 1 - ${Buf};
  }
}
for (int ${I} = 0; ${I} < 8; ++${I}) {
  ${RowT} ${R} = ${RowBase} + (${I} < 4 ? threadIdx.y * 4 + ${I} : 64 + threadIdx.y * 4 + ${I} - 4);
  for (int ${J} = 0; ${J} < 8; ++${J}) {
    ${ColT} ${C} = ${ColBase} + (${J} < 4 ? threadIdx.x * 4 + ${J} : 64 + threadIdx.x * 4 + ${J} - 4);
    if (${R} < ${M} && ${C} < ${N} && ${R} < gridDim.y * 16 && ${C} < gridDim.x * 16) {
${Post}    }
  }
})";

// The register-blocked product (micro=8). Each block of 16 x 16 threads
// computes a 128 x 128 tile of the outputs, each thread an 8 x 8 register
// tile (rows ty*4..+3 and 64+ty*4..+3, columns likewise with tx), over K in
// steps of 8 through two shared buffers: the next step's elements are
// loaded into registers while the current step is used. Exact: each output
// still adds its products in k order from the same start value (the
// zero-filled tail adds +0), and is stored by the original statements
// (indices renamed) under the original bounds. The launch is unchanged:
// blocks past the 128 x 128 tiles that cover the outputs the launch's grid
// reaches return at once, and no output beyond that grid is stored. The
// indices and the guard are replaced with the rest.
Expected<tooling::Replacements>
SharedTilingTransform::rewriteBlocked(const EditContext &Ctx, const Edit &E,
                                      const MatmulPlan &P) const {
  StringRef Code = Ctx.Code;
  std::string FnText = Code.slice(P.Kernel.Info->Range.Begin.Offset,
                                  P.Kernel.Info->Range.End.Offset)
                           .str();
  const auto *Acc = cast<VarDecl>(P.AccDecl->getSingleDecl());
  auto Fresh = [&](StringRef Base) {
    std::string N = freshName(FnText, Base);
    FnText += " " + N; // later names differ from this one too
    return N;
  };
  std::string As = Fresh("As"), Bs = Fresh("Bs"), AccR = Fresh("accR"),
              Tid = Fresh("tid"), RowBase = Fresh("rowBase"),
              ColBase = Fresh("colBase"), K0 = Fresh("k0"), Buf = Fresh("buf"),
              Av = Fresh("aNext"), Bv = Fresh("bNext"), Ra = Fresh("ra"),
              Rb = Fresh("rb"), R = Fresh("r"), C = Fresh("c"),
              Kk = Fresh("kk"), I = Fresh("i"), J = Fresh("j"),
              More = Fresh("more"), ARowV = Fresh("ar"), AkV = Fresh("ak"),
              BkV = Fresh("bk"), BcV = Fresh("bc");
  // A statement or expression's text with some variables renamed.
  auto Renamed = [&](const Stmt *S,
                     ArrayRef<std::pair<const ValueDecl *, std::string>> To,
                     bool Statement) -> std::optional<std::string> {
    auto Span =
        !Statement ? fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                              S->getSourceRange(), Ctx.file())
                   : stmtSpan(Ctx, S);
    if (!Span || containsMacro(S))
      return std::nullopt;
    std::vector<TextEdit> Edits;
    for (const auto &[D, Text] : To) {
      std::vector<const DeclRefExpr *> Refs;
      collectRefs(S, D, Refs);
      for (const DeclRefExpr *Ref : Refs) {
        auto RS = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                           Ref->getSourceRange(), Ctx.file());
        if (!RS)
          return std::nullopt;
        Edits.push_back(
            {RS->Begin.Offset, RS->End.Offset - RS->Begin.Offset, Text});
      }
    }
    return spliceText(Code, Span->Begin.Offset, Span->End.Offset,
                      std::move(Edits));
  };
  std::string KType = typeName(P.K->getType(), Ctx.AST);
  std::string RowType = typeName(P.Row->getType(), Ctx.AST);
  std::string ColType = typeName(P.Col->getType(), Ctx.AST);
  std::string AccType = typeName(Acc->getType(), Ctx.AST);
  // Element e of a step's A tile (128 rows x 8 k) is row e / 8, k e % 8;
  // of its B tile (8 k x 128 columns) k e / 128, column e % 128.
  auto ALoad = Renamed(P.A.Access, {{P.Row, ARowV}, {P.K, AkV}}, false);
  auto BLoad = Renamed(P.B.Access, {{P.K, BkV}, {P.Col, BcV}}, false);
  std::vector<std::string> Post;
  for (const Stmt *S : P.Post) {
    auto T = Renamed(
        S, {{P.Row, R}, {P.Col, C}, {Acc, AccR + "[" + I + "][" + J + "]"}},
        true);
    if (!T)
      return reject(E, "internal",
                    "kernel '" + E.Target +
                        "': the code after the loop has no place in the file");
    Post.push_back(reindent(
        *T,
        6 - int(indentationAt(Code, stmtSpan(Ctx, S)->Begin.Offset).size())));
  }
  auto InitSpan = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                           Acc->getInit()->getSourceRange(), Ctx.file());
  if (!ALoad || !BLoad || !InitSpan)
    return reject(E, "internal",
                  "kernel '" + E.Target +
                      "': a part of the loop has no place in the file");
  std::string PostText;
  for (const std::string &T : Post)
    PostText += "      " + T + "\n";
  // One step's elements into registers, from k = \p KFrom: 4 of A's tile
  // and 4 of B's per thread, zero outside the matrices.
  auto LoadStep = [&](StringRef KFrom, StringRef In) {
    return indentLines(fillTemplate(R"(for (int ${I} = 0; ${I} < 4; ++${I}) {
  ${RowT} ${ar} = ${RowBase} + ${Tid} / 8 + 32 * ${I};
  ${KT} ${ak} = ${KFrom} + ${Tid} % 8;
  ${Av}[${I}] = ${ar} < ${M} && ${ak} < ${K} ? ${ALoad} : ${ZA};
  ${KT} ${bk} = ${KFrom} + ${Tid} / 128 + 2 * ${I};
  ${ColT} ${bc} = ${ColBase} + ${Tid} % 128;
  ${Bv}[${I}] = ${bk} < ${K} && ${bc} < ${N} ? ${BLoad} : ${ZB};
}
)",
                                    {{"I", I},
                                     {"RowT", RowType},
                                     {"ColT", ColType},
                                     {"KT", KType},
                                     {"ar", ARowV},
                                     {"ak", AkV},
                                     {"bk", BkV},
                                     {"bc", BcV},
                                     {"RowBase", RowBase},
                                     {"ColBase", ColBase},
                                     {"Tid", Tid},
                                     {"KFrom", KFrom.str()},
                                     {"Av", Av},
                                     {"Bv", Bv},
                                     {"M", P.RowBound},
                                     {"N", P.ColBound},
                                     {"K", P.KBound},
                                     {"ALoad", *ALoad},
                                     {"BLoad", *BLoad},
                                     {"ZA", P.A.Zero},
                                     {"ZB", P.B.Zero}}),
                       In)
        .insert(0, In.str());
  };
  std::string Body = fillTemplate(
      BlockedTemplate,
      {{"Micro", "shared-tiling micro=8"},
       {"TA", P.A.ElemType},
       {"TB", P.B.ElemType},
       {"As", As},
       {"Bs", Bs},
       {"Tid", Tid},
       {"RowT", RowType},
       {"ColT", ColType},
       {"KT", KType},
       {"RowBase", RowBase},
       {"ColBase", ColBase},
       {"AccT", AccType},
       {"AccR", AccR},
       {"Init", Code.slice(InitSpan->Begin.Offset, InitSpan->End.Offset).str()},
       {"Av", Av},
       {"Bv", Bv},
       {"Load0", LoadStep("0", "")},
       {"LoadNext", LoadStep(K0 + " + 8", "    ")},
       {"K0", K0},
       {"M", P.RowBound},
       {"N", P.ColBound},
       {"K", P.KBound},
       {"Buf", Buf},
       {"More", More},
       {"Kk", Kk},
       {"Ra", Ra},
       {"Rb", Rb},
       {"I", I},
       {"J", J},
       {"R", R},
       {"C", C},
       {"Post", PostText}});
  std::string Out = indentLines(Body, P.Indent);
  // The row and column indices (the body's first statements, before the
  // guard) go too: nothing else reads them, and the stores read r and c.
  const Stmt *First =
      cast<CompoundStmt>(P.Kernel.Decl->getBody())->body_front();
  auto FirstSpan = stmtSpan(Ctx, First);
  if (!FirstSpan)
    return reject(E, "internal",
                  "kernel '" + E.Target +
                      "': the indices have no place in "
                      "the file");
  tooling::Replacements Repl;
  if (Error Err = addReplacement(
          Repl,
          replaceSpan(Ctx, offsetSpan(FirstSpan->Begin.Offset, P.RegionEnd),
                      Out),
          E))
    return std::move(Err);
  // 256 threads, two blocks per multiprocessor: ptxas keeps the 64
  // accumulators and the prefetched step within 128 registers. An existing
  // __launch_bounds__ stays as written (every launch is 16 x 16, so its
  // maximum is at least 256).
  if (!P.Kernel.Decl->hasAttr<CUDALaunchBoundsAttr>()) {
    const SourceManager &SM = Ctx.AST.getSourceManager();
    SourceLocation Name = SM.getExpansionLoc(P.Kernel.Decl->getLocation());
    if (Error Err = addReplacement(
            Repl,
            insertAt(Ctx, SM.getFileOffset(Name), "__launch_bounds__(256, 2) "),
            E))
      return std::move(Err);
  }
  return Repl;
}

} // namespace

} // namespace sharedtiling

std::unique_ptr<Transform> createSharedTilingTransform() {
  return std::make_unique<sharedtiling::SharedTilingTransform>();
}

} // namespace optiml
