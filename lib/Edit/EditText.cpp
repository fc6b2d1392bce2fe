//===- EditText.cpp - Edit text through the compiler's own lexer ----------===//
//
// Edit text is untrusted, so nothing here looks for spellings. The text is
// lexed where it will live, inside the whole new file, with the
// LangOptions of the parsed file (CUDA, the C++ standard, digraphs,
// trigraphs as the compiler has them): a `%:define`, a `#` after a line
// splice or a comment, a `\` that joins the next line, an unterminated
// comment or raw string all come out of the lexer as what they are.
//
// Three layers, cheapest first (the method is described in docs/edits.md,
// "Token invariance"):
//
//  1. No directive and no pragma operator in edit text. A directive is a
//     `#` token that starts a line, with the tokens up to the next token
//     that starts a line; it belongs to the edit if one of its tokens lies in
//     an edited range. Only loop hints (`#pragma unroll [N]`, `#pragma
//     nounroll`) pass.
//  2. Lexical invariance. Outside the edited ranges the old and the new file
//     lex to the same tokens at the shifted offsets, with the same
//     start-of-line flag on every `#`; no new token crosses an edge of an
//     edit (text glued onto its neighbour); no old directive is cut by an
//     edit. So no comment, string, raw string or splice opened by the edit
//     reaches code it does not own, and every directive outside the edit is
//     still there, unchanged.
//  3. Preprocessed invariance. clang's preprocessor runs over the old and
//     the new file, for the host and the device side. Every expanded token
//     whose macro invocation (or the token itself) lies outside the edited
//     ranges must be the same, in order, with the same kind and spelling at
//     the shifted offset (a token of a macro's argument is placed where the
//     argument spells it, or at the whole invocation of a macro used in the
//     argument that it comes from); no invocation may span an edge of an
//     edit (a macro name in the edit that swallows the arguments after it,
//     or the other way round); and every pragma the edit's tokens produce
//     (a macro from the original that expands to `_Pragma`) is refused.
//     With 1 and 2, the macros in effect outside the edit are the same; 3
//     also catches what the edit does with the original's own macros. Only
//     the values of __LINE__, __DATE__, __TIME__ and __TIMESTAMP__ may
//     differ.
//
//===----------------------------------------------------------------------===//

#include "optiml/Edit/Checks.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Frontend/NvccCompat.h"
#include "optiml/Frontend/Preamble.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Serialization/PCHContainerOperations.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"
#include <optional>

using namespace llvm;
using namespace clang;

