//===- CMakeFileApi.cpp - A CMake target from the file API's reply --------===//

#include "optiml/Frontend/CMakeFileApi.h"
#include "optiml/Support/FileUtil.h"
#include "optiml/Support/Process.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

using namespace llvm;
using json = nlohmann::json;

namespace optiml {

/// The file at \p Path, parsed. The reply is written by CMake but read as
/// untrusted input: a parse error names the file and where it stopped.
static Expected<json> readJSON(StringRef Path) {
  auto Text = readFile(Path);
  if (!Text)
    return Text.takeError();
  try {
    return json::parse(Text->begin(), Text->end());
  } catch (const json::exception &E) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    StringRef Msg = E.what();
    size_t Close = Msg.find("] ");
    if (Close != StringRef::npos)
      Msg = Msg.drop_front(Close + 2);
    // It quotes the bytes it read last; when they are not UTF-8 (the file
    // is not), that excerpt is left out rather than printed as it is.
    const UTF8 *Begin = reinterpret_cast<const UTF8 *>(Msg.data());
    if (!isLegalUTF8String(&Begin, Begin + Msg.size()))
      Msg = Msg.take_front(Msg.find("; last read: "));
    return createStringError(inconvertibleErrorCode(),
                             "'%s' is not valid JSON: %s", Path.str().c_str(),
                             Msg.str().c_str());
  }
}

// Typed lookups that never throw: a member that is missing or of another
// type reads as absent, and the caller decides whether that is an error.

/// \p J's member \p Key if \p J is an object and the member an object.
static const json *getObject(const json *J, const char *Key) {
  if (!J || !J->is_object())
    return nullptr;
  auto It = J->find(Key);
  return It != J->end() && It->is_object() ? &*It : nullptr;
}

/// \p J's member \p Key if \p J is an object and the member an array.
static const json *getArray(const json *J, const char *Key) {
  if (!J || !J->is_object())
    return nullptr;
  auto It = J->find(Key);
  return It != J->end() && It->is_array() ? &*It : nullptr;
}

/// \p J's member \p Key if \p J is an object and the member a string.
static std::optional<StringRef> getString(const json *J, const char *Key) {
  if (!J || !J->is_object())
    return std::nullopt;
  auto It = J->find(Key);
  if (It == J->end() || !It->is_string())
    return std::nullopt;
  return StringRef(It->get_ref<const std::string &>());
}

/// \p J's member \p Key if it is a number with an integral value that fits
/// in int64_t (2.0 does, 2.5 and 2^63 do not).
static std::optional<int64_t> getInteger(const json *J, const char *Key) {
  if (!J || !J->is_object())
    return std::nullopt;
  auto It = J->find(Key);
  if (It == J->end())
    return std::nullopt;
  if (It->is_number_unsigned()) {
    uint64_t U = It->get<uint64_t>();
    if (U > uint64_t(std::numeric_limits<int64_t>::max()))
      return std::nullopt;
    return int64_t(U);
  }
  if (It->is_number_integer())
    return It->get<int64_t>();
  if (It->is_number_float()) {
    double D = It->get<double>();
    if (std::modf(D, &D) == 0.0 &&
        D >= double(std::numeric_limits<int64_t>::min()) &&
        D <= double(std::numeric_limits<int64_t>::max()))
      return int64_t(D);
  }
  return std::nullopt;
}

