//===- PlannedTransform.h - Analyze, then rewrite from the plan -*- C++ -*-===//
//
// Private to lib/Edit/Transforms. A restructuring transform first studies
// its target into a plan (what it recognized, what the parameters become,
// or a rejection saying exactly why not), then regenerates text from the
// plan alone. prepare() runs the same analysis on the default edit, so the
// reason `transforms` prints and what apply() does cannot disagree.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_PLANNEDTRANSFORM_H
#define OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_PLANNEDTRANSFORM_H

#include "../../CatalogInternal.h"
#include "optiml/Edit/Transform.h"

namespace optiml {

template <typename PlanT> class PlannedTransform : public Transform {
public:
  llvm::Expected<clang::tooling::Replacements>
  apply(const EditContext &Ctx, const Edit &E) const override {
    auto P = analyze(Ctx, E);
    if (!P)
      return P.takeError();
    return rewrite(Ctx, E, *P);
  }

protected:
  /// The target studied for edit \p E; a rejection names what is missing.
  virtual llvm::Expected<PlanT> analyze(const EditContext &Ctx,
                                        const Edit &E) const = 0;
  /// The replacements that carry out \p P.
  virtual llvm::Expected<clang::tooling::Replacements>
  rewrite(const EditContext &Ctx, const Edit &E, const PlanT &P) const = 0;

  /// prepare()'s first step: \p E becomes the default edit at \p Target and
  /// is analyzed; without a plan, \p A holds the reason.
  std::optional<PlanT> planDefault(const EditContext &Ctx,
                                   llvm::StringRef Target, Applicability &A,
                                   Edit &E) const {
    E = defaultEdit(kind(), Target);
    return planOrReason(A, analyze(Ctx, E));
  }
};

} // namespace optiml

#endif
