//===- ASTUtil.h - Small AST helpers for CUDA code -------------*- C++ -*-===//
//
// Shared by the kernel model and the edit library.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_FRONTEND_ASTUTIL_H
#define OPTIML_FRONTEND_ASTUTIL_H

#include "optiml/Frontend/KernelModel.h"
#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace clang {
class VarDecl;
class Expr;
class FunctionDecl;
class LangOptions;
class SourceManager;
} // namespace clang

namespace optiml {

/// `threadIdx.x` and friends: Var is threadIdx/blockIdx/blockDim/gridDim.
struct BuiltinVarRef {
  llvm::StringRef Var;
  char Dim;
};
std::optional<BuiltinVarRef> asBuiltinVar(const clang::Expr *E);

/// The text of \p R as written in the file (the expansion's text when \p R
/// lies inside a macro body).
std::string sourceText(const clang::SourceManager &SM,
                       const clang::LangOptions &LO, clang::SourceRange R);

/// The main-file span of \p R, or nothing if it cannot be rewritten as one
/// piece of the main file (macro bodies, other files).
std::optional<SourceSpan> fileSpan(const clang::SourceManager &SM,
                                   const clang::LangOptions &LO,
                                   clang::SourceRange R);

SourcePos filePos(const clang::SourceManager &SM, clang::SourceLocation Loc);

bool isKernel(const clang::FunctionDecl *FD);
bool isMathFunction(llvm::StringRef Name);

/// Whether a call to \p FD synchronizes the threads of a block: a barrier
/// primitive (`__syncthreads*`, `__barrier_sync`), or a function whose body
/// calls one (cooperative groups' `cg::sync(block)` and `block.sync()`, a
/// project's own wrapper), followed a few calls deep.
bool isBlockBarrier(const clang::FunctionDecl *FD, unsigned Depth = 0);

/// The `__shared__` variable a pointer initializer leads to through a call
/// or a helper object's conversion to a pointer (`T *s = SharedMemory<T>()`,
/// also inside a template where the conversion is not yet resolved).
const clang::VarDecl *sharedVarBehind(const clang::Expr *Init);

} // namespace optiml

#endif
