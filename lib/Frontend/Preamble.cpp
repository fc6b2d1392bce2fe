//===- Preamble.cpp - Reuse the parse of a file's leading #includes -------===//

#include "optiml/Frontend/Preamble.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Frontend/NvccCompat.h"
#include "optiml/Support/FileUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Basic/Version.h"
#include "clang/Driver/CreateInvocationFromArgs.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/PrecompiledPreamble.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Serialization/ASTReader.h"
#include "clang/Serialization/ModuleFile.h"
#include "clang/Serialization/PCHContainerOperations.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include <algorithm>
#include <mutex>

using namespace llvm;

namespace optiml {

/// The in-memory path of a preamble: the prefix, its key, the suffix when
/// it holds no user code, ".pch".
static constexpr StringLiteral PchPrefix = "/__clang_optiml__/preamble-";
static constexpr StringLiteral SystemOnlySuffix = "-system";

namespace {
/// A file the preamble read, as it was then.
struct Dep {
  std::string Path;
  uint64_t Size = 0;
  int64_t MTime = 0;
};

/// Counts the diagnostics of a preamble build (any one: no preamble).
class CountingConsumer : public clang::DiagnosticConsumer {
public:
  void HandleDiagnostic(clang::DiagnosticsEngine::Level Level,
                        const clang::Diagnostic &Info) override {
    if (Level != clang::DiagnosticsEngine::Ignored &&
        Level != clang::DiagnosticsEngine::Remark)
      ++Count;
  }
  unsigned Count = 0;
};

/// Whether the preamble parsed by \p CI may hold the user's code: a user
/// file besides the main file (isUserFile: a project header, the main file
/// included again), or a declaration placed in the main file or the
/// predefines (`#pragma weak`). Clang's and the CUDA toolkit's headers are
/// system headers and hold none.
bool holdsUserCode(clang::CompilerInstance &CI) {
  const clang::SourceManager &SM = CI.getSourceManager();
  for (unsigned I = 1, N = SM.local_sloc_entry_size(); I < N; ++I) {
    const clang::SrcMgr::SLocEntry &Ent = SM.getLocalSLocEntry(I);
    if (!Ent.isFile())
      continue;
    clang::FileID F = SM.getFileID(
        clang::SourceLocation::getFromRawEncoding(Ent.getOffset()));
    if (F.isValid() && F != SM.getMainFileID() && isUserFile(SM, F))
      return true;
  }
  if (!CI.hasASTContext())
    return true;
  for (const clang::Decl *D :
       CI.getASTContext().getTranslationUnitDecl()->decls()) {
    clang::SourceLocation L = SM.getExpansionLoc(D->getLocation());
    if (L.isValid() && SM.isInMainFile(L))
      return true;
  }
  return false;
}

/// Records the files the preamble read (those on disk: in-memory ones are
/// part of the key) and whether it holds the user's code.
class RecordDeps : public clang::PreambleCallbacks {
public:
  explicit RecordDeps(StringRef MainName) : MainName(MainName) {}
  void AfterExecute(clang::CompilerInstance &CI) override {
    UserCode = holdsUserCode(CI);
    const clang::SourceManager &SM = CI.getSourceManager();
    for (auto It = SM.fileinfo_begin(), End = SM.fileinfo_end(); It != End;
         ++It) {
      StringRef Name = It->first.getName();
      if (Name == MainName || Name == nvccCompatHeaderPath())
        continue;
      Deps.push_back({Name.str(), uint64_t(It->first.getSize()),
                      int64_t(It->first.getModificationTime())});
    }
  }
  std::vector<Dep> Deps;
  bool UserCode = true;

private:
  std::string MainName;
};

std::string hex(ArrayRef<uint8_t> Bytes) {
  std::string S;
  raw_string_ostream OS(S);
  for (uint8_t B : Bytes)
    OS << format_hex_no_prefix(B, 2);
  return S;
}

std::string checksum(StringRef Bytes) {
  XXH128_hash_t H = xxh3_128bits(arrayRefFromStringRef(Bytes));
  return utohexstr(H.high64) + "-" + utohexstr(H.low64);
}

/// Everything that decides how the preamble compiles.
std::string preambleKey(ArrayRef<std::string> Args, StringRef Preamble,
                        bool EndsAtStartOfLine) {
  SHA256 H;
  auto Field = [&](StringRef S) {
    uint64_t N = S.size();
    H.update(ArrayRef(reinterpret_cast<const uint8_t *>(&N), sizeof(N)));
    H.update(S);
  };
  Field("clang-optiml preamble 2");
  Field(clang::getClangFullVersion());
  for (const std::string &A : Args)
    Field(A);
  Field(nvccCompatHeaderText());
  Field(Preamble);
  Field(EndsAtStartOfLine ? "1" : "0");
  auto Digest = H.final();
  return hex(ArrayRef(Digest).take_front(16));
}

/// The preambles of this process, most recently used last.
class Store {
public:
  std::shared_ptr<const PreambleData> find(StringRef Key) {
    std::lock_guard<std::mutex> L(M);
    for (auto It = Live.begin(); It != Live.end(); ++It)
      if ((*It)->Key == Key) {
        auto P = *It;
        Live.erase(It);
        Live.push_back(P);
        return P;
      }
    return nullptr;
  }
  bool failed(StringRef Key) {
    std::lock_guard<std::mutex> L(M);
    return Failed.count(Key);
  }
  void fail(StringRef Key) {
    std::lock_guard<std::mutex> L(M);
    Failed.insert({Key, true});
    erase_if(Live, [&](const auto &P) { return P->Key == Key; });
  }
  void clear() {
    std::lock_guard<std::mutex> L(M);
    Live.clear();
    Failed.clear();
  }
  void add(std::shared_ptr<const PreambleData> P) {
    std::lock_guard<std::mutex> L(M);
    erase_if(Live, [&](const auto &Q) { return Q->Key == P->Key; });
    Live.push_back(std::move(P));
    // ~10 MB each; a search's candidates share one per side.
    if (Live.size() > 8)
      Live.erase(Live.begin());
  }

private:
  std::mutex M;
  std::vector<std::shared_ptr<const PreambleData>> Live;
  StringMap<bool> Failed;
};

Store &store() {
  static Store S;
  return S;
}

std::string pathIn(StringRef Dir, StringRef Key, StringRef Ext) {
  SmallString<256> P(Dir);
  sys::path::append(P, Key + Ext);
  return std::string(P);
}

/// The manifest: "optiml-preamble <size> <end> <checksum> <user code>",
/// then one "<size> <mtime> <path>" line per file the preamble read.
std::string manifest(const PreambleData &P, ArrayRef<Dep> Deps) {
  std::string S;
  raw_string_ostream OS(S);
  OS << "optiml-preamble " << P.Size << " " << P.EndsAtStartOfLine << " "
     << checksum(P.PCH->getBuffer()) << " " << P.UserCode << "\n";
  for (const Dep &D : Deps)
    OS << D.Size << " " << D.MTime << " " << D.Path << "\n";
  return S;
}

/// Keeps the newest few preambles on disk.
void prune(StringRef Dir) {
  std::vector<std::pair<sys::TimePoint<>, std::string>> Found;
  std::error_code EC;
  for (sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC)) {
    if (sys::path::extension(It->path()) != ".pch")
      continue;
    sys::fs::file_status St;
    if (!sys::fs::status(It->path(), St))
      Found.push_back({St.getLastModificationTime(), It->path()});
  }
  constexpr size_t Keep = 16;
  if (Found.size() <= Keep)
    return;
  std::sort(Found.begin(), Found.end());
  for (size_t I = 0; I + Keep < Found.size(); ++I) {
    SmallString<256> Manifest(Found[I].second);
    sys::path::replace_extension(Manifest, ".deps");
    (void)sys::fs::remove(Manifest);
    (void)sys::fs::remove(Found[I].second);
  }
}

void save(const PreambleData &P, ArrayRef<Dep> Deps) {
  std::string Dir = preambleDirectory();
  if (Dir.empty() || sys::fs::create_directories(Dir))
    return;
  // The header first: a manifest is only ever next to a whole header.
  if (Error E =
          writeFileAtomically(pathIn(Dir, P.Key, ".pch"), P.PCH->getBuffer())) {
    consumeError(std::move(E));
    return;
  }
  if (Error E =
          writeFileAtomically(pathIn(Dir, P.Key, ".deps"), manifest(P, Deps))) {
    consumeError(std::move(E));
    return;
  }
  prune(Dir);
}

std::shared_ptr<PreambleData> load(StringRef Key) {
  std::string Dir = preambleDirectory();
  if (Dir.empty())
    return nullptr;
  auto Manifest = MemoryBuffer::getFile(pathIn(Dir, Key, ".deps"));
  if (!Manifest)
    return nullptr;
  SmallVector<StringRef> Lines;
  (*Manifest)->getBuffer().split(Lines, '\n', -1, /*KeepEmpty=*/false);
  if (Lines.empty())
    return nullptr;
  SmallVector<StringRef, 5> Head;
  Lines.front().split(Head, ' ');
  auto P = std::make_shared<PreambleData>();
  unsigned End = 0, UserCode = 1;
  if (Head.size() != 5 || Head[0] != "optiml-preamble" ||
      Head[1].getAsInteger(10, P->Size) || Head[2].getAsInteger(10, End) ||
      Head[4].getAsInteger(10, UserCode))
    return nullptr;
  P->EndsAtStartOfLine = End;
  P->UserCode = UserCode != 0;
  for (StringRef Line : ArrayRef(Lines).drop_front()) {
    auto [SizeText, Rest] = Line.split(' ');
    auto [TimeText, Path] = Rest.split(' ');
    uint64_t Size;
    int64_t MTime;
    if (SizeText.getAsInteger(10, Size) || TimeText.getAsInteger(10, MTime) ||
        Path.empty())
      return nullptr;
    sys::fs::file_status St;
    if (sys::fs::status(Path, St) || St.getSize() != Size ||
        sys::toTimeT(St.getLastModificationTime()) != MTime)
      return nullptr; // a header changed since: build it again
  }
  auto PCH = MemoryBuffer::getFile(pathIn(Dir, Key, ".pch"), /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!PCH || checksum((*PCH)->getBuffer()) != Head[3])
    return nullptr;
  P->PCH = std::move(*PCH);
  P->Key = Key.str();
  return P;
}

/// Builds the preamble; null when it has any diagnostic or fails.
std::shared_ptr<PreambleData> build(const clang::CompilerInvocation &Invocation,
                                    StringRef Text,
                                    clang::PreambleBounds Bounds,
                                    IntrusiveRefCntPtr<vfs::FileSystem> VFS,
                                    StringRef Key) {
  const std::string &MainName =
      Invocation.getFrontendOpts().Inputs.front().getFile().str();
  auto Main = MemoryBuffer::getMemBuffer(Text, MainName);
  CountingConsumer Count;
  clang::DiagnosticOptions DiagOpts;
  auto Diags = clang::CompilerInstance::createDiagnostics(
      *VFS, DiagOpts, &Count, /*ShouldOwnClient=*/false);
  RecordDeps Deps(MainName);
  auto Built = clang::PrecompiledPreamble::Build(
      Invocation, Main.get(), Bounds, Diags, VFS,
      std::make_shared<clang::PCHContainerOperations>(),
      /*StoreInMemory=*/true, /*StoragePath=*/"", Deps);
  if (!Built || Count.Count)
    return nullptr;
  // The header's bytes, as clang would read them.
  clang::CompilerInvocation Scratch(Invocation);
  IntrusiveRefCntPtr<vfs::FileSystem> Seen = VFS;
  auto Placeholder = MemoryBuffer::getMemBuffer(Text, MainName);
  Built->AddImplicitPreamble(Scratch, Seen, Placeholder.get());
  auto Bytes = Seen->getBufferForFile(
      Scratch.getPreprocessorOpts().ImplicitPCHInclude, -1,
      /*RequiresNullTerminator=*/false);
  if (!Bytes)
    return nullptr;
  auto P = std::make_shared<PreambleData>();
  P->PCH = MemoryBuffer::getMemBufferCopy((*Bytes)->getBuffer());
  P->Size = Bounds.Size;
  P->EndsAtStartOfLine = Bounds.PreambleEndsAtStartOfLine;
  P->UserCode = Deps.UserCode;
  P->Key = Key.str();
  save(*P, Deps.Deps);
  return P;
}
} // namespace

