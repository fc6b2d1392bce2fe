//===- ASTUtil.h - Small AST helpers for CUDA code -------------*- C++ -*-===//
//
// Shared by the kernel model and the edit library; and walks of the user's
// code that skip the preamble's headers.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_FRONTEND_ASTUTIL_H
#define OPTIML_FRONTEND_ASTUTIL_H

#include "optiml/Frontend/KernelModel.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
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

// Walking the user's code, not the headers'.
/// A translation unit parsed after a precompiled preamble (Preamble.h) reads
/// the headers' declarations from it only when something asks for them. A
/// walk over every top-level declaration asks for all of them: the CUDA
/// runtime's, clang's wrappers', the C++ library's, thousands of
/// declarations and their bodies, most of the time a check takes. The kernel
/// model and the edit checks look only at the user's code (isUserFile); when
/// the preamble holds none (its declarations are all in system headers),
/// they walk the declarations parsed after it, in the same order, and find
/// the same things.
///
/// The top-level declarations of \p Ctx parsed after its precompiled
/// preamble, in the order TranslationUnitDecl::decls() has them, when they
/// are the only ones that can hold the user's code: the preamble holds none
/// (mayReadUserCodeFromPreamble) and, for a walk that visits template
/// instantiations (\p Instantiations),
/// none of them redeclares, partially specializes or defines a member of a
/// template read from the preamble (whose instantiations, visited under that
/// template, would then hold the user's code). Nullopt otherwise: walk them
/// all.
std::optional<std::vector<clang::Decl *>>
declsAfterPreamble(clang::ASTContext &Ctx, bool Instantiations);

/// The top-level declarations a walk over the user's code (not visiting
/// template instantiations) goes through: declsAfterPreamble's, else all.
std::vector<clang::Decl *> userTopLevelDecls(clang::ASTContext &Ctx);

/// Runs the RecursiveASTVisitor \p V over the translation unit of \p Ctx as
/// `V.TraverseDecl(Ctx.getTranslationUnitDecl())` does, skipping the
/// preamble's declarations when declsAfterPreamble allows it. For visitors
/// that act only on the user's code (declarations and statements in user
/// files); a visitor of implicit code walks everything.
template <typename Visitor>
bool traverseUserCode(Visitor &V, clang::ASTContext &Ctx) {
  clang::TranslationUnitDecl *TU = Ctx.getTranslationUnitDecl();
  std::optional<std::vector<clang::Decl *>> Local;
  if (!V.shouldVisitImplicitCode() && !V.shouldTraversePostOrder())
    Local = declsAfterPreamble(Ctx, V.shouldVisitTemplateInstantiations());
  if (!Local)
    return V.TraverseDecl(TU);
  if (!V.WalkUpFromTranslationUnitDecl(TU))
    return false;
  for (clang::Decl *D : *Local)
    if (!V.canIgnoreChildDeclWhileTraversingDeclContext(D) &&
        !V.TraverseDecl(D))
      return false;
  for (clang::Attr *A : TU->attrs())
    if (!V.TraverseAttr(A))
      return false;
  return true;
}

} // namespace optiml

#endif
