//===- TransposeThroughShared.cpp - Both sides of a transpose coalesced ---===//
//
// Pattern: a 2D kernel (x and y thread indices behind a bounds guard) whose
// one statement copies an element read at an index unit-stride in one
// thread coordinate to an index unit-stride in the other:
//   out[c * rows + r] = in[r * cols + c];   (or the reverse)
// One of the two global accesses then strides across a warp.
//
// Rewrite: a block of tile x block_rows threads moves a tile x tile square
// through a padded shared tile (padding avoids bank conflicts on the
// transposed side): a first phase where consecutive lanes take consecutive
// elements of the unit-stride read, a barrier, and a second phase where
// consecutive lanes take consecutive elements of the write. Launches get a
// 2D grid of tiles.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "SharedStaging.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include <functional>

using namespace llvm;
using clang::dyn_cast;
using clang::dyn_cast_or_null;
using clang::isa;

namespace optiml {
namespace {

struct IndexVar {
  const clang::VarDecl *V = nullptr;
  const clang::DeclStmt *Decl = nullptr;
  const clang::Expr *Bound = nullptr;
};

struct Plan {
  ResolvedKernel Kernel;
  IndexVar X, Y;
  const clang::IfStmt *Guard = nullptr;
  bool EarlyReturn = false;
  const clang::BinaryOperator *Copy = nullptr; ///< out[...] = f(in[...])
  const clang::Stmt *CopyStmt = nullptr;
  bool ReadAlongX = true; ///< the read is unit-stride in x
  int64_t Tile = 32, Pad = 1, Rows = 8;
  std::string ElemType;
  unsigned RegionBegin = 0, RegionEnd = 0;
  std::string Description;
};

/// The variable of \p Vars that \p Index grows with by one (`a * s + v`,
/// `v + s * a`), or null.
const clang::VarDecl *unitVar(const clang::Expr *Index, const IndexVar &X,
                              const IndexVar &Y) {
  const auto *B = dyn_cast<clang::BinaryOperator>(stripCasts(Index));
  if (!B || B->getOpcode() != clang::BO_Add)
    return nullptr;
  for (const IndexVar *V : {&X, &Y}) {
    const IndexVar *O = V == &X ? &Y : &X;
    for (int Side = 0; Side < 2; ++Side) {
      const clang::Expr *T = Side ? B->getLHS() : B->getRHS();
      const clang::Expr *Rest = Side ? B->getRHS() : B->getLHS();
      if (declOf(T) == V->V && !mentions(Rest, V->V) && mentions(Rest, O->V))
        return V->V;
    }
  }
  return nullptr;
}

class TransposeThroughShared : public PlannedTransform<Plan> {
public:
  StringRef kind() const override { return "transpose-through-shared"; }
  StringRef description() const override {
    return "move a transposing copy through a padded shared tile so the "
           "read and the write both coalesce";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec::integer("tile",
                           "tile edge in elements (also the block's x size)", 8,
                           64, 32),
        ParamSpec::integer("padding",
                           "extra columns in the shared tile (1 avoids bank "
                           "conflicts for 4-byte elements)",
                           0, 8, 1),
        ParamSpec::integer(
            "block_rows",
            "the block's y size; each thread moves tile/block_rows "
            "elements",
            1, 64, 8)};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E;
    auto P = planDefault(Ctx, Target, A, E);
    if (!P)
      return A;
    A.Reason = P->Description;
    Edit S = E;
    S.Params["tile"] = int64_t(32);
    S.Params["padding"] = int64_t(1);
    S.Params["block_rows"] = int64_t(8);
    A.Suggestions = {S};
    return A;
  }

private:
  Expected<Plan> analyze(const EditContext &Ctx, const Edit &E) const override;
  Expected<clang::tooling::Replacements>
  rewrite(const EditContext &Ctx, const Edit &E, const Plan &P) const override;
};

/// Collects `v < n` conjuncts (or `v >= n` disjuncts when \p Negated).
bool collectBounds(const clang::Expr *C, bool Negated, IndexVar &X,
                   IndexVar &Y) {
  const auto *B = dyn_cast<clang::BinaryOperator>(C->IgnoreParenImpCasts());
  if (!B)
    return false;
  if (B->getOpcode() == (Negated ? clang::BO_LOr : clang::BO_LAnd))
    return collectBounds(B->getLHS(), Negated, X, Y) &&
           collectBounds(B->getRHS(), Negated, X, Y);
  clang::BinaryOperatorKind Lt = Negated ? clang::BO_GE : clang::BO_LT;
  clang::BinaryOperatorKind Gt = Negated ? clang::BO_LE : clang::BO_GT;
  const clang::ValueDecl *V = nullptr;
  const clang::Expr *N = nullptr;
  if (B->getOpcode() == Lt) {
    V = declOf(B->getLHS());
    N = B->getRHS();
  } else if (B->getOpcode() == Gt) {
    V = declOf(B->getRHS());
    N = B->getLHS();
  } else {
    return false;
  }
  if (V == X.V && !X.Bound)
    X.Bound = N;
  else if (V == Y.V && !Y.Bound)
    Y.Bound = N;
  else
    return false;
  return true;
}

Expected<Plan> TransposeThroughShared::analyze(const EditContext &Ctx,
                                               const Edit &E) const {
  Plan P;
  auto K = resolveKernel(Ctx, E, E.Target);
  if (!K)
    return K.takeError();
  P.Kernel = *K;
  const KernelInfo &KI = *K->Info;
  P.Tile = E.getInt("tile").value_or(32);
  P.Pad = E.getInt("padding").value_or(1);
  P.Rows = E.getInt("block_rows").value_or(8);
  if (P.Tile < 8 || P.Tile > 64 || P.Pad < 0 || P.Pad > 8 || P.Rows < 1 ||
      P.Tile % P.Rows || P.Tile * P.Rows > 1024)
    return reject(E, "params",
                  "params: tile in [8, 64], padding in [0, 8], block_rows "
                  "dividing tile with tile * block_rows <= 1024");
  if (KI.InMacro)
    return reject(E, "macro",
                  "kernel '" + E.Target +
                      "' is defined inside a macro expansion");
  if (!KI.Syncthreads.empty() || !KI.WarpPrimitives.empty())
    return reject(E, "not-applicable",
                  "kernel '" + E.Target + "' already synchronizes its threads");
  const auto *Body = cast<clang::CompoundStmt>(K->Decl->getBody());
  std::vector<const clang::Stmt *> Stmts(Body->body_begin(), Body->body_end());
  size_t I = 0;
  // Thread-independent declarations may come first.
  for (; I < Stmts.size(); ++I) {
    const auto *DS = dyn_cast<clang::DeclStmt>(Stmts[I]);
    if (!DS || !DS->isSingleDecl())
      break;
    const auto *V = dyn_cast<clang::VarDecl>(DS->getSingleDecl());
    if (!V || !V->getInit())
      break;
    if (auto D = linearIndexDim(V->getInit(), /*ThroughHelpers=*/true)) {
      IndexVar &Slot = *D == 'x' ? P.X : *D == 'y' ? P.Y : P.X;
      if (*D == 'z' || Slot.V)
        return reject(E, "not-applicable",
                      "unexpected thread index '" + V->getName() + "'");
      Slot.V = V;
      Slot.Decl = DS;
      continue;
    }
    if (mentionsBuiltin(V->getInit(), "threadIdx") || P.X.V || P.Y.V)
      break;
  }
  if (!P.X.V || !P.Y.V)
    return reject(E, "not-applicable",
                  "no 2D thread index: expected 'x = blockIdx.x * blockDim.x "
                  "+ threadIdx.x' and the same in y");
  if (I + 1 > Stmts.size())
    return reject(E, "not-applicable", "nothing follows the thread indices");
  const auto *If = dyn_cast<clang::IfStmt>(Stmts[I]);
  if (!If || If->getElse() || If->getInit())
    return reject(E, "not-applicable",
                  "the statement after the thread indices is not a bounds "
                  "guard on both of them");
  P.Guard = If;
  const clang::Stmt *CopyS = nullptr;
  if (collectBounds(If->getCond(), false, P.X, P.Y) && P.X.Bound && P.Y.Bound &&
      I + 1 == Stmts.size()) {
    CopyS = If->getThen();
    if (const auto *CS = dyn_cast<clang::CompoundStmt>(CopyS))
      CopyS = CS->size() == 1 ? CS->body_front() : nullptr;
  } else {
    P.X.Bound = P.Y.Bound = nullptr;
    const clang::Stmt *Then = If->getThen();
    if (const auto *CS = dyn_cast<clang::CompoundStmt>(Then))
      Then = CS->size() == 1 ? CS->body_front() : nullptr;
    if (!isa_and_nonnull<clang::ReturnStmt>(Then) ||
        !collectBounds(If->getCond(), true, P.X, P.Y) || !P.X.Bound ||
        !P.Y.Bound || I + 2 != Stmts.size())
      return reject(E, "not-applicable",
                    "the guard does not bound both '" + P.X.V->getName() +
                        "' and '" + P.Y.V->getName() +
                        "' (x < n && y < m) around a single statement");
    P.EarlyReturn = true;
    CopyS = Stmts[I + 1];
  }
  P.CopyStmt = CopyS;
  const auto *Copy = dyn_cast_or_null<clang::BinaryOperator>(
      dyn_cast_or_null<clang::Expr>(CopyS));
  if (!Copy || Copy->getOpcode() != clang::BO_Assign)
    return reject(E, "not-applicable",
                  "the guarded statement is not one element copy "
                  "'out[...] = in[...]'");
  P.Copy = Copy;
  const auto *W =
      dyn_cast<clang::ArraySubscriptExpr>(Copy->getLHS()->IgnoreParens());
  std::vector<const clang::ArraySubscriptExpr *> Reads;
  std::function<void(const clang::Stmt *)> Find = [&](const clang::Stmt *S) {
    if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(S))
      Reads.push_back(A);
    for (const clang::Stmt *C : S->children())
      Find(C);
  };
  Find(Copy->getRHS());
  if (!W || Reads.size() != 1)
    return reject(E, "not-applicable",
                  "the copy must write one array element and read one");
  const clang::VarDecl *WU = unitVar(W->getIdx(), P.X, P.Y);
  const clang::VarDecl *RU = unitVar(Reads[0]->getIdx(), P.X, P.Y);
  if (!WU || !RU)
    return reject(E, "not-applicable",
                  "the indices '" + looseExprText(Ctx, W->getIdx()) +
                      "' and '" + looseExprText(Ctx, Reads[0]->getIdx()) +
                      "' are not of the form 'a * stride + b' in the two "
                      "thread indices");
  if (WU == RU)
    return reject(E, "not-applicable",
                  "the read and the write are both unit-stride in '" +
                      WU->getName() + "': nothing to transpose");
  P.ReadAlongX = RU == P.X.V;
  // Everything else in the copy must be the same in every thread.
  std::function<bool(const clang::Stmt *)> OnlyUniform =
      [&](const clang::Stmt *S) -> bool {
    if (const auto *R = dyn_cast<clang::DeclRefExpr>(S)) {
      if (R->getDecl() == P.X.V || R->getDecl() == P.Y.V)
        return true;
      const auto *V = dyn_cast<clang::VarDecl>(R->getDecl());
      return !V || isa<clang::ParmVarDecl>(V) || !V->isLocalVarDecl() ||
             (V->getInit() && isBlockUniform(V->getInit(), K->Decl));
    }
    if (const auto *X = dyn_cast<clang::Expr>(S))
      if (asBuiltinVar(X))
        return false;
    for (const clang::Stmt *C : S->children())
      if (!OnlyUniform(C))
        return false;
    return true;
  };
  if (!OnlyUniform(Copy))
    return reject(E, "not-applicable",
                  "the copy depends on per-thread values other than '" +
                      P.X.V->getName() + "' and '" + P.Y.V->getName() + "'");
  if (mentions(P.X.Bound, P.Y.V) || mentions(P.Y.Bound, P.X.V) ||
      !isBlockUniform(P.X.Bound, K->Decl) ||
      !isBlockUniform(P.Y.Bound, K->Decl))
    return reject(E, "not-applicable", "the bounds differ between threads");
  clang::QualType T = Copy->getLHS()->getType();
  P.ElemType = T.getUnqualifiedType().getAsString(Ctx.AST.getPrintingPolicy());
  if (!T->isDependentType()) {
    int64_t Bytes =
        Ctx.AST.getTypeSizeInChars(T).getQuantity() * P.Tile * (P.Tile + P.Pad);
    if (Bytes > 48 * 1024)
      return reject(E, "params",
                    "the tile needs " + Twine(Bytes) +
                        " bytes of shared memory, more than 49152");
  }
  auto First = looseStmtSpan(Ctx, Stmts[0]);
  for (size_t J = 0; J < I; ++J)
    if (Stmts[J] == P.X.Decl || Stmts[J] == P.Y.Decl) {
      First = looseStmtSpan(Ctx, Stmts[J]);
      break;
    }
  auto Last = looseStmtSpan(Ctx, Stmts.back());
  if (!First || !Last)
    return reject(E, "macro",
                  "the kernel body has statements written in a "
                  "macro expansion");
  P.RegionBegin = First->Begin.Offset;
  P.RegionEnd = Last->End.Offset;
  // Statements between the two index declarations would be reordered.
  for (size_t J = 0; J < I; ++J) {
    auto Sp = looseStmtSpan(Ctx, Stmts[J]);
    if (Sp && Sp->Begin.Offset > P.RegionBegin && Stmts[J] != P.X.Decl &&
        Stmts[J] != P.Y.Decl)
      return reject(E, "not-applicable",
                    "a declaration sits between the thread indices");
  }
  if (std::string Why = launchProblem(KI); !Why.empty())
    return reject(E, "launch", Why);
  for (const LaunchSite &L : KI.Launches) {
    std::string Why;
    if (!boundAtLaunch(Ctx, P.X.Bound, L, Why) ||
        !boundAtLaunch(Ctx, P.Y.Bound, L, Why))
      return reject(E, "launch", Why, L.Range.Begin);
  }
  P.Description =
      (Twine("2D copy '") + looseExprText(Ctx, Copy) +
       "': the read is unit-stride in '" + RU->getName() + "', the write in '" +
       WU->getName() + "'; rewrite: " + Twine(P.Tile) + "x" + Twine(P.Tile) +
       " shared tile padded by " + Twine(P.Pad) + ", blocks of " +
       Twine(P.Tile) + "x" + Twine(P.Rows))
          .str();
  return P;
}

