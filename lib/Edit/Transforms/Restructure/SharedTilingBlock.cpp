//===- SharedTilingBlock.cpp - Block-sized products through shared tiles --===//
//
// Pattern: a product whose output is one block's worth of elements, one
// thread per element, as batched small GEMMs are written:
//   size_t base = blockIdx.x * D * D;       // uniform declarations
//   int row = threadIdx.y, col = threadIdx.x;
//   acc = <uniform init>;
//   for (k = 0; k < K; ++k)
//     acc += A[f(row, k)] * B[g(k, col)];
//   <statements that use acc>               // the store
// f depends on row, k and block-uniform values only, g on k, col and
// block-uniform values only; threadIdx appears nowhere else and blockDim
// nowhere; every launch uses a TILE x TILE block.
//
// Rewrite, `rows` = R: the launches' blocks become TILE x (TILE / R), and
// each thread computes the R rows threadIdx.y + i * (TILE / R). The A and B
// tiles of each step of TILE along k are staged in shared memory by the
// block (R elements of each per thread, zero outside K), and the inner
// product reads each B element once for the thread's R rows.
//
// Why it is exact: the outputs are the same (row, col) pairs, each
// computed by one thread from the same start value, adding the same
// products in k order; the zero-filled tail adds +0.0 (both factors are
// zero). The statements after the loop run once per row with the row and
// the accumulator renamed. The new block has the same x extent and covers
// rows 0..TILE-1 through i, and nothing else in the kernel reads threadIdx
// or blockDim, so no other value changes.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/Accumulation.h"
#include "../../Patterns/CountingLoop.h"
#include "../../Patterns/SideEffects.h"
#include "../TransformSupport.h"
#include "SharedTilingInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Support/TextTemplate.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <functional>

using namespace clang;
using namespace llvm;

namespace optiml {
namespace sharedtiling {

namespace {

/// `threadIdx.<Dim>`, through casts.
bool isThreadIdx(const Expr *E, char Dim) {
  auto B = asBuiltinVar(stripCasts(E));
  return B && B->Var == "threadIdx" && B->Dim == Dim;
}

} // namespace

/// The span of \p S as written (its `;` included for a statement), macros
/// allowed at its edges; nothing when it cannot be read as one piece.
std::optional<SourceSpan> wholeSpan(const EditContext &Ctx, const Stmt *S,
                                    bool Statement) {
  auto Sp = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                     S->getSourceRange(), Ctx.file());
  if (!Sp || !Statement)
    return Sp;
  return withSemicolon(Ctx, *Sp);
}

std::optional<std::string>
renamedText(const EditContext &Ctx, const Stmt *S,
            ArrayRef<std::pair<const ValueDecl *, std::string>> To,
            bool Statement) {
  auto Span = wholeSpan(Ctx, S, Statement);
  if (!Span)
    return std::nullopt;
  std::vector<TextEdit> Edits;
  for (const auto &[D, Text] : To) {
    std::vector<const DeclRefExpr *> Refs;
    collectRefs(S, D, Refs);
    for (const DeclRefExpr *Ref : Refs) {
      auto RS = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                         Ref->getSourceRange(), Ctx.file());
      if (!RS || Ref->getBeginLoc().isMacroID())
        return std::nullopt;
      Edits.push_back(
          {RS->Begin.Offset, RS->End.Offset - RS->Begin.Offset, Text});
    }
  }
  return spliceText(Ctx.Code, Span->Begin.Offset, Span->End.Offset,
                    std::move(Edits));
}

namespace {

/// The first name in \p S that an alias's offset may not use: anything but
/// an integer variable of the kernel (or a constant one) that \p Written
/// does not hold, an enumerator or a template parameter; with its reason.
std::string badOffsetName(const Stmt *S,
                          const DenseSet<const ValueDecl *> &Written) {
  if (!S)
    return "";
  if (const auto *DR = dyn_cast<DeclRefExpr>(S)) {
    const ValueDecl *D = DR->getDecl();
    std::string Name = "'" + D->getNameAsString() + "'";
    if (isa<EnumConstantDecl, NonTypeTemplateParmDecl>(D))
      return "";
    const auto *V = dyn_cast<VarDecl>(D);
    if (!V || !V->getType()->isIntegerType())
      return Name + ", which is not an integer variable";
    if (!V->isLocalVarDecl() && !isa<ParmVarDecl>(V) &&
        !V->getType().isConstQualified())
      return Name + ", a global that may change";
    if (Written.contains(V))
      return Name + ", which is written after it";
    return "";
  }
  for (const Stmt *C : S->children())
    if (std::string Why = badOffsetName(C, Written); !Why.empty())
      return Why;
  return "";
}

/// The references to \p V that are the base of a subscript, in \p S.
void subscriptBases(const Stmt *S, const VarDecl *V,
                    SmallPtrSetImpl<const DeclRefExpr *> &Out) {
  if (!S)
    return;
  if (const auto *A = dyn_cast<ArraySubscriptExpr>(S))
    if (const auto *DR =
            dyn_cast<DeclRefExpr>(A->getBase()->IgnoreParenImpCasts());
        DR && DR->getDecl() == V)
      Out.insert(DR);
  for (const Stmt *C : S->children())
    subscriptBases(C, V, Out);
}

/// \p E as a pointer parameter plus integer offsets (appended to \p A's),
/// the parameter in \p A.
void readAliasInit(const Expr *E, PointerAlias &A) {
  auto IsOffset = [](const Expr *X) {
    return !X->isTypeDependent() && X->getType()->isIntegerType();
  };
  E = E->IgnoreParenImpCasts();
  while (const auto *B = dyn_cast<BinaryOperator>(E)) {
    if (B->getOpcode() != BO_Add)
      break;
    const Expr *L = B->getLHS()->IgnoreParenImpCasts();
    const Expr *R = B->getRHS()->IgnoreParenImpCasts();
    if (IsOffset(R) && !IsOffset(L)) {
      A.Offsets.push_back(B->getRHS());
      E = L;
    } else if (IsOffset(L) && !IsOffset(R)) {
      A.Offsets.push_back(B->getLHS());
      E = R;
    } else {
      break;
    }
  }
  if (const auto *U = dyn_cast<UnaryOperator>(E);
      U && U->getOpcode() == UO_AddrOf)
    if (const auto *S =
            dyn_cast<ArraySubscriptExpr>(U->getSubExpr()->IgnoreParens());
        S && IsOffset(S->getIdx())) {
      A.Offsets.push_back(S->getIdx());
      E = S->getBase()->IgnoreParenImpCasts();
    }
  const auto *DR = dyn_cast<DeclRefExpr>(E);
  A.Param = DR ? dyn_cast<ParmVarDecl>(DR->getDecl()) : nullptr;
}

} // namespace

