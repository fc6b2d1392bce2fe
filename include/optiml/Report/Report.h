//===- Report.h - What a search found, for people ---------------*- C++ -*-===//
//
// One self-contained HTML file (no external scripts, styles or images): the
// tree of edits tried (which failed and why, which won), the best speedup
// against evaluations as inline SVG, the final diff, and for each accepted
// step the profiler evidence (which metrics moved). Plus the short text
// summary `optimize` prints at the end.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_REPORT_REPORT_H
#define OPTIML_REPORT_REPORT_H

#include "optiml/Search/Search.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

namespace optiml {

struct ReportInfo {
  std::string File;
  std::string Command; ///< how the search was run
  std::string Strategy;
  std::string Policy;
  std::string Evaluator; ///< CandidateEvaluator::describe()
};

std::string renderHtmlReport(const SearchResult &R, const ReportInfo &Info);

/// The metrics that moved most between two outcomes, as lines like
/// "dram__bytes_read.sum: 2.1e+09 -> 1.0e+09 (-52%)", largest change first.
std::vector<std::string> metricChanges(const EvalOutcome &Before,
                                       const EvalOutcome &After,
                                       unsigned Max = 4);

/// A few lines: the conclusion, evaluations, the accepted steps.
void printSummary(llvm::raw_ostream &OS, const SearchResult &R,
                  const ReportInfo &Info);

/// The best-so-far curve as an inline SVG element.
std::string curveSvg(const SearchResult &R);

} // namespace optiml

#endif
