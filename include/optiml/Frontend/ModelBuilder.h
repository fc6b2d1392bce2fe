//===- ModelBuilder.h - Build the kernel model from an AST -----*- C++ -*-===//
#ifndef OPTIML_FRONTEND_MODELBUILDER_H
#define OPTIML_FRONTEND_MODELBUILDER_H

#include "optiml/Frontend/KernelModel.h"
#include "llvm/ADT/StringRef.h"

namespace clang {
class ASTContext;
class FunctionDecl;
class ForStmt;
class Stmt;
} // namespace clang

namespace optiml {

/// Builds the model of every `__global__` function defined in the main file
/// of \p Ctx (templates once, with their launched instantiations).
KernelModel buildKernelModel(clang::ASTContext &Ctx);

/// The definition of the kernel (the template pattern for templates) whose
/// qualified name is \p QualifiedName, or null.
const clang::FunctionDecl *findKernelDecl(clang::ASTContext &Ctx,
                                          llvm::StringRef QualifiedName);

/// The loop statement a loop id names inside \p Kernel, or null. Loops are
/// numbered as in the model (source order, nested ids with '.').
const clang::Stmt *findLoopStmt(const clang::FunctionDecl *Kernel,
                                llvm::StringRef LoopId);

} // namespace optiml

#endif
