//===- LaunchConfig.cpp - Change a launch's block, keep the grid covering -===//
//
// A launch `k<<<G, B>>>(...)` gets a new block size in x, y and z. Shown
// safe only when the kernel's work depends on the global indices alone:
//   - every thread coordinate appears only in top-level index declarations
//     `i = blockIdx.D * blockDim.D + threadIdx.D`,
//   - those indices are guarded at once (`if (i < n && j < m) body`, or
//     `if (i >= n || j >= m) return;`) with bounds that are parameters or
//     a parameter less a constant in signed arithmetic (`i < n - 1`, or
//     `i + 1 < n`: the rows past it do nothing either way); other terms
//     of the guard (`i > 0`) only narrow it,
//   - no shared memory, barriers or warp primitives, no __launch_bounds__
//     below the new block,
// and when each changed grid dimension is `(E + B - 1) / B` over the old
// block B with E the very argument the launch passes for that index's
// bound: then both launches run every index below the bound exactly once,
// and the rest do nothing. A coarsened index `i = (<global index>) * K`
// (each thread covers K points from i) needs `(E + K*B - 1) / (K*B)`: the
// threads both grids run below E / K are the same, and those past it start
// at or past the bound. A grid dimension may be read from a local dim3's
// component (`blocks.y`) under the same rules as the variable itself.
// The launch gets the new configuration written out; the local variables
// it came through are left as they were.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include <array>
#include <functional>

using namespace clang;
using namespace llvm;

