//===- Journal.h - Every node of a search, as JSON lines -------*- C++ -*-===//
//
// <run-dir>/journal.jsonl: a header line, then one line per node as it is
// made (edit, diff, checks, compile log, verdict, times, metrics, reward,
// parent), then a line for the final check. Each line is written with one
// write() and fsynced; each candidate's full source goes to
// <run-dir>/sources/node-<id>.cu first. A run killed mid-line leaves a
// partial last line, which readJournal drops.
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

struct JournalHeader {
  std::string File;
  std::string OriginalKey;
  std::string Strategy;
  std::string Policy;
  uint64_t Seed = 0;
  unsigned Budget = 0;
  std::vector<std::string> Kernels;
};

class JournalWriter {
public:
  /// Opens (creating \p RunDir) <RunDir>/journal.jsonl. Without \p Append an
  /// existing journal is an error (use --resume, or another run directory).
  static llvm::Expected<std::unique_ptr<JournalWriter>>
  open(llvm::StringRef RunDir, bool Append, uint64_t TruncateTo = 0);
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
  std::optional<JournalHeader> Header;
  std::vector<SearchNode> Nodes; ///< in the order written; Id == index
  /// Bytes of complete lines; a partial last line starts here.
  uint64_t ValidBytes = 0;
  bool DroppedPartialLine = false;
};

/// Reads a journal and the sources it references. Malformed complete lines
/// are errors naming the line; a partial last line is dropped.
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
