//===- Builder.cpp - nvcc as a process, with a content-addressed cache ----===//
//
// The one place that runs nvcc.
//
//===----------------------------------------------------------------------===//

#include "optiml/Eval/Builder.h"
#include "optiml/Support/FileUtil.h"
#include "optiml/Support/Process.h"
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
// What nvcc's shell would misread
//===----------------------------------------------------------------------===//

std::optional<char> shellUnsafeChar(StringRef Arg) {
  for (char C : Arg) {
    unsigned char U = C;
    if (U < 0x20 || U == 0x7f ||
        StringRef(" \"'\\$`;&|<>()*?[~#{}").contains(C))
      return C;
  }
  return std::nullopt;
}

/// \p S with every byte outside printable ASCII written as \xNN, for
/// messages.
static std::string printable(StringRef S) {
  std::string Out;
  for (char C : S) {
    unsigned char U = C;
    if (U >= 0x20 && U < 0x7f) {
      Out += C;
      continue;
    }
    Out += "\\x";
    Out += hexdigit(U >> 4, /*LowerCase=*/true);
    Out += hexdigit(U & 15, /*LowerCase=*/true);
  }
  return Out;
}

/// A virtual/real architecture list as nvcc's -gencode takes it
/// (`arch=compute_90,code=[compute_90,sm_90]`, CMake's spelling), alone or
/// as the value of -gencode=/--generate-code=. nvcc's option parser
/// consumes it and hands its steps single architecture names, so its
/// brackets never reach a shell; anything else with a bracket is refused.
static bool isGencodeList(StringRef Arg) {
  for (StringRef P : {"-gencode=", "--generate-code="})
    if (Arg.consume_front(P))
      break;
  static const Regex Token("^(compute|sm|lto)_[0-9]+[a-z]?$");
  bool Any = false;
  while (!Arg.empty()) {
    StringRef Key;
    if (Arg.consume_front("arch=")) {
      Key = "arch";
    } else if (Arg.consume_front("code=")) {
      Key = "code";
    } else {
      return false;
    }
    StringRef List;
    if (Key == "code" && Arg.consume_front("[")) {
      size_t End = Arg.find(']');
      if (End == StringRef::npos)
        return false;
      List = Arg.take_front(End);
      Arg = Arg.drop_front(End + 1);
    } else {
      List = Arg.take_until([](char C) { return C == ','; });
      Arg = Arg.drop_front(List.size());
    }
    SmallVector<StringRef, 4> Names;
    List.split(Names, ',');
    for (StringRef N : Names)
      if (!Token.match(N))
        return false;
    Any = true;
    if (!Arg.empty() && !Arg.consume_front(","))
      return false;
  }
  return Any;
}

Error checkNvccArgument(StringRef Arg, StringRef What) {
  if (isGencodeList(Arg))
    return Error::success();
  std::optional<char> C = shellUnsafeChar(Arg);
  if (!C)
    return Error::success();
  std::string Char =
      *C == ' '    ? std::string("a space")
      : *C == '\n' ? std::string("a newline")
      : *C == '\t' ? std::string("a tab")
      : (unsigned char)*C < 0x20 || *C == 0x7f
          ? "the control character " + printable(StringRef(&*C, 1))
          : "'" + std::string(1, *C) + "'";
  return createStringError(
      inconvertibleErrorCode(),
      "%s '%s' contains %s, which the shell that nvcc runs its steps "
      "through would interpret; it is refused",
      What.str().c_str(), printable(Arg).c_str(), Char.c_str());
}

std::string lineDirective(StringRef Name) {
  std::string S = "#line 1 \"";
  for (char C : Name) {
    unsigned char U = C;
    if (C == '"' || C == '\\' || C == '?') {
      // '?' too: no trigraph (??/ is a backslash) can form.
      S += '\\';
      S += C;
    } else if (U < 0x20 || U >= 0x7f) {
      // Octal, three digits: a following digit cannot join the escape.
      S += '\\';
      S += char('0' + (U >> 6));
      S += char('0' + ((U >> 3) & 7));
      S += char('0' + (U & 7));
    } else {
      S += C;
    }
  }
  S += "\"\n";
  return S;
}

