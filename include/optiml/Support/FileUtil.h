//===- FileUtil.h - Files written safely -----------------------*- C++ -*-===//
#ifndef OPTIML_SUPPORT_FILEUTIL_H
#define OPTIML_SUPPORT_FILEUTIL_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace optiml {

/// Replaces \p Path with \p Contents atomically: the text goes to a temporary
/// file in the same directory, which is renamed over \p Path only once it is
/// complete. On any failure \p Path is untouched. Keeps \p Path's permission
/// bits when it exists. A \p Path that is a device, FIFO or socket
/// (`/dev/null`, `/dev/stdout`) is written in place, never replaced; a
/// directory is an error.
llvm::Error writeFileAtomically(llvm::StringRef Path, llvm::StringRef Contents);

/// Reads a whole file; the error names the file.
llvm::Expected<std::string> readFile(llvm::StringRef Path);

} // namespace optiml

#endif
