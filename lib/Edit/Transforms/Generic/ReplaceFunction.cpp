//===- ReplaceFunction.cpp - New text for one function definition ---------===//
//
// The LLM's main edit. The text is screened lexically first (so the common
// ways a model's answer goes wrong get a precise reason), then the Rewriter
// re-parses the file and checks the signature, the scope and the device
// code like any other edit.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../FunctionText.h"
#include "optiml/Edit/Checks.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"

using namespace llvm;
using namespace clang;

namespace optiml {

static Error codeError(const Edit &E, StringRef Code, size_t Offset,
                       const Twine &Msg) {
  unsigned Line = Code.substr(0, std::min(Offset, Code.size())).count('\n') + 1;
  return reject(E, "code", "params.code line " + Twine(Line) + ": " + Msg);
}

Expected<FunctionText> scanFunctionText(const Edit &E, StringRef Code,
                                        const LangOptions &LO) {
  if (Code.trim().empty())
    return reject(E, "code", "params.code is empty");
  if (size_t Nul = Code.find('\0'); Nul != StringRef::npos)
    return codeError(E, Code, Nul, "contains a NUL byte");
  const UTF8 *Src = reinterpret_cast<const UTF8 *>(Code.data());
  const UTF8 *Begin = Src;
  if (!isLegalUTF8String(&Src, Src + Code.size())) {
    size_t Off = Src - Begin;
    return codeError(E, Code, Off,
                     "is not valid UTF-8 (byte 0x" +
                         utohexstr(uint8_t(Code[Off]), /*LowerCase=*/true) +
                         " at offset " + Twine(Off) + ")");
  }
  // A markdown fence is the common way a model's answer goes wrong; say so
  // before the lexer reads the backticks as stray characters.
  {
    size_t Off = 0;
    for (StringRef Line : split(Code, '\n')) {
      StringRef T = Line.trim();
      if (T.starts_with("```") || T.starts_with("~~~"))
        return codeError(E, Code, Off,
                         "is wrapped in a markdown code fence ('" +
                             T.take_front(12) +
                             "'); send only the C++ text of the function");
      Off += Line.size() + 1;
    }
  }
  // Directives, however spelled: the compiler's lexer decides.
  for (const CheckFailure &F : checkEditDirectives(
           LO, Code, {ByteRange{0, unsigned(Code.size()), ""}})) {
    StringRef M = F.Message;
    size_t Q = M.find("('");
    std::string Name = Q == StringRef::npos
                           ? ""
                           : M.substr(Q + 2, M.find("')", Q) - Q - 2).str();
    std::string Where = "params.code line " + std::to_string(F.Line) + ": ";
    if (Name == "include" || Name == "include_next" || Name == "import" ||
        Name == "embed")
      return reject(E, "code",
                    Where + "has the directive '#" + Name +
                        "': a function's text cannot add #includes (headers "
                        "are not part of the edit)");
    if (M.contains("pragma operator"))
      return reject(E, "code",
                    Where + "uses " +
                        M.drop_front(strlen("the new code uses ")).str());
    return reject(E, "code",
                  Where + "has the preprocessor directive" +
                      (Name.empty() ? std::string() : " '#" + Name + "'") +
                      "; edit text may hold no directive (only '#pragma "
                      "unroll')");
  }
  // Braces and names, from the compiler's tokens: comments (a `//` comment
  // continued by a line splice too), strings and raw strings are skipped as
  // clang skips them.
  std::string Buf = Code.str();
  Lexer L(SourceLocation(), LO, Buf.c_str(), Buf.c_str(),
          Buf.c_str() + Buf.size());
  L.SetCommentRetentionState(true);
  unsigned Base = SourceLocation().getRawEncoding();
  FunctionText Out;
  int Depth = 0;
  unsigned TopLevelBodies = 0;
  size_t LastClose = StringRef::npos, LastEnd = 0, AfterBody = StringRef::npos;
  std::string LastIdent, NameBeforeParen;
  bool SawParen = false;
  Token T;
  while (true) {
    L.LexFromRawLexer(T);
    if (T.is(tok::eof))
      break;
    size_t I = T.getLocation().getRawEncoding() - Base;
    LastEnd = I + T.getLength();
    StringRef Text = StringRef(Buf).substr(I, T.getLength());
    if (T.is(tok::comment))
      continue;
    if (LastClose != StringRef::npos && Depth == 0 &&
        AfterBody == StringRef::npos)
      AfterBody = I;
    if (T.is(tok::unknown) && (Text.contains('"') || Text.contains('\'')))
      return codeError(E, Code, I,
                       Twine("has an unterminated ") +
                           (Text.contains('"') ? "string" : "character") +
                           " literal");
    if (T.is(tok::raw_identifier)) {
      std::string Id = withoutSplices(Text);
      if (Depth == 0) {
        if (Id == "__global__")
          Out.IsGlobal = true;
        if (Id == "__device__")
          Out.IsDevice = true;
        LastIdent = Id;
      }
      continue;
    }
    if (T.is(tok::l_paren) && Depth == 0 && !SawParen && !LastIdent.empty() &&
        LastIdent != "__launch_bounds__" && LastIdent != "__attribute__" &&
        LastIdent != "alignas" && LastIdent != "__declspec" &&
        LastIdent != "decltype") {
      NameBeforeParen = LastIdent;
      SawParen = true;
    }
    if (T.is(tok::l_brace)) {
      if (Depth == 0 && TopLevelBodies == 1)
        return codeError(
            E, Code, I,
            "defines more than one function or type; the text must be "
            "exactly one function definition (add helpers with an "
            "add-device-function edit)");
      ++Depth;
    } else if (T.is(tok::r_brace)) {
      if (--Depth < 0)
        return codeError(E, Code, I, "has an unmatched '}'");
      if (Depth == 0) {
        ++TopLevelBodies;
        LastClose = I;
      }
    }
  }
  // The raw lexer skips an unterminated /* comment to the end silently.
  if (!StringRef(Buf).substr(LastEnd).trim().empty())
    return codeError(E, Code, LastEnd,
                     "is truncated: a /* comment is never closed");
  if (Depth > 0)
    return codeError(E, Code, Code.size(),
                     "is truncated: " + Twine(Depth) + " '{' " +
                         (Depth == 1 ? "is" : "are") +
                         " never closed (the body ends early)");
  if (!TopLevelBodies)
    return reject(E, "code",
                  "params.code has no function body ('{ ... }'); give a "
                  "whole definition, not a declaration");
  // Reported where the body ends, as a reader sees it.
  if (AfterBody != StringRef::npos)
    return codeError(E, Code, LastClose + 1,
                     "has text after the function body: '" +
                         StringRef(Code).substr(AfterBody).take_front(40) +
                         "'");
  if (NameBeforeParen.empty())
    return reject(E, "code",
                  "params.code does not look like a function definition "
                  "(no name followed by a parameter list)");
  Out.Name = NameBeforeParen;
  return Out;
}

namespace {

class ReplaceFunction : public Transform {
public:
  /// Launch-independent: it neither reads nor rewrites the launches.
  bool readsLaunches() const override { return false; }
  bool readsBody() const override { return false; }
  StringRef kind() const override { return "replace-function"; }
  StringRef description() const override {
    return "replace one function definition (a kernel or a __device__ "
           "function) with new text; name and parameter types must stay";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec::string("code",
                              "the complete new definition (template header, "
                              "qualifiers, signature and body), C++ text only")
                .required(),
            ParamSpec::boolean(
                "changes_precision",
                "the new code may change floating-point results (fast "
                "intrinsics, reassociated reductions)",
                false)};
  }
  bool changesPrecision(const Edit &E) const override {
    return E.getBool("changes_precision").value_or(false);
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    A.Applies = findFunctionDefinition(Ctx.AST, Target) != nullptr;
    A.Reason = A.Applies ? "give the new definition in params.code"
                         : "no function '" + Target.str() + "' in this file";
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    const FunctionDecl *FD = findFunctionDefinition(Ctx.AST, E.Target);
    if (!FD) {
      std::vector<std::string> Names;
      for (const KernelInfo &K : Ctx.Model.Kernels)
        Names.push_back("'" + K.QualifiedName + "'");
      return reject(
          E, "target",
          "no function named '" + E.Target +
              "' is defined in this file (kernels: " +
              (Names.empty() ? std::string("none") : join(Names, ", ")) + ")");
    }
    const SourceManager &SM = Ctx.AST.getSourceManager();
    if (!FD->hasAttr<CUDAGlobalAttr>() && !FD->hasAttr<CUDADeviceAttr>())
      return reject(E, "scope",
                    "'" + E.Target +
                        "' is host code; replace-function rewrites kernels "
                        "and __device__ functions only (host code may change "
                        "only in launch configurations)");
    if (FD->getLocation().isMacroID())
      return reject(E, "macro",
                    "'" + E.Target + "' is defined by a macro expansion");
    std::string Code = *E.getString("code");
    auto Text = scanFunctionText(E, Code, Ctx.AST.getLangOpts());
    if (!Text)
      return Text.takeError();
    std::string OldName = FD->getNameAsString();
    if (Text->Name != OldName)
      return reject(E, "signature",
                    "the new text defines '" + Text->Name + "', not '" +
                        OldName +
                        "': replace-function must keep the function's name");
    bool IsKernel = FD->hasAttr<CUDAGlobalAttr>();
    if (IsKernel && !Text->IsGlobal)
      return reject(E, "signature",
                    "'" + OldName +
                        "' is a kernel but the new text is not __global__");
    if (!IsKernel && Text->IsGlobal)
      return reject(E, "signature",
                    "'" + OldName +
                        "' is not a kernel but the new text is __global__");
    SourceLocation End = SM.getExpansionLoc(FD->getSourceRange().getEnd());
    unsigned B = definitionBegin(Ctx, FD);
    unsigned EO = SM.getFileOffset(End) +
                  Lexer::MeasureTokenLength(End, SM, Ctx.AST.getLangOpts());
    tooling::Replacements Repls;
    if (Error Err = addReplacement(Repls,
                                   tooling::Replacement(Ctx.FileName, B, EO - B,
                                                        StringRef(Code).trim()),
                                   E))
      return std::move(Err);
    return Repls;
  }