//===----------------------------------------------------------------------===//
// Builder
//===----------------------------------------------------------------------===//

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
    B->NvccPath =
        sys::fs::can_execute(P) ? std::string(P) : findProgram("nvcc");
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
    return createStringError(inconvertibleErrorCode(), "'%s --version' %s: %s",
                             B->NvccPath.c_str(), V->describe().c_str(),
                             lastLines(V->Stderr, 3).c_str());
  B->NvccVersion = StringRef(V->Stdout).trim().str();

  B->Flags = O.Flags;
  if (B->Flags.empty())
    B->Flags = {"-O3", "-arch=" + O.GpuArch};
  B->Flags.insert(B->Flags.end(), O.ExtraFlags.begin(), O.ExtraFlags.end());
  for (const std::string &F : B->Flags)
    if (Error E = checkNvccArgument(F, "nvcc flag"))
      return std::move(E);
  for (const std::string &F : B->Opts.LinkFlags)
    if (Error E = checkNvccArgument(F, "link flag"))
      return std::move(E);
  if (Error E = checkNvccArgument(B->NvccPath, "the path of nvcc"))
    return std::move(E);
  for (const std::string &P : O.ExtraSources)
    if (!sys::fs::is_regular_file(P))
      return createStringError(inconvertibleErrorCode(),
                               "the source file '%s' does not exist",
                               P.c_str());
  SmallString<256> Root(O.CacheDir.empty() ? userCacheDirectory("builds")
                                           : O.CacheDir);
  // Binaries are run from other directories: the cache is named absolutely.
  (void)sys::fs::make_absolute(Root);
  B->CacheRoot = std::string(Root);
  if (O.UseCache) {
    if (std::error_code EC = sys::fs::create_directories(B->CacheRoot))
      return createStringError(EC, "cannot create the build cache '%s': %s",
                               B->CacheRoot.c_str(), EC.message().c_str());
    // nvcc's output goes there: its name is part of nvcc's command lines.
    if (Error E = checkNvccArgument(B->CacheRoot, "the build cache directory"))
      return std::move(E);
  }
  return std::move(B);
}

unsigned Builder::compilations() const {
  std::lock_guard<std::mutex> L(Mu);
  return Compilations;
}

/// BuildOptions::IncludedFrom: writes the copies under \p Staging; the main
/// file's copy with the tree's directories of the included files (searched
/// first), and the original directories (searched after the program's
/// flags). \p Copies gets (copy, original) for each file written.
static Expected<std::pair<std::pair<std::string, std::vector<std::string>>,
                          std::vector<std::string>>>