namespace optiml {

static CheckFailure failureAt(StringRef Check, StringRef Code, unsigned Offset,
                              const Twine &Msg) {
  CheckFailure F;
  F.Check = Check.str();
  Offset = std::min<unsigned>(Offset, Code.size());
  StringRef Before = Code.substr(0, Offset);
  F.Line = Before.count('\n') + 1;
  size_t NL = Before.rfind('\n');
  F.Column = Offset - (NL == StringRef::npos ? 0 : NL + 1) + 1;
  F.Message = Msg.str();
  return F;
}

std::vector<ByteRange> editedRanges(const tooling::Replacements &Repls) {
  std::vector<ByteRange> Out;
  int Delta = 0;
  for (const tooling::Replacement &R : Repls) {
    unsigned B = R.getOffset() + Delta;
    Out.push_back({B, B + unsigned(R.getReplacementText().size()), "edit"});
    Delta += int(R.getReplacementText().size()) - int(R.getLength());
  }
  return Out;
}

namespace {
/// Where the tokens outside an edit first disagree: at a pair that differs
/// (\c Count false) or where one side runs out (\c Count true).
struct Disagreement {
  unsigned At; ///< offset in the new code
  bool Count;
};
} // namespace

/// Compares the old and new tokens outside the edit pairwise, in order: a
/// pair agrees when the kinds match, the new token sits where the edit
/// shifted the old one, and \p Same holds for the two.
template <typename Tok, typename SameFn>
static std::optional<Disagreement>
firstDisagreement(ArrayRef<const Tok *> O, ArrayRef<const Tok *> N,
                  const tooling::Replacements &Repls, unsigned NewSize,
                  SameFn Same) {
  size_t Count = std::min(O.size(), N.size());
  for (size_t I = 0; I < Count; ++I) {
    const Tok &A = *O[I], &B = *N[I];
    unsigned Shifted = Repls.getShiftedCodePosition(A.Begin);
    if (A.Kind != B.Kind || Shifted != B.Begin || !Same(A, B))
      return Disagreement{std::min(B.Begin, Shifted), false};
  }
  if (O.size() == N.size())
    return std::nullopt;
  return Disagreement{Count < N.size() ? N[Count]->Begin : NewSize, true};
}

std::string withoutSplices(StringRef Text) {
  std::string Out;
  for (size_t I = 0; I < Text.size(); ++I) {
    if (Text[I] == '\\') {
      size_t J = I + 1;
      while (J < Text.size() && (Text[J] == ' ' || Text[J] == '\t'))
        ++J;
      if (J < Text.size() && (Text[J] == '\n' || Text[J] == '\r')) {
        if (Text[J] == '\r' && J + 1 < Text.size() && Text[J + 1] == '\n')
          ++J;
        I = J;
        continue;
      }
    }
    Out += Text[I];
  }
  return Out;
}

//===-- Raw lexing
//-----------------------------------------------------------===//

namespace {
struct RawToken {
  tok::TokenKind Kind;
  unsigned Begin, End;
  bool StartOfLine;
};
/// A directive: the indices [First, Last] of its tokens.
struct Directive {
  size_t First, Last;
};
} // namespace

/// Every token of \p Code as the compiler's lexer sees it in raw mode
/// (comments skipped, splices and digraphs applied), without eof.
static std::vector<RawToken> rawLex(const LangOptions &LO, StringRef Code) {
  // The lexer wants a NUL after the buffer.
  std::string Buf = Code.str();
  Lexer L(SourceLocation(), LO, Buf.c_str(), Buf.c_str(),
          Buf.c_str() + Buf.size());
  L.SetCommentRetentionState(false);
  std::vector<RawToken> Out;
  Token T;
  unsigned Base = SourceLocation().getRawEncoding();
  while (true) {
    L.LexFromRawLexer(T);
    if (T.is(tok::eof))
      break;
    unsigned B = T.getLocation().getRawEncoding() - Base;
    Out.push_back({T.getKind(), B, B + T.getLength(), T.isAtStartOfLine()});
  }
  return Out;
}

static std::vector<Directive> directivesOf(ArrayRef<RawToken> Toks) {
  std::vector<Directive> Out;
  for (size_t I = 0; I < Toks.size(); ++I) {
    if (Toks[I].Kind != tok::hash || !Toks[I].StartOfLine)
      continue;
    size_t J = I;
    while (J + 1 < Toks.size() && !Toks[J + 1].StartOfLine)
      ++J;
    Out.push_back({I, J});
    I = J;
  }
  return Out;
}

static bool intersects(unsigned B, unsigned E, const ByteRange &R) {
  return B < R.End && E > R.Begin;
}

/// `#pragma unroll`, `#pragma unroll N`, `#pragma unroll (expr)`,
/// `#pragma nounroll`: a hint to the loop below, which nothing else reads.
static bool isLoopHint(StringRef Code, ArrayRef<RawToken> Toks,
                       const Directive &D) {
  auto Text = [&](size_t I) { return Code.slice(Toks[I].Begin, Toks[I].End); };
  auto Ident = [&](size_t I, StringRef Name) {
    return I <= D.Last && Toks[I].Kind == tok::raw_identifier &&
           Text(I) == Name;
  };
  if (!Ident(D.First + 1, "pragma"))
    return false;
  if (Ident(D.First + 2, "nounroll"))
    return D.Last == D.First + 2;
  if (!Ident(D.First + 2, "unroll"))
    return false;
  for (size_t I = D.First + 3; I <= D.Last; ++I) {
    switch (Toks[I].Kind) {
    case tok::numeric_constant:
    case tok::l_paren:
    case tok::r_paren:
    case tok::plus:
    case tok::minus:
    case tok::star:
    case tok::slash:
    case tok::lessless:
    case tok::greatergreater:
      break;
    case tok::raw_identifier:
      if (Text(I) == "_Pragma" || Text(I) == "__pragma")
        return false;
      break;
    default:
      return false;
    }
  }
  return true;
}

/// The directive's name for messages: "define", "include", ... or "" for a
/// null directive. Spelled by the lexer, so `%:  /**/ define` is "define".
static std::string directiveName(StringRef Code, ArrayRef<RawToken> Toks,
                                 const Directive &D) {
  if (D.Last == D.First)
    return "";
  const RawToken &N = Toks[D.First + 1];
  if (N.Kind != tok::raw_identifier && N.Kind != tok::numeric_constant)
    return "";
  // Keep only a plain name (a splice inside it is shown without).
  std::string Out;
  for (char C : Code.slice(N.Begin, N.End))
    if (isAlnum(C) || C == '_')
      Out += C;
  return Out.substr(0, 24);
}

std::vector<CheckFailure> checkEditDirectives(const LangOptions &LO,
                                              StringRef NewCode,
                                              ArrayRef<ByteRange> Edited) {
  std::vector<CheckFailure> Failures;
  if (Edited.empty())
    return Failures;
  std::vector<RawToken> Toks = rawLex(LO, NewCode);
  auto InEdit = [&](const RawToken &T) {
    return any_of(Edited, [&](const ByteRange &R) {
      return intersects(T.Begin, T.End, R);
    });
  };
  for (const Directive &D : directivesOf(Toks)) {
    bool Touched = false;
    for (size_t I = D.First; I <= D.Last && !Touched; ++I)
      Touched = InEdit(Toks[I]);
    if (!Touched || isLoopHint(NewCode, Toks, D))
      continue;
    std::string Name = directiveName(NewCode, Toks, D);
    Failures.push_back(failureAt(
        "directive", NewCode, Toks[D.First].Begin,
        "the new code holds a preprocessing directive" +
            (Name.empty() ? std::string() : " ('" + Name + "')") +
            "; edit text may contain none (however spelled: '#', '%:', after "
            "a line splice); only '#pragma unroll' is allowed"));
  }
  for (const RawToken &T : Toks) {
    if (T.Kind != tok::raw_identifier || !InEdit(T))
      continue;
    StringRef Id = NewCode.slice(T.Begin, T.End);
    // Identifiers may hold splices; compare what the compiler reads.
    std::string Clean = withoutSplices(Id);
    if (Clean == "_Pragma" || Clean == "__pragma")
      Failures.push_back(failureAt(
          "directive", NewCode, T.Begin,
          "the new code uses the pragma operator '" + Clean +
              "'; edit text may contain no pragma other than '#pragma "
              "unroll'"));
  }
  return Failures;
}

//===-- Lexical invariance
//---------------------------------------------------===//

std::vector<CheckFailure>
checkLexicalInvariance(const LangOptions &LO, StringRef OldCode,
                       StringRef NewCode, const tooling::Replacements &Repls) {
  std::vector<CheckFailure> Failures;
  std::vector<ByteRange> Replaced, Edited = editedRanges(Repls);
  for (const tooling::Replacement &R : Repls)
    Replaced.push_back({R.getOffset(), R.getOffset() + R.getLength(), ""});
  std::vector<RawToken> OldToks = rawLex(LO, OldCode);
  std::vector<RawToken> NewToks = rawLex(LO, NewCode);

  // Old directives cut by an edit (partly replaced).
  for (const Directive &D : directivesOf(OldToks)) {
    unsigned In = 0;
    for (size_t I = D.First; I <= D.Last; ++I)
      In += any_of(Replaced, [&](const ByteRange &R) {
        return OldToks[I].Begin >= R.Begin && OldToks[I].End <= R.End &&
               R.End > R.Begin;
      });
    bool Touched = false;
    for (size_t I = D.First; I <= D.Last; ++I)
      Touched |= any_of(Replaced, [&](const ByteRange &R) {
        return intersects(OldToks[I].Begin, OldToks[I].End, R);
      });
    if (Touched && In != D.Last - D.First + 1)
      Failures.push_back(failureAt(
          "tokens", OldCode, OldToks[D.First].Begin,
          "the edit rewrites part of a preprocessing directive of the "
          "original; directives are never edited"));
  }

  // New tokens that cross an edge of an edit: text glued to its neighbour.
  // An empty edited range (a deletion) is an edge too.
  for (const RawToken &T : NewToks)
    for (const ByteRange &R : Edited) {
      bool Inside = T.Begin >= R.Begin && T.End <= R.End;
      bool Crosses = R.Begin == R.End
                         ? (T.Begin < R.Begin && T.End > R.Begin)
                         : (intersects(T.Begin, T.End, R) && !Inside);
      if (Crosses) {
        Failures.push_back(failureAt(
            "tokens", NewCode, T.Begin,
            "a token of the new code crosses the edge of the edit (its text "
            "runs into the code next to it, e.g. a comment, string or line "
            "splice left open)"));
        return Failures;
      }
    }

  // The tokens outside, in order, at the shifted offsets.
  auto Outside = [](ArrayRef<RawToken> Toks, ArrayRef<ByteRange> Ranges) {
    std::vector<const RawToken *> Out;
    for (const RawToken &T : Toks)
      if (none_of(Ranges, [&](const ByteRange &R) {
            return intersects(T.Begin, T.End, R);
          }))
        Out.push_back(&T);
    return Out;
  };
  std::vector<const RawToken *> O = Outside(OldToks, Replaced),
                                N = Outside(NewToks, Edited);
  if (auto D = firstDisagreement<RawToken>(
          O, N, Repls, NewCode.size(),
          [&](const RawToken &A, const RawToken &B) {
            return OldCode.slice(A.Begin, A.End) ==
                       NewCode.slice(B.Begin, B.End) &&
                   (A.Kind != tok::hash || A.StartOfLine == B.StartOfLine);
          }))
    Failures.push_back(failureAt(
        "tokens", NewCode, D->At,
        D->Count ? "the code after the edit no longer lexes as before (the "
                   "edit's text swallows or adds tokens outside itself)"
                 : "the edit changes how the code outside it is read (a "
                   "comment, string, raw string or line splice opened in the "
                   "edit reaches past it, or a directive outside it is "
                   "joined or split)"));
  return Failures;
}

//===-- Preprocessed invariance
//-----------------------------------------------===//

namespace {
struct PPToken {
  tok::TokenKind Kind;
  std::string Spelling;
  unsigned Begin, End; ///< the edited file's range of the token or invocation
  bool PositionDependent; ///< from __LINE__, __TIME__, ...
};
struct PPResult {
  /// The tokens that come from the edited file.
  std::vector<PPToken> Tokens;
  /// The tokens of every other file (the main file around an edited
  /// header, the headers): file, place, kind and spelling of each, packed
  /// end to end and compared byte for byte (no hash an edit could be
  /// written to collide with): an edit must leave them all as they were.
  std::string Others;
  unsigned OtherCount = 0;
  /// Main-file ranges of the invocations that produced a pragma through
  /// _Pragma / __pragma (a `#pragma` line is checked lexically).
  std::vector<std::pair<unsigned, unsigned>> OperatorPragmas;
  bool Ran = false;
  /// Lexed after a precompiled preamble (its headers' tokens not seen).
  bool AfterPreamble = false;
};

/// Whether a file of the preprocessor's source manager is the edited file
/// (by path: it is entered only once the directive naming it is read).
class EditedFile {
public:
  EditedFile(const SourceManager &SM, StringRef Path) : SM(SM), Path(Path) {}
  bool is(FileID F) {
    auto [It, New] = Known.try_emplace(F, false);
    if (New)
      It->second = filePath(SM, F) == Path;
    return It->second;
  }

private:
  const SourceManager &SM;
  std::string Path;
  DenseMap<FileID, bool> Known;
};

class PragmaRecorder : public PPCallbacks {
public:
  PragmaRecorder(const SourceManager &SM, EditedFile &Edit, PPResult &Out)
      : SM(SM), Edit(Edit), Out(Out) {}
  void PragmaDirective(SourceLocation Loc,
                       PragmaIntroducerKind Introducer) override {
    if (Introducer == PIK_HashPragma)
      return;
    CharSourceRange R = SM.getExpansionRange(Loc);
    if (!Edit.is(SM.getFileID(R.getBegin())))
      return;
    Out.OperatorPragmas.push_back(
        {SM.getFileOffset(R.getBegin()), SM.getFileOffset(R.getEnd()) + 1});
  }

private:
  const SourceManager &SM;
  EditedFile &Edit;
  PPResult &Out;
};

/// Where, inside the invocation \p Call (offsets in \p Main) of a macro
/// written in the main file, a token of its arguments at \p Loc is placed:
/// where it is written, when the argument's text holds it; the whole
/// invocation of the macro written there that it comes from, when that
/// macro is used in the argument (`C0` of `LAUNCH(k, g, b, C0)`, `ID(g)`),
/// so an edit of another argument leaves that invocation outside it,
/// compared token for token, and an edit that reaches inside it (its
/// argument, part of its name) crosses it; nothing (the whole of \p Call)
/// when the token has no one place in \p Call.
std::optional<std::pair<unsigned, unsigned>>
placeInArgument(const SourceManager &SM, const LangOptions &LO, FileID Main,
                SourceLocation Loc, unsigned Length,
                std::pair<unsigned, unsigned> Call) {
  SourceLocation Spelled = SM.getImmediateSpellingLoc(Loc);
  std::pair<unsigned, unsigned> At;
  if (Spelled.isFileID()) {
    if (SM.getFileID(Spelled) != Main)
      return std::nullopt;
    At.first = SM.getFileOffset(Spelled);
    At.second = At.first + Length;
  } else {
    // Expanded where the argument is read (arguments are expanded on
    // their own before they are put in place): the expansion's range in
    // the file is the invocation written in the argument.
    CharSourceRange R = SM.getExpansionRange(Spelled);
    if (!R.getBegin().isFileID() || !R.getEnd().isFileID() ||
        SM.getFileID(R.getBegin()) != Main || SM.getFileID(R.getEnd()) != Main)
      return std::nullopt;
    At.first = SM.getFileOffset(R.getBegin());
    At.second = SM.getFileOffset(R.getEnd());
    if (R.isTokenRange())
      At.second += Lexer::MeasureTokenLength(R.getEnd(), SM, LO);
  }
  if (At.first < Call.first || At.second > Call.second || At.first >= At.second)
    return std::nullopt;
  return At;
}

/// Appends \p Text with its length first, so fields cannot run together.
void appendField(std::string &Out, StringRef Text) {
  uint32_t Size = Text.size();
  Out.append(reinterpret_cast<const char *>(&Size), sizeof(Size));
  Out.append(Text.data(), Text.size());
}

/// Lexes the translation unit, keeping the edited file's tokens and the
/// others' packed. Base: PreprocessorFrontendAction, or ASTFrontendAction
/// where a precompiled preamble must be loaded (its macros are read through
/// the AST reader; nothing is parsed).
template <typename Base> class CollectTokensAs : public Base {
public:
  CollectTokensAs(PPResult &Out, StringRef EditedPath)
      : Out(Out), EditedPath(EditedPath) {}

protected:
  void ExecuteAction() override {
    CompilerInstance &CI = this->getCompilerInstance();
    Preprocessor &PP = CI.getPreprocessor();
    const SourceManager &SM = PP.getSourceManager();
    const LangOptions &LO = CI.getLangOpts();
    EditedFile Edit(SM, EditedPath);
    DenseMap<FileID, uint32_t> Names;
    SmallString<64> Spelling;
    PP.addPPCallbacks(std::make_unique<PragmaRecorder>(SM, Edit, Out));
    PP.EnterMainSourceFile();
    Token T;
    while (true) {
      PP.Lex(T);
      if (T.is(tok::eof))
        break;
      SourceLocation Loc = T.getLocation();
      FileID Where = SM.getFileID(SM.getExpansionLoc(Loc));
      if (!Edit.is(Where)) {
        // Another file: the same tokens at the same places, or the edit
        // reached outside its file.
        // Files by name: FileIDs count macro expansions too, so an edit
        // that expands one more macro renumbers every file after it.
        auto D = SM.getDecomposedExpansionLoc(Loc);
        auto [It, New] = Names.try_emplace(D.first);
        if (New) {
          // A file's name once, where its first token is; then its number.
          It->second = Names.size();
          appendField(Out.Others, filePath(SM, D.first));
        }
        uint32_t Key[3] = {It->second, D.second, unsigned(T.getKind())};
        Out.Others.append(reinterpret_cast<const char *>(Key), sizeof(Key));
        appendField(Out.Others, PP.getSpelling(T, Spelling));
        ++Out.OtherCount;
        continue;
      }
      FileID Main = Where;
      PPToken P;
      P.Kind = T.getKind();
      P.PositionDependent = false;
      if (Loc.isFileID()) {
        if (SM.getFileID(Loc) != Main)
          continue;
        P.Begin = SM.getFileOffset(Loc);
        P.End = P.Begin + T.getLength();
      } else {
        CharSourceRange R = SM.getExpansionRange(Loc);
        if (SM.getFileID(R.getBegin()) != Main ||
            SM.getFileID(R.getEnd()) != Main)
          continue;
        P.Begin = SM.getFileOffset(R.getBegin());
        P.End = SM.getFileOffset(R.getEnd());
        if (R.isTokenRange())
          P.End += Lexer::MeasureTokenLength(R.getEnd(), SM, LO);
        // A token of a macro argument is placed inside the invocation
        // (placeInArgument); the body's tokens are at the macro's name. An
        // edit of an argument's text then leaves the rest of the invocation
        // outside it, compared token for token (a stringized or pasted
        // argument makes a body token that changes with it).
        if (SM.isMacroArgExpansion(Loc)) {
          if (auto In = placeInArgument(SM, LO, Main, Loc, T.getLength(),
                                        {P.Begin, P.End})) {
            P.Begin = In->first;
            P.End = In->second;
          }
        } else {
          P.End = P.Begin + Lexer::MeasureTokenLength(R.getBegin(), SM, LO);
        }
        StringRef Name = Lexer::getImmediateMacroName(Loc, SM, LO);
        P.PositionDependent = Name == "__LINE__" || Name == "__TIME__" ||
                              Name == "__DATE__" || Name == "__TIMESTAMP__";
      }
      P.Spelling = PP.getSpelling(T);
      Out.Tokens.push_back(std::move(P));
    }
    Out.Ran = true;
  }

private:
  PPResult &Out;
  std::string EditedPath;
};

using CollectTokens = CollectTokensAs<PreprocessorFrontendAction>;

class CollectTokensAfterPreamble : public CollectTokensAs<ASTFrontendAction> {
public:
  using CollectTokensAs::CollectTokensAs;

protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &,
                                                 StringRef) override {
    return std::make_unique<ASTConsumer>();
  }
};

class AfterPreambleFactory : public tooling::FrontendActionFactory {
public:
  AfterPreambleFactory(PPResult &Out, StringRef EditedPath)
      : Out(Out), EditedPath(EditedPath) {}
  std::unique_ptr<FrontendAction> create() override {
    return std::make_unique<CollectTokensAfterPreamble>(Out, EditedPath);
  }

private:
  PPResult &Out;
  std::string EditedPath;
};
} // namespace

