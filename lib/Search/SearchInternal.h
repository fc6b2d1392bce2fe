//===- SearchInternal.h - The searcher --------------------------*- C++ -*-===//
//
// Private to lib/Search: one search (runSearch) as a Searcher. Its
// bookkeeping, journal and final choice are in Search.cpp; proposing,
// applying, prefetching and evaluating nodes in SearchExpand.cpp; the
// strategies' loops (MCTS, greedy, beam, random) in SearchStrategies.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_SEARCH_SEARCHINTERNAL_H
#define OPTIML_LIB_SEARCH_SEARCHINTERNAL_H

#include "optiml/Search/Journal.h"
#include "optiml/Search/Search.h"
#include "optiml/Support/FileUtil.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace optiml {
namespace search {

using Clock = std::chrono::steady_clock;

class Searcher {
public:
  Searcher(llvm::StringRef Original, const SearchOptions &O, Policy &P,
           EditApplier &A, CandidateEvaluator &E)
      : OriginalSrc(Original.str()), O(O), P(P), A(A), E(E), Rng(O.Seed) {}

  llvm::Expected<SearchResult> run();

private:
  llvm::Error init();
  llvm::Error lockRunDir();
  llvm::Error checkHeader(const JournalContents &JC);
  llvm::Error resume(JournalContents &JC);
  /// Sources missing from the run directory (JournalContents's
  /// MissingSources), applied again from their parents' and checked
  /// against the journal's keys, then written back.
  llvm::Error rebuildSources(const std::vector<unsigned> &Missing);
  void warn(llvm::StringRef Message);
  void note(llvm::StringRef Message);
  std::string resumeNote(llvm::StringRef Path) const;
  bool haveBudget() {
    if (Stopped)
      return false;
    if (O.Budget && Evals >= O.Budget) {
      StopReason = llvm::formatv("budget of {0} evaluations spent", O.Budget);
      return false;
    }
    if (O.TimeLimitSeconds > 0 && elapsed() >= O.TimeLimitSeconds) {
      StopReason =
          llvm::formatv("time limit of {0} s reached", O.TimeLimitSeconds);
      return false;
    }
    if (O.ShouldStop && O.ShouldStop()) {
      StopReason = "stopped";
      Stopped = true;
      return false;
    }
    return true;
  }
  double elapsed() const {
    return std::chrono::duration<double>(Clock::now() - Start).count();
  }

  llvm::Error ensureProposed(unsigned Id);
  /// Tries untried actions of \p Parent (the one at \p Index first) until
  /// one yields a new program, which is evaluated. Returns its id, or none
  /// when every remaining action was rejected or a duplicate. With \p Only,
  /// tries the one at \p Index alone.
  llvm::Expected<std::optional<unsigned>>
  expand(unsigned Parent, size_t Index = 0, bool Only = false);
  /// MCTS's combination step: the best program's first edit tried after
  /// another first edit that is faster than the original on its own (each
  /// pair once). The tree follows the best branch, so an edit that only
  /// applies before the best one (a block shape before a vectorizing
  /// rewrite that no longer reads it) would otherwise never be tried with
  /// it. Whether an evaluation was spent.
  llvm::Expected<bool> tryCombination();
  llvm::Expected<unsigned> evaluateNode(unsigned Id);
  /// Asks the evaluator for the new node's compiled-code key; when an
  /// evaluated node has it, the node becomes that node's duplicate
  /// (SameCode) and is not evaluated.
  void checkCompiledCode(unsigned Id);
  ApplyOutcome applyCached(unsigned Parent, const Edit &Ed);
  /// Applies (and has built) ahead the edits most likely expanded next.
  void prefetchAfter(unsigned Parent);
  void prefetchRandom(unsigned NewId);
  void startPrefetch(const std::vector<std::pair<unsigned, Edit>> &Next);
  /// The nodes runRandom draws from.
  std::vector<unsigned> randomOpen() const;
  llvm::Error record(unsigned Id);
  void backup(unsigned Id, double R);
  void noteEvaluation(unsigned Id);
  void progress(llvm::StringRef Current, bool Phase = false);
  unsigned evaluatedChildren(const SearchNode &N) const;
  bool selectable(const SearchNode &N) const {
    return N.Status == NodeStatus::Evaluated && N.expandable() && !N.Exhausted;
  }
  double q(const SearchNode &N) const {
    if (!N.Visits)
      return 0;
    return O.Backup == BackupMode::Max ? N.MaxValue : N.ValueSum / N.Visits;
  }
  CandidateSpec spec(const SearchNode &N) const {
    return CandidateSpec{N.Source, N.Flags, N.ChangesPrecision};
  }

  llvm::Error runMcts();
  llvm::Error runGreedy();
  llvm::Error runBeam();
  llvm::Error runRandom();
  llvm::Error finalize(SearchResult &R);

  std::string OriginalSrc;
  const SearchOptions &O;
  Policy &P;
  EditApplier &A;
  CandidateEvaluator &E;
  std::mt19937_64 Rng;
  /// Held while the search runs; declared before the journal and the
  /// background work so that it is released after them.
  std::optional<FileLock> Lock;
  std::vector<SearchNode> Nodes;
  std::map<std::string, unsigned> ByKey;
  /// Compiled-code keys of the original and the evaluated nodes.
  std::map<std::string, unsigned> ByCode;
  unsigned SameCodeSkipped = 0;
  /// Edits applied ahead of their expansion (prefetchAfter), by parent and
  /// edit; with a concurrent applier they may still be running.
  std::map<std::pair<unsigned, std::string>, std::shared_future<ApplyOutcome>>
      Applied;
  /// Background prefetches (apply, then hand to the evaluator to build);
  /// waited for when the search ends.
  std::vector<std::future<void>> Background;
  std::unique_ptr<JournalWriter> J;
  unsigned Evals = 0, EvalsThisRun = 0;
  int Best = 0;
  double BestSpeedup = 1;
  std::vector<std::pair<unsigned, double>> Curve;
  /// Combinations tried: a root child and the edit tried after it.
  std::set<std::pair<unsigned, std::string>> Combined;
  std::string StopReason;
  bool Stopped = false;
  Clock::time_point Start = Clock::now();
};

} // namespace search
} // namespace optiml

#endif // OPTIML_LIB_SEARCH_SEARCHINTERNAL_H
