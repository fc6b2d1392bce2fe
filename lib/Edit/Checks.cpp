//===- Checks.cpp - The checks every rewritten file passes ----------------===//

#include "optiml/Edit/Checks.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/Builtins.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <map>
#include <set>

using namespace llvm;
using namespace clang;

namespace optiml {

static CheckFailure failure(StringRef Check, const Twine &Msg,
                            SourcePos Pos = {}) {
  CheckFailure F;
  F.Check = Check.str();
  F.Line = Pos.Line;
  F.Column = Pos.Column;
  F.Message = Msg.str();
  return F;
}

/// Line and column of \p Offset in \p Code.
static SourcePos posOf(StringRef Code, unsigned Offset) {
  SourcePos P;
  Offset = std::min<unsigned>(Offset, Code.size());
  StringRef Before = Code.substr(0, Offset);
  P.Line = Before.count('\n') + 1;
  size_t NL = Before.rfind('\n');
  P.Column = Offset - (NL == StringRef::npos ? 0 : NL + 1) + 1;
  P.Offset = Offset;
  return P;
}

/// The file \p Repls rewrite: the main file, or the included file they
/// name (the rewriter has checked that they name one file).
static FileID editedFile(const SourceManager &SM,
                         const tooling::Replacements &Repls) {
  if (Repls.empty())
    return SM.getMainFileID();
  FileID F = findFileID(SM, Repls.begin()->getFilePath());
  return F.isValid() ? F : SM.getMainFileID();
}

std::vector<CheckFailure> checkOneFile(const tooling::Replacements &Repls,
                                       StringRef FileName) {
  auto Norm = [](StringRef P) {
    SmallString<256> S(P);
    (void)sys::fs::make_absolute(S);
    sys::path::remove_dots(S, /*remove_dot_dot=*/true);
    return std::string(S);
  };
  std::string Want = Norm(FileName);
  std::vector<CheckFailure> Failures;
  for (const tooling::Replacement &R : Repls)
    if (Norm(R.getFilePath()) != Want) {
      Failures.push_back(
          failure("scope",
                  "the edit changes '" + R.getFilePath().str() +
                      "', not the file that defines its target ('" + Want +
                      "'); an edit rewrites that one file only",
                  SourcePos()));
      break;
    }
  return Failures;
}

//===-- Macro expansions
//---------------------------------------------------===//

std::vector<CheckFailure>
checkMacroExpansions(ASTContext &Old, const tooling::Replacements &Repls) {
  const SourceManager &SM = Old.getSourceManager();
  FileID Main = editedFile(SM, Repls);
  struct Expansion {
    unsigned Begin, End;
    std::string Name;
  };
  std::vector<Expansion> Expansions;
  for (unsigned I = 0, N = SM.local_sloc_entry_size(); I < N; ++I) {
    const SrcMgr::SLocEntry &Ent = SM.getLocalSLocEntry(I);
    if (!Ent.isExpansion())
      continue;
    const SrcMgr::ExpansionInfo &X = Ent.getExpansion();
    if (X.isMacroArgExpansion())
      continue;
    SourceLocation B = X.getExpansionLocStart(), E = X.getExpansionLocEnd();
    if (!B.isFileID() || !E.isFileID() || SM.getFileID(B) != Main ||
        SM.getFileID(E) != Main)
      continue;
    unsigned BO = SM.getFileOffset(B);
    unsigned EO = SM.getFileOffset(E) +
                  Lexer::MeasureTokenLength(E, SM, Old.getLangOpts());
    bool Invalid = false;
    const char *P = SM.getCharacterData(B, &Invalid);
    std::string Name;
    if (!Invalid)
      while (*P && (isAlnum(*P) || *P == '_'))
        Name += *P++;
    Expansions.push_back({BO, EO, Name});
  }
  std::vector<CheckFailure> Failures;
  StringRef Code = SM.getBufferData(Main);
  for (const tooling::Replacement &R : Repls) {
    unsigned RB = R.getOffset(), RE = R.getOffset() + R.getLength();
    for (const Expansion &X : Expansions) {
      bool Touches = R.getLength() == 0 ? (RB > X.Begin && RB < X.End)
                                        : (RB < X.End && RE > X.Begin);
      bool Contains = RB <= X.Begin && RE >= X.End;
      if (Touches && !Contains) {
        Failures.push_back(failure(
            "macro",
            "the edit rewrites text inside the expansion of macro '" + X.Name +
                "'; macros are never rewritten (expand it by hand first)",
            posOf(Code, std::max(RB, X.Begin))));
        break;
      }
    }
  }
  return Failures;
}

//===-- Scope
//---------------------------------------------------------------===//

/// "function 'main'" for the top-level declaration of the file \p In that
/// holds \p Offset.
static std::string enclosingDecl(ASTContext &Ctx, FileID In, unsigned Offset) {
  const SourceManager &SM = Ctx.getSourceManager();
  std::string Found = "top-level code";
  std::function<void(ArrayRef<Decl *>)> Walk = [&](ArrayRef<Decl *> Decls) {
    for (const Decl *D : Decls) {
      SourceRange R = D->getSourceRange();
      SourceLocation B = SM.getExpansionLoc(R.getBegin());
      SourceLocation E = SM.getExpansionLoc(R.getEnd());
      if (SM.getFileID(B) != In)
        continue;
      unsigned BO = SM.getFileOffset(B), EO = SM.getFileOffset(E);
      if (Offset < BO || Offset > EO)
        continue;
      if (isa<NamespaceDecl, LinkageSpecDecl>(D)) {
        const auto *DC = cast<DeclContext>(D);
        Walk(std::vector<Decl *>(DC->decls_begin(), DC->decls_end()));
        continue;
      }
      const NamedDecl *ND = dyn_cast<NamedDecl>(D);
      if (const auto *T = dyn_cast<FunctionTemplateDecl>(D))
        ND = T->getTemplatedDecl();
      if (const auto *FD = dyn_cast_or_null<FunctionDecl>(ND))
        Found = std::string(isKernel(FD) ? "kernel '" : "function '") +
                FD->getQualifiedNameAsString() + "'";
      else if (ND && !ND->getName().empty())
        Found = "declaration of '" + ND->getQualifiedNameAsString() + "'";
    }
  };
  // Declarations of the file In: none is in a preamble of system headers.
  Walk(userTopLevelDecls(Ctx));
  return Found;
}

std::vector<CheckFailure> checkScope(ASTContext &Old, StringRef OldCode,
                                     const tooling::Replacements &Repls,
                                     ArrayRef<ByteRange> Allowed) {
  std::vector<CheckFailure> Failures;
  for (const tooling::Replacement &R : Repls) {
    unsigned RB = R.getOffset(), RE = R.getOffset() + R.getLength();
    bool Inside = any_of(Allowed, [&](const ByteRange &A) {
      return RB >= A.Begin && RE <= A.End;
    });
    if (Inside)
      continue;
    std::vector<std::string> Whats;
    for (const ByteRange &A : Allowed)
      if (!is_contained(Whats, A.What))
        Whats.push_back(A.What);
    Failures.push_back(failure(
        "scope",
        "the edit changes " +
            enclosingDecl(Old, editedFile(Old.getSourceManager(), Repls), RB) +
            ", outside what it may change (" +
            (Whats.empty() ? std::string("nothing") : join(Whats, ", ")) + ")",
        posOf(OldCode, RB)));
  }
  return Failures;
}

//===-- Introduced tokens
//----------------------------------------------------===//

namespace {
struct TokenFacts {
  /// fact -> offsets (within the lexed text) where it occurs
  std::map<std::string, std::vector<unsigned>> Facts;
};
} // namespace

static TokenFacts lexFacts(const LangOptions &LO, StringRef Text,
                           const CheckOptions &Opts) {
  TokenFacts F;
  std::string Buf = Text.str();
  Lexer L(SourceLocation(), LO, Buf.c_str(), Buf.c_str(),
          Buf.c_str() + Buf.size());
  L.SetCommentRetentionState(false);
  std::vector<Token> Toks;
  Token T;
  do {
    L.LexFromRawLexer(T);
    Toks.push_back(T);
  } while (T.isNot(tok::eof) && Toks.size() < 2000000);
  auto OffsetOf = [&](const Token &Tk) {
    return unsigned(Tk.getLocation().getRawEncoding());
  };
  // The raw lexer's locations are offsets from an invalid base: recompute.
  auto Off = [&](size_t I) {
    return unsigned(OffsetOf(Toks[I]) - OffsetOf(Toks.front()));
  };
  // What the compiler reads: `pri\<newline>ntf` is printf.
  auto IdentAt = [&](size_t I) -> std::string {
    if (I >= Toks.size() || Toks[I].isNot(tok::raw_identifier))
      return "";
    return withoutSplices(Toks[I].getRawIdentifier());
  };
  for (size_t I = 0; I + 1 < Toks.size(); ++I) {
    const Token &Tk = Toks[I];
    if (Tk.is(tok::lesslessless)) {
      if (Opts.AllowLaunches)
        continue;
      F.Facts["launches a kernel with <<<...>>> (dynamic parallelism is not "
              "allowed)"]
          .push_back(Off(I));
      continue;
    }
    std::string Id = IdentAt(I);
    if (Id.empty())
      continue;
    bool Call = I + 1 < Toks.size() && Toks[I + 1].is(tok::l_paren);
    if (Id == "asm" || Id == "__asm__" || Id == "__asm") {
      if (!Opts.AllowAsm)
        F.Facts["uses inline asm (not allowed unless --allow-asm)"].push_back(
            Off(I));
    } else if (Call && (Id == "printf" || Id == "fprintf" || Id == "puts")) {
      if (!Opts.AllowPrintf)
        F.Facts["calls " + Id +
                " (not allowed in kernels unless --allow-printf)"]
            .push_back(Off(I));
    } else if ((Call && (Id == "malloc" || Id == "calloc" || Id == "realloc" ||
                         Id == "free")) ||
               Id == "new" || Id == "delete") {
      if (!Opts.AllowMalloc)
        F.Facts["allocates device heap memory with '" + Id +
                "' (not allowed unless --allow-malloc)"]
            .push_back(Off(I));
    } else if (Call && !Opts.AllowLaunches &&
               (Id == "cudaLaunchKernel" || Id == "cudaLaunchDevice" ||
                Id == "cudaGetParameterBuffer" ||
                Id == "cudaLaunchCooperativeKernel")) {
      F.Facts["launches a kernel with " + Id +
              " (dynamic parallelism is not allowed)"]
          .push_back(Off(I));
    }
  }
  return F;
}

std::vector<CheckFailure>
checkIntroducedTokens(const LangOptions &LO, StringRef OldCode,
                      StringRef NewCode, const tooling::Replacements &Repls,
                      const CheckOptions &Opts) {
  std::vector<CheckFailure> Failures;
  int Delta = 0;
  for (const tooling::Replacement &R : Repls) {
    unsigned NewBegin = R.getOffset() + Delta;
    Delta += int(R.getReplacementText().size()) - int(R.getLength());
    StringRef OldText = OldCode.substr(R.getOffset(), R.getLength());
    TokenFacts Before = lexFacts(LO, OldText, Opts);
    TokenFacts After = lexFacts(LO, R.getReplacementText(), Opts);
    for (const auto &[Fact, Offsets] : After.Facts) {
      size_t Had = Before.Facts.count(Fact) ? Before.Facts[Fact].size() : 0;
      if (Offsets.size() <= Had)
        continue;
      Failures.push_back(failure("forbidden", "the new code " + Fact,
                                 posOf(NewCode, NewBegin + Offsets[Had])));
    }
  }
  return Failures;
}

//===-- Device code
//--------------------------------------------------------===//

/// Declarations of the user's files (the main file and the user files it
/// includes): an edit of one of them is compared with all of them.
static bool isMainFileDecl(const SourceManager &SM, const Decl *D) {
  SourceLocation L = SM.getExpansionLoc(D->getLocation());
  if (SM.isInMainFile(L))
    return true;
  if (L.isInvalid() || SM.isInSystemHeader(L))
    return false;
  return isUserFile(SM, SM.getFileID(L));
}

static bool isDeviceSide(const FunctionDecl *FD) {
  return FD->hasAttr<CUDAGlobalAttr>() || FD->hasAttr<CUDADeviceAttr>();
}

namespace {
/// Facts about device code: "<function>: calls host function 'f'".
class DeviceFacts : public RecursiveASTVisitor<DeviceFacts> {
public:
  explicit DeviceFacts(ASTContext &Ctx) : SM(Ctx.getSourceManager()) {}

