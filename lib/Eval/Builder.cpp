//===- Builder.cpp - nvcc as a process, with a content-addressed cache ----===//
//
// The one place that runs nvcc.
//
//===----------------------------------------------------------------------===//

#include "optiml/Eval/Builder.h"
#include "optiml/Support/FileUtil.h"
#include "optiml/Support/Process.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/ThreadPool.h"
#include <optional>

using namespace llvm;

namespace optiml {

//===----------------------------------------------------------------------===//
// Flags from a compilation database
//===----------------------------------------------------------------------===//

NvccFlags nvccFlagsFromCommand(ArrayRef<std::string> Argv, StringRef Directory,
                               StringRef File) {
  NvccFlags Out;
  Out.Directory = Directory.str();
  if (Argv.empty())
    return Out;
  bool IsNvcc = sys::path::filename(Argv[0]).contains("nvcc");
  if (!IsNvcc)
    Out.Notes.push_back("the compilation database compiles '" + File.str() +
                        "' with '" + Argv[0] +
                        "', not nvcc: only its -I/-D/-U/-std/-isystem/"
                        "-include flags are used");
  StringRef FileName = sys::path::filename(File);
  // Options whose value is the next argument and that are dropped with it.
  static const char *const DropWithValue[] = {
      "-o", "--output-file", "-MF", "-MT", "-MQ", "--dependency-output",
      "-odir", "--output-directory"};
  // Options (with a value in the next argument) kept for non-nvcc entries.
  static const char *const KeepWithValue[] = {"-I", "-D", "-U", "-isystem",
                                              "-include", "-std"};
  for (size_t I = 1; I < Argv.size(); ++I) {
    StringRef A = Argv[I];
    if (llvm::is_contained(DropWithValue, A)) {
      ++I;
      continue;
    }
    if (A == "-c" || A == "--compile" || A == "-M" || A == "-MD" ||
        A == "-MMD" || A == "--generate-dependencies" ||
        A.starts_with("--generate-dependencies-with-compile") ||
        A.starts_with("-o") || A.starts_with("--output-file="))
      continue;
    if (!A.starts_with("-")) {
      // The source file (as written, relative or absolute).
      if (sys::path::filename(A) == FileName || A.ends_with(".cu") ||
          A.ends_with(".cpp") || A.ends_with(".cc"))
        continue;
    }
    if (IsNvcc) {
      Out.Flags.push_back(A.str());
      continue;
    }
    bool Kept = false;
    for (const char *K : KeepWithValue) {
      if (A == K && I + 1 < Argv.size()) {
        Out.Flags.push_back(A.str());
        Out.Flags.push_back(Argv[++I]);
        Kept = true;
        break;
      }
      if (A.starts_with(K)) {
        Out.Flags.push_back(A.str());
        Kept = true;
        break;
      }
    }
    (void)Kept;
  }
  return Out;
}

Expected<NvccFlags> nvccFlagsFromCompileDatabase(StringRef BuildDir,
                                                 StringRef File) {
  SmallString<256> DbPath(BuildDir);
  if (sys::path::filename(BuildDir) != "compile_commands.json")
    sys::path::append(DbPath, "compile_commands.json");
  std::string Message;
  auto Db = clang::tooling::JSONCompilationDatabase::loadFromFile(
      DbPath, Message, clang::tooling::JSONCommandLineSyntax::AutoDetect);
  if (!Db)
    return createStringError(inconvertibleErrorCode(),
                             "cannot read compilation database '%s': %s",
                             DbPath.c_str(), Message.c_str());
  SmallString<256> Abs(File);
  sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, true);
  auto Cmds = Db->getCompileCommands(Abs);
  if (Cmds.empty())
    return createStringError(inconvertibleErrorCode(),
                             "'%s' has no entry in '%s'; run without -p to "
                             "build it with default flags",
                             File.str().c_str(), DbPath.c_str());
  return nvccFlagsFromCommand(Cmds.front().CommandLine, Cmds.front().Directory,
                              Abs);
}

