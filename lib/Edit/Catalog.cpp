//===- Catalog.cpp - The registry of transforms and shared helpers --------===//

#include "CatalogInternal.h"
#include "optiml/Edit/Checks.h"
#include "optiml/Edit/EditJSON.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "optiml/Frontend/Parse.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace optiml {

static std::vector<std::unique_ptr<Transform>> makeCatalog() {
  std::vector<std::unique_ptr<Transform>> C;
  C.push_back(createLaunchConfigTransform());
  C.push_back(createLaunchBoundsTransform());
  C.push_back(createRestrictConstTransform());
  C.push_back(createUnrollTransform());
  C.push_back(createGridStrideTransform());
  C.push_back(createVectorizeTransform());
  C.push_back(createReadOnlyCacheTransform());
  C.push_back(createFastMathTransform());
  C.push_back(createHoistTransform());
  C.push_back(createSharedTilingTransform());
  C.push_back(createWarpReduceTransform());
  C.push_back(createCoarsenTransform());
  C.push_back(createWarpPerRowTransform());
  C.push_back(createPrivatizeAtomicsTransform());
  C.push_back(createAllPairsTilingTransform());
  C.push_back(createTransposeThroughSharedTransform());
  C.push_back(createBlockScanTransform());
  C.push_back(createConstantMemoryTransform());
  C.push_back(createVectorizeStencilTransform());
  C.push_back(createCompileFlagsTransform());
  C.push_back(createSpecializeTransform());
  C.push_back(createReplaceFunctionTransform());
  C.push_back(createAddDeviceFunctionTransform());
  return C;
}

ArrayRef<std::unique_ptr<Transform>> allTransforms() {
  static const std::vector<std::unique_ptr<Transform>> Catalog = makeCatalog();
  return Catalog;
}

const Transform *findTransform(StringRef Kind) {
  for (const auto &T : allTransforms())
    if (T->kind() == Kind)
      return T.get();
  return nullptr;
}

clang::FileID EditContext::file() const {
  return findFileID(AST.getSourceManager(), FileName);
}

bool EditContext::inFile(clang::SourceLocation Loc) const {
  if (Loc.isInvalid())
    return false;
  const clang::SourceManager &SM = AST.getSourceManager();
  return SM.getFileID(SM.getExpansionLoc(Loc)) == file();
}

KernelModel modelForFile(const KernelModel &M, StringRef FileName) {
  SmallString<256> Abs(FileName);
  (void)sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  KernelModel Out;
  Out.File = M.File;
  for (const KernelInfo &K : M.Kernels) {
    if (!K.File.empty() && K.File != Abs)
      continue;
    Out.Kernels.push_back(K);
    erase_if(Out.Kernels.back().Launches, [&](const LaunchSite &L) {
      return !L.File.empty() && L.File != Abs;
    });
  }
  return Out;
}

std::string launchOutsideFile(const EditContext &Ctx,
                              const KernelInfo &Kernel) {
  struct Finder : clang::RecursiveASTVisitor<Finder> {
    const clang::SourceManager &SM;
    clang::FileID In;
    StringRef Name;
    std::string Found;
    Finder(const clang::SourceManager &SM, clang::FileID In, StringRef Name)
        : SM(SM), In(In), Name(Name) {}
    bool VisitCUDAKernelCallExpr(clang::CUDAKernelCallExpr *K) {
      const clang::FunctionDecl *FD = K->getDirectCallee();
      if (!FD || FD->getQualifiedNameAsString() != Name)
        return true;
      clang::SourceLocation Loc = SM.getExpansionLoc(K->getBeginLoc());
      if (SM.getFileID(Loc) == In)
        return true;
      Found = (sys::path::filename(SM.getFilename(Loc)) + ":" +
               Twine(SM.getExpansionLineNumber(Loc)))
                  .str();
      return false;
    }
  };
  Finder F(Ctx.AST.getSourceManager(), Ctx.file(), Kernel.QualifiedName);
  F.TraverseDecl(Ctx.AST.getTranslationUnitDecl());
  return F.Found;
}

