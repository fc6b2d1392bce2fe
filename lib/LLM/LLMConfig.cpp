//===- LLMConfig.cpp - Resolving LLM settings -----------------------------===//

#include "optiml/LLM/LLMConfig.h"
#include "optiml/LLM/LLMError.h"
#include "optiml/Support/Secrets.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <nlohmann/json.hpp>

using namespace llvm;
namespace optiml {
namespace llm {

using json = nlohmann::json;

static constexpr StringLiteral DefaultOpenAIBase = "https://api.openai.com/v1";
static constexpr StringLiteral DefaultAnthropicBase =
    "https://api.anthropic.com";

StringRef providerName(Provider P) {
  switch (P) {
  case Provider::OpenAI:
    return "openai";
  case Provider::Anthropic:
    return "anthropic";
  }
  return "openai";
}

Expected<Provider> parseProvider(StringRef Name) {
  std::string Lower = Name.trim().lower();
  if (Lower == "anthropic" || Lower == "claude")
    return Provider::Anthropic;
  if (Lower == "openai" || Lower == "vllm" || Lower == "sglang" ||
      Lower == "llama.cpp" || Lower == "llamacpp" || Lower == "ollama" ||
      Lower == "openai-compatible")
    return Provider::OpenAI;
  return makeLLMError(LLMErrorCode::Config,
                      "unknown LLM provider '" + Name +
                          "'; use 'openai' (any OpenAI-compatible server: "
                          "vLLM, SGLang, llama.cpp, Ollama) or 'anthropic'");
}

std::string LLMConfig::endpointURL() const {
  StringRef Base = StringRef(BaseURL).rtrim('/');
  if (Prov == Provider::Anthropic) {
    // ANTHROPIC_BASE_URL is conventionally the host without /v1, but accept
    // either.
    if (Base.ends_with("/v1"))
      return (Base + "/messages").str();
    return (Base + "/v1/messages").str();
  }
  return (Base + "/chat/completions").str();
}

EnvLookup processEnvironment() {
  // The keys captured at start-up first: they are no longer in the
  // environment.
  return [](StringRef Name) { return lookupEnvironment(Name); };
}

StringRef configFileName() { return ".clang-optiml.json"; }

namespace {
/// Reads the "llm" object field by field, naming the file and field in
/// every error.
class ConfigReader {
public:
  ConfigReader(const json &Obj, StringRef Path) : Obj(Obj), Path(Path) {}