  bool VisitFunctionDecl(FunctionDecl *FD) {
    if (!FD->doesThisDeclarationHaveABody() || !isDeviceSide(FD) ||
        FD->isTemplateInstantiation() || !isMainFileDecl(SM, FD))
      return true;
    std::string Fn = FD->getQualifiedNameAsString();
    CallVisitor V(*this, Fn);
    V.TraverseStmt(FD->getBody());
    return true;
  }

  std::map<std::string, std::vector<SourceLocation>> Facts;

private:
  struct CallVisitor : RecursiveASTVisitor<CallVisitor> {
    CallVisitor(DeviceFacts &P, std::string Fn) : P(P), Fn(std::move(Fn)) {}
    bool VisitCallExpr(CallExpr *C) {
      if (isa<CUDAKernelCallExpr>(C)) {
        std::string Callee = "a kernel";
        if (const FunctionDecl *K = C->getDirectCallee())
          Callee = "kernel '" + K->getQualifiedNameAsString() + "'";
        add("launches " + Callee +
                " from device code (dynamic parallelism is not allowed)",
            C->getBeginLoc());
        return true;
      }
      const FunctionDecl *F = C->getDirectCallee();
      if (!F || F->getBuiltinID() || F->isConstexpr() || F->isImplicit() ||
          isDeviceSide(F))
        return true;
      add("calls host function '" + F->getQualifiedNameAsString() + "'",
          C->getBeginLoc());
      return true;
    }
    void add(const std::string &Fact, SourceLocation Loc) {
      P.Facts["'" + Fn + "' " + Fact].push_back(Loc);
    }
    DeviceFacts &P;
    std::string Fn;
  };
  const SourceManager &SM;
};
} // namespace

std::vector<CheckFailure> checkDeviceCode(ASTContext &Old, ASTContext &New,
                                          const CheckOptions &Opts) {
  DeviceFacts Before(Old), After(New);
  traverseUserCode(Before, Old);
  traverseUserCode(After, New);
  std::vector<CheckFailure> Failures;
  const SourceManager &SM = New.getSourceManager();
  for (const auto &[Fact, Locs] : After.Facts) {
    size_t Had = Before.Facts.count(Fact) ? Before.Facts[Fact].size() : 0;
    if (Locs.size() <= Had)
      continue;
    Failures.push_back(failure("forbidden", "the new code: " + Fact,
                               filePos(SM, SM.getExpansionLoc(Locs[Had]))));
  }
  return Failures;
}

//===-- Compiles
//-------------------------------------------------------------===//

std::vector<CheckFailure> checkCompiles(const ParsedTU &TU, StringRef Side,
                                        unsigned Max) {
  std::vector<CheckFailure> Failures;
  bool LastKept = false;
  unsigned Notes = 0;
  for (const Diagnostic &D : TU.Diags) {
    // clang's notes often carry the reason ("call to __host__ function from
    // __global__ function"): keep the first two with their error.
    if (D.Severity == Diagnostic::Note && LastKept && Notes < 2) {
      Failures.back().Message += "; note: " + D.Message;
      ++Notes;
      continue;
    }
    if (!D.isError()) {
      LastKept = LastKept && D.Severity == Diagnostic::Note;
      continue;
    }
    LastKept = false;
    if (Failures.size() == Max)
      break;
    LastKept = true;
    Notes = 0;
    CheckFailure F;
    F.Check = "type-checks";
    F.File = D.File;
    F.Line = D.Line;
    F.Column = D.Column;
    F.Message = (Side.empty() ? "" : "(" + Side.str() + " side) ") + D.Message;
    Failures.push_back(std::move(F));
  }
  return Failures;
}

//===-- Signature
//----------------------------------------------------------===//

/// The definition of the main-file function \p Name (the pattern for
/// templates), or null.
const FunctionDecl *findFunctionDefinition(ASTContext &Ctx, StringRef Name) {
  if (const FunctionDecl *K = findKernelDecl(Ctx, Name))
    return K;
  const SourceManager &SM = Ctx.getSourceManager();
  const FunctionDecl *Found = nullptr;
  std::function<void(ArrayRef<Decl *>)> Walk = [&](ArrayRef<Decl *> Decls) {
    for (const Decl *D : Decls) {
      if (isa<NamespaceDecl, LinkageSpecDecl>(D)) {
        const auto *DC = cast<DeclContext>(D);
        Walk(std::vector<Decl *>(DC->decls_begin(), DC->decls_end()));
      }
      const FunctionDecl *FD = dyn_cast<FunctionDecl>(D);
      if (const auto *T = dyn_cast<FunctionTemplateDecl>(D))
        FD = T->getTemplatedDecl();
      if (FD && !Found && FD->doesThisDeclarationHaveABody() &&
          isMainFileDecl(SM, FD) && FD->getQualifiedNameAsString() == Name)
        Found = FD;
    }
  };
  Walk(userTopLevelDecls(Ctx));
  return Found;
}

/// A parameter type with __restrict__ and added const ignored.
static std::string normalizedType(ASTContext &Ctx, QualType T) {
  T = T.getCanonicalType().getUnqualifiedType();
  if (const auto *PT = T->getAs<PointerType>())
    T = Ctx.getPointerType(PT->getPointeeType().getUnqualifiedType());
  return T.getAsString();
}

std::vector<CheckFailure> checkSignature(ASTContext &Old, ASTContext &New,
                                         StringRef Name) {
  std::vector<CheckFailure> Failures;
  const FunctionDecl *O = findFunctionDefinition(Old, Name);
  if (!O)
    return Failures;
  const FunctionDecl *N = findFunctionDefinition(New, Name);
  const SourceManager &NSM = New.getSourceManager();
  if (!N) {
    Failures.push_back(failure(
        "signature", "the new code no longer defines '" + Name +
                         "' (a rewrite must keep the function's name)"));
    return Failures;
  }
  SourcePos At = filePos(NSM, NSM.getExpansionLoc(N->getLocation()));
  if (isKernel(O) != isKernel(N))
    Failures.push_back(failure("signature",
                               "'" + Name + "' " +
                                   (isKernel(O) ? "is no longer" : "became") +
                                   " a __global__ kernel",
                               At));
  bool OT = O->getDescribedFunctionTemplate(),
       NT = N->getDescribedFunctionTemplate();
  if (OT != NT) {
    Failures.push_back(
        failure("signature",
                "'" + Name + "' " +
                    (OT ? "is no longer a template" : "became a template"),
                At));
  } else if (OT) {
    const TemplateParameterList *OP =
        O->getDescribedFunctionTemplate()->getTemplateParameters();
    const TemplateParameterList *NP =
        N->getDescribedFunctionTemplate()->getTemplateParameters();
    bool Same = OP->size() == NP->size();
    for (unsigned I = 0; Same && I < OP->size(); ++I)
      Same = OP->getParam(I)->getKind() == NP->getParam(I)->getKind();
    if (!Same)
      Failures.push_back(failure("signature",
                                 "the template parameters of '" + Name +
                                     "' changed (was " + Twine(OP->size()) +
                                     ", now " + Twine(NP->size()) + ")",
                                 At));
  }
  if (O->getNumParams() != N->getNumParams()) {
    Failures.push_back(
        failure("signature",
                "'" + Name + "' now takes " + Twine(N->getNumParams()) +
                    " parameters instead of " + Twine(O->getNumParams()),
                At));
    return Failures;
  }
  for (unsigned I = 0; I < O->getNumParams(); ++I) {
    std::string OTy = normalizedType(Old, O->getParamDecl(I)->getType());
    std::string NTy = normalizedType(New, N->getParamDecl(I)->getType());
    if (OTy != NTy)
      Failures.push_back(failure(
          "signature",
          "parameter " + Twine(I + 1) + " of '" + Name +
              "' changed type from '" +
              O->getParamDecl(I)->getType().getAsString() + "' to '" +
              N->getParamDecl(I)->getType().getAsString() + "'",
          filePos(NSM,
                  NSM.getExpansionLoc(N->getParamDecl(I)->getLocation()))));
  }
  if (normalizedType(Old, O->getReturnType()) !=
      normalizedType(New, N->getReturnType()))
    Failures.push_back(
        failure("signature", "the return type of '" + Name + "' changed", At));
  return Failures;
}

//===-- Declarations
//-------------------------------------------------------===//

namespace {
struct DeclEntry {
  std::string Key;
  SourceLocation Loc;
  bool IsHelper;           ///< a __device__ (not __global__) function
  bool IsConstant = false; ///< a __constant__ variable
  std::string Describe;
};
} // namespace

static std::vector<DeclEntry> topLevelDecls(ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  std::vector<DeclEntry> Out;
  std::function<void(ArrayRef<Decl *>)> Walk = [&](ArrayRef<Decl *> Decls) {
    for (const Decl *D : Decls) {
      if (D->isImplicit() || !isMainFileDecl(SM, D))
        continue;
      if (isa<NamespaceDecl, LinkageSpecDecl>(D)) {
        const auto *DC = cast<DeclContext>(D);
        Walk(std::vector<Decl *>(DC->decls_begin(), DC->decls_end()));
        continue;
      }
      const NamedDecl *ND = dyn_cast<NamedDecl>(D);
      if (!ND)
        continue;
      const FunctionDecl *FD = dyn_cast<FunctionDecl>(D);
      if (const auto *T = dyn_cast<FunctionTemplateDecl>(D))
        FD = T->getTemplatedDecl();
      DeclEntry E;
      E.Loc = SM.getExpansionLoc(D->getLocation());
      E.IsHelper = false;
      if (FD) {
        std::vector<std::string> Ps;
        for (const ParmVarDecl *P : FD->parameters())
          Ps.push_back(normalizedType(Ctx, P->getType()));
        E.Key = std::string(isKernel(FD) ? "kernel " : "function ") +
                FD->getQualifiedNameAsString() + "(" + join(Ps, ", ") + ")" +
                (FD->doesThisDeclarationHaveABody() ? " def" : " decl");
        E.IsHelper = !isKernel(FD) && FD->hasAttr<CUDADeviceAttr>();
        E.Describe = std::string(isKernel(FD) ? "__global__ function '"
                                 : E.IsHelper ? "__device__ function '"
                                              : "function '") +
                     FD->getQualifiedNameAsString() + "'";
      } else {
        if (ND->getDeclName().isEmpty())
          continue;
        E.Key = std::string(D->getDeclKindName()) + " " +
                ND->getQualifiedNameAsString();
        E.IsConstant = isa<VarDecl>(D) && D->hasAttr<CUDAConstantAttr>();
        E.Describe = "declaration of '" + ND->getQualifiedNameAsString() + "'";
      }
      Out.push_back(std::move(E));
    }
  };
  Walk(userTopLevelDecls(Ctx));
  return Out;
}

std::vector<CheckFailure> checkDeclarations(ASTContext &Old, ASTContext &New,
                                            bool AllowHelpers,
                                            bool AllowConstants) {
  std::vector<DeclEntry> O = topLevelDecls(Old), N = topLevelDecls(New);
  StringMap<int> Count;
  for (const DeclEntry &E : O)
    ++Count[E.Key];
  std::vector<CheckFailure> Failures;
  const SourceManager &NSM = New.getSourceManager();
  for (const DeclEntry &E : N) {
    if (Count[E.Key]-- > 0)
      continue;
    if ((AllowHelpers && E.IsHelper) || (AllowConstants && E.IsConstant))
      continue;
    Failures.push_back(failure(
        "scope",
        "the new code adds a " + E.Describe +
            (E.IsHelper ? " (add helpers with an add-device-function edit)"
                        : " outside the target"),
        filePos(NSM, E.Loc)));
  }
  const SourceManager &OSM = Old.getSourceManager();
  for (const DeclEntry &E : O)
    if (Count[E.Key]-- > 0) {
      Failures.push_back(failure("scope",
                                 "the new code removes the " + E.Describe,
                                 filePos(OSM, E.Loc)));
    }
  return Failures;
}

//===-- Introduced code --------------------------------------------------===//

namespace {
/// Device functions of the main file and the device functions each calls
/// directly (templates as their patterns).
struct CallGraph {
  std::map<const FunctionDecl *, std::set<const FunctionDecl *>> Calls;