std::string addressTakenReason(const KernelInfo &Kernel, StringRef EditedFile) {
  if (Kernel.AddressTaken.empty())
    return "";
  const AddressUse &U = Kernel.AddressTaken.front();
  std::string Where = "line " + std::to_string(U.Pos.Line);
  if (U.File != EditedFile)
    Where = (sys::path::filename(U.File) + ":" + Twine(U.Pos.Line)).str();
  return "the kernel's address is taken at " + Where +
         (U.PassedTo.empty() ? std::string(" (a function pointer)")
                             : " (passed to " + U.PassedTo + ")") +
         ": a launch through it is not seen and would be left as it is, "
         "and this transform depends on the kernel's launches";
}

std::string sideConditionalReason(const KernelInfo &Kernel, StringRef Code) {
  unsigned B = Kernel.BodyRange.Begin.Offset, E = Kernel.BodyRange.End.Offset;
  if (B >= E || E > Code.size())
    return "";
  // The body's directives as the preprocessor finds them: a '#' first on
  // its line (comments and literals are not directives).
  std::string Buf = Code.slice(B, E).str();
  clang::LangOptions LO;
  LO.CPlusPlus = LO.CPlusPlus11 = LO.CPlusPlus17 = true;
  clang::Lexer L(clang::SourceLocation(), LO, Buf.data(), Buf.data(),
                 Buf.data() + Buf.size());
  clang::Token T;
  bool Directive = false;
  do {
    L.LexFromRawLexer(T);
    if (T.is(clang::tok::hash) && T.isAtStartOfLine()) {
      Directive = true;
      continue;
    }
    if (Directive && T.is(clang::tok::raw_identifier)) {
      StringRef Name = T.getRawIdentifier();
      if (Name == "if" || Name == "ifdef" || Name == "ifndef" ||
          Name == "elif" || Name == "elifdef" || Name == "elifndef" ||
          Name == "else") {
        unsigned Off = L.getCurrentBufferOffset();
        unsigned Line = Kernel.BodyRange.Begin.Line +
                        StringRef(Buf).take_front(Off).count('\n');
        return "the kernel's body has a preprocessor conditional ('#" +
               Name.str() + "' at line " + std::to_string(Line) +
               "): the body is read as the host side of the compile sees "
               "it, the device side may see other code, and this transform "
               "depends on what the body does";
      }
    }
    Directive = false;
  } while (T.isNot(clang::tok::eof));
  return "";
}

/// What the rewrite of suggestion \p S would add that the checks refuse
/// in new code (a second printf where the body is copied, a launch, asm),
/// found the way the checks find it, on the replacements' text; empty when
/// nothing, or when the rewrite does not come out here (the checks that
/// parse the result judge it then).
static std::string introducesForbidden(const EditContext &Ctx,
                                       const Transform &T, const Edit &S) {
  auto Repls = T.apply(Ctx, S);
  if (!Repls) {
    consumeError(Repls.takeError());
    return "";
  }
  if (!checkOneFile(*Repls, Ctx.FileName).empty())
    return "";
  auto NewCode = clang::tooling::applyAllReplacements(Ctx.Code, *Repls);
  if (!NewCode) {
    consumeError(NewCode.takeError());
    return "";
  }
  std::vector<CheckFailure> Failures = checkIntroducedTokens(
      Ctx.AST.getLangOpts(), Ctx.Code, *NewCode, *Repls, CheckOptions{});
  return Failures.empty() ? "" : Failures.front().Message;
}

