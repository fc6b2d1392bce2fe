//===- VectorizeStencil.cpp - Outputs along x in vector rows --------------===//
//
// Pattern: one thread per point of a stencil, x from the thread index,
//   int x = blockIdx.x * blockDim.x + threadIdx.x;
//   int y = ...;                        // any other declarations
//   if (<guard, with x < B>) {          // or: if (<outside>) return; ...
//     size_t c = ...;                   // declarations without loads
//     out[c] = f(in[c - 1], in[c], in[c + 1], in[c - sy], ...);
//   }
// where every index grows by exactly one with x (followed through the
// locals) and reads of one row differ by integer constants.
//
// Rewrite: each thread computes W consecutive outputs (x0 .. x0 + W - 1).
// When all W pass the guard and the rows are aligned, every input row is
// read once as W-wide vectors (with scalars for its halo), the W values are
// computed from registers, and stored as one vector; otherwise the W points
// run one after another as before. Every address the fast path reads, one
// of the W original threads read (or lies between two that one did), through
// the read-only path: the kernel writes only the stored array, which no
// read may alias (the original would race between threads otherwise). The
// launches' grids are divided by W along x; each must have covered exactly
// the points below the guard's bound on x, so the points it adds fail it.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/SideEffects.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "SharedStaging.h"
#include "SharedTilingInternal.h"
#include "VectorizeInternal.h"
#include "optiml/Support/TextTemplate.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <functional>
#include <map>
#include <set>

using namespace clang;
using namespace llvm;

