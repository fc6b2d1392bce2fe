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
#include "../../Patterns/Accumulation.h"
#include "../../Patterns/CountingLoop.h"
#include "../../Patterns/SideEffects.h"
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

const Expr *gridExtent(const EditContext &Ctx, const LaunchSite &Site,
                       unsigned Dim, const VarDecl *&Var) {
  Var = nullptr;
  const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, Site);
  if (!Call || !Call->getConfig() || Call->getConfig()->getNumArgs() < 1)
    return nullptr;
  // `(grid)` (a launch macro's parenthesized argument) is `grid`.
  auto Strip = [](const Expr *X) {
    return X->IgnoreImplicit()->IgnoreParens()->IgnoreImplicit();
  };
  const Expr *G = Strip(Call->getConfig()->getArg(0));
  const auto *CE = dyn_cast<CXXConstructExpr>(G);
  if (CE && CE->getNumArgs() == 1 && CE->getArg(0)->getType()->isRecordType())
    G = Strip(CE->getArg(0));
  if (const auto *DR = dyn_cast<DeclRefExpr>(G)) {
    const auto *VD = dyn_cast<VarDecl>(DR->getDecl());
    const auto *Fn =
        VD ? dyn_cast<FunctionDecl>(VD->getDeclContext()) : nullptr;
    if (!VD || !VD->isLocalVarDecl() || !VD->hasInit() || !Fn ||
        !Fn->getBody() || writtenVars(Fn->getBody()).contains(VD))
      return nullptr;
    Var = VD;
    G = VD->getInit()->IgnoreImplicit();
  }
  CE = dyn_cast<CXXConstructExpr>(G);
  if (Dim == 0 && !CE && G->getType()->isIntegerType())
    return G->IgnoreParenImpCasts();
  if (!CE || CE->getNumArgs() <= Dim || isa<CXXDefaultArgExpr>(CE->getArg(Dim)))
    return nullptr;
  // The y extent of a 3D grid is only read where z is one.
  if (Dim == 1 && CE->getNumArgs() == 3 &&
      !isa<CXXDefaultArgExpr>(CE->getArg(2)) &&
      intValue(CE->getArg(2)->IgnoreParenImpCasts(), Ctx.AST) != 1)
    return nullptr;
  return CE->getArg(Dim)->IgnoreParenImpCasts();
}

/// Whitespace removed, for comparing two spellings of one expression.
static std::string squeeze(StringRef S) {
  std::string Out;
  for (char C : S)
    if (!isSpace(C))
      Out += C;
  return Out;
}

const Expr *coveringExtent(const EditContext &Ctx, const LaunchSite &Site,
                           unsigned Dim, int64_t Block, StringRef Bound,
                           const VarDecl *&Var) {
  const Expr *G = gridExtent(Ctx, Site, Dim, Var);
  auto CD =
      G ? matchCeilDiv(G,
                       [&](const Expr *X) {
                         return intValue(X->IgnoreParenImpCasts(), Ctx.AST);
                       })
        : std::nullopt;
  if (!CD || CD->Divisor != Block ||
      squeeze(looseExprText(Ctx, CD->Numerator)) != squeeze(Bound.trim("()")))
    return nullptr;
  return G;
}

