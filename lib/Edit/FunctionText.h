//===- FunctionText.h - The screen of a function's new text ----*- C++ -*-===//
#ifndef OPTIML_LIB_EDIT_FUNCTIONTEXT_H
#define OPTIML_LIB_EDIT_FUNCTIONTEXT_H

#include "CatalogInternal.h"

namespace clang {
class LangOptions;
} // namespace clang

namespace optiml {

/// Checks text meant to be exactly one function definition (replace-function,
/// add-device-function) before anything is parsed: empty, NUL bytes, invalid
/// UTF-8, markdown fences, preprocessing directives however spelled,
/// unbalanced or truncated braces, unterminated comments and literals, more
/// than one definition, text after the body. The text is lexed with \p LO,
/// the compiler's options for the file. Failures are EditRejected naming
/// params.code and the line within it.
llvm::Expected<FunctionText> scanFunctionText(const Edit &E,
                                              llvm::StringRef Code,
                                              const clang::LangOptions &LO);

} // namespace optiml

#endif