  std::string summary(const Edit &E) const override {
    return "replace the definition of " + E.Target;
  }
};

class AddDeviceFunction : public Transform {
public:
  /// Launch-independent: it neither reads nor rewrites the launches.
  bool readsLaunches() const override { return false; }
  bool readsBody() const override { return false; }
  StringRef kind() const override { return "add-device-function"; }
  StringRef description() const override {
    return "add a new __device__ helper function right before the kernel "
           "that will use it";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec::string(
                "code", "the helper's complete definition, marked __device__ "
                        "(e.g. __device__ __forceinline__ float f(float x) "
                        "{ ... })")
                .required()};
  }
  bool addsHelpers() const override { return true; }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    A.Applies = Ctx.Model.findKernel(Target.str()) != nullptr;
    A.Reason = A.Applies ? "give the helper's definition in params.code"
                         : "no kernel '" + Target.str() + "'";
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    auto K = resolveKernel(Ctx, E, E.Target);
    if (!K)
      return K.takeError();
    std::string Code = *E.getString("code");
    auto Text = scanFunctionText(E, Code, Ctx.AST.getLangOpts());
    if (!Text)
      return Text.takeError();
    if (Text->IsGlobal)
      return reject(E, "code",
                    "the helper '" + Text->Name +
                        "' is __global__; add-device-function adds "
                        "__device__ functions only");
    if (!Text->IsDevice)
      return reject(E, "code",
                    "the helper '" + Text->Name +
                        "' is not marked __device__ (kernels cannot call it)");
    // A new overload could change which function existing calls pick.
    const SourceManager &SM = Ctx.AST.getSourceManager();
    auto Found = Ctx.AST.getTranslationUnitDecl()->lookup(
        DeclarationName(&Ctx.AST.Idents.get(Text->Name)));
    for (const NamedDecl *D : Found)
      if (isUserFile(SM, SM.getFileID(SM.getExpansionLoc(D->getLocation()))))
        return reject(E, "code",
                      "'" + Text->Name +
                          "' is already declared in this file; pick a new "
                          "name",
                      filePos(SM, SM.getExpansionLoc(D->getLocation())));
    if (K->Info->InMacro)
      return reject(E, "macro", "the kernel is defined by a macro expansion");
    unsigned At = definitionBegin(Ctx, K->Decl);
    tooling::Replacements Repls;
    if (Error Err = addReplacement(
            Repls, insertAt(Ctx, At, StringRef(Code).trim().str() + "\n\n"), E))
      return std::move(Err);
    return Repls;
  }

  std::string summary(const Edit &E) const override {
    return "add a __device__ helper before " + E.Target;
  }
};

} // namespace

std::unique_ptr<Transform> createReplaceFunctionTransform() {
  return std::make_unique<ReplaceFunction>();
}
std::unique_ptr<Transform> createAddDeviceFunctionTransform() {
  return std::make_unique<AddDeviceFunction>();
}

} // namespace optiml