static std::string absoluteIn(StringRef Dir, StringRef Path) {
  SmallString<256> P(Path);
  if (!sys::path::is_absolute(P))
    sys::path::make_absolute(Dir, P);
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

/// The newest index file of the reply directory, or empty.
static std::string newestIndex(StringRef ReplyDir) {
  std::error_code EC;
  std::string Best;
  for (sys::fs::directory_iterator It(ReplyDir, EC), End; !EC && It != End;
       It.increment(EC)) {
    StringRef Name = sys::path::filename(It->path());
    // index-<timestamp>.json: the names sort in time order.
    if (Name.starts_with("index-") && Name.ends_with(".json") &&
        It->path() > Best)
      Best = It->path();
  }
  return Best;
}

/// The cmake that configured \p BuildDir (CMakeCache.txt's CMAKE_COMMAND),
/// else cmake from PATH.
static std::string cmakeOf(StringRef BuildDir) {
  SmallString<256> Cache(BuildDir);
  sys::path::append(Cache, "CMakeCache.txt");
  if (auto Text = readFile(Cache)) {
    SmallVector<StringRef, 0> Lines;
    StringRef(*Text).split(Lines, '\n');
    for (StringRef L : Lines)
      if (L.consume_front("CMAKE_COMMAND:INTERNAL="))
        return L.trim().str();
  } else {
    consumeError(Text.takeError());
  }
  return "cmake";
}

std::vector<std::string> linkFragmentsForNvcc(ArrayRef<std::string> Words,
                                              StringRef BuildDir,
                                              std::vector<std::string> &Notes) {
  std::vector<std::string> Out;
  auto IsLibraryFile = [](StringRef W) {
    return W.ends_with(".a") || W.ends_with(".so") || W.contains(".so.") ||
           W.ends_with(".o");
  };
  for (const std::string &Word : Words) {
    StringRef W = Word;
    if (W.starts_with("-l")) {
      Out.push_back(Word);
    } else if (W.starts_with("-L")) {
      Out.push_back("-L" + absoluteIn(BuildDir, W.drop_front(2)));
    } else if (W.consume_front("-Wl,")) {
      // nvcc passes a comma-separated list to the host linker.
      Out.push_back("-Xlinker=" + W.str());
    } else if (W.starts_with("-")) {
      Notes.push_back(Word + ": not passed (not a library or library path)");
    } else if (IsLibraryFile(W)) {
      Out.push_back(absoluteIn(BuildDir, W));
    } else {
      Notes.push_back(Word + ": not passed (not a library file)");
    }
  }
  return Out;
}

/// Splits a command fragment into words as a POSIX shell would (CMake
/// writes fragments for the build tool's shell): quotes and backslashes.
static std::vector<std::string> shellWords(StringRef S) {
  std::vector<std::string> Words;
  std::string Cur;
  bool In = false;
  char Quote = 0;
  for (size_t I = 0; I < S.size(); ++I) {
    char C = S[I];
    if (Quote) {
      if (C == Quote)
        Quote = 0;
      else if (C == '\\' && Quote == '"' && I + 1 < S.size())
        Cur += S[++I];
      else
        Cur += C;
      continue;
    }
    if (C == '\'' || C == '"') {
      Quote = C;
      In = true;
    } else if (C == '\\' && I + 1 < S.size()) {
      Cur += S[++I];
      In = true;
    } else if (isSpace(C)) {
      if (In)
        Words.push_back(std::move(Cur));
      Cur.clear();
      In = false;
    } else {
      Cur += C;
      In = true;
    }
  }
  if (In)
    Words.push_back(std::move(Cur));
  return Words;
}

static Error missing(StringRef What, StringRef Where) {
  return createStringError(inconvertibleErrorCode(),
                           "CMake's file API reply is incomplete: no %s in "
                           "'%s'; re-run cmake on the build directory",
                           What.str().c_str(), Where.str().c_str());
}

Expected<CMakeTarget> readCMakeTarget(StringRef BuildDirIn, StringRef Target,
                                      bool Reconfigure) {
  SmallString<256> Abs(BuildDirIn);
  (void)sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  std::string BuildDir(Abs);
  {
    SmallString<256> Cache(BuildDir);
    sys::path::append(Cache, "CMakeCache.txt");
    if (!sys::fs::exists(Cache))
      return createStringError(
          inconvertibleErrorCode(),
          "'%s' is not a CMake build directory (no CMakeCache.txt); --target "
          "reads a CMake target, configure the project first (cmake -S . -B "
          "build)",
          BuildDir.c_str());
  }
  SmallString<256> Api(BuildDir);
  sys::path::append(Api, ".cmake", "api", "v1");
  SmallString<256> Reply(Api), Query(Api);
  sys::path::append(Reply, "reply");
  sys::path::append(Query, "query", "codemodel-v2");
  std::string Index = newestIndex(Reply);
  if (Index.empty() || !sys::fs::exists(Query)) {
    if (std::error_code EC =
            sys::fs::create_directories(sys::path::parent_path(Query)))
      return createStringError(EC, "cannot create '%s': %s",
                               sys::path::parent_path(Query).str().c_str(),
                               EC.message().c_str());
    if (Error E = writeFileAtomically(Query, ""))
      return std::move(E);
    if (!Reconfigure)
      return createStringError(inconvertibleErrorCode(),
                               "no CMake file API reply in '%s'",
                               BuildDir.c_str());
    ProcessOptions PO;
    PO.Args = {cmakeOf(BuildDir), BuildDir};
    PO.WorkDir = BuildDir;
    PO.TimeoutSeconds = 600;
    auto R = runProcess(PO);
    if (!R)
      return R.takeError();
    if (!R->succeeded())
      return createStringError(
          inconvertibleErrorCode(),
          "re-running cmake on '%s' to get its file API reply failed (%s):\n%s",
          BuildDir.c_str(), R->describe().c_str(),
          lastLines(R->Stdout + R->Stderr, 10).c_str());
    Index = newestIndex(Reply);
    if (Index.empty())
      return missing("index file", Reply);
  }

  auto IndexJ = readJSON(Index);
  if (!IndexJ)
    return IndexJ.takeError();
  const json *CM = getObject(getObject(&*IndexJ, "reply"), "codemodel-v2");
  std::optional<StringRef> CMFile = getString(CM, "jsonFile");
  if (!CMFile)
    return missing("codemodel-v2 reply", Index);
  SmallString<256> CMPath(Reply);
  sys::path::append(CMPath, *CMFile);
  auto CMJ = readJSON(CMPath);
  if (!CMJ)
    return CMJ.takeError();
  const json *Configs = getArray(&*CMJ, "configurations");
  if (!Configs || Configs->empty())
    return missing("configuration", CMPath);
  // One configuration for single-config generators; the first otherwise.
  const json *Targets = getArray(&(*Configs)[0], "targets");
  if (!Targets)
    return missing("targets", CMPath);
  std::optional<StringRef> TargetFile;
  std::vector<std::string> Names;
  for (const json &T : *Targets) {
    auto Name = getString(&T, "name");
    if (!Name)
      continue;
    Names.push_back(Name->str());
    if (*Name == Target)
      TargetFile = getString(&T, "jsonFile");
  }
  if (!TargetFile) {
    std::sort(Names.begin(), Names.end());
    return createStringError(inconvertibleErrorCode(),
                             "no target '%s' in the CMake build '%s' (its "
                             "targets: %s)",
                             Target.str().c_str(), BuildDir.c_str(),
                             join(Names, ", ").c_str());
  }
  SmallString<256> TPath(Reply);
  sys::path::append(TPath, *TargetFile);
  auto TJ = readJSON(TPath);
  if (!TJ)
    return TJ.takeError();
  const json *TO = &*TJ;
  if (!TO->is_object())
    return missing("target object", TPath);

  CMakeTarget Out;
  Out.Name = Target.str();
  Out.BuildDir = BuildDir;
  if (auto Type = getString(TO, "type"))
    Out.Type = Type->str();
  std::string SourceDir = BuildDir;
  if (auto S = getString(getObject(&*CMJ, "paths"), "source"))
    SourceDir = S->str();
  std::vector<std::string> GroupLanguage;
  if (const json *Groups = getArray(TO, "compileGroups"))
    for (const json &G : *Groups) {
      auto Lang = getString(&G, "language");
      GroupLanguage.push_back(Lang ? Lang->str() : "");
    }
  if (const json *Sources = getArray(TO, "sources"))
    for (const json &S : *Sources) {
      auto Path = getString(&S, "path");
      auto Group = getInteger(&S, "compileGroupIndex");
      if (!Path || !Group || *Group < 0 ||
          size_t(*Group) >= GroupLanguage.size())
        continue; // a header listed in the target, not compiled
      Out.Sources.push_back(
          {absoluteIn(SourceDir, *Path), GroupLanguage[*Group]});
    }
  if (const json *Frags = getArray(getObject(TO, "link"), "commandFragments"))
    for (const json &F : *Frags) {
      auto Frag = getString(&F, "fragment");
      auto Role = getString(&F, "role");
      if (!Frag || !Role || Frag->trim().empty())
        continue;
      if (*Role != "libraries" && *Role != "libraryPath") {
        Out.Notes.push_back(Frag->str() + ": not passed (link " + Role->str() +
                            ")");
        continue;
      }
      std::vector<std::string> Flags =
          linkFragmentsForNvcc(shellWords(*Frag), BuildDir, Out.Notes);
      Out.LinkFlags.insert(Out.LinkFlags.end(), Flags.begin(), Flags.end());
    }
  return Out;
}

} // namespace optiml
