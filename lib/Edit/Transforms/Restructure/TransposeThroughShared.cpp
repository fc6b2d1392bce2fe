//===- TransposeThroughShared.cpp - Both sides of a transpose coalesced ---===//
//
// Pattern: a 2D kernel (x and y thread indices behind a bounds guard) whose
// one statement copies an element read at an index unit-stride in one
// thread coordinate to an index unit-stride in the other:
//   out[c * rows + r] = in[r * cols + c];   (or the reverse)
// One of the two global accesses then strides across a warp. The indices
// are read through pure index helpers (`in[offset(r, c, cols)]`) and local
// pointers or offsets declared before the copy (`const float *src_row = src
// + r * cols; ... src_row[c]`); a thread index may be scaled by a constant
// or a template parameter in place of blockDim (`blockIdx.x * BX +
// threadIdx.x`) when every launch's block has that size. The element may be
// a class copied by its trivial assignment (`float2`); a batch over
// blockIdx.z keeps each launch's grid z. Declarations after the indices
// that do not use them move before the tile.
//
// Rewrite: a block of tile x block_rows threads moves a tile x tile square
// through a padded shared tile (padding avoids bank conflicts on the
// transposed side): a first phase where consecutive lanes take consecutive
// elements of the unit-stride read, a barrier, and a second phase where
// consecutive lanes take consecutive elements of the write; each phase
// repeats the local declarations its side of the copy uses. Launches get a
// 2D grid of tiles that covers both bounds, so every launch's grid must be
// shown to reach them (gridCoverageProblem(), along x and y): a grid that
// stops short (`dim3(m / 16, n / 16)`) would have the tiles copy elements
// the original left alone.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/SideEffects.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "SharedStaging.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <deque>
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
  /// The block size the index is scaled by in place of blockDim (a constant
  /// or a template parameter), or null.
  const clang::Expr *Scale = nullptr;
};

struct Plan {
  ResolvedKernel Kernel;
  IndexVar X, Y;
  const clang::IfStmt *Guard = nullptr;
  bool EarlyReturn = false;
  /// Declarations after the first thread index that do not use the
  /// indices, moved before the tile in source order.
  std::vector<const clang::Stmt *> Hoisted;
  /// Local declarations between the guard and the copy (pointers to a row,
  /// offsets), in source order.
  std::vector<const clang::DeclStmt *> Locals;
  /// out[...] = f(in[...]): a built-in assignment, or a class's trivial
  /// one (`float2`); Lhs and Rhs are its two sides.
  const clang::Expr *Copy = nullptr, *Lhs = nullptr, *Rhs = nullptr;
  /// The kernel reads blockIdx.z or gridDim.z: the tiled launches keep the
  /// grid's z (GridZ, per launch; empty where it is 1).
  bool KeepGridZ = false;
  std::vector<std::string> GridZ;
  /// The kernel's pointer parameters the copy writes through and reads
  /// through (null when an array is not reached from one).
  const clang::ParmVarDecl *Dst = nullptr, *Src = nullptr;
  bool ReadAlongX = true; ///< the read is unit-stride in x
  int64_t Tile = 32, Pad = 1, Rows = 8;
  std::string ElemType;
  unsigned RegionBegin = 0, RegionEnd = 0;
  std::string Description;
};

/// The thread dimension and scale of `blockIdx.D * S + threadIdx.D` with S
/// an integer constant or a non-type template parameter (either operand
/// order, through casts); blockDim.D itself is linearIndexDim's.
std::optional<std::pair<char, const clang::Expr *>>
scaledIndexDim(const clang::Expr *E) {
  const auto *Add = dyn_cast<clang::BinaryOperator>(stripCasts(E));
  if (!Add || Add->getOpcode() != clang::BO_Add)
    return std::nullopt;
  for (int Swap = 0; Swap < 2; ++Swap) {
    auto T = asBuiltinVar(stripCasts(Swap ? Add->getLHS() : Add->getRHS()));
    const auto *Mul = dyn_cast<clang::BinaryOperator>(
        stripCasts(Swap ? Add->getRHS() : Add->getLHS()));
    if (!T || T->Var != "threadIdx" || !Mul ||
        Mul->getOpcode() != clang::BO_Mul)
      continue;
    for (int M = 0; M < 2; ++M) {
      auto B = asBuiltinVar(stripCasts(M ? Mul->getRHS() : Mul->getLHS()));
      const clang::Expr *S = stripCasts(M ? Mul->getLHS() : Mul->getRHS());
      if (!B || B->Var != "blockIdx" || B->Dim != T->Dim)
        continue;
      const auto *R = dyn_cast<clang::DeclRefExpr>(S);
      if (isa<clang::IntegerLiteral>(S) ||
          (R &&
           isa<clang::NonTypeTemplateParmDecl, clang::VarDecl>(R->getDecl())))
        return std::make_pair(T->Dim, S);
    }
  }
  return std::nullopt;
}

