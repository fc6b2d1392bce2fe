//===- Optimize.h - The optimize session ------------------------*- C++ -*-===//
//
// One call runs what `clang-optiml optimize` does: the program is analysed,
// the policy (catalog, LLM or both) and the builder are set up, the original
// is measured, edits are searched under verification, and the best verified
// variant is re-checked and only then written. The command line, the editor
// and the build integration all describe a session with an OptimizeRequest
// and follow it through a SessionObserver; none of them repeats its steps.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_DRIVER_OPTIMIZE_H
#define OPTIML_DRIVER_OPTIMIZE_H

#include "optiml/Frontend/Analysis.h"
#include "optiml/Search/Reward.h"
#include "optiml/Search/Search.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace optiml {
namespace llm {
struct LLMSettings;
} // namespace llm

/// What a session is asked: everything `optimize`'s command line says, as
/// data (docs/optimize.md names each option).
struct OptimizeRequest {
  /// The program's main file, as the user named it (messages use this
  /// spelling; files are opened by its absolute path).
  std::string InputFile;
  /// The tool's argv[0]: the probe library and the prompts are found beside
  /// it.
  const char *Argv0 = nullptr;
  AnalyzeOptions Analyze;
  /// --kernel: the kernels to optimize; empty: every launched one.
  std::vector<std::string> Kernels;

  std::string Output;      ///< -o: a file, or a directory
  bool InPlace = false;    ///< -i
  std::string ExportFixes; ///< --export-fixes
  std::string Report;      ///< --report (HTML)
  std::string SummaryJSON; ///< --summary-json

  /// --policy: catalog, llm, mixed; empty: mixed when an LLM is configured
  /// for the project, else catalog.
  std::string Policy;
  unsigned LLMProposals = 4; ///< --llm-proposals
  bool LLMRank = false;      ///< --llm-rank
  /// The --llm-* options (none: nothing given on the command line).
  std::shared_ptr<const llm::LLMSettings> LLM;

  std::string Strategy = "mcts";  ///< --strategy: mcts, greedy, beam, random
  std::string Backup = "max";     ///< --backup: max or mean
  std::optional<unsigned> Budget; ///< --budget; none: 30 (or none with Time)
  double TimeLimitSeconds = 0;    ///< --time; 0: none
  std::string TimeText;           ///< --time as given, for the report
  uint64_t Seed = 1;
  RewardOptions Reward;
  std::string RunDir; ///< --run-dir; empty: .optiml/<stem>-<time>
  bool Resume = false;
  bool DryRun = false, NoCompile = false;

  std::vector<std::string> RunArgs, BuildArgs, Sources;
  /// The link line every build gets (a CMake target's libraries).
  std::vector<std::string> LinkFlags;
  std::string WorkDir;
  double TimeoutSeconds = 300;

  unsigned Replays = 20, VerifyFirst = 3;
  /// --verify-last. Left at its default (not given), an original whose two
  /// runs disagree only at the last launch of its targets is verified on
  /// its first VerifyFirst launches alone, with a note; given, it is
  /// refused as today. A resumed search verifies as its journal says.
  bool VerifyLast = true;
  bool VerifyLastGiven = false;
  std::string EvalCacheDir;
  unsigned RetimeEvery = 8, FinalRounds = 5;
  bool NoSanitize = false;

  std::string DbFile; ///< --db
  bool NoDb = false;

  /// Where -v's notes go (the toolchain, nvcc's flags, the evaluator's
  /// steps); none: quiet.
  llvm::raw_ostream *Log = nullptr;
};

/// A request the session refuses before doing any work (conflicting or out
/// of range options): the command line's exit status 2.
class RequestError : public llvm::ErrorInfo<RequestError> {
public:
  static char ID;
  explicit RequestError(std::string Message) : Message(std::move(Message)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string Message;
};

/// The search is about to start.
struct SessionStart {
  std::string Input; ///< the input as the request names it
  std::string File;  ///< the file the search rewrites (absolute)
  std::vector<std::string> Kernels;
  std::string Strategy, Policy;
  unsigned Budget = 0; ///< 0: no evaluation limit
  double Seconds = 0;  ///< 0: no time limit
  std::string RunDir;  ///< absolute; the journal is RunDir/journal.jsonl
  std::string EvalCacheDir;
};

/// How a session ended (a failure is an llvm::Error instead).
struct SessionOutcome {
  bool Improved = false; ///< a verified faster variant was found
  double Speedup = 1;
  std::string Conclusion; ///< "2.10x faster than the original (verified)..."
  std::string StopReason;
  std::string File; ///< the file rewritten (the input or a file it includes)
  bool Included = false;
  std::string RunDir;
  std::string BestPath; ///< RunDir/best.cu when improved
  std::string Written;  ///< where -o/-i wrote it; empty: not written
  std::string Report;   ///< the HTML report; empty: none
  std::vector<std::string> ExtraFlags; ///< nvcc flags the variant needs
  /// optimizeTarget: the searches that failed (each told to
  /// SessionObserver::searchFailed).
  unsigned FailedSearches = 0;
};

/// Follows a session. The default does nothing with each event.
class SessionObserver {
public:
  virtual ~SessionObserver();
  /// A line about what the session does ("policy catalog (...)"); the
  /// command line prints these on stderr.
  virtual void message(llvm::StringRef Text) {}
  virtual void warning(llvm::StringRef Text) {}
  virtual void note(llvm::StringRef Text) {}
  /// A line of the session's result (the summary, what was written and
  /// recorded, the dry run's listing); the command line prints these on
  /// stdout, in this order. \p Text ends with a newline.
  virtual void result(llvm::StringRef Text) {}
  virtual void started(const SessionStart &S) {}
  /// optimizeTarget: one source's search failed with \p E; the next one
  /// runs all the same.
  virtual void searchFailed(llvm::Error E) { llvm::consumeError(std::move(E)); }
  virtual void progress(const SearchProgress &P) {}
  /// Whether the search should stop at its next step (the editor's
  /// cancel); checked between evaluations.
  virtual bool shouldStop() { return false; }
};

/// Checks \p R's options among themselves (a RequestError when they
/// conflict or are out of range); touches nothing.
llvm::Error checkRequest(const OptimizeRequest &R);

/// Runs the session \p R describes on one program. With R.DryRun the
/// policy's first-level edits are listed (applied, checked and compiled),
/// nothing is run or written. A RequestError for options that conflict
/// with what the analysis found (-o naming a file for an included one).
llvm::Expected<SessionOutcome> optimizeFile(const OptimizeRequest &R,
                                            SessionObserver &Obs);

/// `--target NAME`: every CUDA source of the CMake target in
/// R.Analyze.BuildDir whose kernels are launched, searched in turn as a
/// program of the target's sources and link line (R.InputFile, when set,
/// picks one of them). A kernel defined in a header that several sources
/// include is searched once. Improved: some search found a faster variant;
/// an error: some search failed (the others still ran).
llvm::Expected<SessionOutcome> optimizeTarget(const OptimizeRequest &R,
                                              llvm::StringRef Target,
                                              SessionObserver &Obs);

} // namespace optiml

#endif
