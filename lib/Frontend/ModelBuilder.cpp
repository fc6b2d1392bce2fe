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
  if (!Elem->isDependentType() && !Elem->isIncompleteType() &&
      !Elem->isVoidType())
    Info.ElementSize = Ctx.getTypeSizeInChars(Elem).getQuantity();
  const Type *Canon = Elem.getCanonicalType().getTypePtr();
  Info.IsFloat = Canon->isFloatingType();
  return Info;
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
        for (const NamedDecl *D : Dependent->decls()) {
          const NamedDecl *U = D->getUnderlyingDecl();
          if (const auto *FT = dyn_cast<FunctionTemplateDecl>(U))
            U = FT->getTemplatedDecl();
          if (const auto *FD = dyn_cast<FunctionDecl>(U); FD && isKernel(FD)) {
            Pattern = patternOf(FD);
            break;
          }
        }
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
    auto ConfigArg = [&](unsigned I, std::string &Text, SourceSpan *Span) {
      if (!Cfg || I >= Cfg->getNumArgs())
        return;
      const Expr *A = Cfg->getArg(I);
      if (isa<CXXDefaultArgExpr>(A))
        return;
      if (auto FS = fileSpan(SM, LO, A->getSourceRange())) {
        Text = sourceText(SM, LO, A->getSourceRange());
        if (Span)
          *Span = *FS;
      } else {
        // Written inside a macro body: show it with the macro's arguments
        // substituted.
        raw_string_ostream OS(Text);
        A->printPretty(OS, nullptr, PrintingPolicy(LO));
      }
    };
    ConfigArg(0, S.Grid, &S.GridRange);
    ConfigArg(1, S.Block, &S.BlockRange);
    ConfigArg(2, S.Shared, nullptr);
    ConfigArg(3, S.Stream, nullptr);
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
  }
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
