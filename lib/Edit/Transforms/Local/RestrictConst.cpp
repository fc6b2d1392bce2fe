//===- RestrictConst.cpp - const and __restrict__ on pointer parameters ---===//
//
// `const` goes on pointer parameters the kernel only reads (and never lets
// escape). `__restrict__` promises the compiler that no two pointers alias;
// it goes on only when every launch site in the file passes distinct
// allocations: different local variables, each filled by cudaMalloc in the
// function that launches.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace clang;

namespace optiml {
namespace {

const CUDAKernelCallExpr *findLaunch(ASTContext &Ctx, FileID In,
                                     unsigned Offset) {
  struct Finder : RecursiveASTVisitor<Finder> {
    const SourceManager &SM;
    FileID In;
    unsigned Offset;
    const CUDAKernelCallExpr *Found = nullptr;
    bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *C) {
      SourceLocation B = SM.getExpansionLoc(C->getBeginLoc());
      if (!Found && SM.getFileID(B) == In && SM.getFileOffset(B) == Offset)
        Found = C;
      return true;
    }
  } F{{}, Ctx.getSourceManager(), In, Offset};
  traverseUserCode(F, Ctx);
  return F.Found;
}

/// The variable `&V` names as a call's argument (through casts), or null.
const VarDecl *addressOfVar(const Expr *A) {
  const auto *U = dyn_cast<UnaryOperator>(A->IgnoreParenCasts());
  if (!U || U->getOpcode() != UO_AddrOf)
    return nullptr;
  const auto *D = dyn_cast<DeclRefExpr>(U->getSubExpr()->IgnoreParenImpCasts());
  return D ? dyn_cast<VarDecl>(D->getDecl()) : nullptr;
}

/// The local pointers of \p Body that hold their own cudaMalloc
/// allocation wherever they are read: each is filled by `cudaMalloc(&V,
/// ...)` and changed only by another such call or by `swap(V, W)` with W
/// one of them too (a ping-pong pair stays two allocations). Any other
/// write (`V = W`, `V += 32`, `&V` handed elsewhere, a non-const reference)
/// could make two of them alias. Lambdas in \p Body are looked into.
DenseSet<const VarDecl *> ownAllocations(const Stmt *Body) {
  struct Sites : RecursiveASTVisitor<Sites> {
    DenseSet<const VarDecl *> Filled, Bad;
    std::vector<std::pair<const VarDecl *, const VarDecl *>> Swaps;
    // The expressions a cudaMalloc or swap call accounts for.
    DenseSet<const Expr *> Allowed;
    static const VarDecl *local(const Expr *E) {
      const auto *D = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
      const auto *V = D ? dyn_cast<VarDecl>(D->getDecl()) : nullptr;
      return V && V->isLocalVarDecl() ? V : nullptr;
    }
    static const VarDecl *rootVar(const Expr *E) {
      return dyn_cast_or_null<VarDecl>(
          referencedDecl(E->IgnoreParenImpCasts()));
    }
    bool VisitCallExpr(CallExpr *C) {
      const FunctionDecl *F = C->getDirectCallee();
      if (F && F->getName() == "cudaMalloc" && C->getNumArgs() >= 1)
        if (const VarDecl *V = addressOfVar(C->getArg(0))) {
          Filled.insert(V);
          Allowed.insert(C->getArg(0)->IgnoreParenCasts());
          return true;
        }
      if (F && F->getName() == "swap" && C->getNumArgs() == 2)
        if (const VarDecl *A = local(C->getArg(0)))
          if (const VarDecl *B = local(C->getArg(1))) {
            Swaps.push_back({A, B});
            Allowed.insert(C->getArg(0));
            Allowed.insert(C->getArg(1));
            return true;
          }
      if (!F)
        return true;
      for (unsigned I = 0; I < C->getNumArgs() && I < F->getNumParams(); ++I) {
        QualType T = F->getParamDecl(I)->getType();
        if (T->isReferenceType() && !T.getNonReferenceType().isConstQualified())
          if (const VarDecl *V = rootVar(C->getArg(I)))
            Bad.insert(V);
      }
      return true;
    }
    bool VisitBinaryOperator(BinaryOperator *B) {
      if (B->isAssignmentOp())
        if (const VarDecl *V = rootVar(B->getLHS()))
          Bad.insert(V);
      return true;
    }
    bool VisitUnaryOperator(UnaryOperator *U) {
      if ((U->isIncrementDecrementOp() || U->getOpcode() == UO_AddrOf) &&
          !Allowed.contains(U))
        if (const VarDecl *V = rootVar(U->getSubExpr()))
          Bad.insert(V);
      return true;
    }
  } S;
  // Calls are visited before their arguments (pre-order), so the `&V` a
  // cudaMalloc takes is known to be allowed when it is reached.
  S.TraverseStmt(const_cast<Stmt *>(Body));
  DenseSet<const VarDecl *> Own;
  for (const VarDecl *V : S.Filled)
    if (!S.Bad.contains(V) && V->getType()->isPointerType())
      Own.insert(V);
  // A swap with anything else lets an alias in: drop both, until stable.
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (auto [A, B] : S.Swaps)
      if (Own.contains(A) != Own.contains(B)) {
        Own.erase(A);
        Own.erase(B);
        Changed = true;
      }
  }
  return Own;
}

