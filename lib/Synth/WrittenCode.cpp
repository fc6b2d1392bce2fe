//===- WrittenCode.cpp - Checks on a model's part of a program ------------===//
//
// The model's kernels and launch statements are insertions into the
// harness (programLayout); the insertions pass the edit checks of
// Checks.h, then the rules of WrittenCode.h on the host parse, where every
// name is resolved.
//
//===----------------------------------------------------------------------===//

#include "optiml/Synth/WrittenCode.h"
#include "optiml/Edit/Checks.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/Builtins.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <optional>

using namespace llvm;
using namespace clang;

namespace optiml {
namespace synth {

std::vector<std::string> launchNames(const Spec &S) {
  std::vector<std::string> Names;
  for (const auto *List : {&S.Inputs, &S.Outputs})
    for (const Tensor &T : *List)
      Names.push_back("d_" + T.Name);
  for (const auto &[Name, Value] : S.Sizes)
    Names.push_back(Name);
  return Names;
}

namespace {

/// A half-open byte range of the new program the model wrote.
struct Part {
  unsigned Begin, End;
  const char *What; // "kernels", "launch"
};

/// A written-code failure at \p L (its presumed line and column).
CheckFailure failureAt(const SourceManager &SM, SourceLocation L,
                       const Twine &Msg) {
  CheckFailure F;
  F.Check = "written-code";
  PresumedLoc P = SM.getPresumedLoc(SM.getFileLoc(L));
  if (P.isValid()) {
    F.Line = P.getLine();
    F.Column = P.getColumn();
  }
  F.Message = Msg.str();
  return F;
}

std::string realDir(StringRef Dir) {
  SmallString<256> Real;
  if (Dir.empty() || sys::fs::real_path(Dir, Real))
    return "";
  return std::string(Real) + "/";
}

/// The host-code rules of WrittenCode.h, on the host parse of the new
/// program.
class HostRules : public RecursiveASTVisitor<HostRules> {
public:
  HostRules(ASTContext &Ctx, ArrayRef<Part> Parts,
            ArrayRef<std::string> Allowed, std::string CudaDir,
            std::string ResourceDir, std::vector<CheckFailure> &Out)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), Parts(Parts), Allowed(Allowed),
        CudaDir(std::move(CudaDir)), ResourceDir(std::move(ResourceDir)),
        Out(Out) {}

  bool shouldVisitTemplateInstantiations() const { return true; }
  bool shouldVisitImplicitCode() const { return true; }

  bool TraverseDecl(Decl *D) {
    if (!D)
      return true;
    auto *FD = dyn_cast<FunctionDecl>(D);
    bool Device = FD && isDeviceOnly(FD);
    if (Device)
      ++DeviceDepth;
    bool R = RecursiveASTVisitor::TraverseDecl(D);
    if (Device)
      --DeviceDepth;
    return R;
  }

  bool VisitDeclRefExpr(DeclRefExpr *E) {
    checkUse(E->getDecl(), E->getLocation());
    return true;
  }
  bool VisitMemberExpr(MemberExpr *E) {
    if (auto *FD = dyn_cast<FunctionDecl>(E->getMemberDecl()))
      checkUse(FD, E->getMemberLoc());
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr *E) {
    checkUse(E->getConstructor(), E->getBeginLoc());
    return true;
  }
  bool VisitCallExpr(CallExpr *E) {
    if (!inHostCode(E->getBeginLoc()) || E->isTypeDependent() ||
        E->isValueDependent() || isa<CUDAKernelCallExpr>(E))
      return true;
    if (!E->getDirectCallee())
      fail(E->getBeginLoc(),
           "host code calls through a pointer; it may call only the CUDA "
           "runtime, kernels and functions it defines");
    return true;
  }
  bool VisitCXXNewExpr(CXXNewExpr *E) {
    if (inHostCode(E->getBeginLoc()))
      fail(E->getBeginLoc(), "host code allocates with new; device memory "
                             "comes from cudaMalloc");
    return true;
  }
  bool VisitCXXDeleteExpr(CXXDeleteExpr *E) {
    if (inHostCode(E->getBeginLoc()))
      fail(E->getBeginLoc(), "host code uses delete");
    return true;
  }

private:
  static bool isDeviceOnly(const FunctionDecl *FD) {
    return FD->hasAttr<CUDAGlobalAttr>() ||
           (FD->hasAttr<CUDADeviceAttr>() && !FD->hasAttr<CUDAHostAttr>());
  }

