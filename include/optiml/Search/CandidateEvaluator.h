//===- CandidateEvaluator.h - What the search asks of an evaluator -*- C++
//-*-===//
//
// The search sees evaluation through this small interface: one candidate
// program in, one outcome out (compiled? verified? how fast, how noisy, which
// bottleneck). Two implementations: an adapter onto the Eval library (the
// GPU judge, EvalAdapter.h) and a scripted stand-in for tests and CPU-only
// machines (StandInEvaluator below), deterministic for a given seed.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SEARCH_CANDIDATEEVALUATOR_H
#define OPTIML_SEARCH_CANDIDATEEVALUATOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace optiml {

/// One program to evaluate.
struct CandidateSpec {
  std::string Source;
  /// Per-candidate nvcc flags (compile-flags edits), after the common ones.
  std::vector<std::string> ExtraNvccFlags;
  /// Some edit on its path may change floating-point results: the verifier
  /// widens its tolerances.
  bool ChangesPrecision = false;
};

/// A kernel time: the median of the replays and its noise band.
struct Timing {
  bool Available = false;
  double MedianMs = 0;
  /// Half-width of the noise band, in percent of the median (measured: half
  /// the interquartile range of the replays).
  double NoisePct = 0;
  unsigned Replays = 0;
};

struct EvalOutcome {
  bool Compiled = false;
  /// Outputs (and exit status, stdout) agree with the original's.
  bool Verified = false;
  /// Why not compiled / verified: the compiler's first errors, the first
  /// difference, the crash.
  std::string Failure;
  /// The compiler's output (kept short).
  std::string CompileLog;
  Timing Time;
  /// Hardware metrics by CUPTI name (gpu__time_duration.sum,
  /// dram__bytes_read.sum, sm__throughput.avg.pct_of_peak_sustained_elapsed,
  /// sm__warps_active.avg.pct_of_peak_sustained_active, ...).
  std::map<std::string, double> Metrics;
  /// "memory-bound", "compute-bound", "latency-bound", or empty (unknown).
  std::string Bound;
  /// One line: "memory-bound: 3.1 TB/s (72% of peak DRAM bandwidth)".
  std::string Verdict;
  std::vector<std::string> Notes;
  double Seconds = 0; ///< wall time of the evaluation
  /// Wall time of each stage of the evaluation ("build", "candidate",
  /// "time", "metrics", ...), seconds; empty for a stand-in evaluator.
  std::vector<std::pair<std::string, double>> Stages;
  /// The original's time this candidate is compared with: the evaluator's
  /// baseline when the candidate was measured (re-timed now and then in the
  /// same session). Unset: the original's own outcome is the baseline.
  std::optional<Timing> Baseline;
  /// Served from the evaluation cache: measured by an earlier run.
  bool Cached = false;

  /// A usable measurement of a correct program.
  bool passed() const { return Compiled && Verified && Time.Available; }
};

/// The final check: the candidate re-measured against the original,
/// interleaved (O C O C ...), with more replays, and sanitized.
struct Remeasurement {
  Timing Original, Candidate;
  bool Verified = true;
  std::string Failure;
  bool SanitizerRan = false;
  bool SanitizerClean = true;
  std::string SanitizerDetail; ///< "racecheck: 2 hazards in k", or why not run
  /// Served from the evaluation cache: measured by an earlier run.
  bool Cached = false;
};

/// Which launches candidates are verified on, as the journal and the
/// summary record it (the GPU evaluator's --verify-last).
struct VerificationScope {
  /// The last launch of each target is verified besides the first ones.
  bool LastLaunch = true;
  /// Why the last launch is not verified though it was not turned off: the
  /// original's own two runs disagree there (what disagreed); empty: as
  /// asked.
  std::string Dropped;
};

struct RemeasureOptions {
  /// Alternating original/candidate timing runs.
  unsigned Rounds = 3;
  /// Replays per timing run.
  unsigned Replays = 100;
  /// Run compute-sanitizer memcheck and racecheck on the candidate where
  /// available.
  bool Sanitize = false;
};