namespace optiml {
namespace {

/// A variable declared in \p Body after \p From and before \p To whose
/// name one of \p Init's references also has: written out at \p To,
/// \p Init would name that one instead.
const VarDecl *shadowingDecl(const Stmt *Body, const Expr *Init,
                             SourceLocation From, SourceLocation To,
                             const SourceManager &SM) {
  struct Names : RecursiveASTVisitor<Names> {
    StringSet<> Seen;
    bool VisitDeclRefExpr(DeclRefExpr *R) {
      Seen.insert(R->getDecl()->getName());
      return true;
    }
  } N;
  N.TraverseStmt(const_cast<Expr *>(Init));
  struct Decls : RecursiveASTVisitor<Decls> {
    const StringSet<> &Seen;
    SourceLocation From, To;
    const SourceManager &SM;
    const VarDecl *Found = nullptr;
    bool VisitVarDecl(VarDecl *V) {
      SourceLocation L = V->getLocation();
      if (!Found && Seen.contains(V->getName()) &&
          SM.isBeforeInTranslationUnit(From, L) &&
          SM.isBeforeInTranslationUnit(L, To))
        Found = V;
      return true;
    }
  } D{{}, N.Seen, From, To, SM};
  D.TraverseStmt(const_cast<Stmt *>(Body));
  return D.Found;
}

/// An expression's span in the main file (no trailing `;`), or nothing when
/// a macro wrote part of it (a launch macro's argument is written in the
/// file: spelledSpan()).
std::optional<SourceSpan> exprSpan(const EditContext &Ctx, const Expr *E) {
  return spelledSpan(Ctx, E);
}

const Expr *stripTemporaries(const Expr *A) {
  while (true) {
    A = A->IgnoreParenImpCasts();
    if (const auto *M = dyn_cast<MaterializeTemporaryExpr>(A))
      A = M->getSubExpr();
    else if (const auto *B = dyn_cast<CXXBindTemporaryExpr>(A))
      A = B->getSubExpr();
    else if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(A))
      A = FC->getSubExpr();
    else if (const auto *CE = dyn_cast<CXXConstructExpr>(A);
             CE && CE->getNumArgs() == 1 &&
             CE->getArg(0)->getType()->isRecordType())
      A = CE->getArg(0); // a copy of a dim3
    else
      return A;
  }
}

/// The per-dimension expressions of a launch configuration argument:
/// `e` (x only), `dim3(x, y, z)`, or a local variable initialized with one
/// of those and never assigned after. Defaulted dimensions are null.
struct Dims {
  std::array<const Expr *, 3> D{nullptr, nullptr, nullptr};
  std::string Via;    ///< the local variable it came through, if any
  bool IsInt = false; ///< an integer, not a dim3
};

/// The function whose body holds every write of \p V as seen from a
/// launch in \p Caller: \p Caller itself, or the function a lambda
/// \p Caller belongs to declares \p V in; null for anything else.
const FunctionDecl *ownerOf(const FunctionDecl *Caller, const VarDecl *V) {
  if (!Caller)
    return nullptr;
  if (V->getDeclContext() == Caller)
    return Caller;
  return lambdaOwner(Caller, V);
}

/// A variable of \p Owner that \p E names and the lambda \p Caller could
/// not read if the launch named it: no default capture, not in the
/// capture list, and not a constant (which needs no capture).
const VarDecl *uncapturedLocal(const FunctionDecl *Caller,
                               const FunctionDecl *Owner, const Expr *E,
                               const ASTContext &AST) {
  const CXXRecordDecl *L = cast<CXXMethodDecl>(Caller)->getParent();
  if (L->getLambdaCaptureDefault() != LCD_None)
    return nullptr;
  auto Captured = [&](const VarDecl *V) {
    return llvm::any_of(L->captures(), [&](const LambdaCapture &C) {
      return C.capturesVariable() && C.getCapturedVar() == V;
    });
  };
  const DeclRefExpr *R = findDeclRef(E, [&](const DeclRefExpr *DR) {
    const auto *V = dyn_cast<VarDecl>(DR->getDecl());
    return V && V->getDeclContext() == Owner &&
           !V->isUsableInConstantExpressions(AST) && !Captured(V);
  });
  return R ? cast<VarDecl>(R->getDecl()) : nullptr;
}

Expected<Dims> configDims(const EditContext &Ctx, const Edit &E,
                          const Expr *Arg, const FunctionDecl *Caller,
                          StringRef What) {
  const Expr *A = stripTemporaries(Arg);
  Dims Out;
  // `t` converted to a dim3: look at `t` itself.
  if (const auto *CE = dyn_cast<CXXConstructExpr>(A);
      CE && CE->getNumArgs() >= 1 &&
      isa_and_nonnull<VarDecl>(referencedDecl(CE->getArg(0))) &&
      llvm::all_of(llvm::drop_begin(CE->arguments()),
                   [](const Expr *X) { return isa<CXXDefaultArgExpr>(X); }))
    A = CE->getArg(0)->IgnoreParenImpCasts();
  if (const auto *VD = dyn_cast_or_null<VarDecl>(referencedDecl(A))) {
    // A launch in a lambda (`[&] { k<<<grid, block>>>(...); }`, a timing
    // harness) reads the variables of the function around it.
    const FunctionDecl *Owner = Caller;
    if (VD->isLocalVarDecl() && Caller && VD->getDeclContext() != Caller)
      if (const FunctionDecl *Around = lambdaOwner(Caller, VD))
        Owner = Around;
    if (!VD->isLocalVarDecl() || !VD->hasInit() || !Owner ||
        !Owner->getBody() || VD->getDeclContext() != Owner)
      return reject(E, "not-applicable",
                    "the " + What + " '" + VD->getName() +
                        "' is not a local variable of '" +
                        (Caller ? Caller->getNameAsString() : "?") + "'");
    if (Owner != Caller)
      if (const VarDecl *L =
              uncapturedLocal(Caller, Owner, VD->getInit(), Ctx.AST))
        return reject(E, "not-applicable",
                      "the " + What + " variable '" + VD->getName() +
                          "' is computed from '" + L->getName() +
                          "', which the lambda around the launch does not "
                          "capture");
    Caller = Owner;
    // The variable itself is never changed (the launch gets the new
    // configuration written out), so its other uses keep their value; it
    // only has to hold its initializer at the launch.
    if (writtenVars(Caller->getBody()).contains(VD))
      return reject(E, "not-applicable",
                    "the " + What + " variable '" + VD->getName() +
                        "' is assigned after its declaration in '" +
                        Caller->getName() + "'");
    Out.Via = VD->getNameAsString();
    A = stripTemporaries(VD->getInit());
    if (const VarDecl *S =
            shadowingDecl(Caller->getBody(), A, VD->getLocation(),
                          Arg->getBeginLoc(), Ctx.AST.getSourceManager()))
      return reject(E, "not-applicable",
                    "the " + What + " variable '" + VD->getName() +
                        "' is computed from '" + S->getName() +
                        "', which another declaration hides at the launch");
    // Its initializer moves to the launch: what it names must not change in
    // between.
    DenseSet<const ValueDecl *> W = writtenVars(Caller->getBody());
    for (const ValueDecl *X : W)
      if (mentions(A, X))
        return reject(E, "not-applicable",
                      "the " + What + " variable '" + VD->getName() +
                          "' is computed from '" + X->getName() + "', which '" +
                          Caller->getName() + "' changes");
  }
  if (A->getType()->isIntegerType()) {
    Out.D[0] = A;
    Out.IsInt = true;
    return Out;
  }
  if (const auto *CE = dyn_cast<CXXConstructExpr>(A);
      CE && CE->getNumArgs() >= 1 && CE->getNumArgs() <= 3) {
    for (unsigned I = 0; I < CE->getNumArgs(); ++I)
      if (!isa<CXXDefaultArgExpr>(CE->getArg(I)))
        Out.D[I] = CE->getArg(I)->IgnoreImpCasts();
    return Out;
  }
  return reject(E, "not-applicable",
                "the " + What +
                    " is not an integer or a dim3(...) "
                    "(found '" +
                    spelledText(Ctx, Arg) + "')");
}

/// The component \p GE names when it is `v.x`, `v.y` or `v.z` of a local
/// dim3 `v` whose initializer configDims() reads (written out at the
/// launch, it means the same); null when \p GE is something else; an
/// error when `v` is not such a variable.
Expected<const Expr *> dim3Component(const EditContext &Ctx, const Edit &E,
                                     const Expr *GE,
                                     const FunctionDecl *Caller) {
  const auto *M = dyn_cast<MemberExpr>(GE->IgnoreParenImpCasts());
  if (!M || M->isArrow() || !M->getMemberDecl()->getIdentifier())
    return nullptr;
  StringRef Name = M->getMemberDecl()->getName();
  int D = Name == "x" ? 0 : Name == "y" ? 1 : Name == "z" ? 2 : -1;
  const Expr *Base = M->getBase()->IgnoreParenImpCasts();
  if (D < 0 || !isa_and_nonnull<VarDecl>(referencedDecl(Base)))
    return nullptr;
  auto Dims = configDims(Ctx, E, Base, Caller, "grid");
  if (!Dims)
    return Dims.takeError();
  if (Dims->IsInt || !Dims->D[D])
    return nullptr;
  return Dims->D[D];
}

const FunctionDecl *enclosingFunction(ASTContext &AST, const Stmt *S) {
  DynTypedNode N = DynTypedNode::create(*S);
  while (true) {
    DynTypedNodeList Ps = AST.getParents(N);
    if (Ps.empty())
      return nullptr;
    if (const auto *FD = Ps[0].get<FunctionDecl>())
      return FD;
    N = Ps[0];
  }
}

/// The integer \p E stands for at a launch in \p Caller (foldLaunchInteger()):
/// a local variable of \p Caller never assigned after its initializer
/// (`int threads = 256;`) stands for that initializer.
std::optional<int64_t> launchValue(const Expr *E, const FunctionDecl *Caller,
                                   const ASTContext &AST) {
  return foldLaunchInteger(
      E, AST,
      [&](const Expr *X, LaunchFoldNext Next) -> std::optional<int64_t> {
        // `block.x` of a dim3 variable never assigned: that extent.
        if (isa<MemberExpr>(X))
          return launchTimeValue(X, AST);
        const auto *VD = dyn_cast_or_null<VarDecl>(referencedDecl(X));
        const FunctionDecl *Owner = VD ? ownerOf(Caller, VD) : nullptr;
        if (!VD || !Owner || !Owner->getBody() || !VD->isLocalVarDecl() ||
            !VD->hasInit() || !VD->getType()->isIntegerType() ||
            writtenVars(Owner->getBody()).contains(VD))
          return std::nullopt;
        return Next(VD->getInit());
      });
}

struct KernelIndex {
  const VarDecl *V = nullptr;
  /// Points a thread covers along the index: `i = (<global index>) * 4`
  /// (a coarsened kernel, each thread at i .. i + 3).
  int64_t Scale = 1;
  const ParmVarDecl *Bound = nullptr; ///< guarded `V < Bound - Less`
  int64_t Less = 0;
  bool Inclusive = false; ///< written `V <= Bound - Less` (Less >= 1)
  /// Or a bound known when compiling (`V < N` with a constexpr N, a macro,
  /// a literal, or the kernel template's integer parameters, `V < Dim - 1`):
  /// the comparison, read per launch by constantBound() (a template's
  /// parameters in the instantiation the launch calls).
  struct {
    const Expr *Bd = nullptr;
    const BinaryOperator *Cmp = nullptr;
    bool Inclusive = false;
    int64_t Offset = 0;
  } ConstGuard;
  std::string BoundText; ///< that comparison as written
};

/// What \p E adds to the index \p V: 0 for `V` itself, c for `V + c` or
/// `c + V` with c a constant of at least 0; nothing for anything else.
std::optional<int64_t> indexPlus(const Expr *E, const VarDecl *V,
                                 const ASTContext &AST) {
  if (refersTo(E, V))
    return 0;
  const auto *Add = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
  if (!Add || Add->getOpcode() != BO_Add)
    return std::nullopt;
  for (int Swap = 0; Swap < 2; ++Swap)
    if (refersTo(Swap ? Add->getRHS() : Add->getLHS(), V))
      if (auto C = intValue(Swap ? Add->getLHS() : Add->getRHS(), AST);
          C && *C >= 0)
        return C;
  return std::nullopt;
}

/// The dimension of a global index \p E, `blockIdx.D * blockDim.D +
/// threadIdx.D`, or of one times a positive integer constant (\p Scale:
/// each thread covers Scale points from there on).
std::optional<char> scaledIndexDim(const Expr *E, const ASTContext &AST,
                                   int64_t &Scale) {
  Scale = 1;
  if (auto D = linearIndexDim(E))
    return D;
  const auto *Mul = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
  if (!Mul || Mul->getOpcode() != BO_Mul)
    return std::nullopt;
  for (int Swap = 0; Swap < 2; ++Swap) {
    auto D = linearIndexDim(Swap ? Mul->getRHS() : Mul->getLHS());
    auto C = intValue(Swap ? Mul->getLHS() : Mul->getRHS(), AST);
    if (D && C && *C >= 1 && *C <= 64) {
      Scale = *C;
      return D;
    }
  }
  return std::nullopt;
}

/// The parameter \p Bd stands for as an index's upper bound, with what it
/// subtracts: `n` (exclusive), `n - c` with c >= 0 (c >= 1 when
/// \p Inclusive) in a signed comparison \p Cmp, so that every index the
/// guard lets through is below the parameter; nothing otherwise.
std::optional<std::pair<const ParmVarDecl *, int64_t>>
boundParam(const Expr *Bd, bool Inclusive, const BinaryOperator *Cmp,
           const ASTContext &AST, int64_t Offset = 0) {
  if (!Bd)
    return std::nullopt;
  bool Signed = Cmp->getLHS()->getType()->isSignedIntegerType() &&
                Cmp->getRHS()->getType()->isSignedIntegerType();
  // `i + 1 < n` in unsigned arithmetic wraps at the top.
  if (Offset > 0 && !Signed)
    return std::nullopt;
  const Expr *X = Bd->IgnoreParenImpCasts();
  int64_t Less = 0;
  if (const auto *Sub = dyn_cast<BinaryOperator>(X);
      Sub && Sub->getOpcode() == BO_Sub) {
    // Unsigned, `n - 2` wraps for n < 2 and lets every thread through.
    std::optional<int64_t> C = intValue(Sub->getRHS(), AST);
    if (!C || !Sub->getType()->isSignedIntegerType() || !Signed)
      return std::nullopt;
    Less = *C;
    X = Sub->getLHS()->IgnoreParenImpCasts();
  }
  const auto *PV = dyn_cast_or_null<ParmVarDecl>(referencedDecl(X));
  if (!PV || Less < 0 || Less + Offset < (Inclusive ? 1 : 0))
    return std::nullopt;
  return std::make_pair(PV, Less + Offset);
}

/// A constant upper bound \p Bd on an index (`i < N` with N a constexpr, a
/// macro or a literal; `i + 1 < N - 1`): the first index the guard stops,
/// so that every index it lets through is below it. Nothing when \p Bd is
/// not a constant (\p Value, default intValue()), or is negative (or the
/// index is offset) in an unsigned comparison \p Cmp.
std::optional<int64_t>
constantBound(const Expr *Bd, bool Inclusive, const BinaryOperator *Cmp,
              const ASTContext &AST, int64_t Offset = 0,
              function_ref<std::optional<int64_t>(const Expr *)> Value = {}) {
  if (!Bd)
    return std::nullopt;
  bool Signed = Cmp->getLHS()->getType()->isSignedIntegerType() &&
                Cmp->getRHS()->getType()->isSignedIntegerType();
  std::optional<int64_t> V = Value ? Value(Bd) : intValue(Bd, AST);
  if (!V || (!Signed && (Offset > 0 || *V < 0)))
    return std::nullopt;
  return std::max<int64_t>(0, *V - Offset + (Inclusive ? 1 : 0));
}

/// \p E is integer arithmetic over constants and the integer template
/// parameters of the kernel, at least one of them.
bool templateArithmetic(const Expr *E, const ASTContext &AST) {
  bool Seen = false;
  std::function<bool(const Expr *)> Walk = [&](const Expr *X) {
    X = X->IgnoreParenImpCasts();
    if (const auto *DR = dyn_cast<DeclRefExpr>(X);
        DR && isa<NonTypeTemplateParmDecl>(DR->getDecl()))
      return Seen = true;
    if (const auto *B = dyn_cast<BinaryOperator>(X))
      return (B->isAdditiveOp() || B->getOpcode() == BO_Mul) &&
             Walk(B->getLHS()) && Walk(B->getRHS());
    return !X->isValueDependent() && intValue(X, AST).has_value();
  };
  return Walk(E) && Seen;
}

/// The value of \p E, integer arithmetic over the kernel template's
/// parameters, in the instantiation \p Callee that a launch calls.
std::optional<int64_t> instantiatedValue(const Expr *E,
                                         const FunctionDecl *Callee,
                                         const ASTContext &AST) {
  const TemplateArgumentList *Args =
      Callee ? Callee->getTemplateSpecializationArgs() : nullptr;
  if (!Args)
    return std::nullopt;
  return foldLaunchInteger(
      E, AST, [&](const Expr *X, LaunchFoldNext) -> std::optional<int64_t> {
        const auto *DR = dyn_cast<DeclRefExpr>(X);
        const auto *P =
            DR ? dyn_cast<NonTypeTemplateParmDecl>(DR->getDecl()) : nullptr;
        if (!P || P->getDepth() != 0 || P->getIndex() >= Args->size() ||
            Args->get(P->getIndex()).getKind() != TemplateArgument::Integral)
          return std::nullopt;
        return Args->get(P->getIndex()).getAsIntegral().getSExtValue();
      });
}

class LaunchConfigTransform : public Transform {
public:
  StringRef kind() const override { return "launch-config"; }
  StringRef description() const override {
    return "change the block size at a launch site and rescale its "
           "(n + B - 1) / B grid to match";
  }
  TargetKind targetKind() const override { return TargetKind::Launch; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec::integer("block",
                               "threads per block in x (one-dimensional form)",
                               1, 1024),
            ParamSpec::integer("block_x", "threads per block in x", 1, 1024),
            ParamSpec::integer("block_y", "threads per block in y", 1, 1024),
            ParamSpec::integer("block_z", "threads per block in z", 1, 64)};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E = defaultEdit(kind(), Target);
    auto Plan = planOrReason(A, analyze(Ctx, E));
    if (!Plan)
      return A;
    A.Reason = "the kernel's work depends on its guarded global indices only "
               "and the grid is sized from the block (" +
               join(Plan->Explain, "; ") + ")";
    // A block narrower than a warp in x makes each warp read several short
    // row segments (8 floats: 32 bytes) where a warp-wide block reads whole
    // 128-byte lines: worth trying early.
    // (A coarsened kernel's thread covers Scale points along x.)
    int64_t OldX = Plan->Old[0].value_or(1);
    int64_t Scale = Plan->Grid[0] ? Plan->Grid[0]->Scale : 1;
    bool Multi = Plan->Old[1].value_or(1) > 1 || Plan->Old[2].value_or(1) > 1;
    if (Multi && OldX * Scale < 32) {
      A.PriorScale = 2;
      A.PriorWhy = "blocks " +
                   (Scale > 1 ? std::to_string(OldX * Scale) + " points (" +
                                    std::to_string(OldX) + " threads of " +
                                    std::to_string(Scale) + ")"
                              : std::to_string(OldX) + " threads") +
                   " wide: each warp reads " +
                   std::to_string(32 / std::max<int64_t>(OldX * Scale, 1)) +
                   " short row segments";
    }
    // The shapes offered keep the block's dimensionality; a 3D block is
    // offered only where its z dimension can change too. Threads that
    // cover several points along x get narrower blocks, a warp still
    // spanning 64 points or more of a row.
    bool ThreeD = Plan->Old[2].value_or(1) > 1 && Plan->Grid[2];
    bool TwoD = !ThreeD && Plan->Old[1].value_or(1) > 1;
    bool Wide = Scale > 1;
    using Shape = std::array<int64_t, 3>;
    std::vector<Shape> Options =
        ThreeD ? (Wide ? std::vector<Shape>{{16, 8, 4}, {32, 4, 4}, {16, 4, 8}}
                       : std::vector<Shape>{{32, 4, 4}, {16, 8, 4}, {32, 8, 2}})
        : TwoD
            ? (Wide ? std::vector<Shape>{{16, 16, 1}, {32, 8, 1}, {16, 8, 1}}
                    : std::vector<Shape>{{32, 8, 1}, {16, 16, 1}, {32, 32, 1}})
            : std::vector<Shape>{{128, 1, 1}, {256, 1, 1}, {512, 1, 1}};
    for (const Shape &O : Options) {
      if (O[0] == Plan->Old[0] && O[1] == Plan->Old[1].value_or(1) &&
          O[2] == Plan->Old[2].value_or(1))
        continue;
      if (!ThreeD && O[0] * O[1] * Plan->Old[2].value_or(1) > 1024)
        continue;
      Edit S = E;
      if (ThreeD) {
        S.Params["block_x"] = O[0];
        S.Params["block_y"] = O[1];
        S.Params["block_z"] = O[2];
      } else if (TwoD) {
        S.Params["block_x"] = O[0];
        S.Params["block_y"] = O[1];
      } else {
        S.Params["block"] = O[0];
      }
      if (Plan->LaunchBound && O[0] * O[1] * O[2] > *Plan->LaunchBound)
        continue;
      // A dimension whose grid cannot be rescaled keeps its block.
      bool Reachable = true;
      for (int D = 0; D < 3; ++D)
        if (O[D] != Plan->Old[D].value_or(1) && !Plan->Grid[D])
          Reachable = false;
      if (!Reachable)
        continue;
      A.Suggestions.push_back(S);
    }
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    std::optional<int64_t> BX = E.getInt("block_x"), BY = E.getInt("block_y"),
                           BZ = E.getInt("block_z");
    if (auto B = E.getInt("block")) {
      if (BX && *BX != *B)
        return reject(E, "params", "give either block or block_x, not both");
      BX = B;
    }
    if (!BX && !BY && !BZ)
      return reject(E, "params",
                    "give block (or block_x, block_y and/or block_z)");
    auto Plan = analyze(Ctx, E);
    if (!Plan)
      return Plan.takeError();
    std::array<std::optional<int64_t>, 3> New{BX, BY, BZ};
    int64_t Total = 1;
    for (int D = 0; D < 3; ++D)
      Total *= New[D].value_or(Plan->Old[D].value_or(1));
    if (New[2].value_or(1) > 64)
      return reject(E, "params",
                    "a block's z dimension is at most 64 (asked " +
                        Twine(*New[2]) + ")");
    if (Total > 1024)
      return reject(E, "params",
                    "a block of " + Twine(Total) +
                        " threads exceeds the limit of 1024");
    if (Plan->LaunchBound && Total > *Plan->LaunchBound)
      return reject(E, "not-applicable",
                    "kernel '" + Plan->Kernel.Info->Name +
                        "' declares __launch_bounds__(" +
                        Twine(*Plan->LaunchBound) + "), fewer than the " +
                        Twine(Total) + " threads of the new block");
    // A configuration held in a local variable is rewritten in the launch
    // itself (only launch configurations may change); the variable, used
    // nowhere else, is left as it was.
    std::array<std::string, 3> BText, GText;
    bool BChanged = false, GChanged = false;
    for (int D = 0; D < 3; ++D) {
      if (Plan->Block.D[D])
        BText[D] = spelledText(Ctx, Plan->Block.D[D]);
      if (Plan->GridDims.D[D])
        GText[D] = gridText(Ctx, Plan->GridDims.D[D]);
    }
    tooling::Replacements R;
    for (int D = 0; D < 3; ++D) {
      if (!New[D] || New[D] == Plan->Old[D].value_or(1))
        continue;
      char Dim = "xyz"[D];
      if (!Plan->Block.D[D])
        return reject(E, "not-applicable",
                      "the block of " + E.Target + " has no " + Twine(Dim) +
                          " dimension written out to change");
      if (!Plan->Grid[D])
        return reject(E, "not-applicable", Plan->WhyNotGrid[D]);
      auto BSpan = exprSpan(Ctx, Plan->Block.D[D]);
      auto GSpan = gridSpan(Ctx, Plan->Grid[D]->E);
      if (!BSpan || !GSpan || BText[D].empty() || GText[D].empty())
        return reject(E, "not-applicable",
                      "the launch configuration of " + E.Target +
                          " is written with a macro");
      std::string NB = std::to_string(*New[D]);
      int64_t Span = *New[D] * Plan->Grid[D]->Scale;
      std::string Num = gridPartText(Ctx, Plan->Grid[D]->C.Numerator);
      std::string GridText = "(" + Num + " + " + std::to_string(Span - 1) +
                             ") / " + std::to_string(Span);
      BText[D] = NB;
      GText[D] = GridText;
      if (Plan->Grid[D]->InCast)
        GridText = "(" + GridText + ")";
      BChanged = GChanged = true;
      if (Plan->Block.Via.empty())
        if (Error Err = addReplacement(R, replaceSpan(Ctx, *BSpan, NB), E))
          return std::move(Err);
      if (Plan->GridDims.Via.empty())
        if (Error Err =
                addReplacement(R, replaceSpan(Ctx, *GSpan, GridText), E))
          return std::move(Err);
    }
    auto Whole = [](const Dims &Ds, const std::array<std::string, 3> &T) {
      if (Ds.IsInt)
        return T[0];
      std::string S = "dim3(" + T[0];
      for (int D = 1; D < 3 && Ds.D[D]; ++D)
        S += ", " + T[D];
      return S + ")";
    };
    const LaunchSite &L = *Plan->Launch.Info;
    if (BChanged && !Plan->Block.Via.empty())
      if (Error Err = addReplacement(
              R, replaceSpan(Ctx, L.BlockRange, Whole(Plan->Block, BText)), E))
        return std::move(Err);
    if (GChanged && !Plan->GridDims.Via.empty())
      if (Error Err = addReplacement(
              R, replaceSpan(Ctx, L.GridRange, Whole(Plan->GridDims, GText)),
              E))
        return std::move(Err);
    return R;
  }

private:
  struct GridDim {
    const Expr *E = nullptr;
    CeilDiv C;
    bool InCast = false; ///< E is the operand of `(unsigned)(...)`
    int64_t Scale = 1;   ///< points a thread covers (KernelIndex::Scale)
  };
  struct Plan {
    ResolvedLaunch Launch;
    ResolvedKernel Kernel;
    Dims Block, GridDims;
    /// The block in x, y, z (y and z: where written).
    std::array<std::optional<int64_t>, 3> Old;
    std::array<std::optional<GridDim>, 3> Grid; ///< rewritable dims
    std::array<std::string, 3> WhyNotGrid;
    std::optional<int64_t> LaunchBound;
    std::vector<std::string> Explain;
  };