includedTree(StringRef Staging, StringRef Source, StringRef Text,
             ArrayRef<std::string> IncludedFrom,
             std::vector<std::pair<std::string, std::string>> &Copies) {
  StringRef Root = sys::path::parent_path(IncludedFrom.front());
  std::vector<std::pair<std::string, std::string>> Files;
  for (const std::string &P : IncludedFrom) {
    auto T = readFile(P);
    if (!T)
      return T.takeError();
    Files.push_back({P, lineDirective(P) + *T});
  }
  Files.push_back({Source.str(), lineDirective(Source) + Text.str()});
  std::string Main;
  std::vector<std::string> Dirs, TreeDirs;
  for (const auto &[Path, Body] : Files) {
    SmallString<256> Rel(Path);
    if (!sys::path::replace_path_prefix(Rel, Root, ""))
      return createStringError(
          inconvertibleErrorCode(),
          "'%s' is outside the directory of the main file '%s'; a candidate "
          "of a file included from elsewhere cannot be built yet",
          printable(Path).c_str(), printable(IncludedFrom.front()).c_str());
    SmallString<256> Copy(Staging);
    sys::path::append(Copy, "tree", sys::path::relative_path(Rel));
    if (shellUnsafeChar(Copy))
      return createStringError(inconvertibleErrorCode(),
                               "'%s' has a name nvcc's shell would misread",
                               printable(Path).c_str());
    if (std::error_code EC =
            sys::fs::create_directories(sys::path::parent_path(Copy)))
      return createStringError(EC, "cannot create '%s': %s",
                               sys::path::parent_path(Copy).str().c_str(),
                               EC.message().c_str());
    if (Error E = writeFileAtomically(Copy, Body))
      return std::move(E);
    Copies.push_back({std::string(Copy), Path});
    if (Main.empty()) {
      Main = std::string(Copy);
    } else {
      std::string TreeDir = sys::path::parent_path(Copy).str();
      if (!is_contained(TreeDirs, TreeDir))
        TreeDirs.push_back(TreeDir);
    }
    // Includes the originals find through their own directories (a header
    // beside an included file) are still found.
    std::string Dir = sys::path::parent_path(Path).str();
    if (!is_contained(Dirs, Dir))
      Dirs.push_back(Dir);
  }
  return std::make_pair(std::make_pair(Main, TreeDirs), Dirs);
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
  (void)sys::fs::make_absolute(Abs);
  Add(Abs);
  Add(Source);
  Add(localIncludes(Source, sys::path::parent_path(Abs)));
  // Other files, each with its text and what it includes locally; a
  // section only when it has files, so that other keys stay as they were.
  auto AddFiles = [&](StringRef Marker, ArrayRef<std::string> Files) {
    if (Files.empty())
      return;
    Add(Marker);
    for (const std::string &P : Files) {
      Add(P);
      if (auto Text = readFile(P)) {
        Add(*Text);
        Add(localIncludes(*Text, sys::path::parent_path(P)));
      } else {
        consumeError(Text.takeError());
        Add("<unreadable>");
      }
    }
  };
  AddFiles("--included-from--", Opts.IncludedFrom);
  AddFiles("--sources--", Opts.ExtraSources);
  // Libraries by path: their content (a rebuilt library is another link).
  if (!Opts.LinkFlags.empty()) {
    Add("--link--");
    for (const std::string &F : Opts.LinkFlags) {
      Add(F);
      if (sys::path::is_absolute(F) && sys::fs::is_regular_file(F)) {
        if (auto Text = readFile(F))
          Add(*Text);
        else
          consumeError(Text.takeError());
      }
    }
  }
  auto D = H.final();
  return toHex(ArrayRef<uint8_t>(D.data(), D.size()), /*LowerCase=*/true);
}

/// A directory nvcc may be told to search: \p Dir itself, or, when its
/// name would be misread by nvcc's shell, a link to it made under
/// \p Staging (recorded in \p Links, to be removed after the compile).
static Expected<std::string> includeDirFor(StringRef Dir, StringRef Staging,
                                           std::vector<std::string> &Links) {
  if (!shellUnsafeChar(Dir))
    return Dir.str();
  SmallString<256> Link(Staging);
  sys::path::append(Link, "include-dir-" + std::to_string(Links.size()));
  if (std::error_code EC = sys::fs::create_link(Dir, Link))
    return createStringError(EC, "cannot link '%s' in the build directory: %s",
                             printable(Dir).c_str(), EC.message().c_str());
  Links.push_back(std::string(Link));
  return std::string(Link);
}

static std::string safeName(StringRef Name) {
  std::string S;
  for (char C : Name)
    S += isAlnum(C) || StringRef("._-+").contains(C) ? C : '_';
  return S;
}

