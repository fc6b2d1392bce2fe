//===- ConstantMemory.cpp - A small read-only array in __constant__ -------===//
//
// A pointer parameter the kernel only reads, at indices that are the same
// for every thread and lie in [0, N) for a constant N (a filter's taps,
// `filt[ky * K + kx]` inside loops with constant bounds), moves to
// constant memory: a `__constant__ T optiml_c_filt[N]` declared before the
// kernel, the kernel's reads of `filt` read it instead, and each launch is
// preceded by `cudaMemcpyToSymbolAsync(optiml_c_filt, <its argument>,
// N * sizeof(T), 0, cudaMemcpyDefault, <its stream>)`. Every thread of a
// warp then reads one address per step, which the constant cache serves
// in one transaction, and with unrolled loops the compiler folds the reads
// into the arithmetic as constant operands (no registers, no loads).
//
// Why it is exact: the copy runs in the launch's stream just before it,
// so the kernel sees the array as it was at its launch; the kernel never
// writes the array nor lets its address escape; every read's index lies
// in [0, N), so each reads the element it read before. What is assumed:
// the argument points to at least N elements (the kernel reads them all
// whenever its loops run), and the launches in this file are the
// kernel's only launches (a kernel whose name is used other than as a
// launch's callee is refused).
//
// A row pointer into the array (`const float *w = filt + ky * K;`, a
// PointerAlias of SharedTilingInternal.h only ever read as `w[i]`) reads
// `filt[ky * K + i]`: its offsets count in the index, and it is the
// parameter in its initializer that is renamed. A kernel template is
// checked in each instantiation (its indices' bounds may be template
// arguments); the array takes the largest size and each launch copies
// what its instantiation reads. Still refused: a launch written through a
// macro (no statement is inserted before a macro's invocation).
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/CountingLoop.h"
#include "../../Patterns/SideEffects.h"
#include "../TransformSupport.h"
#include "SharedTilingInternal.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <functional>

using namespace clang;
using namespace llvm;