namespace {
/// Counts the driver's errors (a whole parse reports them).
class DriverErrors : public clang::DiagnosticConsumer {
public:
  void HandleDiagnostic(clang::DiagnosticsEngine::Level Level,
                        const clang::Diagnostic &Info) override {
    Count += Level >= clang::DiagnosticsEngine::Error;
  }
  unsigned Count = 0;
};
} // namespace

std::optional<PreparedInvocation> prepareInvocation(StringRef MainName,
                                                    const ParseConfig &Config,
                                                    CudaSide Side) {
  PreparedInvocation P;
  P.Args = clang::tooling::getClangStripDependencyFileAdjuster()(
      parseArguments(MainName, Config, Side), MainName);
  P.Memory = makeIntrusiveRefCnt<vfs::InMemoryFileSystem>();
  P.Memory->addFile(nvccCompatHeaderPath(), 0,
                    MemoryBuffer::getMemBuffer(nvccCompatHeaderText(),
                                               nvccCompatHeaderPath()));
  P.VFS = makeIntrusiveRefCnt<vfs::OverlayFileSystem>(vfs::getRealFileSystem());
  P.VFS->pushOverlay(P.Memory);
  clang::DiagnosticOptions DiagOpts;
  DriverErrors Errors;
  clang::CreateInvocationOptions CIO;
  CIO.Diags = clang::CompilerInstance::createDiagnostics(
      *P.VFS, DiagOpts, &Errors, /*ShouldOwnClient=*/false);
  CIO.VFS = P.VFS;
  std::vector<const char *> Argv;
  for (const std::string &A : P.Args)
    Argv.push_back(A.c_str());
  P.CI = clang::createInvocation(Argv, CIO);
  if (!P.CI || Errors.Count)
    return std::nullopt;
  P.CI->getFrontendOpts().DisableFree = false;
  P.CI->getCodeGenOpts().DisableFree = false;
  return P;
}