namespace optiml {
namespace {

using vectorizestencil::constantCoveringExtent;
using vectorizestencil::dependents;
using vectorizestencil::mentionsAny;
using vectorizestencil::sumTerms;
using vectorizestencil::templateArgAtLaunch;
using vectorizestencil::xSlope;

/// One read of the stored value: Array[Key + Lit].
struct StencilLoad {
  const ArraySubscriptExpr *E = nullptr;
  const Expr *At = nullptr; ///< what the rewrite replaces: E, or a local's name
  unsigned Row = 0;
  int64_t Lit = 0;
};

/// One input row: the reads of one array whose indices differ by constants.
struct LoadRow {
  const ValueDecl *Array = nullptr;
  std::string Key;  ///< its non-constant terms, canonical (for grouping)
  std::string Base; ///< the same terms as written, in order
  std::string Elem, Vec;
  std::set<int64_t> Lits;
};

struct Plan {
  ResolvedKernel Kernel;
  const VarDecl *X = nullptr;
  const DeclStmt *XDecl = nullptr;
  const IfStmt *Guard = nullptr;
  bool EarlyReturn = false;
  std::vector<const Stmt *> Inner; ///< the guarded declarations
  /// Guarded locals that hold one read (`const float up = in[c - n];`).
  DenseMap<const VarDecl *, const ArraySubscriptExpr *> LoadLocals;
  const BinaryOperator *Store = nullptr;
  std::vector<StencilLoad> Loads;
  std::vector<LoadRow> Rows;
  std::string OutVec;
  int64_t Width = 4, VecBytes = 16;
  const Expr *Bound = nullptr; ///< x < Bound (- k), or x <= Bound
  bool BoundInclusive = false; ///< the guard is x <= Bound
  unsigned RegionBegin = 0, RegionEnd = 0;
  /// Texts and places the rewrite reuses, found while analyzing.
  SourceSpan XSpan;
  std::string XHead, XInit;
  unsigned ValueBegin = 0, ValueEnd = 0; ///< the stored value as written
  std::optional<SourceSpan> Return;      ///< the early return
  std::vector<std::string> DeclTexts;
  std::vector<std::pair<SourceSpan, std::string>> Grids;
};

/// The vector type of \p Elem with \p Width lanes, or empty.
std::string vectorType(StringRef Elem, int64_t Width) {
  StringRef Base = StringSwitch<StringRef>(Elem)
                       .Case("float", "float")
                       .Case("int", "int")
                       .Case("unsigned int", "uint")
                       .Case("unsigned", "uint")
                       .Case("double", "double")
                       .Default("");
  if (Base.empty() || (Base == "double" && Width != 2))
    return "";
  return (Base + Twine(Width)).str();
}

/// `Base + P` / `Base - P` / `Base`.
std::string plus(StringRef Base, int64_t P) {
  if (P == 0)
    return Base.str();
  return (Base + (P < 0 ? " - " : " + ") + Twine(P < 0 ? -P : P)).str();
}

/// The parameter array \p A reads: its base, or the parameter that the row
/// pointer it reads through points into (sharedtiling::pointerAlias:
/// `const float *up = in + (y - 1) * w;`, never reassigned nor passed on),
/// when the pointer's offsets do not move with x (\p Dep). Then `up[i]` is
/// `in[(y - 1) * w + i]`, and the rewrite reads it as written, through the
/// pointer. Null, with \p Why, otherwise.
const ParmVarDecl *readParam(const ArraySubscriptExpr *A,
                             ArrayRef<sharedtiling::PointerAlias> Aliases,
                             const DenseSet<const ValueDecl *> &Dep,
                             std::string &Why) {
  if (const sharedtiling::PointerAlias *PA =
          sharedtiling::aliasOf(A, Aliases)) {
    for (const Expr *O : PA->Offsets)
      if (mentionsAny(O, Dep)) {
        Why = "the row pointer '" + PA->Var->getNameAsString() +
              "' moves with x (only its subscripts may)";
        return nullptr;
      }
    return PA->Param;
  }
  const auto *Param = dyn_cast_or_null<ParmVarDecl>(declOf(A->getBase()));
  if (!Param)
    Why = "a read's array is neither a parameter nor a row pointer into one "
          "('const float *p = in + offset;', never reassigned)";
  return Param;
}

/// The element type pointed to by \p Array, as text without qualifiers.
std::string elemType(const ValueDecl *Array, const ASTContext &AST) {
  QualType T = Array->getType();
  if (!T->isPointerType())
    return "";
  QualType P = T->getPointeeType();
  if (P->isDependentType() || !P->isArithmeticType())
    return "";
  return typeName(P.getUnqualifiedType(), AST);
}

class VectorizeStencil : public PlannedTransform<Plan> {
public:
  StringRef kind() const override { return "vectorize-stencil"; }
  StringRef description() const override {
    return "each thread computes W consecutive outputs of a stencil along x: "
           "every input row read once as W-wide vectors, one vector store; "
           "launch grids divided by W along x";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec::integer("width",
                               "outputs per thread along x (W): 2 or 4; "
                               "2 for double",
                               2, 4, 4)};
  }
  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override;

protected:
  Expected<Plan> analyze(const EditContext &Ctx, const Edit &E) const override;
  Expected<tooling::Replacements> rewrite(const EditContext &Ctx, const Edit &E,
                                          const Plan &P) const override;

private:
  Error shape(const EditContext &Ctx, const Edit &E, Plan &P) const;
  Error loads(const EditContext &Ctx, const Edit &E, Plan &P,
              const DenseSet<const ValueDecl *> &Dep) const;
  Error launches(const EditContext &Ctx, const Edit &E, Plan &P) const;
  Error places(const EditContext &Ctx, const Edit &E, Plan &P) const;
};

Applicability VectorizeStencil::prepare(const EditContext &Ctx,
                                        StringRef Target) const {
  Applicability A;
  Edit E;
  auto P = planDefault(Ctx, Target, A, E);
  if (!P) {
    // A double stencil takes width 2.
    Edit E2 = defaultEdit(kind(), Target);
    E2.Params["width"] = int64_t(2);
    Applicability A2;
    P = planOrReason(A2, analyze(Ctx, E2));
    if (!P || P->Rows.front().Elem != "double")
      return A;
    A = A2;
    E = E2;
  }
  A.Reason = std::to_string(P->Loads.size()) + " reads in " +
             std::to_string(P->Rows.size()) + " input row(s), one store; " +
             std::to_string(P->Width) + " outputs per thread along x, " +
             std::to_string(P->VecBytes) + "-byte rows";
  A.Suggestions.push_back(E);
  return A;
}

/// The terms of \p P's guard: the operands of its `&&` (of its `||` for an
/// early return), each as written (parentheses kept).
SmallVector<const Expr *, 4> guardTerms(const Plan &P) {
  return splitJoined(P.Guard->getCond(), P.EarlyReturn ? BO_LOr : BO_LAnd);
}

/// The bound one term of \p P's guard sets on x from above: `x < B`
/// (`x >= B` before an early return), or with \p Inclusive set, `x <= B`
/// (`x > B`); null when the term sets none.
const Expr *upperBound(const Expr *T, const Plan &P, bool &Inclusive) {
  if (const Expr *B = sharedtiling::boundOf(T, P.X, !P.EarlyReturn)) {
    Inclusive = false;
    return B;
  }
  const auto *B = dyn_cast<BinaryOperator>(T->IgnoreParenImpCasts());
  if (!B)
    return nullptr;
  BinaryOperatorKind Op = B->getOpcode();
  bool Guarded = !P.EarlyReturn;
  Inclusive = true;
  if (refersTo(B->getLHS(), P.X) && Op == (Guarded ? BO_LE : BO_GT))
    return B->getRHS();
  if (refersTo(B->getRHS(), P.X) && Op == (Guarded ? BO_GE : BO_LT))
    return B->getLHS();
  Inclusive = false;
  return nullptr;
}

/// The guard of the W points as a whole, a condition every point that
/// runs also meets: the terms of the original guard that do not mention x
/// as written, and x's upper bound on the first point (`x0 < n - 1`: the
/// others lie above it). Negated for an early return (`y >= m || x0 >= n`
/// returns). It spells out, before any per-point test, that the threads
/// past the bound do nothing: the bounds a block-size change relies on
/// (launch-config) stay readable.
std::string outerGuard(const EditContext &Ctx, const Plan &P, StringRef X0) {
  std::vector<std::string> Kept;
  for (const Expr *T : guardTerms(P)) {
    bool Inclusive = false;
    if (upperBound(T, P, Inclusive) == P.Bound) {
      // Arithmetic binds tighter than a comparison; anything else is
      // parenthesized.
      const auto *BO = dyn_cast<BinaryOperator>(P.Bound->IgnoreImpCasts());
      std::string B = looseExprText(Ctx, P.Bound);
      if (B.empty())
        continue;
      if (!(BO && (BO->isAdditiveOp() || BO->isMultiplicativeOp())))
        B = parenthesize(B);
      const char *Op = P.EarlyReturn ? (Inclusive ? " > " : " >= ")
                                     : (Inclusive ? " <= " : " < ");
      Kept.push_back((X0 + Op + B).str());
    } else if (std::string Text = looseExprText(Ctx, T);
               !mentions(T, P.X) && !Text.empty()) {
      Kept.push_back(Text);
    }
  }
  return join(Kept, P.EarlyReturn ? " || " : " && ");
}

Error VectorizeStencil::shape(const EditContext &Ctx, const Edit &E,
                              Plan &P) const {
  auto NotApplicable = [&](const Twine &Why) {
    return reject(E, "not-applicable", "kernel '" + E.Target + "': " + Why);
  };
  const FunctionDecl *FD = P.Kernel.Decl;
  const auto *Body = dyn_cast_or_null<CompoundStmt>(FD->getBody());
  if (!Body || Body->size() < 2)
    return NotApplicable("no declarations followed by a guarded statement");
  std::vector<const Stmt *> Top(Body->body_begin(), Body->body_end());
  // The guard: the last statement, or `if (...) return;` and the rest.
  size_t G = Top.size() - 1;
  for (size_t I = 0; I < Top.size(); ++I)
    if (const auto *If = dyn_cast<IfStmt>(Top[I]);
        If && !If->getElse() && isa<ReturnStmt>(If->getThen())) {
      G = I;
      P.EarlyReturn = true;
      break;
    }
  P.Guard = dyn_cast<IfStmt>(Top[G]);
  if (!P.Guard || P.Guard->getElse() || P.Guard->getInit() ||
      P.Guard->getConditionVariable())
    return NotApplicable("its last statement is not 'if (<guard>) { ... }' "
                         "and it has no 'if (<outside>) return;'");
  std::vector<const Stmt *> Pre(Top.begin(), Top.begin() + G);
  if (P.EarlyReturn) {
    P.Inner.assign(Top.begin() + G + 1, Top.end());
  } else if (const auto *CS = dyn_cast<CompoundStmt>(P.Guard->getThen())) {
    P.Inner.assign(CS->body_begin(), CS->body_end());
  } else {
    P.Inner.push_back(P.Guard->getThen());
  }
  // x: the only use of the x thread coordinates.
  for (const Stmt *S : Pre) {
    const auto *DS = dyn_cast<DeclStmt>(S);
    if (!DS)
      return NotApplicable("'" + stmtText(Ctx, S) +
                           "' before the guard is not a declaration");
    for (const Decl *D : DS->decls())
      if (const auto *V = dyn_cast<VarDecl>(D);
          V && V->hasInit() && linearIndexDim(V->getInit()) == 'x') {
        if (P.X || !DS->isSingleDecl())
          return NotApplicable("more than one x index, or one declared "
                               "beside another variable");
        P.X = V;
        P.XDecl = DS;
      }
  }
  if (!P.X || !P.X->getType()->isIntegerType())
    return NotApplicable(
        "no integer 'x = blockIdx.x * blockDim.x + threadIdx.x'");
  if (writtenVars(Body).contains(P.X))
    return NotApplicable("'" + P.X->getName() + "' is written again");
  for (const Stmt *S : Pre)
    if (S != P.XDecl && mentions(S, P.X))
      return NotApplicable("'" + stmtText(Ctx, S) +
                           "' before the guard uses '" + P.X->getName() + "'");
  // No other x coordinate: the thread's x is now x0 .. x0 + W - 1.
  std::function<bool(const Stmt *)> OtherX = [&](const Stmt *S) {
    if (!S || S == P.X->getInit())
      return false;
    if (const auto *Ex = dyn_cast<Expr>(S))
      if (auto B = asBuiltinVar(Ex))
        return B->Dim == 'x';
    return any_of(S->children(), OtherX);
  };
  if (any_of(Top, [&](const Stmt *S) { return S != P.XDecl && OtherX(S); }))
    return NotApplicable("it reads an x thread or block coordinate other than "
                         "through '" +
                         P.X->getName() + "'");
  // The same through a helper (`out[x] = in[x] + lane()`).
  for (const Stmt *S : Top)
    if (const FunctionDecl *F =
            S == P.XDecl ? nullptr
                         : threadShapeCall(S, Ctx.AST.getSourceManager()))
      return NotApplicable("it calls '" + F->getQualifiedNameAsString() +
                           "', which reads a thread or block coordinate or "
                           "works with other threads: a thread now computes "
                           "several x");
  // The guard bounds x from above.
  const Expr *Cond = P.Guard->getCond();
  if (mayHaveSideEffects(Cond, Ctx.AST) || readsOrWritesMemory(Cond, nullptr))
    return NotApplicable("the guard reads memory or has side effects");
  for (const Expr *T : guardTerms(P))
    if (const Expr *B = upperBound(T, P, P.BoundInclusive)) {
      P.Bound = B;
      break;
    }
  if (!P.Bound)
    return NotApplicable("the guard has no upper bound on '" + P.X->getName() +
                         "' ('" + P.X->getName() + " < n')");
  if (P.Inner.empty())
    return NotApplicable("nothing is guarded");
  for (const Stmt *S : P.Inner)
    if (const Stmt *J = firstJump(S))
      return NotApplicable("'" + stmtText(Ctx, J) +
                           "' leaves the guarded code");
  // Guarded declarations compute without memory, or each holds one read
  // that only the stored value uses (`const float up = in[c - n];`).
  for (size_t I = 0; I + 1 < P.Inner.size(); ++I) {
    const auto *DS = dyn_cast<DeclStmt>(P.Inner[I]);
    if (!DS)
      return NotApplicable("the statement at " + where(Ctx, P.Inner[I]) +
                           " is neither a declaration nor the one store");
    for (const Decl *D : DS->decls()) {
      const auto *V = dyn_cast<VarDecl>(D);
      const Expr *Init = V && V->hasInit() ? V->getInit() : nullptr;
      const auto *Load =
          Init ? dyn_cast<ArraySubscriptExpr>(stripCasts(Init)) : nullptr;
      if (Load && DS->isSingleDecl() && V->getType()->isArithmeticType() &&
          !V->getType()->isReferenceType() &&
          !readsOrWritesMemory(Load->getIdx(), &Ctx.AST)) {
        P.LoadLocals[V] = Load;
        continue;
      }
      if (!V || (Init && (readsOrWritesMemory(Init, &Ctx.AST) ||
                          mayHaveSideEffects(Init, Ctx.AST))))
        return NotApplicable("the declaration '" + stmtText(Ctx, DS) +
                             "' reads memory or has side effects");
    }
  }
  // The local a guarded declaration holds a read in, if it does.
  auto LoadLocal = [&](const Stmt *S) -> const VarDecl * {
    const auto *DS = cast<DeclStmt>(S);
    const auto *V =
        DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl()) : nullptr;
    return V && P.LoadLocals.count(V) ? V : nullptr;
  };
  for (size_t I = 0; I + 1 < P.Inner.size(); ++I)
    for (size_t J = 0; J < I; ++J)
      if (const VarDecl *V = LoadLocal(P.Inner[J]);
          V && mentions(P.Inner[I], V))
        return NotApplicable("'" + V->getName() + "' (a read) is used by '" +
                             stmtText(Ctx, P.Inner[I]) +
                             "'; only the stored value may use it");
  const auto *Assign = dyn_cast<BinaryOperator>(P.Inner.back());
  if (!Assign || Assign->getOpcode() != BO_Assign ||
      !isa<ArraySubscriptExpr>(Assign->getLHS()->IgnoreParens()))
    return NotApplicable("the guarded code does not end in one store "
                         "'out[i] = ...;'");
  P.Store = Assign;
  return Error::success();
}