/// The preamble both texts share, or null: the old and the new text are
/// lexed after the same precompiled headers, or both from the start.
static std::shared_ptr<const PreambleData>
sharedPreamble(StringRef FileName, StringRef OldCode, StringRef NewCode,
               const ParseConfig &Config, CudaSide Side) {
  SmallString<256> Abs(FileName);
  (void)sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  if (!Config.ReusePreamble || translationUnitFile(FileName, Config) != Abs)
    return nullptr;
  std::optional<PreparedInvocation> Inv = prepareInvocation(Abs, Config, Side);
  if (!Inv || !samePreamble(*Inv->CI, OldCode, NewCode))
    return nullptr;
  PreambleOrigin From;
  return findPreamble(*Inv->CI, Inv->Args, OldCode, Inv->VFS, From);
}

/// Lexes \p Code after the precompiled preamble \p P; false if that could
/// not run.
static bool preprocessAfter(const PreambleData &P, StringRef Abs,
                            StringRef Code, const ParseConfig &Config,
                            CudaSide Side, PPResult &Out) {
  std::optional<PreparedInvocation> Inv = prepareInvocation(Abs, Config, Side);
  if (!Inv)
    return false;
  usePreamble(*Inv->CI, *Inv->Memory, P);
  Inv->Memory->addFile(Abs, 0, MemoryBuffer::getMemBufferCopy(Code, Abs));
  auto Files = makeIntrusiveRefCnt<FileManager>(FileSystemOptions(), Inv->VFS);
  AfterPreambleFactory Factory(Out, Abs);
  IgnoringDiagConsumer Ignore;
  Factory.runInvocation(Inv->CI, Files.get(),
                        std::make_shared<PCHContainerOperations>(), &Ignore);
  Out.AfterPreamble = Out.Ran;
  return Out.Ran;
}