  template <typename T>
  Error read(const char *Key, std::optional<T> &Out, const char *TypeName) {
    auto It = Obj.find(Key);
    if (It == Obj.end() || It->is_null())
      return Error::success();
    try {
      if constexpr (std::is_same_v<T, std::string>) {
        if (!It->is_string())
          return typeError(Key, TypeName);
      } else if constexpr (std::is_same_v<T, bool>) {
        if (!It->is_boolean())
          return typeError(Key, TypeName);
      } else if constexpr (std::is_floating_point_v<T>) {
        if (!It->is_number())
          return typeError(Key, TypeName);
      } else {
        if (!It->is_number_unsigned())
          return typeError(Key, TypeName);
      }
      Out = It->get<T>();
    } catch (const json::exception &) {
      return typeError(Key, TypeName);
    }
    return Error::success();
  }

private:
  Error typeError(const char *Key, const char *TypeName) {
    return makeLLMError(LLMErrorCode::Config,
                        Path + ": \"llm." + Key + "\" must be " + TypeName);
  }
  const json &Obj;
  StringRef Path;
};
} // namespace

Expected<LLMSettings> parseConfigText(StringRef Text, StringRef Path) {
  LLMSettings S;
  json Doc;
  try {
    Doc = json::parse(Text.begin(), Text.end());
  } catch (const json::exception &E) {
    return makeLLMError(LLMErrorCode::Config,
                        Path + ": not valid JSON: " + E.what());
  }
  if (!Doc.is_object())
    return makeLLMError(LLMErrorCode::Config,
                        Path + ": the top level must be a JSON object");
  auto It = Doc.find("llm");
  if (It == Doc.end())
    return S;
  if (!It->is_object())
    return makeLLMError(LLMErrorCode::Config,
                        Path + ": \"llm\" must be an object");
  const json &L = *It;
  static const char *Known[] = {
      "provider",          "model",           "base_url",     "api_key_env",
      "token_budget",      "max_concurrency", "max_attempts", "timeout_s",
      "max_output_tokens", "temperature",     "cache_dir",    "no_cache",
      "max_response_bytes"};
  for (auto &[Key, Value] : L.items()) {
    (void)Value;
    if (Key == "api_key" || Key == "key" || Key == "apiKey")
      return makeLLMError(
          LLMErrorCode::Config,
          Path + ": \"llm." + Key +
              "\" is not allowed: keep API keys out of project files; set "
              "OPENAI_API_KEY or ANTHROPIC_API_KEY, or name another "
              "variable with \"api_key_env\"");
    if (!llvm::is_contained(Known, Key))
      return makeLLMError(LLMErrorCode::Config,
                          Path + ": unknown field \"llm." + Key +
                              "\" (see docs/llm.md for the fields)");
  }
  ConfigReader R(L, Path);
  std::optional<std::string> ProviderText;
  if (Error E = R.read("provider", ProviderText, "a string"))
    return std::move(E);
  if (ProviderText) {
    Expected<Provider> P = parseProvider(*ProviderText);
    if (!P)
      return makeLLMError(LLMErrorCode::Config,
                          Path + ": " + toString(P.takeError()));
    S.Prov = *P;
  }
  if (Error E = R.read("model", S.Model, "a string"))
    return std::move(E);
  if (Error E = R.read("base_url", S.BaseURL, "a string"))
    return std::move(E);
  if (Error E = R.read("api_key_env", S.APIKeyEnv, "a string"))
    return std::move(E);
  if (Error E = R.read("token_budget", S.TokenBudget, "a non-negative integer"))
    return std::move(E);
  if (Error E =
          R.read("max_concurrency", S.MaxConcurrency, "a non-negative integer"))
    return std::move(E);
  if (Error E = R.read("max_attempts", S.MaxAttempts, "a non-negative integer"))
    return std::move(E);
  if (Error E = R.read("timeout_s", S.TimeoutSeconds, "a non-negative integer"))
    return std::move(E);
  if (Error E = R.read("max_output_tokens", S.MaxOutputTokens,
                       "a non-negative integer"))
    return std::move(E);
  if (Error E = R.read("temperature", S.Temperature, "a number"))
    return std::move(E);
  if (Error E = R.read("cache_dir", S.CacheDir, "a string"))
    return std::move(E);
  if (Error E = R.read("no_cache", S.NoCache, "true or false"))
    return std::move(E);
  if (Error E = R.read("max_response_bytes", S.MaxResponseBytes,
                       "a non-negative integer"))
    return std::move(E);
  if (S.APIKeyEnv &&
      (S.APIKeyEnv->empty() || S.APIKeyEnv->find('=') != std::string::npos))
    return makeLLMError(LLMErrorCode::Config,
                        Path + ": \"llm.api_key_env\" must name an "
                               "environment variable");
  return S;
}

Expected<LLMSettings> loadConfigFile(StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return makeLLMError(LLMErrorCode::Config, "cannot read " + Path + ": " +
                                                  Buf.getError().message());
  return parseConfigText((*Buf)->getBuffer(), Path);
}

static bool isProjectRoot(StringRef Dir) {
  for (StringRef Marker : {".git", ".hg"}) {
    SmallString<256> P(Dir);
    sys::path::append(P, Marker);
    if (sys::fs::exists(P)) // a directory, or a file in a worktree
      return true;
  }
  return false;
}

std::vector<std::string> configSearchPath(StringRef Dir) {
  SmallString<256> Abs(Dir.empty() ? StringRef(".") : Dir);
  if (sys::fs::make_absolute(Abs))
    return {};
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  std::vector<std::string> Path;
  for (StringRef D = Abs; !D.empty(); D = sys::path::parent_path(D)) {
    Path.push_back(D.str());
    if (isProjectRoot(D))
      return Path;
    if (D == sys::path::parent_path(D))
      break;
  }
  // No project root above: only the source's own directory.
  return {std::string(Abs)};
}

std::optional<std::string> findConfigFile(StringRef Dir) {
  for (const std::string &D : configSearchPath(Dir)) {
    SmallString<256> Candidate(D);
    sys::path::append(Candidate, configFileName());
    if (sys::fs::is_regular_file(Candidate))
      return std::string(Candidate);
  }
  return std::nullopt;
}

std::string urlHost(StringRef URL) {
  StringRef Rest = URL;
  size_t Scheme = Rest.find("://");
  if (Scheme != StringRef::npos)
    Rest = Rest.drop_front(Scheme + 3);
  Rest =
      Rest.take_until([](char C) { return C == '/' || C == '?' || C == '#'; });
  size_t At = Rest.rfind('@');
  if (At != StringRef::npos)
    Rest = Rest.drop_front(At + 1); // credentials are not the host
  return Rest.lower();
}

bool isLoopbackURL(StringRef URL) {
  std::string HostPort = urlHost(URL);
  StringRef H(HostPort);
  if (H.starts_with("[")) {
    StringRef Inside =
        H.drop_front().take_until([](char C) { return C == ']'; });
    return Inside == "::1" || Inside == "0:0:0:0:0:0:0:1";
  }
  H = H.take_until([](char C) { return C == ':'; });
  if (H == "localhost" || H == "localhost.")
    return true;
  // 127.0.0.0/8 in dotted decimal, four parts.
  SmallVector<StringRef, 4> Parts;
  H.split(Parts, '.', -1, /*KeepEmpty=*/true);
  if (Parts.size() != 4 || Parts[0] != "127")
    return false;
  for (StringRef P : Parts) {
    unsigned V;
    if (P.empty() || P.size() > 3 || P.getAsInteger(10, V) || V > 255)
      return false;
  }
  return true;
}

std::string defaultCacheDir(const EnvLookup &Env) {
  SmallString<256> Dir;
  if (std::optional<std::string> X = Env("XDG_CACHE_HOME")) {
    Dir = *X;
  } else if (std::optional<std::string> H = Env("HOME")) {
    Dir = *H;
    sys::path::append(Dir, ".cache");
  } else {
    return "";
  }
  sys::path::append(Dir, "clang-optiml", "llm");
  return std::string(Dir);
}

template <typename T>
static std::optional<T> pick(const std::optional<T> &A,
                             const std::optional<T> &B) {
  return A ? A : B;
}

static bool isOfficialEndpoint(StringRef URL) {
  return URL.contains("api.openai.com") || URL.contains("api.anthropic.com");
}

static Provider chooseProvider(const LLMSettings &Explicit,
                               const LLMSettings &File, const EnvLookup &Env) {
  if (std::optional<Provider> P = pick(Explicit.Prov, File.Prov))
    return *P;
  if (Env("ANTHROPIC_API_KEY") && !Env("OPENAI_API_KEY"))
    return Provider::Anthropic;
  return Provider::OpenAI;
}

Expected<LLMConfig> resolveLLMConfig(const LLMSettings &Explicit,
                                     const LLMSettings &File,
                                     const EnvLookup &Env) {
  LLMConfig C;
  C.Prov = chooseProvider(Explicit, File, Env);
  bool IsAnthropic = C.Prov == Provider::Anthropic;

  std::optional<std::string> Model = pick(Explicit.Model, File.Model);
  if (!Model || Model->empty())
    return makeLLMError(
        LLMErrorCode::Config,
        "no LLM model configured: pass --llm-model or set \"llm.model\" in " +
            configFileName());
  C.Model = *Model;

  // The base URL: option, then the provider's variable, then the file.
  std::optional<std::string> Base = Explicit.BaseURL;
  if (!Base)
    Base = Env(IsAnthropic ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL");
  if (!Base)
    Base = File.BaseURL;
  C.BaseURL =
      Base ? *Base
           : (IsAnthropic ? DefaultAnthropicBase : DefaultOpenAIBase).str();
  StringRef B(C.BaseURL);
  if (!B.starts_with("http://") && !B.starts_with("https://"))
    return makeLLMError(LLMErrorCode::Config,
                        "LLM base URL '" + redactSecrets(C.BaseURL) +
                            "' must start with http:// or https://");
  if (B.starts_with("http://") && !isLoopbackURL(B) &&
      !Explicit.AllowInsecureHTTP.value_or(false))
    return makeLLMError(
        LLMErrorCode::Config,
        "LLM base URL '" + redactSecrets(C.BaseURL) +
            "' is plain http:// to another machine: the key and the "
            "program's source would cross the network unencrypted; use "
            "https://, a loopback address (an SSH tunnel to 127.0.0.1), or "
            "pass --allow-insecure-http");

  std::string KeyVar =
      pick(Explicit.APIKeyEnv, File.APIKeyEnv)
          .value_or(IsAnthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
  C.APIKeyEnv = KeyVar;
  if (std::optional<std::string> Key = Env(KeyVar))
    C.APIKey = StringRef(*Key).trim().str();
  if (C.APIKey.empty() && isOfficialEndpoint(C.BaseURL))
    return makeLLMError(LLMErrorCode::Config,
                        "no API key for " + C.BaseURL + ": set " + KeyVar);

  if (auto V = pick(Explicit.TokenBudget, File.TokenBudget))
    C.TokenBudget = *V;
  if (auto V = pick(Explicit.MaxConcurrency, File.MaxConcurrency))
    C.MaxConcurrency = std::max(1u, *V);
  if (auto V = pick(Explicit.MaxAttempts, File.MaxAttempts))
    C.MaxAttempts = std::max(1u, *V);
  if (auto V = pick(Explicit.TimeoutSeconds, File.TimeoutSeconds))
    C.Timeout = std::chrono::seconds(std::max(1u, *V));
  if (auto V = pick(Explicit.MaxOutputTokens, File.MaxOutputTokens))
    C.MaxOutputTokens = std::max(1u, *V);
  C.Temperature = pick(Explicit.Temperature, File.Temperature);
  if (auto V = pick(Explicit.MaxResponseBytes, File.MaxResponseBytes))
    C.MaxResponseBytes = static_cast<size_t>(*V);
  C.NoCache = pick(Explicit.NoCache, File.NoCache).value_or(false);
  C.CacheDir =
      pick(Explicit.CacheDir, File.CacheDir).value_or(defaultCacheDir(Env));
  return C;
}

Expected<LLMConfig> loadLLMConfig(const LLMSettings &Explicit,
                                  const LLMSettings &File) {
  Expected<LLMConfig> C =
      resolveLLMConfig(Explicit, File, processEnvironment());
  if (!C)
    return C.takeError();
  // Whatever its name, the key's variable now lives only in this process's
  // memory: no child inherits it, /proc/<pid>/environ does not show it.
  if (std::optional<std::string> Key = takeSecretVariable(C->APIKeyEnv))
    C->APIKey = StringRef(*Key).trim().str();
  registerSecretValue(C->APIKey);
  return C;
}

Expected<LLMConfig> loadLLMConfig(const LLMSettings &Explicit,
                                  StringRef ProjectDir) {
  LLMSettings File;
  if (std::optional<std::string> Path = findConfigFile(ProjectDir)) {
    Expected<LLMSettings> S = loadConfigFile(*Path);
    if (!S)
      return S.takeError();
    File = std::move(*S);
  }
  return loadLLMConfig(Explicit, File);
}

Expected<ProjectLLM> findProjectLLM(const LLMSettings &Explicit,
                                    StringRef SourceDir, const EnvLookup &Env) {
  ProjectLLM P;
  P.ConfigPath = findConfigFile(SourceDir);
  if (P.ConfigPath) {
    Expected<LLMSettings> S = loadConfigFile(*P.ConfigPath);
    if (!S)
      return S.takeError();
    P.File = std::move(*S);
  }
  P.Configured = isLLMConfigured(Explicit, P.File, Env);
  if (Explicit.Model)
    P.EnabledBy = "--llm-model";
  else if (P.ConfigPath && P.File.Model)
    P.EnabledBy = *P.ConfigPath;
  return P;
}

bool isLLMConfigured(const LLMSettings &Explicit, const LLMSettings &File,
                     const EnvLookup &Env) {
  // An http:// URL to another machine is still a configured LLM: using it
  // then fails with the reason, rather than quietly falling back.
  LLMSettings Lenient = Explicit;
  Lenient.AllowInsecureHTTP = true;
  Expected<LLMConfig> C = resolveLLMConfig(Lenient, File, Env);
  if (!C) {
    consumeError(C.takeError());
    return false;
  }
  return !C->APIKey.empty() || Explicit.BaseURL || File.BaseURL ||
         Env(C->Prov == Provider::Anthropic ? "ANTHROPIC_BASE_URL"
                                            : "OPENAI_BASE_URL");
}

} // namespace llm
} // namespace optiml