std::optional<PointerAlias> pointerAlias(const DeclStmt *DS,
                                         ArrayRef<const Stmt *> Scope,
                                         const FunctionDecl *Kernel,
                                         std::string &WhyNot) {
  const auto *V = DS && DS->isSingleDecl()
                      ? dyn_cast<VarDecl>(DS->getSingleDecl())
                      : nullptr;
  if (!V || !V->getType()->isPointerType()) {
    WhyNot = "it does not declare one pointer";
    return std::nullopt;
  }
  std::string Name = "'" + V->getNameAsString() + "'";
  auto No = [&](const Twine &Why) -> std::optional<PointerAlias> {
    WhyNot = Name + " " + Why.str();
    return std::nullopt;
  };
  if (!V->isLocalVarDecl() || V->isStaticLocal() || !V->hasInit())
    return No("is not an initialized local");
  PointerAlias A;
  A.Decl = DS;
  A.Var = V;
  readAliasInit(V->getInit(), A);
  if (!A.Param || A.Param->getDeclContext() != Kernel ||
      !A.Param->getType()->isPointerType())
    return No("is not a pointer parameter plus an offset ('P + e' or "
              "'&P[e]')");
  std::string PName = "'" + A.Param->getNameAsString() + "'";
  if (!Kernel->getASTContext().hasSameUnqualifiedType(
          V->getType()->getPointeeType(), A.Param->getType()->getPointeeType()))
    return No("points to another type than " + PName);
  if (writtenVars(Kernel->getBody()).contains(A.Param))
    return No("is an offset from " + PName + ", which the kernel changes");
  DenseSet<const ValueDecl *> Written;
  SmallPtrSet<const DeclRefExpr *, 8> Bases;
  std::vector<const DeclRefExpr *> Refs;
  for (const Stmt *S : Scope) {
    for (const ValueDecl *D : writtenVars(S))
      Written.insert(D);
    subscriptBases(S, V, Bases);
    collectRefs(S, V, Refs);
  }
  if (Written.contains(V))
    return No("changes after its declaration (it is reassigned, stepped or "
              "its address is taken)");
  if (any_of(Refs, [&](const DeclRefExpr *R) { return !Bases.contains(R); }))
    return No("is used other than as the base of '" + V->getName() +
              "[i]' (passed on, compared or copied)");
  for (const Expr *O : A.Offsets) {
    if (readsOrWritesMemory(O, nullptr,
                            {/*ThreadCoords=*/true, /*BlockCoords=*/true}))
      return No("is offset by a value that reads memory, calls a function or "
                "writes");
    if (std::string Why = badOffsetName(O, Written); !Why.empty())
      return No("is offset by a value that uses " + Why);
  }
  return A;
}

/// The subscript \p R is the base of, when that element is only read (an
/// rvalue), or null.
const ArraySubscriptExpr *readThrough(ASTContext &AST, const DeclRefExpr *R) {
  const Expr *Child = R;
  DynTypedNodeList Ps = AST.getParents(*Child);
  while (!Ps.empty() && Ps[0].get<Expr>() &&
         isa<ParenExpr, ImplicitCastExpr>(Ps[0].get<Expr>())) {
    Child = Ps[0].get<Expr>();
    Ps = AST.getParents(*Child);
  }
  const auto *AS = Ps.empty() ? nullptr : Ps[0].get<ArraySubscriptExpr>();
  if (!AS || AS->getBase()->IgnoreParenImpCasts() != R)
    return nullptr;
  Ps = AST.getParents(*AS);
  while (!Ps.empty() && Ps[0].get<ParenExpr>())
    Ps = AST.getParents(*Ps[0].get<ParenExpr>());
  const auto *IC = Ps.empty() ? nullptr : Ps[0].get<ImplicitCastExpr>();
  return IC && IC->getCastKind() == CK_LValueToRValue ? AS : nullptr;
}