/// The operands of an index once sums, casts, pure index helpers
/// (`offset(r, c, ld)`: its parameters stand for the call's arguments) and
/// the copy's local declarations are looked through: `src_row[c]` with
/// `src_row = src + r * cols` has the terms src, r * cols and c.
class IndexTerms {
public:
  IndexTerms(const clang::ASTContext &AST,
             const std::vector<const clang::DeclStmt *> &Locals)
      : AST(AST) {
    for (const clang::DeclStmt *D : Locals)
      if (const auto *V = dyn_cast<clang::VarDecl>(D->getSingleDecl()))
        Inits[V] = V->getInit();
  }

  /// The terms of the address `Base[Index]`.
  void collect(const clang::ArraySubscriptExpr *A) {
    Terms.clear();
    add(A->getBase(), nullptr);
    add(A->getIdx(), nullptr);
  }

  /// The variable of \p X, \p Y the index grows with by one: one term is
  /// that variable, no other term mentions it, another mentions the other.
  const clang::VarDecl *unitVar(const IndexVar &X, const IndexVar &Y) const {
    for (const IndexVar *V : {&X, &Y}) {
      const IndexVar *O = V == &X ? &Y : &X;
      unsigned Exact = 0;
      bool Other = false, Spread = false;
      for (const Term &T : Terms) {
        if (declOf(T.E) == V->V) {
          ++Exact;
          continue;
        }
        Spread |= mentionsVia(T.E, T.F, V->V);
        Other |= mentionsVia(T.E, T.F, O->V);
      }
      if (Exact == 1 && !Spread && Other)
        return V->V;
    }
    return nullptr;
  }

  /// The kernel's pointer parameter among the terms, when exactly one term
  /// is one (read in the kernel itself, not inside a helper).
  const clang::ParmVarDecl *pointerParam() const {
    const clang::ParmVarDecl *Found = nullptr;
    for (const Term &T : Terms) {
      const auto *P = dyn_cast_or_null<clang::ParmVarDecl>(declOf(T.E));
      if (T.F || !P || !P->getType()->isPointerType())
        continue;
      if (Found)
        return nullptr;
      Found = P;
    }
    return Found;
  }

private:
  /// A helper call being looked through: its parameters are its arguments.
  struct Frame {
    const clang::FunctionDecl *FD;
    const clang::CallExpr *Call;
    const Frame *Parent;
  };
  struct Term {
    const clang::Expr *E;
    const Frame *F;
  };

  /// The argument a parameter of \p F's helper stands for, or null.
  static const clang::Expr *argFor(const clang::Expr *E, const Frame *F) {
    const auto *P = dyn_cast_or_null<clang::ParmVarDecl>(declOf(E));
    if (!F || !P || P->getDeclContext() != F->FD ||
        P->getFunctionScopeIndex() >= F->Call->getNumArgs())
      return nullptr;
    return F->Call->getArg(P->getFunctionScopeIndex());
  }

  const clang::Expr *localInit(const clang::Expr *E, const Frame *F) const {
    const auto *V = dyn_cast_or_null<clang::VarDecl>(declOf(E));
    auto It = V && !F ? Inits.find(V) : Inits.end();
    return It == Inits.end() ? nullptr : It->second;
  }

  void add(const clang::Expr *E, const Frame *F) {
    E = stripCasts(E);
    if (const auto *B = dyn_cast<clang::BinaryOperator>(E);
        B && B->getOpcode() == clang::BO_Add) {
      add(B->getLHS(), F);
      add(B->getRHS(), F);
      return;
    }
    if (const auto *U = dyn_cast<clang::UnaryOperator>(E);
        U && U->getOpcode() == clang::UO_AddrOf)
      if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(
              U->getSubExpr()->IgnoreParens())) {
        add(A->getBase(), F);
        add(A->getIdx(), F);
        return;
      }
    if (const clang::Expr *Arg = argFor(E, F))
      return add(Arg, F->Parent);
    if (const clang::Expr *Init = localInit(E, F))
      return add(Init, nullptr);
    if (const auto *C = dyn_cast<clang::CallExpr>(E)) {
      const clang::FunctionDecl *FD = nullptr;
      if (const clang::Expr *Ret = indexHelperReturn(C, AST, FD)) {
        Frames.push_back({FD, C, F});
        return add(Ret, &Frames.back());
      }
    }
    Terms.push_back({E, F});
  }

  /// Whether \p E, read in frame \p F, mentions \p V.
  bool mentionsVia(const clang::Stmt *S, const Frame *F,
                   const clang::VarDecl *V) const {
    if (const auto *E = dyn_cast<clang::Expr>(S)) {
      if (const clang::Expr *Arg = argFor(E, F))
        return mentionsVia(Arg, F->Parent, V);
      if (const clang::Expr *Init = localInit(E, F))
        return mentionsVia(Init, nullptr, V);
      if (!F && declOf(E) == V)
        return true;
    }
    for (const clang::Stmt *C : S->children())
      if (C && mentionsVia(C, F, V))
        return true;
    return false;
  }

  const clang::ASTContext &AST;
  llvm::DenseMap<const clang::VarDecl *, const clang::Expr *> Inits;
  std::deque<Frame> Frames;
  std::vector<Term> Terms;
};

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
    int64_t Rows = P->Rows; // 8, or fewer under a smaller __launch_bounds__
    S.Params["block_rows"] = Rows;
    A.Suggestions = {S};
    // 64 x 64 tiles, 4 rows a pass: 5% faster on the suite's transpose
    // (H100, run 2026-12-06-sweep), where the launch takes them.
    Edit W = S;
    W.Params["tile"] = int64_t(64);
    W.Params["block_rows"] = std::max<int64_t>(1, Rows / 2);
    if (auto Wide = analyze(Ctx, W))
      A.Suggestions.push_back(W);
    else
      consumeError(Wide.takeError());
    return A;
  }