Error VectorizeStencil::loads(const EditContext &Ctx, const Edit &E, Plan &P,
                              const DenseSet<const ValueDecl *> &Dep) const {
  auto NotApplicable = [&](const Twine &Why) {
    return reject(E, "not-applicable", "kernel '" + E.Target + "': " + Why);
  };
  // The declarations run once for the first point, even when only later
  // ones pass the guard: no division by what depends on x.
  std::function<bool(const Stmt *)> DividesByX = [&](const Stmt *S) {
    if (!S)
      return false;
    if (const auto *B = dyn_cast<BinaryOperator>(S);
        B &&
        (B->getOpcode() == BO_Div || B->getOpcode() == BO_Rem ||
         B->getOpcode() == BO_DivAssign || B->getOpcode() == BO_RemAssign) &&
        mentionsAny(B->getRHS(), Dep))
      return true;
    return any_of(S->children(), DividesByX);
  };
  for (size_t I = 0; I + 1 < P.Inner.size(); ++I)
    for (const Decl *D : cast<DeclStmt>(P.Inner[I])->decls())
      if (const auto *V = dyn_cast<VarDecl>(D);
          V && V->hasInit() && DividesByX(V->getInit()))
        return NotApplicable("'" + V->getName() +
                             "' divides by a value that depends on '" +
                             P.X->getName() + "'");
  const auto *Lhs = cast<ArraySubscriptExpr>(P.Store->getLHS()->IgnoreParens());
  const ValueDecl *Out = declOf(Lhs->getBase());
  if (!Out || !isa<ParmVarDecl>(Out))
    return NotApplicable("the store's array is not a parameter");
  std::string OutElem = elemType(Out, Ctx.AST);
  P.OutVec = vectorType(OutElem, P.Width);
  if (P.OutVec.empty())
    return NotApplicable(
        "no " + Twine(P.Width) + "-wide vector of '" +
        (OutElem.empty() ? std::string("its element type") : OutElem) +
        "' (float, int, unsigned: 2 or 4; double: 2)");
  if (xSlope(Lhs->getIdx(), P.X, Dep, Ctx.AST) != 1)
    return NotApplicable("the store's index does not grow by one with '" +
                         P.X->getName() + "'");
  const Expr *V = P.Store->getRHS();
  if (mayHaveSideEffects(V, Ctx.AST))
    return NotApplicable("the stored value has side effects");
  // A local holding a read stands for that read in the value, never in an
  // index (its read is not made for the first point alone).
  auto LoadLocalIn = [&](const Stmt *S) -> const VarDecl * {
    for (const Stmt *I : P.Inner)
      if (const auto *DS = dyn_cast<DeclStmt>(I); DS && DS->isSingleDecl())
        if (const auto *L = dyn_cast<VarDecl>(DS->getSingleDecl());
            L && P.LoadLocals.count(L) && mentions(S, L))
          return L;
    return nullptr;
  };
  if (const VarDecl *L = LoadLocalIn(Lhs->getIdx()))
    return NotApplicable("'" + L->getName() +
                         "' (a read) is used in the store's index");
  // Row pointers into the arrays (`const float *up = in + (y - 1) * w;`).
  std::vector<sharedtiling::PointerAlias> Aliases = sharedtiling::bodyAliases(
      cast<CompoundStmt>(P.Kernel.Decl->getBody()), P.Kernel.Decl);
  std::map<std::pair<const ValueDecl *, std::string>, unsigned> RowOf;
  std::string Problem;
  std::function<void(const Stmt *)> Walk = [&](const Stmt *S) {
    if (!S || !Problem.empty())
      return;
    if (isa<ConditionalOperator, BinaryConditionalOperator>(S) ||
        (isa<BinaryOperator>(S) && cast<BinaryOperator>(S)->isLogicalOp())) {
      Problem = "the stored value evaluates part of itself conditionally";
      return;
    }
    if (const auto *U = dyn_cast<UnaryOperator>(S);
        U && U->getOpcode() == UO_Deref) {
      Problem = "the stored value reads through '*'";
      return;
    }
    const Expr *At = dyn_cast<Expr>(S);
    const auto *A = dyn_cast<ArraySubscriptExpr>(S);
    if (const auto *DR = dyn_cast<DeclRefExpr>(S)) {
      if (const auto *V = dyn_cast<VarDecl>(DR->getDecl());
          V && P.LoadLocals.count(V)) {
        A = P.LoadLocals.lookup(V);
      } else if (Dep.contains(DR->getDecl())) {
        Problem = "the stored value uses '" + DR->getDecl()->getName().str() +
                  "' outside an index";
        return;
      }
    }
    if (!A) {
      for (const Stmt *C : S->children())
        Walk(C);
      return;
    }
    if (const VarDecl *L = LoadLocalIn(A->getIdx())) {
      Problem = "'" + L->getName().str() + "' (a read) is used in an index";
      return;
    }
    const ValueDecl *Arr = declOf(A->getBase());
    const ParmVarDecl *Param = readParam(A, Aliases, Dep, Problem);
    if (!Param)
      return;
    if (Param == Out) {
      Problem = "the stored array is also read";
      return;
    }
    if (xSlope(A->getIdx(), P.X, Dep, Ctx.AST) != 1) {
      Problem = "the index of '" + looseExprText(Ctx, A) +
                "' does not grow by one with '" + P.X->getName().str() + "'";
      return;
    }
    int64_t Lit = 0;
    std::vector<std::pair<int, std::string>> Terms;
    if (!sumTerms(Ctx, A->getIdx(), 1, Lit, Terms, Dep) || Terms.empty() ||
        looseExprText(Ctx, A).empty()) {
      Problem = "a read is written through a macro";
      return;
    }
    std::string Base;
    for (auto &[Sign, T] : Terms)
      Base += Base.empty() ? (Sign < 0 ? "-" + parenthesize(T) : T)
                           : (Sign < 0 ? " - " : " + ") + parenthesize(T);
    llvm::sort(Terms);
    std::string Key;
    for (auto &[Sign, T] : Terms)
      Key += (Sign < 0 ? "-" : "+") + T + "\n";
    auto [It, New] = RowOf.try_emplace({Arr, Key}, P.Rows.size());
    if (New) {
      LoadRow R;
      R.Array = Arr;
      R.Key = Key;
      R.Base = Base;
      R.Elem = elemType(Arr, Ctx.AST);
      R.Vec = vectorType(R.Elem, P.Width);
      if (R.Vec.empty()) {
        Problem = "no " + std::to_string(P.Width) + "-wide vector of the " +
                  "element type of '" + Arr->getName().str() + "'";
        return;
      }
      P.Rows.push_back(R);
    }
    P.Rows[It->second].Lits.insert(Lit);
    P.Loads.push_back({A, At, It->second, Lit});
  };
  Walk(V);
  if (!Problem.empty())
    return NotApplicable(Problem);
  if (P.Loads.empty())
    return NotApplicable("the stored value reads no array");
  return Error::success();
}