/// The pointer locals of \p FD initialized from \p Param, each an alias
/// (pointerAlias) only ever read through; else why not.
std::string aliasesOfParam(const EditContext &Ctx, const FunctionDecl *FD,
                           const ParmVarDecl *Param,
                           std::vector<PointerAlias> &Out) {
  std::string Why;
  std::function<void(const Stmt *)> Walk = [&](const Stmt *S) {
    if (!S || !Why.empty())
      return;
    if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
      SmallVector<const Stmt *, 8> Stmts(CS->body_begin(), CS->body_end());
      for (size_t I = 0; I < Stmts.size() && Why.empty(); ++I) {
        const auto *DS = dyn_cast<DeclStmt>(Stmts[I]);
        const auto *V = DS && DS->isSingleDecl()
                            ? dyn_cast<VarDecl>(DS->getSingleDecl())
                            : nullptr;
        if (!V || !V->getType()->isPointerType() || !V->hasInit() ||
            !mentions(V->getInit(), Param))
          continue;
        std::string WhyNot;
        auto A =
            pointerAlias(DS, ArrayRef(Stmts).drop_front(I + 1), FD, WhyNot);
        if (!A || A->Param != Param) {
          Why = "'" + Param->getNameAsString() + "' is bound to '" +
                V->getNameAsString() + "' at " + where(Ctx, V->getInit()) +
                ", which is not a row pointer to follow" +
                (WhyNot.empty() ? std::string() : " (" + WhyNot + ")");
          return;
        }
        std::vector<const DeclRefExpr *> Uses;
        collectRefs(FD->getBody(), V, Uses);
        for (const DeclRefExpr *U : Uses)
          if (!readThrough(Ctx.AST, U)) {
            Why = "'" + V->getNameAsString() + "', a pointer into '" +
                  Param->getNameAsString() + "', is written through at " +
                  where(Ctx, U);
            return;
          }
        Out.push_back(std::move(*A));
      }
    }
    for (const Stmt *C : S->children())
      Walk(C);
  };
  Walk(FD->getBody());
  return Why;
}

/// The uses of \p Param where \p Aliases are bound to it: every use is a
/// read `Param[i]` or the parameter in an alias's initializer (its loads
/// are then the alias's reads).
PointerUses usesThroughAliases(const EditContext &Ctx, const FunctionDecl *FD,
                               const ParmVarDecl *Param,
                               ArrayRef<PointerAlias> Aliases) {
  PointerUses U;
  if (writtenVars(FD->getBody()).contains(Param)) {
    U.Blocker = "'" + Param->getNameAsString() + "' is reassigned";
    return U;
  }
  std::vector<const DeclRefExpr *> Refs;
  collectRefs(FD->getBody(), Param, Refs);
  for (const DeclRefExpr *R : Refs) {
    if (any_of(Aliases, [&](const PointerAlias &A) {
          return containsStmt(A.Var->getInit(), R);
        }))
      continue;
    const ArraySubscriptExpr *AS = readThrough(Ctx.AST, R);
    if (!AS) {
      U.Blocker = "'" + Param->getNameAsString() + "' is used other than " +
                  "read at " + where(Ctx, R);
      return U;
    }
    U.Loads.push_back(AS);
  }
  for (const PointerAlias &A : Aliases) {
    std::vector<const DeclRefExpr *> Uses;
    collectRefs(FD->getBody(), A.Var, Uses);
    for (const DeclRefExpr *R : Uses)
      U.Loads.push_back(readThrough(Ctx.AST, R));
  }
  return U;
}

void takeAliases(ArrayRef<const Stmt *> Stmts, size_t &At,
                 const FunctionDecl *Kernel, std::vector<PointerAlias> &Out,
                 std::string &WhyNot) {
  WhyNot.clear();
  for (; At < Stmts.size(); ++At) {
    const auto *DS = dyn_cast<DeclStmt>(Stmts[At]);
    if (!DS)
      return;
    auto A = pointerAlias(DS, Stmts.drop_front(At + 1), Kernel, WhyNot);
    if (!A) {
      const auto *V =
          DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl()) : nullptr;
      if (!V || !V->getType()->isPointerType())
        WhyNot.clear();
      return;
    }
    Out.push_back(std::move(*A));
  }
}

const PointerAlias *aliasOf(const ArraySubscriptExpr *Access,
                            ArrayRef<PointerAlias> Aliases) {
  const auto *DR =
      dyn_cast<DeclRefExpr>(Access->getBase()->IgnoreParenImpCasts());
  for (const PointerAlias &A : Aliases)
    if (DR && DR->getDecl() == A.Var)
      return &A;
  return nullptr;
}

std::optional<std::vector<std::pair<const ValueDecl *, std::string>>>
inlinedAliases(const EditContext &Ctx, ArrayRef<PointerAlias> Aliases,
               ArrayRef<std::pair<const ValueDecl *, std::string>> To) {
  std::vector<std::pair<const ValueDecl *, std::string>> Out(To.begin(),
                                                             To.end());
  for (const PointerAlias &A : Aliases) {
    auto Init = renamedText(Ctx, A.Var->getInit(), To, false);
    if (!Init)
      return std::nullopt;
    Out.push_back({A.Var, "(" + *Init + ")"});
  }
  return Out;
}

