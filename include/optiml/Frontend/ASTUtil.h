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
#include <vector>

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

/// The span of \p R in the file \p In (offsets in that file), or nothing if
/// it cannot be rewritten as one piece of that file (macro bodies, other
/// files). Without \p In: in whichever user file (isUserFile) holds it.
std::optional<SourceSpan> fileSpan(const clang::SourceManager &SM,
                                   const clang::LangOptions &LO,
                                   clang::SourceRange R,
                                   clang::FileID In = clang::FileID());

/// Whether \p FID is a file of the user's project: the main file, or a file
/// on disk that clang classed as a user file (not found through a system
/// include directory: clang's own headers and the CUDA toolkit's are
/// system headers for every parse, see CudaToolchain.h) and that a user
/// file includes. A file forced in by the command line (-include) is not.
bool isUserFile(const clang::SourceManager &SM, clang::FileID FID);

/// The file \p FID's path as the kernel model names it: absolute, without
/// `.` and `..` components.
std::string filePath(const clang::SourceManager &SM, clang::FileID FID);

/// The file of the translation unit that \p Path names; invalid if the
/// translation unit does not read it.
clang::FileID findFileID(const clang::SourceManager &SM, llvm::StringRef Path);

/// The user files from the main file (first) down to the file that
/// includes \p FID (empty for the main file).
std::vector<std::string> includeChain(const clang::SourceManager &SM,
                                      clang::FileID FID);

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
