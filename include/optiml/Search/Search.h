//===- Search.h - Search over edit sequences under verification -*- C++ -*-===//
//
// A node is a program state (source plus the edits that led to it); an
// action is an edit proposed by the policy. Strategies:
//   mcts   PUCT selection with the policy's priors, progressive widening
//          (a node with N visits has at most ceil(C * N^alpha) children),
//          max or mean backups;
//   greedy evaluate every child of the best state, move on while it
//          improves, else continue from the best state not yet exhausted;
//   beam   keep the best K states of each depth;
//   random a random untried action of a random expandable state.
// Shared by all: a transposition table keyed by the normalized program, so
// no program is evaluated twice, and one keyed by the compiled code (where
// the evaluator can tell it), so no two programs that compile alike are;
// every new node evaluated once; guardrails (Reward.h); a journal appended
// as nodes are made (Journal.h) from which a killed run resumes; the best
// candidate re-measured before it is reported.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SEARCH_SEARCH_H
#define OPTIML_SEARCH_SEARCH_H

#include "optiml/Search/CandidateEvaluator.h"
#include "optiml/Search/Policy.h"
#include "optiml/Search/Reward.h"
#include "llvm/Support/Error.h"
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace optiml {

enum class Strategy { MCTS, Greedy, Beam, Random };
enum class BackupMode { Max, Mean };
const char *toString(Strategy S);
std::optional<Strategy> parseStrategy(llvm::StringRef S);

/// The program with comments removed and whitespace reduced to what
/// separates tokens (a newline ends each preprocessor line).
std::string normalizeSource(llvm::StringRef Source);
/// SHA-256 (hex, 16 digits) of the normalized program and its nvcc flags:
/// the transposition key.
std::string sourceKey(llvm::StringRef Source,
                      llvm::ArrayRef<std::string> Flags = {});

/// The host program of \p Source: its normalized text (normalizeSource)
/// with every __global__ function definition, signature and body, taken
/// out; what is left is compiled for the host alone (plus the device code of
/// __device__ functions and variables, which stay). None when that cannot be
/// said safely: a raw string literal (the normalizer does not read them) or
/// unbalanced braces. A definition whose body holds a preprocessing
/// directive stays whole.
std::optional<std::string> hostProgramText(llvm::StringRef Source);
/// A candidate's compiled-code key: SHA-256 (hex, 16 digits) of its
/// device code (normalizeDeviceDump of what nvcc built), its host program
/// (hostProgramText) and its extra nvcc flags. Equal keys: the same
/// machine code of every kernel, launched by the same host program.
std::string compiledCodeKey(llvm::StringRef DeviceCode,
                            llvm::StringRef HostText,
                            llvm::ArrayRef<std::string> Flags);

enum class NodeStatus {
  Original,  ///< the root
  Evaluated, ///< compiled, verified, timed
  Failed,    ///< did not compile, verify, or run
  Rejected,  ///< the edit failed its checks: never evaluated
  /// The program is already in the tree, or (SameCode) compiles to the
  /// same code as an evaluated one: never evaluated.
  Duplicate,
};
const char *toString(NodeStatus S);

struct SearchNode {
  unsigned Id = 0;
  int Parent = -1;
  std::optional<Edit> Step; ///< the edit from the parent
  double Prior = 0;
  std::string Origin, Rationale;
  unsigned Depth = 0;

  NodeStatus Status = NodeStatus::Original;
  std::string Source; ///< empty for rejected nodes
  std::string Key;
  std::vector<std::string> Flags;
  bool ChangesPrecision = false;
  std::string Summary;
  std::string Diff; ///< against the parent
  std::vector<CheckFailure> Checks;
  std::string RejectReason;
  int DuplicateOf = -1;
  /// The compiled-code key (CandidateEvaluator::codeKey); empty when the
  /// evaluator gives none.
  std::string CodeKey;
  /// A duplicate whose source differs from DuplicateOf's but whose compiled
  /// code (CodeKey) is the same.
  bool SameCode = false;

  EvalOutcome Outcome;
  RewardBreakdown Reward;
  /// 1-based index among evaluations; 0 when not evaluated.
  unsigned Evaluation = 0;
  /// A suspicious speedup was re-measured; the times are the re-measured ones.
  bool Remeasured = false;
  double FirstMeasuredMs = 0;

  // Tree statistics.
  unsigned Visits = 0;
  double ValueSum = 0;
  double MaxValue = -1e300;
  std::vector<unsigned> Children;

  // Expansion state (not journaled; rebuilt from the policy).
  bool Proposed = false;
  unsigned ProposalRounds = 0;
  std::vector<Action> Untried;
  bool Exhausted = false;

  bool expandable() const {
    return (Status == NodeStatus::Original ||
            Status == NodeStatus::Evaluated) &&
           Reward.Expandable;
  }
  /// The path of edits from the root (filled by the tree).
  std::vector<Edit> Path;
};

struct SearchProgress {
  unsigned Done = 0, Budget = 0;
  double BestSpeedup = 1;
  std::string Current; ///< summary of the edit being evaluated
  double ElapsedSeconds = 0;
  double EtaSeconds = -1; ///< -1: unknown
  /// Candidates skipped so far as the same compiled code as an evaluated
  /// node (no evaluation spent).
  unsigned SameCodeSkipped = 0;
  /// A phase of its own rather than one evaluation (measuring the
  /// original, re-measuring a suspicious speedup, the final check): a log
  /// shows each, since they can take minutes.
  bool Phase = false;
};

struct SearchOptions {
  std::string FileName; ///< the input, for diffs and the journal
  std::vector<std::string> Kernels;
  Strategy Strat = Strategy::MCTS;
  BackupMode Backup = BackupMode::Max;
  /// Candidate evaluations (the original's baseline and the final
  /// re-measurement are not counted); 0: no limit (needs a time limit).
  unsigned Budget = 30;
  /// Wall-clock limit for the search, seconds; 0: none.
  double TimeLimitSeconds = 0;
  uint64_t Seed = 1;
  double CPuct = 1.0;
  double WideningC = 1.0;
  double WideningAlpha = 0.5;
  unsigned BeamWidth = 3;
  unsigned MaxDepth = 8;
  /// Times to ask an unbounded policy again at one node.
  unsigned MaxProposalRounds = 3;
  RewardOptions Reward;
  /// Candidates handed to CandidateEvaluator::prefetch ahead of time.
  unsigned Prefetch = 2;

  /// Journal and candidate sources go here; empty: no journal. The search
  /// holds an exclusive lock on <RunDir>/lock while it runs: a second search
  /// on the same directory fails at once, naming the first.
  std::string RunDir;
  /// Continue the journal in RunDir; it must exist, and its header must
  /// match this search (input, strategy, policy, kernels).
  bool Resume = false;

  bool Finalize = true;
  RemeasureOptions Final{5, 100, true};

  std::function<void(const SearchProgress &)> OnProgress;
  /// Something the user should know that does not stop the search (a torn
  /// journal line dropped on resume); unset: printed to stderr.
  std::function<void(llvm::StringRef)> OnWarning;
  /// What the search did that the user should hear of (a resumed journal);
  /// unset: printed to stderr.
  std::function<void(llvm::StringRef)> OnNote;
  /// Stops the search early when it returns true (checked between nodes).
  std::function<bool()> ShouldStop;
};

struct SearchResult {
  std::vector<SearchNode> Nodes;
  unsigned Evaluations = 0;
  /// Evaluations made by this process (the rest came from the journal).
  unsigned EvaluationsThisRun = 0;
  /// Evaluations served from the evaluation cache (counted in Evaluations).
  unsigned EvaluationsCached = 0;
  /// Candidates not evaluated because they compile to the same code as an
  /// evaluated node (SearchNode::SameCode), resumed runs' included.
  unsigned SameCodeSkipped = 0;
  /// The evaluation (1-based) that found the reported best; 0: none.
  unsigned BestEvaluation = 0;
  int Best = 0; ///< node id; 0 (the original) when nothing beat it
  double BestSpeedup = 1;
  /// (evaluation index, best counted speedup so far) after each evaluation.
  std::vector<std::pair<unsigned, double>> Curve;
  std::string StopReason;
  double Seconds = 0;

  bool Finalized = false;
  std::optional<Remeasurement> Final;
  double FinalSpeedup = 1;
  /// The best candidate is verified faster than the original beyond noise.
  bool Improved = false;
  /// One line: why nothing is written, or what was found.
  std::string Conclusion;
  std::string FinalDiff;
  std::string FinalSource;
  std::vector<std::string> FinalFlags;

  /// Node ids from the root to the best node.
  std::vector<unsigned> bestPath() const;
};

/// Runs a search from \p Original. Errors: the evaluator cannot run, the
/// original does not pass its own evaluation, the run directory is in use
/// by another search, the journal cannot be written, or (resuming) there
/// is no journal, it is damaged, or it belongs to another input or other
/// settings.
llvm::Expected<SearchResult> runSearch(llvm::StringRef Original,
                                       const SearchOptions &Opts, Policy &P,
                                       EditApplier &Applier,
                                       CandidateEvaluator &Eval);

/// PUCT score of a child: Q + c * P * sqrt(N_parent) / (1 + N_child).
double puctScore(double Q, double Prior, unsigned ParentVisits,
                 unsigned ChildVisits, double CPuct);
/// How many children a node with \p Visits visits may have.
unsigned wideningLimit(unsigned Visits, double C, double Alpha);

} // namespace optiml

#endif