private:
  Expected<Plan> analyze(const EditContext &Ctx, const Edit &E) const override;
  Expected<clang::tooling::Replacements>
  rewrite(const EditContext &Ctx, const Edit &E, const Plan &P) const override;
};

/// The span of \p S as written when the macros inside it are constants
/// (onlyConstantMacros(): the text is what the compiler saw, also where a
/// macro ends it, as in `y < ROWS`); else looseExprSpan()'s.
std::optional<SourceSpan> writtenSpan(const EditContext &Ctx,
                                      const clang::Stmt *S) {
  if (auto Sp = constantMacroSpan(Ctx, S))
    return Sp;
  return looseExprSpan(Ctx, S);
}
/// writtenSpan() with the `;` that ends a statement.
std::optional<SourceSpan> writtenStmtSpan(const EditContext &Ctx,
                                          const clang::Stmt *S) {
  auto Sp = writtenSpan(Ctx, S);
  return Sp ? std::optional<SourceSpan>(withSemicolon(Ctx, *Sp)) : std::nullopt;
}
/// The text of writtenSpan() (empty without one).
std::string writtenText(const EditContext &Ctx, const clang::Stmt *S) {
  auto Sp = writtenSpan(Ctx, S);
  return Sp ? Ctx.Code.slice(Sp->Begin.Offset, Sp->End.Offset).str() : "";
}

/// The text a launch passes for \p Bound: boundAtLaunch()'s, or a constant
/// as written in the kernel (`ROWS`); nothing, with \p Why, without one.
std::optional<std::string> boundText(const EditContext &Ctx,
                                     const clang::Expr *Bound,
                                     const LaunchSite &L, std::string &Why) {
  std::optional<std::string> T = boundAtLaunch(Ctx, Bound, L, Why);
  if (T && T->empty())
    T = writtenText(Ctx, Bound);
  if (T && T->empty()) {
    Why = "the bound at " + where(Ctx, Bound) +
          " is written with a macro that is not a constant";
    return std::nullopt;
  }
  return T;
}

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

/// The thread indices among the leading declarations of \p Stmts (from
/// \p I on; \p I ends at the first statement after them); else the reason.
std::string matchIndices(const std::vector<const clang::Stmt *> &Stmts,
                         size_t &I, Plan &P) {
  // Thread-independent declarations may come first and in between.
  for (; I < Stmts.size(); ++I) {
    const auto *DS = dyn_cast<clang::DeclStmt>(Stmts[I]);
    if (!DS || !DS->isSingleDecl())
      break;
    const auto *V = dyn_cast<clang::VarDecl>(DS->getSingleDecl());
    if (!V || !V->getInit())
      break;
    std::optional<char> D =
        linearIndexDim(V->getInit(), /*ThroughHelpers=*/true);
    const clang::Expr *Scale = nullptr;
    if (auto Scaled = !D ? scaledIndexDim(V->getInit()) : std::nullopt) {
      D = Scaled->first;
      Scale = Scaled->second;
    }
    if (D) {
      IndexVar &Slot = *D == 'x' ? P.X : *D == 'y' ? P.Y : P.X;
      if (*D == 'z' || Slot.V)
        return ("unexpected thread index '" + V->getName() + "'").str();
      Slot.V = V;
      Slot.Decl = DS;
      Slot.Scale = Scale;
      continue;
    }
    // Between and after the indices, declarations that do not use them
    // (`int b = blockIdx.z;`) move before the tile.
    if (mentionsBuiltin(V->getInit(), "threadIdx") ||
        (P.X.V && mentions(V->getInit(), P.X.V)) ||
        (P.Y.V && mentions(V->getInit(), P.Y.V)))
      break;
    if (mayHaveSideEffects(V->getInit(), V->getASTContext()))
      return ("the declaration of '" + V->getName() +
              "' changes something, and the tiled launch runs it in fewer "
              "threads")
          .str();
  }
  if (!P.X.V || !P.Y.V)
    return "no 2D thread index: expected 'x = blockIdx.x * blockDim.x + "
           "threadIdx.x' and the same in y";
  return "";
}

