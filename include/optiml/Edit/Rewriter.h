//===- Rewriter.h - Checked application of edits ---------------*- C++ -*-===//
//
// An edit is resolved against the AST of the current text, turned into
// replacements by its transform, applied in memory, re-parsed for the host
// and the device, and checked (Checks.h). Only an edit that passes every
// check yields an AppliedEdit; anything else is an EditRejected.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_EDIT_REWRITER_H
#define OPTIML_EDIT_REWRITER_H

#include "optiml/Edit/Checks.h"
#include "optiml/Edit/Edit.h"
#include "optiml/Frontend/Parse.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace optiml {

/// Applies one edit to \p Code (the text of \p FileName, parsed with
/// \p Config). An edit whose target is defined in a user file that
/// \p FileName includes rewrites that file instead (AppliedEdit::File; the
/// main file must then be as on disk). Fails with EditRejected (failed
/// checks, as data) or a plain error when the input itself does not parse.
llvm::Expected<AppliedEdit> applyEdit(llvm::StringRef FileName,
                                      llvm::StringRef Code,
                                      const ParseConfig &Config, const Edit &E,
                                      const CheckOptions &Opts = {});

/// As above, with \p Parsed the host-side parse of \p Code as \p FileName
/// under \p Config (an analysis' own, say), which is then not parsed again;
/// null parses it.
llvm::Expected<AppliedEdit> applyEdit(llvm::StringRef FileName,
                                      llvm::StringRef Code,
                                      const ParseConfig &Config, const Edit &E,
                                      const CheckOptions &Opts,
                                      const ParsedTU *Parsed);

/// A list of edits applied in order, each on the previous one's result.
struct AppliedEdits {
  std::vector<AppliedEdit> Steps;
  /// The file the list rewrote (absolute; see AppliedEdit::File): every
  /// edit of a list rewrites the same file.
  std::string File;
  std::string NewCode;
  std::string Diff; ///< of the whole list against the input
  bool ChangesPrecision = false;
  std::vector<std::string> ExtraNvccFlags;
};

/// The name a diff of \p File gives it: its file name, or for a file the
/// main file (Config.MainFile) includes, its path relative to the main
/// file's directory.
std::string diffName(llvm::StringRef File, const ParseConfig &Config);

/// Stops at the first rejected edit (its EditRejected has ListIndex set).
/// \p Parsed, when given, is the host-side parse of \p Code (see applyEdit).
llvm::Expected<AppliedEdits>
applyEdits(llvm::StringRef FileName, llvm::StringRef Code,
           const ParseConfig &Config, llvm::ArrayRef<Edit> Edits,
           const CheckOptions &Opts = {}, const ParsedTU *Parsed = nullptr);

} // namespace optiml

#endif