  static const FunctionDecl *key(const FunctionDecl *FD) {
    if (const FunctionDecl *P = FD->getTemplateInstantiationPattern())
      FD = P;
    return FD->getCanonicalDecl();
  }
  /// Main-file device functions that can reach themselves.
  std::set<std::string> recursive() const {
    std::set<std::string> Out;
    for (const auto &[F, _] : Calls) {
      std::set<const FunctionDecl *> Seen;
      std::vector<const FunctionDecl *> Work(Calls.at(F).begin(),
                                             Calls.at(F).end());
      while (!Work.empty()) {
        const FunctionDecl *G = Work.back();
        Work.pop_back();
        if (G == F) {
          Out.insert(F->getQualifiedNameAsString());
          break;
        }
        if (!Seen.insert(G).second)
          continue;
        auto It = Calls.find(G);
        if (It != Calls.end())
          Work.insert(Work.end(), It->second.begin(), It->second.end());
      }
    }
    return Out;
  }
};

class CallGraphBuilder : public RecursiveASTVisitor<CallGraphBuilder> {
public:
  CallGraphBuilder(const SourceManager &SM, CallGraph &G) : SM(SM), G(G) {}
  bool shouldVisitTemplateInstantiations() const { return true; }
  bool TraverseFunctionDecl(FunctionDecl *FD) {
    const FunctionDecl *Saved = Current;
    if (FD->doesThisDeclarationHaveABody() && isDeviceSide(FD) &&
        isMainFileDecl(SM, FD))
      Current = CallGraph::key(FD);
    bool R = RecursiveASTVisitor::TraverseFunctionDecl(FD);
    Current = Saved;
    return R;
  }
  bool TraverseCXXMethodDecl(CXXMethodDecl *MD) {
    const FunctionDecl *Saved = Current;
    if (MD->doesThisDeclarationHaveABody() && isDeviceSide(MD) &&
        isMainFileDecl(SM, MD))
      Current = CallGraph::key(MD);
    bool R = RecursiveASTVisitor::TraverseCXXMethodDecl(MD);
    Current = Saved;
    return R;
  }
  bool VisitCallExpr(CallExpr *C) {
    if (!Current)
      return true;
    G.Calls[Current];
    if (const FunctionDecl *F = C->getDirectCallee())
      if (isMainFileDecl(SM, F))
        G.Calls[Current].insert(CallGraph::key(F));
    return true;
  }

private:
  const SourceManager &SM;
  CallGraph &G;
  const FunctionDecl *Current = nullptr;
};

/// What the edit's own declarations and statements do.
class IntroducedCode : public RecursiveASTVisitor<IntroducedCode> {
public:
  IntroducedCode(ASTContext &Ctx, FileID In, ArrayRef<ByteRange> Edited,
                 const CheckOptions &Opts)
      : SM(Ctx.getSourceManager()), In(In), Edited(Edited), Opts(Opts) {}
  // Dependent calls resolve only in instantiations.
  bool shouldVisitTemplateInstantiations() const { return true; }
  bool shouldVisitImplicitCode() const { return false; }

