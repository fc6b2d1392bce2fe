//===- ModelBuilder.cpp - Build the kernel model from a clang AST ---------===//
//
// Finds the kernels of a translation unit and their launches, and builds the
// kernel model: each kernel body is walked by the analyzer
// (KernelAnalyzer.cpp) and classified (KernelClassify.cpp).
//
//===----------------------------------------------------------------------===//

#include "optiml/Frontend/ModelBuilder.h"
#include "ModelBuilderInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecordLayout.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Index/USRGeneration.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
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
// Kernel discovery.
//===----------------------------------------------------------------------===//

namespace {

const FunctionDecl *kernelNamedBy(const Expr *E);

/// Definitions of kernels in the user's files (the main file and the
/// user files it includes), and every launch in them.
class Collector : public RecursiveASTVisitor<Collector> {
public:
  explicit Collector(ASTContext &Ctx) : SM(Ctx.getSourceManager()) {}

  bool shouldVisitTemplateInstantiations() const { return false; }

  bool VisitFunctionDecl(FunctionDecl *FD) {
    if (!isKernel(FD) || !FD->doesThisDeclarationHaveABody())
      return true;
    if (FD->isTemplateInstantiation())
      return true;
    if (!isUser(SM.getExpansionLoc(FD->getLocation())))
      return true;
    Kernels.push_back(FD);
    return true;
  }

  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *K) {
    if (!isUser(SM.getExpansionLoc(K->getBeginLoc())))
      return true;
    Launches.push_back({K, CurrentFunction});
    LaunchCallees.insert(K->getCallee()->IgnoreParenImpCasts());
    return true;
  }

  // References to kernels other than a launch's callee (filtered once the
  // traversal is done): an address stored or passed on.
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (const auto *FD = dyn_cast<FunctionDecl>(E->getDecl());
        FD && isKernel(FD))
      KernelRefs.push_back(E);
    return true;
  }
  bool VisitUnresolvedLookupExpr(UnresolvedLookupExpr *E) {
    if (kernelNamedBy(E))
      KernelRefs.push_back(E);
    return true;
  }
  bool VisitCallExpr(CallExpr *C) {
    // The function called: declared, or named in a template's dependent
    // call.
    std::string Callee;
    if (const FunctionDecl *FD = C->getDirectCallee())
      Callee = FD->getNameAsString();
    else if (const auto *U =
                 dyn_cast<OverloadExpr>(C->getCallee()->IgnoreParenImpCasts()))
      Callee = U->getName().getAsString();
    if (Callee.empty() || isa<CUDAKernelCallExpr>(C))
      return true;
    for (const Expr *A : C->arguments()) {
      A = A->IgnoreParenCasts();
      if (const auto *U = dyn_cast<UnaryOperator>(A);
          U && U->getOpcode() == UO_AddrOf)
        A = U->getSubExpr()->IgnoreParenCasts();
      PassedTo[A] = Callee;
    }
    return true;
  }

  bool TraverseFunctionDecl(FunctionDecl *FD) {
    const FunctionDecl *Saved = CurrentFunction;
    CurrentFunction = FD;
    bool R = RecursiveASTVisitor::TraverseFunctionDecl(FD);
    CurrentFunction = Saved;
    return R;
  }
  bool TraverseCXXMethodDecl(CXXMethodDecl *FD) {
    const FunctionDecl *Saved = CurrentFunction;
    CurrentFunction = FD;
    bool R = RecursiveASTVisitor::TraverseCXXMethodDecl(FD);
    CurrentFunction = Saved;
    return R;
  }

  struct Launch {
    const CUDAKernelCallExpr *Call;
    const FunctionDecl *Caller;
  };
  std::vector<const FunctionDecl *> Kernels;
  std::vector<Launch> Launches;
  std::vector<const Expr *> KernelRefs;
  DenseSet<const Expr *> LaunchCallees;
  DenseMap<const Expr *, std::string> PassedTo; ///< call arguments

