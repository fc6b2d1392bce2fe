//===- ASTUtil.cpp - Small AST helpers ------------------------------------===//

#include "optiml/Frontend/ASTUtil.h"
#include "ModelBuilderInternal.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "optiml/Frontend/Preamble.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclFriend.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Index/USRGeneration.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <algorithm>
#include <map>
#include <set>

using namespace clang;
using namespace llvm;

namespace optiml {

//===----------------------------------------------------------------------===//
// Small AST helpers shared with the edit library (optiml/Frontend/ASTUtil.h).
//===----------------------------------------------------------------------===//

std::optional<BuiltinVarRef> asBuiltinVar(const Expr *E) {
  if (!E)
    return std::nullopt;
  E = E->IgnoreParenImpCasts();
  if (const auto *PO = dyn_cast<PseudoObjectExpr>(E))
    E = PO->getSyntacticForm()->IgnoreParenImpCasts();
  const auto *MP = dyn_cast<MSPropertyRefExpr>(E);
  if (!MP)
    return std::nullopt;
  const Expr *BaseE = MP->getBaseExpr()->IgnoreParenImpCasts();
  if (const auto *OVE = dyn_cast<OpaqueValueExpr>(BaseE))
    if (OVE->getSourceExpr())
      BaseE = OVE->getSourceExpr()->IgnoreParenImpCasts();
  const auto *Base = dyn_cast<DeclRefExpr>(BaseE);
  if (!Base)
    return std::nullopt;
  StringRef Var = Base->getDecl()->getName();
  if (Var != "threadIdx" && Var != "blockIdx" && Var != "blockDim" &&
      Var != "gridDim")
    return std::nullopt;
  StringRef Field = MP->getPropertyDecl()->getName();
  if (Field.size() != 1 || Field[0] < 'x' || Field[0] > 'z')
    return std::nullopt;
  return BuiltinVarRef{Var, Field[0]};
}

std::string sourceText(const SourceManager &SM, const LangOptions &LO,
                       SourceRange R) {
  if (R.isInvalid())
    return "";
  CharSourceRange CR =
      Lexer::makeFileCharRange(CharSourceRange::getTokenRange(R), SM, LO);
  if (CR.isInvalid()) {
    // Inside a macro body: the text as spelled in the macro's definition
    // when the range lies in one piece of it, else the expansion's text.
    SourceLocation B = SM.getSpellingLoc(R.getBegin());
    SourceLocation E = SM.getSpellingLoc(R.getEnd());
    if (SM.getFileID(B) == SM.getFileID(E) &&
        !SM.isBeforeInTranslationUnit(E, B))
      CR = CharSourceRange::getTokenRange(B, E);
    else
      CR = CharSourceRange::getTokenRange(SM.getExpansionRange(R).getAsRange());
  }
  bool Invalid = false;
  StringRef Text = Lexer::getSourceText(CR, SM, LO, &Invalid);
  return Invalid ? "" : Text.str();
}

std::optional<SourceSpan> fileSpan(const SourceManager &SM,
                                   const LangOptions &LO, SourceRange R,
                                   FileID In) {
  CharSourceRange CR =
      Lexer::makeFileCharRange(CharSourceRange::getTokenRange(R), SM, LO);
  if (CR.isInvalid())
    return std::nullopt;
  FileID F = SM.getFileID(CR.getBegin());
  if (In.isValid() ? F != In : !isUserFile(SM, F))
    return std::nullopt;
  SourceSpan S;
  S.Begin = filePos(SM, CR.getBegin());
  S.End = filePos(SM, CR.getEnd());
  return S;
}

SourcePos filePos(const SourceManager &SM, SourceLocation Loc) {
  SourcePos P;
  Loc = SM.getFileLoc(Loc);
  if (Loc.isInvalid())
    return P;
  P.Line = SM.getSpellingLineNumber(Loc);
  P.Column = SM.getSpellingColumnNumber(Loc);
  P.Offset = SM.getFileOffset(Loc);
  return P;
}

/// The main file, or a precompiled preamble's copy of it (which the headers
/// of the preamble are included from).
static bool isMainFile(const SourceManager &SM, FileID FID) {
  if (FID == SM.getMainFileID())
    return true;
  OptionalFileEntryRef Main = SM.getFileEntryRefForID(SM.getMainFileID());
  OptionalFileEntryRef F = SM.getFileEntryRefForID(FID);
  return Main && F && &Main->getFileEntry() == &F->getFileEntry();
}

bool isUserFile(const SourceManager &SM, FileID FID) {
  // The include chain is short; a parse asks for few distinct files.
  for (unsigned Depth = 0; FID.isValid() && Depth < 256; ++Depth) {
    if (isMainFile(SM, FID))
      return true;
    bool Invalid = false;
    const SrcMgr::SLocEntry &Ent = SM.getSLocEntry(FID, &Invalid);
    if (Invalid || !Ent.isFile())
      return false;
    const SrcMgr::FileInfo &FI = Ent.getFile();
    if (FI.getFileCharacteristic() != SrcMgr::C_User ||
        !SM.getFileEntryRefForID(FID))
      return false;
    SourceLocation Inc = FI.getIncludeLoc();
    if (Inc.isInvalid())
      return false; // not included by anything: a predefines buffer
    FID = SM.getFileID(SM.getExpansionLoc(Inc));
  }
  return false;
}

std::string filePath(const SourceManager &SM, FileID FID) {
  OptionalFileEntryRef FE = SM.getFileEntryRefForID(FID);
  if (!FE)
    return "";
  SmallString<256> P(FE->getName());
  (void)sys::fs::make_absolute(P);
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

FileID findFileID(const SourceManager &SM, StringRef Path) {
  SmallString<256> Want(Path);
  (void)sys::fs::make_absolute(Want);
  sys::path::remove_dots(Want, /*remove_dot_dot=*/true);
  if (filePath(SM, SM.getMainFileID()) == Want)
    return SM.getMainFileID();
  if (auto FE = SM.getFileManager().getOptionalFileRef(Want))
    if (FileID F = SM.translateFile(*FE); F.isValid())
      return F;
  // Found under another spelling (a symbolic link, `a/../b`): by name.
  for (unsigned I = 0, N = SM.local_sloc_entry_size(); I < N; ++I) {
    const SrcMgr::SLocEntry &Ent = SM.getLocalSLocEntry(I);
    if (!Ent.isFile())
      continue;
    FileID F =
        SM.getFileID(SourceLocation::getFromRawEncoding(Ent.getOffset()));
    if (F.isValid() && filePath(SM, F) == Want)
      return F;
  }
  return FileID();
}

std::vector<std::string> includeChain(const SourceManager &SM, FileID FID) {
  std::vector<std::string> Chain;
  while (FID.isValid() && !isMainFile(SM, FID)) {
    SourceLocation Inc = SM.getIncludeLoc(FID);
    if (Inc.isInvalid())
      break;
    FID = SM.getFileID(SM.getExpansionLoc(Inc));
    Chain.insert(Chain.begin(), filePath(SM, FID));
  }
  return Chain;
}

bool isKernel(const FunctionDecl *FD) {
  return FD && FD->hasAttr<CUDAGlobalAttr>();
}

StringRef calleeName(const CallExpr *C) {
  if (const FunctionDecl *FD = C->getDirectCallee())
    if (FD->getDeclName().isIdentifier())
      return FD->getName();
  if (const auto *ULE =
          dyn_cast<UnresolvedLookupExpr>(C->getCallee()->IgnoreParenImpCasts()))
    if (ULE->getName().isIdentifier())
      return ULE->getName().getAsIdentifierInfo()->getName();
  return "";
}

/// Whether a call to \p FD synchronizes the threads of a block: a barrier
/// primitive itself, or a function whose body calls one (cooperative
/// groups' `cg::sync(block)` and `block.sync()`, a project's own wrapper),
/// followed a few calls deep.
bool isBlockBarrier(const FunctionDecl *FD, unsigned Depth) {
  if (!FD || Depth > 4)
    return false;
  if (FD->getDeclName().isIdentifier()) {
    StringRef N = FD->getName();
    if (N.starts_with("__syncthreads") || N == "__barrier_sync" ||
        N.starts_with("__nvvm_barrier"))
      return true;
  }
  const FunctionDecl *Def = nullptr;
  if (!FD->hasBody(Def) || !Def)
    return false;
  struct Finder : RecursiveASTVisitor<Finder> {
    unsigned Depth;
    bool Found = false;
    bool VisitCallExpr(CallExpr *C) {
      Found |= isBlockBarrier(C->getDirectCallee(), Depth + 1);
      return !Found;
    }
  } F;
  F.Depth = Depth;
  F.TraverseStmt(Def->getBody());
  return F.Found;
}

/// The `__shared__` variable whose address \p FD's body returns (the
/// `SharedMemory<T>` helper's `operator T *()`), if any.
static const VarDecl *returnedSharedVar(const FunctionDecl *FD) {
  const FunctionDecl *Def = nullptr;
  if (!FD || !FD->hasBody(Def) || !Def)
    return nullptr;
  struct Finder : RecursiveASTVisitor<Finder> {
    const VarDecl *Found = nullptr;
    bool VisitReturnStmt(ReturnStmt *R) {
      if (const Expr *V = R->getRetValue())
        if (const auto *D = dyn_cast<DeclRefExpr>(V->IgnoreParenCasts()))
          if (const auto *VD = dyn_cast<VarDecl>(D->getDecl());
              VD && VD->hasAttr<CUDASharedAttr>())
            Found = VD;
      return true;
    }
  } F;
  F.TraverseStmt(Def->getBody());
  return F.Found;
}

/// The `__shared__` variable a pointer initializer leads to through a call
/// or a helper object's conversion to a pointer (`T *s = SharedMemory<T>()`,
/// also inside a template where the conversion is not yet resolved).
const VarDecl *sharedVarBehind(const Expr *Init) {
  const Expr *E = Init->IgnoreParenCasts();
  while (true) {
    if (const auto *M = dyn_cast<MaterializeTemporaryExpr>(E))
      E = M->getSubExpr()->IgnoreParenCasts();
    else if (const auto *B = dyn_cast<CXXBindTemporaryExpr>(E))
      E = B->getSubExpr()->IgnoreParenCasts();
    else
      break;
  }
  if (const auto *C = dyn_cast<CallExpr>(E))
    return returnedSharedVar(C->getDirectCallee());
  // A helper object: its class's conversion to a pointer.
  QualType T = E->getType();
  if (const auto *U = dyn_cast<CXXUnresolvedConstructExpr>(E))
    T = U->getTypeAsWritten();
  const CXXRecordDecl *RD = T->getAsCXXRecordDecl();
  if (!RD)
    if (const auto *TST = T->getAs<TemplateSpecializationType>())
      if (const auto *CTD = dyn_cast_or_null<ClassTemplateDecl>(
              TST->getTemplateName().getAsTemplateDecl()))
        RD = CTD->getTemplatedDecl();
  if (!RD || !RD->hasDefinition())
    return nullptr;
  for (const Decl *D : RD->getDefinition()->decls()) {
    const auto *Conv = dyn_cast<CXXConversionDecl>(D);
    if (const auto *FT = dyn_cast<FunctionTemplateDecl>(D))
      Conv = dyn_cast<CXXConversionDecl>(FT->getTemplatedDecl());
    if (Conv && Conv->getConversionType()->isPointerType())
      if (const VarDecl *V = returnedSharedVar(Conv))
        return V;
  }
  return nullptr;
}

bool isMathFunction(StringRef Name) {
  static const StringSet<> Names = {
      "exp",       "expf",       "exp2",        "exp2f",    "expm1",
      "expm1f",    "log",        "logf",        "log2",     "log2f",
      "log10",     "log10f",     "log1p",       "log1pf",   "sqrt",
      "sqrtf",     "rsqrt",      "rsqrtf",      "cbrt",     "cbrtf",
      "pow",       "powf",       "sin",         "sinf",     "cos",
      "cosf",      "tan",        "tanf",        "sincos",   "sincosf",
      "tanh",      "tanhf",      "erf",         "erff",     "erfc",
      "erfcf",     "fabs",       "fabsf",       "fmax",     "fmaxf",
      "fmin",      "fminf",      "fma",         "fmaf",     "floor",
      "floorf",    "ceil",       "ceilf",       "round",    "roundf",
      "atan",      "atanf",      "atan2",       "atan2f",   "asin",
      "asinf",     "acos",       "acosf",       "hypot",    "hypotf",
      "__expf",    "__logf",     "__sinf",      "__cosf",   "__powf",
      "__tanf",    "__exp10f",   "__log2f",     "__log10f", "__fdividef",
      "__frcp_rn", "__fsqrt_rn", "__saturatef", "__sincosf"};
  return Names.contains(Name);
}

bool isWarpPrimitive(StringRef Name) {
  return Name.starts_with("__shfl") || Name == "__syncwarp" ||
         Name.starts_with("__ballot") || Name.starts_with("__any_sync") ||
         Name.starts_with("__all_sync") || Name == "__activemask" ||
         Name.starts_with("__reduce_") || Name.starts_with("__match_");
}

bool isAtomic(StringRef Name) { return Name.starts_with("atomic"); }

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
