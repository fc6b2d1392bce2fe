//===- KernelActions.h - What clangd-optiml adds to an editor ---*- C++ -*-===//
//
// The library side of the proxy: a buffer's text (saved or not) is parsed
// with the flags its compile database gives, modelled, and turned into hint
// diagnostics and catalog code actions; an action's edit goes through the
// same checked rewriter as `clang-optiml apply`. No LSP framing here: the
// proxy (ClangdOptiml.cpp) speaks the protocol, this speaks in offsets.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_TOOLS_CLANGD_OPTIML_KERNELACTIONS_H
#define OPTIML_TOOLS_CLANGD_OPTIML_KERNELACTIONS_H

#include "optiml/Edit/Diff.h"
#include "optiml/Edit/Edit.h"
#include "optiml/Frontend/Analysis.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace optiml {
namespace lsp {

/// A hint from the kernel model, at a byte range of the buffer.
struct Hint {
  size_t Begin = 0, End = 0;
  bool IsInformation = false; ///< else a Hint (LSP severity 3 or 4)
  std::string Message;
  std::string Code; ///< e.g. "strided-access", "missing-launch-bounds"
  std::string Kernel;
};

/// A catalog edit offered at a kernel or launch: the byte ranges it is
/// offered on (the kernel's definition, or the launch expression).
struct Offer {
  std::string Title; ///< "clang-optiml: <what it does> for <kernel>"
  std::string Kernel;
  std::string Kind;
  Edit E;
  std::vector<std::pair<size_t, size_t>> Ranges;
  /// Hint codes it addresses (attached to those diagnostics).
  std::vector<std::string> Addresses;
};

/// "Optimize this kernel", offered on its definition.
struct OptimizeOffer {
  std::string Kernel;
  size_t Begin = 0, End = 0;
};

struct BufferAnalysis {
  std::vector<Hint> Hints;
  std::vector<Offer> Offers;
  std::vector<OptimizeOffer> Optimize;
  /// Set when the buffer does not parse (compile errors): no hints then.
  std::string Error;
};

/// Parses \p Text as the contents of \p Path (absolute) and lists hints and
/// offers. Never fails: a buffer that does not parse gives Error.
BufferAnalysis analyzeBuffer(llvm::StringRef Path, llvm::StringRef Text,
                             const AnalyzeOptions &Opts);

/// Applies \p E to \p Text with the checked rewriter; the result's changes
/// as line blocks of the old text (for a WorkspaceEdit).
struct BufferEdit {
  std::string Summary;
  std::vector<TextChange> Changes;
  std::string NewText;
};
llvm::Expected<BufferEdit> applyToBuffer(llvm::StringRef Path,
                                         llvm::StringRef Text, const Edit &E,
                                         const AnalyzeOptions &Opts);

} // namespace lsp
} // namespace optiml

#endif