Expected<clang::tooling::Replacements>
TransposeThroughShared::rewrite(const EditContext &Ctx, const Edit &E,
                                const Plan &P) const {
  std::string Indent = indentationAt(Ctx.Code, P.RegionBegin);
  std::string Tile = freshName(Ctx.Code, "tile");
  std::string K = freshName(Ctx.Code, "k");
  std::string T = std::to_string(P.Tile);
  std::string Rows = std::to_string(P.Rows);
  auto DeclHead = [&](const IndexVar &V) {
    auto Sp = looseStmtSpan(Ctx, V.Decl);
    auto InitSp = looseExprSpan(Ctx, V.V->getInit());
    return StringRef(Ctx.Code.substr(Sp->Begin.Offset,
                                     InitSp->Begin.Offset - Sp->Begin.Offset))
        .rtrim(" =")
        .str();
  };
  // Phase A: lanes along x; phase B: lanes along y.
  auto Phase = [&](bool LanesAlongX, const std::string &Action) {
    std::string I2 = Indent + "  ";
    std::string XE = "blockIdx.x * " + T + " + " +
                     (LanesAlongX ? std::string("threadIdx.x") : K);
    std::string YE = "blockIdx.y * " + T + " + " +
                     (LanesAlongX ? K : std::string("threadIdx.x"));
    // Keep the source order of the two declarations.
    auto XS = looseStmtSpan(Ctx, P.X.Decl), YS = looseStmtSpan(Ctx, P.Y.Decl);
    std::string XD = DeclHead(P.X) + " = " + XE + ";";
    std::string YD = DeclHead(P.Y) + " = " + YE + ";";
    std::string S = "for (int " + K + " = threadIdx.y; " + K + " < " + T +
                    "; " + K + " += " + Rows + ") {\n";
    if (XS->Begin.Offset < YS->Begin.Offset)
      S += I2 + XD + "\n" + I2 + YD + "\n";
    else
      S += I2 + YD + "\n" + I2 + XD + "\n";
    std::string Cond = looseExprText(Ctx, P.Guard->getCond());
    if (P.EarlyReturn)
      S += I2 + "if (" + Cond + ")\n" + I2 + "  continue;\n" + I2 + Action +
           "\n";
    else
      S += I2 + "if (" + Cond + ")\n" + I2 + "  " + Action + "\n";
    S += Indent + "}";
    return S;
  };
  // The tile holds element (y, x) at [y - y0][x - x0].
  std::string Lhs = looseExprText(Ctx, P.Copy->getLHS());
  std::string Rhs = looseExprText(Ctx, P.Copy->getRHS());
  std::string AlongX = Tile + "[" + K + "][threadIdx.x]";
  std::string AlongY = Tile + "[threadIdx.x][" + K + "]";
  std::string First, Second;
  if (P.ReadAlongX) {
    First = Phase(true, AlongX + " = " + Rhs + ";");
    Second = Phase(false, Lhs + " = " + AlongY + ";");
  } else {
    First = Phase(false, AlongY + " = " + Rhs + ";");
    Second = Phase(true, Lhs + " = " + AlongX + ";");
  }
  std::string Text = sharedTileDecl(P.ElemType, Tile, {P.Tile, P.Tile}, P.Pad) +
                     "\n" + Indent + First + "\n" + Indent +
                     "__syncthreads();\n" + Indent + Second;

  clang::tooling::Replacements Repls;
  if (Error Err = addReplacement(
          Repls,
          clang::tooling::Replacement(Ctx.FileName, P.RegionBegin,
                                      P.RegionEnd - P.RegionBegin, Text),
          E))
    return std::move(Err);
  for (const LaunchSite &L : P.Kernel.Info->Launches) {
    std::string Why;
    std::string NX = *boundAtLaunch(Ctx, P.X.Bound, L, Why);
    std::string NY = *boundAtLaunch(Ctx, P.Y.Bound, L, Why);
    std::string Grid = "dim3(" + ceilDivText(NX, P.Tile) + ", " +
                       ceilDivText(NY, P.Tile) + ")";
    if (Error Err =
            addReplacement(Repls, replaceSpan(Ctx, L.GridRange, Grid), E))
      return std::move(Err);
    if (Error Err = addReplacement(
            Repls,
            replaceSpan(Ctx, L.BlockRange, "dim3(" + T + ", " + Rows + ")"), E))
      return std::move(Err);
  }
  return Repls;
}

} // namespace

std::unique_ptr<Transform> createTransposeThroughSharedTransform() {
  return std::make_unique<TransposeThroughShared>();
}

} // namespace optiml