//===----------------------------------------------------------------------===//
// Builder
//===----------------------------------------------------------------------===//

static std::string defaultCacheRoot() {
  SmallString<256> P;
  if (auto X = sys::Process::GetEnv("XDG_CACHE_HOME"); X && !X->empty())
    P = *X;
  else if (!sys::path::cache_directory(P))
    sys::path::system_temp_directory(/*ErasedOnReboot=*/true, P);
  sys::path::append(P, "clang-optiml", "builds");
  return std::string(P);
}

Expected<std::unique_ptr<Builder>> Builder::create(BuildOptions Opts) {
  std::unique_ptr<Builder> B(new Builder(std::move(Opts)));
  const BuildOptions &O = B->Opts;
  if (!O.Nvcc.empty()) {
    B->NvccPath = findProgram(O.Nvcc);
    if (B->NvccPath.empty())
      return createStringError(inconvertibleErrorCode(),
                               "nvcc '%s' not found or not executable",
                               O.Nvcc.c_str());
  } else {
    SmallString<256> P(O.CudaPath);
    sys::path::append(P, "bin", "nvcc");
    B->NvccPath = sys::fs::can_execute(P) ? std::string(P) : findProgram("nvcc");
    if (B->NvccPath.empty())
      return createStringError(
          inconvertibleErrorCode(),
          "nvcc not found at '%s' or in PATH; install the CUDA toolkit or "
          "pass --cuda-path",
          P.c_str());
  }
  ProcessOptions PO;
  PO.Args = {B->NvccPath, "--version"};
  PO.TimeoutSeconds = 60;
  auto V = runProcess(PO);
  if (!V)
    return V.takeError();
  if (!V->succeeded())
    return createStringError(inconvertibleErrorCode(),
                             "'%s --version' %s: %s", B->NvccPath.c_str(),
                             V->describe().c_str(),
                             lastLines(V->Stderr, 3).c_str());
  B->NvccVersion = StringRef(V->Stdout).trim().str();

  B->Flags = O.Flags;
  if (B->Flags.empty())
    B->Flags = {"-O3", "-arch=" + O.GpuArch};
  B->Flags.insert(B->Flags.end(), O.ExtraFlags.begin(), O.ExtraFlags.end());
  for (const std::string &P : O.ExtraSources)
    if (!sys::fs::is_regular_file(P))
      return createStringError(inconvertibleErrorCode(),
                               "the source file '%s' does not exist",
                               P.c_str());
  B->CacheRoot = O.CacheDir.empty() ? defaultCacheRoot() : O.CacheDir;
  if (O.UseCache)
    if (std::error_code EC = sys::fs::create_directories(B->CacheRoot))
      return createStringError(EC, "cannot create the build cache '%s': %s",
                               B->CacheRoot.c_str(), EC.message().c_str());
  return std::move(B);
}

unsigned Builder::compilations() const {
  std::lock_guard<std::mutex> L(Mu);
  return Compilations;
}

/// Texts of the files named by quoted includes, found beside the source.
/// They change the binary but not the source text, so they join the key.
static std::string localIncludes(StringRef Source, StringRef Dir) {
  static const Regex Inc("^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\"");
  std::string Out;
  SmallVector<StringRef, 256> Lines;
  Source.split(Lines, '\n');
  for (StringRef L : Lines) {
    SmallVector<StringRef, 2> M;
    if (!Inc.match(L, &M))
      continue;
    SmallString<256> P(Dir);
    sys::path::append(P, M[1]);
    if (auto Text = readFile(P)) {
      Out += M[1].str();
      Out += '\0';
      Out += *Text;
      Out += '\0';
    } else {
      consumeError(Text.takeError());
    }
  }
  return Out;
}

