//===- ReadOnlyCache.cpp - __ldg for read-only global loads ---------------===//
//
// Loads through a pointer parameter the kernel never writes (and never lets
// escape) may go through the read-only data cache: `x[i]` becomes
// `__ldg(&x[i])`. The value loaded is the same, so precision is unchanged.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
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
    if (!ldgSupports(Elem)) {
      P.Skipped.push_back(
          "'" + Name + "': element type '" + Elem.getAsString() +
          "' has no __ldg overload" +
          (Elem->isDependentType() ? " (a template parameter)" : ""));
      continue;
    }
    PointerUses U = analyzePointerParam(Ctx.AST, FD, Param);
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
