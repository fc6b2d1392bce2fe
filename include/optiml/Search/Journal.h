//===- Journal.h - Every node of a search, as JSON lines -------*- C++ -*-===//
//
// <run-dir>/journal.jsonl: a header line, then one line per node as it is
// made (edit, diff, checks, compile log, verdict, times, metrics, reward,
// parent), then a line for the final check. Each line is written with one
// write() and fsynced; each candidate's full source goes to
// <run-dir>/sources/node-<id>.cu first. A run killed mid-line leaves a
// partial last line, which readJournal drops (and says so).
//
// One process writes a run directory at a time: runSearch holds an
// exclusive lock on <run-dir>/lock (see FileLock) for the whole search.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SEARCH_JOURNAL_H
#define OPTIML_SEARCH_JOURNAL_H

#include "optiml/Search/Search.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace optiml {

/// The journal format this build writes and reads.
constexpr unsigned JournalVersion = 1;

struct JournalHeader {
  unsigned Version = JournalVersion;
  std::string File;
  std::string OriginalKey;
  std::string Strategy;
  std::string Policy;
  uint64_t Seed = 0;
  unsigned Budget = 0;
  std::vector<std::string> Kernels;
  /// Which launches candidates are verified on (the evaluator's
  /// verification() once the original was measured). Written only when the
  /// last launch is not verified ("verify_last": false, and what disagreed
  /// when it was dropped rather than turned off): a resumed search keeps it.
  bool VerifyLast = true;
  std::string VerifyLastDropped;
};

/// <RunDir>/sources/node-<Id>.cu: where a node's source is kept.
std::string nodeSourcePath(llvm::StringRef RunDir, unsigned Id);
/// Writes \p Source to nodeSourcePath(RunDir, Id), creating the folder.
llvm::Error writeNodeSource(llvm::StringRef RunDir, unsigned Id,
                            llvm::StringRef Source);

class JournalWriter {
public:
  /// Opens (creating \p RunDir) <RunDir>/journal.jsonl. Without \p Append an
  /// existing journal is an error (use --resume, or another run directory).
  /// With \p Append and \p TruncateTo, the journal is first cut to that
  /// many bytes (a torn last line dropped, or everything).
  static llvm::Expected<std::unique_ptr<JournalWriter>>
  open(llvm::StringRef RunDir, bool Append,
       std::optional<uint64_t> TruncateTo = std::nullopt);
  ~JournalWriter();

  llvm::Error writeHeader(const JournalHeader &H);
  llvm::Error writeNode(const SearchNode &N);
  llvm::Error writeFinal(const SearchResult &R);
  const std::string &path() const { return Path; }

private:
  JournalWriter() = default;
  llvm::Error writeLine(const std::string &Line);
  std::string RunDir, Path;
  int FD = -1;
};

struct JournalContents {
  /// <RunDir>/journal.jsonl exists (it may still be empty).
  bool Found = false;
  std::string Path;
  std::optional<JournalHeader> Header;
  unsigned HeaderLine = 0;
  std::vector<SearchNode> Nodes; ///< in the order written; Id == index
  /// Bytes of the lines kept; a dropped last line starts here.
  uint64_t ValidBytes = 0;
  bool DroppedPartialLine = false;
  /// Why the last line was dropped, naming it (for a warning); empty: none.
  std::string Dropped;
  /// Evaluated or failed nodes whose sources/node-<id>.cu is missing (a
  /// journal copied without its sources); their Source is empty.
  std::vector<unsigned> MissingSources;
};

/// Reads a journal and the sources it references (a missing one is listed
/// in MissingSources, not an error), and checks its structure:
/// the first line is the header, of a known version; node ids run 0, 1,
/// 2, ... in order; node 0 is the original and every other node's parent
/// (and the node it duplicates) is an earlier node. Any violation, and any
/// malformed line, is an error naming the file, the line and what is wrong.
/// Only the last line may be incomplete (no newline, or not JSON: a run
/// killed while writing it): it is dropped and \c Dropped says so. No
/// journal is not an error (\c Found is false).
llvm::Expected<JournalContents> readJournal(llvm::StringRef RunDir);

/// The run in one JSON document (optimize --summary-json), for drivers
/// that compare runs: the header's settings, evaluations (cached ones
/// counted apart), the best found and when, the final check, the curve.
std::string summaryToJSON(const SearchResult &R, const JournalHeader &H,
                          llvm::StringRef Evaluator);

/// One node as a JSON line (no trailing newline) and back (Source empty).
std::string nodeToJSON(const SearchNode &N);
llvm::Expected<SearchNode> nodeFromJSON(llvm::StringRef Line);

} // namespace optiml

#endif
