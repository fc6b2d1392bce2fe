//===- Diff.h - Unified diffs of two texts ---------------------*- C++ -*-===//
#ifndef OPTIML_EDIT_DIFF_H
#define OPTIML_EDIT_DIFF_H

#include "llvm/ADT/StringRef.h"
#include <string>

namespace optiml {

/// A unified diff (`---`/`+++` headers naming \p OldName and \p NewName,
/// hunks with \p Context lines around changes). Empty if the texts are equal.
std::string unifiedDiff(llvm::StringRef Old, llvm::StringRef New,
                        llvm::StringRef OldName, llvm::StringRef NewName,
                        unsigned Context = 3);

} // namespace optiml

#endif