/// Why \p DS, a statement before the copy, cannot be repeated in each phase:
/// it must declare one pointer or integer from values alone (no loads,
/// calls with effects, or later writes); empty if fine.
std::string localProblem(const EditContext &Ctx, const clang::Stmt *S,
                         const clang::Stmt *Body) {
  const auto *DS = dyn_cast<clang::DeclStmt>(S);
  const auto *V = DS && DS->isSingleDecl()
                      ? dyn_cast<clang::VarDecl>(DS->getSingleDecl())
                      : nullptr;
  std::string Text = StringRef(looseExprText(Ctx, S)).rtrim(" ;").str();
  if (!V || !V->getInit() || !V->hasLocalStorage() ||
      !(V->getType()->isPointerType() || V->getType()->isIntegerType()))
    return "the statement '" + Text +
           "' before the copy is not the declaration of one local pointer "
           "or integer";
  // `&base[i]` computes an address without loading it.
  std::vector<const clang::Expr *> Parts = {V->getInit()};
  if (const auto *U =
          dyn_cast<clang::UnaryOperator>(V->getInit()->IgnoreParenImpCasts());
      U && U->getOpcode() == clang::UO_AddrOf)
    if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(
            U->getSubExpr()->IgnoreParens()))
      Parts = {A->getBase(), A->getIdx()};
  if (llvm::any_of(Parts, [&](const clang::Expr *X) {
        // Block coordinates are values; the copy may use only those
        // the tiled launch keeps (onlyUniform()).
        return mayHaveSideEffects(X, Ctx.AST) ||
               readsOrWritesMemory(X, &Ctx.AST, {false, true});
      }))
    return "the declaration '" + Text +
           "' before the copy reads memory or calls a function; only "
           "values computed from the indices are repeated in each phase";
  if (writtenVars(Body).contains(V))
    return ("'" + V->getName() +
            "' is written after its declaration, so it cannot be repeated "
            "as declared in each phase")
        .str();
  return "";
}

/// Whether \p S copies a value with `=`: the built-in assignment, or a
/// class's trivial copy or move assignment (`float2`, a struct of values),
/// which copies its bytes alike; sets P.Copy and its sides.
bool assignmentSides(const clang::Stmt *S, Plan &P) {
  if (const auto *B = dyn_cast<clang::BinaryOperator>(S);
      B && B->getOpcode() == clang::BO_Assign) {
    P.Copy = B;
    P.Lhs = B->getLHS();
    P.Rhs = B->getRHS();
    return true;
  }
  const auto *C = dyn_cast<clang::CXXOperatorCallExpr>(S);
  const auto *M =
      C ? dyn_cast_or_null<clang::CXXMethodDecl>(C->getDirectCallee())
        : nullptr;
  if (!M || C->getOperator() != clang::OO_Equal || C->getNumArgs() != 2 ||
      !M->isTrivial() ||
      !(M->isCopyAssignmentOperator() || M->isMoveAssignmentOperator()))
    return false;
  P.Copy = C;
  P.Lhs = C->getArg(0);
  P.Rhs = C->getArg(1);
  return true;
}

/// The guard after the indices (Stmts[I]), the local declarations it guards
/// and the copy; else the reason.
std::string matchGuardedCopy(const EditContext &Ctx,
                             const std::vector<const clang::Stmt *> &Stmts,
                             size_t I, const clang::Stmt *KernelBody, Plan &P) {
  const auto *If =
      I < Stmts.size() ? dyn_cast<clang::IfStmt>(Stmts[I]) : nullptr;
  if (!If || If->getElse() || If->getInit())
    return "the statement after the thread indices is not a bounds guard on "
           "both of them";
  P.Guard = If;
  std::vector<const clang::Stmt *> Guarded;
  if (collectBounds(If->getCond(), false, P.X, P.Y) && P.X.Bound && P.Y.Bound &&
      I + 1 == Stmts.size()) {
    if (const auto *CS = dyn_cast<clang::CompoundStmt>(If->getThen()))
      Guarded.assign(CS->body_begin(), CS->body_end());
    else
      Guarded.push_back(If->getThen());
  } else {
    P.X.Bound = P.Y.Bound = nullptr;
    const clang::Stmt *Then = If->getThen();
    if (const auto *CS = dyn_cast<clang::CompoundStmt>(Then))
      Then = CS->size() == 1 ? CS->body_front() : nullptr;
    if (!isa_and_nonnull<clang::ReturnStmt>(Then) ||
        !collectBounds(If->getCond(), true, P.X, P.Y) || !P.X.Bound ||
        !P.Y.Bound || I + 2 > Stmts.size())
      return ("the guard does not bound both '" + P.X.V->getName() + "' and '" +
              P.Y.V->getName() + "' (x < n && y < m) around a single statement")
          .str();
    P.EarlyReturn = true;
    Guarded.assign(Stmts.begin() + I + 1, Stmts.end());
  }
  bool IsCopy = !Guarded.empty() && assignmentSides(Guarded.back(), P);
  if (const auto *Op = Guarded.empty() ? nullptr
                                       : dyn_cast<clang::CXXOperatorCallExpr>(
                                             Guarded.back());
      !IsCopy && Op && Op->getOperator() == clang::OO_Equal &&
      Op->getDirectCallee())
    return "the copy calls '" +
           Op->getDirectCallee()->getQualifiedNameAsString() +
           "', which does more than copy the element";
  // Statements before the copy other than pointer or integer declarations
  // (an accumulator, a loop) are not a copy's.
  auto Local = [](const clang::Stmt *S) {
    const auto *DS = dyn_cast<clang::DeclStmt>(S);
    const auto *V = DS && DS->isSingleDecl()
                        ? dyn_cast<clang::VarDecl>(DS->getSingleDecl())
                        : nullptr;
    return V &&
           (V->getType()->isPointerType() || V->getType()->isIntegerType());
  };
  if (!IsCopy || !std::all_of(Guarded.begin(), Guarded.end() - 1, Local))
    return "the guarded statement is not one element copy 'out[...] = "
           "in[...]'";
  for (size_t J = 0; J + 1 < Guarded.size(); ++J) {
    if (std::string Why = localProblem(Ctx, Guarded[J], KernelBody);
        !Why.empty())
      return Why;
    P.Locals.push_back(cast<clang::DeclStmt>(Guarded[J]));
  }
  return "";
}

