//===- MacroText.cpp - Macros read as the compiler saw them ---------------===//
//
// Which macros an expression is written with, and its text where the
// macros in it are constants (`#define N 3000`): TransformSupport.h.
//
//===----------------------------------------------------------------------===//

#include "TransformSupport.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;
using namespace llvm;

namespace optiml {

bool containsMacro(const Stmt *S) {
  if (!S)
    return false;
  // `__shared__ float s[256];`: attribute macros in declarations are not
  // rewritten; their initializers are what matter.
  if (const auto *DS = dyn_cast<DeclStmt>(S)) {
    for (const Decl *D : DS->decls())
      if (const auto *VD = dyn_cast<VarDecl>(D))
        if (VD->getLocation().isMacroID() ||
            (VD->hasInit() && containsMacro(VD->getInit())))
          return true;
    return false;
  }
  if (S->getBeginLoc().isMacroID() || S->getEndLoc().isMacroID())
    return true;
  for (const Stmt *C : S->children())
    if (containsMacro(C))
      return true;
  return false;
}

/// Whether \p S names no variable (threadIdx included), calls nothing and
/// writes nothing.
static bool namesNoVariable(const Stmt *S) {
  if (!S)
    return true;
  if (const auto *DR = dyn_cast<DeclRefExpr>(S);
      DR && isa<VarDecl>(DR->getDecl()))
    return false;
  if (isa<CallExpr, MemberExpr, LambdaExpr, StmtExpr>(S))
    return false;
  if (const auto *U = dyn_cast<UnaryOperator>(S);
      U && (U->isIncrementDecrementOp() || U->getOpcode() == UO_Deref))
    return false;
  if (const auto *B = dyn_cast<BinaryOperator>(S); B && B->isAssignmentOp())
    return false;
  return llvm::all_of(S->children(), namesNoVariable);
}

SourceLocation throughArguments(const SourceManager &SM, SourceLocation L,
                                SmallVectorImpl<SourceLocation> &Uses) {
  while (L.isMacroID() && SM.isMacroArgExpansion(L)) {
    Uses.push_back(SM.getImmediateExpansionRange(L).getBegin());
    L = SM.getImmediateSpellingLoc(L);
  }
  return L;
}

bool writtenEnds(const SourceManager &SM, const Stmt *S, SourceLocation &B,
                 SourceLocation &E) {
  SmallVector<SourceLocation, 2> UsesB, UsesE;
  B = throughArguments(SM, S->getBeginLoc(), UsesB);
  E = throughArguments(SM, S->getEndLoc(), UsesE);
  return UsesB == UsesE;
}

bool onlyConstantMacros(const Stmt *S, const ASTContext &AST) {
  if (!S)
    return true;
  if (const auto *DS = dyn_cast<DeclStmt>(S)) {
    for (const Decl *D : DS->decls())
      if (const auto *VD = dyn_cast<VarDecl>(D))
        if (VD->getLocation().isMacroID() ||
            (VD->hasInit() && !onlyConstantMacros(VD->getInit(), AST)))
          return false;
    return true;
  }
  const SourceManager &SM = AST.getSourceManager();
  SourceLocation B, E;
  if (!writtenEnds(SM, S, B, E))
    return false;
  if (B.isMacroID() && E.isMacroID() &&
      SM.getExpansionLoc(B) == SM.getExpansionLoc(E))
    // Inside one expansion: the macro's own text, read as a whole; a
    // constant made with a builtin (`INFINITY`, `__builtin_huge_valf()`)
    // too.
    return isa<Expr>(S) &&
           (namesNoVariable(S) || (!cast<Expr>(S)->isValueDependent() &&
                                   cast<Expr>(S)->isEvaluatable(AST)));
  // Written in the file, or from the start of one expansion to the end of
  // another (`D * D`): each end must be an edge of its expansion.
  if (B.isMacroID() &&
      !Lexer::isAtStartOfMacroExpansion(B, SM, AST.getLangOpts()))
    return false;
  if (E.isMacroID() &&
      !Lexer::isAtEndOfMacroExpansion(E, SM, AST.getLangOpts()))
    return false;
  return llvm::all_of(
      S->children(), [&](const Stmt *C) { return onlyConstantMacros(C, AST); });
}

std::optional<SourceSpan> constantMacroSpan(const EditContext &Ctx,
                                            const Stmt *S) {
  if (!S || !onlyConstantMacros(S, Ctx.AST))
    return std::nullopt;
  const SourceManager &SM = Ctx.AST.getSourceManager();
  const LangOptions &LO = Ctx.AST.getLangOpts();
  // onlyConstantMacros() has each end at an edge of its expansion; that
  // expansion must be written in the file itself.
  auto InFile = [&](SourceLocation L, bool Start) {
    if (L.isFileID())
      return true;
    SourceLocation At;
    bool Edge = Start ? Lexer::isAtStartOfMacroExpansion(L, SM, LO, &At)
                      : Lexer::isAtEndOfMacroExpansion(L, SM, LO, &At);
    return Edge && At.isFileID();
  };
  SourceLocation B, E;
  if (!writtenEnds(SM, S, B, E) || !InFile(B, true) || !InFile(E, false))
    return std::nullopt;
  return fileSpan(SM, LO, SourceRange(B, E), Ctx.file());
}

std::string constantMacroText(const EditContext &Ctx, const Stmt *S) {
  auto Sp = constantMacroSpan(Ctx, S);
  if (!Sp)
    return "";
  std::string T = Ctx.Code.slice(Sp->Begin.Offset, Sp->End.Offset).str();
  const SourceManager &SM = Ctx.AST.getSourceManager();
  SourceLocation B, E;
  if (writtenEnds(SM, S, B, E) && B.isMacroID() && E.isMacroID() && B != E &&
      SM.getExpansionLoc(B) == SM.getExpansionLoc(E))
    T = "(" + T + ")";
  return T;
}

/// Whether a token of \p S came through a macro's argument.
static bool throughAnyArgument(const SourceManager &SM, const Stmt *S) {
  if (!S)
    return false;
  for (SourceLocation L : {S->getBeginLoc(), S->getEndLoc()})
    for (; L.isMacroID(); L = SM.getImmediateExpansionRange(L).getBegin())
      if (SM.isMacroArgExpansion(L))
        return true;
  return llvm::any_of(S->children(),
                      [&](const Stmt *C) { return throughAnyArgument(SM, C); });
}

std::string macroBodyText(const EditContext &Ctx, const Stmt *S) {
  const SourceManager &SM = Ctx.AST.getSourceManager();
  const LangOptions &LO = Ctx.AST.getLangOpts();
  if (!S || !S->getBeginLoc().isMacroID() || throughAnyArgument(SM, S))
    return "";
  // An end's place in the body of the macro invoked in the file: a token
  // of that body, or the edge of a macro the body invokes.
  auto InBody = [&](SourceLocation L, bool Start) -> SourceLocation {
    while (L.isMacroID()) {
      if (SM.getImmediateExpansionRange(L).getBegin().isFileID())
        return L;
      // The end is asked of the place after the token (as Lexer does).
      SourceLocation At;
      if (Start ? !SM.isAtStartOfImmediateMacroExpansion(L, &At)
                : !SM.isAtEndOfImmediateMacroExpansion(
                      L.getLocWithOffset(Lexer::MeasureTokenLength(
                          SM.getSpellingLoc(L), SM, LO)),
                      &At))
        return {};
      L = At;
    }
    return {};
  };
  SourceLocation B = InBody(S->getBeginLoc(), true);
  SourceLocation E = InBody(S->getEndLoc(), false);

  if (B.isInvalid() || E.isInvalid() || SM.getFileID(B) != SM.getFileID(E))
    return "";
  // Invoked in this file: the text is put back where it was expanded.
  if (SM.getFileID(SM.getExpansionLoc(B)) != Ctx.file())
    return "";
  SourceLocation SB = SM.getSpellingLoc(B), SE = SM.getSpellingLoc(E);
  auto [FB, OB] = SM.getDecomposedLoc(SB);
  auto [FE, OE] = SM.getDecomposedLoc(SE);
  bool Invalid = false;
  StringRef Buf = SM.getBufferData(FB, &Invalid);
  if (Invalid || FB != FE || OE < OB)
    return "";
  unsigned End = OE + Lexer::MeasureTokenLength(SE, SM, LO);
  if (End > Buf.size())
    return "";
  StringRef T = Buf.slice(OB, End);
  // Stringizing, pasting or a line continuation inside: not plain text.
  if (T.contains('#') || T.contains('\\'))
    return "";
  return T.str();
}

} // namespace optiml