static std::vector<Candidate> candidatesAsWritten(const EditContext &Ctx,
                                                  const KernelInfo &Kernel) {
  std::vector<Candidate> Out;
  std::string Outside = launchOutsideFile(Ctx, Kernel);
  std::string Unseen =
      Outside.empty() ? addressTakenReason(Kernel, Ctx.FileName)
                      : "the kernel is also launched in " + Outside +
                            ", outside the file an edit rewrites, and this "
                            "transform depends on its launches";
  std::string Sides = sideConditionalReason(Kernel, Ctx.Code);
  for (const auto &T : allTransforms()) {
    if (T->kind() == "replace-function" || T->kind() == "add-device-function")
      continue;
    // What the transform depends on is not all seen here.
    const std::string *Why = !Sides.empty() && T->readsBody()        ? &Sides
                             : !Unseen.empty() && T->readsLaunches() ? &Unseen
                                                                     : nullptr;
    if (Why) {
      Candidate C;
      C.T = T.get();
      C.Target = Kernel.QualifiedName;
      C.A.Reason = *Why;
      Out.push_back(std::move(C));
      continue;
    }
    std::vector<std::string> Targets;
    switch (T->targetKind()) {
    case TargetKind::Kernel:
      Targets.push_back(Kernel.QualifiedName);
      break;
    case TargetKind::Loop:
      for (const LoopInfo &L : Kernel.Loops)
        Targets.push_back(L.Id);
      break;
    case TargetKind::Launch:
      for (const LaunchSite &L : Kernel.Launches)
        Targets.push_back(L.Id);
      break;
    }
    if (Targets.empty()) {
      Candidate C;
      C.T = T.get();
      C.Target = Kernel.QualifiedName;
      C.A.Reason = T->targetKind() == TargetKind::Loop
                       ? "the kernel has no loops"
                       : "the kernel is never launched in this file";
      Out.push_back(std::move(C));
      continue;
    }
    for (const std::string &Target : Targets) {
      Candidate C;
      C.T = T.get();
      C.Target = Target;
      C.A = T->prepare(Ctx, Target);
      // A suggestion is offered only if its parameters pass the same
      // validation an edit read from JSON gets (ranges, enums, required
      // parameters): never one the transform's own checks would refuse.
      size_t Suggested = C.A.Suggestions.size();
      std::string Introduced;
      llvm::erase_if(C.A.Suggestions, [&](const Edit &S) {
        Edit Copy = S;
        if (Error Err = validateParams(Copy, *T)) {
          consumeError(std::move(Err));
          return true;
        }
        std::string Why = introducesForbidden(Ctx, *T, Copy);
        if (Why.empty())
          return false;
        Introduced = std::move(Why);
        return true;
      });
      if (C.A.Applies && Suggested && C.A.Suggestions.empty()) {
        C.A.Applies = false;
        C.A.Reason +=
            Introduced.empty()
                ? "; none of its suggested parameters is valid"
                : "; the checks would refuse its rewrite: " + Introduced;
      }
      Out.push_back(std::move(C));
    }
  }
  return Out;
}

std::vector<Candidate> listCandidates(const EditContext &Ctx,
                                      const KernelInfo &Kernel) {
  std::vector<Candidate> Out = candidatesAsWritten(Ctx, Kernel);
  // Launches through a macro that computes the grid or block in its body:
  // what the transforms that read launches offer once those are written
  // out (applyEdit writes them out when an edit needs it).
  std::string WhyNot, Written;
  auto Expanded = writeOutLaunchMacros(Ctx, Kernel, WhyNot, &Written, "",
                                       /*InPlaceToo=*/true);
  if (!Expanded)
    return Out;
  // What applyEdit writes out for a transform that inserts nothing before
  // the launches: only macros that compute the grid or block in the body.
  bool Computed = any_of(Kernel.Launches, [](const LaunchSite &L) {
    return L.InMacro && !(L.GridInPlace && L.BlockInPlace);
  });
  auto TU = parseCuda(*Expanded, Ctx.FileName, Ctx.Config, CudaSide::Host);
  if (!TU || TU->errorCount()) {
    if (!TU)
      consumeError(TU.takeError());
    return Out;
  }
  clang::ASTContext &AST = TU->AST->getASTContext();
  KernelModel Model = modelForFile(buildKernelModel(AST), Ctx.FileName);
  const KernelInfo *K = Model.findKernel(Kernel.QualifiedName);
  if (!K)
    return Out;
  EditContext Out2{Ctx.FileName, *Expanded, Model, AST, Ctx.Config};
  std::vector<Candidate> After = candidatesAsWritten(Out2, *K);
  std::string Note = " (with " + Written + ")";
  for (Candidate &C : Out) {
    if (!C.T->readsLaunches() || (!Computed && !C.T->insertsAroundLaunches()))
      continue;
    auto It = find_if(After, [&](const Candidate &A) {
      return A.T == C.T && A.Target == C.Target && A.A.Applies;
    });
    if (It == After.end())
      continue;
    if (!C.A.Applies) {
      C.A = It->A;
      C.A.Reason += Note;
      continue;
    }
    // Both apply: the suggestions that need the launch written out too.
    for (const Edit &S : It->A.Suggestions)
      if (none_of(C.A.Suggestions, [&](const Edit &Have) {
            return editToJSON(Have) == editToJSON(S);
          }))
        C.A.Suggestions.push_back(S);
  }
  return Out;
}