private:
  bool isUser(SourceLocation Loc) {
    FileID F = SM.getFileID(Loc);
    auto [It, New] = UserFiles.try_emplace(F, false);
    if (New)
      It->second = isUserFile(SM, F);
    return It->second;
  }
  const SourceManager &SM;
  const FunctionDecl *CurrentFunction = nullptr;
  DenseMap<FileID, bool> UserFiles;
};

/// The kernel a reference names (the pattern of a specialization; the
/// template a dependent name can only mean), or null.
const FunctionDecl *patternOf(const FunctionDecl *FD);
const FunctionDecl *kernelNamedBy(const Expr *E) {
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
    return patternOf(dyn_cast<FunctionDecl>(DRE->getDecl()));
  if (const auto *ULE = dyn_cast<UnresolvedLookupExpr>(E))
    for (const NamedDecl *D : ULE->decls()) {
      const NamedDecl *U = D->getUnderlyingDecl();
      if (const auto *FT = dyn_cast<FunctionTemplateDecl>(U))
        U = FT->getTemplatedDecl();
      if (const auto *FD = dyn_cast<FunctionDecl>(U); FD && isKernel(FD))
        return patternOf(FD);
    }
  return nullptr;
}

/// Every reference to a kernel that is not a launch's callee, in source
/// order, as the kernel's AddressTaken.
void recordAddressUses(const Collector &C, const SourceManager &SM,
                       const DenseMap<const FunctionDecl *, size_t> &Index,
                       KernelModel &M) {
  std::vector<const Expr *> Refs;
  for (const Expr *E : C.KernelRefs)
    if (!C.LaunchCallees.contains(E))
      Refs.push_back(E);
  std::sort(Refs.begin(), Refs.end(), [&](const Expr *A, const Expr *B) {
    return SM.isBeforeInTranslationUnit(SM.getExpansionLoc(A->getBeginLoc()),
                                        SM.getExpansionLoc(B->getBeginLoc()));
  });
  for (const Expr *E : Refs) {
    auto It = Index.find(kernelNamedBy(E));
    if (It == Index.end())
      continue;
    SourceLocation Loc = SM.getExpansionLoc(E->getBeginLoc());
    AddressUse U;
    U.File = filePath(SM, SM.getFileID(Loc));
    U.Pos = {SM.getExpansionLineNumber(Loc), SM.getExpansionColumnNumber(Loc),
             SM.getFileOffset(Loc)};
    U.PassedTo = C.PassedTo.lookup(E);
    M.Kernels[It->second].AddressTaken.push_back(std::move(U));
  }
}

/// The kernel definition a launch calls: the template pattern for a
/// specialization.
const FunctionDecl *patternOf(const FunctionDecl *FD) {
  if (!FD)
    return nullptr;
  if (const FunctionDecl *P = FD->getTemplateInstantiationPattern())
    FD = P;
  if (const FunctionDecl *Def = FD->getDefinition())
    FD = Def;
  return FD->getCanonicalDecl();
}

std::string printName(const FunctionDecl *FD, bool WithTemplateArgs) {
  std::string S;
  raw_string_ostream OS(S);
  PrintingPolicy PP(FD->getASTContext().getLangOpts());
  PP.SuppressUnwrittenScope = true;
  if (WithTemplateArgs)
    FD->getNameForDiagnostic(OS, PP, /*Qualified=*/true);
  else
    OS << FD->getQualifiedNameAsString();
  return S;
}

//===----------------------------------------------------------------------===//
// Building kernels.
//===----------------------------------------------------------------------===//

