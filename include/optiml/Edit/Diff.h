//===- Diff.h - Unified diffs of two texts ---------------------*- C++ -*-===//
#ifndef OPTIML_EDIT_DIFF_H
#define OPTIML_EDIT_DIFF_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace optiml {

/// A unified diff (`---`/`+++` headers naming \p OldName and \p NewName,
/// hunks with \p Context lines around changes). Empty if the texts are equal.
std::string unifiedDiff(llvm::StringRef Old, llvm::StringRef New,
                        llvm::StringRef OldName, llvm::StringRef NewName,
                        unsigned Context = 3);

/// One changed block of lines: bytes [Offset, Offset + Length) of the old
/// text become Text.
struct TextChange {
  size_t Offset = 0;
  size_t Length = 0;
  std::string Text;
};

/// The changes that turn \p Old into \p New, one per changed block of lines
/// (the blocks unifiedDiff shows), in order and disjoint.
std::vector<TextChange> lineChanges(llvm::StringRef Old, llvm::StringRef New);

/// The changes from \p Old to \p New as a YAML fixes document in the format
/// clang-tidy's --export-fixes writes and clang-apply-replacements reads:
/// one diagnostic named \p DiagnosticName with \p Message and the
/// replacements for \p FilePath (absolute), which is also the main source
/// file. The document is read back and applied to \p Old before it is
/// returned; text that would not come back byte for byte is an error.
llvm::Expected<std::string> fixesYAML(llvm::StringRef FilePath,
                                      llvm::StringRef Old, llvm::StringRef New,
                                      llvm::StringRef DiagnosticName,
                                      llvm::StringRef Message);

} // namespace optiml

#endif
