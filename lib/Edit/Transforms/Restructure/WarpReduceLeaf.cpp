//===- WarpReduceLeaf.cpp - warp-reduce: the grid-stride leaf -------------===//
//
// The third matcher of warp-reduce (with grid_stride): the value each thread
// stores before a shared-memory tree, guarded by the index's bound, which
// becomes a register folded over a grid-stride loop.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "WarpReduceInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <functional>

using namespace clang;
using namespace llvm;

namespace optiml {
namespace warpreduce {

namespace {

/// Whether \p Id is the identity of \p Op for elements of type \p Elem:
/// 0 for +; -INFINITY, the lowest finite value or the type's minimum for
/// max; their opposites for min.
bool isIdentity(const Expr *Id, ReduceOp Op, QualType Elem,
                const ASTContext &AST) {
  if (!Id || Id->isValueDependent() || Id->isTypeDependent())
    return false;
  Expr::EvalResult R;
  if (!Id->EvaluateAsRValue(R, AST))
    return false;
  const APValue &V = R.Val;
  if (Op == ReduceOp::Sum)
    return (V.isInt() && V.getInt().isZero()) ||
           (V.isFloat() && V.getFloat().isZero());
  if (Elem->isDependentType())
    return false;
  bool Max = Op == ReduceOp::Max;
  if (V.isFloat()) {
    const APFloat &F = V.getFloat();
    if (F.isInfinity())
      return F.isNegative() == Max;
    if (!Elem->isRealFloatingType())
      return false;
    APFloat L = APFloat::getLargest(AST.getFloatTypeSemantics(Elem), Max);
    APFloat G = F;
    bool Lost = false;
    G.convert(L.getSemantics(), APFloat::rmNearestTiesToEven, &Lost);
    return !Lost && G.bitwiseIsEqual(L);
  }
  if (V.isInt() && Elem->isIntegerType()) {
    unsigned W = AST.getIntWidth(Elem);
    bool Unsigned = Elem->isUnsignedIntegerType();
    APSInt Want = Max ? APSInt::getMinValue(W, Unsigned)
                      : APSInt::getMaxValue(W, Unsigned);
    return APSInt::isSameValue(V.getInt(), Want);
  }
  return false;
}

StringRef identityName(ReduceOp Op) {
  switch (Op) {
  case ReduceOp::Sum:
    return "0";
  case ReduceOp::Max:
    return "-INFINITY, the lowest finite value or the type's minimum";
  case ReduceOp::Min:
    return "INFINITY, the largest finite value or the type's maximum";
  }
  return "";
}

/// The leaf value reads elements only at the index: every subscript is
/// `p[i]`, no pointer is dereferenced otherwise, nothing is written, no
/// thread or block index, shared memory, barrier or warp primitive is used,
/// and locals it reads are the same for every thread of the grid. Helpers
/// it calls obey the same rules and read no memory at all.
class LeafCheck : public RecursiveASTVisitor<LeafCheck> {
public:
  LeafCheck(const VarDecl *Index, const FunctionDecl *Kernel,
            const DenseSet<const ValueDecl *> &Written,
            function_ref<std::string(const Stmt *)> Text)
      : Index(Index), Kernel(Kernel), Written(Written), Text(Text) {}

  std::string Why;
  const Stmt *At = nullptr;

  bool check(const Stmt *S) {
    if (mentionsBuiltin(S))
      return fail("uses a thread or block index other than through '" +
                      Index->getName().str() + "'",
                  S);
    return TraverseStmt(const_cast<Stmt *>(S));
  }

  bool VisitArraySubscriptExpr(ArraySubscriptExpr *AS) {
    if (Helper)
      return fail("calls '" + Helper->getName().str() +
                      "', which reads memory ('" + Text(AS) + "')",
                  AS);
    if (declOf(AS->getIdx()) != Index)
      return fail("reads '" + Text(AS) + "' at an index other than '" +
                      Index->getName().str() + "'",
                  AS);
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *U) {
    if (U->getOpcode() == UO_Deref)
      return fail("reads through the pointer '" + Text(U) + "'", U);
    if (U->isIncrementDecrementOp())
      return fail("writes '" + Text(U->getSubExpr()) + "'", U);
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator *B) {
    if (B->isAssignmentOp())
      return fail("writes '" + Text(B->getLHS()) + "'", B);
    return true;
  }
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *C) {
    if (C->isAssignmentOp())
      return fail("writes '" + Text(C->getArg(0)) + "'", C);
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *D) {
    const auto *V = dyn_cast<VarDecl>(D->getDecl());
    if (!V || V == Index)
      return true;
    if (V->hasAttr<CUDASharedAttr>())
      return fail("reads the shared array '" + V->getName().str() + "'", D);
    if (Helper)
      return true; // the helper's own parameters and locals
    if (Written.contains(V))
      return fail("reads '" + V->getName().str() + "', which the kernel writes",
                  D);
    if (V->isLocalVarDecl() && !isa<ParmVarDecl>(V) &&
        !gridUniform(D, Kernel, 0))
      return fail("reads '" + V->getName().str() +
                      "', which differs between threads or blocks",
                  D);
    return true;
  }
  bool VisitCallExpr(CallExpr *C) {
    const FunctionDecl *FD = C->getDirectCallee();
    if (!FD || !FD->getIdentifier())
      return fail("calls '" + Text(C->getCallee()) +
                      "', which is not a plain function",
                  C);
    StringRef Name = FD->getName();
    if (isThreadCall(Name))
      return fail("calls " + Name.str(), C);
    // __ldg(&x[i]) only reads (read-only-cache writes it).
    if (Name == "__ldg")
      return true;
    for (const ParmVarDecl *PV : FD->parameters())
      if (PV->getType()->isPointerType() || PV->getType()->isReferenceType())
        return fail("passes a pointer or reference to '" + Name.str() + "'", C);
    const FunctionDecl *Def = nullptr;
    if (!FD->hasBody(Def))
      return true; // a math function
    if (Depth >= 4)
      return fail("calls helpers nested too deeply ('" + Name.str() + "')", C);
    if (mentionsBuiltin(Def->getBody()))
      return fail(
          "calls '" + Name.str() + "', which reads thread or block indices", C);
    const FunctionDecl *Outer = Helper;
    Helper = Def;
    ++Depth;
    bool Ok = TraverseStmt(Def->getBody());
    --Depth;
    Helper = Outer;
    return Ok;
  }
  bool TraverseLambdaExpr(LambdaExpr *L) { return fail("uses a lambda", L); }