class CandidateEvaluator {
public:
  virtual ~CandidateEvaluator();
  /// The original program, measured against itself (determinism) once,
  /// before any candidate: the baseline of every speedup.
  virtual llvm::Expected<EvalOutcome>
  evaluateOriginal(const CandidateSpec &Original) = 0;
  /// A candidate against the original. Errors are for the evaluator's own
  /// failures (no GPU, cannot start nvcc); a candidate that fails to
  /// compile or differs is an outcome.
  virtual llvm::Expected<EvalOutcome> evaluate(const CandidateSpec &C) = 0;
  virtual llvm::Expected<Remeasurement>
  remeasure(const CandidateSpec &C, const RemeasureOptions &Opts) = 0;
  /// These candidates are likely to be evaluated next: build them in the
  /// background (the GPU still runs one candidate at a time). May be called
  /// from a thread other than the one evaluating.
  virtual void prefetch(llvm::ArrayRef<CandidateSpec> Next) {}
  /// The candidate's compiled-code key (compiledCodeKey in Search.h): equal
  /// for two candidates that compile to the same machine code, launched by
  /// the same host program. The search asks before it evaluates a new
  /// program, and does not evaluate one whose key an evaluated node has.
  /// Building the candidate for it must be the build evaluate() then uses.
  /// None when the evaluator cannot tell (the default; the candidate does
  /// not build, no cuobjdump): the candidate is evaluated.
  virtual std::optional<std::string> codeKey(const CandidateSpec &C) {
    return std::nullopt;
  }
  /// "stand-in (scripted)", "GPU 0: NVIDIA H200".
  virtual std::string describe() const = 0;
  /// Which launches are verified; final once evaluateOriginal() returned (it
  /// may drop the last launch, GpuEvaluatorOptions::DropNoisyLast).
  virtual VerificationScope verification() const { return {}; }
};

/// A deterministic evaluator for tests and demos: outcomes come from a
/// table keyed by the candidate's program key (sourceKey()), or from a
/// fallback function; times get seeded multiplicative noise. Every call is
/// recorded (and appended to a log file when set) so tests can prove that
/// nothing is evaluated twice.
class StandInEvaluator : public CandidateEvaluator {
public:
  struct Script {
    EvalOutcome Outcome;
    /// The time a re-measurement finds (default: Outcome.Time.MedianMs):
    /// lets a test script a lucky first measurement.
    std::optional<double> RemeasuredMs;
    bool SanitizerClean = true;
  };

  explicit StandInEvaluator(uint64_t Seed = 0, double NoisePct = 0)
      : Seed(Seed), NoisePct(NoisePct) {}

  /// A correct program running in \p Ms (noise band \p NoisePctBand).
  static EvalOutcome passing(double Ms, double NoisePctBand = 1.0);
  static EvalOutcome compileFailure(llvm::StringRef Why);
  static EvalOutcome verifyFailure(llvm::StringRef FirstDifference);

  void set(llvm::StringRef Source, Script S,
           llvm::ArrayRef<std::string> Flags = {});
  void setOriginal(llvm::StringRef Source, EvalOutcome O) {
    set(Source, Script{std::move(O), std::nullopt, true});
  }
  /// Outcome for sources with no entry (default: a compile failure).
  void setFallback(std::function<Script(llvm::StringRef Source)> F) {
    Fallback = std::move(F);
  }
  /// Append "<key>\n" to \p Path (fsynced) at the start of every evaluation.
  void setCallLog(std::string Path) { CallLog = std::move(Path); }
  /// Sleep this long in every evaluation (to kill a run mid-evaluation).
  void setDelayMs(unsigned Ms) { DelayMs = Ms; }
  /// codeKey() of \p Source with \p Flags (by its program key); programs
  /// with no key scripted have none.
  void setCodeKey(llvm::StringRef Source, llvm::StringRef Key,
                  llvm::ArrayRef<std::string> Flags = {});

  llvm::Expected<EvalOutcome>
  evaluateOriginal(const CandidateSpec &Original) override;
  llvm::Expected<EvalOutcome> evaluate(const CandidateSpec &C) override;
  llvm::Expected<Remeasurement>
  remeasure(const CandidateSpec &C, const RemeasureOptions &Opts) override;
  std::optional<std::string> codeKey(const CandidateSpec &C) override;
  std::string describe() const override { return "stand-in (scripted)"; }

  /// Keys of every evaluate()/evaluateOriginal() call, in order.
  std::vector<std::string> calls() const;
  unsigned remeasureCalls() const { return Remeasures; }
  /// Program keys of every codeKey() call, in order.
  std::vector<std::string> codeKeyCalls() const;

private:
  Script lookup(const CandidateSpec &C);
  double noisy(double Ms, llvm::StringRef Key, unsigned Salt) const;
  void logCall(llvm::StringRef Key);

  uint64_t Seed;
  double NoisePct;
  std::map<std::string, Script> Table;
  std::map<std::string, std::string> CodeKeys;
  std::vector<std::string> CodeKeyCalls;
  std::function<Script(llvm::StringRef)> Fallback;
  Timing OriginalTime;
  std::string CallLog;
  unsigned DelayMs = 0;
  mutable std::mutex Mu;
  std::vector<std::string> Calls;
  unsigned Remeasures = 0;
};

} // namespace optiml

#endif