std::string aliasUsedElsewhere(const Stmt *Body, ArrayRef<PointerAlias> Aliases,
                               ArrayRef<const Stmt *> Allowed) {
  for (const PointerAlias &A : Aliases) {
    std::vector<const DeclRefExpr *> All, Inside;
    collectRefs(Body, A.Var, All);
    for (const Stmt *S : Allowed)
      collectRefs(S, A.Var, Inside);
    if (All.size() != Inside.size())
      return "the pointer '" + A.Var->getNameAsString() +
             "' is used outside the product and the code after the loop";
  }
  return "";
}

std::vector<const VarDecl *> instantiatedVars(const VarDecl *Var,
                                              const FunctionDecl *Kernel) {
  std::vector<const VarDecl *> Out;
  std::function<const VarDecl *(const Stmt *)> Find =
      [&](const Stmt *S) -> const VarDecl * {
    if (!S)
      return nullptr;
    if (const auto *DS = dyn_cast<DeclStmt>(S))
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D);
            V && V->getLocation() == Var->getLocation())
          return V;
    for (const Stmt *C : S->children())
      if (const VarDecl *V = Find(C))
        return V;
    return nullptr;
  };
  for (const FunctionDecl *Inst : templateInstantiations(Kernel))
    Out.push_back(Find(Inst->getBody()));
  return Out;
}

std::string dependentAccumulatorProblem(const VarDecl *Acc,
                                        const FunctionDecl *Kernel) {
  const ASTContext &AST = Kernel->getASTContext();
  std::string Name = "the accumulator '" + Acc->getNameAsString() + "'";
  std::vector<const FunctionDecl *> Insts = templateInstantiations(Kernel);
  if (Insts.empty())
    return Name + " has type '" + typeName(Acc->getType(), AST) +
           "', which depends on template parameters, and the kernel is "
           "never instantiated in this file";
  std::vector<const VarDecl *> Vars = instantiatedVars(Acc, Kernel);
  for (size_t I = 0; I < Insts.size(); ++I) {
    std::string In = instantiationName(Insts[I]);
    if (I >= Vars.size() || !Vars[I])
      return Name + " is not found in " + In;
    QualType T = Vars[I]->getType();
    if (!T->isArithmeticType())
      return Name + " has type '" + typeName(T, AST) + "' in " + In +
             ", not an arithmetic type";
  }
  return "";
}