/// The pointer members of struct \p RT at \p Base bytes, nested structs
/// and their members included (arrays of pointers are not followed); false
/// where a member's place is not a multiple of 8 bytes.
bool pointerFields(ASTContext &Ctx, const RecordType *RT, uint64_t Base,
                   const std::string &Prefix, std::vector<PointerField> &Out) {
  const RecordDecl *RD = RT->getDecl()->getDefinition();
  if (!RD || RD->isInvalidDecl() || RD->isUnion())
    return true;
  const ASTRecordLayout &Layout = Ctx.getASTRecordLayout(RD);
  if (const auto *CRD = dyn_cast<CXXRecordDecl>(RD))
    if (CRD->getNumBases() || CRD->isPolymorphic())
      return false;
  PrintingPolicy PP(Ctx.getLangOpts());
  for (const FieldDecl *F : RD->fields()) {
    uint64_t Off = Base + Ctx.toCharUnitsFromBits(
                                 Layout.getFieldOffset(F->getFieldIndex()))
                              .getQuantity();
    QualType T = F->getType().getCanonicalType();
    std::string Name = Prefix + F->getNameAsString();
    if (const auto *Inner = T->getAs<RecordType>()) {
      if (!pointerFields(Ctx, Inner, Off, Name + ".", Out))
        return false;
      continue;
    }
    if (!T->isPointerType())
      continue;
    if (Off % 8)
      return false;
    QualType Pointee = T->getPointeeType();
    PointerField PF;
    PF.Offset = static_cast<unsigned>(Off);
    PF.Name = Name;
    PF.InnerType = Pointee.getUnqualifiedType().getAsString(PP);
    if (!Pointee->isIncompleteType() && !Pointee->isVoidType() &&
        !Pointee->isFunctionType())
      PF.InnerSize = Ctx.getTypeSizeInChars(Pointee).getQuantity();
    PF.InnerIsFloat = Pointee->isFloatingType();
    Out.push_back(std::move(PF));
  }
  return true;
}

ParamInfo describeParam(ASTContext &Ctx, const ParmVarDecl *P) {
  ParamInfo Info;
  PrintingPolicy PP(Ctx.getLangOpts());
  PP.SuppressTagKeyword = true;
  Info.Index = P->getFunctionScopeIndex();
  Info.Name = P->getNameAsString();
  QualType T = P->getType();
  Info.Type = T.getAsString(PP);
  QualType Elem = T;
  if (T->isPointerType()) {
    Info.IsPointer = true;
    Info.IsRestrict = T.isRestrictQualified();
    Elem = T->getPointeeType();
    Info.IsConst = Elem.isConstQualified();
  } else {
    Info.IsConst = T.isConstQualified();
  }
  Info.ElementType = Elem.getUnqualifiedType().getAsString(PP);
  Info.CanonicalElementType =
      Elem.getCanonicalType().getUnqualifiedType().getAsString(PP);
  if (!Elem->isDependentType() && !Elem->isIncompleteType() &&
      !Elem->isVoidType())
    Info.ElementSize = Ctx.getTypeSizeInChars(Elem).getQuantity();
  const Type *Canon = Elem.getCanonicalType().getTypePtr();
  Info.IsFloat = Canon->isFloatingType();
  if (Info.IsPointer && Elem->isPointerType()) {
    QualType Inner = Elem->getPointeeType();
    Info.ElementIsPointer = true;
    // Canonical: the probe reads scalars by name (`real` of `typedef float
    // real` is a float); a dependent one as written (`T`, not its canonical
    // `type-parameter-0-0`).
    Info.InnerElementType =
        (Inner->isDependentType() ? Inner : Inner.getCanonicalType())
            .getUnqualifiedType()
            .getAsString(PP);
    if (!Inner->isDependentType() && !Inner->isIncompleteType() &&
        !Inner->isVoidType())
      Info.InnerElementSize = Ctx.getTypeSizeInChars(Inner).getQuantity();
    Info.InnerIsFloat = Inner.getCanonicalType()->isFloatingType();
  }
  if (const auto *RT = Elem.getCanonicalType()->getAs<RecordType>();
      RT && Info.IsPointer && Info.ElementSize && Info.ElementSize % 8 == 0 &&
      !pointerFields(Ctx, RT, 0, "", Info.ElementPointerFields))
    Info.ElementPointerFields.clear();
  return Info;
}