Error VectorizeStencil::launches(const EditContext &Ctx, const Edit &E,
                                 Plan &P) const {
  const KernelInfo &K = *P.Kernel.Info;
  if (std::string Why = launchProblem(K); !Why.empty())
    return reject(E, "not-applicable", Why);
  if (K.Launches.empty())
    return reject(E, "not-applicable",
                  "kernel '" + E.Target + "' is never launched in this file");
  // The bound at a launch: `x < n - 1` (and `x <= n - 2`) needs no more
  // than `x < n`.
  const Expr *B = P.Bound->IgnoreParenImpCasts();
  int64_t Less = -1;
  if (const auto *Sub = dyn_cast<BinaryOperator>(B);
      Sub && Sub->getOpcode() == BO_Sub) {
    Less = intValue(Sub->getRHS()->IgnoreParenImpCasts(), Ctx.AST).value_or(-1);
    if (Less >= 0)
      B = Sub->getLHS()->IgnoreParenImpCasts();
  }
  if (P.BoundInclusive && Less < 1)
    return reject(E, "not-applicable",
                  "kernel '" + E.Target + "': the guard lets '" +
                      P.X->getName() + "' reach '" +
                      looseExprText(Ctx, P.Bound) +
                      "' itself; the grids are shown to cover the points "
                      "below a bound 'n' with 'x <= n - k' (k >= 1) or "
                      "'x < n - k'");
  for (const LaunchSite &L : K.Launches) {
    auto NotApplicable = [&](const Twine &Why) {
      return reject(E, "not-applicable",
                    "the grid of " + L.Id + " ('" + L.Grid + "') " + Why,
                    L.Range.Begin);
    };
    const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
    if (!Call || !Call->getConfig())
      return NotApplicable("cannot be found");
    auto Block = sharedtiling::constDim3(Ctx, Call->getConfig()->getArg(1));
    if (!Block)
      return reject(E, "not-applicable",
                    "the block of " + L.Id + " ('" + L.Block +
                        "') is not a constant",
                    L.Range.Begin);
    std::string Why;
    auto TA = templateArgAtLaunch(Ctx, B, Call);
    auto N = TA ? std::optional<std::string>(TA->second)
                : boundAtLaunch(Ctx, B, L, Why);
    if (!N)
      return NotApplicable("cannot be divided: " + Why);
    const VarDecl *Var = nullptr;
    const Expr *Gx =
        sharedtiling::coveringExtent(Ctx, L, 0, (*Block)[0], *N, Var);
    if (!Gx)
      Gx = constantCoveringExtent(
          Ctx, L, (*Block)[0],
          TA ? std::optional<int64_t>(TA->first) : intValue(B, Ctx.AST), Var);
    if (!Gx)
      return NotApplicable("is not ceil(" + *N + " / " + Twine((*Block)[0]) +
                           ") along x, so the points it covers cannot be "
                           "shown to be those below the guard's bound");
    std::string NewX = ceilDivText(*N, (*Block)[0] * P.Width);
    if (Var) {
      std::string V = Var->getNameAsString();
      P.Grids.push_back(
          {L.GridRange, "dim3(" + NewX + ", " + V + ".y, " + V + ".z)"});
    } else if (auto S = looseExprSpan(Ctx, Gx)) {
      P.Grids.push_back({*S, NewX});
    } else {
      return NotApplicable("has no place in the file");
    }
  }
  return Error::success();
}