  Expected<Plan> analyze(const EditContext &Ctx, const Edit &E) const;
};

/// Whether \p A and \p B are spelled alike, parentheses aside: a launch
/// macro's `((n) + 255) / 256` is sized from `n`.
bool sameSpelling(const EditContext &Ctx, const Expr *A, const Expr *B) {
  std::string Text = spelledText(Ctx, A->IgnoreParenImpCasts());
  return !Text.empty() && Text == spelledText(Ctx, B->IgnoreParenImpCasts());
}

/// Why the statements after a kernel's global indices may depend on the
/// block size: they read a thread or block coordinate, themselves or through
/// a helper (threadShapeCall()); "" when they do not. Said after the
/// kernel's name.
std::string coordinateUseProblem(const EditContext &Ctx,
                                 ArrayRef<const Stmt *> Stmts) {
  for (const Stmt *S : Stmts)
    if (mentionsBuiltin(S))
      return " uses a thread or block coordinate outside a global index "
             "'blockIdx.x * blockDim.x + threadIdx.x' (in '" +
             StringRef(stmtText(Ctx, S)).split('\n').first.trim().str() +
             "'): its work may depend on the block size";
  if (std::string Why =
          threadShapeCallProblem(Stmts, Ctx.AST.getSourceManager());
      !Why.empty())
    return ": " + Why + " (its work may depend on the block size)";
  return "";
}