struct Plan {
  std::vector<const ParmVarDecl *> Const;    ///< gain const
  std::vector<const ParmVarDecl *> Restrict; ///< gain __restrict__
  std::vector<std::string> ConstWhyNot;
  std::string RestrictWhyNot;
};

/// Why __restrict__ cannot be shown safe, or empty.
std::string restrictBlocker(const EditContext &Ctx, const KernelInfo &K,
                            const FunctionDecl *FD) {
  std::vector<unsigned> Ptrs;
  for (unsigned I = 0; I < FD->getNumParams(); ++I)
    if (FD->getParamDecl(I)->getType()->isPointerType())
      Ptrs.push_back(I);
  if (Ptrs.size() < 2)
    return "the kernel has fewer than two pointer parameters";
  if (K.Launches.empty())
    return "the kernel is never launched in this file, so aliasing between "
           "its pointers cannot be ruled out";
  for (const LaunchSite &L : K.Launches) {
    const CUDAKernelCallExpr *C =
        findLaunch(Ctx.AST, Ctx.file(), L.Range.Begin.Offset);
    if (!C)
      return "launch site " + L.Id + " was not found in the AST";
    const FunctionDecl *Caller = nullptr;
    {
      auto Ps = Ctx.AST.getParents(*C);
      while (!Ps.empty()) {
        if ((Caller = Ps[0].get<FunctionDecl>()))
          break;
        if (const auto *S = Ps[0].get<Stmt>())
          Ps = Ctx.AST.getParents(*S);
        else if (const auto *D = Ps[0].get<Decl>())
          Ps = Ctx.AST.getParents(*D);
        else
          break;
      }
    }
    if (!Caller || !Caller->getBody())
      return "the function around " + L.Id + " was not found";
    std::vector<const VarDecl *> Seen;
    for (unsigned I : Ptrs) {
      if (I >= C->getNumArgs())
        return L.Id + " passes fewer arguments than the kernel has";
      const Expr *A = C->getArg(I)->IgnoreParenImpCasts();
      const auto *D = dyn_cast<DeclRefExpr>(A);
      const auto *V = D ? dyn_cast<VarDecl>(D->getDecl()) : nullptr;
      std::string Param = FD->getParamDecl(I)->getName().str();
      if (!V || !V->isLocalVarDecl())
        return L.Id + " passes '" + L.Args[I] + "' for '" + Param +
               "', not a local variable holding its own allocation";
      if (is_contained(Seen, V))
        return L.Id + " passes '" + V->getName().str() +
               "' for two pointer parameters (they alias)";
      // In a lambda (a timing harness), the function around it allocates.
      const FunctionDecl *Owner = Caller;
      if (V->getDeclContext() != Caller)
        if (const FunctionDecl *Around = lambdaOwner(Caller, V))
          Owner = Around;
      if (!Owner->getBody() || !ownAllocations(Owner->getBody()).contains(V))
        return L.Id + " passes '" + V->getName().str() + "' for '" + Param +
               "', which is not its own cudaMalloc allocation in '" +
               Owner->getNameAsString() +
               "' (allocated there and changed only by cudaMalloc or a swap "
               "with another)";
      Seen.push_back(V);
    }
  }
  return "";
}

Plan plan(const EditContext &Ctx, const KernelInfo &K, const FunctionDecl *FD,
          bool WantConst, bool WantRestrict) {
  Plan P;
  for (const ParmVarDecl *Param : FD->parameters()) {
    QualType T = Param->getType();
    if (!T->isPointerType())
      continue;
    std::string Name = Param->getName().str();
    auto PTL = Param->getTypeSourceInfo()->getTypeLoc().getAs<PointerTypeLoc>();
    if (PTL.isNull() || Param->getBeginLoc().isMacroID()) {
      P.ConstWhyNot.push_back("'" + Name +
                              "' is not written as a plain pointer type");
      continue;
    }
    if (WantConst) {
      if (T->getPointeeType().isConstQualified()) {
        // already const
      } else if (T->getPointeeType()->isAnyPointerType() ||
                 T->getPointeeType()->isMemberPointerType()) {
        // `const float **` does not accept the caller's `float **` (C++
        // allows adding const below the top level only when every level
        // above it is const too), so the launch would stop compiling.
        P.ConstWhyNot.push_back("'" + Name +
                                "' points to a pointer: a 'const' there "
                                "would not accept the caller's argument");
      } else {
        PointerUses U = analyzePointerParam(Ctx.AST, FD, Param);
        if (U.Blocker.empty())
          P.Const.push_back(Param);
        else
          P.ConstWhyNot.push_back(U.Blocker);
      }
    }
    if (WantRestrict && !T.isRestrictQualified())
      P.Restrict.push_back(Param);
  }
  if (WantRestrict && !P.Restrict.empty()) {
    P.RestrictWhyNot = restrictBlocker(Ctx, K, FD);
    if (!P.RestrictWhyNot.empty())
      P.Restrict.clear();
  }
  return P;
}