namespace optiml {
namespace {

/// Arrays up to this size move (of the 64 KiB of constant memory a
/// program has, leaving room for others).
constexpr int64_t MaxBytes = 16 * 1024;

using Interval = std::pair<int64_t, int64_t>;

/// The values an index may take: constants and counting loops' variables
/// combined by +, - and *, through casts and constant locals; nothing for
/// anything else (a thread index, a load, a runtime argument).
std::optional<Interval>
indexRange(const Expr *E, const DenseMap<const VarDecl *, Interval> &Loops,
           const DenseSet<const ValueDecl *> &Written, const ASTContext &AST,
           const DenseMap<const VarDecl *, Interval> &Narrow,
           unsigned Depth = 0) {
  if (!E || Depth > 8)
    return std::nullopt;
  E = stripCasts(E);
  if (std::optional<int64_t> V = intValue(E, AST))
    return Interval{*V, *V};
  if (const auto *DR = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(DR->getDecl());
    if (!VD)
      return std::nullopt;
    std::optional<Interval> R;
    if (auto It = Loops.find(VD); It != Loops.end())
      R = It->second;
    else if (VD->isLocalVarDecl() && VD->hasInit() && !Written.contains(VD))
      R = indexRange(VD->getInit(), Loops, Written, AST, Narrow, Depth + 1);
    // An enclosing `if` may bound it further.
    if (auto It = Narrow.find(VD); R && It != Narrow.end())
      R = Interval{std::max(R->first, It->second.first),
                   std::min(R->second, It->second.second)};
    if (R && R->first > R->second)
      return std::nullopt;
    return R;
  }
  const auto *B = dyn_cast<BinaryOperator>(E);
  if (!B)
    return std::nullopt;
  auto L = indexRange(B->getLHS(), Loops, Written, AST, Narrow, Depth + 1);
  auto R = indexRange(B->getRHS(), Loops, Written, AST, Narrow, Depth + 1);
  if (!L || !R)
    return std::nullopt;
  constexpr int64_t Big = int64_t(1) << 40;
  for (int64_t X : {L->first, L->second, R->first, R->second})
    if (X > Big || X < -Big)
      return std::nullopt;
  switch (B->getOpcode()) {
  case BO_Add:
    return Interval{L->first + R->first, L->second + R->second};
  case BO_Sub:
    return Interval{L->first - R->second, L->second - R->first};
  case BO_Mul: {
    int64_t P[] = {L->first * R->first, L->first * R->second,
                   L->second * R->first, L->second * R->second};
    return Interval{*std::min_element(P, P + 4), *std::max_element(P, P + 4)};
  }
  default:
    return std::nullopt;
  }
}

/// Bounds on locals from the `if`s whose then-branch holds \p S: each
/// conjunct `v >= C`, `v > C`, `v <= C`, `v < C` (or mirrored) of a local
/// `v` never written in the kernel.
DenseMap<const VarDecl *, Interval>
guardBounds(const Stmt *S, ASTContext &AST,
            const DenseSet<const ValueDecl *> &Written) {
  DenseMap<const VarDecl *, Interval> Out;
  auto Bound = [&](const VarDecl *V, int64_t Lo, int64_t Hi) {
    auto [It, New] = Out.try_emplace(V, Interval{Lo, Hi});
    if (!New)
      It->second = {std::max(It->second.first, Lo),
                    std::min(It->second.second, Hi)};
  };
  constexpr int64_t Inf = int64_t(1) << 40;
  std::function<void(const Expr *)> Conj = [&](const Expr *C) {
    const auto *B = dyn_cast<BinaryOperator>(C->IgnoreParenImpCasts());
    if (!B)
      return;
    if (B->getOpcode() == BO_LAnd) {
      Conj(B->getLHS());
      Conj(B->getRHS());
      return;
    }
    BinaryOperatorKind Op = B->getOpcode();
    const Expr *VarSide = B->getLHS(), *ConstSide = B->getRHS();
    std::optional<int64_t> K = intValue(ConstSide, AST);
    if (!K) {
      std::swap(VarSide, ConstSide);
      K = intValue(ConstSide, AST);
      if (!B->isComparisonOp() || !K)
        return;
      Op = BinaryOperator::reverseComparisonOp(Op);
    }
    const auto *V = dyn_cast_or_null<VarDecl>(declOf(VarSide));
    if (!V || !V->isLocalVarDecl() || Written.contains(V) ||
        !V->getType()->isIntegerType())
      return;
    switch (Op) {
    case BO_GE:
      Bound(V, *K, Inf);
      break;
    case BO_GT:
      Bound(V, *K + 1, Inf);
      break;
    case BO_LE:
      Bound(V, -Inf, *K);
      break;
    case BO_LT:
      Bound(V, -Inf, *K - 1);
      break;
    default:
      break;
    }
  };
  const Stmt *Child = S;
  DynTypedNodeList Ps = AST.getParents(*Child);
  while (!Ps.empty()) {
    const Stmt *Par = Ps[0].get<Stmt>();
    if (!Par)
      break;
    if (const auto *If = dyn_cast<IfStmt>(Par); If && If->getThen() == Child)
      Conj(If->getCond());
    Child = Par;
    Ps = AST.getParents(*Child);
  }
  return Out;
}

struct ConstPlan {
  ResolvedKernel Kernel;
  const ParmVarDecl *Param = nullptr;
  unsigned ParamIndex = 0;
  std::string ElemType;
  int64_t Count = 0; ///< N: the reads' indices lie in [0, N)
  std::vector<const ArraySubscriptExpr *> Reads;
  /// What is renamed: the base of each direct read, the parameter in each
  /// alias's initializer.
  std::vector<const Expr *> Renamed;
  /// A template's instantiations (canonical) and the N each reads.
  DenseMap<const FunctionDecl *, int64_t> CountOf;
};

/// Why \p Param cannot move, or empty (with \p P filled in).
std::string checkParam(const EditContext &Ctx, const FunctionDecl *FD,
                       const ParmVarDecl *Param, ConstPlan &P) {
  std::string Name = "'" + Param->getNameAsString() + "'";
  QualType T = Param->getType();
  if (!T->isPointerType())
    return Name + " is not a pointer";
  QualType Elem = T->getPointeeType();
  if (Elem->isDependentType() || !Elem->isArithmeticType())
    return Name + " does not point to numbers";
  if (Elem.isVolatileQualified())
    return Name + " is volatile";
  std::vector<sharedtiling::PointerAlias> Aliases;
  if (std::string W = sharedtiling::aliasesOfParam(Ctx, FD, Param, Aliases);
      !W.empty())
    return W;
  PointerUses U =
      Aliases.empty()
          ? analyzePointerParam(Ctx.AST, FD, Param)
          : sharedtiling::usesThroughAliases(Ctx, FD, Param, Aliases);
  if (!U.Blocker.empty())
    return U.Blocker;
  if (U.Loads.empty())
    return Name + " is never read";
  std::vector<const DeclRefExpr *> Refs;
  collectRefs(FD->getBody(), Param, Refs);
  DenseMap<const VarDecl *, Interval> Loops =
      constantLoopRanges(FD->getBody(), Ctx.AST);
  DenseSet<const ValueDecl *> Written = writtenVars(FD->getBody());
  P.Reads.clear();
  P.Renamed.clear();
  int64_t Hi = -1;
  for (const Expr *L : U.Loads) {
    const auto *AS = dyn_cast<ArraySubscriptExpr>(L->IgnoreParens());
    const sharedtiling::PointerAlias *A =
        AS ? sharedtiling::aliasOf(AS, Aliases) : nullptr;
    if (!AS || (!A && referencedDecl(AS->getBase()) != Param))
      return Name + " is read other than as " + Param->getNameAsString() +
             "[i] at " + where(Ctx, L);
    auto R = indexRange(AS->getIdx(), Loops, Written, Ctx.AST,
                        guardBounds(AS, Ctx.AST, Written));
    // Through a row pointer, its offsets count too.
    for (const Expr *O : A ? ArrayRef(A->Offsets) : ArrayRef<const Expr *>())
      if (auto RO = indexRange(O, Loops, Written, Ctx.AST,
                               guardBounds(A->Decl, Ctx.AST, Written));
          R && RO)
        R = Interval{R->first + RO->first, R->second + RO->second};
      else
        R.reset();
    std::string Index = "the index '" + looseExprText(Ctx, AS->getIdx()) +
                        "' at " + where(Ctx, AS) +
                        (A ? " (through '" + A->Var->getNameAsString() +
                                 "', a pointer into " + Name + ")"
                           : std::string());
    if (!R)
      return Index +
             " is not built from constants and loops with constant bounds "
             "(the same for every thread)";
    if (R->first < 0)
      return Index + " may be negative";
    if (!A && !looseExprSpan(Ctx, AS->getBase()))
      return Name + " is read inside a macro at " + where(Ctx, AS);
    if (!A)
      P.Renamed.push_back(AS->getBase());
    Hi = std::max(Hi, R->second);
    P.Reads.push_back(AS);
  }
  for (const sharedtiling::PointerAlias &A : Aliases) {
    std::vector<const DeclRefExpr *> InInit;
    collectRefs(A.Var->getInit(), Param, InInit);
    if (InInit.size() != 1)
      return Name + " is named twice in the initializer of '" +
             A.Var->getNameAsString() + "'";
    if (!looseExprSpan(Ctx, InInit.front()))
      return Name + " is named inside a macro at " + where(Ctx, InInit.front());
    P.Renamed.push_back(InInit.front());
  }
  if (Refs.size() != P.Renamed.size())
    return Name + " is used other than in its reads";
  uint64_t Size = Ctx.AST.getTypeSizeInChars(Elem).getQuantity();
  if ((Hi + 1) * int64_t(Size) > MaxBytes)
    return Name + " is read at up to " + std::to_string(Hi + 1) +
           " elements; constant memory takes at most " +
           std::to_string(MaxBytes) + " bytes here";
  P.Param = Param;
  P.Count = Hi + 1;
  P.ElemType = typeName(Elem.getUnqualifiedType(), Ctx.AST);
  return "";
}

/// checkParam() for a kernel template's pattern \p FD: in each
/// instantiation, whose reads must be the same (the pattern's, renamed
/// once) and of the same element type; the array takes the largest N.
std::string checkTemplateParam(const EditContext &Ctx, const FunctionDecl *FD,
                               const ParmVarDecl *Param, ConstPlan &P) {
  std::string Name = "'" + Param->getNameAsString() + "'";
  std::vector<const FunctionDecl *> Insts = templateInstantiations(FD);
  if (Insts.empty())
    return Name + ": the template is never instantiated in this file, so "
                  "its indices' bounds are unknown";
  auto Places = [](const ConstPlan &Q) {
    std::vector<SourceRange> Out;
    for (const Expr *E : Q.Renamed)
      Out.push_back(E->getSourceRange());
    return Out;
  };
  std::optional<ConstPlan> First;
  DenseMap<const FunctionDecl *, int64_t> CountOf;
  for (const FunctionDecl *Inst : Insts) {
    std::string In = " in " + instantiationName(Inst);
    const ParmVarDecl *IP = instantiatedParam(Param, Inst);
    if (!IP)
      return Name + ": the template's parameters cannot be matched" + In;
    ConstPlan Q;
    if (std::string W = checkParam(Ctx, Inst, IP, Q); !W.empty())
      return W + In;
    if (First && (Q.ElemType != First->ElemType || Places(Q) != Places(*First)))
      return Name + " is read at other places or as another type" + In;
    CountOf[Inst->getCanonicalDecl()] = Q.Count;
    if (!First)
      First = std::move(Q);
    else
      First->Count = std::max(First->Count, Q.Count);
  }
  P.Param = Param;
  P.Count = First->Count;
  P.ElemType = First->ElemType;
  P.Reads = First->Reads;
  P.Renamed = First->Renamed;
  P.CountOf = std::move(CountOf);
  return "";
}

/// checkParam() or, for a template's pattern, checkTemplateParam().
std::string checkAnyParam(const EditContext &Ctx, const FunctionDecl *FD,
                          const ParmVarDecl *Param, ConstPlan &P) {
  return FD->getDescribedFunctionTemplate()
             ? checkTemplateParam(Ctx, FD, Param, P)
             : checkParam(Ctx, FD, Param, P);
}

/// Whether \p F is the kernel \p FD or, for a template, one of its
/// specializations.
bool isKernelOrSpecialization(const FunctionDecl *F, const FunctionDecl *FD) {
  if (!F)
    return false;
  if (F->getCanonicalDecl() == FD->getCanonicalDecl())
    return true;
  const FunctionTemplateDecl *T = F->getPrimaryTemplate();
  return T &&
         T->getTemplatedDecl()->getCanonicalDecl() == FD->getCanonicalDecl();
}

/// Uses of \p FD's name other than as the callee of a `<<<...>>>` launch
/// in the main file (a function pointer, cudaLaunchKernel): the first one.
const DeclRefExpr *otherUse(const EditContext &Ctx, const FunctionDecl *FD) {
  const DeclRefExpr *Found = nullptr;
  std::function<void(const Stmt *, bool)> Walk = [&](const Stmt *S,
                                                     bool Callee) {
    if (!S || Found)
      return;
    if (const auto *DR = dyn_cast<DeclRefExpr>(S))
      if (!Callee &&
          isKernelOrSpecialization(DR->getDecl()->getAsFunction(), FD))
        Found = DR;
    if (const auto *K = dyn_cast<CUDAKernelCallExpr>(S)) {
      Walk(K->getCallee(), true);
      for (const Expr *A : K->arguments())
        Walk(A, false);
      Walk(K->getConfig(), false);
      return;
    }
    for (const Stmt *C : S->children())
      Walk(C, Callee && isa<ImplicitCastExpr, ParenExpr>(S));
  };
  for (const Decl *D : Ctx.AST.getTranslationUnitDecl()->decls()) {
    std::function<void(const Decl *)> Visit = [&](const Decl *X) {
      if (const auto *F = dyn_cast<FunctionDecl>(X))
        Walk(F->getBody(), false);
      if (const auto *V = dyn_cast<VarDecl>(X))
        Walk(V->getInit(), false);
      if (const auto *DC = dyn_cast<DeclContext>(X))
        if (isa<NamespaceDecl, LinkageSpecDecl, CXXRecordDecl>(X))
          for (const Decl *Inner : DC->decls())
            Visit(Inner);
      if (const auto *FT = dyn_cast<FunctionTemplateDecl>(X))
        Walk(FT->getTemplatedDecl()->getBody(), false);
    };
    Visit(D);
  }
  return Found;
}

class ConstantMemoryTransform : public Transform {
public:
  StringRef kind() const override { return "constant-memory"; }
  StringRef description() const override {
    return "move a small array the kernel only reads, at indices the same "
           "for every thread (a filter's taps), into __constant__ memory, "
           "copied in the launch's stream before each launch";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  bool insertsAroundLaunches() const override { return true; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec::string("param", "the pointer parameter to move "
                                       "(default: the first that can)")};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E = defaultEdit(kind(), Target);
    auto P = analyze(Ctx, E);
    if (!P) {
      A.Reason = rejectionReason(P.takeError());
      return A;
    }
    // Each parameter that can move, and whose launches take the copy.
    std::vector<std::string> Parts, Refused;
    const FunctionDecl *FD = P->Kernel.Decl;
    for (unsigned I = 0; I < FD->getNumParams(); ++I) {
      ConstPlan Q = *P;
      if (!checkAnyParam(Ctx, FD, FD->getParamDecl(I), Q).empty())
        continue;
      Q.ParamIndex = I;
      Edit S = E;
      S.Params["param"] = Q.Param->getNameAsString();
      if (auto R = rewrite(Ctx, S, Q); !R) {
        Refused.push_back(rejectionReason(R.takeError()));
        continue;
      }
      Parts.push_back("'" + Q.Param->getNameAsString() + "' is read at " +
                      std::to_string(Q.Reads.size()) +
                      " place(s), at indices the same for every thread "
                      "within [0, " +
                      std::to_string(Q.Count) + ")");
      A.Suggestions.push_back(S);
    }
    if (Parts.empty()) {
      A.Reason = join(Refused, "; ");
      return A;
    }
    A.Applies = true;
    A.Reason =
        join(Parts, "; ") + ": constant memory serves each warp's read at once";
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    auto P = analyze(Ctx, E);
    if (!P)
      return P.takeError();
    return rewrite(Ctx, E, *P);
  }

private:
  Expected<ConstPlan> analyze(const EditContext &Ctx, const Edit &E) const {
    auto K = resolveKernel(Ctx, E, E.Target);
    if (!K)
      return K.takeError();
    std::string Name = "kernel '" + E.Target + "'";
    auto NotApplicable = [&](const Twine &Why) {
      return reject(E, "not-applicable", Name + ": " + Why);
    };
    const FunctionDecl *FD = K->Decl;
    if (FD->isTemplateInstantiation() ||
        (FD->isDependentContext() && !FD->getDescribedFunctionTemplate()))
      return NotApplicable("it is a template (one array per instantiation "
                           "is not done)");
    if (K->Info->Launches.empty())
      return NotApplicable("it is never launched in this file, so no launch "
                           "could copy the array");
    if (const DeclRefExpr *U = otherUse(Ctx, FD))
      return NotApplicable("its name is used other than in a <<<...>>> "
                           "launch at " +
                           where(Ctx, U) + ", where no copy would precede it");
    ConstPlan P;
    P.Kernel = *K;
    std::optional<std::string> Want = E.getString("param");
    std::vector<std::string> Why;
    for (unsigned I = 0; I < FD->getNumParams(); ++I) {
      const ParmVarDecl *Param = FD->getParamDecl(I);
      if (Want && Param->getName() != *Want)
        continue;
      std::string W = checkAnyParam(Ctx, FD, Param, P);
      if (W.empty()) {
        P.ParamIndex = I;
        return P;
      }
      if (Want || Param->getType()->isPointerType())
        Why.push_back(W);
    }
    if (Want && Why.empty())
      return reject(E, "params", Name + " has no parameter '" + *Want + "'");
    return NotApplicable(Why.empty()
                             ? std::string("it has no pointer parameters")
                             : join(Why, "; "));
  }