/// blockIdx.z or gridDim.z, which keep their values when the launches keep
/// the grid's z.
bool isGridZ(const BuiltinVarRef &B) {
  return B.Dim == 'z' && (B.Var == "blockIdx" || B.Var == "gridDim");
}

/// Whether everything \p S uses is the same in every thread, and in the
/// tiled launch, but the indices: locals (the copy's, or those declared
/// before the indices) are followed to their initializers; of the builtin
/// variables only isGridZ()'s; calls must not read thread coordinates
/// inside. A block coordinate that the tiled launch renumbers goes in
/// \p Block.
bool onlyUniform(const clang::Stmt *S, const Plan &P,
                 std::optional<BuiltinVarRef> &Block, unsigned Depth = 0) {
  if (const auto *R = dyn_cast<clang::DeclRefExpr>(S)) {
    if (R->getDecl() == P.X.V || R->getDecl() == P.Y.V)
      return true;
    const auto *V = dyn_cast<clang::VarDecl>(R->getDecl());
    if (!V || isa<clang::ParmVarDecl>(V) || !V->isLocalVarDecl())
      return true;
    return V->getInit() && Depth < 16 &&
           !writtenVars(P.Kernel.Decl->getBody()).contains(V) &&
           onlyUniform(V->getInit(), P, Block, Depth + 1);
  }
  if (const auto *X = dyn_cast<clang::Expr>(S))
    if (auto B = asBuiltinVar(X)) {
      if (!isGridZ(*B) && B->Var != "threadIdx")
        Block = B;
      return isGridZ(*B);
    }
  if (const auto *C = dyn_cast<clang::CallExpr>(S))
    if (const clang::FunctionDecl *FD = C->getDirectCallee();
        FD && FD->getBody() && mentionsBuiltin(FD->getBody()))
      return false;
  for (const clang::Stmt *C : S->children())
    if (C && !onlyUniform(C, P, Block, Depth))
      return false;
  return true;
}

/// Whether \p S reads isGridZ()'s builtins.
bool readsGridZ(const clang::Stmt *S) {
  if (const auto *X = dyn_cast<clang::Expr>(S))
    if (auto B = asBuiltinVar(X))
      return isGridZ(*B);
  return llvm::any_of(S->children(),
                      [](const clang::Stmt *C) { return C && readsGridZ(C); });
}

/// The copy writes one element and reads one, unit-stride in different
/// indices (sets P.ReadAlongX), from values uniform but for the indices;
/// else the reason.
std::string checkCopy(const EditContext &Ctx, Plan &P, std::string &Along) {
  const clang::Expr *Copy = P.Copy;
  const auto *W = dyn_cast<clang::ArraySubscriptExpr>(P.Lhs->IgnoreParens());
  std::vector<const clang::ArraySubscriptExpr *> Reads;
  std::function<void(const clang::Stmt *)> Find = [&](const clang::Stmt *S) {
    if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(S))
      Reads.push_back(A);
    for (const clang::Stmt *C : S->children())
      if (C)
        Find(C);
  };
  Find(P.Rhs);
  if (!W || Reads.size() != 1)
    return "the copy must write one array element and read one";
  if (mayHaveSideEffects(P.Rhs, Ctx.AST) ||
      mayHaveSideEffects(W->getBase(), Ctx.AST) ||
      mayHaveSideEffects(W->getIdx(), Ctx.AST))
    return "the copy '" + looseExprText(Ctx, Copy) +
           "' changes something besides the element it writes";
  IndexTerms Terms(Ctx.AST, P.Locals);
  Terms.collect(W);
  const clang::VarDecl *WU = Terms.unitVar(P.X, P.Y);
  P.Dst = Terms.pointerParam();
  Terms.collect(Reads[0]);
  const clang::VarDecl *RU = Terms.unitVar(P.X, P.Y);
  P.Src = Terms.pointerParam();
  if (!WU || !RU)
    return "the indices '" + looseExprText(Ctx, W->getIdx()) + "' and '" +
           looseExprText(Ctx, Reads[0]->getIdx()) +
           "' are not of the form 'a * stride + b' in the two thread indices";
  if (WU == RU)
    return ("the read and the write are both unit-stride in '" + WU->getName() +
            "': nothing to transpose")
        .str();
  P.ReadAlongX = RU == P.X.V;
  std::optional<BuiltinVarRef> Block;
  if (!onlyUniform(P.Lhs, P, Block) || !onlyUniform(P.Rhs, P, Block))
    return Block ? ("the copy depends on '" + Block->Var + "." +
                    Twine(Block->Dim) +
                    "', which the tiled launch changes (of the builtin "
                    "variables only blockIdx.z and gridDim.z keep their "
                    "values)")
                       .str()
                 : ("the copy depends on per-thread values other than '" +
                    P.X.V->getName() + "' and '" + P.Y.V->getName() + "'")
                       .str();
  Along = ("the read is unit-stride in '" + RU->getName() +
           "', the write in '" + WU->getName() + "'")
              .str();
  return "";
}

