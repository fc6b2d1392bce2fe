//===- UserCode.cpp - Walk the user's code, not the headers' --------------===//

#include "optiml/Frontend/UserCode.h"
#include "optiml/Frontend/Preamble.h"
#include "clang/AST/DeclFriend.h"
#include "clang/AST/DeclTemplate.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;
using namespace llvm;

namespace optiml {

static bool fromPreamble(const Decl *D) {
  return D && D->getCanonicalDecl()->isFromASTFile();
}

/// Whether \p D, or a declaration inside it (a namespace's, a class's, a
/// friend), redeclares, partially specializes or defines a member of a
/// template read from the preamble. Templates are not declared inside
/// function bodies, which are not looked into.
static bool extendsPreambleTemplate(const Decl *D) {
  if (const auto *F = dyn_cast<FriendDecl>(D))
    return F->getFriendDecl() && extendsPreambleTemplate(F->getFriendDecl());
  if (const auto *T = dyn_cast<TemplateDecl>(D)) {
    if (fromPreamble(T))
      return true;
    const NamedDecl *Pattern = T->getTemplatedDecl();
    return Pattern && extendsPreambleTemplate(Pattern);
  }
  if (const auto *PS = dyn_cast<ClassTemplatePartialSpecializationDecl>(D);
      PS && fromPreamble(PS->getSpecializedTemplate()))
    return true;
  if (const auto *PS = dyn_cast<VarTemplatePartialSpecializationDecl>(D);
      PS && fromPreamble(PS->getSpecializedTemplate()))
    return true;
  if (D->isTemplated() && fromPreamble(D))
    return true;
  if (!isa<NamespaceDecl, LinkageSpecDecl, ExportDecl, RecordDecl>(D))
    return false;
  return any_of(cast<DeclContext>(D)->decls(), extendsPreambleTemplate);
}

std::optional<std::vector<Decl *>> declsAfterPreamble(ASTContext &Ctx,
                                                      bool Instantiations) {
  TranslationUnitDecl *TU = Ctx.getTranslationUnitDecl();
  std::vector<Decl *> Scope = Ctx.getTraversalScope();
  if (Scope.size() != 1 || Scope.front() != TU)
    return std::nullopt;
  if (!Ctx.getExternalSource() || mayReadUserCodeFromPreamble(Ctx))
    return std::nullopt;
  // Without reading the preamble's (those read already come first).
  std::vector<Decl *> Local;
  for (Decl *D : TU->noload_decls())
    if (!D->isFromASTFile())
      Local.push_back(D);
  if (Instantiations && any_of(Local, extendsPreambleTemplate))
    return std::nullopt;
  return Local;
}

std::vector<Decl *> userTopLevelDecls(ASTContext &Ctx) {
  if (auto Local = declsAfterPreamble(Ctx, /*Instantiations=*/false))
    return std::move(*Local);
  TranslationUnitDecl *TU = Ctx.getTranslationUnitDecl();
  return std::vector<Decl *>(TU->decls_begin(), TU->decls_end());
}

} // namespace optiml
