//===- CompileFlags.cpp - Per-candidate nvcc flags ------------------------===//
//
// Changes no source text: the edit carries nvcc flags for the candidate's
// build. -use_fast_math changes floating-point results.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace optiml {
namespace {

class CompileFlags : public Transform {
public:
  /// Launch-independent: it neither reads nor rewrites the launches.
  bool readsLaunches() const override { return false; }
  bool readsBody() const override { return false; }
  StringRef kind() const override { return "compile-flags"; }
  StringRef description() const override {
    return "nvcc flags for this candidate: -use_fast_math, -Xptxas -O3, "
           "--maxrregcount=N, -Xptxas -dlcm=ca";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec::boolean("use_fast_math",
                           "-use_fast_math (changes floating-point results)"),
        ParamSpec::boolean("ptxas_o3", "-Xptxas -O3"),
        ParamSpec::integer("maxrregcount",
                           "--maxrregcount=N: registers per thread", 16, 255),
        ParamSpec::boolean("dlcm_ca",
                           "-Xptxas -dlcm=ca: cache global loads in L1")};
  }
  bool changesPrecision(const Edit &E) const override {
    return E.getBool("use_fast_math").value_or(false);
  }

  std::vector<std::string> nvccFlags(const Edit &E) const override {
    std::vector<std::string> F;
    if (E.getBool("use_fast_math").value_or(false))
      F.push_back("-use_fast_math");
    if (E.getBool("ptxas_o3").value_or(false)) {
      F.push_back("-Xptxas");
      F.push_back("-O3");
    }
    if (auto R = E.getInt("maxrregcount"))
      F.push_back("--maxrregcount=" + std::to_string(*R));
    if (E.getBool("dlcm_ca").value_or(false)) {
      F.push_back("-Xptxas");
      F.push_back("-dlcm=ca");
    }
    return F;
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    const KernelInfo *K = Ctx.Model.findKernel(Target.str());
    if (!K) {
      A.Reason = "no such kernel";
      return A;
    }
    A.Applies = true;
    A.Reason = "nvcc flags apply to every kernel (the whole file is rebuilt)";
    if (!K->MathCalls.empty())
      A.Suggestions.push_back(
          Edit{"compile-flags", Target.str(), {{"use_fast_math", true}}});
    A.Suggestions.push_back(
        Edit{"compile-flags", Target.str(), {{"ptxas_o3", true}}});
    A.Suggestions.push_back(
        Edit{"compile-flags", Target.str(), {{"maxrregcount", int64_t(64)}}});
    A.Suggestions.push_back(
        Edit{"compile-flags", Target.str(), {{"dlcm_ca", true}}});
    return A;
  }

  Expected<clang::tooling::Replacements> apply(const EditContext &Ctx,
                                               const Edit &E) const override {
    auto K = resolveKernel(Ctx, E, E.Target);
    if (!K)
      return K.takeError();
    if (nvccFlags(E).empty())
      return reject(E, "params",
                    "no flag chosen: set use_fast_math, ptxas_o3, "
                    "maxrregcount or dlcm_ca");
    return clang::tooling::Replacements();
  }

  std::string summary(const Edit &E) const override {
    return "compile " + E.Target + " with " + join(nvccFlags(E), " ");
  }
};

} // namespace

std::unique_ptr<Transform> createCompileFlagsTransform() {
  return std::make_unique<CompileFlags>();
}

} // namespace optiml