/// Why the kernel's work may depend on more than its guarded global
/// indices (shared memory, barriers, warp primitives, a launch bound that
/// is not a number, macros that name variables), or "". Sets
/// \p LaunchBound from its __launch_bounds__.
std::string kernelShapeProblem(const EditContext &Ctx, const KernelInfo &KI,
                               const FunctionDecl *FD, const std::string &KName,
                               std::optional<int64_t> &LaunchBound) {
  if (!KI.Shared.empty())
    return KName + " uses the __shared__ array '" + KI.Shared.front().Name +
           "', which is sized and shared per block";
  if (!KI.Syncthreads.empty())
    return KName + " synchronizes the threads of a block";
  if (!KI.WarpPrimitives.empty())
    return KName + " uses warp primitives ('" + KI.WarpPrimitives.front().Name +
           "')";
  if (!KI.LaunchBounds.empty()) {
    int64_t V;
    if (StringRef(KI.LaunchBounds.front()).trim().getAsInteger(10, V))
      return KName + " declares __launch_bounds__(" + KI.LaunchBounds.front() +
             "), which is not a number";
    LaunchBound = V;
  }
  const auto *Body = dyn_cast_or_null<CompoundStmt>(FD->getBody());
  // The body is read, not rewritten: macros that stand for constants
  // (`#define C0 0.4f`) hide no thread coordinate from the analysis.
  if (!Body)
    return KName + " has no body";
  if (!onlyConstantMacros(Body, Ctx.AST))
    return KName + " is written with macros that name "
                   "variables or call functions";
  return "";
}