/// For each parameter of the kernel template \p FT whose element type is
/// dependent, the element every specialization gives it when all agree.
void resolveInstanceElements(ASTContext &Ctx, const FunctionTemplateDecl &FT,
                             KernelInfo &K) {
  for (ParamInfo &Par : K.Params) {
    if (Par.ElementSize != 0)
      continue;
    std::optional<ParamInfo> Agreed;
    bool Differ = false;
    for (const FunctionDecl *Spec : FT.specializations()) {
      if (Par.Index >= Spec->getNumParams())
        continue;
      ParamInfo I = describeParam(Ctx, Spec->getParamDecl(Par.Index));
      if (I.ElementSize == 0 || I.IsPointer != Par.IsPointer)
        Differ = true;
      else if (!Agreed)
        Agreed = I;
      else
        Differ |= I.ElementType != Agreed->ElementType ||
                  I.ElementSize != Agreed->ElementSize ||
                  I.InnerElementType != Agreed->InnerElementType;
    }
    if (!Agreed || Differ)
      continue;
    Par.InstanceElementType = Agreed->ElementType;
    Par.InstanceElementSize = Agreed->ElementSize;
    Par.InstanceIsFloat = Agreed->IsFloat;
    // An array of pointers to T (`const T *const *a`): what the pointers
    // point to is what every specialization gives T.
    if (Par.ElementIsPointer && Par.InnerElementSize == 0 &&
        Agreed->ElementIsPointer && Agreed->InnerElementSize != 0) {
      Par.InnerElementType = Agreed->InnerElementType;
      Par.InnerElementSize = Agreed->InnerElementSize;
      Par.InnerIsFloat = Agreed->InnerIsFloat;
    }
  }
}

SourceSpan spanOrBegin(const SourceManager &SM, const LangOptions &LO,
                       SourceRange R) {
  if (auto S = fileSpan(SM, LO, R))
    return *S;
  SourceSpan S;
  CharSourceRange E = SM.getExpansionRange(R);
  S.Begin = filePos(SM, E.getBegin());
  S.End = filePos(SM, Lexer::getLocForEndOfToken(E.getEnd(), 0, SM, LO));
  return S;
}

/// How many times the body of the `#define` that spells \p Param (a
/// parameter named in a macro's body) names that parameter, `#` and `##`
/// included; 0 if the definition cannot be read.
unsigned parameterUses(const SourceManager &SM, const LangOptions &LO,
                       SourceLocation Param) {
  Param = SM.getSpellingLoc(Param);
  auto [FID, Off] = SM.getDecomposedLoc(Param);
  bool Invalid = false;
  StringRef Buf = SM.getBufferData(FID, &Invalid);
  if (Invalid || Off >= Buf.size())
    return 0;
  StringRef Name = Buf.substr(Off, Lexer::MeasureTokenLength(Param, SM, LO));
  // The directive starts on the first of the lines joined by backslashes.
  size_t Start = Buf.rfind('\n', Off);
  Start = Start == StringRef::npos ? 0 : Start + 1;
  while (Start > 1 && Buf.substr(0, Start - 1).rtrim('\r').ends_with("\\")) {
    size_t Prev = Buf.rfind('\n', Start - 2);
    Start = Prev == StringRef::npos ? 0 : Prev + 1;
  }
  Lexer Lex(SM.getLocForStartOfFile(FID), LO, Buf.begin(), Buf.begin() + Start,
            Buf.end());
  Token T;
  auto Next = [&] {
    Lex.LexFromRawLexer(T);
    return T.isNot(tok::eof);
  };
  auto Is = [&](StringRef Id) {
    return T.is(tok::raw_identifier) && T.getRawIdentifier() == Id;
  };
  if (!Next() || T.isNot(tok::hash) || !Next() || !Is("define") || !Next() ||
      !Next() || T.isNot(tok::l_paren))
    return 0;
  while (Next() && !T.isAtStartOfLine() && T.isNot(tok::r_paren))
    ;
  if (T.isNot(tok::r_paren))
    return 0;
  unsigned Uses = 0;
  while (Next() && !T.isAtStartOfLine())
    Uses += Is(Name);
  return Uses;
}