std::string Transform::summary(const Edit &E) const {
  std::string S;
  raw_string_ostream OS(S);
  OS << E.Kind << " " << E.Target;
  for (const auto &[Name, V] : E.Params) {
    OS << " " << Name << "=";
    if (auto *I = std::get_if<int64_t>(&V))
      OS << *I;
    else if (auto *D = std::get_if<double>(&V))
      OS << *D;
    else if (auto *B = std::get_if<bool>(&V))
      OS << (*B ? "true" : "false");
    else if (auto *Str = std::get_if<std::string>(&V))
      OS << (Str->size() > 24 ? "<" + std::to_string(Str->size()) + " chars>"
                              : *Str);
    else if (auto *L = std::get_if<std::vector<std::string>>(&V))
      OS << join(*L, ",");
  }
  return S;
}

Error reject(const Edit &E, StringRef Check, const Twine &Message,
             SourcePos Pos) {
  CheckFailure F;
  F.Check = Check.str();
  F.Line = Pos.Line;
  F.Column = Pos.Column;
  F.Message = Message.str();
  return make_error<EditRejected>(E.Kind, E.Target,
                                  std::vector<CheckFailure>{std::move(F)});
}

std::string rejectionReason(Error E) {
  std::string Reason;
  handleAllErrors(
      std::move(E),
      [&](const EditRejected &R) {
        Reason = R.Failures.empty() ? R.message() : R.Failures[0].Message;
      },
      [&](const ErrorInfoBase &EI) { Reason = EI.message(); });
  return Reason;
}

Edit defaultEdit(StringRef Kind, StringRef Target) {
  Edit E;
  E.Kind = Kind.str();
  E.Target = Target.str();
  return E;
}

StringRef kernelOfTarget(StringRef Target) {
  size_t Slash = Target.rfind('/');
  if (Slash == StringRef::npos)
    return Target;
  StringRef Tail = Target.substr(Slash + 1);
  if (Tail.starts_with("loop") || Tail.starts_with("launch"))
    return Target.substr(0, Slash);
  return Target;
}

static std::string kernelList(const KernelModel &M) {
  std::vector<std::string> Names;
  for (const KernelInfo &K : M.Kernels)
    Names.push_back("'" + K.QualifiedName + "'");
  if (Names.empty())
    return "the file has no kernels";
  return "kernels: " + join(Names, ", ");
}

Expected<ResolvedKernel> resolveKernel(const EditContext &Ctx, const Edit &E,
                                       StringRef Name) {
  ResolvedKernel R;
  R.Info = Ctx.Model.findKernel(Name.str());
  if (!R.Info)
    return reject(E, "target",
                  "no kernel named '" + Name + "' (" + kernelList(Ctx.Model) +
                      ")");
  R.Decl = findKernelDecl(Ctx.AST, Name);
  if (!R.Decl)
    return reject(E, "target",
                  "kernel '" + Name + "' has no definition in this file");
  return R;
}

Expected<ResolvedLoop> resolveLoop(const EditContext &Ctx, const Edit &E,
                                   StringRef Id) {
  ResolvedLoop R;
  StringRef KName = kernelOfTarget(Id);
  if (KName == Id)
    return reject(E, "target",
                  "'" + Id + "' is not a loop id (expected <kernel>/loop<N>)");
  auto K = resolveKernel(Ctx, E, KName);
  if (!K)
    return K.takeError();
  R.Kernel = *K;
  R.Info = Ctx.Model.findLoop(Id.str());
  if (!R.Info) {
    std::vector<std::string> Ids;
    for (const LoopInfo &L : K->Info->Loops)
      Ids.push_back("'" + L.Id + "'");
    return reject(E, "target",
                  "no loop '" + Id + "' in kernel '" + KName + "' (" +
                      (Ids.empty() ? std::string("it has no loops")
                                   : "loops: " + join(Ids, ", ")) +
                      ")");
  }
  R.S = findLoopStmt(K->Decl, Id.substr(KName.size() + 1));
  if (!R.S)
    R.S = findLoopStmt(K->Decl, Id);
  if (!R.S)
    return reject(E, "target", "loop '" + Id + "' was not found in the AST");
  return R;
}