  bool VisitDecl(Decl *D) {
    if (!inEdit(D->getLocation()))
      return true;
    for (const Attr *A : D->attrs()) {
      if (A->isImplicit() || !inEdit(A->getLocation()))
        continue;
      const char *Why = nullptr;
      switch (A->getKind()) {
      case attr::Constructor:
      case attr::Destructor:
      case attr::InitPriority:
        Why = "runs code before or after the program (outside any kernel)";
        break;
      case attr::Cleanup:
        Why = "runs a function implicitly at the end of a scope";
        break;
      case attr::Section:
      case attr::CodeSeg:
        Why = "places code or data in a chosen section";
        break;
      case attr::Alias:
      case attr::IFunc:
      case attr::WeakRef:
        Why = "binds a symbol to other code at link or load time";
        break;
      default:
        break;
      }
      if (Why)
        add(A->getLocation(), "has the attribute '" +
                                  std::string(A->getSpelling()) + "', which " +
                                  Why);
    }
    if (const auto *V = dyn_cast<DeclaratorDecl>(D))
      if (V->getType()->isVariablyModifiedType() && isa<VarDecl, FieldDecl>(V))
        add(V->getLocation(),
            "declares '" + V->getNameAsString() +
                "' with a variable-length array type (stack growth without "
                "bound)");
    if (const auto *T = dyn_cast<TypedefNameDecl>(D))
      if (T->getUnderlyingType()->isVariablyModifiedType())
        add(T->getLocation(), "declares a variable-length array type");
    return true;
  }