/// Whether the expression at \p R, in a launch written through a
/// function-like macro, is spelled in place by one argument of the macro's
/// invocation: its tokens come from the same use of the argument, its ends
/// are written in the invocation itself (a token, or the whole of a macro
/// invoked there; not in another macro's body nor passed on through
/// another macro), and the macro's body uses the parameter once. Rewriting
/// that spelling rewrites this expression and nothing else: macros invoked
/// inside the argument (`LAUNCH(k, (N + 255) / 256, ...)`, `LAUNCH(k,
/// DIV_UP(n, 256), ...)`) are replaced with it, where they are written.
bool spelledOnceAsArgument(const SourceManager &SM, const LangOptions &LO,
                           SourceRange R) {
  SourceLocation B = R.getBegin(), E = R.getEnd();
  if (!B.isMacroID() || !E.isMacroID() || !SM.isMacroArgExpansion(B) ||
      !SM.isMacroArgExpansion(E))
    return false;
  // The same use of the parameter in the body: clang gives each run of the
  // argument's tokens between the macros expanded inside it its own
  // expansion, all starting at that use.
  SourceLocation Use = SM.getImmediateExpansionRange(B).getBegin();
  if (Use != SM.getImmediateExpansionRange(E).getBegin())
    return false;
  // Its ends written in the invocation, or at the edges of macros invoked
  // there (`(N + 255) / 256`, `BIG / 32`, `DIV_UP(n, 256)`).
  SourceLocation SB = SM.getImmediateSpellingLoc(B);
  SourceLocation SE = SM.getImmediateSpellingLoc(E);
  if (SB.isMacroID() && !Lexer::isAtStartOfMacroExpansion(SB, SM, LO, &SB))
    return false;
  if (SE.isMacroID() && !Lexer::isAtEndOfMacroExpansion(SE, SM, LO, &SE))
    return false;
  CharSourceRange Invocation = SM.getExpansionRange(B);
  if (!SB.isFileID() || !SE.isFileID() || !Invocation.getBegin().isFileID() ||
      !SM.isPointWithin(SB, Invocation.getBegin(), Invocation.getEnd()) ||
      !SM.isPointWithin(SE, Invocation.getBegin(), Invocation.getEnd()))
    return false;
  return parameterUses(SM, LO, Use) == 1;
}

/// The expression a launch through a macro spells for \p E, a config
/// argument: E without the implicit conversion to dim3 and the parentheses
/// the macro's body puts around an argument (`k<<<(g), (b)>>>`), which stay
/// as they are when the argument is rewritten.
const Expr *argumentInBodyParens(const SourceManager &SM, const Expr *E) {
  while (true) {
    const Expr *X = E->IgnoreImplicit();
    if (const auto *CE = dyn_cast<CXXConstructExpr>(X);
        CE && !isa<CXXTemporaryObjectExpr>(CE) && CE->getNumArgs() >= 1 &&
        CE->getParenOrBraceRange().isInvalid() &&
        all_of(drop_begin(CE->arguments()),
               [](const Expr *D) { return isa<CXXDefaultArgExpr>(D); }))
      X = CE->getArg(0)->IgnoreImplicit();
    const auto *P = dyn_cast<ParenExpr>(X);
    auto FromBody = [&](SourceLocation L) {
      return L.isMacroID() && !SM.isMacroArgExpansion(L);
    };
    if (!P || !FromBody(P->getLParen()) || !FromBody(P->getRParen()))
      return E;
    E = P->getSubExpr();
  }
}

} // namespace

