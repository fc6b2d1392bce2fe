//===- Parse.cpp - Parse CUDA with clang's frontend -----------------------===//

#include "optiml/Frontend/Parse.h"
#include "optiml/Frontend/NvccCompat.h"
#include "optiml/Frontend/Preamble.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticIDs.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Driver/CreateInvocationFromArgs.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"

using namespace llvm;

namespace optiml {

std::string Diagnostic::str() const {
  std::string S;
  raw_string_ostream OS(S);
  if (!File.empty()) {
    OS << File;
    if (Line)
      OS << ":" << Line << ":" << Column;
    OS << ": ";
  }
  switch (Severity) {
  case Note:
    OS << "note: ";
    break;
  case Warning:
    OS << "warning: ";
    break;
  case Error:
  case Fatal:
    OS << "error: ";
    break;
  }
  OS << Message;
  if (!Option.empty())
    OS << " [" << Option << "]";
  return S;
}

ParsedTU::ParsedTU() = default;
ParsedTU::ParsedTU(ParsedTU &&) = default;
ParsedTU &ParsedTU::operator=(ParsedTU &&) = default;
ParsedTU::~ParsedTU() = default;

unsigned ParsedTU::errorCount() const {
  unsigned N = 0;
  for (const Diagnostic &D : Diags)
    N += D.isError();
  return N;
}

namespace {
/// Keeps clang's diagnostics as data instead of printing them.
class CollectingConsumer : public clang::DiagnosticConsumer {
public:
  explicit CollectingConsumer(std::vector<Diagnostic> &Out) : Out(Out) {}

