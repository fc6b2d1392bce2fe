//===- MainFunction.h - Does a parsed file define main() -------*- C++ -*-===//
//
// eval and optimize build and run a whole program: a file of kernels alone
// (no main) cannot be linked. The parse answers that before nvcc is run, so
// the user is asked for the file with main() instead of reading a link error.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_FRONTEND_MAINFUNCTION_H
#define OPTIML_FRONTEND_MAINFUNCTION_H

namespace clang {
class ASTContext;
} // namespace clang

namespace optiml {

/// Whether the translation unit defines `main` (in the file itself or in a
/// file it includes: both are linked with it), `extern "C"` or not.
bool definesMain(clang::ASTContext &Ctx);

} // namespace optiml

#endif
