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
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>

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
  /// The original is timed again after this many candidate evaluations
  /// (and whenever a candidate is the fastest yet); 0: only then.
  unsigned RetimeEvery = 8;
  /// When the original's two runs disagree only at the last launch of its
  /// targets (float noise grown over many iterations:
  /// disagreesOnlyAtLastLaunch), its reference is made again with
  /// Eval.VerifyLast off instead of refusing it, and OnDropLast is told.
  /// optimize's default; off for an explicit --verify-last=true and for a
  /// resumed search (its journal says).
  bool DropNoisyLast = false;
  /// What disagreed when the last launch was dropped (set when it is, or by
  /// a resumed search from its journal); empty: Eval.VerifyLast as asked.
  std::string LastDropped;
  /// Told once, with a note for the user, when the last launch is dropped.
  std::function<void(llvm::StringRef Note)> OnDropLast;
};

/// The original is evaluated once per search: evaluateOriginal() (or the
/// first evaluation of a resumed search) prepares its reference run,
/// self-check and calibrated tolerance, and every candidate is judged
/// against them (Evaluator.h). Its time, the baseline, is measured then and
/// again every RetimeEvery candidates and whenever a candidate is the
/// fastest yet, so a new leader is compared with a fresh baseline; each
/// outcome carries the baseline it is compared with.
class GpuEvaluator : public CandidateEvaluator {
public:
  GpuEvaluator(Builder &B, GpuEvaluatorOptions Opts)
      : B(B), Opts(std::move(Opts)) {}
  ~GpuEvaluator() override;

  llvm::Expected<EvalOutcome>
  evaluateOriginal(const CandidateSpec &Original) override;
  llvm::Expected<EvalOutcome> evaluate(const CandidateSpec &C) override;
  llvm::Expected<Remeasurement> remeasure(const CandidateSpec &C,
                                          const RemeasureOptions &RO) override;
  /// Builds in the background (the builder's cache serves them later).
  void prefetch(llvm::ArrayRef<CandidateSpec> Next) override;
  /// Builds the candidate as evaluate() does (waiting for its prefetch, if
  /// one is under way; the builder's cache then serves evaluate()), and
  /// keys its device code (`cuobjdump -elf`, normalizeDeviceDump) with its
  /// host program (hostProgramText) and extra flags. None when the
  /// candidate does not build, cuobjdump is not beside nvcc or in PATH, or
  /// the builder keeps no cache (evaluate() would build it again).
  std::optional<std::string> codeKey(const CandidateSpec &C) override;
  std::string describe() const override;
  VerificationScope verification() const override {
    return {Opts.Eval.VerifyLast, Opts.LastDropped};
  }

  /// Everything besides the candidate that a verdict depends on: the
  /// original's text, kernels, program arguments, verification and timing
  /// settings, nvcc and its flags, the GPU. The evaluation cache's context.
  std::string cacheContext() const;
  /// Timing runs of the original (the first, re-timings, and the rounds of
  /// re-measurements).
  unsigned originalTimings() const { return Timings; }
  /// Reference runs made (one per search unless the original changes).
  unsigned referenceRuns() const { return References; }

private:
  llvm::Expected<EvalReport> run(const CandidateSpec &C, bool AgainstOriginal,
                                 EvalOptions EO);
  llvm::Error ensureReference();
  llvm::Error dropNoisyLast(const EvalInput &In, EvalOptions &EO);
  llvm::Error retime(unsigned Replays);
  /// How evaluate() asks the builder for \p C.
  BuildRequest request(const CandidateSpec &C) const;
  Builder &B;
  GpuEvaluatorOptions Opts;
  std::mutex PendingMutex; ///< prefetch() may come from several threads
  std::vector<std::shared_future<void>> Pending;
  /// Prefetches under way, by the builder's key of each of their builds.
  std::map<std::string, std::shared_future<void>> Building;
  /// cuobjdump's path once looked for (empty: there is none).
  std::optional<std::string> Cuobjdump;
  std::optional<OriginalReference> Ref;
  /// The reference's run directory, removed with the evaluator.
  bool OwnRefDir = false;
  Timing Baseline;
  double FastestMs = 0;
  unsigned SinceRetime = 0, Timings = 0, References = 0;
};

/// The original's kernels' summed median time from an evaluation report
/// (the candidate's side, or with \p Original the original's times).
Timing timingFromReport(const EvalReport &R, bool Original = false);

/// The search's view of one evaluation report: compiled, verified (and
/// sanitizer-clean where it ran), the target kernels' summed median time
/// and noise band, the first kernel's metrics and bottleneck verdict.
EvalOutcome outcomeFromReport(const EvalReport &R, bool SelfCheck);

} // namespace optiml

#endif