// Why long: one ordered list of the pattern's preconditions, each refusal
// naming its reason; they share the partial match as locals.
Expected<BlockProductPlan> analyzeBlockProduct(const EditContext &Ctx,
                                               const Edit &E,
                                               std::optional<int64_t> Tile,
                                               bool &ShapeFound) {
  auto K = resolveKernel(Ctx, E, E.Target);
  if (!K)
    return K.takeError();
  BlockProductPlan P;
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
    return NotApplicable("its body uses macros other than constants");
  if (!K->Info->Shared.empty())
    return NotApplicable("already uses shared memory");
  if (!K->Info->Syncthreads.empty())
    return NotApplicable("already synchronizes threads");

  // Uniform declarations, the indices among them, then the accumulator.
  SmallVector<const Stmt *, 8> Stmts(Body->body_begin(), Body->body_end());
  SmallPtrSet<const VarDecl *, 4> PointerLoads;
  size_t At = 0;
  for (; At < Stmts.size() && !(P.Row && P.Col); ++At) {
    const auto *DS = dyn_cast<DeclStmt>(Stmts[At]);
    if (!DS)
      break;
    // One flat index over 1D blocks, decoded into the matrix, the row and
    // the column (SharedTilingFlat.cpp).
    if (const auto *VD = !P.FirstIndexDecl && DS->isSingleDecl()
                             ? dyn_cast<VarDecl>(DS->getSingleDecl())
                             : nullptr;
        VD && VD->hasInit() && !isThreadIdx(VD->getInit(), 'x') &&
        !isThreadIdx(VD->getInit(), 'y') &&
        !threadVariance(VD->getInit(), FD).uniform()) {
      std::string Why;
      size_t FlatAt = At;
      if (auto F = flatIndices(Ctx, *K, Stmts, FlatAt, Tile, Why)) {
        P.Row = F->Row;
        P.Col = F->Col;
        P.FirstIndexDecl = DS;
        P.Decls = F->Decls;
        P.Flat = std::move(*F);
        At = FlatAt;
        break;
      }
      if (!Why.empty())
        return NotApplicable(Why);
    }
    bool Index = false;
    for (const Decl *D : DS->decls()) {
      const auto *VD = dyn_cast<VarDecl>(D);
      if (!VD || !VD->hasInit() || VD->isStaticLocal())
        return NotApplicable("the declaration at " + where(Ctx, DS) +
                             " is not of initialized locals");
      if (!P.Row && VD->getType()->isIntegerType() &&
          isThreadIdx(VD->getInit(), 'y')) {
        P.Row = VD;
        Index = true;
      } else if (!P.Col && VD->getType()->isIntegerType() &&
                 isThreadIdx(VD->getInit(), 'x')) {
        P.Col = VD;
        Index = true;
      } else if (!P.FirstIndexDecl && DS->isSingleDecl() &&
                 uniformPointerLoad(VD->getInit(), FD)) {
        PointerLoads.insert(VD);
      } else if (!threadVariance(VD->getInit(), FD).uniform() ||
                 mayHaveSideEffects(VD->getInit(), Ctx.AST)) {
        return NotApplicable("'" + VD->getName() +
                             "' differs between threads but is not an index "
                             "'row = threadIdx.y' or 'col = threadIdx.x'");
      }
    }
    if (Index && !P.FirstIndexDecl)
      P.FirstIndexDecl = DS;
    if (P.FirstIndexDecl)
      P.Decls.push_back(DS);
  }
  if (!P.Row || !P.Col)
    return NotApplicable("the body does not start with (uniform declarations "
                         "and) the indices 'row = threadIdx.y' and 'col = "
                         "threadIdx.x'");
  DenseSet<const ValueDecl *> Written = writtenVars(Body);
  for (const VarDecl *V : {P.Row, P.Col})
    if (Written.contains(V))
      return NotApplicable("the index '" + V->getName() + "' is written");
  // A pointer loaded the same in every thread, never written after.
  auto LoadedPointer = [&](const Expr *Base) {
    const auto *DR = dyn_cast<DeclRefExpr>(Base->IgnoreParenImpCasts());
    const auto *V = DR ? dyn_cast<VarDecl>(DR->getDecl()) : nullptr;
    return V && PointerLoads.contains(V) && !Written.contains(V);
  };

  // Pointers into the operands may follow (`a = A + row * lda`).
  std::string AliasWhy;
  takeAliases(Stmts, At, FD, P.Aliases, AliasWhy);
  std::vector<const Stmt *> Inner(Stmts.begin() + At, Stmts.end());
  std::string Shape = "the indices are not followed by 'acc = <init>; for "
                      "(k = 0; k < K; ++k) acc += A[...] * B[...]; <store>'";
  if (!AliasWhy.empty())
    Shape += ": " + AliasWhy;
  if (Inner.size() < 3)
    return NotApplicable(Shape);
  const auto *AccDS = dyn_cast<DeclStmt>(Inner[0]);
  P.Loop = dyn_cast<ForStmt>(Inner[1]);
  // Or `int k = 0; while (k < K) { ...; ++k; }`.
  std::optional<CountingWhile> While;
  const auto *W =
      Inner.size() >= 4 && !P.Loop ? dyn_cast<WhileStmt>(Inner[2]) : nullptr;
  if (W) {
    While = countingWhile(W, Inner[1], Ctx.AST);
    if (While && (While->Step != 1 || While->Inclusive ||
                  intValue(While->Start, Ctx.AST) != 0))
      While.reset();
  }
  size_t LoopAt = While ? 2 : 1;
  P.Acc = AccDS && AccDS->isSingleDecl()
              ? dyn_cast<VarDecl>(AccDS->getSingleDecl())
              : nullptr;
  if (!P.Acc || !(P.Loop || While) || !P.Acc->hasInit() ||
      P.Acc->isStaticLocal() ||
      !(P.Acc->getType()->isArithmeticType() ||
        P.Acc->getType()->isDependentType()))
    return NotApplicable(Shape);
  if (P.Acc->getType()->isDependentType())
    if (std::string Why = dependentAccumulatorProblem(P.Acc, FD); !Why.empty())
      return NotApplicable(Why);
  if (!threadVariance(P.Acc->getInit(), FD).uniform() ||
      mayHaveSideEffects(P.Acc->getInit(), Ctx.AST))
    return NotApplicable("the accumulator '" + P.Acc->getName() +
                         "' starts from a value that differs between threads");
  P.Post.assign(Inner.begin() + LoopAt + 1, Inner.end());

  // for (k = 0; k < K; ++k)
  const Expr *KB = nullptr;
  P.K = P.Loop ? zeroBasedLoop(P.Loop, Ctx.AST, KB) : While->Var;
  if (While)
    KB = While->Bound;
  if (!P.K)
    return NotApplicable("the loop is not 'for (int k = 0; k < K; ++k)'");
  if (!threadVariance(KB, FD).uniform() || mayHaveSideEffects(KB, Ctx.AST))
    return NotApplicable("the loop bound is not the same for every thread");
  auto KBSpan = wholeSpan(Ctx, KB, false);
  if (!KBSpan)
    return NotApplicable("the loop bound has no place in the file");
  P.KBound =
      parenthesize(Ctx.Code.slice(KBSpan->Begin.Offset, KBSpan->End.Offset));

  // acc += A[f(row, k)] * B[g(k, col)]; (or its other spellings) and, in
  // a while loop, the step after it.
  const Stmt *LB = P.Loop ? P.Loop->getBody() : W->getBody();
  if (const auto *CS = dyn_cast<CompoundStmt>(LB);
      CS && CS->size() == (While ? 2u : 1u))
    LB = CS->body_front();
  std::optional<ProductUpdate> Upd = productUpdate(LB, P.Acc);
  if (!Upd)
    return NotApplicable("the loop body is not '" + P.Acc->getName() +
                         " += A[...] * B[...];' (or '" + P.Acc->getName() +
                         " = fmaf(A[...], B[...], " + P.Acc->getName() +
                         ");')");
  P.Fma = Upd->Fma;
  for (const Expr *Side : {Upd->X, Upd->Y}) {
    const auto *Access =
        dyn_cast<ArraySubscriptExpr>(Side->IgnoreParenImpCasts());
    if (!Access)
      return NotApplicable("a factor of the product is not an array element");
    // Through an alias `a = A + e`, `a[i]` reads A at e + i.
    const Expr *Idx = Access->getIdx(), *Base = Access->getBase();
    const PointerAlias *Alias = aliasOf(Access, P.Aliases);
    SmallVector<const Expr *, 3> Parts{Idx};
    if (Alias)
      Parts.append(Alias->Offsets.begin(), Alias->Offsets.end());
    if (any_of(Parts,
               [&](const Expr *X) {
                 // blockIdx and gridDim are the same in every thread of a
                 // block; threadIdx and blockDim count. Index helpers
                 // compute, from their arguments and the block alone.
                 return readsOrWritesMemory(X, &Ctx.AST,
                                            {/*ThreadCoords=*/false,
                                             /*BlockCoords=*/true}) ||
                        !plainIndexCalls(X, Ctx.AST);
               }) ||
        (!Alias && !LoadedPointer(Base) &&
         (!threadVariance(Base, FD).uniform() ||
          readsOrWritesMemory(Base, nullptr))) ||
        mentions(Access, P.Acc))
      return NotApplicable("a factor of the product is not a plain load at "
                           "an index computed from the indices and values "
                           "the same for every thread");
    auto Mentions = [&](const VarDecl *V) {
      return any_of(Parts, [&](const Expr *X) { return mentions(X, V); });
    };
    bool R = Mentions(P.Row), C = Mentions(P.Col);
    if (!mentions(Idx, P.K) || R == C)
      return NotApplicable("a factor of the product does not depend on '" +
                           P.K->getName() + "' and exactly one of '" +
                           P.Row->getName() + "', '" + P.Col->getName() + "'");
    const VarDecl *Own = R ? P.Row : P.Col;
    // A decoded matrix index is blockIdx.x: the same in the block.
    SmallVector<const ValueDecl *, 4> Allowed{Own, P.K};
    if (P.Flat) {
      Allowed.append(P.Flat->Blocks.begin(), P.Flat->Blocks.end());
      Allowed.append(P.Flat->Derived.begin(), P.Flat->Derived.end());
    }
    for (const Expr *X : Parts)
      if (std::string V = nonUniformRef(X, Allowed, FD); !V.empty())
        return NotApplicable("the index of a factor uses '" + V +
                             "', which differs between threads");
    Operand &O = R ? P.A : P.B;
    if (O.Access)
      return NotApplicable("both factors depend on '" +
                           (R ? P.Row : P.Col)->getName() + "'");
    O.Access = Access;
    O.ElemType = typeName(Access->getType(), Ctx.AST);
    O.Zero = zeroOf(Access->getType(), O.ElemType);
  }
  if (writtenVars(LB).contains(P.K))
    return NotApplicable("the loop body writes '" + P.K->getName() + "'");
  std::vector<const Stmt *> Renamed{P.A.Access, P.B.Access};
  Renamed.insert(Renamed.end(), P.Post.begin(), P.Post.end());
  if (std::string Why = aliasUsedElsewhere(Body, P.Aliases, Renamed);
      !Why.empty())
    return NotApplicable(Why);

  // The rows move between threads: nothing else may read the thread's
  // coordinates or the block's shape.
  for (const Stmt *S : P.Post) {
    if (mentionsBuiltin(S, "threadIdx") || mentionsBuiltin(S, "blockDim"))
      return NotApplicable("the code after the loop reads threadIdx or "
                           "blockDim");
    if (callsReadThreadCoords(S))
      return NotApplicable("the code after the loop calls a function that "
                           "reads threadIdx or blockDim");
    if (callsFunction(S, "__syncthreads") || callsFunction(S, "__syncwarp") ||
        callsFunction(S, "__shfl"))
      return NotApplicable("the code after the loop synchronizes threads");
    if (mentions(S, P.K))
      return NotApplicable("the code after the loop uses '" + P.K->getName() +
                           "'");
    if (firstJump(S))
      return NotApplicable("the code after the loop returns or jumps");
  }
  // A flat index reads blockDim, and goes.
  if (any_of(Stmts, [&](const Stmt *S) {
        return !(P.Flat && S == P.Flat->GidDecl) &&
               mentionsBuiltin(S, "blockDim");
      }))
    return NotApplicable("it reads blockDim, which the new block changes");
  for (const Stmt *S : Stmts)
    if (S != P.FirstIndexDecl && !is_contained(P.Decls, S) &&
        mentionsBuiltin(S, "threadIdx"))
      return NotApplicable("it reads threadIdx outside the indices");
  for (const DeclStmt *DS : P.Decls)
    for (const Decl *D : DS->decls())
      if (D != P.Row && D != P.Col && !(P.Flat && D == P.Flat->Gid) &&
          mentionsBuiltin(cast<VarDecl>(D)->getInit(), "threadIdx"))
        return NotApplicable("it reads threadIdx outside the indices");

  auto FirstSpan = wholeSpan(Ctx, P.FirstIndexDecl, true);
  auto LastSpan = wholeSpan(Ctx, Stmts.back(), true);
  if (!FirstSpan || !LastSpan)
    return NotApplicable("the body has no place in the file");
  P.RegionBegin = FirstSpan->Begin.Offset;
  P.RegionEnd = LastSpan->End.Offset;
  P.Indent = indentationAt(Ctx.Code, P.RegionBegin);

  // Every launch uses one TILE x TILE block, written where it can change
  // (a flat index: TILE * TILE x 1, flatIndices checked it).
  ShapeFound = true;
  if (P.Flat) {
    P.Tile = P.Flat->D;
    return P;
  }
  if (K->Info->Launches.empty())
    return NotApplicable("it is never launched in this file, so its block "
                         "cannot be shown to be TILE x TILE");
  if (std::string Why = launchProblem(*K->Info); !Why.empty())
    return NotApplicable(Why);
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
          "x1");
    if (!Tile)
      Tile = Want;
  }
  P.Tile = *Tile;
  return P;
}

