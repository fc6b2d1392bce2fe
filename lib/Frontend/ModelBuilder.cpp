//===- ModelBuilder.cpp - Build the kernel model from a clang AST ---------===//
//
// Walks each kernel body once, in source order, recording loops, memory
// accesses and calls. The coalescing analysis computes, for each index
// expression, its coefficient in threadIdx.x (see coefficientOf).
//
//===----------------------------------------------------------------------===//

#include "optiml/Frontend/ModelBuilder.h"
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
// Small AST helpers shared with the edit library (ModelBuilderInternal.h).
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
  CharSourceRange CR = Lexer::makeFileCharRange(
      CharSourceRange::getTokenRange(R), SM, LO);
  if (CR.isInvalid()) {
    // Inside a macro body: the text as spelled in the macro's definition
    // when the range lies in one piece of it, else the expansion's text.
    SourceLocation B = SM.getSpellingLoc(R.getBegin());
    SourceLocation E = SM.getSpellingLoc(R.getEnd());
    if (SM.getFileID(B) == SM.getFileID(E) && !SM.isBeforeInTranslationUnit(E, B))
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
  CharSourceRange CR = Lexer::makeFileCharRange(
      CharSourceRange::getTokenRange(R), SM, LO);
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

bool isUserFile(const SourceManager &SM, FileID FID) {
  // The include chain is short; a parse asks for few distinct files.
  for (unsigned Depth = 0; FID.isValid() && Depth < 256; ++Depth) {
    if (FID == SM.getMainFileID())
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
  sys::fs::make_absolute(P);
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

FileID findFileID(const SourceManager &SM, StringRef Path) {
  SmallString<256> Want(Path);
  sys::fs::make_absolute(Want);
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
    FileID F = SM.getFileID(SourceLocation::getFromRawEncoding(
        Ent.getOffset()));
    if (F.isValid() && filePath(SM, F) == Want)
      return F;
  }
  return FileID();
}

std::vector<std::string> includeChain(const SourceManager &SM, FileID FID) {
  std::vector<std::string> Chain;
  while (FID.isValid() && FID != SM.getMainFileID()) {
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

static StringRef calleeName(const CallExpr *C) {
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
        if (const auto *D =
                dyn_cast<DeclRefExpr>(V->IgnoreParenCasts()))
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
      "exp",    "expf",   "exp2",   "exp2f",  "expm1",  "expm1f", "log",
      "logf",   "log2",   "log2f",  "log10",  "log10f", "log1p",  "log1pf",
      "sqrt",   "sqrtf",  "rsqrt",  "rsqrtf", "cbrt",   "cbrtf",  "pow",
      "powf",   "sin",    "sinf",   "cos",    "cosf",   "tan",    "tanf",
      "sincos", "sincosf", "tanh",  "tanhf",  "erf",    "erff",   "erfc",
      "erfcf",  "fabs",   "fabsf",  "fmax",   "fmaxf",  "fmin",   "fminf",
      "fma",    "fmaf",   "floor",  "floorf", "ceil",   "ceilf",  "round",
      "roundf", "atan",   "atanf",  "atan2",  "atan2f", "asin",   "asinf",
      "acos",   "acosf",  "hypot",  "hypotf", "__expf", "__logf", "__sinf",
      "__cosf", "__powf", "__tanf", "__exp10f", "__log2f", "__log10f",
      "__fdividef", "__frcp_rn", "__fsqrt_rn", "__saturatef", "__sincosf"};
  return Names.contains(Name);
}

static bool isWarpPrimitive(StringRef Name) {
  return Name.starts_with("__shfl") || Name == "__syncwarp" ||
         Name.starts_with("__ballot") || Name.starts_with("__any_sync") ||
         Name.starts_with("__all_sync") || Name == "__activemask" ||
         Name.starts_with("__reduce_") || Name.starts_with("__match_");
}

static bool isAtomic(StringRef Name) { return Name.starts_with("atomic"); }

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
// The coefficient of threadIdx.x in an index expression.
//===----------------------------------------------------------------------===//

struct Coef {
  enum Kind { Zero, Const, Symbolic, Unknown } K = Zero;
  int64_t C = 0;
  bool Indirect = false;

  static Coef zero() { return {}; }
  static Coef constant(int64_t C) {
    if (C == 0)
      return zero();
    Coef R;
    R.K = Const;
    R.C = C;
    return R;
  }
  static Coef symbolic() {
    Coef R;
    R.K = Symbolic;
    return R;
  }
  static Coef unknown(bool Indirect = false) {
    Coef R;
    R.K = Unknown;
    R.Indirect = Indirect;
    return R;
  }
};

Coef add(Coef A, Coef B, bool Subtract) {
  bool Ind = A.Indirect || B.Indirect;
  Coef R;
  if (A.K == Coef::Unknown || B.K == Coef::Unknown)
    R = Coef::unknown();
  else if (B.K == Coef::Zero)
    R = A;
  else if (A.K == Coef::Zero)
    R = Subtract ? (B.K == Coef::Const ? Coef::constant(-B.C) : B) : B;
  else if (A.K == Coef::Const && B.K == Coef::Const)
    R = Coef::constant(Subtract ? A.C - B.C : A.C + B.C);
  else
    R = Coef::symbolic();
  R.Indirect = Ind;
  return R;
}

/// Per-kernel facts the analysis consults while walking.
class KernelAnalyzer : public RecursiveASTVisitor<KernelAnalyzer> {
public:
  KernelAnalyzer(ASTContext &Ctx, KernelInfo &K, const FunctionDecl *FD)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), LO(Ctx.getLangOpts()), K(K),
        FD(FD) {}

  void run() {
    collectRoles(FD->getBody());
    TraverseStmt(FD->getBody());
  }

  bool shouldVisitTemplateInstantiations() const { return false; }

  //--- Loops -----------------------------------------------------------------

  bool TraverseAttributedStmt(AttributedStmt *S) {
    for (const Attr *A : S->getAttrs())
      if (const auto *LH = dyn_cast<LoopHintAttr>(A))
        if (LH->getOption() == LoopHintAttr::Unroll ||
            LH->getOption() == LoopHintAttr::UnrollCount)
          PendingUnroll = true;
    return RecursiveASTVisitor::TraverseAttributedStmt(S);
  }

  bool TraverseForStmt(ForStmt *S) { return traverseLoop(S, "for"); }
  bool TraverseWhileStmt(WhileStmt *S) { return traverseLoop(S, "while"); }
  bool TraverseDoStmt(DoStmt *S) { return traverseLoop(S, "do"); }
  bool TraverseCXXForRangeStmt(CXXForRangeStmt *S) {
    return traverseLoop(S, "range-for");
  }

  //--- Accesses and calls ----------------------------------------------------

  bool VisitArraySubscriptExpr(ArraySubscriptExpr *E) {
    // buf[a][b]: record the element access once, at the outermost
    // subscript; the inner `buf[a]` only selects a row.
    if (E->getType()->isArrayType())
      return true;
    if (const auto *Inner =
            dyn_cast<ArraySubscriptExpr>(E->getBase()->IgnoreParenImpCasts())) {
      recordMultiDim(E, Inner);
      return true;
    }
    recordAccess(E, E->getBase(), E->getIdx());
    return true;
  }

  bool VisitUnaryOperator(UnaryOperator *U) {
    if (U->getOpcode() != UO_Deref)
      return true;
    const Expr *Sub = U->getSubExpr()->IgnoreParenImpCasts();
    if (const auto *BO = dyn_cast<BinaryOperator>(Sub);
        BO && BO->isAdditiveOp() && BO->getOpcode() == BO_Add) {
      const Expr *L = BO->getLHS(), *R = BO->getRHS();
      if (R->getType()->isPointerType())
        std::swap(L, R);
      recordAccess(U, L, R);
    } else {
      recordAccess(U, Sub, nullptr);
    }
    return true;
  }

  bool VisitCallExpr(CallExpr *C) {
    if (isa<CUDAKernelCallExpr>(C))
      return true;
    StringRef Name = calleeName(C);
    if (Name.empty())
      return true;
    if (isAtomic(Name) && C->getNumArgs() > 0) {
      // atomicAdd(sum, v) and atomicAdd(p + i, v): the pointer is the access.
      const Expr *P = C->getArg(0)->IgnoreParenImpCasts();
      if (isa<DeclRefExpr>(P))
        recordAccess(P, P, nullptr);
      else if (const auto *BO = dyn_cast<BinaryOperator>(P);
               BO && BO->getOpcode() == BO_Add) {
        const Expr *L = BO->getLHS(), *R = BO->getRHS();
        if (R->getType()->isPointerType())
          std::swap(L, R);
        recordAccess(P, L, R);
      }
    }
    CallSite CS{Name.str(), filePos(SM, C->getBeginLoc()), currentLoop()};
    if (Name.starts_with("__syncthreads") ||
        isBlockBarrier(C->getDirectCallee()))
      K.Syncthreads.push_back(CS);
    else if (isAtomic(Name))
      K.Atomics.push_back(CS);
    else if (isMathFunction(Name))
      K.MathCalls.push_back(CS);
    else if (isWarpPrimitive(Name))
      K.WarpPrimitives.push_back(CS);
    else if (const FunctionDecl *Callee = C->getDirectCallee();
             Callee && Callee->hasAttr<CUDADeviceAttr>() &&
             !SM.isInSystemHeader(Callee->getLocation()) &&
             (SM.isInMainFile(SM.getExpansionLoc(Callee->getLocation())) ||
              // A helper the user wrote in a file the main file includes
              // (declarations of a toolkit stand-in are not helpers).
              (Callee->isDefined() &&
               isUserFile(SM, SM.getFileID(SM.getExpansionLoc(
                                  Callee->getDefinition()->getLocation()))))))
      K.DeviceCalls.push_back(CS);
    return true;
  }

  bool VisitVarDecl(VarDecl *VD) {
    if (VD->hasAttr<CUDASharedAttr>()) {
      SharedDecl S;
      S.Name = VD->getNameAsString();
      S.Type = VD->getType().getAsString(policy());
      QualType T = VD->getType();
      if (T->isIncompleteArrayType() || VD->hasExternalStorage())
        S.Dynamic = true;
      else if (!T->isDependentType() && !T->isIncompleteType())
        S.Bytes = Ctx.getTypeSizeInChars(T).getQuantity();
      K.Shared.push_back(std::move(S));
      SharedVars.insert(VD);
      return true;
    }
    // A local pointer to dynamic shared memory handed out by a helper
    // (`T *sdata = SharedMemory<T>();`): its accesses are shared ones.
    if (VD->getType()->isPointerType() && VD->hasInit() &&
        !Assigned.contains(VD))
      if (const VarDecl *Behind = sharedVarBehind(VD->getInit())) {
        SharedDecl S;
        S.Name = VD->getNameAsString();
        S.Type = VD->getType().getAsString(policy());
        S.Dynamic = Behind->hasExternalStorage() ||
                    Behind->getType()->isIncompleteArrayType();
        if (!S.Dynamic && !Behind->getType()->isDependentType())
          S.Bytes = Ctx.getTypeSizeInChars(Behind->getType()).getQuantity();
        K.Shared.push_back(std::move(S));
        SharedVars.insert(VD);
        return true;
      }
    // Local pointers into parameters: `const float *row = A + r * n;`
    if (VD->getType()->isPointerType() && VD->hasInit() &&
        !Assigned.contains(VD)) {
      const Expr *Init = VD->getInit()->IgnoreParenImpCasts();
      const Expr *Base = Init, *Offset = nullptr;
      if (const auto *BO = dyn_cast<BinaryOperator>(Init);
          BO && BO->getOpcode() == BO_Add) {
        Base = BO->getLHS();
        Offset = BO->getRHS();
        if (Offset->getType()->isPointerType())
          std::swap(Base, Offset);
      } else if (const auto *U = dyn_cast<UnaryOperator>(Init);
                 U && U->getOpcode() == UO_AddrOf) {
        if (const auto *AS =
                dyn_cast<ArraySubscriptExpr>(U->getSubExpr()->IgnoreParens())) {
          Base = AS->getBase();
          Offset = AS->getIdx();
        }
      }
      Base = Base->IgnoreParenImpCasts();
      if (const auto *DR = dyn_cast<DeclRefExpr>(Base))
        if (const auto *PVD = dyn_cast<ParmVarDecl>(DR->getDecl()))
          if (PVD->getType()->isPointerType())
            Aliases[VD] = {PVD, Offset};
    }
    return true;
  }

  bool VisitMemberExpr(MemberExpr *) { return true; }

  bool VisitPseudoObjectExpr(PseudoObjectExpr *E) {
    if (auto B = asBuiltinVar(E))
      if (B->Dim != 'x' && (B->Var == "threadIdx" || B->Var == "blockIdx"))
        K.Uses2DThreads = true;
    return true;
  }

private:
  struct Alias {
    const ParmVarDecl *Param;
    const Expr *Offset;
  };

  PrintingPolicy policy() const {
    PrintingPolicy PP(LO);
    PP.SuppressTagKeyword = true;
    return PP;
  }

  std::string currentLoop() const {
    return LoopStack.empty() ? "" : K.Loops[LoopStack.back()].Id;
  }

  std::string text(SourceRange R) const { return sourceText(SM, LO, R); }

  /// Which lvalues are written, read-modify-written, or atomically updated.
  void collectRoles(Stmt *Body) {
    struct RoleVisitor : RecursiveASTVisitor<RoleVisitor> {
      KernelAnalyzer &A;
      explicit RoleVisitor(KernelAnalyzer &A) : A(A) {}
      static const Expr *target(const Expr *E) {
        E = E->IgnoreParens();
        while (const auto *ME = dyn_cast<MemberExpr>(E))
          E = ME->getBase()->IgnoreParens();
        return E;
      }
      void noteVar(const Expr *E, const Expr *Value = nullptr) {
        if (const auto *DR = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
          if (const auto *VD = dyn_cast<VarDecl>(DR->getDecl())) {
            A.Assigned.insert(VD);
            if (Value)
              A.AssignedValues[VD].push_back(Value);
          }
      }
      bool VisitBinaryOperator(BinaryOperator *B) {
        if (B->getOpcode() == BO_Assign) {
          A.Writes.insert(target(B->getLHS()));
          noteVar(B->getLHS(), B->getRHS());
        }
        return true;
      }
      bool VisitCompoundAssignOperator(CompoundAssignOperator *B) {
        A.ReadWrites.insert(target(B->getLHS()));
        noteVar(B->getLHS(), B->getRHS());
        return true;
      }
      bool VisitUnaryOperator(UnaryOperator *U) {
        if (U->isIncrementDecrementOp()) {
          A.ReadWrites.insert(target(U->getSubExpr()));
          noteVar(U->getSubExpr());
        }
        return true;
      }
      bool VisitCallExpr(CallExpr *C) {
        // An assignment written with an operator that is (or, with
        // dependent operands in a template, may be) overloaded:
        // `s[t] += v` where some operator+= is visible.
        if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(C);
            Op && Op->getNumArgs() >= 1) {
          OverloadedOperatorKind K = Op->getOperator();
          if (K == OO_Equal) {
            A.Writes.insert(target(Op->getArg(0)));
            noteVar(Op->getArg(0), Op->getNumArgs() > 1 ? Op->getArg(1)
                                                        : nullptr);
          } else if (Op->isAssignmentOp() || K == OO_PlusPlus ||
                     K == OO_MinusMinus) {
            A.ReadWrites.insert(target(Op->getArg(0)));
            noteVar(Op->getArg(0), Op->getNumArgs() > 1 ? Op->getArg(1)
                                                        : nullptr);
          }
          return true;
        }
        if (!isAtomic(calleeName(C)) || C->getNumArgs() == 0)
          return true;
        const Expr *P = C->getArg(0)->IgnoreParenImpCasts();
        if (const auto *U = dyn_cast<UnaryOperator>(P);
            U && U->getOpcode() == UO_AddrOf)
          A.Atomics.insert(target(U->getSubExpr()));
        else
          A.AtomicPointers.insert(P);
        return true;
      }
    };
    RoleVisitor V(*this);
    V.TraverseStmt(Body);
  }

  bool traverseLoop(Stmt *S, StringRef Kind) {
    LoopInfo L;
    L.Kind = Kind.str();
    L.HasUnrollPragma = PendingUnroll;
    PendingUnroll = false;
    std::string Parent = currentLoop();
    unsigned Ordinal = ChildCount[Parent]++;
    L.Id = Parent.empty() ? K.QualifiedName + "/loop" + std::to_string(Ordinal)
                          : Parent + "." + std::to_string(Ordinal);
    L.Parent = Parent;
    L.Depth = LoopStack.size();
    if (auto Span = fileSpan(SM, LO, S->getSourceRange()))
      L.Range = *Span;
    else
      L.Range.Begin = filePos(SM, S->getBeginLoc());
    if (auto *F = dyn_cast<ForStmt>(S))
      describeFor(F, L);
    K.Loops.push_back(std::move(L));
    LoopStack.push_back(K.Loops.size() - 1);
    bool R;
    if (auto *F = dyn_cast<ForStmt>(S))
      R = RecursiveASTVisitor::TraverseForStmt(F);
    else if (auto *W = dyn_cast<WhileStmt>(S))
      R = RecursiveASTVisitor::TraverseWhileStmt(W);
    else if (auto *D = dyn_cast<DoStmt>(S))
      R = RecursiveASTVisitor::TraverseDoStmt(D);
    else
      R = RecursiveASTVisitor::TraverseCXXForRangeStmt(
          cast<CXXForRangeStmt>(S));
    LoopStack.pop_back();
    return R;
  }

  std::optional<int64_t> constantOf(const Expr *E) const {
    if (!E || E->isValueDependent() || E->isTypeDependent())
      return std::nullopt;
    Expr::EvalResult R;
    if (E->EvaluateAsInt(R, Ctx))
      return R.Val.getInt().getExtValue();
    // `const int n = 64;` locals
    if (const auto *DR = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
      if (const auto *VD = dyn_cast<VarDecl>(DR->getDecl()))
        if (VD->getType().isConstQualified() && VD->hasInit() &&
            !VD->getInit()->isValueDependent())
          if (VD->getInit()->EvaluateAsInt(R, Ctx))
            return R.Val.getInt().getExtValue();
    return std::nullopt;
  }

  static bool mentionsThreadIndex(const Stmt *S) {
    if (!S)
      return false;
    if (const auto *E = dyn_cast<Expr>(S))
      if (auto B = asBuiltinVar(E))
        return B->Var == "threadIdx" || B->Var == "blockIdx";
    for (const Stmt *C : S->children())
      if (mentionsThreadIndex(C))
        return true;
    return false;
  }

  void describeFor(ForStmt *F, LoopInfo &L) {
    const VarDecl *IV = nullptr;
    const Expr *InitE = nullptr;
    if (const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit())) {
      if (DS->isSingleDecl())
        if (const auto *VD = dyn_cast<VarDecl>(DS->getSingleDecl())) {
          IV = VD;
          InitE = VD->getInit();
        }
    } else if (const auto *BO = dyn_cast_or_null<BinaryOperator>(F->getInit());
               BO && BO->getOpcode() == BO_Assign) {
      if (const auto *DR =
              dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
        if (const auto *VD = dyn_cast<VarDecl>(DR->getDecl())) {
          IV = VD;
          InitE = BO->getRHS();
        }
    }
    if (!IV)
      return;
    auto IsIV = [&](const Expr *E) {
      if (const auto *DR = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
        return DR->getDecl() == IV;
      return false;
    };

    // Bound: `iv < B`, `iv <= B`, `iv > B`, `iv >= B`, `iv != B`.
    const Expr *BoundE = nullptr;
    BinaryOperatorKind Cmp = BO_LT;
    if (const auto *C =
            dyn_cast_or_null<BinaryOperator>(F->getCond() ? F->getCond()->IgnoreParenImpCasts() : nullptr);
        C && C->isComparisonOp()) {
      if (IsIV(C->getLHS())) {
        BoundE = C->getRHS();
        Cmp = C->getOpcode();
      } else if (IsIV(C->getRHS())) {
        BoundE = C->getLHS();
        Cmp = BinaryOperator::reverseComparisonOp(C->getOpcode());
      }
    }

    // Step: ++iv, iv++, --iv, iv += c, iv -= c, iv = iv + c.
    const Expr *StepE = nullptr;
    std::optional<int64_t> Step;
    bool Multiplicative = false;
    const Expr *Inc = F->getInc() ? F->getInc()->IgnoreParenImpCasts() : nullptr;
    if (const auto *U = dyn_cast_or_null<UnaryOperator>(Inc);
        U && U->isIncrementDecrementOp() && IsIV(U->getSubExpr())) {
      Step = U->isIncrementOp() ? 1 : -1;
    } else if (const auto *CA = dyn_cast_or_null<CompoundAssignOperator>(Inc);
               CA && IsIV(CA->getLHS())) {
      StepE = CA->getRHS();
      if (CA->getOpcode() == BO_AddAssign || CA->getOpcode() == BO_SubAssign) {
        if (auto V = constantOf(StepE))
          Step = CA->getOpcode() == BO_AddAssign ? *V : -*V;
      } else {
        Multiplicative = true;
      }
    } else if (const auto *BO = dyn_cast_or_null<BinaryOperator>(Inc);
               BO && BO->getOpcode() == BO_Assign && IsIV(BO->getLHS())) {
      if (const auto *Sum =
              dyn_cast<BinaryOperator>(BO->getRHS()->IgnoreParenImpCasts());
          Sum && Sum->isAdditiveOp()) {
        const Expr *Other = IsIV(Sum->getLHS()) ? Sum->getRHS()
                            : IsIV(Sum->getRHS()) && Sum->getOpcode() == BO_Add
                                ? Sum->getLHS()
                                : nullptr;
        StepE = Other;
        if (Other)
          if (auto V = constantOf(Other))
            Step = Sum->getOpcode() == BO_Add ? *V : -*V;
      } else {
        Multiplicative = true;
      }
    }

    L.InductionVar = IV->getNameAsString();
    if (InitE)
      L.Init = text(InitE->getSourceRange());
    if (BoundE)
      L.Bound = text(BoundE->getSourceRange());
    if (Inc)
      L.Step = text(Inc->getSourceRange());
    L.ThreadDependentBounds =
        mentionsThreadIndex(InitE) || mentionsThreadIndex(BoundE);

    // Induction variables keep the thread dependence of their start when the
    // step is uniform: `for (i = tid; i < n; i += stride)` stays unit-stride.
    // A multiplicative step (s >>= 1) keeps a uniform start uniform.
    Coef IVCoef = Coef::unknown();
    if (InitE) {
      Coef StepCoef = StepE ? coefficientOf(StepE) : Coef::zero();
      Coef InitCoef = coefficientOf(InitE);
      if (StepCoef.K == Coef::Zero &&
          (!Multiplicative || InitCoef.K == Coef::Zero))
        IVCoef = InitCoef;
    }
    InductionCoef[IV] = IVCoef;

    // Constant trip count.
    std::optional<int64_t> I0 = constantOf(InitE), B = constantOf(BoundE);
    if (!I0 || !B || !Step || *Step == 0 || Multiplicative)
      return;
    int64_t Lo = *I0, Hi = *B, S = *Step;
    int64_t Trip = 0;
    switch (Cmp) {
    case BO_LT:
      Trip = S > 0 && Hi > Lo ? (Hi - Lo + S - 1) / S : 0;
      break;
    case BO_LE:
      Trip = S > 0 && Hi >= Lo ? (Hi - Lo) / S + 1 : 0;
      break;
    case BO_GT:
      Trip = S < 0 && Lo > Hi ? (Lo - Hi + (-S) - 1) / (-S) : 0;
      break;
    case BO_GE:
      Trip = S < 0 && Lo >= Hi ? (Lo - Hi) / (-S) + 1 : 0;
      break;
    case BO_NE:
      if ((Hi - Lo) % S != 0 || (Hi - Lo) / S < 0)
        return;
      Trip = (Hi - Lo) / S;
      break;
    default:
      return;
    }
    if ((S > 0 && (Cmp == BO_GT || Cmp == BO_GE)) ||
        (S < 0 && (Cmp == BO_LT || Cmp == BO_LE)))
      return; // runs forever or not at all: not a trip count we trust
    L.TripCount = Trip;
  }

  /// Coefficient of threadIdx.x in \p E. Memoized per variable through
  /// VarCoef; Depth guards against pathological chains.
  Coef coefficientOf(const Expr *E, unsigned Depth = 0) {
    if (!E || Depth > 32)
      return Coef::unknown();
    E = E->IgnoreParenImpCasts();
    if (auto B = asBuiltinVar(E))
      return B->Var == "threadIdx" && B->Dim == 'x' ? Coef::constant(1)
                                                    : Coef::zero();
    if (isa<IntegerLiteral>(E) || isa<CharacterLiteral>(E) ||
        isa<CXXBoolLiteralExpr>(E) || isa<SizeOfPackExpr>(E) ||
        isa<UnaryExprOrTypeTraitExpr>(E))
      return Coef::zero();
    if (const auto *DR = dyn_cast<DeclRefExpr>(E)) {
      const ValueDecl *D = DR->getDecl();
      if (isa<ParmVarDecl>(D) || isa<NonTypeTemplateParmDecl>(D) ||
          isa<EnumConstantDecl>(D))
        return Coef::zero();
      const auto *VD = dyn_cast<VarDecl>(D);
      if (!VD)
        return Coef::unknown();
      if (!VD->isLocalVarDecl() || VD->getType().isConstQualified()) {
        if (!VD->isLocalVarDecl())
          return Coef::zero(); // globals, __constant__: uniform
      }
      if (auto It = InductionCoef.find(VD); It != InductionCoef.end())
        return It->second;
      if (auto It = VarCoef.find(VD); It != VarCoef.end())
        return It->second;
      Coef C = Coef::unknown();
      if (VD->hasInit() && !Assigned.contains(VD)) {
        // Cycles run through reassigned variables (below); assume uniform
        // while inside, as there.
        VarCoef[VD] = Coef::zero();
        ++Tentative;
        C = coefficientOf(VD->getInit(), Depth + 1);
        --Tentative;
        VarCoef.erase(VD);
      } else if (Assigned.contains(VD) && !isa<ParmVarDecl>(VD)) {
        // Reassigned (cur = nxt): uniform if every value it takes is
        // uniform. Assume uniform while checking (the greatest fixpoint),
        // and cache nothing decided under that assumption but VD itself.
        VarCoef[VD] = Coef::zero();
        ++Tentative;
        bool Uniform = !VD->hasInit() ||
                       coefficientOf(VD->getInit(), Depth + 1).K == Coef::Zero;
        for (const Expr *V : AssignedValues.lookup(VD))
          Uniform = Uniform && coefficientOf(V, Depth + 1).K == Coef::Zero;
        --Tentative;
        VarCoef.erase(VD);
        C = Uniform ? Coef::zero() : Coef::unknown();
      }
      if (Tentative == 0)
        VarCoef[VD] = C;
      return C;
    }
    if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      // Fields of by-value parameters (a struct of sizes) are uniform.
      const Expr *Base = ME->getBase()->IgnoreParenImpCasts();
      if (const auto *DR = dyn_cast<DeclRefExpr>(Base))
        if (isa<ParmVarDecl>(DR->getDecl()))
          return Coef::zero();
      return Coef::unknown();
    }
    if (const auto *U = dyn_cast<UnaryOperator>(E)) {
      Coef C = coefficientOf(U->getSubExpr(), Depth + 1);
      switch (U->getOpcode()) {
      case UO_Plus:
        return C;
      case UO_Minus:
        if (C.K == Coef::Const)
          return Coef::constant(-C.C);
        return C;
      case UO_Deref:
        return Coef::unknown(/*Indirect=*/true);
      default:
        return C.K == Coef::Zero ? C : Coef::unknown();
      }
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      Coef L = coefficientOf(BO->getLHS(), Depth + 1);
      Coef R = coefficientOf(BO->getRHS(), Depth + 1);
      bool Ind = L.Indirect || R.Indirect;
      auto Mark = [&](Coef C) {
        C.Indirect |= Ind;
        return C;
      };
      switch (BO->getOpcode()) {
      case BO_Add:
        return add(L, R, false);
      case BO_Sub:
        return add(L, R, true);
      case BO_Mul: {
        if (L.K == Coef::Zero && R.K == Coef::Zero)
          return Mark(Coef::zero());
        if (L.K != Coef::Zero && R.K != Coef::Zero)
          return Mark(Coef::unknown());
        Coef Var = L.K == Coef::Zero ? R : L;
        const Expr *Scale = L.K == Coef::Zero ? BO->getLHS() : BO->getRHS();
        if (Var.K == Coef::Unknown)
          return Mark(Var);
        if (auto V = constantOf(Scale)) {
          if (Var.K == Coef::Const)
            return Mark(Coef::constant(Var.C * *V));
          return Mark(*V == 0 ? Coef::zero() : Coef::symbolic());
        }
        return Mark(Coef::symbolic());
      }
      case BO_Shl:
        if (R.K == Coef::Zero && L.K == Coef::Const)
          if (auto V = constantOf(BO->getRHS()); V && *V >= 0 && *V < 32)
            return Mark(Coef::constant(L.C << *V));
        [[fallthrough]];
      default:
        if (L.K == Coef::Zero && R.K == Coef::Zero)
          return Mark(Coef::zero());
        return Mark(Coef::unknown());
      case BO_Comma:
        return R;
      }
    }
    if (const auto *CO = dyn_cast<ConditionalOperator>(E)) {
      Coef A = coefficientOf(CO->getTrueExpr(), Depth + 1);
      Coef B = coefficientOf(CO->getFalseExpr(), Depth + 1);
      Coef C = coefficientOf(CO->getCond(), Depth + 1);
      if (C.K == Coef::Zero && A.K == B.K && A.C == B.C)
        return A;
      return Coef::unknown(A.Indirect || B.Indirect);
    }
    if (isa<ArraySubscriptExpr>(E))
      return Coef::unknown(/*Indirect=*/true);
    if (const auto *C = dyn_cast<CallExpr>(E)) {
      bool AllZero = true, Ind = false;
      for (const Expr *A : C->arguments()) {
        Coef AC = coefficientOf(A, Depth + 1);
        AllZero &= AC.K == Coef::Zero;
        Ind |= AC.Indirect;
      }
      // __ldg(p + i) and friends load: indirect.
      if (calleeName(C).starts_with("__ldg"))
        return Coef::unknown(true);
      return AllZero ? Coef::zero() : Coef::unknown(Ind);
    }
    if (const auto *CE = dyn_cast<CastExpr>(E))
      return coefficientOf(CE->getSubExpr(), Depth + 1);
    if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E))
      return coefficientOf(FC->getSubExpr(), Depth + 1);
    return Coef::unknown();
  }

  /// `buf[i][j]` on a constant-size array: the coefficient is the sum of
  /// each index's coefficient times the size of the dimensions inside it.
  void recordMultiDim(const ArraySubscriptExpr *Outer,
                      const ArraySubscriptExpr *Inner) {
    std::vector<const Expr *> Indexes = {Outer->getIdx()};
    const Expr *Root = Inner;
    while (const auto *AS = dyn_cast<ArraySubscriptExpr>(Root)) {
      Indexes.insert(Indexes.begin(), AS->getIdx());
      Root = AS->getBase()->IgnoreParenImpCasts();
    }
    const auto *DR = dyn_cast<DeclRefExpr>(Root);
    const auto *VD = DR ? dyn_cast<VarDecl>(DR->getDecl()) : nullptr;
    if (!VD || !SharedVars.contains(VD))
      return; // local arrays are registers or stack, not modelled
    // Row sizes from the declared type, innermost last.
    std::vector<int64_t> Dims;
    QualType T = VD->getType();
    while (const auto *CAT = Ctx.getAsConstantArrayType(T)) {
      Dims.push_back(CAT->getSize().getSExtValue());
      T = CAT->getElementType();
    }
    Coef Total = Coef::zero();
    std::string Text;
    for (size_t D = 0; D < Indexes.size(); ++D) {
      int64_t Stride = 1;
      bool Known = Dims.size() == Indexes.size();
      for (size_t E = D + 1; Known && E < Dims.size(); ++E)
        Stride *= Dims[E];
      Coef C = coefficientOf(Indexes[D]);
      if (C.K == Coef::Const)
        C = Known ? Coef::constant(C.C * Stride) : Coef::symbolic();
      else if (C.K == Coef::Symbolic || C.K == Coef::Unknown)
        ; // stays
      Total = add(Total, C, false);
      Text += (D ? "][" : "") + text(Indexes[D]->getSourceRange());
    }
    recordResolved(Outer, AddressSpace::Shared, VD->getNameAsString(), -1,
                   Text, Total);
  }

  void recordAccess(const Expr *Access, const Expr *Base, const Expr *Index) {
    Base = Base->IgnoreParenImpCasts();
    const auto *DR = dyn_cast<DeclRefExpr>(Base);
    if (!DR)
      return;
    const auto *VD = dyn_cast<VarDecl>(DR->getDecl());
    if (!VD)
      return;
    MemoryAccess A;
    const Expr *Offset = nullptr;
    if (const auto *PVD = dyn_cast<ParmVarDecl>(VD)) {
      if (!PVD->getType()->isPointerType())
        return;
      A.Space = AddressSpace::Global;
      A.Base = PVD->getNameAsString();
      A.ParamIndex = PVD->getFunctionScopeIndex();
    } else if (SharedVars.contains(VD)) {
      A.Space = AddressSpace::Shared;
      A.Base = VD->getNameAsString();
    } else if (auto It = Aliases.find(VD); It != Aliases.end()) {
      A.Space = AddressSpace::Global;
      A.Base = It->second.Param->getNameAsString();
      A.ParamIndex = It->second.Param->getFunctionScopeIndex();
      Offset = It->second.Offset;
    } else {
      return;
    }

    std::string IndexText = Index ? text(Index->getSourceRange()) : "0";
    Coef C = Index ? coefficientOf(Index) : Coef::zero();
    if (Offset) {
      IndexText = "(" + text(Offset->getSourceRange()) + ") + " + IndexText;
      C = add(coefficientOf(Offset), C, false);
    }
    recordResolved(Access, A.Space, A.Base, A.ParamIndex, IndexText, C);
  }

  void recordResolved(const Expr *Access, AddressSpace Space, std::string Base,
                      int ParamIndex, std::string IndexText, Coef C) {
    MemoryAccess A;
    A.Space = Space;
    A.Base = std::move(Base);
    A.ParamIndex = ParamIndex;
    A.Index = IndexText;
    A.Indirect = C.Indirect;
    switch (C.K) {
    case Coef::Zero:
      A.Pattern = Coalescing::Uniform;
      A.Stride = 0;
      break;
    case Coef::Const:
      A.Pattern = C.C == 1 ? Coalescing::Unit : Coalescing::Strided;
      A.Stride = C.C;
      break;
    case Coef::Symbolic:
      A.Pattern = Coalescing::Strided;
      break;
    case Coef::Unknown:
      A.Pattern = Coalescing::Unknown;
      break;
    }

    const Expr *Key = Access;
    if (Atomics.contains(Key) || AtomicPointers.contains(Key)) {
      A.IsAtomic = A.IsRead = A.IsWrite = true;
    } else if (ReadWrites.contains(Key)) {
      A.IsRead = A.IsWrite = true;
    } else if (Writes.contains(Key)) {
      A.IsWrite = true;
    } else {
      A.IsRead = true;
    }
    A.Loop = currentLoop();
    A.Pos = filePos(SM, Access->getBeginLoc());
    K.Accesses.push_back(std::move(A));
  }

  ASTContext &Ctx;
  const SourceManager &SM;
  const LangOptions &LO;
  KernelInfo &K;
  const FunctionDecl *FD;

  bool PendingUnroll = false;
  std::vector<size_t> LoopStack;
  std::map<std::string, unsigned> ChildCount;
  DenseSet<const Expr *> Writes, ReadWrites, Atomics, AtomicPointers;
  DenseSet<const VarDecl *> Assigned, SharedVars;
  DenseMap<const VarDecl *, Alias> Aliases;
  DenseMap<const VarDecl *, Coef> InductionCoef, VarCoef;
  DenseMap<const VarDecl *, std::vector<const Expr *>> AssignedValues;
  unsigned Tentative = 0;
};

//===----------------------------------------------------------------------===//
// Classification.
//===----------------------------------------------------------------------===//

/// `acc += X[..] * Y[..]` (or `acc = acc + X*Y`) inside a loop, with X and Y
/// different arrays.
class MacFinder : public RecursiveASTVisitor<MacFinder> {
public:
  bool Found = false;
  bool Accumulates = false;
  std::string Detail;

  static const Expr *arrayBase(const Expr *E) {
    E = E->IgnoreParenImpCasts();
    if (const auto *C = dyn_cast<CallExpr>(E)) // __ldg(&a[i])
      if (C->getNumArgs() == 1)
        E = C->getArg(0)->IgnoreParenImpCasts();
    if (const auto *U = dyn_cast<UnaryOperator>(E))
      E = U->getSubExpr()->IgnoreParenImpCasts();
    if (const auto *AS = dyn_cast<ArraySubscriptExpr>(E))
      if (const auto *DR =
              dyn_cast<DeclRefExpr>(AS->getBase()->IgnoreParenImpCasts()))
        return DR;
    return nullptr;
  }

  bool TraverseForStmt(ForStmt *S) {
    ++Depth;
    Stack.push_back(S);
    bool R = RecursiveASTVisitor::TraverseForStmt(S);
    Stack.pop_back();
    --Depth;
    return R;
  }
  bool TraverseWhileStmt(WhileStmt *S) {
    ++Depth;
    Stack.push_back(S);
    bool R = RecursiveASTVisitor::TraverseWhileStmt(S);
    Stack.pop_back();
    --Depth;
    return R;
  }

  /// The loops around the first multiply-accumulate found.
  std::vector<const Stmt *> FoundLoops;

  /// The loops around the first accumulation of a value read from memory.
  std::vector<const Stmt *> AccumulateLoops;

  void checkProduct(const Expr *E) {
    const auto *M = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
    if (!M || M->getOpcode() != BO_Mul) {
      if (E->IgnoreParenImpCasts() != nullptr && containsArrayRead(E)) {
        if (!Accumulates)
          AccumulateLoops = Stack;
        Accumulates = true;
      }
      return;
    }
    if (!Accumulates)
      AccumulateLoops = Stack;
    const auto *A = dyn_cast_or_null<DeclRefExpr>(arrayBase(M->getLHS()));
    const auto *B = dyn_cast_or_null<DeclRefExpr>(arrayBase(M->getRHS()));
    if (A && B && A->getDecl() != B->getDecl()) {
      if (!Found)
        FoundLoops = Stack;
      Found = true;
      Detail = A->getDecl()->getNameAsString() + " * " +
               B->getDecl()->getNameAsString();
    }
    Accumulates = true;
  }

  static bool containsArrayRead(const Stmt *S) {
    if (!S)
      return false;
    if (isa<ArraySubscriptExpr>(S))
      return true;
    for (const Stmt *C : S->children())
      if (containsArrayRead(C))
        return true;
    return false;
  }

  bool VisitCompoundAssignOperator(CompoundAssignOperator *C) {
    if (Depth == 0 || C->getOpcode() != BO_AddAssign)
      return true;
    if (!isa<DeclRefExpr>(C->getLHS()->IgnoreParenImpCasts()))
      return true; // accumulating into a scalar
    checkProduct(C->getRHS());
    return true;
  }

  bool VisitBinaryOperator(BinaryOperator *B) {
    if (Depth == 0 || B->getOpcode() != BO_Assign)
      return true;
    const auto *L = dyn_cast<DeclRefExpr>(B->getLHS()->IgnoreParenImpCasts());
    const auto *Sum = dyn_cast<BinaryOperator>(B->getRHS()->IgnoreParenImpCasts());
    if (!L || !Sum || Sum->getOpcode() != BO_Add)
      return true;
    for (const Expr *Side : {Sum->getLHS(), Sum->getRHS()}) {
      const auto *D = dyn_cast<DeclRefExpr>(Side->IgnoreParenImpCasts());
      if (D && D->getDecl() == L->getDecl())
        checkProduct(Side == Sum->getLHS() ? Sum->getRHS() : Sum->getLHS());
    }
    // Running max/min: acc = fmaxf(acc, x[i]) counts as accumulation.
    return true;
  }

  bool VisitCallExpr(CallExpr *C) {
    if (Depth == 0)
      return true;
    StringRef N = calleeName(C);
    if ((N.contains("max") || N.contains("min")) && containsArrayRead(C))
      Accumulates = true;
    return true;
  }

private:
  unsigned Depth = 0;
  std::vector<const Stmt *> Stack;
};

/// Whether \p Loop walks a window of offsets on both sides of zero: a
/// `for` whose variable starts at a negative value (`-RADIUS`, `-r`, `-1`).
/// Summing over such a loop combines each element's neighbours (a stencil
/// or a convolution), which a reduction's loop from 0 does not.
bool isCentredWindow(const Stmt *Loop, const ASTContext &AST) {
  const auto *F = dyn_cast_or_null<ForStmt>(Loop);
  const auto *DS = F ? dyn_cast_or_null<DeclStmt>(F->getInit()) : nullptr;
  const auto *V = DS && DS->isSingleDecl()
                      ? dyn_cast<VarDecl>(DS->getSingleDecl())
                      : nullptr;
  if (!V || !V->getInit() || !V->getType()->isIntegerType())
    return false;
  const Expr *I = V->getInit()->IgnoreParenImpCasts();
  if (const auto *U = dyn_cast<UnaryOperator>(I); U && U->getOpcode() == UO_Minus)
    return true;
  Expr::EvalResult R;
  return !I->isValueDependent() && I->EvaluateAsInt(R, AST) &&
         R.Val.getInt().isNegative();
}

void classify(KernelInfo &K, const FunctionDecl *FD) {
  auto Reason = [&](KernelClass C, std::string Why) {
    K.Class = C;
    K.ClassReason = std::move(Why);
  };
  // Prefer an access whose index visibly loads (x[col[j]]) over one whose
  // index variable was loaded earlier (val[j] with j from rowptr).
  const MemoryAccess *Gather = nullptr;
  for (const MemoryAccess &A : K.Accesses)
    if (A.Space == AddressSpace::Global && A.Indirect &&
        (!Gather || (A.Index.find('[') != std::string::npos &&
                     Gather->Index.find('[') == std::string::npos)))
      Gather = &A;
  if (Gather)
    return Reason(KernelClass::GatherScatter,
                  "index of " + Gather->Base + "[" + Gather->Index +
                      "] is loaded from memory");
  for (const MemoryAccess &A : K.Accesses)
    if (A.Space == AddressSpace::Global && A.IsAtomic &&
        A.Pattern == Coalescing::Unknown)
      return Reason(KernelClass::GatherScatter,
                    "atomic updates at data-dependent addresses of " + A.Base);

  MacFinder Mac;
  Mac.TraverseStmt(FD->getBody());
  const ASTContext &AST = FD->getASTContext();
  if (Mac.Found && !Mac.FoundLoops.empty() &&
      isCentredWindow(Mac.FoundLoops.back(), AST))
    return Reason(KernelClass::Stencil, "weighted sum of " + Mac.Detail +
                                            " over offsets on both sides of "
                                            "each element");
  if (!Mac.Found && Mac.Accumulates && !Mac.AccumulateLoops.empty() &&
      isCentredWindow(Mac.AccumulateLoops.back(), AST))
    return Reason(KernelClass::Stencil, "a loop sums values read at offsets "
                                        "on both sides of each element");
  if (Mac.Found) {
    // A weighted sum over a small fixed window (convolution) is a stencil:
    // every loop around the multiply-accumulate has a small constant trip.
    const SourceManager &SM = FD->getASTContext().getSourceManager();
    std::vector<std::string> Window;
    for (const Stmt *S : Mac.FoundLoops) {
      unsigned Offset = SM.getFileOffset(SM.getFileLoc(S->getBeginLoc()));
      for (const LoopInfo &L : K.Loops)
        if (L.Range.Begin.Offset == Offset && L.TripCount && *L.TripCount <= 32)
          Window.push_back(std::to_string(*L.TripCount));
    }
    if (!Mac.FoundLoops.empty() && Window.size() == Mac.FoundLoops.size()) {
      std::string Shape;
      for (size_t I = 0; I < Window.size(); ++I)
        Shape += (I ? "x" : "") + Window[I];
      return Reason(KernelClass::Stencil, "weighted sum of " + Mac.Detail +
                                              " over a fixed " + Shape +
                                              " window");
    }
    return Reason(KernelClass::MatmulLike,
                  "multiply-accumulate of " + Mac.Detail + " in a loop");
  }

  for (const MemoryAccess &A : K.Accesses)
    if (A.Space == AddressSpace::Global && A.IsAtomic &&
        A.Pattern == Coalescing::Uniform)
      return Reason(KernelClass::Reduction,
                    "atomic accumulation into " + A.Base + "[" + A.Index + "]");
  if (!K.WarpPrimitives.empty())
    return Reason(KernelClass::Reduction, "warp shuffles combine values");
  if (!K.Shared.empty() && !K.Syncthreads.empty()) {
    for (const LoopInfo &L : K.Loops)
      if (L.Step.find(">>=") != std::string::npos ||
          L.Step.find("/=") != std::string::npos ||
          L.Step.find("*=") != std::string::npos ||
          L.Step.find("<<=") != std::string::npos)
        for (const MemoryAccess &A : K.Accesses)
          if (A.Space == AddressSpace::Shared && A.Loop == L.Id && A.IsWrite)
            return Reason(KernelClass::Reduction,
                          "tree combination in shared memory " + A.Base +
                              " (loop " + L.Id + ")");
  }
  if (Mac.Accumulates)
    return Reason(KernelClass::Reduction,
                  "a loop accumulates values read from memory");

  // Stencil: one array read at three or more distinct offsets.
  std::map<std::string, std::set<std::string>> ReadIndexes;
  for (const MemoryAccess &A : K.Accesses)
    if (A.IsRead && !A.IsWrite)
      ReadIndexes[A.Base].insert(A.Index);
  for (const auto &[Base, Indexes] : ReadIndexes)
    if (Indexes.size() >= 3)
      return Reason(KernelClass::Stencil,
                    Base + " is read at " + std::to_string(Indexes.size()) +
                        " neighbouring indexes");

  return Reason(KernelClass::Map, "each thread reads and writes its own "
                                  "elements");
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
  C.TraverseDecl(Ctx.getTranslationUnitDecl());

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
      K.LaunchBounds.push_back(sourceText(SM, LO, LB->getMaxThreads()->getSourceRange()));
      if (LB->getMinBlocks())
        K.LaunchBounds.push_back(
            sourceText(SM, LO, LB->getMinBlocks()->getSourceRange()));
    }
    for (const ParmVarDecl *P : FD->parameters())
      K.Params.push_back(describeParam(Ctx, P));
    KernelAnalyzer(Ctx, K, FD).run();
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
    S.File = filePath(
        SM, SM.getFileID(SM.getExpansionLoc(L.Call->getBeginLoc())));
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
  C.TraverseDecl(Ctx.getTranslationUnitDecl());
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