  bool VisitCallExpr(CallExpr *C) {
    if (!inEdit(C->getBeginLoc()))
      return true;
    const FunctionDecl *F = C->getDirectCallee();
    if (!F)
      return true;
    unsigned ID = F->getBuiltinID();
    StringRef Name = F->getIdentifier() ? F->getName() : "";
    switch (ID) {
    case Builtin::BI__builtin_alloca:
    case Builtin::BI__builtin_alloca_uninitialized:
    case Builtin::BI__builtin_alloca_with_align:
    case Builtin::BI__builtin_alloca_with_align_uninitialized:
    case Builtin::BIalloca:
    case Builtin::BI_alloca:
      add(C->getBeginLoc(),
          "calls '" + Name.str() + "' (stack allocation without bound)");
      return true;
    default:
      break;
    }
    if (Name == "alloca" || Name == "_alloca")
      add(C->getBeginLoc(),
          "calls '" + Name.str() + "' (stack allocation without bound)");
    else if (!Opts.AllowPrintf &&
             (Name == "printf" || Name == "vprintf" || Name == "puts" ||
              Name == "fprintf") &&
             F->getDeclContext()->isTranslationUnit())
      add(C->getBeginLoc(),
          "calls " + Name.str() +
              " (not allowed in kernels unless --allow-printf)",
          /*Countable=*/true);
    else if (!Opts.AllowMalloc &&
             (Name == "malloc" || Name == "free" || Name == "calloc" ||
              Name == "realloc" || Name == "__nv_aligned_device_malloc") &&
             F->getDeclContext()->isTranslationUnit())
      add(C->getBeginLoc(),
          "allocates device heap memory with '" + Name.str() +
              "' (not allowed unless --allow-malloc)",
          /*Countable=*/true);
    return true;
  }