  /// The byte offset in the main file where \p L is spelled, if it is
  /// there: a token of a harness macro (OPTIML_CHECK's fprintf) is the
  /// harness's even when the model's text invokes the macro.
  std::optional<unsigned> offset(SourceLocation L) const {
    if (L.isInvalid())
      return std::nullopt;
    SourceLocation F = SM.getSpellingLoc(L);
    if (!SM.isWrittenInMainFile(F))
      return std::nullopt;
    return SM.getFileOffset(F);
  }
  bool inParts(SourceLocation L) const {
    auto O = offset(L);
    return O && any_of(Parts, [&](const Part &P) {
             return *O >= P.Begin && *O < P.End;
           });
  }
  bool inHostCode(SourceLocation L) const {
    return DeviceDepth == 0 && inParts(L);
  }

  /// A declaration of the toolkit's or the compiler's own headers.
  bool trusted(const Decl *D) const {
    if (D->isImplicit())
      return true;
    SourceLocation F = SM.getFileLoc(D->getLocation());
    if (F.isInvalid())
      return true; // builtins declared by the compiler
    StringRef Name = SM.getFilename(F);
    if (Name.empty())
      return false;
    SmallString<256> Real;
    if (sys::fs::real_path(Name, Real))
      return false;
    // The toolkit's headers, and of the compiler's own only its CUDA
    // wrappers (not, say, mm_malloc.h).
    StringRef R(Real);
    if (!CudaDir.empty() && R.starts_with(CudaDir))
      return true;
    return !ResourceDir.empty() && R.starts_with(ResourceDir) &&
           (R.contains("/cuda_wrappers/") ||
            sys::path::filename(R).starts_with("__clang_cuda_"));
  }

  void checkUse(const NamedDecl *D, SourceLocation Loc) {
    if (!D || !inHostCode(Loc))
      return;
    if (inParts(D->getLocation())) {
      // The model's own function must be the model's own code: a
      // declaration without a body would link to a library's (an
      // `extern "C" int execv(...)` declared afresh).
      if (const auto *FD = dyn_cast<FunctionDecl>(D)) {
        const FunctionDecl *Def = nullptr;
        if (!FD->isImplicit() && !FD->getBuiltinID() &&
            (!FD->isDefined(Def) || !inParts(Def->getLocation())) &&
            !FD->isDependentContext())
          fail(Loc, "host code calls '" + FD->getQualifiedNameAsString() +
                        "', which the model declares without defining it");
      }
      return;
    }
    if (const auto *FD = dyn_cast<FunctionDecl>(D)) {
      if (FD->hasAttr<CUDAGlobalAttr>() || FD->isConstexpr())
        return;
      // A builtin (declared by the compiler itself, or a library function
      // it knows: printf, malloc) only when the compiler knows it to be
      // free of side effects (__builtin_expect, __builtin_clz).
      if (unsigned ID = FD->getBuiltinID()) {
        const Builtin::Context &BI = Ctx.BuiltinInfo;
        if (BI.isConst(ID) || BI.isPure(ID) ||
            BI.isConstWithoutErrnoAndExceptions(ID))
          return;
        fail(Loc, "host code uses the builtin '" + FD->getNameAsString() +
                      "', which has side effects");
        return;
      }
      if (trusted(FD))
        return;
      fail(Loc, "host code uses '" + FD->getQualifiedNameAsString() +
                    "'; it may call only the CUDA runtime API, kernels, "
                    "constexpr functions and functions it defines");
      return;
    }
    if (const auto *VD = dyn_cast<VarDecl>(D)) {
      if (VD->isConstexpr() || trusted(VD))
        return;
      const auto *Owner = dyn_cast<FunctionDecl>(VD->getDeclContext());
      if (Owner && Owner->getName() == "runOnDevice" &&
          is_contained(Allowed, VD->getName()))
        return;
      fail(Loc, "the launch code names '" + VD->getNameAsString() +
                    "' of the harness; it may use the device buffers and "
                    "the sizes (" +
                    join(Allowed, ", ") + ") and what it declares");
    }
  }

  void fail(SourceLocation L, const Twine &Msg) {
    CheckFailure F = failureAt(SM, L, Msg);
    // One report per place and message.
    if (none_of(Out, [&](const CheckFailure &O) {
          return O.Line == F.Line && O.Column == F.Column &&
                 O.Message == F.Message;
        }))
      Out.push_back(std::move(F));
  }