  Expected<tooling::Replacements> rewrite(const EditContext &Ctx, const Edit &E,
                                          const ConstPlan &P) const {
    std::string Name = "kernel '" + E.Target + "'";
    auto NotApplicable = [&](const Twine &Why) {
      return reject(E, "not-applicable", Name + ": " + Why);
    };
    StringRef Code = Ctx.Code;
    std::string Sym = freshName(Code, "optiml_c_" + P.Param->getNameAsString());
    // Launches outside the kernel's namespace name the array with it.
    std::string Qualified = Sym;
    if (const auto *NS =
            dyn_cast<NamespaceDecl>(P.Kernel.Decl->getFirstDecl()
                                        ->getDeclContext()
                                        ->getEnclosingNamespaceContext());
        NS && !NS->isAnonymousNamespace())
      Qualified = NS->getQualifiedNameAsString() + "::" + Sym;
    tooling::Replacements Repl;
    // The array, before the kernel's first declaration.
    const FunctionDecl *First = P.Kernel.Decl->getFirstDecl();
    unsigned At = definitionBegin(Ctx, First);
    if (Error Err = addReplacement(
            Repl,
            insertAt(Ctx, At,
                     "// constant-memory: '" + P.Param->getNameAsString() +
                         "' of " + E.Target +
                         ", copied before each launch.\n"
                         "__constant__ " +
                         P.ElemType + " " + Sym + "[" +
                         std::to_string(P.Count) + "];\n\n"),
            E))
      return std::move(Err);
    for (const Expr *Base : P.Renamed) {
      auto S = looseExprSpan(Ctx, Base);
      if (!S)
        return NotApplicable("a read has no place in the file");
      if (Error Err = addReplacement(Repl, replaceSpan(Ctx, *S, Sym), E))
        return std::move(Err);
    }
    // Each launch: the copy first, in its stream.
    for (const LaunchSite &Site : P.Kernel.Info->Launches) {
      const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, Site);
      if (!Call || Site.InMacro || P.ParamIndex >= Call->getNumArgs())
        return NotApplicable("the launch " + Site.Id +
                             " is written inside a macro or cannot be found");
      DynTypedNodeList Ps = Ctx.AST.getParents(*Call);
      if (Ps.empty() || !Ps[0].get<CompoundStmt>())
        return NotApplicable("the launch " + Site.Id +
                             " is not a statement of its own, so no copy can "
                             "precede it");
      // What the launch's instantiation reads.
      int64_t Count = P.Count;
      if (!P.CountOf.empty()) {
        const FunctionDecl *Callee = Call->getDirectCallee();
        auto It = Callee ? P.CountOf.find(Callee->getCanonicalDecl())
                         : P.CountOf.end();
        if (It == P.CountOf.end())
          return NotApplicable("the launch " + Site.Id +
                               " runs an instantiation that was not checked");
        Count = It->second;
      }
      std::string Bytes =
          std::to_string(Count) + " * sizeof(" + P.ElemType + ")";
      const Expr *Arg = Call->getArg(P.ParamIndex);
      std::string ArgText = looseExprText(Ctx, Arg);
      if (ArgText.empty() || mayHaveSideEffects(Arg, Ctx.AST))
        return NotApplicable("the argument of " + Site.Id + " for '" +
                             P.Param->getName() +
                             "' has side effects or no place in the file; it "
                             "would be evaluated twice");
      std::string Stream = "0";
      const CallExpr *Cfg = Call->getConfig();
      if (Cfg && Cfg->getNumArgs() > 3 &&
          !isa<CXXDefaultArgExpr>(Cfg->getArg(3))) {
        Stream = looseExprText(Ctx, Cfg->getArg(3));
        if (Stream.empty() || mayHaveSideEffects(Cfg->getArg(3), Ctx.AST))
          return NotApplicable("the stream of " + Site.Id +
                               " has side effects or no place in the file");
      }
      auto S = looseExprSpan(Ctx, Call);
      if (!S)
        return NotApplicable("the launch " + Site.Id +
                             " has no place in the file");
      unsigned B = S->Begin.Offset;
      std::string Indent = indentationAt(Code, B);
      size_t LineStart = Code.rfind('\n', B ? B - 1 : 0);
      LineStart = LineStart == StringRef::npos ? 0 : LineStart + 1;
      bool OwnLine = B == LineStart + Indent.size();
      std::string Copy = "cudaMemcpyToSymbolAsync(" + Qualified + ", " +
                         ArgText + ", " + Bytes + ", 0, cudaMemcpyDefault, " +
                         Stream + ");" +
                         (OwnLine ? "\n" + Indent : std::string(" "));
      if (Error Err = addReplacement(Repl, insertAt(Ctx, B, Copy), E))
        return std::move(Err);
    }
    return Repl;
  }
};

} // namespace

std::unique_ptr<Transform> createConstantMemoryTransform() {
  return std::make_unique<ConstantMemoryTransform>();
}

} // namespace optiml
