//===- UserCode.h - Walk the user's code, not the headers' ------*- C++ -*-===//
//
// A translation unit parsed after a precompiled preamble (Preamble.h) reads
// the headers' declarations from it only when something asks for them. A
// walk over every top-level declaration asks for all of them: the CUDA
// runtime's, clang's wrappers', the C++ library's, thousands of
// declarations and their bodies, most of the time a check takes. The kernel
// model and the edit checks look only at the user's code (isUserFile); when
// the preamble holds none (its declarations are all in system headers),
// they walk the declarations parsed after it, in the same order, and find
// the same things.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_FRONTEND_USERCODE_H
#define OPTIML_FRONTEND_USERCODE_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include <optional>
#include <vector>

namespace optiml {

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