const VarDecl *zeroBasedLoop(const ForStmt *L, const ASTContext &AST,
                             const Expr *&Bound) {
  std::optional<CountingLoop> C = countingLoop(L, AST);
  if (!C || C->Step != 1 || C->Inclusive || intValue(C->Start, AST) != 0)
    return nullptr;
  Bound = C->Bound;
  return C->Var;
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

/// Whether the initializer of \p Acc may have side effects: where it
/// depends on template parameters, in some instantiation of \p Kernel.
static bool initHasSideEffects(const VarDecl *Acc, const FunctionDecl *Kernel) {
  const ASTContext &AST = Kernel->getASTContext();
  if (!Acc->getInit()->isInstantiationDependent())
    return Acc->getInit()->HasSideEffects(AST);
  return any_of(instantiatedVars(Acc, Kernel), [&](const VarDecl *V) {
    return !V || !V->getInit() || V->getInit()->HasSideEffects(AST);
  });
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
                1, 8),
            ParamSpec::integer(
                "cols",
                "with rows on a 2D stencil that streams its rows: adjacent "
                "output columns per thread, each window row loaded as "
                "vectors of cols elements where every bound holds (float, "
                "int, unsigned, double), and the grids shrink along x; 1, 2 "
                "or 4 (default 1)",
                1, 4)};
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
    int64_t Cols = E.getInt("cols").value_or(1);
    if (Cols != 1 && Cols != 2 && Cols != 4)
      return reject(E, "params",
                    "cols must be 1, 2 or 4 (got " + Twine(Cols) + ")");
    if (Cols != 1 && Rows == 1)
      return reject(E, "params", "cols needs rows (2, 4 or 8)");
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
  int64_t Cols = E.getInt("cols").value_or(1);
  if (M && !A && Cols != 1)
    return reject(E, "not-applicable",
                  "kernel '" + E.Target +
                      "': cols applies to 2D stencils; this is a matmul");
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
      return Micro == 8 ? rewriteMicroTile(Ctx, E, *M) : rewrite(Ctx, E, *M);
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
      if (Cols != 1)
        return reject(E, "not-applicable",
                      "kernel '" + E.Target +
                          "': cols applies to 2D stencils; this is a "
                          "block-sized product");
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
      return Rows != 1 ? rewriteStencilRows(Ctx, E, *St, Rows, Cols)
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
    // Streamed rows with several columns per thread first, where they
    // apply: each window row is then loaded as vectors and each row's
    // outputs stored as one. conv2d (7 x 7, filter in constant memory) on
    // the H100, run 2026-12-07-verdicts-conv-stores: rows 4 cols 4 0.221
    // ms, rows 8 cols 2 0.242 ms, rows 8 alone 0.288 ms (run
    // 2026-12-07-verdicts-conv); four columns of 8 rows took 56 registers
    // and were slower.
    if (auto RowsEdit = rewriteStencilRows(Ctx, W, *St, R);
        RowsEdit && (Streams || Window <= 32)) {
      if (Streams) {
        Edit W4 = E;
        W4.Params["rows"] = int64_t(4);
        W4.Params["cols"] = int64_t(4);
        if (auto Cols4 = rewriteStencilRows(Ctx, W4, *St, 4, 4); Cols4)
          A->Suggestions.push_back(W4);
        else
          consumeError(Cols4.takeError());
      }
      Edit WC = W;
      WC.Params["cols"] = int64_t(2);
      if (auto ColsEdit = rewriteStencilRows(Ctx, WC, *St, R, 2); ColsEdit)
        A->Suggestions.push_back(WC);
      else
        consumeError(ColsEdit.takeError());
      A->Suggestions.push_back(W);
    } else if (!RowsEdit)
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
  if (K->Info->InMacro || !onlyConstantMacros(Body, Ctx.AST))
    return NotApplicable("its body is written with macros other than "
                         "constants");
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
  // Pointers into the operands may come first (`a = A + row * lda`).
  std::string AliasWhy;
  takeAliases(Stmts, At, FD, P.Aliases, AliasWhy);
  const auto *If = At < Stmts.size() ? dyn_cast<IfStmt>(Stmts[At]) : nullptr;
  if (!If || If->getElse() || If->getInit() || If->getConditionVariable())
    return NotApplicable("the indices are not followed at once by the guard " +
                         Expected + (AliasWhy.empty() ? "" : "; " + AliasWhy));
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
  std::string Shape = "the guarded code is not 'acc = <init>; for (k = 0; k "
                      "< K; ++k) acc += A[...] * B[...]; <store>'";
  size_t In = 0;
  takeAliases(Inner, In, FD, P.Aliases, AliasWhy);
  if (!AliasWhy.empty())
    Shape += ": " + AliasWhy;
  if (Inner.size() < In + 3)
    return NotApplicable(Shape);
  P.AccDecl = dyn_cast<DeclStmt>(Inner[In]);
  P.Loop = dyn_cast<ForStmt>(Inner[In + 1]);
  // Or `int k = 0; while (k < K) { ...; ++k; }`.
  std::optional<CountingWhile> While;
  if (!P.Loop && Inner.size() >= In + 4)
    if ((P.While = dyn_cast<WhileStmt>(Inner[In + 2]))) {
      While = countingWhile(P.While, Inner[In + 1], Ctx.AST);
      if (!While || While->Step != 1 || While->Inclusive ||
          intValue(While->Start, Ctx.AST) != 0) {
        While.reset();
        P.While = nullptr;
      } else {
        P.CounterDecl = While->Decl;
      }
    }
  const VarDecl *Acc = P.AccDecl && P.AccDecl->isSingleDecl()
                           ? dyn_cast<VarDecl>(P.AccDecl->getSingleDecl())
                           : nullptr;
  if (!Acc || !(P.Loop || P.While) || !Acc->hasInit() ||
      !Acc->isLocalVarDecl() || Acc->isStaticLocal() ||
      !(Acc->getType()->isArithmeticType() ||
        Acc->getType()->isDependentType()))
    return NotApplicable(Shape);
  if (Acc->getType()->isDependentType())
    if (std::string Why = dependentAccumulatorProblem(Acc, FD); !Why.empty())
      return NotApplicable(Why);
  if (!threadVariance(Acc->getInit(), FD).uniform() ||
      initHasSideEffects(Acc, FD))
    return NotApplicable("the accumulator '" + Acc->getName() +
                         "' starts from a value that is not the same for "
                         "every thread ('" +
                         exprText(Ctx, Acc->getInit()) + "')");
  P.Post.assign(Inner.begin() + In + (P.While ? 3 : 2), Inner.end());

  // for (k = 0; k < K; ++k)
  const Expr *KB = nullptr;
  P.K = P.Loop ? zeroBasedLoop(P.Loop, Ctx.AST, KB) : While->Var;
  if (While)
    KB = While->Bound;
  if (!P.K)
    return NotApplicable("the loop is not 'for (int k = 0; k < K; ++k)'");
  if (!threadVariance(KB, FD).uniform() || KB->HasSideEffects(Ctx.AST))
    return NotApplicable("the loop bound '" + exprText(Ctx, KB) +
                         "' is not the same for every thread");
  P.KBound = parenthesize(exprText(Ctx, KB));

  // acc += A[f(row, k)] * B[g(k, col)]; and, in a while loop, the step.
  const Stmt *LB = P.Loop ? P.Loop->getBody() : P.While->getBody();
  if (const auto *CS = dyn_cast<CompoundStmt>(LB);
      CS && CS->size() == (P.While ? 2u : 1u))
    LB = CS->body_front();
  // (or `acc = acc + A[...] * B[...]`, `acc = fmaf(A[...], B[...], acc)`;
  // the loop's text stays, the micro tile keeps the fused form).
  std::optional<ProductUpdate> Upd = productUpdate(LB, Acc);
  if (!Upd)
    return NotApplicable("the loop body is not '" + Acc->getName() +
                         " += A[...] * B[...];' (found '" +
                         StringRef(stmtText(Ctx, LB)).split('\n').first + "')");
  P.Fma = Upd->Fma;
  for (const Expr *Side : {Upd->X, Upd->Y}) {
    const auto *Access =
        dyn_cast<ArraySubscriptExpr>(Side->IgnoreParenImpCasts());
    std::string Text = exprText(Ctx, Side);
    if (!Access)
      return NotApplicable("the factor '" + Text + "' is not an array element");
    // Through an alias `a = A + e`, `a[i]` reads A at e + i.
    const Expr *Idx = Access->getIdx(), *Base = Access->getBase();
    const PointerAlias *Alias = aliasOf(Access, P.Aliases);
    SmallVector<const Expr *, 3> Parts{Idx};
    if (Alias)
      Parts.append(Alias->Offsets.begin(), Alias->Offsets.end());
    auto AnyPart = [&](function_ref<bool(const Expr *)> Pred) {
      return any_of(Parts, Pred);
    };
    if (AnyPart([](const Expr *X) {
          return readsOrWritesMemory(X, nullptr) || mentionsBuiltin(X);
        }) ||
        (!Alias && (!threadVariance(Base, FD).uniform() ||
                    readsOrWritesMemory(Base, nullptr))) ||
        mentions(Access, Acc))
      return NotApplicable("the factor '" + Text +
                           "' is not a plain load at an index computed from "
                           "the indices and values the same for every "
                           "thread");
    bool R = AnyPart([&](const Expr *X) { return mentions(X, P.Row); });
    bool C = AnyPart([&](const Expr *X) { return mentions(X, P.Col); });
    if (!mentions(Idx, P.K) || R == C)
      return NotApplicable("the factor '" + Text + "' does not depend on '" +
                           P.K->getName() + "' and exactly one of '" + RowN +
                           "', '" + ColN + "'");
    const VarDecl *Own = R ? P.Row : P.Col;
    for (const Expr *X : Parts)
      if (std::string V = nonUniformRef(X, {Own, P.K}, FD); !V.empty())
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
  std::vector<const Stmt *> Renamed{P.A.Access, P.B.Access};
  Renamed.insert(Renamed.end(), P.Post.begin(), P.Post.end());
  if (std::string Why = aliasUsedElsewhere(Body, P.Aliases, Renamed);
      !Why.empty())
    return NotApplicable(Why);

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
      return constantMacroSpan(Ctx, X);
    return fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                    X->getSourceRange(), Ctx.file());
  };
  // The aliases declared inside the replaced region: the loads move above
  // their declarations and read through their initializers; the code
  // after the loop declares again those it uses. Those before the guard
  // stay.
  std::vector<PointerAlias> Moved;
  for (const PointerAlias &A : P.Aliases)
    if (auto DS = Span(A.Decl); !DS || DS->Begin.Offset >= P.RegionBegin)
      Moved.push_back(A);
  auto Inlined = inlinedAliases(Ctx, Moved, {});
  // A load with k renamed.
  auto LoadText = [&](const ArraySubscriptExpr *Access,
                      StringRef NewK) -> std::optional<std::string> {
    if (!onlyConstantMacros(Access, Ctx.AST) || !Inlined)
      return std::nullopt;
    auto To = *Inlined;
    To.push_back({P.K, NewK.str()});
    return renamedText(Ctx, Access, To, false);
  };
  auto ALoad = LoadText(P.A.Access, ACol);
  auto BLoad = LoadText(P.B.Access, BRow);
  // A while loop goes with its counter's declaration.
  auto LoopSpan = Span(P.Loop ? static_cast<const Stmt *>(P.Loop) : P.While);
  if (LoopSpan && P.CounterDecl) {
    auto DeclSpan = Span(P.CounterDecl);
    LoopSpan = DeclSpan ? std::optional<SourceSpan>(
                              SourceSpan{DeclSpan->Begin, LoopSpan->End})
                        : std::nullopt;
  }
  auto ASpan = ESpan(P.A.Access), BSpan = ESpan(P.B.Access);
  auto KBSpan = ESpan(
      boundOf(P.Loop ? P.Loop->getCond() : P.While->getCond(), P.K, true));
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
  OS << I << "if (" << P.StoreGuard << ") {\n";
  for (const PointerAlias &A : Moved) {
    auto DS = Span(A.Decl);
    if (!DS)
      return reject(E, "internal",
                    "kernel '" + E.Target + "': the declaration of '" +
                        A.Var->getName() + "' has no place in the file");
    if (any_of(P.Post, [&](const Stmt *S) { return mentions(S, A.Var); }))
      OS << I << "  " << Code.slice(DS->Begin.Offset, DS->End.Offset) << "\n";
  }
  OS << I << "  " << reindent(Rest, RestDelta) << "\n" << I << "}";
  (void)FD;
  tooling::Replacements R;
  SourceSpan Region{{0, 0, P.RegionBegin}, {0, 0, P.RegionEnd}};
  if (Error Err = addReplacement(R, replaceSpan(Ctx, Region, Out), E))
    return std::move(Err);
  return R;
}

} // namespace

} // namespace sharedtiling

std::unique_ptr<Transform> createSharedTilingTransform() {
  return std::make_unique<sharedtiling::SharedTilingTransform>();
}

} // namespace optiml