Expected<ResolvedLaunch> resolveLaunch(const EditContext &Ctx, const Edit &E,
                                       StringRef Id) {
  ResolvedLaunch R;
  StringRef KName = kernelOfTarget(Id);
  if (KName == Id)
    return reject(
        E, "target",
        "'" + Id + "' is not a launch-site id (expected <kernel>/launch<N>)");
  auto K = resolveKernel(Ctx, E, KName);
  if (!K)
    return K.takeError();
  R.Kernel = *K;
  R.Info = Ctx.Model.findLaunch(Id.str());
  if (!R.Info) {
    std::vector<std::string> Ids;
    for (const LaunchSite &L : K->Info->Launches)
      Ids.push_back("'" + L.Id + "'");
    return reject(E, "target",
                  "no launch site '" + Id + "' (" +
                      (Ids.empty() ? "kernel '" + KName.str() +
                                         "' is never launched in this file"
                                   : "launch sites: " + join(Ids, ", ")) +
                      ")");
  }
  return R;
}

clang::tooling::Replacement replaceSpan(const EditContext &Ctx,
                                        const SourceSpan &S, StringRef Text) {
  return clang::tooling::Replacement(Ctx.FileName, S.Begin.Offset,
                                     S.End.Offset - S.Begin.Offset, Text);
}

clang::tooling::Replacement insertAt(const EditContext &Ctx, unsigned Offset,
                                     StringRef Text) {
  return clang::tooling::Replacement(Ctx.FileName, Offset, 0, Text);
}

Error addReplacement(clang::tooling::Replacements &Repls,
                     const clang::tooling::Replacement &R, const Edit &E) {
  if (Error Err = Repls.add(R))
    return reject(E, "internal",
                  "conflicting replacements: " + toString(std::move(Err)));
  return Error::success();
}

namespace {
using clang::dyn_cast;
using clang::isa;

/// The parent of \p E, skipping parentheses and implicit casts; \p Child
/// receives the expression whose parent it is.
const clang::Stmt *parentSkippingCasts(clang::ASTContext &Ctx,
                                       const clang::Expr *E,
                                       const clang::Expr *&Child) {
  Child = E;
  while (true) {
    auto Parents = Ctx.getParents(*Child);
    if (Parents.empty())
      return nullptr;
    if (const auto *PE = Parents[0].get<clang::Expr>()) {
      if (isa<clang::ParenExpr, clang::ImplicitCastExpr>(PE)) {
        Child = PE;
        continue;
      }
      return PE;
    }
    if (const auto *S = Parents[0].get<clang::Stmt>())
      return S;
    if (Parents[0].get<clang::VarDecl>())
      return nullptr; // bound to a variable: callers treat as escape
    return nullptr;
  }
}

std::string where(clang::ASTContext &Ctx, const clang::Expr *E) {
  SourcePos P =
      filePos(Ctx.getSourceManager(),
              Ctx.getSourceManager().getExpansionLoc(E->getBeginLoc()));
  return std::to_string(P.Line) + ":" + std::to_string(P.Column);
}
} // namespace