/// The variable a pointer argument points into: `a`, `a + k`, `&a[k]`,
/// through casts and parentheses; else null.
const clang::ValueDecl *pointedArray(const clang::Expr *E) {
  E = E->IgnoreParenCasts();
  if (const auto *B = dyn_cast<clang::BinaryOperator>(E);
      B && B->isAdditiveOp())
    return pointedArray(B->getLHS()->getType()->isPointerType() ? B->getLHS()
                                                                : B->getRHS());
  if (const auto *U = dyn_cast<clang::UnaryOperator>(E);
      U && U->getOpcode() == clang::UO_AddrOf)
    if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(
            U->getSubExpr()->IgnoreParens()))
      return pointedArray(A->getBase());
  if (const auto *R = dyn_cast<clang::DeclRefExpr>(E))
    return R->getDecl();
  return nullptr;
}

/// The launch that passes pointers into one array as both the copy's
/// source and its destination (an in-place transpose: the original's result
/// then depends on the order threads run in, and the tiled copy's order is
/// another); else "".
std::string aliasProblem(const EditContext &Ctx, const KernelInfo &KI,
                         const Plan &P) {
  if (!P.Dst || !P.Src || P.Dst == P.Src)
    return P.Dst && P.Dst == P.Src
               ? "the copy reads and writes the same array '" +
                     P.Dst->getName().str() + "'"
               : "";
  for (const LaunchSite &L : KI.Launches) {
    const clang::CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
    unsigned D = P.Dst->getFunctionScopeIndex(),
             S = P.Src->getFunctionScopeIndex();
    if (!Call || D >= Call->getNumArgs() || S >= Call->getNumArgs())
      continue;
    const clang::ValueDecl *A = pointedArray(Call->getArg(D));
    if (A && A == pointedArray(Call->getArg(S)))
      return (L.Id + " passes '" + A->getName() + "' as both '" +
              P.Src->getName() + "' (read) and '" + P.Dst->getName() +
              "' (written): a transpose in place depends on the order "
              "threads run in, and the tiled copy's order differs")
          .str();
  }
  return "";
}

/// The value \p Scale (a constant or a template parameter of the kernel)
/// has in the instantiation \p Call launches.
std::optional<int64_t> scaleAt(const clang::ASTContext &AST,
                               const clang::Expr *Scale,
                               const clang::CUDAKernelCallExpr *Call) {
  const auto *R = dyn_cast<clang::DeclRefExpr>(Scale);
  const auto *NT =
      R ? dyn_cast<clang::NonTypeTemplateParmDecl>(R->getDecl()) : nullptr;
  if (!NT)
    return intValue(Scale, AST);
  const clang::FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
  const clang::FunctionTemplateDecl *Primary =
      FD ? FD->getPrimaryTemplate() : nullptr;
  const clang::TemplateArgumentList *Args =
      FD ? FD->getTemplateSpecializationArgs() : nullptr;
  if (!Primary || !Args || NT->isParameterPack() ||
      NT->getDepth() != Primary->getTemplateParameters()->getDepth() ||
      NT->getIndex() >= Args->size() ||
      Args->get(NT->getIndex()).getKind() != clang::TemplateArgument::Integral)
    return std::nullopt;
  return Args->get(NT->getIndex()).getAsIntegral().getExtValue();
}

