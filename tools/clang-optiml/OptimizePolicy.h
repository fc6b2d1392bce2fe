//===- OptimizePolicy.h - optimize's policy and dry run ---------*- C++ -*-===//
//
// Which policy proposes the edits (the catalog, an LLM, or both), built
// from the options and the project's LLM configuration, and the dry run
// that lists what the policy proposes at the first level.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_TOOLS_OPTIMIZEPOLICY_H
#define OPTIML_TOOLS_OPTIMIZEPOLICY_H

#include "Commands.h"
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
namespace tool {

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

/// What the command line asks of the policy.
struct PolicyChoice {
  /// --policy: catalog, llm, mixed; empty: mixed when an LLM is configured
  /// for the project, else catalog.
  std::string Name;
  unsigned Proposals = 4; ///< --llm-proposals
  bool Rank = false;      ///< --llm-rank
};

/// Picks the policy and builds it (PolicySetup::Name is the one chosen). An
/// LLM policy without a usable configuration is an error.
llvm::Expected<std::unique_ptr<PolicySetup>>
makePolicy(const Analysis &A, const CommandContext &Ctx,
           const std::optional<GpuQuery> &Gpu, const PolicyChoice &Choice);

/// optimize --dry-run: the policy's first-level edits of \p InputFile, each
/// applied and checked, and compiled with the builder \p MakeBuilder makes
/// (unless \p NoCompile). Returns the exit status.
int runDry(
    const Analysis &A, llvm::ArrayRef<std::string> Targets,
    llvm::StringRef InputFile, bool NoCompile, PolicySetup &Setup,
    llvm::function_ref<llvm::Expected<std::unique_ptr<Builder>>()> MakeBuilder);

} // namespace tool
} // namespace optiml

#endif