/// Reads the guard right after a kernel's global indices (the statement
/// at \p At): `if (<conjunction>) body` as the last statement, or
/// `if (<disjunction>) return;`. Sets each index's bound from the terms
/// that bound it (boundParam()); returns whether the guard has one of
/// those shapes.
bool readGuard(const EditContext &Ctx, ArrayRef<const Stmt *> Stmts, size_t At,
               std::array<KernelIndex, 3> &Idx,
               const DenseSet<const ValueDecl *> &Written) {
  const auto *If = At < Stmts.size() ? dyn_cast<IfStmt>(Stmts[At]) : nullptr;
  bool Guarded = If && !If->getElse() && !If->getInit();
  bool EarlyReturn = false;
  if (Guarded) {
    // `if (<outside>) return;`, one term or several joined by `||`.
    const Stmt *Then = If->getThen();
    if (const auto *CS = dyn_cast<CompoundStmt>(Then); CS && CS->size() == 1)
      Then = CS->body_front();
    const auto *Ret = dyn_cast<ReturnStmt>(Then);
    EarlyReturn = Ret && !Ret->getRetValue();
    auto Terms = splitJoined(If->getCond(), EarlyReturn ? BO_LOr : BO_LAnd);
    if (!EarlyReturn)
      Guarded = At + 1 == Stmts.size();
    for (const Expr *T : Terms) {
      const auto *B = dyn_cast<BinaryOperator>(T->IgnoreParenImpCasts());
      if (!B)
        continue;
      BinaryOperatorKind Op = B->getOpcode();
      for (KernelIndex &K : Idx) {
        if (!K.V)
          continue;
        // The index on the left: `i < b` (`i >= b` for an early return),
        // or `i <= b` (`i > b`); on the right, the mirror images.
        // `i + c` (c >= 0) stands for i below a bound less c.
        const Expr *Bd = nullptr;
        bool Inclusive = false;
        int64_t Offset = 0;
        if (auto L = indexPlus(B->getLHS(), K.V, Ctx.AST)) {
          Bd = B->getRHS();
          Offset = *L;
          Inclusive = Op == (EarlyReturn ? BO_GT : BO_LE);
          if (!Inclusive && Op != (EarlyReturn ? BO_GE : BO_LT))
            Bd = nullptr;
        } else if (auto R = indexPlus(B->getRHS(), K.V, Ctx.AST)) {
          Bd = B->getLHS();
          Offset = *R;
          Inclusive = Op == (EarlyReturn ? BO_LT : BO_GE);
          if (!Inclusive && Op != (EarlyReturn ? BO_LE : BO_GT))
            Bd = nullptr;
        }
        if (auto PB = boundParam(Bd, Inclusive, B, Ctx.AST, Offset);
            PB && !Written.contains(PB->first)) {
          K.Bound = PB->first;
          K.Less = PB->second;
          K.Inclusive = Inclusive;
        } else if (constantBound(Bd, Inclusive, B, Ctx.AST, Offset) ||
                   (Bd && templateArithmetic(Bd, Ctx.AST))) {
          K.ConstGuard = {Bd, B, Inclusive, Offset};
          K.BoundText = spelledText(Ctx, B);
        }
      }
    }
  }
  return Guarded;
}

