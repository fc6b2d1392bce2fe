//===- EvalAdapter.h - The GPU judge behind CandidateEvaluator --*- C++ -*-===//
//
// Adapts the Eval library (build with nvcc, verify launch by launch on the
// GPU against the original, time replays, profile with CUPTI, sanitize) to
// the search's CandidateEvaluator. Candidates are built from memory with
// the original file's path, so quoted includes resolve as they do for it.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SEARCH_EVALADAPTER_H
#define OPTIML_SEARCH_EVALADAPTER_H

#include "optiml/Eval/Builder.h"
#include "optiml/Eval/Evaluator.h"
#include "optiml/Search/CandidateEvaluator.h"
#include <future>
#include <memory>

namespace optiml {

struct GpuEvaluatorOptions {
  /// The input program (absolute path): the original, and where candidates
  /// are built from.
  std::string OriginalPath;
  /// The original's kernel model (targets and element types; the edit
  /// checks keep kernel signatures, so it holds for every candidate).
  const KernelModel *Model = nullptr;
  /// Base options: kernels, replays, runner (probe, sanitizer, program
  /// arguments), devices. Sanitize is only used by the final check.
  EvalOptions Eval;
};

class GpuEvaluator : public CandidateEvaluator {
public:
  GpuEvaluator(Builder &B, GpuEvaluatorOptions Opts)
      : B(B), Opts(std::move(Opts)) {}
  ~GpuEvaluator() override;

  llvm::Expected<EvalOutcome>
  evaluateOriginal(const CandidateSpec &Original) override;
  llvm::Expected<EvalOutcome> evaluate(const CandidateSpec &C) override;
  llvm::Expected<Remeasurement>
  remeasure(const CandidateSpec &C, const RemeasureOptions &RO) override;
  /// Builds in the background (the builder's cache serves them later).
  void prefetch(llvm::ArrayRef<CandidateSpec> Next) override;
  std::string describe() const override;

private:
  llvm::Expected<EvalReport> run(const CandidateSpec &C, bool AgainstOriginal,
                                 EvalOptions EO);
  Builder &B;
  GpuEvaluatorOptions Opts;
  std::vector<std::future<void>> Pending;
};

/// The search's view of one evaluation report: compiled, verified (and
/// sanitizer-clean where it ran), the target kernels' summed median time
/// and noise band, the first kernel's metrics and bottleneck verdict.
EvalOutcome outcomeFromReport(const EvalReport &R, bool SelfCheck);

} // namespace optiml

#endif
