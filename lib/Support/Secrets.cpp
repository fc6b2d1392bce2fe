//===- Secrets.cpp - API keys: kept in memory, out of children and logs ---===//

#include "optiml/Support/Secrets.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <sys/prctl.h>
#include <unistd.h>

extern char **environ;

using namespace llvm;

namespace optiml {

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

bool isSecretEnvName(StringRef Name) {
  std::string Upper = Name.upper();
  StringRef U(Upper);
  for (StringRef Exact :
       {"API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "OPENAI_ORG_ID"})
    if (U == Exact)
      return true;
  for (StringRef Suffix : {"_API_KEY", "_APIKEY", "_KEY", "_TOKEN", "_SECRET",
                           "_PASSWORD", "_PASSWD", "_CREDENTIALS"})
    if (U.ends_with(Suffix))
      return true;
  return false;
}

bool isChildEnvAllowed(StringRef Name) {
  if (Name.empty() || isSecretEnvName(Name) || isCapturedSecretName(Name))
    return false;
  static const char *const Exact[] = {"PATH",           "HOME",
                                      "USER",           "LOGNAME",
                                      "TMPDIR",         "TMP",
                                      "TEMP",           "TZ",
                                      "LANG",           "LANGUAGE",
                                      "CPATH",          "LIBRARY_PATH",
                                      "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
                                      "LD_LIBRARY_PATH"};
  for (const char *E : Exact)
    if (Name == E)
      return true;
  for (StringRef Prefix :
       {"LC_", "CUDA_", "NVIDIA_", "NVCC_", "NV_COMPUTE_SANITIZER_"})
    if (Name.starts_with(Prefix))
      return true;
  // What the user's program needs besides (OMP_NUM_THREADS, a data path).
  if (const char *Pass = ::getenv("OPTIML_PASS_ENV")) {
    SmallVector<StringRef, 8> Names;
    StringRef(Pass).split(Names, ',', -1, /*KeepEmpty=*/false);
    for (StringRef N : Names)
      if (N.trim() == Name)
        return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// The store
//===----------------------------------------------------------------------===//

namespace {
struct Store {
  std::mutex Mu;
  /// Captured credentials by variable name (an empty value: the name was
  /// taken but was not set).
  std::map<std::string, std::string, std::less<>> Captured;
  /// Values to mask, whatever their source.
  std::vector<std::string> Values;

  void addValueLocked(StringRef V) {
    V = V.trim();
    if (V.size() >= 4 && !is_contained(Values, V))
      Values.push_back(V.str());
  }
};
} // namespace

static Store &store() {
  static Store *S = new Store; // never destroyed: used until exit
  return *S;
}

std::optional<std::string> capturedSecret(StringRef Name) {
  Store &S = store();
  std::lock_guard<std::mutex> L(S.Mu);
  auto It = S.Captured.find(Name);
  if (It == S.Captured.end() || It->second.empty())
    return std::nullopt;
  return It->second;
}

bool isCapturedSecretName(StringRef Name) {
  Store &S = store();
  std::lock_guard<std::mutex> L(S.Mu);
  return S.Captured.find(Name) != S.Captured.end();
}

std::optional<std::string> lookupEnvironment(StringRef Name) {
  if (isCapturedSecretName(Name))
    return capturedSecret(Name);
  std::string N = Name.str();
  const char *V = ::getenv(N.c_str());
  if (!V || !*V)
    return std::nullopt;
  return std::string(V);
}

void registerSecretValue(StringRef Value) {
  Store &S = store();
  std::lock_guard<std::mutex> L(S.Mu);
  S.addValueLocked(Value);
}

void protectProcessMemory() { ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

//===----------------------------------------------------------------------===//
// Scrubbing the environment block
//===----------------------------------------------------------------------===//

/// The original environment block, [env_start, env_end) of
/// /proc/self/stat: what /proc/<pid>/environ shows.
static bool originalBlock(uintptr_t &Start, uintptr_t &End) {
  int FD = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (FD < 0)
    return false;
  char Buf[4096];
  ssize_t N = ::read(FD, Buf, sizeof(Buf) - 1);
  ::close(FD);
  if (N <= 0)
    return false;
  StringRef Stat(Buf, N);
  // The command name is in parentheses and may hold spaces: fields are
  // counted after the last ')'; the first one there is field 3.
  size_t Paren = Stat.rfind(')');
  if (Paren == StringRef::npos)
    return false;
  SmallVector<StringRef, 64> Fields;
  Stat.drop_front(Paren + 1).split(Fields, ' ', -1, /*KeepEmpty=*/false);
  // env_start and env_end are fields 50 and 51 (Linux 3.5 and later).
  if (Fields.size() < 49)
    return false;
  unsigned long long S, E;
  if (Fields[47].trim().getAsInteger(10, S) ||
      Fields[48].trim().getAsInteger(10, E) || S == 0 || E <= S)
    return false;
  Start = static_cast<uintptr_t>(S);
  End = static_cast<uintptr_t>(E);
  return true;
}

/// Overwrites bytes so that the compiler cannot drop the stores.
static void wipe(char *P, size_t N) {
  volatile char *V = P;
  for (size_t I = 0; I < N; ++I)
    V[I] = 0;
}

namespace {
struct EnvEntry {
  char *Ptr;
  size_t Len;
  std::string Name, Value;
};
} // namespace

static std::vector<EnvEntry> currentEntries() {
  std::vector<EnvEntry> Out;
  for (char **E = environ; E && *E; ++E) {
    StringRef Entry(*E);
    size_t Eq = Entry.find('=');
    if (Eq == StringRef::npos || Eq == 0)
      continue;
    Out.push_back({*E, Entry.size(), Entry.take_front(Eq).str(),
                   Entry.drop_front(Eq + 1).str()});
  }
  return Out;
}

/// Wipes entries that lie in the original block (only there: a string
/// setenv made belongs to the C library).
static void wipeInBlock(ArrayRef<const EnvEntry *> Entries, bool &Wiped) {
  uintptr_t Start = 0, End = 0;
  bool Known = originalBlock(Start, End);
  Wiped = Known;
  for (const EnvEntry *E : Entries) {
    uintptr_t P = reinterpret_cast<uintptr_t>(E->Ptr);
    if (Known && (P < Start || P + E->Len > End))
      continue;
    wipe(E->Ptr, E->Len);
  }
}

ScrubSummary scrubEnvironmentAtStartup() {
  ScrubSummary Sum;
  std::vector<EnvEntry> Entries = currentEntries();
  std::vector<const EnvEntry *> ToWipe;
  std::vector<std::string> Seen;
  Store &S = store();
  for (const EnvEntry &E : Entries) {
    bool First = !is_contained(Seen, E.Name);
    Seen.push_back(E.Name);
    if (isSecretEnvName(E.Name)) {
      if (First) {
        std::lock_guard<std::mutex> L(S.Mu);
        S.Captured[E.Name] = E.Value; // getenv would have given the first
        S.addValueLocked(E.Value);
        Sum.Captured.push_back(E.Name);
      }
      ToWipe.push_back(&E);
    } else if (!isChildEnvAllowed(E.Name)) {
      ToWipe.push_back(&E);
      if (First)
        ++Sum.Moved;
    }
  }
  for (const std::string &N : Sum.Captured)
    ::unsetenv(N.c_str());
  // setenv on an existing variable puts a heap copy in its slot; the tool
  // keeps reading it with getenv, a child never gets it.
  std::vector<std::string> Moved;
  for (const EnvEntry *E : ToWipe)
    if (!isSecretEnvName(E->Name) && !is_contained(Moved, E->Name)) {
      ::setenv(E->Name.c_str(), E->Value.c_str(), /*overwrite=*/1);
      Moved.push_back(E->Name);
    }
  // A second entry of the same name keeps its slot: after the wipe it is an
  // empty string, which getenv and childEnvironment skip.
  wipeInBlock(ToWipe, Sum.Wiped);
  // Keys under any name (an api_key_env not read yet) are in the heap now.
  protectProcessMemory();
  return Sum;
}

std::optional<std::string> takeSecretVariable(StringRef Name) {
  Store &S = store();
  {
    std::lock_guard<std::mutex> L(S.Mu);
    auto It = S.Captured.find(Name);
    if (It != S.Captured.end())
      return It->second.empty() ? std::nullopt
                                : std::optional<std::string>(It->second);
  }
  std::vector<EnvEntry> Entries = currentEntries();
  std::vector<const EnvEntry *> Mine;
  std::optional<std::string> Value;
  for (const EnvEntry &E : Entries)
    if (E.Name == Name) {
      if (!Value)
        Value = E.Value;
      Mine.push_back(&E);
    }
  {
    std::lock_guard<std::mutex> L(S.Mu);
    S.Captured[Name.str()] = Value.value_or("");
    if (Value)
      S.addValueLocked(*Value);
  }
  if (!Mine.empty()) {
    ::unsetenv(Name.str().c_str());
    bool Wiped;
    wipeInBlock(Mine, Wiped);
  }
  if (!Value || Value->empty())
    return std::nullopt;
  protectProcessMemory();
  return Value;
}

//===----------------------------------------------------------------------===//
// Redaction
//===----------------------------------------------------------------------===//

static constexpr StringLiteral Mask = "[REDACTED]";

static std::string replaceAll(StringRef Text, StringRef Needle,
                              StringRef With) {
  std::string Out;
  while (true) {
    size_t Pos = Text.find(Needle);
    if (Pos == StringRef::npos)
      break;
    Out += Text.take_front(Pos);
    Out += With;
    Text = Text.drop_front(Pos + Needle.size());
  }
  Out += Text;
  return Out;
}

static std::string redactValues(StringRef Text,
                                std::vector<std::string> Values) {
  // Longest first, so a secret containing another is masked whole.
  llvm::sort(Values, [](const std::string &A, const std::string &B) {
    return A.size() > B.size();
  });
  std::string Out = Text.str();
  for (const std::string &V : Values)
    if (StringRef(Out).contains(V))
      Out = replaceAll(Out, V, Mask);
  return Out;
}

static bool isWordChar(char C) { return isAlnum(C) || C == '_'; }

namespace {
/// A key format recognised by its prefix: the prefix and at least MinTail
/// characters of the tail's class.
struct PrefixShape {
  StringRef Prefix;
  size_t MinTail;
  bool (*Tail)(char);
};
} // namespace

static bool keyTail(char C) { return isAlnum(C) || C == '_' || C == '-'; }
static bool alnumTail(char C) { return isAlnum(C); }
static bool wordTail(char C) { return isWordChar(C); }
static bool upperTail(char C) { return isDigit(C) || (C >= 'A' && C <= 'Z'); }

static const PrefixShape Shapes[] = {
    {"sk-", 12, keyTail}, // OpenAI, Anthropic (sk-ant-...)
    {"github_pat_", 20, wordTail}, {"ghp_", 20, alnumTail},
    {"gho_", 20, alnumTail},       {"ghu_", 20, alnumTail},
    {"ghs_", 20, alnumTail},       {"ghr_", 20, alnumTail},
    {"glpat-", 20, keyTail},       {"hf_", 20, alnumTail},
    {"AKIA", 16, upperTail},       {"ASIA", 16, upperTail},
    {"AIza", 30, keyTail},         {"xoxb-", 10, keyTail},
    {"xoxp-", 10, keyTail},        {"xoxa-", 10, keyTail},
};

/// Labels after which a value is a credential: "Bearer <v>", "x-api-key:
/// <v>", "api_key": "<v>", access_token=<v>.
static const StringLiteral Labels[] = {
    "x-api-key",  "api_key",      "api-key",    "apikey",
    "auth_token", "access_token", "secret_key", "authorization"};

static bool valueChar(char C) {
  return !isSpace(C) && C != '"' && C != '\'' && C != '`' && C != ',' &&
         C != ';' && C != '}' && C != ']' && C != '[' && C != '&' && C != '<' &&
         C != '>' && C != '\\';
}

static bool bearerChar(char C) {
  return isAlnum(C) || StringRef("._~+/=-").contains(C);
}

/// Tries the shapes at Pos; on a match appends the redacted form to Out and
/// returns the length consumed, else 0.
static size_t matchShape(StringRef T, size_t Pos, std::string &Out) {
  char Prev = Pos ? T[Pos - 1] : ' ';
  StringRef Rest = T.drop_front(Pos);
  if (!isWordChar(Prev)) {
    for (const PrefixShape &S : Shapes) {
      if (!Rest.starts_with(S.Prefix))
        continue;
      size_t N = S.Prefix.size();
      while (N < Rest.size() && S.Tail(Rest[N]))
        ++N;
      if (N - S.Prefix.size() >= S.MinTail) {
        Out += Mask;
        return N;
      }
    }
    // "Bearer <token>".
    if (Rest.size() > 7 && Rest.take_front(6).equals_insensitive("bearer") &&
        isSpace(Rest[6])) {
      size_t N = 6;
      while (N < Rest.size() && (Rest[N] == ' ' || Rest[N] == '\t'))
        ++N;
      size_t V = N;
      while (N < Rest.size() && bearerChar(Rest[N]))
        ++N;
      if (N - V >= 8) {
        Out += Rest.take_front(V);
        Out += Mask;
        return N;
      }
    }
    for (StringRef L : Labels) {
      if (Rest.size() <= L.size() ||
          !Rest.take_front(L.size()).equals_insensitive(L))
        continue;
      size_t N = L.size();
      if (isWordChar(Rest[N]) || Rest[N] == '-')
        continue; // "api_keys", "x-api-key-name"
      if (Rest[N] == '"' || Rest[N] == '\'')
        ++N;
      while (N < Rest.size() && (Rest[N] == ' ' || Rest[N] == '\t'))
        ++N;
      if (N >= Rest.size() || (Rest[N] != ':' && Rest[N] != '='))
        continue;
      ++N;
      while (N < Rest.size() && (Rest[N] == ' ' || Rest[N] == '\t'))
        ++N;
      if (N < Rest.size() && (Rest[N] == '"' || Rest[N] == '\''))
        ++N;
      // "Authorization: Bearer x" is masked by the bearer rule; the value
      // of "Basic x" or "token x" is the word after the scheme.
      if (Rest.drop_front(N).take_front(7).equals_insensitive("bearer "))
        continue;
      for (StringRef Scheme : {"basic ", "token "})
        if (Rest.drop_front(N)
                .take_front(Scheme.size())
                .equals_insensitive(Scheme))
          N += Scheme.size();
      size_t V = N;
      while (N < Rest.size() && valueChar(Rest[N]))
        ++N;
      if (N - V >= 4) {
        Out += Rest.take_front(V);
        Out += Mask;
        return N;
      }
    }
  }
  // Credentials in a URL: scheme://user:password@host.
  if (Rest.starts_with("://")) {
    size_t N = 3;
    bool Colon = false;
    while (N < Rest.size() && Rest[N] != '@' && Rest[N] != '/' &&
           valueChar(Rest[N])) {
      Colon |= Rest[N] == ':';
      ++N;
    }
    if (N < Rest.size() && Rest[N] == '@' && Colon && N > 3) {
      Out += "://";
      Out += Mask;
      return N;
    }
  }
  return 0;
}

std::string redactKeyShapes(StringRef Text) {
  std::string Out;
  Out.reserve(Text.size());
  for (size_t I = 0; I < Text.size();) {
    if (size_t N = matchShape(Text, I, Out)) {
      I += N;
      continue;
    }
    Out += Text[I++];
  }
  return Out;
}

void Redactor::addSecret(StringRef Secret) {
  Secret = Secret.trim();
  if (Secret.size() < 4)
    return;
  if (!is_contained(Secrets, Secret))
    Secrets.push_back(Secret.str());
}

std::string Redactor::redact(StringRef Text) const {
  std::vector<std::string> All = Secrets;
  {
    Store &S = store();
    std::lock_guard<std::mutex> L(S.Mu);
    All.insert(All.end(), S.Values.begin(), S.Values.end());
  }
  return redactKeyShapes(redactValues(Text, std::move(All)));
}

std::string redactSecrets(StringRef Text) { return Redactor().redact(Text); }

} // namespace optiml