static PPResult preprocess(StringRef FileName, StringRef Code,
                           const ParseConfig &Config, CudaSide Side,
                           const PreambleData *Preamble) {
  PPResult Out;
  SmallString<256> Abs(FileName);
  (void)sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  if (Preamble && preprocessAfter(*Preamble, Abs, Code, Config, Side, Out))
    return Out;
  Out = PPResult();
  // The parse's own command line: {"clang", "-fsyntax-only", args..., file};
  // the main file, with the edited file's text in place when it is one the
  // main file includes.
  std::string Main = translationUnitFile(FileName, Config);
  std::vector<std::string> Args =
      tooling::getClangStripDependencyFileAdjuster()(
          parseArguments(Main, Config, Side), Main);
  auto Overlay =
      makeIntrusiveRefCnt<vfs::OverlayFileSystem>(vfs::getRealFileSystem());
  auto Memory = makeIntrusiveRefCnt<vfs::InMemoryFileSystem>();
  Overlay->pushOverlay(Memory);
  auto Files = makeIntrusiveRefCnt<FileManager>(FileSystemOptions(), Overlay);
  Memory->addFile(Abs, 0, MemoryBuffer::getMemBufferCopy(Code, Abs));
  Memory->addFile(nvccCompatHeaderPath(), 0,
                  MemoryBuffer::getMemBuffer(nvccCompatHeaderText(),
                                             nvccCompatHeaderPath()));
  tooling::ToolInvocation Inv(
      Args, std::make_unique<CollectTokens>(Out, std::string(Abs)),
      Files.get());
  // Nothing the preprocessor says is shown: the checks below speak in
  // offsets of the main file only.
  IgnoringDiagConsumer Ignore;
  Inv.setDiagnosticConsumer(&Ignore);
  Inv.run();
  return Out;
}