Error VectorizeStencil::places(const EditContext &Ctx, const Edit &E,
                               Plan &P) const {
  auto NoPlace = [&](StringRef What) {
    return reject(E, "not-applicable",
                  "kernel '" + E.Target + "': " + What +
                      " is not written in one piece of the file (a macro)");
  };
  auto First = looseStmtSpan(Ctx, P.Guard);
  auto Last = looseStmtSpan(Ctx, P.EarlyReturn ? P.Inner.back() : P.Guard);
  if (!First || !Last)
    return NoPlace("the guarded code");
  P.RegionBegin = First->Begin.Offset;
  P.RegionEnd = Last->End.Offset;
  auto XS = looseStmtSpan(Ctx, P.XDecl);
  auto Init = looseExprSpan(Ctx, P.X->getInit());
  if (!XS || !Init)
    return NoPlace("the declaration of '" + P.X->getName().str() + "'");
  P.XSpan = *XS;
  P.XHead = StringRef(Ctx.Code)
                .slice(XS->Begin.Offset, Init->Begin.Offset)
                .rtrim(" =")
                .str();
  P.XInit = looseExprText(Ctx, P.X->getInit());
  // The value from its first token to its last, macros at either end
  // included (`C0 * in[c] + ...`): the reads inside it have their own
  // places.
  const SourceManager &SM = Ctx.AST.getSourceManager();
  CharSourceRange VR =
      SM.getExpansionRange(P.Store->getRHS()->getSourceRange());
  auto V = fileSpan(SM, Ctx.AST.getLangOpts(), VR.getAsRange(), Ctx.file());
  if (!V || V->Begin.Offset < P.RegionBegin || V->End.Offset > P.RegionEnd)
    return NoPlace("the stored value");
  P.ValueBegin = V->Begin.Offset;
  P.ValueEnd = V->End.Offset;
  for (const StencilLoad &L : P.Loads) {
    auto S = looseExprSpan(Ctx, L.At);
    if (!S || S->Begin.Offset < P.ValueBegin || S->End.Offset > P.ValueEnd)
      return NoPlace("'" + looseExprText(Ctx, L.At) + "'");
  }
  if (P.EarlyReturn) {
    P.Return = looseStmtSpan(Ctx, P.Guard->getThen());
    if (!P.Return)
      return NoPlace("the early return");
  }
  for (size_t I = 0; I + 1 < P.Inner.size(); ++I) {
    // The reads held in locals are taken from the vectors instead.
    if (const auto *DS = cast<DeclStmt>(P.Inner[I]);
        DS->isSingleDecl() && isa<VarDecl>(DS->getSingleDecl()) &&
        P.LoadLocals.count(cast<VarDecl>(DS->getSingleDecl())))
      continue;
    auto S = looseStmtSpan(Ctx, P.Inner[I]);
    if (!S)
      return NoPlace("'" + stmtText(Ctx, P.Inner[I]) + "'");
    P.DeclTexts.push_back(
        StringRef(Ctx.Code).slice(S->Begin.Offset, S->End.Offset).str());
  }
  return Error::success();
}