PointerUses analyzePointerParam(clang::ASTContext &Ctx,
                                const clang::FunctionDecl *FD,
                                const clang::ParmVarDecl *P) {
  PointerUses U;
  std::string Name = P->getName().str();
  struct Refs : clang::RecursiveASTVisitor<Refs> {
    const clang::ParmVarDecl *P;
    std::vector<const clang::DeclRefExpr *> Found;
    bool VisitDeclRefExpr(clang::DeclRefExpr *D) {
      if (D->getDecl() == P)
        Found.push_back(D);
      return true;
    }
  } R{{}, P, {}};
  if (!FD->getBody())
    return U;
  R.TraverseStmt(FD->getBody());
  for (const clang::DeclRefExpr *D : R.Found) {
    // Follow the pointer through pointer arithmetic to an element access.
    const clang::Expr *Ptr = D, *Child = nullptr;
    const clang::Stmt *Parent = parentSkippingCasts(Ctx, Ptr, Child);
    const clang::Expr *Elem = nullptr;
    while (Parent) {
      if (const auto *AS = dyn_cast<clang::ArraySubscriptExpr>(Parent)) {
        if (AS->getBase()->IgnoreParenImpCasts() ==
            Child->IgnoreParenImpCasts()) {
          Elem = AS;
          break;
        }
      } else if (const auto *UO = dyn_cast<clang::UnaryOperator>(Parent)) {
        if (UO->getOpcode() == clang::UO_Deref) {
          Elem = UO;
          break;
        }
      } else if (const auto *BO = dyn_cast<clang::BinaryOperator>(Parent)) {
        if (BO->isAdditiveOp() && BO->getLHS()->IgnoreParenImpCasts() ==
                                      Child->IgnoreParenImpCasts()) {
          Parent = parentSkippingCasts(Ctx, BO, Child);
          continue;
        }
        if (BO->isComparisonOp())
          break;
        if (BO->isAssignmentOp() && BO->getLHS()->IgnoreParenImpCasts() ==
                                        Child->IgnoreParenImpCasts()) {
          U.Blocker = "'" + Name + "' is reassigned at " + where(Ctx, BO);
          return U;
        }
      }
      U.Blocker = "'" + Name + "' escapes at " + where(Ctx, D) +
                  " (passed on or stored; its uses cannot be followed)";
      return U;
    }
    if (!Parent) {
      U.Blocker = "'" + Name + "' escapes at " + where(Ctx, D) +
                  " (bound to a variable; its uses cannot be followed)";
      return U;
    }
    if (!Elem)
      continue; // a comparison of the pointer itself
    // Is the element read or written?
    const clang::Stmt *EP = parentSkippingCasts(Ctx, Elem, Child);
    bool Read = false;
    // An arm of a conditional whose arms are both lvalues is an lvalue
    // too (`best = m[i] > best ? m[i] : best`): the element is read where
    // the conditional's value is.
    bool ViaLValueToRValue = false;
    for (const clang::Expr *Cur = Elem;;) {
      auto Ps = Ctx.getParents(*Cur);
      if (Ps.empty())
        break;
      if (const auto *PE = Ps[0].get<clang::ParenExpr>()) {
        Cur = PE;
        continue;
      }
      if (const auto *CO = Ps[0].get<clang::ConditionalOperator>();
          CO && CO->getCond() != Cur && CO->isGLValue()) {
        Cur = CO;
        continue;
      }
      if (const auto *IC = Ps[0].get<clang::ImplicitCastExpr>())
        ViaLValueToRValue = IC->getCastKind() == clang::CK_LValueToRValue;
      break;
    }
    if (ViaLValueToRValue) {
      Read = true;
    } else if (const auto *BO = dyn_cast_or_null<clang::BinaryOperator>(EP)) {
      Read = !(BO->isAssignmentOp() &&
               BO->getLHS()->IgnoreParenImpCasts() == Elem);
    } else if (const auto *UO = dyn_cast_or_null<clang::UnaryOperator>(EP)) {
      Read =
          !UO->isIncrementDecrementOp() && UO->getOpcode() != clang::UO_AddrOf;
    } else if (const auto *AS =
                   dyn_cast_or_null<clang::ArraySubscriptExpr>(EP)) {
      Read = AS->getIdx()->IgnoreParenImpCasts() == Elem;
    } else if (isa_and_nonnull<clang::ReturnStmt>(EP)) {
      Read = true;
    } else if (!EP) {
      auto Ps = Ctx.getParents(*Child);
      if (!Ps.empty())
        if (const auto *VD = Ps[0].get<clang::VarDecl>())
          Read = !VD->getType()->isReferenceType();
    }
    if (!Read) {
      U.Blocker = "'" + Name +
                  "' is written (or an element is passed by "
                  "reference or its address taken) at " +
                  where(Ctx, Elem);
      return U;
    }
    U.Loads.push_back(Elem);
  }
  return U;
}

unsigned definitionBegin(const EditContext &Ctx,
                         const clang::FunctionDecl *FD) {
  const clang::SourceManager &SM = Ctx.AST.getSourceManager();
  clang::SourceLocation Loc = FD->getSourceRange().getBegin();
  if (const auto *T = FD->getDescribedFunctionTemplate())
    Loc = T->getSourceRange().getBegin();
  return SM.getFileOffset(SM.getExpansionLoc(Loc));
}

std::string indentationAt(StringRef Code, unsigned Offset) {
  size_t LineStart = Code.rfind('\n', Offset ? Offset - 1 : 0);
  LineStart = LineStart == StringRef::npos ? 0 : LineStart + 1;
  if (Offset == 0)
    LineStart = 0;
  size_t End = LineStart;
  while (End < Code.size() && (Code[End] == ' ' || Code[End] == '\t'))
    ++End;
  return Code.substr(LineStart, End - LineStart).str();
}

} // namespace optiml
