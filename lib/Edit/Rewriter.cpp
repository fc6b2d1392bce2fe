//===- Rewriter.cpp - Checked application of edits ------------------------===//

#include "optiml/Edit/Rewriter.h"
#include "CatalogInternal.h"
#include "Transforms/TransformSupport.h"
#include "optiml/Edit/Diff.h"
#include "optiml/Edit/EditJSON.h"
#include "optiml/Edit/Transform.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Frontend/Analysis.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "optiml/Support/FileUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <optional>
#include <thread>

using namespace llvm;

namespace optiml {

static Error rejected(const Edit &E, std::vector<CheckFailure> Failures,
                      StringRef FileName) {
  for (CheckFailure &F : Failures)
    if (F.File.empty() && F.Line)
      F.File = FileName.str();
  return make_error<EditRejected>(E.Kind, E.Target, std::move(Failures));
}

/// The grid and block of \p L, a launch written through a macro, that its
/// invocation spells in place (LaunchSite::GridInPlace).
static std::vector<SourceSpan> macroLaunchSpans(const LaunchSite &L) {
  std::vector<SourceSpan> Spans;
  if (L.GridInPlace)
    Spans.push_back(L.GridRange);
  if (L.BlockInPlace)
    Spans.push_back(L.BlockRange);
  return Spans;
}

/// \p Repls less those inside a grid or block that a macro launch of the
/// kernel \p Target names spells in place: text of one run of a macro
/// argument's tokens, used once by the macro's body, which the macro check
/// would otherwise refuse as the inside of the invocation.
static clang::tooling::Replacements
outsideMacroArguments(const EditContext &Ctx, StringRef Target,
                      const clang::tooling::Replacements &Repls) {
  const KernelInfo *K = Ctx.Model.findKernel(kernelOfTarget(Target).str());
  if (!K)
    return Repls;
  std::vector<SourceSpan> Spans;
  for (const LaunchSite &L : K->Launches)
    if (L.InMacro)
      append_range(Spans, macroLaunchSpans(L));
  clang::tooling::Replacements Rest;
  for (const clang::tooling::Replacement &R : Repls) {
    bool Inside = any_of(Spans, [&](const SourceSpan &S) {
      return R.getOffset() >= S.Begin.Offset &&
             R.getOffset() + R.getLength() <= S.End.Offset;
    });
    if (!Inside)
      cantFail(Rest.add(R));
  }
  return Rest;
}

/// What an edit aimed at \p Target may change: the definition of the
/// function it names (or that holds the loop/launch), and the launch
/// configurations of that kernel.
static std::vector<ByteRange>
allowedRanges(const EditContext &Ctx, StringRef Target, bool AroundLaunches,
              ArrayRef<clang::tooling::Replacement> Idle) {
  std::vector<ByteRange> Allowed;
  for (const clang::tooling::Replacement &R : Idle)
    Allowed.push_back({R.getOffset(), R.getOffset() + R.getLength(),
                       "a declaration the launches' new configurations "
                       "leave unused"});
  StringRef Fn = kernelOfTarget(Target);
  const clang::FunctionDecl *FD = findFunctionDefinition(Ctx.AST, Fn);
  if (!FD)
    return Allowed;
  const clang::SourceManager &SM = Ctx.AST.getSourceManager();
  clang::SourceLocation End = SM.getExpansionLoc(FD->getSourceRange().getEnd());
  ByteRange Def;
  Def.Begin = definitionBegin(Ctx, FD);
  Def.End = SM.getFileOffset(End) +
            clang::Lexer::MeasureTokenLength(End, SM, Ctx.AST.getLangOpts());
  Def.What = "the definition of '" + Fn.str() + "'";
  Allowed.push_back(Def);
  // The text clang parsed: a launch spelled `>> >` reads `>>> ` there, at
  // the same offsets (NvccCompat.h).
  StringRef Parsed = SM.getBufferData(Ctx.file());
  if (const KernelInfo *K = Ctx.Model.findKernel(Fn.str())) {
    for (const LaunchSite &L : K->Launches) {
      if (L.InMacro) {
        // Through a macro: only the grid and block its invocation spells
        // in place; nothing is inserted around it.
        for (const SourceSpan &S : macroLaunchSpans(L))
          Allowed.push_back(
              {S.Begin.Offset, S.End.Offset,
               "the launch configurations of '" + Fn.str() + "'"});
        continue;
      }
      if (L.GridRange.Begin.Offset == 0)
        continue;
      size_t Close = Parsed.find(">>>", L.BlockRange.End.Offset);
      if (Close == StringRef::npos || Close > L.Range.End.Offset)
        continue;
      Allowed.push_back({L.GridRange.Begin.Offset, unsigned(Close),
                         "the launch configurations of '" + Fn.str() + "'"});
      if (AroundLaunches && L.File == filePath(SM, Ctx.file()))
        Allowed.push_back(
            {L.Range.Begin.Offset, L.Range.Begin.Offset,
             "a statement before each launch of '" + Fn.str() + "'"});
    }
  }
  if (AroundLaunches) {
    unsigned First = definitionBegin(Ctx, FD->getFirstDecl());
    Allowed.push_back(
        {First, First, "a declaration before '" + Fn.str() + "'"});
  }
  return Allowed;
}

/// \p Path absolute and without `.` and `..`, as the kernel model names files.
static std::string normalPath(StringRef Path) {
  SmallString<256> S(Path);
  (void)sys::fs::make_absolute(S);
  sys::path::remove_dots(S, /*remove_dot_dot=*/true);
  return std::string(S);
}

std::string diffName(StringRef File, const ParseConfig &Config) {
  std::string F = normalPath(File);
  if (Config.MainFile.empty())
    return sys::path::filename(F).str();
  // Relative to the main file's directory, as a patch applied there reads.
  std::string Main = translationUnitFile(File, Config);
  StringRef Dir = sys::path::parent_path(Main);
  StringRef P(F);
  if (!Dir.empty() && P.starts_with(Dir) && P.size() > Dir.size() &&
      sys::path::is_separator(P[Dir.size()]))
    return sys::path::convert_to_slash(P.drop_front(Dir.size() + 1));
  return F;
}

/// The file that defines the function \p Fn in \p AST (a kernel or a
/// helper): where an edit aimed at it is made. Empty if none does.
static std::string definingFile(clang::ASTContext &AST, StringRef Fn) {
  const clang::FunctionDecl *FD = findFunctionDefinition(AST, Fn);
  if (!FD)
    return "";
  const clang::SourceManager &SM = AST.getSourceManager();
  return filePath(SM, SM.getFileID(SM.getExpansionLoc(FD->getLocation())));
}

/// Adds to \p Repls the removal of the host locals that only the launch
/// configurations it rewrites read (idleLaunchLocals()); returns those
/// removals, which checkScope() then allows.
static std::vector<clang::tooling::Replacement>
addIdleLaunchLocals(const EditContext &Ctx, StringRef Target,
                    clang::tooling::Replacements &Repls) {
  std::vector<clang::tooling::Replacement> Idle =
      idleLaunchLocals(Ctx, kernelOfTarget(Target), Repls);
  erase_if(Idle, [&](const clang::tooling::Replacement &R) {
    if (Error Err = Repls.add(R)) {
      consumeError(std::move(Err));
      return true;
    }
    return false;
  });
  return Idle;
}

/// The checks made on an edit's replacements and on the new text before
/// anything parses it again: one file, no macro expansion touched, edits
/// inside the target's ranges, no directive in the new text, the same
/// tokens outside the edit (lexed, then preprocessed host and device side).
/// Returns the new text, or the edit rejected with every failure found.
static Expected<std::string>
checkBeforeParsing(StringRef FileName, const EditContext &Ctx, const Edit &E,
                   const clang::tooling::Replacements &Repls,
                   const CheckOptions &Opts, const Transform *T,
                   ArrayRef<clang::tooling::Replacement> Idle = {}) {
  StringRef Code = Ctx.Code;
  const ParseConfig &Config = Ctx.Config;
  clang::ASTContext &OldAST = Ctx.AST;
  std::vector<CheckFailure> Failures = checkOneFile(Repls, FileName);
  if (!Failures.empty())
    return rejected(E, std::move(Failures), Ctx.FileName);
  Failures =
      checkMacroExpansions(OldAST, outsideMacroArguments(Ctx, E.Target, Repls));
  append_range(
      Failures,
      checkScope(
          OldAST, Code, Repls,
          allowedRanges(Ctx, E.Target, T && T->insertsAroundLaunches(), Idle)));
  auto NewCode = clang::tooling::applyAllReplacements(Code, Repls);
  if (!NewCode)
    return reject(E, "internal",
                  "the replacements do not apply: " +
                      toString(NewCode.takeError()));
  // Edit text is lexed in place with the compiler's own options. A
  // directive in it is refused before anything preprocesses the new text,
  // so no file it names is ever opened and no diagnostic can quote one.
  const clang::LangOptions &LO = OldAST.getLangOpts();
  std::vector<ByteRange> Edited = editedRanges(Repls);
  append_range(Failures, checkEditDirectives(LO, *NewCode, Edited));
  if (Failures.empty())
    append_range(Failures, checkLexicalInvariance(LO, Code, *NewCode, Repls));
  append_range(Failures,
               checkIntroducedTokens(LO, Code, *NewCode, Repls, Opts));
  if (!Failures.empty())
    return rejected(E, std::move(Failures), Ctx.FileName);
  // The same token stream outside the edit, host and device side, before
  // anything is parsed.
  std::vector<CheckFailure> DeviceTokens;
  std::thread DeviceThread([&] {
    DeviceTokens = checkPreprocessedInvariance(FileName, Code, *NewCode, Repls,
                                               Config, CudaSide::Device);
  });
  append_range(Failures,
               checkPreprocessedInvariance(FileName, Code, *NewCode, Repls,
                                           Config, CudaSide::Host));
  DeviceThread.join();
  if (Failures.empty())
    append_range(Failures, DeviceTokens);
  if (!Failures.empty())
    return rejected(E, std::move(Failures), Ctx.FileName);
  return std::move(*NewCode);
}

/// The text of \p Ctx with the launch macros that \p E needs written out
/// (writeOutLaunchMacros), or null with \p WhyNot.
static std::optional<std::string>
launchesWrittenOut(const EditContext &Ctx, const Transform &T, const Edit &E,
                   std::string &WhyNot, std::string &Written) {
  const KernelInfo *K = Ctx.Model.findKernel(kernelOfTarget(E.Target).str());
  if (!T.readsLaunches() || !K)
    return std::nullopt;
  bool OneLaunch = T.targetKind() == TargetKind::Launch;
  return writeOutLaunchMacros(Ctx, *K, WhyNot, &Written,
                              OneLaunch ? StringRef(E.Target) : "",
                              T.insertsAroundLaunches());
}

/// \p E0 applied to \p Expanded, the text of \p Code with the launch
/// macros \p Written names written out (writeOutLaunchMacros), once that
/// text is shown to preprocess to the same tokens on both sides; the diff
/// is against \p Code.
static Expected<AppliedEdit>
applyWrittenOut(StringRef FileName, StringRef Code, StringRef Expanded,
                StringRef Written, const ParseConfig &Config, const Edit &E0,
                const Edit &E, const CheckOptions &Opts) {
  std::vector<CheckFailure> Failures;
  std::thread DeviceThread([&] {
    Failures =
        checkSameTokens(FileName, Code, Expanded, Config, CudaSide::Device);
  });
  std::vector<CheckFailure> Host =
      checkSameTokens(FileName, Code, Expanded, Config, CudaSide::Host);
  DeviceThread.join();
  append_range(Failures, Host);
  if (!Failures.empty())
    return reject(
        E, "not-applicable",
        "the edit needs " + Written + ", but that text " +
            "does not read as the macro did: " + Failures.front().Message);
  auto Out = applyEdit(FileName, Expanded, Config, E0, Opts);
  if (!Out)
    return Out.takeError();
  Out->Summary += " (with " + Written.str() + ")";
  std::string Name = diffName(FileName, Config);
  Out->Diff = unifiedDiff(Code, Out->NewCode, "a/" + Name, "b/" + Name);
  return Out;
}

/// Why \p T must not rewrite the kernel of \p E as this parse sees it
/// (\p Model: the launches written in \p Editing, whose text is \p Code),
/// or empty.
static std::string outOfScope(const Transform &T, const Edit &E,
                              const KernelModel &FullModel,
                              const KernelModel &Model, StringRef Editing,
                              StringRef Code) {
  StringRef Fn0 = kernelOfTarget(E.Target);
  // A transform that reads the body reads it as the host side sees it.
  if (const KernelInfo *MK = Model.findKernel(Fn0.str()); MK && T.readsBody())
    if (std::string Why = sideConditionalReason(*MK, Code); !Why.empty())
      return "'" + Fn0.str() + "': " + Why;
  // A transform that depends on the launches sees only those written in
  // this file: one elsewhere in the translation unit would be left as it
  // is, however the kernel changed.
  const KernelInfo *FK = FullModel.findKernel(Fn0.str());
  if (!FK || !T.readsLaunches())
    return "";
  if (std::string Why = addressTakenReason(*FK, Editing); !Why.empty())
    return "'" + Fn0.str() + "': " + Why;
  const KernelInfo *MK = Model.findKernel(Fn0.str());
  for (const LaunchSite &L : FK->Launches)
    if (!MK || none_of(MK->Launches,
                       [&](const LaunchSite &M) { return M.Id == L.Id; }))
      return "'" + Fn0.str() + "' is launched in '" + L.File + "' (" + L.Id +
             "), outside '" + Editing.str() +
             "', the file this edit rewrites; " + E.Kind +
             " depends on the kernel's launches";
  return "";
}

Expected<AppliedEdit> applyEdit(StringRef FileName, StringRef Code,
                                const ParseConfig &Config, const Edit &E0,
                                const CheckOptions &Opts) {
  return applyEdit(FileName, Code, Config, E0, Opts, nullptr);
}

Expected<AppliedEdit> applyEdit(StringRef FileName, StringRef Code,
                                const ParseConfig &Config, const Edit &E0,
                                const CheckOptions &Opts,
                                const ParsedTU *Parsed) {
  const Transform *T = findTransform(E0.Kind);
  if (!T)
    return reject(E0, "kind", "unknown edit kind '" + E0.Kind + "'");
  Edit E = E0;
  if (Error Err = validateParams(E, *T))
    return reject(E0, "params", toString(std::move(Err)));

  // The input's host-side parse: the caller's, else our own.
  std::optional<ParsedTU> Own;
  if (!Parsed) {
    auto TU = parseCuda(Code, FileName, Config, CudaSide::Host);
    if (!TU)
      return TU.takeError();
    Own.emplace(std::move(*TU));
    Parsed = &*Own;
  }
  const ParsedTU *OldTU = Parsed;
  if (OldTU->errorCount())
    return make_error<CompileError>(FileName.str(), OldTU->Diags);
  clang::ASTContext &OldAST = OldTU->AST->getASTContext();
  KernelModel FullModel = buildKernelModel(OldAST);
  FullModel.File = OldTU->FileName;

  // An edit rewrites the file that defines its target: the main file, or a
  // user file it includes (a header, an included .cu), parsed as part of
  // the same translation unit with the new text in its place.
  StringRef Fn0 = kernelOfTarget(E.Target);
  std::string Defining = definingFile(OldAST, Fn0);
  std::string Editing = normalPath(FileName);
  if (!Defining.empty() && Defining != Editing) {
    if (!Config.MainFile.empty())
      return reject(E, "scope",
                    "'" + Fn0.str() + "' is defined in '" + Defining +
                        "', not in '" + Editing +
                        "', the file these edits rewrite; edits of one list "
                        "or one search rewrite one file");
    // The included file's text as this parse read it (from disk: only the
    // main file's text is given).
    auto OnDisk = readFile(Editing);
    if (!OnDisk || *OnDisk != Code) {
      if (!OnDisk)
        consumeError(OnDisk.takeError());
      return reject(E, "scope",
                    "'" + Fn0.str() + "' is defined in '" + Defining +
                        "', but the main file given differs from '" + Editing +
                        "' on disk; edits of one list rewrite one "
                        "file");
    }
    const clang::SourceManager &SM = OldAST.getSourceManager();
    clang::FileID F = findFileID(SM, Defining);
    std::string Text = SM.getBufferData(F).str();
    ParseConfig Included = Config;
    Included.MainFile = Editing;
    return applyEdit(Defining, Text, Included, E0, Opts);
  }
  KernelModel Model = modelForFile(FullModel, FileName);
  if (const LaunchSite *L = FullModel.findLaunch(E.Target);
      L && !Model.findLaunch(E.Target))
    return reject(E, "scope",
                  "launch '" + E.Target + "' is written in '" + L->File +
                      "', and its kernel is defined in '" + Editing +
                      "'; an edit changes only the file that defines its "
                      "kernel");

  if (std::string Why = outOfScope(*T, E, FullModel, Model, Editing, Code);
      !Why.empty())
    return reject(E, "scope", Why);

  bool GenericTarget = E.Kind == "replace-function";
  if (!GenericTarget || Model.findKernel(E.Target))
    if (Error Err = validateTarget(E, Model))
      return reject(E, "target", toString(std::move(Err)));

  EditContext Ctx{OldTU->FileName, Code, Model, OldAST, Config};
  auto Repls = T->apply(Ctx, E);
  // A launch macro that computes the grid or block in its body: the edit
  // applies to the text with those launches written out.
  std::string WhyNot, Written; // why no launch macro could be written out
  if (!Repls)
    if (auto Out = launchesWrittenOut(Ctx, *T, E, WhyNot, Written)) {
      consumeError(Repls.takeError());
      return applyWrittenOut(FileName, Code, *Out, Written, Config, E0, E,
                             Opts);
    }
  if (!Repls) {
    // Fill in the file of located failures.
    return handleErrors(
        Repls.takeError(), [&](std::unique_ptr<EditRejected> R) -> Error {
          for (CheckFailure &F : R->Failures) {
            if (F.File.empty() && F.Line)
              F.File = OldTU->FileName;
            if (StringRef(F.Message).contains("written through a macro") &&
                !WhyNot.empty() && !StringRef(WhyNot).starts_with("no launch"))
              F.Message += " (" + WhyNot + ")";
          }
          return Error(std::move(R));
        });
  }

  AppliedEdit Out;
  Out.File = Editing;
  Out.Applied = E;
  Out.Summary = T->summary(E);
  Out.ChangesPrecision = T->changesPrecision(E);
  Out.ExtraNvccFlags = T->nvccFlags(E);
  if (Repls->empty()) {
    if (Out.ExtraNvccFlags.empty())
      return reject(E, "no-change", "the edit changes nothing");
    Out.NewCode = Code.str();
    return Out;
  }

  std::vector<clang::tooling::Replacement> Idle =
      addIdleLaunchLocals(Ctx, E.Target, *Repls);
  auto NewCode = checkBeforeParsing(FileName, Ctx, E, *Repls, Opts, T, Idle);
  if (!NewCode)
    return NewCode.takeError();

  // Re-parse both sides, at the same time (two independent clang
  // instances); the host side instantiates every launched template, so
  // each instantiation is checked.
  std::vector<CheckFailure> Failures;
  auto Sides = parseBothSides(*NewCode, FileName, Config);
  if (!Sides)
    return Sides.takeError();
  ParsedTU *NewHost = &Sides->Host, *NewDevice = &Sides->Device;
  clang::ASTContext &NewAST = NewHost->AST->getASTContext();
  append_range(Failures, checkDeviceCode(OldAST, NewAST, Opts));
  // What the edit's own code does, found on both sides' ASTs.
  append_range(Failures,
               checkIntroducedCodeBothSides(&OldAST, *Sides, *Repls, Opts));
  append_range(Failures, checkCompiles(*NewHost, "host"));
  if (NewDevice->errorCount()) {
    std::vector<CheckFailure> Dev = deviceOnlyErrors(*NewDevice, Failures);
    // Errors the input already had on the device side are not the edit's.
    auto OldDevice = parseCuda(Code, FileName, Config, CudaSide::Device);
    if (OldDevice)
      erase_if(Dev, [&](const CheckFailure &F) {
        return any_of(OldDevice->Diags, [&](const Diagnostic &D) {
          return D.isError() && "(device side) " + D.Message == F.Message;
        });
      });
    else
      consumeError(OldDevice.takeError());
    append_range(Failures, Dev);
  }
  StringRef Fn = kernelOfTarget(E.Target);
  // A changed signature explains the errors it causes at launch sites, so it
  // comes first.
  if (!T->changesSignature(E)) {
    std::vector<CheckFailure> Sig = checkSignature(OldAST, NewAST, Fn);
    if (NewHost->errorCount())
      erase_if(Sig, [](const CheckFailure &F) {
        return StringRef(F.Message).contains("no longer defines");
      });
    Failures.insert(Failures.begin(), Sig.begin(), Sig.end());
  }
  if (NewHost->errorCount() == 0) {
    append_range(Failures, checkDeclarations(OldAST, NewAST, T->addsHelpers(),
                                             T->insertsAroundLaunches()));
    KernelModel NewModel = modelForFile(buildKernelModel(NewAST), FileName);
    const KernelInfo *OK = Model.findKernel(Fn.str());
    const KernelInfo *NK = NewModel.findKernel(Fn.str());
    if (OK && NK && OK->Instantiations != NK->Instantiations)
      Failures.push_back({"signature", "", 0, 0,
                          "the launched instantiations of '" + Fn.str() +
                              "' changed (was " +
                              join(OK->Instantiations, ", ") + "; now " +
                              join(NK->Instantiations, ", ") + ")"});
    if (OK && NK && OK->Launches.size() != NK->Launches.size())
      Failures.push_back(
          {"scope", "", 0, 0,
           "the number of launch sites of '" + Fn.str() + "' changed"});
  }
  if (!Failures.empty())
    return rejected(E, std::move(Failures), OldTU->FileName);

  Out.NewCode = std::move(*NewCode);
  std::string Name = diffName(FileName, Config);
  Out.Diff = unifiedDiff(Code, Out.NewCode, "a/" + Name, "b/" + Name);
  return Out;
}

/// Appends \p New to \p Flags, skipping flags already there; `-Xptxas X`
/// counts as one flag.
static void appendFlags(std::vector<std::string> &Flags,
                        ArrayRef<std::string> New) {
  auto Units = [](ArrayRef<std::string> L) {
    std::vector<std::vector<std::string>> U;
    for (size_t I = 0; I < L.size(); ++I) {
      if ((L[I] == "-Xptxas" || L[I] == "-Xcompiler") && I + 1 < L.size()) {
        U.push_back({L[I], L[I + 1]});
        ++I;
      } else {
        U.push_back({L[I]});
      }
    }
    return U;
  };
  auto Have = Units(Flags);
  for (const auto &U : Units(New))
    if (!is_contained(Have, U)) {
      Have.push_back(U);
      Flags.insert(Flags.end(), U.begin(), U.end());
    }
}

Expected<AppliedEdits> applyEdits(StringRef FileName, StringRef Code,
                                  const ParseConfig &Config,
                                  ArrayRef<Edit> Edits,
                                  const CheckOptions &Opts,
                                  const ParsedTU *Parsed) {
  AppliedEdits Out;
  Out.NewCode = Code.str();
  Out.File = normalPath(FileName);
  std::string Original = Code.str();
  ParseConfig Cfg = Config;
  for (size_t I = 0; I < Edits.size(); ++I) {
    // The caller's parse is of the input: the first edit's text.
    auto A = applyEdit(Out.File, Out.NewCode, Cfg, Edits[I], Opts,
                       I == 0 ? Parsed : nullptr);
    if (!A) {
      if (Edits.size() == 1)
        return A.takeError();
      return handleErrors(A.takeError(),
                          [&](std::unique_ptr<EditRejected> R) -> Error {
                            R->ListIndex = I;
                            return Error(std::move(R));
                          });
    }
    if (A->File != Out.File) {
      // The first edit aimed at a kernel of an included file (applyEdit
      // checked that the main file is as on disk): the list goes on there.
      auto Text = readFile(A->File);
      if (!Text)
        return Text.takeError();
      Original = std::move(*Text);
      if (Cfg.MainFile.empty())
        Cfg.MainFile = Out.File;
      Out.File = A->File;
    }
    Out.NewCode = A->NewCode;
    Out.ChangesPrecision |= A->ChangesPrecision;
    appendFlags(Out.ExtraNvccFlags, A->ExtraNvccFlags);
    Out.Steps.push_back(std::move(*A));
  }
  std::string Name = diffName(Out.File, Cfg);
  Out.Diff = unifiedDiff(Original, Out.NewCode, "a/" + Name, "b/" + Name);
  return Out;
}

} // namespace optiml