/// The rewritten body from the indices on (rewriteBlockProduct fills it in).
constexpr StringRef BlockProductTemplate =
    R"(// shared-tiling rows=${R}: ${T} x ${T} outputs per block, ${R} rows per thread.
__shared__ ${TA} ${As}[${T}][${T}];
__shared__ ${TB} ${Bs}[${T}][${T}];
${Decls}${AccT} ${AccR}[${R}];
#pragma unroll
for (int ${I} = 0; ${I} < ${R}; ++${I})
  ${AccR}[${I}] = ${Init};
for (${KT} ${K0} = 0; ${K0} < ${K}; ${K0} += ${T}) {
  #pragma unroll
  for (int ${I} = 0; ${I} < ${R}; ++${I}) {
    const int ${Y} = threadIdx.y + ${I} * ${S};
    ${RowT} ${Ar} = ${Y};
    ${KT} ${Ak} = ${K0} + threadIdx.x;
    ${As}[${Y}][threadIdx.x] = ${Ak} < ${K}${AGuard} ? ${ALoad} : ${ZA};
    ${KT} ${Bk} = ${K0} + ${Y};
    ${Bs}[${Y}][threadIdx.x] = ${Bk} < ${K}${BGuard} ? ${BLoad} : ${ZB};
  }
  __syncthreads();
  #pragma unroll
  for (int ${Kk} = 0; ${Kk} < ${T}; ++${Kk}) {
    const ${TB} ${Bv} = ${Bs}[${Kk}][threadIdx.x];
    #pragma unroll
    for (int ${I} = 0; ${I} < ${R}; ++${I})
      ${Update};
  }
  __syncthreads();
}
#pragma unroll
for (int ${I} = 0; ${I} < ${R}; ++${I}) {
  ${RowT} ${Rr} = threadIdx.y + ${I} * ${S};
${Post}})";