/// \p OldCode and \p NewCode preprocessed for \p Side: after the same
/// precompiled preamble, or both from the start (the preamble's headers are
/// then the same bytes read the same way in both).
static std::pair<PPResult, PPResult>
preprocessBoth(StringRef FileName, StringRef OldCode, StringRef NewCode,
               const ParseConfig &Config, CudaSide Side) {
  std::shared_ptr<const PreambleData> P =
      sharedPreamble(FileName, OldCode, NewCode, Config, Side);
  PPResult Old = preprocess(FileName, OldCode, Config, Side, P.get());
  PPResult New = preprocess(FileName, NewCode, Config, Side, P.get());
  if (Old.AfterPreamble != New.AfterPreamble) {
    // One ran after the preamble and one did not: both from the start.
    Old = preprocess(FileName, OldCode, Config, Side, nullptr);
    New = preprocess(FileName, NewCode, Config, Side, nullptr);
  }
  return {std::move(Old), std::move(New)};
}

std::vector<CheckFailure>
checkPreprocessedInvariance(StringRef FileName, StringRef OldCode,
                            StringRef NewCode,
                            const tooling::Replacements &Repls,
                            const ParseConfig &Config, CudaSide Side) {
  std::vector<CheckFailure> Failures;
  std::string SideName = Side == CudaSide::Host ? "host" : "device";
  auto [Old, New] = preprocessBoth(FileName, OldCode, NewCode, Config, Side);
  if (!Old.Ran || !New.Ran) {
    Failures.push_back(
        failureAt("tokens", NewCode, 0,
                  "the preprocessor could not run over the " + SideName +
                      " side to check the code outside the edit"));
    return Failures;
  }
  if (Old.OtherCount != New.OtherCount || Old.Others != New.Others) {
    Failures.push_back(failureAt(
        "tokens", NewCode, 0,
        "the edit changes how another file of the translation unit "
        "preprocesses (" +
            SideName + " side); an edit may change only its own file"));
    return Failures;
  }
  std::vector<ByteRange> Replaced, Edited = editedRanges(Repls);
  for (const tooling::Replacement &R : Repls)
    Replaced.push_back({R.getOffset(), R.getOffset() + R.getLength(), ""});

  for (const auto &[B, E] : New.OperatorPragmas)
    if (any_of(Edited, [&, B = B, E = E](const ByteRange &R) {
          return intersects(B, E, R);
        }))
      Failures.push_back(failureAt(
          "directive", NewCode, B,
          "the new code produces a pragma through a macro (" + SideName +
              " side); edit text may contain no pragma other than '#pragma "
              "unroll'"));

  std::vector<const PPToken *> O, N;
  for (const PPToken &T : Old.Tokens)
    if (none_of(Replaced, [&](const ByteRange &R) {
          return intersects(T.Begin, T.End, R);
        }))
      O.push_back(&T);
  for (const PPToken &T : New.Tokens) {
    bool Inside = false, Crosses = false;
    for (const ByteRange &R : Edited) {
      if (T.Begin >= R.Begin && T.End <= R.End && R.End > R.Begin)
        Inside = true;
      else if (R.Begin == R.End ? (T.Begin < R.Begin && T.End > R.Begin)
                                : intersects(T.Begin, T.End, R))
        Crosses = true;
    }
    if (Crosses) {
      Failures.push_back(failureAt(
          "tokens", NewCode, T.Begin,
          "a macro invocation crosses the edge of the edit (" + SideName +
              " side): the edit's text and the code next to it expand "
              "together"));
      return Failures;
    }
    if (!Inside)
      N.push_back(&T);
  }
  if (auto D = firstDisagreement<PPToken>(
          O, N, Repls, NewCode.size(), [](const PPToken &A, const PPToken &B) {
            return A.Spelling == B.Spelling ||
                   (A.PositionDependent && B.PositionDependent);
          }))
    Failures.push_back(failureAt(
        "tokens", NewCode, D->At,
        "the code outside the edit preprocesses differently (" + SideName +
            (D->Count ? " side): the edit's text swallows or adds tokens "
                        "outside itself"
                      : " side): the edit changes what a macro or directive "
                        "outside it does")));
  return Failures;
}