std::string preambleDirectory() {
  if (auto D = sys::Process::GetEnv("OPTIML_PREAMBLE_DIR"); D && !D->empty())
    return *D == "off" ? "" : *D;
  return userCacheDirectory("preambles");
}

std::shared_ptr<const PreambleData>
findPreamble(const clang::CompilerInvocation &Invocation,
             ArrayRef<std::string> Args, StringRef Text,
             IntrusiveRefCntPtr<vfs::FileSystem> VFS, PreambleOrigin &From) {
  From = PreambleOrigin::None;
  if (auto D = sys::Process::GetEnv("OPTIML_PREAMBLE_DIR"); D && *D == "off")
    return nullptr;
  clang::PreambleBounds Bounds = clang::ComputePreambleBounds(
      Invocation.getLangOpts(), MemoryBufferRef(Text, ""), /*MaxLines=*/0);
  if (Bounds.Size == 0)
    return nullptr;
  std::string Key = preambleKey(Args, Text.take_front(Bounds.Size),
                                Bounds.PreambleEndsAtStartOfLine);
  Store &S = store();
  if (auto P = S.find(Key)) {
    From = PreambleOrigin::Memory;
    return P;
  }
  if (S.failed(Key))
    return nullptr;
  std::shared_ptr<PreambleData> P = load(Key);
  From = PreambleOrigin::Disk;
  if (!P) {
    P = build(Invocation, Text, Bounds, VFS, Key);
    From = PreambleOrigin::Built;
  }
  if (!P) {
    From = PreambleOrigin::None;
    S.fail(Key);
    return nullptr;
  }
  S.add(P);
  return P;
}