std::string Builder::cacheKey(const BuildRequest &Req, StringRef Source) const {
  SHA256 H;
  auto Add = [&](StringRef S) {
    H.update(S);
    H.update(StringRef("\0", 1));
  };
  Add("clang-optiml-build-v1");
  Add(NvccPath);
  Add(NvccVersion);
  Add(Opts.WorkDir);
  for (const std::string &F : Flags)
    Add(F);
  Add("--extra--");
  for (const std::string &F : Req.ExtraFlags)
    Add(F);
  SmallString<256> Abs(Req.SourcePath);
  sys::fs::make_absolute(Abs);
  Add(Abs);
  Add(Source);
  Add(localIncludes(Source, sys::path::parent_path(Abs)));
  // Only with other sources, so that single-file keys stay as they were.
  if (!Opts.ExtraSources.empty()) {
    Add("--sources--");
    for (const std::string &P : Opts.ExtraSources) {
      Add(P);
      if (auto Text = readFile(P)) {
        Add(*Text);
        Add(localIncludes(*Text, sys::path::parent_path(P)));
      } else {
        consumeError(Text.takeError());
        Add("<unreadable>");
      }
    }
  }
  auto D = H.final();
  return toHex(ArrayRef<uint8_t>(D.data(), D.size()), /*LowerCase=*/true);
}

static Expected<BuildResult> readCached(StringRef Dir) {
  SmallString<256> P(Dir);
  sys::path::append(P, "status");
  auto Status = readFile(P);
  if (!Status)
    return Status.takeError();
  BuildResult R;
  R.CacheHit = true;
  R.Succeeded = StringRef(*Status).trim() == "ok";
  P = Dir;
  sys::path::append(P, "build.log");
  if (auto Log = readFile(P))
    R.Log = std::move(*Log);
  else
    consumeError(Log.takeError());
  P = Dir;
  sys::path::append(P, "prog");
  R.Binary = std::string(P);
  if (R.Succeeded && !sys::fs::can_execute(R.Binary))
    return createStringError(inconvertibleErrorCode(),
                             "cached build '%s' lacks its binary",
                             Dir.str().c_str());
  return R;
}