std::vector<CheckFailure> checkSameTokens(StringRef FileName, StringRef OldCode,
                                          StringRef NewCode,
                                          const ParseConfig &Config,
                                          CudaSide Side) {
  std::string SideName = Side == CudaSide::Host ? "host" : "device";
  auto [Old, New] = preprocessBoth(FileName, OldCode, NewCode, Config, Side);
  if (!Old.Ran || !New.Ran)
    return {failureAt("tokens", NewCode, 0,
                      "the preprocessor could not run over the " + SideName +
                          " side")};
  if (Old.OtherCount != New.OtherCount || Old.Others != New.Others)
    return {failureAt("tokens", NewCode, 0,
                      "other files of the translation unit preprocess "
                      "differently (" +
                          SideName + " side)")};
  size_t N = std::min(Old.Tokens.size(), New.Tokens.size());
  for (size_t I = 0; I <= N; ++I) {
    if (I == N) {
      if (Old.Tokens.size() == New.Tokens.size())
        break;
    } else {
      const PPToken &A = Old.Tokens[I], &B = New.Tokens[I];
      if (A.Kind == B.Kind && (A.Spelling == B.Spelling ||
                               (A.PositionDependent && B.PositionDependent)))
        continue;
    }
    unsigned At = I < New.Tokens.size() ? New.Tokens[I].Begin : NewCode.size();
    return {failureAt("tokens", NewCode, At,
                      "the new text does not preprocess to the same tokens "
                      "as the old (" +
                          SideName + " side)")};
  }
  return {};
}

} // namespace optiml