Expected<tooling::Replacements> rewriteBlockProduct(const EditContext &Ctx,
                                                    const Edit &E,
                                                    const BlockProductPlan &P,
                                                    int64_t Rows) {
  int64_t T = P.Tile;
  if (Rows != 1 && Rows != 2 && Rows != 4 && Rows != 8)
    return reject(E, "params",
                  "rows must be 1, 2, 4 or 8 (got " + Twine(Rows) + ")");
  if (Rows > T)
    return reject(E, "params",
                  "rows must be at most the tile (" + Twine(T) + ")");
  StringRef Code = Ctx.Code;
  std::string FnText = Code.slice(P.Kernel.Info->Range.Begin.Offset,
                                  P.Kernel.Info->Range.End.Offset)
                           .str();
  auto Fresh = [&](StringRef Base) {
    std::string N = freshName(FnText, Base);
    FnText += " " + N;
    return N;
  };
  std::string As = Fresh("As"), Bs = Fresh("Bs"), AccR = Fresh("accR"),
              I = Fresh("i"), K0 = Fresh("kTile"), Y = Fresh("y"),
              Ar = Fresh("ar"), Ak = Fresh("ak"), Bk = Fresh("bk"),
              Kk = Fresh("kk"), Bv = Fresh("b"), Rr = Fresh("r");
  std::string AccRef = AccR + "[" + I + "]";
  // The pointer aliases' declarations go: each use reads through the
  // initializer, with the row renamed alike.
  auto ATo = inlinedAliases(Ctx, P.Aliases, {{P.Row, Ar}, {P.K, Ak}});
  auto BTo = inlinedAliases(Ctx, P.Aliases, {{P.K, Bk}});
  auto PostTo = inlinedAliases(Ctx, P.Aliases, {{P.Row, Rr}, {P.Acc, AccRef}});
  auto ALoad = ATo ? renamedText(Ctx, P.A.Access, *ATo, false) : std::nullopt;
  auto BLoad = BTo ? renamedText(Ctx, P.B.Access, *BTo, false) : std::nullopt;
  auto Init = renamedText(Ctx, P.Acc->getInit(), {}, false);
  if (!ALoad || !BLoad || !Init || !PostTo)
    return reject(E, "internal",
                  "kernel '" + E.Target +
                      "': a part of the loop has no place in the file");
  // Past a flat index's early return, the threads that returned stage
  // nothing and store nothing (flatGuards).
  std::string AGuard, BGuard, Live;
  if (P.Flat && P.Flat->Return &&
      !flatGuards(Ctx, *P.Flat, Y, Rr, AGuard, BGuard, Live))
    return reject(E, "internal",
                  "kernel '" + E.Target +
                      "': the early return has no place in the file");
  std::string Post, In = Live.empty() ? "  " : "    ";
  for (const Stmt *S : P.Post) {
    auto Text = renamedText(Ctx, S, *PostTo, true);
    auto Sp = wholeSpan(Ctx, S, true);
    if (!Text || !Sp)
      return reject(E, "internal",
                    "kernel '" + E.Target +
                        "': the code after the loop has no place in the file");
    int Delta =
        int(In.size()) - int(indentationAt(Code, Sp->Begin.Offset).size());
    Post += In + reindent(*Text, Delta) + "\n";
  }
  if (!Live.empty())
    Post = "  if (" + Live + ") {\n" + Post + "  }\n";
  // The declarations among the indices stay, without the row index (each
  // row has its own now); the column index keeps its declaration (a flat
  // index's: threadIdx.x, the matrix's blockIdx.x, the flat index goes).
  std::string Decls;
  for (const DeclStmt *DS : P.Decls) {
    bool Flat = P.Flat && any_of(DS->decls(), [&](const Decl *D) {
                  return D == P.Flat->Gid || D == P.Col ||
                         is_contained(P.Flat->Blocks, D);
                });
    if (!is_contained(DS->decls(), P.Row) && !Flat) {
      auto Text = renamedText(Ctx, DS, {}, true);
      auto Sp = wholeSpan(Ctx, DS, true);
      if (!Text || !Sp)
        return reject(E, "internal",
                      "kernel '" + E.Target +
                          "': a declaration has no place in the file");
      Decls +=
          reindent(*Text, -int(indentationAt(Code, Sp->Begin.Offset).size())) +
          "\n";
      continue;
    }
    for (const Decl *D : DS->decls()) {
      const auto *VD = cast<VarDecl>(D);
      if (VD == P.Row || (P.Flat && VD == P.Flat->Gid))
        continue;
      std::optional<std::string> InitText;
      if (P.Flat && VD == P.Col)
        InitText = "threadIdx.x";
      else if (P.Flat && is_contained(P.Flat->Blocks, VD))
        InitText = "blockIdx.x";
      else
        InitText = renamedText(Ctx, VD->getInit(), {}, false);
      if (!InitText)
        return reject(E, "internal",
                      "kernel '" + E.Target + "': the declaration of '" +
                          VD->getName() + "' has no place in the file");
      Decls += typeName(VD->getType(), Ctx.AST) + " " + VD->getName().str() +
               " = " + *InitText + ";\n";
    }
  }
  // The update as the loop wrote it: fused where it was.
  std::string ARow = As + "[threadIdx.y + " + I + " * " +
                     std::to_string(T / Rows) + "][" + Kk + "]";
  std::string Update = P.Fma.empty() ? AccRef + " += " + ARow + " * " + Bv
                                     : AccRef + " = " + P.Fma + "(" + ARow +
                                           ", " + Bv + ", " + AccRef + ")";
  std::string Body = fillTemplate(
      BlockProductTemplate, {{"R", std::to_string(Rows)},
                             {"T", std::to_string(T)},
                             {"S", std::to_string(T / Rows)},
                             {"TA", P.A.ElemType},
                             {"TB", P.B.ElemType},
                             {"As", As},
                             {"Bs", Bs},
                             {"Decls", Decls},
                             {"AccT", typeName(P.Acc->getType(), Ctx.AST)},
                             {"AccR", AccR},
                             {"Init", *Init},
                             {"I", I},
                             {"KT", typeName(P.K->getType(), Ctx.AST)},
                             {"K0", K0},
                             {"K", P.KBound},
                             {"Y", Y},
                             {"RowT", typeName(P.Row->getType(), Ctx.AST)},
                             {"Ar", Ar},
                             {"Ak", Ak},
                             {"ALoad", *ALoad},
                             {"ZA", P.A.Zero},
                             {"AGuard", AGuard},
                             {"BGuard", BGuard},
                             {"Bk", Bk},
                             {"BLoad", *BLoad},
                             {"ZB", P.B.Zero},
                             {"Kk", Kk},
                             {"Bv", Bv},
                             {"Rr", Rr},
                             {"Update", Update},
                             {"Post", Post}});
  tooling::Replacements Repl;
  if (Error Err = addReplacement(
          Repl,
          replaceSpan(Ctx, offsetSpan(P.RegionBegin, P.RegionEnd),
                      indentLines(Body, P.Indent)),
          E))
    return std::move(Err);
  // Every launch's block: TILE x (TILE / rows). A dim3 variable stays
  // the launch's source of truth: `dim3(threads.x, threads.y / 8)`.
  // A flat index's 1D block becomes the 2D one.
  if (Rows != 1 || P.Flat)
    for (const LaunchSite &Site : P.Kernel.Info->Launches) {
      std::string Block =
          "dim3(" + std::to_string(T) + ", " + std::to_string(T / Rows) + ")";
      const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, Site);
      const Expr *Arg = Call && Call->getConfig()
                            ? Call->getConfig()->getArg(1)->IgnoreImplicit()
                            : nullptr;
      if (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(Arg);
          CE && CE->getNumArgs() == 1)
        Arg = CE->getArg(0)->IgnoreImplicit();
      if (const auto *DR = dyn_cast_or_null<DeclRefExpr>(Arg);
          DR && !P.Flat && DR->getType()->isRecordType() &&
          !DR->getBeginLoc().isMacroID()) {
        std::string V = DR->getDecl()->getNameAsString();
        Block = "dim3(" + V + ".x, " + V + ".y / " + std::to_string(Rows) + ")";
      }
      if (Error Err =
              addReplacement(Repl, replaceSpan(Ctx, Site.BlockRange, Block), E))
        return std::move(Err);
    }
  return Repl;
}

} // namespace sharedtiling
} // namespace optiml