  void HandleDiagnostic(clang::DiagnosticsEngine::Level Level,
                        const clang::Diagnostic &Info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(Level, Info);
    if (Level == clang::DiagnosticsEngine::Ignored ||
        Level == clang::DiagnosticsEngine::Remark)
      return;
    Diagnostic D;
    switch (Level) {
    case clang::DiagnosticsEngine::Note:
      D.Severity = Diagnostic::Note;
      break;
    case clang::DiagnosticsEngine::Warning:
      D.Severity = Diagnostic::Warning;
      break;
    case clang::DiagnosticsEngine::Fatal:
      D.Severity = Diagnostic::Fatal;
      break;
    default:
      D.Severity = Diagnostic::Error;
      break;
    }
    SmallString<256> Msg;
    Info.FormatDiagnostic(Msg);
    D.Message = std::string(Msg);
    StringRef Flag =
        Info.getDiags()->getDiagnosticIDs()->getWarningOptionForDiag(
            Info.getID());
    if (!Flag.empty() && D.Severity == Diagnostic::Warning)
      D.Option = ("-W" + Flag).str();
    if (Info.hasSourceManager() && Info.getLocation().isValid()) {
      const clang::SourceManager &SM = Info.getSourceManager();
      clang::PresumedLoc P =
          SM.getPresumedLoc(SM.getFileLoc(Info.getLocation()));
      if (P.isValid()) {
        D.File = P.getFilename();
        D.Line = P.getLine();
        D.Column = P.getColumn();
      }
    }
    Out.push_back(std::move(D));
  }

private:
  std::vector<Diagnostic> &Out;
};

std::vector<std::string> toolArgs(const ParseConfig &Config, CudaSide Side) {
  std::vector<std::string> Args = Config.Tools.clangArgs(Side);
  Args.insert(Args.end(), Config.ExtraArgs.begin(), Config.ExtraArgs.end());
  return Args;
}
} // namespace

std::vector<std::string>
parseArguments(StringRef FileName, const ParseConfig &Config, CudaSide Side) {
  std::vector<std::string> Args = {"clang", "-fsyntax-only"};
  std::vector<std::string> Rest = toolArgs(Config, Side);
  Args.insert(Args.end(), Rest.begin(), Rest.end());
  Args.push_back(FileName.str());
  return Args;
}

bool runOnLargeStack(function_ref<void()> Fn) {
  CrashRecoveryContext CRC;
  return CRC.RunSafelyOnThread(Fn, LargeStackSize);
}

std::string translationUnitFile(StringRef FileName, const ParseConfig &Config) {
  SmallString<256> Abs(Config.MainFile.empty() ? FileName
                                               : StringRef(Config.MainFile));
  (void)sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  return std::string(Abs);
}

/// Parses \p Text as \p MainName with the headers of its preamble read from
/// a precompiled one (Preamble.h). False, having done nothing, when no
/// preamble can be used: the caller parses the whole file.
static bool parseWithPreamble(ParsedTU &TU, StringRef Text, StringRef MainName,
                              const ParseConfig &Config, CudaSide Side,
                              clang::DiagnosticConsumer &Consumer) {
  std::optional<PreparedInvocation> Inv =
      prepareInvocation(MainName, Config, Side);
  if (!Inv)
    return false;
  PreambleOrigin From;
  std::shared_ptr<const PreambleData> P =
      findPreamble(*Inv->CI, Inv->Args, Text, Inv->VFS, From);
  if (!P)
    return false;
  usePreamble(*Inv->CI, *Inv->Memory, *P);
  // The AST owns the remapped text (and deletes it).
  Inv->CI->getPreprocessorOpts().addRemappedFile(
      MainName, MemoryBuffer::getMemBufferCopy(Text, MainName).release());
  auto Files = makeIntrusiveRefCnt<clang::FileManager>(
      clang::FileSystemOptions(), Inv->VFS);
  auto DiagOpts = std::make_shared<clang::DiagnosticOptions>();
  auto Diags = clang::CompilerInstance::createDiagnostics(
      *Inv->VFS, *DiagOpts, &Consumer, /*ShouldOwnClient=*/false);
  TU.Preamble = P;
  TU.AST = clang::ASTUnit::LoadFromCompilerInvocation(
      Inv->CI, std::make_shared<clang::PCHContainerOperations>(), DiagOpts,
      Diags, Files);
  if (!TU.AST) {
    dropPreamble(*P);
    TU.Preamble.reset();
    return false;
  }
  TU.PreambleUse = From == PreambleOrigin::Built    ? "built"
                   : From == PreambleOrigin::Memory ? "reused"
                                                    : "loaded";
  return true;
}

Expected<ParsedTU> parseCuda(StringRef Code, StringRef FileName,
                             const ParseConfig &Config, CudaSide Side) {
  ParsedTU TU;
  SmallString<256> Abs(FileName);
  (void)sys::fs::make_absolute(Abs);
  TU.FileName = std::string(Abs);
  CollectingConsumer Consumer(TU.Diags);
  // Whatever thread calls this (a search applies edits on worker threads),
  // clang parses on a large stack; a crash inside it is an error here.
  // What clang reads is what nvcc accepts (NvccCompat.h): the same
  // length as Code, so offsets into either are the same.
  std::string Text = normalizeLaunchChevrons(Code);
  // Static: clang maps these buffers without copying them, and the AST's
  // SourceManager reads them again after this function returns (diagnostics,
  // the database key's hash of every file the parse read).
  static const clang::tooling::FileContentMappings Compat = {
      {nvccCompatHeaderPath().str(), nvccCompatHeaderText().str()}};
  std::string MainName = TU.FileName;
  std::string Main = translationUnitFile(FileName, Config);
  SmallString<256> Edited(Abs);
  sys::path::remove_dots(Edited, /*remove_dot_dot=*/true);
  if (Main != Edited) {
    // The code is an included file: it stands in for that file while the
    // main file, as on disk, is parsed.
    auto MainText = MemoryBuffer::getFile(Main, /*IsText=*/true);
    if (!MainText)
      return createStringError(MainText.getError(), "cannot read '%s': %s",
                               Main.c_str(),
                               MainText.getError().message().c_str());
    auto Mapped = std::make_shared<clang::tooling::FileContentMappings>(Compat);
    Mapped->push_back({std::string(Edited), Text});
    TU.Buffers = Mapped;
    Text = normalizeLaunchChevrons((*MainText)->getBuffer());
    MainName = Main;
  }
  const auto &Mappings =
      TU.Buffers ? *static_cast<const clang::tooling::FileContentMappings *>(
                       TU.Buffers.get())
                 : Compat;
  // An edited included file changes what the preamble would hold.
  if (Config.ReusePreamble && !TU.Buffers) {
    bool Used = false;
    if (runOnLargeStack([&] {
          Used = parseWithPreamble(TU, Text, MainName, Config, Side, Consumer);
        }) &&
        Used)
      return std::move(TU);
    // Whatever clang left half built is not touched again; the whole file
    // is parsed instead.
    (void)TU.AST.release();
    if (auto *P = static_cast<const PreambleData *>(TU.Preamble.get()))
      dropPreamble(*P);
    TU.Preamble.reset();
    TU.PreambleUse.clear();
    TU.Diags.clear();
  }
  bool Finished = runOnLargeStack([&] {
    TU.AST = clang::tooling::buildASTFromCodeWithArgs(
        Text, toolArgs(Config, Side), MainName, "clang-optiml",
        std::make_shared<clang::PCHContainerOperations>(),
        clang::tooling::getClangStripDependencyFileAdjuster(), Mappings,
        &Consumer);
  });
  if (!Finished) {
    // Whatever clang left half built is not touched again.
    (void)TU.AST.release();
    return createStringError(inconvertibleErrorCode(),
                             "internal error: clang crashed while parsing "
                             "'%s' (%s side); nothing was written",
                             TU.FileName.c_str(),
                             Side == CudaSide::Host ? "host" : "device");
  }
  if (!TU.AST) {
    std::string Why;
    for (const Diagnostic &D : TU.Diags)
      if (D.isError())
        Why += "\n  " + D.str();
    return createStringError(
        inconvertibleErrorCode(), "clang could not parse '%s'%s",
        TU.FileName.c_str(), Why.empty() ? "" : (":" + Why).c_str());
  }
  return std::move(TU);
}

void printDiagnostics(raw_ostream &OS, const std::vector<Diagnostic> &Diags,
                      bool IncludeWarnings) {
  bool LastShown = false;
  for (const Diagnostic &D : Diags) {
    bool Show = D.isError() ||
                (IncludeWarnings && D.Severity == Diagnostic::Warning) ||
                (D.Severity == Diagnostic::Note && LastShown);
    if (D.Severity != Diagnostic::Note)
      LastShown = Show;
    if (Show)
      OS << D.str() << "\n";
  }
}

} // namespace optiml