  /// \p E has the same value in every thread of the grid: block-uniform,
  /// and no local it reads comes from blockIdx.
  static bool gridUniform(const Expr *E, const FunctionDecl *K,
                          unsigned Depth) {
    if (Depth > 16 || !isBlockUniform(E, K) || mentionsBuiltin(E, "blockIdx"))
      return false;
    bool Ok = true;
    struct Refs : RecursiveASTVisitor<Refs> {
      std::vector<const VarDecl *> Locals;
      bool VisitDeclRefExpr(DeclRefExpr *D) {
        if (const auto *V = dyn_cast<VarDecl>(D->getDecl()))
          if (V->isLocalVarDecl() && !isa<ParmVarDecl>(V))
            Locals.push_back(V);
        return true;
      }
    } R;
    R.TraverseStmt(const_cast<Expr *>(E));
    for (const VarDecl *V : R.Locals)
      Ok &= V->getInit() && gridUniform(V->getInit(), K, Depth + 1);
    return Ok;
  }

private:
  const VarDecl *Index;
  const FunctionDecl *Kernel;
  const DenseSet<const ValueDecl *> &Written;
  function_ref<std::string(const Stmt *)> Text;
  const FunctionDecl *Helper = nullptr;
  unsigned Depth = 0;

  bool fail(std::string W, const Stmt *S) {
    if (Why.empty()) {
      Why = std::move(W);
      At = S;
    }
    return false;
  }
};

} // namespace

/// \p Id, in a kernel template where it depends on template parameters
/// (`T(0)`), is the identity of \p Op in every instantiation (the
/// expression at the same place, with its instantiated type).
static bool identityInEveryInstance(const Expr *Id, ReduceOp Op,
                                    const FunctionDecl *Kernel) {
  if (!Id || !(Id->isValueDependent() || Id->isTypeDependent()))
    return false;
  std::vector<const FunctionDecl *> Insts = templateInstantiations(Kernel);
  for (const FunctionDecl *Inst : Insts) {
    const Expr *Found = nullptr;
    std::function<void(const Stmt *)> Find = [&](const Stmt *S) {
      if (!S || Found)
        return;
      if (const auto *X = dyn_cast<Expr>(S);
          X && X->getBeginLoc() == Id->getBeginLoc() &&
          X->getEndLoc() == Id->getEndLoc()) {
        Found = X;
        return;
      }
      for (const Stmt *Ch : S->children())
        Find(Ch);
    };
    Find(Inst->getBody());
    if (!Found ||
        !isIdentity(Found, Op, Found->getType(), Inst->getASTContext()))
      return false;
  }
  return !Insts.empty();
}

/// `blockIdx.x * C` (either order, through casts): C, or null.
static const Expr *blockTimesConstant(const Expr *X) {
  auto M = binaryOf(stripCasts(X));
  if (!M || M->Op != BO_Mul)
    return nullptr;
  auto IsBlockIdx = [](const Expr *Y) {
    auto B = asBuiltinVar(stripCasts(Y));
    return B && B->Var == "blockIdx" && B->Dim == 'x';
  };
  if (IsBlockIdx(M->L) && !mentionsBuiltin(M->R))
    return M->R;
  if (IsBlockIdx(M->R) && !mentionsBuiltin(M->L))
    return M->L;
  return nullptr;
}

/// \p Init is `blockIdx.x * C + tid` (either order, through casts; \p IsTid
/// tells the thread index) with C an integer constant, in a kernel template
/// one in every instantiation: the linear index when every launch's block
/// has C threads. Nothing when \p Init has another form; "" when the launches
/// are known to use C threads; else why not.
static std::optional<std::string>
blockConstantIndex(const EditContext &Ctx, const ResolvedKernel &K,
                   const VarDecl *Index,
                   function_ref<bool(const Expr *)> IsTid) {
  auto Constant = [&](const Expr *Init) -> const Expr * {
    auto B = binaryOf(stripCasts(Init));
    if (!B || B->Op != BO_Add)
      return nullptr;
    if (IsTid(B->R))
      return blockTimesConstant(B->L);
    if (IsTid(B->L))
      return blockTimesConstant(B->R);
    return nullptr;
  };
  const Expr *C = Constant(Index->getInit());
  if (!C)
    return std::nullopt;
  std::string CText = looseExprText(Ctx, C);
  // Its values: the pattern's, or each instantiation's (the index declared
  // at the same place; the thread index a local there too).
  std::vector<int64_t> Values;
  if (!C->isValueDependent() && !C->isTypeDependent()) {
    if (auto V = intValue(C, Ctx.AST))
      Values.push_back(*V);
  } else {
    for (const FunctionDecl *Inst : templateInstantiations(K.Decl)) {
      const VarDecl *IV = nullptr;
      std::function<void(const Stmt *)> Find = [&](const Stmt *S) {
        if (!S || IV)
          return;
        if (const auto *DS = dyn_cast<DeclStmt>(S))
          for (const Decl *D : DS->decls())
            if (const auto *V = dyn_cast<VarDecl>(D);
                V && V->getLocation() == Index->getLocation())
              IV = V;
        for (const Stmt *Ch : S->children())
          Find(Ch);
      };
      Find(Inst->getBody());
      auto B = IV && IV->getInit() ? binaryOf(stripCasts(IV->getInit()))
                                   : std::nullopt;
      const Expr *IC = nullptr;
      if (B && B->Op == BO_Add)
        IC = blockTimesConstant(B->L) ? blockTimesConstant(B->L)
                                      : blockTimesConstant(B->R);
      auto V = IC ? intValue(IC, Inst->getASTContext()) : std::nullopt;
      if (!V)
        return "'" + CText + "' has no constant value in " +
               instantiationName(Inst);
      Values.push_back(*V);
    }
  }
  if (Values.empty())
    return "'" + CText +
           "' is not an integer constant (nor a template "
           "parameter of an instantiated template)";
  if (llvm::any_of(Values, [&](int64_t V) { return V != Values.front(); }))
    return "'" + CText + "' differs between the instantiations";
  std::string Why;
  auto Sizes = launchBlockSizesX(Ctx, *K.Info, Why);
  if (!Sizes)
    return "'" + CText + "' must be the block size, and " + Why;
  for (int64_t B : *Sizes)
    if (B != Values.front())
      return "'" + CText + "' is " + std::to_string(Values.front()) +
             " but a launch has blocks of " + std::to_string(B) +
             " threads; the grid-stride loop steps by blockDim.x";
  return std::string();
}

/// The leaf: the value each thread stores before the tree, guarded by the
/// index's bound, becomes a register folded over a grid-stride loop.
/// Why long: one ordered list of the leaf's preconditions (the store, its
/// guard, the index, the value's expression and what it reads), each
/// refusal naming its reason; they share the partial match as locals.
Error TreeMatcher::matchLeaf(ArrayRef<const Stmt *> Stmts, const Stmt *Store,
                             ArrayRef<const Stmt *> Thread0, const Stmt *Then,
                             ArrayRef<const Stmt *> TreeStmts) {
  auto StoreB = binaryOf(Store);
  if (!StoreB)
    return no("the store '" + text(Store) + "' is not an assignment");
  const Expr *Value = strip(StoreB->R);
  QualType AT = P.Array->getType();
  QualType Elem = AT->isPointerType()
                      ? AT->getPointeeType()
                      : Ctx.AST.getAsArrayType(AT)->getElementType();
  static const char *OpNames[] = {"+", "max", "min"};
  std::string OpName = OpNames[int(P.Op)];
  auto Shapes = [&] {
    return "'" + P.ArrayName + "[tid] = (i < n) ? value : " +
           (P.Op == ReduceOp::Sum ? "0" : "<identity>") +
           ";' or 'T v = " + (P.Op == ReduceOp::Sum ? "0" : "<identity>") +
           "; if (i < n) v = value; " + P.ArrayName +
           "[tid] = v;' with i = blockIdx.x * blockDim.x + threadIdx.x";
  };

  // The three spellings: the guard, the guarded value and the identity,
  // and the local (if any) that carries them to the store.
  const Expr *Cond = nullptr, *Val = nullptr, *Id = nullptr;
  const VarDecl *Local = nullptr;
  const Stmt *LocalDecl = nullptr, *LocalIf = nullptr;
  auto Conditional = [&](const Expr *X) {
    if (const auto *C = dyn_cast<ConditionalOperator>(strip(X))) {
      Cond = C->getCond();
      Val = C->getTrueExpr();
      Id = C->getFalseExpr();
      return true;
    }
    return false;
  };
  size_t StoreIdx = find(Stmts, Store) - Stmts.begin();
  if (const auto *LV = dyn_cast_or_null<VarDecl>(declOf(Value));
      LV && LV->isLocalVarDecl() && !isa<ParmVarDecl>(LV) &&
      isa<DeclRefExpr>(Value)) {
    Local = LV;
    for (size_t Ix = 0; Ix < Stmts.size(); ++Ix) {
      const Stmt *X = Stmts[Ix];
      const auto *DS = dyn_cast<DeclStmt>(X);
      if (DS && DS->isSingleDecl() && DS->getSingleDecl() == LV) {
        LocalDecl = X;
        continue;
      }
      if (X == Store || !mentions(X, LV))
        continue;
      const auto *If = dyn_cast<IfStmt>(X);
      const Stmt *Then = If ? If->getThen() : nullptr;
      if (const auto *CS = dyn_cast_or_null<CompoundStmt>(Then);
          CS && CS->size() == 1)
        Then = CS->body_front();
      auto B = binaryOf(Then);
      if (LocalDecl && !LocalIf && If && !If->getElse() && !If->getInit() &&
          !If->getConditionVariable() && B && B->Op == BO_Assign &&
          declOf(B->L) == LV && !mentions(If->getCond(), LV) &&
          !mentions(B->R, LV) && Ix < StoreIdx) {
        LocalIf = X;
        Cond = If->getCond();
        Val = B->R;
        continue;
      }
      return no("the value stored into '" + P.ArrayName + "' comes from '" +
                    LV->getName() + "', which is used at " + at(X) +
                    "; grid_stride expects " + Shapes(),
                X);
    }
    if (!LocalDecl || !LV->hasInit())
      return no("'" + LV->getName() + "', stored into '" + P.ArrayName +
                    "', is not declared with a value at the top level of "
                    "the kernel; grid_stride expects " +
                    Shapes(),
                Store);
    if (LocalIf) {
      Id = LV->getInit();
    } else if (!Conditional(LV->getInit()) || Written.contains(LV)) {
      return no("'" + LV->getName() + "' is not '(i < n) ? value : " +
                    (P.Op == ReduceOp::Sum ? "0" : "<identity>") +
                    "' nor set by one 'if (i < n) " + LV->getName() +
                    " = value;'; grid_stride expects " + Shapes(),
                LocalDecl);
    }
  } else if (!Conditional(Value)) {
    return no("the value stored into '" + P.ArrayName + "' at " + at(Store) +
                  " is not guarded by the index's bound; grid_stride expects " +
                  Shapes(),
              Store);
  }

  // The guard: `i < n` (or `n > i`), then any further conjuncts.
  std::vector<const Expr *> Rest;
  const Expr *Check = strip(Cond);
  while (const auto *B = dyn_cast<BinaryOperator>(Check)) {
    if (B->getOpcode() != BO_LAnd)
      break;
    Rest.insert(Rest.begin(), B->getRHS());
    Check = strip(B->getLHS());
  }
  auto CB = binaryOf(Check);
  const Expr *IdxE = nullptr, *Bound = nullptr;
  if (CB && CB->Op == BO_LT) {
    IdxE = CB->L;
    Bound = CB->R;
  } else if (CB && CB->Op == BO_GT) {
    IdxE = CB->R;
    Bound = CB->L;
  }
  if (!IdxE)
    return no("the leaf's guard '" + text(Cond) +
                  "' does not start with 'i < n'; grid_stride expects " +
                  Shapes(),
              Cond);
  const auto *Index = dyn_cast_or_null<VarDecl>(declOf(IdxE));
  // `blockIdx.x * BLOCK + tid` counts as the linear index where every
  // launch's block has BLOCK threads.
  // So does the index read by its meaning, over a 1D grid or the blocks of
  // a 2D grid counted row by row (GridRows).
  std::optional<std::string> ConstWhy;
  bool Linear = Index && Index->isLocalVarDecl() && Index->hasInit() &&
                !Written.contains(Index);
  bool GridRows = false;
  if (Linear && !isLinearIndex(Index->getInit())) {
    if (auto Rows = indexByMeaning(Index)) {
      GridRows = *Rows;
    } else {
      ConstWhy = blockConstantIndex(Ctx, K, Index,
                                    [&](const Expr *X) { return isTid(X); });
      Linear = ConstWhy && ConstWhy->empty();
    }
  }
  if (!Linear)
    return no("the leaf's guard compares '" + text(IdxE) +
                  "', not a local index 'i = blockIdx.x * blockDim.x + "
                  "threadIdx.x' that is never written" +
                  (ConstWhy ? " (" + *ConstWhy + ")" : std::string()) +
                  " (nor that index read by its meaning, through locals "
                  "never written and helpers 'return <index>;', or the 2D "
                  "grid's '(blockIdx.y * gridDim.x + blockIdx.x) * "
                  "blockDim.x + threadIdx.x')",
              Cond);
  if (const ValueDecl *BD = declOf(Bound); BD && Written.contains(BD))
    return no("the bound '" + text(Bound) +
                  "' is written in the kernel; the grid-stride loop needs "
                  "it fixed",
              Bound);
  if (!LeafCheck::gridUniform(Bound, K.Decl, 0))
    return no("the bound '" + text(Bound) +
                  "' is not the same for every thread of the grid",
              Bound);
  if (!isIdentity(Id, P.Op, Elem, Ctx.AST) &&
      !identityInEveryInstance(Id, P.Op, K.Decl))
    return no("out-of-range threads contribute '" + text(Id) +
                  "', not the identity of " + OpName + " (" +
                  identityName(P.Op).str() +
                  "); the grid-stride loop would fold it in once per thread",
              Id);

  // The leaf value and the further conjuncts read elements at i only.
  auto TextFn = [&](const Stmt *S) { return text(S); };
  std::vector<const Expr *> Parts = Rest;
  Parts.push_back(Val);
  for (const Expr *X : Parts) {
    if (!onlyConstantMacros(X, Ctx.AST))
      return no("the leaf '" + text(X) +
                    "' is written with a macro other than a constant",
                X);
    LeafCheck LC(Index, K.Decl, Written, TextFn);
    if (!LC.check(X))
      return no("the leaf '" + text(X) + "' " + LC.Why +
                    "; grid_stride needs an elementwise value of x[" +
                    Index->getName() + "]",
                LC.At ? LC.At : X);
  }

  // With a capped grid, a block's other work would run for fewer blocks:
  // nothing outside the tree writes memory but the final atomic.
  for (const Stmt *X : Stmts) {
    if (is_contained(Thread0, X) || is_contained(TreeStmts, X))
      continue;
    for (const MemWrite &W : memoryWrites(X))
      if (declOf(W.Base) != P.Array)
        return no("writes '" + text(W.Target) + "' at " + at(X) +
                      " (per thread): with a capped grid, grid_stride would "
                      "skip it for the blocks that no longer exist",
                  X);
    if (const Stmt *C = opaqueCall(X))
      return no("calls '" + text(C) + "' at " + at(X) +
                    ", whose writes cannot be followed; grid_stride needs a "
                    "kernel that only reduces",
                C);
  }

  // The result: one atomic per block into one location.
  if (!Then)
    return no("thread 0 runs several statements after the early return at " +
                  at(Thread0.front()) +
                  "; grid_stride needs one atomic per "
                  "block into one location",
              Thread0.front());
  StringRef Want = P.Op == ReduceOp::Sum   ? "atomicAdd"
                   : P.Op == ReduceOp::Max ? "atomicMax"
                                           : "atomicMin";
  const auto *Atomic = dyn_cast<CallExpr>(Then);
  // max/min of floats have no atomic of their own: a helper named
  // atomicMax... (atomicMaxFloat) counts.
  bool Combines =
      Atomic && Atomic->getNumArgs() == 2 &&
      (P.Op == ReduceOp::Sum ? calleeName(Atomic) == Want
                             : calleeName(Atomic).starts_with(Want));
  if (!Combines) {
    std::string Per;
    if (auto B = binaryOf(Then);
        B && B->Op == BO_Assign && mentionsBuiltin(B->L, "blockIdx"))
      Per = "stores one result per block ('" + text(B->L) +
            "'): capping the grid would change which blocks exist, so "
            "grid_stride needs the blocks' results combined by ";
    else
      Per = "thread 0's statement '" + text(Then) + "' is not ";
    return no(Per + Want + "(p, " + P.ArrayName +
                  "[0]) into one location for all blocks",
              Then);
  }
  if (!LeafCheck::gridUniform(Atomic->getArg(0), K.Decl, 0))
    return no("the atomic's address '" + text(Atomic->getArg(0)) +
                  "' differs between blocks: capping the grid would change "
                  "which blocks exist, so grid_stride needs one location for "
                  "all blocks",
              Atomic);

  // An integer sum combined in a wider type (int elements, an unsigned long
  // long total): a block now sums many more elements in the narrow type,
  // which may overflow where 256 did not.
  if (QualType PT = Atomic->getArg(0)->IgnoreParenImpCasts()->getType();
      P.Op == ReduceOp::Sum && !Elem->isDependentType() &&
      Elem->isIntegerType() && PT->isPointerType() &&
      PT->getPointeeType()->isIntegerType() &&
      !PT->getPointeeType()->isDependentType() &&
      Ctx.AST.getTypeSize(PT->getPointeeType()) > Ctx.AST.getTypeSize(Elem))
    return no(
        "the block's sum is '" +
            Elem.getUnqualifiedType().getAsString(Ctx.AST.getPrintingPolicy()) +
            "' but the total is '" +
            PT->getPointeeType().getUnqualifiedType().getAsString(
                Ctx.AST.getPrintingPolicy()) +
            "': with grid_stride each block sums many more elements "
            "and could overflow; widen '" +
            P.ArrayName + "' first",
        Atomic);

  // Launches: 1D grids (dim3 ones for a 2D grid's index), capped; the
  // blocks and grid size they had are read nowhere else.
  int64_t Max = E.getInt("max_blocks").value_or(DefaultGridCap);
  if (Max < 1)
    return reject(E, "params", "params.max_blocks must be at least 1");
  if (Error Err = gridReadsElsewhere(Index))
    return Err;
  if (Error Err = capLaunches(Max, GridRows))
    return Err;
  // The loop sums every element below the bound whatever the grid; the
  // original only those its threads reach.
  for (const LaunchSite &L : K.Info->Launches)
    if (std::string Why = GridRows ? gridRowsCoverageProblem(Ctx, L, Bound)
                                   : gridCoverageProblem(Ctx, L, Bound, 0);
        !Why.empty())
      return no("launch " + L.Id +
                    " is not shown to run a thread for every element below "
                    "the bound '" +
                    text(Bound) + "': " + Why +
                    "; grid_stride's loop would sum the elements the "
                    "original's threads never reached",
                Bound);

  // The rewrite.
  StringRef KText =
      Ctx.Code.slice(K.Info->Range.Begin.Offset, K.Info->Range.End.Offset);
  std::string J = freshName(KText, "j");
  auto Subst = [&](const Expr *X) {
    auto R = span(X, false);
    std::vector<TextEdit> Edits;
    struct Refs : RecursiveASTVisitor<Refs> {
      const VarDecl *I;
      std::vector<const DeclRefExpr *> Found;
      bool VisitDeclRefExpr(DeclRefExpr *D) {
        if (D->getDecl() == I)
          Found.push_back(D);
        return true;
      }
    } F;
    F.I = Index;
    F.TraverseStmt(const_cast<Expr *>(X));
    for (const DeclRefExpr *D : F.Found)
      if (auto DR = span(D, false))
        Edits.push_back({DR->Begin, DR->End - DR->Begin, J});
    return spliceText(Ctx.Code, R->Begin, R->End, std::move(Edits));
  };
  std::string Elem1 = Subst(Val);
  if (!Rest.empty()) {
    std::string C;
    for (const Expr *X : Rest)
      C += (C.empty() ? "" : " && ") + Subst(X);
    Elem1 = parenthesize(C) + " ? " + Elem1 + " : " + text(Id);
  }
  std::string IndexType = Index->getType().getUnqualifiedType().getAsString(
      Ctx.AST.getPrintingPolicy());
  if (auto TR = Index->getTypeSourceInfo()
                    ->getTypeLoc()
                    .getUnqualifiedLoc()
                    .getSourceRange();
      TR.isValid() && TR.getBegin().isFileID() && TR.getEnd().isFileID()) {
    StringRef W = Lexer::getSourceText(CharSourceRange::getTokenRange(TR), SM,
                                       Ctx.AST.getLangOpts());
    if (!W.empty())
      IndexType = W.str();
  }
  std::string BoundText = text(Bound);
  std::string Stride = GridRows ? "gridDim.x * gridDim.y * blockDim.x"
                                : "gridDim.x * blockDim.x";
  auto Loop = [&](StringRef Acc, StringRef Indent) {
    std::string Fold =
        P.Op == ReduceOp::Sum
            ? Acc.str() + " += " + Elem1 + ";"
            : Acc.str() + " = " + P.Fn + "(" + Acc.str() + ", " + Elem1 + ");";
    return "for (" + IndexType + " " + J + " = " + Index->getName().str() +
           "; " + J + " < " + BoundText + "; " + J + " += " + Stride + ")\n" +
           Indent.str() + "  " + Fold;
  };
  std::string Indent = indentationAt(Ctx.Code, P.Store.Begin);
  if (!Local) {
    // `A[tid] = (i < n) ? E : id;` -> `T v = id; for (...) v += E[j];`
    std::string V = freshName(KText, "v");
    P.StoreText = P.ElemType + " " + V + " = " + text(Id) + ";\n" + Indent +
                  Loop(V, Indent);
  } else if (LocalIf) {
    // `if (i < n) v = E;` -> `for (...) v += E[j];`
    auto R = span(LocalIf, true);
    if (!R)
      return no("the leaf at " + at(LocalIf) + " is written with a macro",
                LocalIf);
    P.LeafEdits.push_back(
        {*R, Loop(Local->getName(), indentationAt(Ctx.Code, R->Begin))});
  } else {
    // `T v = (i < n) ? E : id;` -> `T v = id; for (...) v += E[j];`
    // The identity may be a macro (-INFINITY): the spans end after it.
    auto IR = span(Local->getInit(), false, /*AllowMacroEnds=*/true);
    auto DR = span(LocalDecl, true, /*AllowMacroEnds=*/true);
    if (!IR || !DR)
      return no("the leaf at " + at(LocalDecl) + " is written with a macro",
                LocalDecl);
    std::string DI = indentationAt(Ctx.Code, DR->Begin);
    P.LeafEdits.push_back({*IR, text(Id)});
    P.LeafEdits.push_back(
        {{DR->End, DR->End}, "\n" + DI + Loop(Local->getName(), DI)});
  }
  P.GridStride = true;
  P.LeafDescription =
      "grid_stride: each thread first folds '" + text(Val) + "' over " +
      Index->getName().str() + ", " + Index->getName().str() + " + " + Stride +
      ", ... below " + BoundText + " in a register, and grids are capped at " +
      std::to_string(Max) + " blocks (one " + Want.str() + " per block)" +
      (GridRows ? "; the index counts a 2D grid's blocks row by row: a "
                  "launch's dim3 grid becomes one dimension"
                : "");
  return Error::success();
}

/// The x * y blocks of a launch's 2D grid capped at \p Max as one
/// dimension: a literal when both are integer literals.
static std::string cappedRows(const Expr *XE, const Expr *YE,
                              const std::string &X, const std::string &Y,
                              int64_t Max, const ASTContext &AST) {
  auto Literal = [&](const Expr *E) -> std::optional<int64_t> {
    if (!E || !isa<IntegerLiteral>(E->IgnoreParenImpCasts()))
      return std::nullopt;
    return intValue(E, AST);
  };
  auto LX = Literal(XE), LY = Literal(YE);
  if (LX && LY && *LX >= 0 && *LY >= 0 && *LX <= (1 << 30) && *LY <= (1 << 30))
    return std::to_string(std::min(*LX * *LY, Max));
  // The product compared in 64 bits: x * y may exceed 32 bits, and where it
  // is below the cap the 32-bit product is the same.
  std::string M = std::to_string(Max);
  return "1ull * " + X + " * " + Y + " < " + M + " ? " + X + " * " + Y + " : " +
         M;
}

/// \p A without the temporaries and conversions a launch's grid is wrapped
/// in.
static const Expr *unwrapGrid(const Expr *A) {
  for (;;) {
    A = A->IgnoreParenImpCasts();
    if (const auto *M = dyn_cast<MaterializeTemporaryExpr>(A))
      A = M->getSubExpr();
    else if (const auto *B = dyn_cast<CXXBindTemporaryExpr>(A))
      A = B->getSubExpr();
    else if (const auto *F = dyn_cast<CXXFunctionalCastExpr>(A))
      A = F->getSubExpr();
    else
      return A;
  }
}

/// \p A is absent (a default argument) or the literal 1.
static bool absentOrOne(const Expr *A, const ASTContext &AST) {
  if (!A || isa<CXXDefaultArgExpr>(A))
    return true;
  auto V = intValue(A->IgnoreParenImpCasts(), AST);
  return V && *V == 1;
}

std::optional<std::string> TreeMatcher::rowsGrid(const LaunchSite &L,
                                                 int64_t Max,
                                                 std::string &Why) const {
  std::string Grid = "the grid of " + L.Id + " ('" + L.Grid + "')";
  if ((L.InMacro && !L.GridInPlace) ||
      L.GridRange.End.Offset <= L.GridRange.Begin.Offset) {
    Why = macroGridProblem(L);
    return std::nullopt;
  }
  const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
  if (!Call || !Call->getConfig() || Call->getConfig()->getNumArgs() < 1) {
    Why = "launch " + L.Id + " was not found in the AST";
    return std::nullopt;
  }
  const auto *C =
      dyn_cast<CXXConstructExpr>(unwrapGrid(Call->getConfig()->getArg(0)));
  std::string Neither = Grid + " is neither a dim3(x, y[, z]) nor a dim3 "
                               "variable";
  if (!C || C->getNumArgs() < 1 || isa<CXXDefaultArgExpr>(C->getArg(0))) {
    Why = Neither;
    return std::nullopt;
  }
  auto Arg = [&](unsigned I) -> const Expr * {
    return I < C->getNumArgs() && !isa<CXXDefaultArgExpr>(C->getArg(I))
               ? C->getArg(I)
               : nullptr;
  };
  const Expr *XE = nullptr, *YE = nullptr;
  std::string X, Y, Z;
  if (C->getConstructor()->isCopyOrMoveConstructor()) {
    // A dim3 variable (or member) g: g.x * g.y blocks; g.z unless a
    // variable never written was built with z = 1.
    const Expr *G = C->getArg(0)->IgnoreParenImpCasts();
    std::string T = spelledText(Ctx, G);
    if (T.empty() || G->HasSideEffects(Ctx.AST) ||
        !isa<DeclRefExpr, MemberExpr>(G)) {
      Why = Neither;
      return std::nullopt;
    }
    X = T + ".x", Y = T + ".y", Z = T + ".z";
    if (const auto *V = dyn_cast_or_null<VarDecl>(declOf(G));
        V && V->hasInit() && stableVar(V))
      if (const auto *Init =
              dyn_cast<CXXConstructExpr>(unwrapGrid(V->getInit()));
          Init && !Init->getConstructor()->isCopyOrMoveConstructor() &&
          absentOrOne(Init->getNumArgs() > 2 ? Init->getArg(2) : nullptr,
                      Ctx.AST))
        Z.clear();
  } else {
    // dim3(x, y[, z]) written at the launch.
    XE = Arg(0), YE = Arg(1);
    const Expr *ZE = absentOrOne(Arg(2), Ctx.AST) ? nullptr : Arg(2);
    for (const Expr *D : {XE, YE, ZE})
      if (D && D->HasSideEffects(Ctx.AST)) {
        Why = Grid + " has side effects";
        return std::nullopt;
      }
    X = spelledText(Ctx, XE);
    Y = YE ? spelledText(Ctx, YE) : "1";
    Z = ZE ? spelledText(Ctx, ZE) : "";
    if (X.empty() || Y.empty() || (ZE && Z.empty())) {
      Why = Grid + " cannot be rewritten in place";
      return std::nullopt;
    }
    X = parenthesize(X), Y = parenthesize(Y);
  }
  std::string Cap = cappedRows(XE, YE, X, Y, Max, Ctx.AST);
  return Z.empty() ? Cap : "dim3(" + Cap + ", 1, " + Z + ")";
}

Error TreeMatcher::capLaunches(int64_t Max, bool GridRows) {
  for (const LaunchSite &L : K.Info->Launches) {
    std::string Why;
    auto G = grid1D(Ctx, L, Why);
    if (G && G->E->HasSideEffects(Ctx.AST))
      Why = "the grid of " + L.Id + " has side effects", G.reset();
    std::string M = std::to_string(Max);
    if (!G) {
      // A plain integer grid written with a macro ('(n + BLOCK - 1) /
      // BLOCK') is capped as written, like privatize-atomics does.
      const CUDAKernelCallExpr *C = findLaunchCall(Ctx, L);
      const Expr *GE = C && C->getConfig() && C->getConfig()->getNumArgs()
                           ? C->getConfig()->getArg(0)->IgnoreImplicit()
                           : nullptr;
      if (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(GE);
          CE && CE->getNumArgs() >= 1)
        GE = CE->getArg(0); // the implicit dim3(g)
      if ((!L.InMacro || L.GridInPlace) && GE && !GE->HasSideEffects(Ctx.AST) &&
          gridIsInteger(Ctx, L) &&
          L.GridRange.End.Offset > L.GridRange.Begin.Offset) {
        P.Caps.push_back({{L.GridRange.Begin.Offset, L.GridRange.End.Offset},
                          cappedGrid(L.Grid, Max)});
        continue;
      }
      if (GridRows) {
        std::string RowsWhy;
        if (auto Rows = rowsGrid(L, Max, RowsWhy)) {
          P.Caps.push_back(
              {{L.GridRange.Begin.Offset, L.GridRange.End.Offset}, *Rows});
          continue;
        }
        return no(RowsWhy + "; grid_stride must cap the grid of every "
                            "launch (an integer, a dim3(x, y[, z]) or a "
                            "dim3 variable for an index over a 2D grid)");
      }
      return no(Why + "; grid_stride must cap the grid of every launch (a "
                      "one-dimensional grid that can be rewritten)");
    }
    std::string Cap;
    if (auto Lit = intValue(G->E, Ctx.AST);
        Lit && isa<IntegerLiteral>(G->E->IgnoreParenImpCasts())) {
      Cap = std::to_string(std::min(*Lit, Max));
    } else {
      const Expr *X = G->E->IgnoreParenImpCasts();
      std::string T = G->Text;
      if (isa<ConditionalOperator>(X) ||
          (isa<BinaryOperator>(X) && !cast<BinaryOperator>(X)->isAdditiveOp() &&
           !cast<BinaryOperator>(X)->isMultiplicativeOp()))
        T = "(" + T + ")";
      Cap = T + " < " + M + " ? " + T + " : " + M;
    }
    P.Caps.push_back({{G->Span.Begin.Offset, G->Span.End.Offset}, Cap});
  }
  if (K.Info->Launches.empty())
    P.Notes.push_back("the kernel is not launched in this file: its grids "
                      "are not capped (any grid is correct)");

  return Error::success();
}

std::optional<bool> TreeMatcher::indexByMeaning(const VarDecl *Index) const {
  // A local read in the index stands for its initializer when it is never
  // written and keeps every value ('unsigned lane = threadIdx.x;').
  auto Local = [&](const VarDecl *V) -> const Expr * {
    QualType T = V->getType();
    bool Wide = T->isIntegerType() && !T->isBooleanType() &&
                !T->isDependentType() && Ctx.AST.getTypeSize(T) >= 32;
    return Wide && V->isLocalVarDecl() && V->hasLocalStorage() &&
                   V->hasInit() && !Written.contains(V)
               ? V->getInit()
               : nullptr;
  };
  auto L = linearIndexByMeaning(Index->getInit(), Ctx.AST, Local);
  if (!L || L->Dim != 'x')
    return std::nullopt;
  return L->GridRows;
}

/// The first place in \p S, outside \p Skip, that reads blockIdx or
/// gridDim, or calls a helper that does (helpers nested too deeply
/// count).
static const Stmt *readsGrid(const Stmt *S, const Stmt *Skip, unsigned Depth) {
  if (!S || S == Skip)
    return nullptr;
  if (const auto *E = dyn_cast<Expr>(S))
    if (auto B = asBuiltinVar(E);
        B && (B->Var == "blockIdx" || B->Var == "gridDim"))
      return S;
  if (const auto *C = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *FD = C->getDirectCallee(); FD && FD->hasBody())
      if (Depth >= 4 || readsGrid(FD->getBody(), nullptr, Depth + 1))
        return S;
  for (const Stmt *Ch : S->children())
    if (const Stmt *R = readsGrid(Ch, Skip, Depth))
      return R;
  return nullptr;
}

Error TreeMatcher::gridReadsElsewhere(const VarDecl *Index) const {
  const Stmt *Found = readsGrid(Body, Index->getInit(), 0);
  for (const FunctionDecl *Inst : templateInstantiations(K.Decl)) {
    if (Found)
      break;
    const VarDecl *IV = instantiatedVar(Index, Inst);
    Found = readsGrid(Inst->getBody(), IV ? IV->getInit() : nullptr, 0);
  }
  if (!Found)
    return Error::success();
  return no("reads '" + text(Found) + "' at " + at(Found) +
                " outside its index '" + Index->getName() +
                "': a capped grid has other blocks and another size, so "
                "grid_stride needs blockIdx and gridDim read only in the index",
            Found);
}

} // namespace warpreduce
} // namespace optiml