std::vector<std::string> names(ArrayRef<const ParmVarDecl *> Ps) {
  std::vector<std::string> N;
  for (const ParmVarDecl *P : Ps)
    N.push_back("'" + P->getName().str() + "'");
  return N;
}

class RestrictConst : public Transform {
public:
  StringRef kind() const override { return "restrict-const"; }
  StringRef description() const override {
    return "add const to pointer parameters the kernel only reads, and "
           "__restrict__ when every launch passes distinct allocations";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec::boolean("const", "add const to read-only pointer parameters",
                           true),
        ParamSpec::boolean(
            "restrict", "add __restrict__ to every pointer parameter; when "
                        "omitted, added only if the launches provably pass "
                        "distinct allocations; when true, refused otherwise")};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E{"restrict-const", Target.str(), {}};
    auto K = resolveKernel(Ctx, E, Target);
    if (!K) {
      A.Reason = rejectionReason(K.takeError());
      return A;
    }
    Plan P = plan(Ctx, *K->Info, K->Decl, true, true);
    std::vector<std::string> Parts;
    if (!P.Const.empty())
      Parts.push_back("const for " + join(names(P.Const), ", "));
    if (!P.Restrict.empty())
      Parts.push_back("__restrict__ for " + join(names(P.Restrict), ", ") +
                      " (every launch passes distinct cudaMalloc buffers)");
    if (Parts.empty()) {
      std::vector<std::string> Why = P.ConstWhyNot;
      if (!P.RestrictWhyNot.empty())
        Why.push_back("no __restrict__: " + P.RestrictWhyNot);
      A.Reason = Why.empty() ? "pointer parameters are already const and "
                               "__restrict__ (or there are none)"
                             : join(Why, "; ");
      return A;
    }
    A.Applies = true;
    A.Reason = join(Parts, "; ");
    if (!P.RestrictWhyNot.empty())
      A.Reason += "; no __restrict__: " + P.RestrictWhyNot;
    if (!P.Const.empty() && !P.Restrict.empty())
      A.Suggestions.push_back(E);
    if (!P.Const.empty())
      A.Suggestions.push_back(
          Edit{"restrict-const", Target.str(), {{"restrict", false}}});
    if (!P.Restrict.empty())
      A.Suggestions.push_back(
          Edit{"restrict-const", Target.str(), {{"const", false}}});
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    auto K = resolveKernel(Ctx, E, E.Target);
    if (!K)
      return K.takeError();
    bool WantConst = E.getBool("const").value_or(true);
    bool WantRestrict = E.getBool("restrict").value_or(true);
    if (!WantConst && !WantRestrict)
      return reject(E, "params", "both const and restrict are false");
    Plan P = plan(Ctx, *K->Info, K->Decl, WantConst, WantRestrict);
    // An explicit request for __restrict__ that cannot be shown safe is
    // refused outright rather than silently dropped.
    if (WantRestrict && E.Params.count("restrict") && !P.RestrictWhyNot.empty())
      return reject(E, "not-applicable",
                    "__restrict__ refused: " + P.RestrictWhyNot);
    if (P.Const.empty() && P.Restrict.empty()) {
      std::vector<std::string> Why = P.ConstWhyNot;
      if (!P.RestrictWhyNot.empty())
        Why.push_back("__restrict__ refused: " + P.RestrictWhyNot);
      return reject(E, "not-applicable",
                    "nothing to add" +
                        (Why.empty() ? std::string(": pointer parameters are "
                                                   "already const/__restrict__")
                                     : ": " + join(Why, "; ")));
    }
    const SourceManager &SM = Ctx.AST.getSourceManager();
    tooling::Replacements Repls;
    for (const ParmVarDecl *Param : P.Const) {
      unsigned Off =
          SM.getFileOffset(SM.getExpansionLoc(Param->getTypeSpecStartLoc()));
      if (Error Err = addReplacement(Repls, insertAt(Ctx, Off, "const "), E))
        return std::move(Err);
    }
    for (const ParmVarDecl *Param : P.Restrict) {
      auto PTL =
          Param->getTypeSourceInfo()->getTypeLoc().getAs<PointerTypeLoc>();
      unsigned Off = SM.getFileOffset(SM.getExpansionLoc(PTL.getStarLoc())) + 1;
      if (Error Err =
              addReplacement(Repls, insertAt(Ctx, Off, "__restrict__ "), E))
        return std::move(Err);
    }
    return Repls;
  }
};

} // namespace

std::unique_ptr<Transform> createRestrictConstTransform() {
  return std::make_unique<RestrictConst>();
}

} // namespace optiml