KernelModel buildKernelModel(ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  const LangOptions &LO = Ctx.getLangOpts();
  Collector C(Ctx);
  traverseUserCode(C, Ctx);

  KernelModel M;
  DenseMap<const FunctionDecl *, size_t> Index;
  for (const FunctionDecl *FD : C.Kernels) {
    KernelInfo K;
    K.Name = FD->getNameAsString();
    K.QualifiedName = FD->getQualifiedNameAsString();
    SmallString<128> USR;
    if (!index::generateUSRForDecl(FD, USR))
      K.USR = std::string(USR);
    K.File = filePath(SM, SM.getFileID(SM.getExpansionLoc(FD->getLocation())));
    K.Range = spanOrBegin(SM, LO, FD->getSourceRange());
    if (FD->getBody())
      K.BodyRange = spanOrBegin(SM, LO, FD->getBody()->getSourceRange());
    K.InMacro = FD->getLocation().isMacroID();
    if (const FunctionTemplateDecl *T = FD->getDescribedFunctionTemplate()) {
      K.IsTemplate = true;
      for (const NamedDecl *P : *T->getTemplateParameters())
        K.TemplateParams.push_back(P->getNameAsString());
    }
    if (const auto *LB = FD->getAttr<CUDALaunchBoundsAttr>()) {
      K.LaunchBounds.push_back(
          sourceText(SM, LO, LB->getMaxThreads()->getSourceRange()));
      if (LB->getMinBlocks())
        K.LaunchBounds.push_back(
            sourceText(SM, LO, LB->getMinBlocks()->getSourceRange()));
    }
    for (const ParmVarDecl *P : FD->parameters())
      K.Params.push_back(describeParam(Ctx, P));
    analyzeKernelBody(Ctx, K, FD);
    for (const MemoryAccess &A : K.Accesses)
      if (A.ParamIndex >= 0 && size_t(A.ParamIndex) < K.Params.size()) {
        K.Params[A.ParamIndex].Read |= A.IsRead;
        K.Params[A.ParamIndex].Written |= A.IsWrite;
      }
    classify(K, FD);
    Index[FD->getCanonicalDecl()] = M.Kernels.size();
    M.Kernels.push_back(std::move(K));
  }

  // Launch sites, in source order, numbered per kernel.
  std::vector<Collector::Launch> Launches = C.Launches;
  // Launches are collected in traversal order; sort by position (distinct
  // launches never share a begin location).
  std::sort(Launches.begin(), Launches.end(),
            [&](const Collector::Launch &A, const Collector::Launch &B) {
              return SM.isBeforeInTranslationUnit(
                  SM.getExpansionLoc(A.Call->getBeginLoc()),
                  SM.getExpansionLoc(B.Call->getBeginLoc()));
            });
  for (const Collector::Launch &L : Launches) {
    const FunctionDecl *Callee = L.Call->getDirectCallee();
    const FunctionDecl *Pattern = patternOf(Callee);
    // In a template host function, `k<T><<<...>>>` names the kernel through
    // an unresolved lookup: find the kernel template it can only mean.
    const UnresolvedLookupExpr *Dependent = nullptr;
    if (!Callee) {
      Dependent = dyn_cast<UnresolvedLookupExpr>(
          L.Call->getCallee()->IgnoreParenImpCasts());
      if (Dependent)
        Pattern = kernelNamedBy(Dependent);
    }
    auto It = Index.find(Pattern);
    if (It == Index.end())
      continue;
    KernelInfo &K = M.Kernels[It->second];
    LaunchSite S;
    S.Kernel = K.QualifiedName;
    S.Id = K.QualifiedName + "/launch" + std::to_string(K.Launches.size());
    if (L.Caller)
      S.Caller = L.Caller->getQualifiedNameAsString();
    S.File =
        filePath(SM, SM.getFileID(SM.getExpansionLoc(L.Call->getBeginLoc())));
    S.Range = spanOrBegin(SM, LO, L.Call->getSourceRange());
    S.InMacro = L.Call->getBeginLoc().isMacroID();
    const CallExpr *Cfg = L.Call->getConfig();
    FileID LaunchFile = SM.getFileID(SM.getExpansionLoc(L.Call->getBeginLoc()));
    auto ConfigArg = [&](unsigned I, std::string &Text, SourceSpan *Span,
                         bool *InPlace) {
      if (!Cfg || I >= Cfg->getNumArgs())
        return;
      const Expr *A = Cfg->getArg(I);
      if (isa<CXXDefaultArgExpr>(A))
        return;
      if (auto FS = fileSpan(SM, LO, A->getSourceRange())) {
        Text = sourceText(SM, LO, A->getSourceRange());
        if (Span)
          *Span = *FS;
        if (InPlace)
          *InPlace = fileSpan(SM, LO, A->getSourceRange(), LaunchFile) &&
                     (!S.InMacro ||
                      spelledOnceAsArgument(SM, LO, A->getSourceRange()));
      } else {
        // Through a macro, the argument inside the body's parentheses.
        const Expr *Arg = argumentInBodyParens(SM, A);
        if (Arg != A && InPlace && Span &&
            spelledOnceAsArgument(SM, LO, Arg->getSourceRange()))
          if (auto AS = fileSpan(SM, LO, Arg->getSourceRange(), LaunchFile)) {
            *Span = *AS;
            *InPlace = true;
            // As the invocation writes it (macros in it unexpanded): text
            // put back in its place reads the same.
            Text = sourceText(SM, LO, Arg->getSourceRange());
            return;
          }
        // Written inside a macro body: show it with the macro's arguments
        // substituted.
        raw_string_ostream OS(Text);
        A->printPretty(OS, nullptr, PrintingPolicy(LO));
      }
    };
    ConfigArg(0, S.Grid, &S.GridRange, &S.GridInPlace);
    ConfigArg(1, S.Block, &S.BlockRange, &S.BlockInPlace);
    ConfigArg(2, S.Shared, nullptr, nullptr);
    ConfigArg(3, S.Stream, nullptr, nullptr);
    for (const Expr *A : L.Call->arguments())
      S.Args.push_back(sourceText(SM, LO, A->getSourceRange()));
    if (Dependent)
      for (const TemplateArgumentLoc &Arg : Dependent->template_arguments())
        S.TemplateArgs.push_back(sourceText(SM, LO, Arg.getSourceRange()));
    if (Callee) {
      if (const TemplateArgumentList *TA =
              Callee->getTemplateSpecializationArgs()) {
        PrintingPolicy PP(LO);
        for (const TemplateArgument &Arg : TA->asArray()) {
          std::string Str;
          raw_string_ostream OS(Str);
          Arg.print(PP, OS, /*IncludeType=*/false);
          S.TemplateArgs.push_back(OS.str());
        }
        std::string Inst = printName(Callee, /*WithTemplateArgs=*/true);
        if (std::find(K.Instantiations.begin(), K.Instantiations.end(), Inst) ==
            K.Instantiations.end())
          K.Instantiations.push_back(Inst);
      }
    }
    K.Launches.push_back(std::move(S));
  }

  // Instantiations launched from template host functions are only seen as
  // specializations of the kernel template.
  for (size_t I = 0; I < C.Kernels.size(); ++I) {
    const FunctionTemplateDecl *FT =
        C.Kernels[I]->getDescribedFunctionTemplate();
    if (!FT)
      continue;
    KernelInfo &K = M.Kernels[I];
    for (const FunctionDecl *Spec : FT->specializations()) {
      std::string Inst = printName(Spec, /*WithTemplateArgs=*/true);
      if (std::find(K.Instantiations.begin(), K.Instantiations.end(), Inst) ==
          K.Instantiations.end())
        K.Instantiations.push_back(Inst);
    }
    resolveInstanceElements(Ctx, *FT, K);
  }
  recordAddressUses(C, SM, Index, M);
  return M;
}