bool samePreamble(const clang::CompilerInvocation &Invocation, StringRef A,
                  StringRef B) {
  const clang::LangOptions &LO = Invocation.getLangOpts();
  clang::PreambleBounds BA =
      clang::ComputePreambleBounds(LO, MemoryBufferRef(A, ""), 0);
  clang::PreambleBounds BB =
      clang::ComputePreambleBounds(LO, MemoryBufferRef(B, ""), 0);
  return BA.Size == BB.Size &&
         BA.PreambleEndsAtStartOfLine == BB.PreambleEndsAtStartOfLine &&
         A.take_front(BA.Size) == B.take_front(BB.Size);
}

/// Where a parse reads the preamble \p P from (in memory): the name says
/// whether it holds the user's code, so an AST read from it tells.
static std::string pchPath(const PreambleData &P) {
  return (PchPrefix + P.Key + (P.UserCode ? "" : SystemOnlySuffix) + ".pch")
      .str();
}

bool mayReadUserCodeFromPreamble(const clang::ASTContext &Ctx) {
  clang::ExternalASTSource *Source = Ctx.getExternalSource();
  if (!Source)
    return false;
  auto *Reader = dynamic_cast<clang::ASTReader *>(Source);
  if (!Reader)
    return true;
  for (const clang::serialization::ModuleFile &MF : Reader->getModuleManager())
    if (!StringRef(MF.FileName).starts_with(PchPrefix) ||
        !StringRef(MF.FileName).ends_with((SystemOnlySuffix + ".pch").str()))
      return true;
  return false;
}

void usePreamble(clang::CompilerInvocation &Invocation,
                 vfs::InMemoryFileSystem &Memory, const PreambleData &P) {
  std::string Path = pchPath(P);
  Memory.addFile(Path, 0,
                 MemoryBuffer::getMemBuffer(P.PCH->getMemBufferRef(),
                                            /*RequiresNullTerminator=*/false));
  clang::PreprocessorOptions &PP = Invocation.getPreprocessorOpts();
  PP.PrecompiledPreambleBytes = {P.Size, P.EndsAtStartOfLine};
  PP.DisablePCHOrModuleValidation = clang::DisableValidationForModuleKind::PCH;
  // The preamble's predefines stand; the header carries them.
  PP.UsePredefines = false;
  PP.ImplicitPCHInclude = Path;
}

void forgetPreamblesInMemory() { store().clear(); }

void dropPreamble(const PreambleData &P) {
  store().fail(P.Key);
  std::string Dir = preambleDirectory();
  if (Dir.empty())
    return;
  (void)sys::fs::remove(pathIn(Dir, P.Key, ".deps"));
  (void)sys::fs::remove(pathIn(Dir, P.Key, ".pch"));
}

} // namespace optiml