/// An index scaled by a constant in place of blockDim counts every element
/// once only when each launch's block has that size; else the reason.
std::string scaleProblem(const EditContext &Ctx, const KernelInfo &KI,
                         const IndexVar &V, char D) {
  if (!V.Scale)
    return "";
  for (const LaunchSite &L : KI.Launches) {
    const clang::CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
    std::optional<int64_t> Want = scaleAt(Ctx.AST, V.Scale, Call);
    std::optional<int64_t> Have = blockDimAt(Ctx.AST, Call, D);
    if (!Want || !Have || *Want != *Have)
      return ("'" + V.V->getName() + "' counts blocks of '" +
              looseExprText(Ctx, V.Scale) + "' threads in " + Twine(D) +
              ", but the block of " + L.Id + " ('" + L.Block +
              "') is not known to have that size there")
          .str();
  }
  return "";
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
  // The default: 8 rows a pass, fewer under a smaller __launch_bounds__.
  std::optional<int64_t> MaxThreads = launchBoundsThreads(K->Decl, Ctx.AST);
  int64_t DefaultRows = 8;
  while (MaxThreads && DefaultRows > 1 && P.Tile * DefaultRows > *MaxThreads)
    DefaultRows /= 2;
  P.Rows = E.getInt("block_rows").value_or(DefaultRows);
  if (P.Tile < 8 || P.Tile > 64 || P.Pad < 0 || P.Pad > 8 || P.Rows < 1 ||
      P.Tile % P.Rows || P.Tile * P.Rows > 1024)
    return reject(E, "params",
                  "params: tile in [8, 64], padding in [0, 8], block_rows "
                  "dividing tile with tile * block_rows <= 1024");
  if (MaxThreads && P.Tile * P.Rows > *MaxThreads)
    return reject(E, "params",
                  "params: tile * block_rows = " + Twine(P.Tile * P.Rows) +
                      " threads exceed the kernel's __launch_bounds__(" +
                      Twine(*MaxThreads) + "): its launches would fail");
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
  std::string Along;
  if (std::string Why = matchIndices(Stmts, I, P); !Why.empty())
    return reject(E, "not-applicable", Why);
  if (I + 1 > Stmts.size())
    return reject(E, "not-applicable", "nothing follows the thread indices");
  if (std::string Why = matchGuardedCopy(Ctx, Stmts, I, Body, P); !Why.empty())
    return reject(E, "not-applicable", Why);
  if (std::string Why = checkCopy(Ctx, P, Along); !Why.empty())
    return reject(E, "not-applicable", Why);
  const clang::Expr *Copy = P.Copy;
  if (mentions(P.X.Bound, P.Y.V) || mentions(P.Y.Bound, P.X.V) ||
      !isBlockUniform(P.X.Bound, K->Decl) ||
      !isBlockUniform(P.Y.Bound, K->Decl))
    return reject(E, "not-applicable", "the bounds differ between threads");
  clang::QualType T = P.Lhs->getType();
  P.ElemType = T.getUnqualifiedType().getAsString(Ctx.AST.getPrintingPolicy());
  if (const auto *RD = T->getAsCXXRecordDecl();
      RD && !RD->hasTrivialDefaultConstructor())
    return reject(E, "not-applicable",
                  "'" + P.ElemType +
                      "' has a default constructor that does something, "
                      "so a __shared__ tile of it cannot be declared");
  if (!T->isDependentType()) {
    int64_t Bytes =
        Ctx.AST.getTypeSizeInChars(T).getQuantity() * P.Tile * (P.Tile + P.Pad);
    if (Bytes > 48 * 1024)
      return reject(E, "params",
                    "the tile needs " + Twine(Bytes) +
                        " bytes of shared memory, more than 49152");
  }
  size_t FirstIndex = 0;
  while (Stmts[FirstIndex] != P.X.Decl && Stmts[FirstIndex] != P.Y.Decl)
    ++FirstIndex;
  auto First = looseStmtSpan(Ctx, Stmts[FirstIndex]);
  for (size_t J = FirstIndex + 1; J < I; ++J)
    if (Stmts[J] != P.X.Decl && Stmts[J] != P.Y.Decl)
      P.Hoisted.push_back(Stmts[J]);
  auto Last = writtenStmtSpan(Ctx, Stmts.back());
  if (!First || !Last)
    return reject(E, "macro",
                  "the kernel body has statements written in a "
                  "macro expansion");
  P.RegionBegin = First->Begin.Offset;
  P.RegionEnd = Last->End.Offset;
  bool Written = llvm::all_of(P.Locals, [&](const clang::DeclStmt *L) {
    return writtenStmtSpan(Ctx, L).has_value();
  });
  for (const clang::Stmt *S : P.Hoisted)
    Written = Written && writtenStmtSpan(Ctx, S).has_value();
  for (const clang::Stmt *S : {P.Guard->getCond(), P.Lhs, P.Rhs})
    Written = Written && !writtenText(Ctx, S).empty();
  if (!Written)
    return reject(E, "macro",
                  "the kernel body has statements written in a "
                  "macro expansion");
  if (std::string Why = launchProblem(KI); !Why.empty())
    return reject(E, "launch", Why);
  for (const LaunchSite &L : KI.Launches) {
    std::string Why;
    if (!boundText(Ctx, P.X.Bound, L, Why) ||
        !boundText(Ctx, P.Y.Bound, L, Why))
      return reject(E, "launch", Why, L.Range.Begin);
  }
  for (auto [V, D] : {std::pair(&P.X, 'x'), std::pair(&P.Y, 'y')})
    if (std::string Why = scaleProblem(Ctx, KI, *V, D); !Why.empty())
      return reject(E, "launch", Why);
  if (std::string Why = aliasProblem(Ctx, KI, P); !Why.empty())
    return reject(E, "not-applicable", Why);
  for (const LaunchSite &L : KI.Launches)
    for (auto [V, Dim] : {std::pair(&P.X, 0u), std::pair(&P.Y, 1u)})
      if (std::string Why = gridCoverageProblem(Ctx, L, V->Bound, Dim);
          !Why.empty())
        return reject(
            E, "launch",
            "launch " + L.Id +
                " is not shown to run a thread for "
                "every " +
                std::string(1, "xy"[Dim]) + " below the guard's bound '" +
                writtenText(Ctx, V->Bound) + "': " + Why +
                "; the tiled launch's grid covers the whole bound, so "
                "an original grid that stops short would have the "
                "copy write elements the original left alone",
            L.Range.Begin);
  P.KeepGridZ = readsGridZ(Body);
  for (const LaunchSite &L : KI.Launches)
    P.GridZ.push_back(P.KeepGridZ ? gridZText(Ctx, L) : "");
  P.Description = (Twine("2D copy '") + writtenText(Ctx, Copy) + "': " + Along +
                   "; rewrite: " + Twine(P.Tile) + "x" + Twine(P.Tile) +
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
  // The locals \p Side of the copy uses (through one another), as written.
  auto LocalsFor = [&](const clang::Expr *Side, const std::string &I2) {
    std::vector<bool> Need(P.Locals.size());
    for (size_t J = P.Locals.size(); J-- > 0;) {
      const auto *V = cast<clang::VarDecl>(P.Locals[J]->getSingleDecl());
      Need[J] = mentions(Side, V);
      for (size_t L = J + 1; L < P.Locals.size() && !Need[J]; ++L)
        Need[J] = Need[L] && mentions(P.Locals[L], V);
    }
    std::string S;
    for (size_t J = 0; J < P.Locals.size(); ++J)
      if (Need[J]) {
        auto Sp = writtenStmtSpan(Ctx, P.Locals[J]);
        S += I2 + Ctx.Code.slice(Sp->Begin.Offset, Sp->End.Offset).str() + "\n";
      }
    return S;
  };
  // Phase A: lanes along x; phase B: lanes along y.
  auto Phase = [&](bool LanesAlongX, const clang::Expr *Side,
                   const std::string &Action) {
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
    std::string Cond = writtenText(Ctx, P.Guard->getCond());
    std::string Locals = LocalsFor(Side, P.EarlyReturn ? I2 : I2 + "  ");
    if (P.EarlyReturn)
      S += I2 + "if (" + Cond + ")\n" + I2 + "  continue;\n" + Locals + I2 +
           Action + "\n";
    else if (Locals.empty())
      S += I2 + "if (" + Cond + ")\n" + I2 + "  " + Action + "\n";
    else
      S += I2 + "if (" + Cond + ") {\n" + Locals + I2 + "  " + Action + "\n" +
           I2 + "}\n";
    S += Indent + "}";
    return S;
  };
  // The tile holds element (y, x) at [y - y0][x - x0].
  std::string Lhs = writtenText(Ctx, P.Lhs);
  std::string Rhs = writtenText(Ctx, P.Rhs);
  std::string AlongX = Tile + "[" + K + "][threadIdx.x]";
  std::string AlongY = Tile + "[threadIdx.x][" + K + "]";
  std::string First, Second;
  if (P.ReadAlongX) {
    First = Phase(true, P.Rhs, AlongX + " = " + Rhs + ";");
    Second = Phase(false, P.Lhs, Lhs + " = " + AlongY + ";");
  } else {
    First = Phase(false, P.Rhs, AlongY + " = " + Rhs + ";");
    Second = Phase(true, P.Lhs, Lhs + " = " + AlongX + ";");
  }
  std::string Text;
  for (const clang::Stmt *S : P.Hoisted) {
    auto Sp = writtenStmtSpan(Ctx, S);
    Text +=
        Ctx.Code.slice(Sp->Begin.Offset, Sp->End.Offset).str() + "\n" + Indent;
  }
  Text += sharedTileDecl(P.ElemType, Tile, {P.Tile, P.Tile}, P.Pad) + "\n" +
          Indent + First + "\n" + Indent + "__syncthreads();\n" + Indent +
          Second;

  clang::tooling::Replacements Repls;
  if (Error Err = addReplacement(
          Repls,
          clang::tooling::Replacement(Ctx.FileName, P.RegionBegin,
                                      P.RegionEnd - P.RegionBegin, Text),
          E))
    return std::move(Err);
  for (const auto &[L, Z] : llvm::zip_equal(P.Kernel.Info->Launches, P.GridZ)) {
    std::string Why;
    std::string NX = *boundText(Ctx, P.X.Bound, L, Why);
    std::string NY = *boundText(Ctx, P.Y.Bound, L, Why);
    std::string Grid = "dim3(" + ceilDivText(NX, P.Tile) + ", " +
                       ceilDivText(NY, P.Tile) + (Z.empty() ? "" : ", " + Z) +
                       ")";
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