  bool VisitCXXNewExpr(CXXNewExpr *E) {
    if (!Opts.AllowMalloc && inEdit(E->getBeginLoc()) &&
        !E->getNumPlacementArgs())
      add(E->getBeginLoc(),
          "allocates device heap memory with 'new' (not allowed unless "
          "--allow-malloc)",
          /*Countable=*/true);
    return true;
  }

  bool VisitAsmStmt(AsmStmt *S) {
    // AsmStmt::getBeginLoc() hides the subclasses' and is always invalid;
    // the statement starts at its 'asm' keyword.
    SourceLocation Loc = S->getAsmLoc();
    if (!inEdit(Loc))
      return true;
    if (!Opts.AllowAsm)
      add(Loc, "uses inline asm (not allowed unless --allow-asm)",
          /*Countable=*/true);
    else if (Fn && (Fn->hasAttr<CUDAHostAttr>() || !isDeviceSide(Fn)))
      // --allow-asm is for PTX; the host's assembler would read files
      // (.incbin) into the program.
      add(Loc, "uses inline asm in code compiled for the host "
               "(--allow-asm allows PTX in device code only)");
    return true;
  }

  bool TraverseFunctionDecl(FunctionDecl *FD) {
    const FunctionDecl *Saved = Fn;
    Fn = FD;
    bool R = RecursiveASTVisitor::TraverseFunctionDecl(FD);
    Fn = Saved;
    return R;
  }
  bool TraverseCXXMethodDecl(CXXMethodDecl *MD) {
    const FunctionDecl *Saved = Fn;
    Fn = MD;
    bool R = RecursiveASTVisitor::TraverseCXXMethodDecl(MD);
    Fn = Saved;
    return R;
  }

