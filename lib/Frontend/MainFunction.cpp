//===- MainFunction.cpp - Does a parsed file define main() ----------------===//

#include "optiml/Frontend/MainFunction.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"

namespace optiml {

bool definesMain(clang::ASTContext &Ctx) {
  // main lives at global scope; an `extern "C"` block is transparent to
  // lookup, so one lookup finds it either way.
  clang::TranslationUnitDecl *TU = Ctx.getTranslationUnitDecl();
  for (clang::NamedDecl *D : TU->lookup(&Ctx.Idents.get("main")))
    if (const auto *FD = llvm::dyn_cast<clang::FunctionDecl>(D))
      if (FD->isMain() && FD->isDefined())
        return true;
  return false;
}

} // namespace optiml
