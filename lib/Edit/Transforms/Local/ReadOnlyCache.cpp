//===- ReadOnlyCache.cpp - __ldg for read-only global loads ---------------===//
//
// Loads through a pointer parameter the kernel never writes (and never lets
// escape) may go through the read-only data cache: `x[i]` becomes
// `__ldg(&x[i])`. The value loaded is the same, so precision is unchanged.
// In a kernel template, an element type that depends on the template's
// parameters must have an __ldg overload in every instantiation the file
// makes; the rewritten template then calls __ldg on that type.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace clang;

namespace optiml {
namespace {

/// Whether __ldg has an overload for \p T.
bool ldgSupports(QualType T) {
  T = T.getCanonicalType().getUnqualifiedType();
  if (T->isDependentType())
    return false;
  if (const auto *B = T->getAs<BuiltinType>())
    return (B->isInteger() && !B->isBooleanType()) ||
           B->getKind() == BuiltinType::Float ||
           B->getKind() == BuiltinType::Double;
  if (const auto *R = T->getAsRecordDecl()) {
    static const char *Vectors[] = {"float2", "float4", "int2",    "int4",
                                    "uint2",  "uint4",  "double2", "char2",
                                    "char4",  "short2", "short4",  "longlong2"};
    return is_contained(Vectors, R->getName());
  }
  return false;
}

/// Why \p Param of the template pattern \p FD, whose element type depends
/// on template parameters, cannot be loaded through __ldg in some
/// instantiation (or the template has none); empty if it can in all.
std::string dependentLdgProblem(const FunctionDecl *FD,
                                const ParmVarDecl *Param) {
  std::string Head = "'" + Param->getName().str() + "': element type '" +
                     Param->getType()->getPointeeType().getAsString() + "'";
  std::vector<const FunctionDecl *> Insts = templateInstantiations(FD);
  if (Insts.empty())
    return Head + " depends on a template parameter and the template is "
                  "never instantiated in this file";
  for (const FunctionDecl *Inst : Insts) {
    const ParmVarDecl *P = instantiatedParam(Param, Inst);
    if (!P)
      return Head + ": the template's parameters cannot be matched in " +
             instantiationName(Inst) + " (a parameter pack)";
    QualType T = P->getType()->getPointeeType();
    if (!ldgSupports(T))
      return Head + " is '" +
             T.getAsString(FD->getASTContext().getPrintingPolicy()) + "' in " +
             instantiationName(Inst) + ", which has no __ldg overload";
  }
  return "";
}

/// The uses of \p Param of the template pattern \p FD, found in its
/// instantiations (the pattern's dependent expressions do not say which
/// operand of `p[i]` is the pointer): blocked when any instantiation blocks
/// it, leaves out a use (a discarded `if constexpr` branch) or loads at other
/// places; the loads are the first instantiation's, written where the
/// pattern's are.
PointerUses usesInInstantiations(ASTContext &AST, const FunctionDecl *FD,
                                 const ParmVarDecl *Param) {
  PointerUses Out;
  std::vector<const DeclRefExpr *> Refs;
  collectRefs(FD->getBody(), Param, Refs);
  std::string Name = Param->getName().str();
  std::vector<SourceRange> Where;
  bool First = true;
  for (const FunctionDecl *Inst : templateInstantiations(FD)) {
    const ParmVarDecl *IP = instantiatedParam(Param, Inst);
    std::string In = " in " + instantiationName(Inst);
    PointerUses U = analyzePointerParam(AST, Inst, IP);
    if (!U.Blocker.empty()) {
      Out.Blocker = U.Blocker + In;
      return Out;
    }
    std::vector<const DeclRefExpr *> InstRefs;
    collectRefs(Inst->getBody(), IP, InstRefs);
    if (InstRefs.size() != Refs.size()) {
      Out.Blocker = "'" + Name + "' has uses that are not compiled" + In +
                    " (a discarded 'if constexpr' branch); they cannot be "
                    "followed";
      return Out;
    }
    std::vector<SourceRange> Ranges;
    for (const Expr *L : U.Loads)
      Ranges.push_back(L->getSourceRange());
    if (!First && Ranges != Where) {
      Out.Blocker = "'" + Name + "' is loaded at other places" + In;
      return Out;
    }
    if (First)
      Out.Loads = U.Loads;
    Where = std::move(Ranges);
    First = false;
  }
  return Out;
}

struct Plan {
  std::vector<std::pair<std::string, unsigned>> PerParam; // name, loads
  std::vector<std::string> Skipped;                       // why, per param
  std::vector<const Expr *> Loads;
};

Plan plan(const EditContext &Ctx, const FunctionDecl *FD,
          const std::vector<std::string> &Only) {
  Plan P;
  const SourceManager &SM = Ctx.AST.getSourceManager();
  for (const ParmVarDecl *Param : FD->parameters()) {
    QualType T = Param->getType();
    if (!T->isPointerType())
      continue;
    std::string Name = Param->getName().str();
    if (!Only.empty() && !is_contained(Only, Name))
      continue;
    QualType Elem = T->getPointeeType();
    if (Elem->isDependentType()) {
      if (std::string Problem = dependentLdgProblem(FD, Param);
          !Problem.empty()) {
        P.Skipped.push_back(Problem);
        continue;
      }
    } else if (!ldgSupports(Elem)) {
      P.Skipped.push_back("'" + Name + "': element type '" +
                          Elem.getAsString() + "' has no __ldg overload");
      continue;
    }
    PointerUses U = Elem->isDependentType()
                        ? usesInInstantiations(Ctx.AST, FD, Param)
                        : analyzePointerParam(Ctx.AST, FD, Param);
    if (!U.Blocker.empty()) {
      P.Skipped.push_back(U.Blocker);
      continue;
    }
    unsigned N = 0;
    for (const Expr *L : U.Loads) {
      if (L->getBeginLoc().isMacroID() || L->getEndLoc().isMacroID())
        continue;
      // Already the argument of __ldg(&...).
      (void)SM;
      P.Loads.push_back(L);
      ++N;
    }
    if (N)
      P.PerParam.push_back({Name, N});
    else
      P.Skipped.push_back("'" + Name + "' is never loaded outside macros");
  }
  return P;
}

class ReadOnlyCache : public Transform {
public:
  /// Launch-independent: it neither reads nor rewrites the launches.
  bool readsLaunches() const override { return false; }
  StringRef kind() const override { return "read-only-cache"; }
  StringRef description() const override {
    return "load read-only global data through the read-only cache: "
           "x[i] -> __ldg(&x[i])";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec::stringList(
        "params", "pointer parameters to load through __ldg (default: "
                  "every read-only one)")};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E{"read-only-cache", Target.str(), {}};
    auto K = resolveKernel(Ctx, E, Target);
    if (!K) {
      A.Reason = rejectionReason(K.takeError());
      return A;
    }
    Plan P = plan(Ctx, K->Decl, {});
    if (P.Loads.empty()) {
      A.Reason = P.Skipped.empty()
                     ? "the kernel has no pointer parameters"
                     : "no read-only loads: " + join(P.Skipped, "; ");
      return A;
    }
    std::vector<std::string> Parts;
    for (const auto &[Name, N] : P.PerParam)
      Parts.push_back(std::to_string(N) + " from '" + Name + "'");
    A.Applies = true;
    A.Reason = "read-only loads: " + join(Parts, ", ");
    A.Suggestions.push_back(E);
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    auto K = resolveKernel(Ctx, E, E.Target);
    if (!K)
      return K.takeError();
    std::vector<std::string> Only;
    if (auto L = E.getStrings("params"))
      Only = *L;
    for (const std::string &Name : Only)
      if (none_of(K->Decl->parameters(),
                  [&](const ParmVarDecl *P) { return P->getName() == Name; }))
        return reject(E, "params",
                      "kernel '" + E.Target + "' has no parameter '" + Name +
                          "'");
    Plan P = plan(Ctx, K->Decl, Only);
    if (P.Loads.empty())
      return reject(E, "not-applicable",
                    "no read-only loads to route through __ldg" +
                        (P.Skipped.empty() ? std::string()
                                           : ": " + join(P.Skipped, "; ")));
    const SourceManager &SM = Ctx.AST.getSourceManager();
    const LangOptions &LO = Ctx.AST.getLangOpts();
    tooling::Replacements Repls;
    for (const Expr *L : P.Loads) {
      CharSourceRange R = Lexer::makeFileCharRange(
          CharSourceRange::getTokenRange(L->getSourceRange()), SM, LO);
      if (R.isInvalid())
        continue;
      unsigned B = SM.getFileOffset(R.getBegin());
      unsigned End = SM.getFileOffset(R.getEnd());
      if (Error Err = addReplacement(Repls, insertAt(Ctx, B, "__ldg(&"), E))
        return std::move(Err);
      if (Error Err = addReplacement(Repls, insertAt(Ctx, End, ")"), E))
        return std::move(Err);
    }
    return Repls;
  }
};

} // namespace

std::unique_ptr<Transform> createReadOnlyCacheTransform() {
  return std::make_unique<ReadOnlyCache>();
}

} // namespace optiml