const FunctionDecl *findKernelDecl(ASTContext &Ctx, StringRef QualifiedName) {
  Collector C(Ctx);
  traverseUserCode(C, Ctx);
  for (const FunctionDecl *FD : C.Kernels)
    if (FD->getQualifiedNameAsString() == QualifiedName)
      return FD;
  return nullptr;
}

namespace {
/// Numbers loops exactly as KernelAnalyzer does and stops at one id.
class LoopFinder : public RecursiveASTVisitor<LoopFinder> {
public:
  LoopFinder(std::string KernelName, StringRef Target)
      : KernelName(std::move(KernelName)), Target(Target) {}
  bool shouldVisitTemplateInstantiations() const { return false; }

  bool TraverseForStmt(ForStmt *S) { return loop(S); }
  bool TraverseWhileStmt(WhileStmt *S) { return loop(S); }
  bool TraverseDoStmt(DoStmt *S) { return loop(S); }
  bool TraverseCXXForRangeStmt(CXXForRangeStmt *S) { return loop(S); }

  const Stmt *Found = nullptr;

private:
  bool loop(Stmt *S) {
    std::string Parent = Stack.empty() ? "" : Stack.back();
    unsigned Ordinal = Count[Parent]++;
    std::string Id = Parent.empty()
                         ? KernelName + "/loop" + std::to_string(Ordinal)
                         : Parent + "." + std::to_string(Ordinal);
    if (Id == Target) {
      Found = S;
      return false;
    }
    Stack.push_back(Id);
    bool R = true;
    if (auto *F = dyn_cast<ForStmt>(S))
      R = RecursiveASTVisitor::TraverseForStmt(F);
    else if (auto *W = dyn_cast<WhileStmt>(S))
      R = RecursiveASTVisitor::TraverseWhileStmt(W);
    else if (auto *D = dyn_cast<DoStmt>(S))
      R = RecursiveASTVisitor::TraverseDoStmt(D);
    else
      R = RecursiveASTVisitor::TraverseCXXForRangeStmt(
          cast<CXXForRangeStmt>(S));
    Stack.pop_back();
    return R;
  }

