//===- EvalCache.h - Evaluations shared between search runs -----*- C++ -*-===//
//
// optimize --eval-cache DIR: a candidate's outcome (and a final check) is
// stored under a key made of the normalized candidate program, its extra
// nvcc flags, whether it may change precision, and a context naming
// everything else the verdict depends on (the original's content hash, the
// kernels, the program's arguments, the evaluation settings, nvcc and its
// flags, the GPU: GpuEvaluator::cacheContext()). Runs of other strategies
// and seeds on the same program then reuse each other's measurements. A
// cached evaluation still counts against the budget, and is marked in the
// journal ("cached": true). The original's own evaluation is never cached:
// each run measures its baseline afresh.
//
// One JSON file per entry, <DIR>/<key>.json, written atomically; entries
// that do not parse or whose context differs are ignored (and replaced).
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SEARCH_EVALCACHE_H
#define OPTIML_SEARCH_EVALCACHE_H

#include "optiml/Search/CandidateEvaluator.h"
#include "llvm/Support/Error.h"
#include <mutex>
#include <string>

namespace optiml {

class EvalCache {
public:
  /// Creates \p Dir when missing; an error when it cannot be.
  static llvm::Expected<EvalCache> open(llvm::StringRef Dir,
                                        std::string Context);

  /// The key of a candidate's evaluation (hex).
  std::string key(const CandidateSpec &C) const;
  /// The key of a re-measurement of a candidate with these options.
  std::string key(const CandidateSpec &C, const RemeasureOptions &O) const;

  std::optional<EvalOutcome> lookup(const CandidateSpec &C) const;
  std::optional<Remeasurement> lookup(const CandidateSpec &C,
                                      const RemeasureOptions &O) const;
  llvm::Error store(const CandidateSpec &C, const EvalOutcome &O) const;
  llvm::Error store(const CandidateSpec &C, const RemeasureOptions &RO,
                    const Remeasurement &R) const;

  const std::string &dir() const { return Dir; }
  /// The evaluator's settings changed (the original's last launch dropped
  /// from verification): later entries are keyed and checked under these.
  void setContext(std::string C) { Context = std::move(C); }

private:
  EvalCache(std::string Dir, std::string Context)
      : Dir(std::move(Dir)), Context(std::move(Context)) {}
  std::string path(llvm::StringRef Key) const;
  std::string Dir, Context;
};

/// A CandidateEvaluator that answers from an EvalCache when it can and
/// asks \p Inner (storing the answer) when it cannot.
class CachingEvaluator : public CandidateEvaluator {
public:
  CachingEvaluator(CandidateEvaluator &Inner, EvalCache Cache)
      : Inner(Inner), Cache(std::move(Cache)) {}

  llvm::Expected<EvalOutcome>
  evaluateOriginal(const CandidateSpec &Original) override;
  llvm::Expected<EvalOutcome> evaluate(const CandidateSpec &C) override;
  llvm::Expected<Remeasurement>
  remeasure(const CandidateSpec &C, const RemeasureOptions &Opts) override;
  void prefetch(llvm::ArrayRef<CandidateSpec> Next) override;
  /// The inner evaluator's, for every candidate, cached or not: which
  /// candidates are evaluated does not depend on what the cache holds.
  std::optional<std::string> codeKey(const CandidateSpec &C) override {
    return Inner.codeKey(C);
  }
  std::string describe() const override;
  VerificationScope verification() const override {
    return Inner.verification();
  }
  /// See EvalCache::setContext.
  void setContext(std::string C) { Cache.setContext(std::move(C)); }

  unsigned hits() const { return Hits; }
  unsigned misses() const { return Misses; }
  /// Entries that could not be written (the search goes on without them).
  const std::vector<std::string> &storeErrors() const { return StoreErrors; }

private:
  CandidateEvaluator &Inner;
  EvalCache Cache;
  unsigned Hits = 0, Misses = 0;
  std::vector<std::string> StoreErrors;
};

} // namespace optiml

#endif