  struct Fact {
    SourceLocation Loc;
    std::string What;
    /// Allowed when the replaced text had as many (printf in a kernel
    /// that already printed); the others are refused outright.
    bool Countable;
  };
  std::vector<Fact> Facts;

private:
  bool inEdit(SourceLocation Loc) const {
    if (Loc.isInvalid())
      return false;
    Loc = SM.getExpansionLoc(Loc);
    if (SM.getFileID(Loc) != In)
      return false;
    unsigned O = SM.getFileOffset(Loc);
    return any_of(
        Edited, [&](const ByteRange &R) { return O >= R.Begin && O < R.End; });
  }
  void add(SourceLocation Loc, std::string What, bool Countable = false) {
    Loc = SM.getExpansionLoc(Loc);
    // A template's pattern and its instantiations share the place.
    if (any_of(Facts,
               [&](const Fact &F) { return F.Loc == Loc && F.What == What; }))
      return;
    Facts.push_back({Loc, std::move(What), Countable});
  }
  const SourceManager &SM;
  FileID In;
  ArrayRef<ByteRange> Edited;
  const CheckOptions &Opts;
  const FunctionDecl *Fn = nullptr; ///< the function being traversed
};
} // namespace

std::vector<CheckFailure>
checkIntroducedCode(ASTContext *Old, ASTContext &New,
                    const tooling::Replacements &Repls,
                    const CheckOptions &Opts, StringRef Side) {
  std::vector<CheckFailure> Failures;
  const SourceManager &SM = New.getSourceManager();
  std::string Where = Side.empty() ? "" : " (" + Side.str() + " side)";
  std::vector<ByteRange> Edited = editedRanges(Repls);
  IntroducedCode V(New, editedFile(New.getSourceManager(), Repls), Edited,
                   Opts);
  traverseUserCode(V, New);
  std::map<std::string, int> Had;
  if (Old) {
    std::vector<ByteRange> Replaced;
    for (const tooling::Replacement &R : Repls)
      Replaced.push_back({R.getOffset(), R.getOffset() + R.getLength(), ""});
    IntroducedCode OV(*Old, editedFile(Old->getSourceManager(), Repls),
                      Replaced, Opts);
    traverseUserCode(OV, *Old);
    for (const auto &F : OV.Facts)
      ++Had[F.What];
  }
  for (const auto &F : V.Facts) {
    // Without the old side (\p Old null), counted facts are left to the
    // other side's check and to the lexical one.
    if (F.Countable && (!Old || Had[F.What]-- > 0))
      continue;
    Failures.push_back(failure("forbidden", "the new code " + F.What + Where,
                               filePos(SM, F.Loc)));
  }

  // Recursion: device functions that the edit makes able to call
  // themselves. The stack of a device thread is small and fixed; a
  // recursive call the original did not have is refused.
  if (!Old)
    return Failures;
  CallGraph OG, NG;
  CallGraphBuilder OB(Old->getSourceManager(), OG), NB(SM, NG);
  traverseUserCode(OB, *Old);
  traverseUserCode(NB, New);
  std::set<std::string> Before = OG.recursive(), After = NG.recursive();
  for (const auto &[F, _] : NG.Calls) {
    std::string Name = F->getQualifiedNameAsString();
    if (Before.count(Name) || !After.count(Name))
      continue;
    // Report at a function the edit wrote, if it wrote one in the cycle.
    Failures.push_back(
        failure("forbidden",
                "the new code makes the device function '" + Name +
                    "' recursive (unbounded stack use on the device)" + Where,
                filePos(SM, SM.getExpansionLoc(F->getLocation()))));
    break;
  }
  return Failures;
}

} // namespace optiml
