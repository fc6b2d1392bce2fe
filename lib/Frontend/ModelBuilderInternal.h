//===- ModelBuilderInternal.h - Pieces of the model builder -----*- C++ -*-===//
//
// Private to lib/Frontend. buildKernelModel (ModelBuilder.cpp) finds the
// kernels and launches, walks each kernel body with the analyzer
// (KernelAnalyzer.cpp) and classifies it (KernelClassify.cpp); the call
// helpers below are shared by those files and the AST helpers (ASTUtil.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_FRONTEND_MODELBUILDERINTERNAL_H
#define OPTIML_LIB_FRONTEND_MODELBUILDERINTERNAL_H

#include "optiml/Frontend/KernelModel.h"
#include "llvm/ADT/StringRef.h"

namespace clang {
class ASTContext;
class CallExpr;
class FunctionDecl;
} // namespace clang

namespace optiml {

/// The called function's name, also for calls not resolved in a template.
llvm::StringRef calleeName(const clang::CallExpr *C);
bool isWarpPrimitive(llvm::StringRef Name);
bool isAtomic(llvm::StringRef Name);

/// Records \p FD's loops, memory accesses and calls in \p K.
void analyzeKernelBody(clang::ASTContext &Ctx, KernelInfo &K,
                       const clang::FunctionDecl *FD);

/// Sets \p K's class and the reason for it.
void classify(KernelInfo &K, const clang::FunctionDecl *FD);

} // namespace optiml

#endif // OPTIML_LIB_FRONTEND_MODELBUILDERINTERNAL_H