  ASTContext &Ctx;
  SourceManager &SM;
  ArrayRef<Part> Parts;
  ArrayRef<std::string> Allowed;
  std::string CudaDir, ResourceDir;
  std::vector<CheckFailure> &Out;
  unsigned DeviceDepth = 0;
};

/// The model's declarations are new entities: each top-level declaration of
/// its text lies wholly inside it, redeclares and specializes nothing
/// declared elsewhere, and shares no name with a declaration outside it;
/// its launch statements lie inside runOnDevice's body.
void checkShape(ASTContext &Ctx, ArrayRef<Part> Parts,
                std::vector<CheckFailure> &Out) {
  SourceManager &SM = Ctx.getSourceManager();
  auto Offset = [&](SourceLocation L) -> std::optional<unsigned> {
    SourceLocation F = SM.getFileLoc(L);
    if (L.isInvalid() || !SM.isWrittenInMainFile(F))
      return std::nullopt;
    return SM.getFileOffset(F);
  };
  auto Where = [&](SourceLocation L) { return failureAt(SM, L, ""); };
  const Part &K = Parts[0], &L = Parts[1];
  auto InKernels = [&](unsigned O) { return O >= K.Begin && O < K.End; };
  auto Outside = [&](const Decl *D) {
    auto O = Offset(D->getLocation());
    return !O || !any_of(Parts, [&](const Part &P) {
      return *O >= P.Begin && *O < P.End;
    });
  };
  for (Decl *D : Ctx.getTranslationUnitDecl()->decls()) {
    // Declarations the compiler makes itself (a builtin's implicit
    // `extern "C"` declaration, placed where it is first used).
    if (D->isImplicit())
      continue;
    auto B = Offset(D->getBeginLoc()), E = Offset(D->getEndLoc());
    if (!B || !E)
      continue;
    bool Inside = InKernels(*B), EndInside = InKernels(*E);
    if (!Inside && !EndInside && !(*B < K.Begin && *E >= K.End))
      continue;
    if (!Inside || !EndInside) {
      CheckFailure F = Where(D->getBeginLoc());
      F.Message = "the kernels' text does not consist of whole "
                  "declarations (a declaration crosses its edge)";
      Out.push_back(std::move(F));
      continue;
    }
    auto Refuse = [&](const Twine &Why) {
      CheckFailure F = Where(D->getLocation());
      F.Message = Why.str();
      Out.push_back(std::move(F));
    };
    if (isa<NamespaceDecl>(D) && !cast<NamespaceDecl>(D)->isFirstDecl()) {
      Refuse("the kernels' text reopens namespace '" +
             cast<NamespaceDecl>(D)->getNameAsString() +
             "'; its declarations must be new");
      continue;
    }
    if (isa<LinkageSpecDecl>(D)) {
      Refuse("the kernels' text has a linkage specification (extern \"C\"); "
             "its functions are C++ and defined in it");
      continue;
    }
    if (D->hasAttr<AsmLabelAttr>()) {
      Refuse("the kernels' text names a symbol with an asm label");
      continue;
    }
    if (isa<UsingDirectiveDecl>(D) || isa<UsingDecl>(D))
      continue;
    if (auto *FD = D->getAsFunction())
      if (FD->isFunctionTemplateSpecialization() ||
          FD->getTemplateSpecializationKind() != TSK_Undeclared) {
        Refuse("the kernels' text specializes '" +
               FD->getQualifiedNameAsString() +
               "'; its declarations must be new");
        continue;
      }
    if (isa<ClassTemplateSpecializationDecl>(D) ||
        isa<VarTemplateSpecializationDecl>(D)) {
      Refuse("the kernels' text specializes or instantiates a template; "
             "its declarations must be new");
      continue;
    }
    auto *ND = dyn_cast<NamedDecl>(D);
    if (!ND || !ND->getDeclName() || !ND->getDeclName().isIdentifier())
      continue;
    // A name found outside the model's text: a redeclaration (of libc's
    // fabs, of the harness's helpers) or an overload that could take
    // their calls.
    for (NamedDecl *Other : D->getDeclContext()->lookup(ND->getDeclName()))
      if (Outside(Other)) {
        Refuse("the kernels' text declares '" + ND->getNameAsString() +
               "', a name already declared outside it; its names must be "
               "new");
        break;
      }
  }
  // The launch statements: inside runOnDevice's body.
  for (Decl *D : Ctx.getTranslationUnitDecl()->decls()) {
    auto *FD = dyn_cast<FunctionDecl>(D);
    if (!FD || FD->getName() != "runOnDevice" || !FD->hasBody())
      continue;
    auto B = Offset(FD->getBody()->getBeginLoc()),
         E = Offset(FD->getBody()->getEndLoc());
    if (!B || !E || !(*B < L.Begin && *E >= L.End)) {
      CheckFailure F = Where(FD->getLocation());
      F.Message = "the launch statements do not stay inside runOnDevice "
                  "(unbalanced braces)";
      Out.push_back(std::move(F));
    }
    return;
  }
  CheckFailure F;
  F.Check = "written-code";
  F.Message = "runOnDevice is no longer defined: the launch statements "
              "broke the harness";
  Out.push_back(std::move(F));
}

} // namespace

Expected<std::vector<CheckFailure>>
checkWrittenCode(const Spec &S, const ProgramOptions &Opts,
                 const KernelCode &Code, StringRef FileName,
                 const ParseConfig &Config) {
  std::vector<CheckFailure> Failures;
  auto Refuse = [&](const Twine &Msg) {
    CheckFailure F;
    F.Check = "written-code";
    F.Message = Msg.str();
    Failures.push_back(std::move(F));
  };
  for (const auto &[Text, What] :
       {std::pair<const std::string &, const char *>(Code.Kernels, "kernels"),
        {Code.Launch, "launch"}}) {
    if (Text.size() > MaxWrittenPart)
      Refuse(Twine("the ") + What + " text has " + Twine(Text.size()) +
             " bytes; at most " + Twine(MaxWrittenPart));
    if (StringRef(Text).contains('\0'))
      Refuse(Twine("the ") + What + " text holds a NUL byte");
  }
  if (StringRef(Code.Kernels).trim().empty())
    Refuse("the kernels' text is empty");
  if (StringRef(Code.Launch).trim().empty())
    Refuse("the launch text is empty");
  if (!Failures.empty())
    return Failures;

  ProgramLayout Layout = programLayout(S, Opts, Code);
  std::string New = generateProgram(S, Opts, Code);
  tooling::Replacements Repls;
  if (Error E = Repls.add(
          tooling::Replacement(FileName, Layout.KernelsAt, 0, Code.Kernels)))
    return std::move(E);
  if (Error E = Repls.add(
          tooling::Replacement(FileName, Layout.LaunchAt, 0, Code.Launch)))
    return std::move(E);
  unsigned KB = Layout.KernelsAt, KE = KB + Code.Kernels.size();
  unsigned LB = Layout.LaunchAt + Code.Kernels.size(),
           LE = LB + Code.Launch.size();
  Part Parts[] = {{KB, KE, "kernels"}, {LB, LE, "launch"}};

  auto OldTU = parseCuda(Layout.Skeleton, FileName, Config, CudaSide::Host);
  if (!OldTU)
    return OldTU.takeError();
  if (OldTU->errorCount())
    return createStringError(inconvertibleErrorCode(),
                             "the program's harness does not parse: %s",
                             OldTU->Diags.front().str().c_str());
  ASTContext &OldAST = OldTU->AST->getASTContext();
  const LangOptions &LO = OldAST.getLangOpts();
  // No printf, heap or asm; launches are the launch statements' job (from
  // device code, checkDeviceCode refuses them).
  CheckOptions CO;
  CO.AllowLaunches = true;
  append_range(Failures, checkEditDirectives(LO, New, editedRanges(Repls)));
  append_range(Failures,
               checkIntroducedTokens(LO, Layout.Skeleton, New, Repls, CO));
  if (!Failures.empty())
    return Failures;

  auto Sides = parseBothSides(New, FileName, Config);
  if (!Sides)
    return Sides.takeError();
  ParsedTU *NewHost = &Sides->Host;
  ASTContext &NewAST = NewHost->AST->getASTContext();
  append_range(Failures, checkDeviceCode(OldAST, NewAST, CO));
  append_range(Failures,
               checkIntroducedCodeBothSides(&OldAST, *Sides, Repls, CO));
  append_range(Failures, checkCompiles(*NewHost, "host"));
  if (Sides->Device.errorCount())
    append_range(Failures, deviceOnlyErrors(Sides->Device, Failures));
  if (NewHost->errorCount() == 0) {
    checkShape(NewAST, Parts, Failures);
    std::vector<std::string> Allowed = launchNames(S);
    HostRules(NewAST, Parts, Allowed, realDir(Config.Tools.CudaPath),
              realDir(Config.Tools.ResourceDir), Failures)
        .TraverseDecl(NewAST.getTranslationUnitDecl());
  }
  for (CheckFailure &F : Failures)
    if (F.File.empty() && F.Line)
      F.File = FileName.str();
  return Failures;
}

} // namespace synth
} // namespace optiml
