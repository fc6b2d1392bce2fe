//===- SessionPolicy.h - The session's policy and dry run -------*- C++ -*-===//
//
// Which policy proposes the edits (the catalog, an LLM, or both), built
// from the request and the project's LLM configuration, and the dry run
// that lists what the policy proposes at the first level.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_LIB_DRIVER_SESSIONPOLICY_H
#define OPTIML_LIB_DRIVER_SESSIONPOLICY_H

#include "optiml/Driver/Optimize.h"
#include "optiml/Eval/Builder.h"
#include "optiml/Eval/Runner.h"
#include "optiml/Search/CatalogPolicy.h"
#include "optiml/Search/Policy.h"
#ifdef OPTIML_WITH_LLM
#include "optiml/LLM/ChatClient.h"
#include "optiml/Search/LLMPolicy.h"
#endif
#include "llvm/ADT/STLFunctionalExtras.h"
#include <memory>
#include <optional>
#include <string>

namespace optiml {

/// The policy the search uses, and everything it needs kept alive.
struct PolicySetup {
  std::string Name = "catalog";
  std::unique_ptr<CatalogPolicy> Catalog;
  std::unique_ptr<RewriterApplier> Rewriter;
  std::unique_ptr<MixedPolicy> Mixed;
#ifdef OPTIML_WITH_LLM
  std::unique_ptr<llm::ChatClient> Client;
  std::unique_ptr<LLMPolicy> LLM;
  std::unique_ptr<LLMCheckedApplier> Checked;
#endif

  Policy &policy() {
    if (Mixed)
      return *Mixed;
#ifdef OPTIML_WITH_LLM
    if (LLM)
      return *LLM;
#endif
    return *Catalog;
  }
  EditApplier &applier() {
#ifdef OPTIML_WITH_LLM
    if (Checked)
      return *Checked;
#endif
    return *Rewriter;
  }
  /// Why the search must stop for the policy's sake ("" when it need not).
  std::string stopReason() const {
#ifdef OPTIML_WITH_LLM
    if (LLM && LLM->budgetStopped())
      return LLM->budgetReason();
#endif
    return "";
  }
};

/// Whether \p Policy ("", catalog, llm, mixed) can be built here: the LLM
/// policies need a build with LLM support.
bool policyAvailable(llvm::StringRef Policy);

/// Picks the policy (R.Policy, else mixed when an LLM is configured for the
/// project) and builds it (PolicySetup::Name is the one chosen), saying
/// which on \p Obs. An LLM policy without a usable configuration is an
/// error.
llvm::Expected<std::unique_ptr<PolicySetup>>
makePolicy(const Analysis &A, const OptimizeRequest &R,
           const std::optional<GpuQuery> &Gpu, SessionObserver &Obs);

/// The dry run: the policy's first-level edits of \p InputFile, each
/// applied and checked, and compiled with the builder \p MakeBuilder makes
/// (unless \p NoCompile), listed on \p Obs as they are done. An error when
/// the policy fails or the original does not compile (after the listing).
llvm::Error dryRun(
    const Analysis &A, llvm::ArrayRef<std::string> Targets,
    llvm::StringRef InputFile, bool NoCompile, PolicySetup &Setup,
    SessionObserver &Obs,
    llvm::function_ref<llvm::Expected<std::unique_ptr<Builder>>()> MakeBuilder);

} // namespace optiml

#endif