Expected<StagedSource> stageSource(StringRef Staging, StringRef AbsSource,
                                   StringRef Text, bool TextGiven,
                                   ArrayRef<std::string> IncludedFrom) {
  // nvcc pastes file names into shell commands: a source whose path a shell
  // would misread is given as a copy under a safe name, starting with a
  // #line that names the original (nvcc's messages and __FILE__ say it),
  // and a directory searched for its quoted includes through a link.
  StagedSource Out;
  Out.Path = AbsSource.str();
  auto Fail = [&](Error E) -> Expected<StagedSource> {
    for (const std::string &L : Out.Links)
      (void)sys::fs::remove(L);
    return std::move(E);
  };
  StringRef FileName = sys::path::filename(AbsSource);
  bool UnsafeName = shellUnsafeChar(FileName).has_value();
  if (!IncludedFrom.empty()) {
    // The source is included by the main file: the main file is compiled,
    // from a tree of copies in which every includer on the way to the
    // source sits beside the copy it includes (a quoted include looks
    // beside its includer first). Each copy starts with a #line naming
    // the original, so messages and __FILE__ name the user's files.
    auto Tree =
        includedTree(Staging, AbsSource, Text, IncludedFrom, Out.Copies);
    if (!Tree)
      return Fail(Tree.takeError());
    // A header found through the program's own -I (not beside its
    // includer) is found in the tree first: the tree's directories of the
    // included files come before every other flag.
    for (const std::string &Dir : Tree->first.second)
      Out.FirstFlags.push_back("-I" + Dir);
    for (const std::string &Dir : Tree->second) {
      auto D = includeDirFor(Dir, Staging, Out.Links);
      if (!D)
        return Fail(D.takeError());
      Out.LastFlags.push_back("-I" + *D);
    }
    Out.Path = Tree->first.first;
  } else if (TextGiven || shellUnsafeChar(AbsSource)) {
    // The candidate's text (or the original's, when its path is unsafe),
    // under the original's name where that is safe so messages read
    // naturally; quoted includes still resolve beside the original.
    SmallString<256> P(Staging);
    sys::path::append(P, UnsafeName ? safeName(FileName) : FileName.str());
    std::string Body = Text.str();
    if (!TextGiven)
      Body = lineDirective(AbsSource) + Body;
    else if (UnsafeName)
      Body = lineDirective(FileName) + Body;
    if (Error E = writeFileAtomically(P, Body))
      return Fail(std::move(E));
    Out.Path = std::string(P);
    Out.Copies.push_back({Out.Path, AbsSource.str()});
    auto Dir =
        includeDirFor(sys::path::parent_path(AbsSource), Staging, Out.Links);
    if (!Dir)
      return Fail(Dir.takeError());
    Out.LastFlags.push_back("-I" + *Dir);
  }
  return Out;
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
  (void)sys::fs::make_absolute(AbsSource);
  std::string Key = cacheKey(Req, Source);
  // A candidate's own flags (an edit's) are refused like a compile error:
  // the candidate fails, the search goes on.
  for (const std::string &F : Req.ExtraFlags)
    if (Error E = checkNvccArgument(F, "the candidate's nvcc flag")) {
      BuildResult R;
      R.Key = Key;
      R.ErrorSummary = toString(std::move(E)) + "\n";
      R.Log = R.ErrorSummary;
      return R;
    }
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
    (void)sys::fs::remove_directories(Final, /*IgnoreErrors=*/true);
  }

  // Build into a private directory, then publish it under its key.
  SmallString<256> Staging;
  std::error_code EC;
  if (Opts.UseCache) {
    SmallString<256> Model(CacheRoot);
    sys::path::append(Model, ".tmp-" + Key.substr(0, 16));
    EC = sys::fs::createUniqueDirectory(Model, Staging);
  } else {
    // In the temporary directory, named absolutely: the binary it holds is
    // run from elsewhere.
    SmallString<256> Model;
    sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Model);
    sys::path::append(Model, "optiml-build");
    EC = sys::fs::createUniqueDirectory(Model, Staging);
  }
  if (EC)
    return createStringError(EC, "cannot create a build directory in '%s': %s",
                             CacheRoot.c_str(), EC.message().c_str());
  auto Fail = [&](Error E) -> Expected<BuildResult> {
    (void)sys::fs::remove_directories(Staging, /*IgnoreErrors=*/true);
    return std::move(E);
  };

  auto Staged = stageSource(Staging, AbsSource, Source, !Req.Source.empty(),
                            Opts.IncludedFrom);
  if (!Staged)
    return Fail(Staged.takeError());
  std::vector<std::string> &Links = Staged->Links;
  Cmd.insert(Cmd.begin() + 1, Staged->FirstFlags.begin(),
             Staged->FirstFlags.end());
  Cmd.insert(Cmd.end(), Staged->LastFlags.begin(), Staged->LastFlags.end());
  std::string SrcArg = Staged->Path;
  auto IncludeDir = [&](StringRef Dir) {
    return includeDirFor(Dir, Staging, Links);
  };
  SmallString<256> Bin(Staging);
  sys::path::append(Bin, "prog");
  Cmd.push_back("-o");
  Cmd.push_back(std::string(Bin));
  for (const std::string &P : Opts.ExtraSources) {
    if (!shellUnsafeChar(P)) {
      Cmd.push_back(P);
      continue;
    }
    auto Text = readFile(P);
    if (!Text)
      return Fail(Text.takeError());
    StringRef Ext = sys::path::extension(P);
    // Object files and libraries are copied as they are.
    bool IsSource =
        is_contained({".cu", ".cpp", ".cc", ".cxx", ".c", ".C"}, Ext);
    SmallString<256> Copy(Staging);
    sys::path::append(Copy, "source-" +
                                std::to_string(&P - Opts.ExtraSources.data()) +
                                "-" + safeName(sys::path::filename(P)));
    if (Error E = writeFileAtomically(Copy, IsSource ? lineDirective(P) + *Text
                                                     : *Text))
      return Fail(std::move(E));
    auto Dir = IncludeDir(sys::path::parent_path(P));
    if (!Dir)
      return Fail(Dir.takeError());
    Cmd.push_back("-I" + *Dir);
    Cmd.push_back(std::string(Copy));
  }
  Cmd.push_back(SrcArg);
  Cmd.insert(Cmd.end(), Opts.LinkFlags.begin(), Opts.LinkFlags.end());
  // The last word: nothing nvcc's shell could misread reaches it.
  for (const std::string &A : Cmd)
    if (Error E = checkNvccArgument(A, "internal error: an nvcc argument"))
      return Fail(std::move(E));

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
  // The links served this compile only; the cache keeps no way out of it.
  for (const std::string &L : Links)
    (void)sys::fs::remove(L);
  if (!P) {
    (void)sys::fs::remove_directories(Staging, /*IgnoreErrors=*/true);
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
      (void)sys::fs::remove_directories(Staging, /*IgnoreErrors=*/true);
    return R;
  }
  SmallString<256> LogPath(Staging), StatusPath(Staging);
  sys::path::append(LogPath, "build.log");
  sys::path::append(StatusPath, "status");
  if (Error E = writeFileAtomically(LogPath, R.Command + "\n" + R.Log))
    return std::move(E);
  if (Error E =
          writeFileAtomically(StatusPath, R.Succeeded ? "ok\n" : "failed\n"))
    return std::move(E);
  if (sys::fs::rename(Staging, Final)) {
    // Someone published the same key meanwhile: theirs is as good.
    (void)sys::fs::remove_directories(Staging, /*IgnoreErrors=*/true);
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
      Pool.async(
          [this, &Slots, &Reqs, I] { Slots[I].emplace(build(Reqs[I])); });
    Pool.wait();
  }
  std::vector<Expected<BuildResult>> Out;
  Out.reserve(Reqs.size());
  for (auto &S : Slots)
    Out.push_back(std::move(*S));
  return Out;
}

} // namespace optiml