Expected<Plan> VectorizeStencil::analyze(const EditContext &Ctx,
                                         const Edit &E) const {
  auto K = resolveKernel(Ctx, E, E.Target);
  if (!K)
    return K.takeError();
  Plan P;
  P.Kernel = *K;
  P.Width = E.getInt("width").value_or(4);
  if (P.Width != 2 && P.Width != 4)
    return reject(E, "params", "width must be 2 or 4");
  if (!K->Info->Shared.empty() || !K->Info->Syncthreads.empty())
    return reject(E, "not-applicable",
                  "kernel '" + E.Target + "' uses shared memory or barriers");
  if (Error Err = shape(Ctx, E, P))
    return std::move(Err);
  std::vector<const Stmt *> Decls;
  for (const Stmt *S : cast<CompoundStmt>(P.Kernel.Decl->getBody())->body())
    Decls.push_back(S);
  append_range(Decls, P.Inner);
  DenseSet<const ValueDecl *> Dep = dependents(P.X, Decls);
  DenseSet<const ValueDecl *> Written = writtenVars(P.Kernel.Decl->getBody());
  for (const ValueDecl *D : Dep)
    if (Written.contains(D))
      return reject(E, "not-applicable",
                    "kernel '" + E.Target + "': '" + D->getName() +
                        "' is written again");
  if (Error Err = loads(Ctx, E, P, Dep))
    return std::move(Err);
  P.VecBytes =
      P.Width *
      static_cast<int64_t>(
          Ctx.AST
              .getTypeSizeInChars(
                  cast<ArraySubscriptExpr>(P.Store->getLHS()->IgnoreParens())
                      ->getType())
              .getQuantity());
  if (Error Err = places(Ctx, E, P))
    return std::move(Err);
  if (Error Err = launches(Ctx, E, P))
    return std::move(Err);
  return P;
}