/// The global indices \p Stmts declare first, one per dimension, never
/// written again (`int i = blockIdx.x * blockDim.x + threadIdx.x;`, or
/// coarsened, `* 4`), into \p Idx; returns the index of the first other
/// statement.
size_t readIndices(const EditContext &Ctx, ArrayRef<const Stmt *> Stmts,
                   const DenseSet<const ValueDecl *> &Written,
                   std::array<KernelIndex, 3> &Idx) {
  size_t At = 0;
  for (; At < Stmts.size(); ++At) {
    const auto *DS = dyn_cast<DeclStmt>(Stmts[At]);
    const VarDecl *VD = DS && DS->isSingleDecl()
                            ? dyn_cast<VarDecl>(DS->getSingleDecl())
                            : nullptr;
    int64_t Scale = 1;
    auto Dim = VD && VD->hasInit()
                   ? scaledIndexDim(VD->getInit(), Ctx.AST, Scale)
                   : std::nullopt;
    if (!Dim || (*Dim != 'x' && *Dim != 'y' && *Dim != 'z') ||
        Idx[*Dim - 'x'].V || Written.contains(VD))
      break;
    Idx[*Dim - 'x'].V = VD;
    Idx[*Dim - 'x'].Scale = Scale;
  }
  return At;
}

Expected<LaunchConfigTransform::Plan>
LaunchConfigTransform::analyze(const EditContext &Ctx, const Edit &E) const {
  auto L = resolveLaunch(Ctx, E, E.Target);
  if (!L)
    return L.takeError();
  Plan P;
  P.Launch = *L;
  P.Kernel = L->Kernel;
  const KernelInfo &KI = *L->Kernel.Info;
  const FunctionDecl *FD = L->Kernel.Decl;
  std::string KName = "kernel '" + KI.Name + "'";
  auto NotApplicable = [&](const Twine &Why) {
    return reject(E, "not-applicable", Why);
  };
  if (L->Info->InMacro && !L->Info->GridInPlace)
    return NotApplicable(macroGridProblem(*L->Info));
  if (L->Info->InMacro && !L->Info->BlockInPlace)
    return NotApplicable(macroBlockProblem(*L->Info));

  // The kernel: work that depends on guarded global indices only.
  if (std::string Why = kernelShapeProblem(Ctx, KI, FD, KName, P.LaunchBound);
      !Why.empty())
    return NotApplicable(Why);
  const auto *Body = cast<CompoundStmt>(FD->getBody());
  std::array<KernelIndex, 3> Idx;
  SmallVector<const Stmt *, 8> Stmts(Body->body_begin(), Body->body_end());
  DenseSet<const ValueDecl *> Written = writtenVars(Body);
  size_t At = readIndices(Ctx, Stmts, Written, Idx);
  if (std::string Why =
          coordinateUseProblem(Ctx, ArrayRef(Stmts).drop_front(At));
      !Why.empty())
    return NotApplicable(KName + Why);
  // The guard, at once.
  bool Guarded = readGuard(Ctx, Stmts, At, Idx, Written);

  // The launch configuration.
  const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, *L->Info);
  if (!Call || !Call->getConfig() || Call->getConfig()->getNumArgs() < 2)
    return NotApplicable("launch " + E.Target + " was not found in the AST");
  const FunctionDecl *Caller = enclosingFunction(Ctx.AST, Call);
  auto B = configDims(Ctx, E, Call->getConfig()->getArg(1), Caller, "block");
  if (!B)
    return B.takeError();
  P.Block = *B;
  for (int D = 0; D < 3; ++D) {
    std::optional<int64_t> V =
        P.Block.D[D] ? intValue(P.Block.D[D], Ctx.AST) : int64_t(1);
    if (!V)
      return NotApplicable("the block of " + E.Target + " ('" + L->Info->Block +
                           "') is not a constant");
    if (D == 0 || P.Block.D[D])
      P.Old[D] = V;
  }
  auto G = configDims(Ctx, E, Call->getConfig()->getArg(0), Caller, "grid");
  if (!G)
    return G.takeError();
  P.GridDims = *G;
  for (int D = 0; D < 3; ++D) {
    char Dim = "xyz"[D];
    std::string DimS(1, Dim);
    const Expr *GE = P.GridDims.D[D];
    // `(unsigned)((n + 255) / 256)`: a cast to an integer of 32 bits or
    // more changes nothing the launch's own conversion to dim3's unsigned
    // would not.
    bool InCast = false;
    while (GE) {
      const auto *Cast = dyn_cast<ExplicitCastExpr>(GE->IgnoreParens());
      if (!Cast || !Cast->getType()->isIntegerType() ||
          Ctx.AST.getIntWidth(Cast->getType()) < 32)
        break;
      GE = Cast->getSubExpr();
      InCast = true;
    }
    const KernelIndex &K = Idx[D];
    int64_t OldB = P.Old[D].value_or(1), Scale = K.V ? K.Scale : 1;
    auto Why = [&](const Twine &T) { P.WhyNotGrid[D] = T.str(); };
    // `blocks.y` of a local `dim3 blocks(..., (n + 7) / 8)`: its component.
    const Expr *Sized = GE;
    if (Expected<const Expr *> M =
            GE ? dim3Component(Ctx, E, GE, Caller) : nullptr;
        !M) {
      Why(toString(M.takeError()));
      continue;
    } else if (*M) {
      Sized = *M;
    }
    std::optional<CeilDiv> C =
        Sized ? matchCeilDivOrHelper(Sized, Ctx.AST,
                                     [&](const Expr *X) {
                                       return launchValue(X, Caller, Ctx.AST);
                                     })
              : std::nullopt;
    if (!C || C->Divisor != OldB * Scale) {
      Why("the grid's " + DimS + " dimension ('" +
          (GE ? gridText(Ctx, GE) : std::string("1")) + "') is not (E + " +
          std::to_string(OldB * Scale - 1) + ") / " +
          std::to_string(OldB * Scale) + " over the block" +
          (Scale > 1 ? " times the " + std::to_string(Scale) +
                           " points a thread covers"
                     : ""));
      continue;
    }
    if (!gridSpan(Ctx, GE) || gridPartText(Ctx, C->Numerator).empty()) {
      Why("the grid's " + DimS +
          " dimension is written with a macro; its text cannot be rescaled "
          "in place");
      continue;
    }
    // A bound known when compiling; a template's parameters in the
    // instantiation this launch calls.
    std::optional<int64_t> ConstBound;
    if (!K.Bound && K.ConstGuard.Bd)
      ConstBound = constantBound(
          K.ConstGuard.Bd, K.ConstGuard.Inclusive, K.ConstGuard.Cmp, Ctx.AST,
          K.ConstGuard.Offset, [&](const Expr *X) {
            if (auto V = intValue(X, Ctx.AST))
              return V;
            return instantiatedValue(X, Call->getDirectCallee(), Ctx.AST);
          });
    if (!K.V || !Guarded || (!K.Bound && !ConstBound)) {
      Why(KName + " has no global " + DimS + " index 'blockIdx." + DimS +
          " * blockDim." + DimS + " + threadIdx." + DimS +
          "' guarded at once by a parameter bound; the threads past the "
          "data might do work");
      continue;
    }
    auto Explain = [&](const std::string &Covered) {
      P.Explain.push_back(
          std::string(1, Dim) + ": '" + gridText(Ctx, GE) + "' covers '" +
          Covered + "'" +
          (Scale > 1 ? " (" + std::to_string(Scale) + " points a thread)"
                     : ""));
    };
    auto Take = [&] {
      GridDim GD;
      GD.E = GE;
      GD.C = *C;
      GD.InCast = InCast;
      GD.Scale = Scale;
      P.Grid[D] = GD;
    };
    // A constant bound: the grid's E (known at the launch) must reach it,
    // so that the old grid's threads past E do nothing.
    if (!K.Bound) {
      auto NV = launchValue(C->Numerator, Caller, Ctx.AST);
      if (!NV || *NV < *ConstBound) {
        Why("the grid's " + DimS + " dimension is sized from '" +
            gridPartText(Ctx, C->Numerator) + "', not from at least the " +
            std::to_string(*ConstBound) + " values of the kernel's " + DimS +
            " index that '" + K.BoundText + "' lets through");
        continue;
      }
      Take();
      Explain(K.BoundText);
      continue;
    }
    unsigned PI = K.Bound->getFunctionScopeIndex();
    if (PI >= Call->getNumArgs()) {
      Why("launch " + E.Target + " passes no argument for '" +
          K.Bound->getName() + "'");
      continue;
    }
    const Expr *Arg = Call->getArg(PI);
    std::string ArgText = spelledText(Ctx, Arg),
                NumText = gridPartText(Ctx, C->Numerator);
    auto AV = intValue(Arg, Ctx.AST), NV = intValue(C->Numerator, Ctx.AST);
    bool Same = (sameSpelling(Ctx, Arg, C->Numerator) &&
                 !Arg->HasSideEffects(Ctx.AST)) ||
                (AV && NV && *AV == *NV);
    if (const auto *VD = dyn_cast_or_null<VarDecl>(referencedDecl(Arg));
        Same && !AV && VD) {
      const FunctionDecl *Owner = ownerOf(Caller, VD);
      if (!Owner || !Owner->getBody() ||
          writtenVars(Owner->getBody()).contains(VD))
        Same = false;
    }
    if (!Same) {
      Why("the grid's " + DimS + " dimension is sized from '" + NumText +
          "' but the kernel's " + DimS + " index is bounded by '" +
          K.Bound->getName() + "' = '" + ArgText + "'");
      continue;
    }
    Take();
    Explain(K.V->getName().str() + (K.Inclusive ? " <= " : " < ") +
            K.Bound->getName().str() +
            (K.Less ? " - " + std::to_string(K.Less) : ""));
  }
  if (!P.Grid[0] && !P.Grid[1] && !P.Grid[2])
    return NotApplicable(P.WhyNotGrid[0]);
  return P;
}

} // namespace

std::unique_ptr<Transform> createLaunchConfigTransform() {
  return std::make_unique<LaunchConfigTransform>();
}

} // namespace optiml
