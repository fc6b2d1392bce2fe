//===- CatalogPolicy.h - The built-in policy, and the real applier -*- C++
//-*-===//
//
// CatalogPolicy proposes every applicable catalog edit (the suggestions of
// each transform's prepare() over the program's kernel model) with a prior
// from the kernel model and the last profile: uncoalesced accesses favour
// tiling, low occupancy favours launch changes, a memory-bound map favours
// vectorization and grid-stride loops, and so on (docs/optimize.md lists the
// table). RewriterApplier applies edits with the Edit library's checked
// rewriter.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SEARCH_CATALOGPOLICY_H
#define OPTIML_SEARCH_CATALOGPOLICY_H

#include "optiml/Edit/Checks.h"
#include "optiml/Frontend/KernelModel.h"
#include "optiml/Frontend/Parse.h"
#include "optiml/Search/Policy.h"

namespace optiml {

/// The prior of an edit kind for a kernel, given its bottleneck ("" when
/// unknown) and achieved occupancy in percent (negative when unknown). In
/// (0, 1]; the search normalizes.
double catalogPrior(llvm::StringRef Kind, const KernelInfo &K,
                    llvm::StringRef Bound, double OccupancyPct,
                    std::string *Why = nullptr);

class CatalogPolicy : public Policy {
public:
  CatalogPolicy(std::string FileName, ParseConfig Config)
      : FileName(std::move(FileName)), Config(std::move(Config)) {}
  llvm::StringRef name() const override { return "catalog"; }
  llvm::Expected<std::vector<Action>>
  propose(const PolicyContext &Ctx) override;

private:
  std::string FileName;
  ParseConfig Config;
};

class RewriterApplier : public EditApplier {
public:
  RewriterApplier(std::string FileName, ParseConfig Config,
                  CheckOptions Checks = {})
      : FileName(std::move(FileName)), Config(std::move(Config)),
        Checks(Checks) {}
  ApplyOutcome apply(llvm::StringRef Code, const Edit &E) override;
  std::string diff(llvm::StringRef Old, llvm::StringRef New) override;
  /// Each apply parses its own translation units.
  bool concurrent() const override { return true; }

private:
  std::string FileName;
  ParseConfig Config;
  CheckOptions Checks;
};

} // namespace optiml

#endif