Expected<BuildResult> Builder::build(const BuildRequest &Req) {
  std::string Source = Req.Source;
  if (Source.empty()) {
    auto Text = readFile(Req.SourcePath);
    if (!Text)
      return Text.takeError();
    Source = std::move(*Text);
  }
  SmallString<256> AbsSource(Req.SourcePath);
  sys::fs::make_absolute(AbsSource);
  std::string Key = cacheKey(Req, Source);
  std::vector<std::string> Cmd = {NvccPath};
  Cmd.insert(Cmd.end(), Flags.begin(), Flags.end());
  Cmd.insert(Cmd.end(), Req.ExtraFlags.begin(), Req.ExtraFlags.end());
  Cmd.push_back("-Xptxas");
  Cmd.push_back("-v");

  SmallString<256> Final(CacheRoot);
  sys::path::append(Final, Key);
  if (Opts.UseCache && sys::fs::exists(Final + "/status")) {
    auto R = readCached(Final);
    if (R) {
      R->Key = Key;
      R->Resources = parsePtxasInfo(R->Log);
      if (!R->Succeeded)
        R->ErrorSummary = summarizeCompileErrors(R->Log);
      return R;
    }
    consumeError(R.takeError()); // a damaged entry is rebuilt
    sys::fs::remove_directories(Final, /*IgnoreErrors=*/true);
  }

  // Build into a private directory, then publish it under its key.
  SmallString<256> Staging;
  std::error_code EC;
  if (Opts.UseCache) {
    SmallString<256> Model(CacheRoot);
    sys::path::append(Model, ".tmp-" + Key.substr(0, 16));
    EC = sys::fs::createUniqueDirectory(Model, Staging);
  } else {
    EC = sys::fs::createUniqueDirectory("optiml-build", Staging);
  }
  if (EC)
    return createStringError(EC, "cannot create a build directory in '%s': %s",
                             CacheRoot.c_str(), EC.message().c_str());

  std::string SrcArg = std::string(AbsSource);
  if (!Req.Source.empty()) {
    // The candidate's text, under the original's name so messages read
    // naturally; quoted includes still resolve beside the original.
    SmallString<256> P(Staging);
    sys::path::append(P, sys::path::filename(AbsSource));
    if (Error E = writeFileAtomically(P, Source))
      return std::move(E);
    SrcArg = std::string(P);
    Cmd.push_back("-I" + sys::path::parent_path(AbsSource).str());
  }
  SmallString<256> Bin(Staging);
  sys::path::append(Bin, "prog");
  Cmd.push_back("-o");
  Cmd.push_back(std::string(Bin));
  Cmd.insert(Cmd.end(), Opts.ExtraSources.begin(), Opts.ExtraSources.end());
  Cmd.push_back(SrcArg);

  BuildResult R;
  R.Key = Key;
  for (const std::string &A : Cmd) {
    if (!R.Command.empty())
      R.Command += ' ';
    R.Command += A;
  }
  ProcessOptions PO;
  PO.Args = Cmd;
  PO.WorkDir = Opts.WorkDir;
  PO.TimeoutSeconds = Opts.TimeoutSeconds;
  PO.OutputLimit = 4 << 20;
  auto P = runProcess(PO);
  {
    std::lock_guard<std::mutex> L(Mu);
    ++Compilations;
  }
  if (!P) {
    sys::fs::remove_directories(Staging, /*IgnoreErrors=*/true);
    return P.takeError();
  }
  R.Seconds = P->WallSeconds;
  R.Log = P->Stdout + P->Stderr;
  R.Succeeded = P->succeeded() && sys::fs::can_execute(Bin);
  R.Resources = parsePtxasInfo(R.Log);
  if (!R.Succeeded) {
    R.ErrorSummary = P->TimedOut ? "nvcc " + P->describe() + "\n"
                                 : summarizeCompileErrors(R.Log);
    if (!P->TimedOut && R.ErrorSummary.empty())
      R.ErrorSummary = "nvcc " + P->describe() + "\n";
  }
  if (!Opts.UseCache || P->TimedOut) {
    // Not cached: a timeout may pass next time; without a cache the staging
    // directory is the result (left for the caller).
    R.Binary = std::string(Bin);
    if (P->TimedOut)
      sys::fs::remove_directories(Staging, /*IgnoreErrors=*/true);
    return R;
  }
  SmallString<256> LogPath(Staging), StatusPath(Staging);
  sys::path::append(LogPath, "build.log");
  sys::path::append(StatusPath, "status");
  if (Error E = writeFileAtomically(LogPath, R.Command + "\n" + R.Log))
    return std::move(E);
  if (Error E = writeFileAtomically(StatusPath, R.Succeeded ? "ok\n" : "failed\n"))
    return std::move(E);
  if (sys::fs::rename(Staging, Final)) {
    // Someone published the same key meanwhile: theirs is as good.
    sys::fs::remove_directories(Staging, /*IgnoreErrors=*/true);
  }
  SmallString<256> FinalBin(Final);
  sys::path::append(FinalBin, "prog");
  R.Binary = std::string(FinalBin);
  return R;
}

std::vector<Expected<BuildResult>>
Builder::buildAll(ArrayRef<BuildRequest> Reqs) {
  std::vector<std::optional<Expected<BuildResult>>> Slots(Reqs.size());
  {
    DefaultThreadPool Pool(hardware_concurrency(std::max(1u, Opts.Jobs)));
    for (size_t I = 0; I < Reqs.size(); ++I)
      Pool.async([this, &Slots, &Reqs, I] { Slots[I].emplace(build(Reqs[I])); });
    Pool.wait();
  }
  std::vector<Expected<BuildResult>> Out;
  Out.reserve(Reqs.size());
  for (auto &S : Slots)
    Out.push_back(std::move(*S));
  return Out;
}

} // namespace optiml