  std::string KernelName;
  std::string Target;
  std::vector<std::string> Stack;
  std::map<std::string, unsigned> Count;
};
} // namespace

const Stmt *findLoopStmt(const FunctionDecl *Kernel, StringRef LoopId) {
  if (!Kernel || !Kernel->getBody())
    return nullptr;
  LoopFinder F(Kernel->getQualifiedNameAsString(), LoopId);
  F.TraverseStmt(const_cast<Stmt *>(Kernel->getBody()));
  return F.Found;
}

//===----------------------------------------------------------------------===//
// KernelModel lookups and names.
//===----------------------------------------------------------------------===//

const KernelInfo *KernelModel::findKernel(const std::string &Name) const {
  for (const KernelInfo &K : Kernels)
    if (K.QualifiedName == Name)
      return &K;
  return nullptr;
}

const LaunchSite *KernelModel::findLaunch(const std::string &Id) const {
  for (const KernelInfo &K : Kernels)
    for (const LaunchSite &L : K.Launches)
      if (L.Id == Id)
        return &L;
  return nullptr;
}

const LoopInfo *KernelModel::findLoop(const std::string &Id) const {
  for (const KernelInfo &K : Kernels)
    for (const LoopInfo &L : K.Loops)
      if (L.Id == Id)
        return &L;
  return nullptr;
}

const char *toString(KernelClass C) {
  switch (C) {
  case KernelClass::Map:
    return "map";
  case KernelClass::Reduction:
    return "reduction";
  case KernelClass::Stencil:
    return "stencil";
  case KernelClass::MatmulLike:
    return "matmul-like";
  case KernelClass::GatherScatter:
    return "gather-scatter";
  }
  return "map";
}

const char *toString(Coalescing C) {
  switch (C) {
  case Coalescing::Unit:
    return "coalesced";
  case Coalescing::Uniform:
    return "uniform";
  case Coalescing::Strided:
    return "strided";
  case Coalescing::Unknown:
    return "unknown";
  }
  return "unknown";
}

const char *toString(AddressSpace S) {
  switch (S) {
  case AddressSpace::Global:
    return "global";
  case AddressSpace::Shared:
    return "shared";
  case AddressSpace::Local:
    return "local";
  }
  return "global";
}

} // namespace optiml