Expected<tooling::Replacements>
VectorizeStencil::rewrite(const EditContext &Ctx, const Edit &E,
                          const Plan &P) const {
  std::string KernelText = StringRef(Ctx.Code)
                               .slice(P.Kernel.Info->Range.Begin.Offset,
                                      P.Kernel.Info->Range.End.Offset)
                               .str();
  std::string X0 = freshName(KernelText, P.X->getName().str() + "0");
  std::string W = freshName(KernelText, "w");
  std::string O = freshName(KernelText, "o");
  std::string R = freshName(KernelText, "r");
  std::string Width = std::to_string(P.Width);
  std::string Indent0 = indentationAt(Ctx.Code, P.RegionBegin);
  // An if-block guard wraps the rewritten points (outerGuard()).
  std::string Outer = outerGuard(Ctx, P, X0);
  bool Wrap = !Outer.empty() && !P.EarlyReturn;
  std::string Indent = Indent0 + (Wrap ? "  " : "");
  const std::string &XHead = P.XHead;
  std::string XType = typeName(P.X->getType(), Ctx.AST);

  std::string Ok = freshName(KernelText, "ok");
  std::string All = freshName(KernelText, "all");
  std::string OutElem =
      typeName(P.Store->getLHS()->getType().getUnqualifiedType(), Ctx.AST);
  // The points that read position Pos of a row (Pos = literal + point).
  auto Need = [&](const LoadRow &Row, int64_t Pos) {
    std::string T;
    for (int64_t L : Row.Lits)
      if (Pos - L >= 0 && Pos - L < P.Width)
        T += (T.empty() ? "" : " || ") + Ok + "[" + std::to_string(Pos - L) +
             "]";
    return T;
  };
  static const char Lanes[] = "xyzw";
  std::string Loads, Aligned;
  std::vector<std::map<int64_t, std::string>> Reg(P.Rows.size());
  for (unsigned I = 0; I < P.Rows.size(); ++I) {
    const LoadRow &Row = P.Rows[I];
    std::string Arr = Row.Array->getName().str();
    int64_t Lo = *Row.Lits.begin(), Hi = *Row.Lits.rbegin() + P.Width - 1;
    std::string Name = R + std::to_string(I);
    bool AnyVector = false;
    for (int64_t Pos = Lo; Pos <= Hi; ++Pos) {
      if (Need(Row, Pos).empty() || Reg[I].count(Pos))
        continue;
      int64_t M = Pos >= 0 ? Pos / P.Width : -((-Pos + P.Width - 1) / P.Width);
      bool Whole = Pos == M * P.Width;
      for (int64_t J = 0; Whole && J < P.Width; ++J)
        Whole = !Need(Row, Pos + J).empty();
      auto Scalar = [&](int64_t At) {
        return "(" + Need(Row, At) + ") ? __ldg(&" + Arr + "[" +
               plus(Row.Base, At) + "]) : " + Row.Elem + "()";
      };
      if (!Whole) {
        std::string S = Name + "s" + (Pos < 0 ? "m" : "") +
                        std::to_string(Pos < 0 ? -Pos : Pos);
        Loads += Indent + "    const " + Row.Elem + " " + S + " = " +
                 Scalar(Pos) + ";\n";
        Reg[I][Pos] = S;
        continue;
      }
      // A whole vector when every point runs, else what each point needs.
      std::string V =
          Name + "v" + (M < 0 ? "m" : "") + std::to_string(M < 0 ? -M : M);
      Loads += Indent + "    " + Row.Vec + " " + V + ";\n" + Indent +
               "    if (" + All + ")\n" + Indent + "      " + V +
               " = __ldg(reinterpret_cast<const " + Row.Vec + " *>(&" + Arr +
               "[" + plus(Row.Base, Pos) + "]));\n" + Indent + "    else {\n";
      for (int64_t J = 0; J < P.Width; ++J) {
        Loads += Indent + "      " + V + "." + Lanes[J] + " = " +
                 Scalar(Pos + J) + ";\n";
        Reg[I][Pos + J] = V + "." + Lanes[J];
      }
      Loads += Indent + "    }\n";
      AnyVector = true;
    }
    if (AnyVector)
      Aligned += " &&\n" + Indent + "      reinterpret_cast<unsigned long " +
                 "long>(&" + Arr + "[" + Row.Base + "]) % " +
                 std::to_string(P.VecBytes) + " == 0";
  }
  std::string Store = looseExprText(Ctx, P.Store->getLHS());
  Aligned = "reinterpret_cast<unsigned long long>(&" + Store + ") % " +
            std::to_string(P.VecBytes) + " == 0" + Aligned;

  // Each point's value (the stored expression, its reads renamed), and its
  // store: one vector when every point runs.
  std::string LaneText, Partial, AllText, AnyText;
  for (int64_t L = 0; L < P.Width; ++L) {
    std::vector<TextEdit> Edits;
    for (const StencilLoad &Ld : P.Loads) {
      auto S = looseExprSpan(Ctx, Ld.At); // checked by places()
      Edits.push_back({S->Begin.Offset, S->End.Offset - S->Begin.Offset,
                       Reg[Ld.Row].at(Ld.Lit + L)});
    }
    std::string OkL = Ok + "[" + std::to_string(L) + "]";
    LaneText +=
        Indent + "    " + O + "." + Lanes[L] + " = " + OkL + " ? " +
        parenthesize(spliceText(Ctx.Code, P.ValueBegin, P.ValueEnd, Edits)) +
        " : " + OutElem + "();\n";
    Partial += Indent + "      if (" + OkL + ")\n" + Indent + "        (&" +
               Store + ")[" + std::to_string(L) + "] = " + O + "." + Lanes[L] +
               ";\n";
    AllText += (L ? " && " : "") + OkL;
    AnyText += (L ? " || " : "") + OkL;
  }

  std::string Decls;
  for (const std::string &D : P.DeclTexts)
    Decls += Indent + "  " + D + "\n";
  // The original guarded code, per point (an early return moves on).
  std::vector<TextEdit> Keep;
  if (P.Return)
    Keep.push_back({P.Return->Begin.Offset,
                    P.Return->End.Offset - P.Return->Begin.Offset,
                    "continue;"});
  std::string Original = spliceText(Ctx.Code, P.RegionBegin, P.RegionEnd, Keep);
  std::string Cond = looseExprText(Ctx, P.Guard->getCond());
  if (P.EarlyReturn)
    Cond = "!" + parenthesize(Cond);

  std::string Text = fillTemplate(
      R"(bool ${Ok}[${Width}];
${I}#pragma unroll
${I}for (int ${W} = 0; ${W} < ${Width}; ++${W}) {
${I}  ${XHead} = ${X0} + ${W};
${I}  ${Ok}[${W}] = ${Cond};
${I}}
${I}const bool ${All} = ${AllText};
${I}if (${AnyText}) {
${I}  ${XHead} = ${X0};
${Decls}${I}  if (${Aligned}) {
${Loads}${I}    ${OutVec} ${O};
${Lanes}${I}    if (${All}) {
${I}      *reinterpret_cast<${OutVec} *>(&${Store}) = ${O};
${I}    } else {
${Partial}${I}    }
${I}  } else {
${I}    #pragma unroll
${I}    for (int ${W} = 0; ${W} < ${Width}; ++${W}) {
${I}      ${XHead} = ${X0} + ${W};
${I}      ${Original}
${I}    }
${I}  }
${I}})",
      {{"Ok", Ok},
       {"I", Indent},
       {"W", W},
       {"Width", Width},
       {"XHead", XHead},
       {"X0", X0},
       {"Cond", Cond},
       {"All", All},
       {"AllText", AllText},
       {"AnyText", AnyText},
       {"Decls", Decls},
       {"Aligned", Aligned},
       {"Loads", Loads},
       {"OutVec", P.OutVec},
       {"O", O},
       {"Lanes", LaneText},
       {"Partial", Partial},
       {"Store", Store},
       {"Original",
        indentLines(Original,
                    std::string(Indent.size() - Indent0.size() + 6, ' '))}});
  if (!Outer.empty() && P.EarlyReturn)
    Text = "if (" + Outer + ") return;\n" + Indent0 + Text;
  else if (Wrap)
    Text = "if (" + Outer + ") {\n" + Indent + Text + "\n" + Indent0 + "}";

  tooling::Replacements Repls;
  std::string NewX = XType + " " + X0 + " = (" + P.XInit + ") * " + Width + ";";
  if (Error Err = addReplacement(Repls, replaceSpan(Ctx, P.XSpan, NewX), E))
    return std::move(Err);
  if (Error Err = addReplacement(
          Repls, replaceSpan(Ctx, offsetSpan(P.RegionBegin, P.RegionEnd), Text),
          E))
    return std::move(Err);
  for (const auto &[Span, G] : P.Grids)
    if (Error Err = addReplacement(Repls, replaceSpan(Ctx, Span, G), E))
      return std::move(Err);
  return Repls;
}

} // namespace

std::unique_ptr<Transform> createVectorizeStencilTransform() {
  return std::make_unique<VectorizeStencil>();
}

} // namespace optiml
