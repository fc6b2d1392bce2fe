//===- LLMConfig.h - Where the LLM is and how to talk to it ---------------===//
//
// Settings come from three places, highest precedence first:
//   1. explicit options (the tool's --llm-provider, --llm-model,
//      --llm-base-url, --llm-token-budget, --no-cache),
//   2. the environment (OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY,
//      ANTHROPIC_BASE_URL),
//   3. the project config file, the "llm" object of .clang-optiml.json
//      (docs/llm.md lists its fields), found next to the source or in a
//      parent up to the project root (findConfigFile).
// API keys come only from the environment: the config file may name the
// variable to read ("api_key_env") but may not hold a key. The tool takes
// keys out of its environment at start-up (optiml/Support/Secrets.h);
// processEnvironment() looks there first.
//
// Plain http:// is refused except to this machine (127.0.0.0/8, ::1,
// localhost), unless explicitly allowed (--allow-insecure-http).
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_LLM_LLMCONFIG_H
#define OPTIML_LLM_LLMCONFIG_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace optiml {
namespace llm {

enum class Provider {
  OpenAI,    ///< OpenAI-compatible chat completions (OpenAI, vLLM, SGLang,
             ///< llama.cpp server, Ollama).
  Anthropic, ///< Anthropic Messages API.
};

llvm::StringRef providerName(Provider P);
/// Accepts "openai" and "anthropic", plus the aliases "vllm", "sglang",
/// "llama.cpp", "llamacpp" and "ollama" (all OpenAI-compatible).
llvm::Expected<Provider> parseProvider(llvm::StringRef Name);

/// A partial set of settings: what one source (options or config file)
/// says. Unset fields defer to the next source.
struct LLMSettings {
  std::optional<Provider> Prov;
  std::optional<std::string> Model;
  std::optional<std::string> BaseURL;
  /// Name of the environment variable holding the key (default: the
  /// provider's usual one).
  std::optional<std::string> APIKeyEnv;
  std::optional<uint64_t> TokenBudget;
  std::optional<unsigned> MaxConcurrency;
  std::optional<unsigned> MaxAttempts;
  std::optional<unsigned> TimeoutSeconds;
  std::optional<unsigned> MaxOutputTokens;
  std::optional<double> Temperature;
  std::optional<std::string> CacheDir;
  std::optional<bool> NoCache;
  std::optional<uint64_t> MaxResponseBytes;
  /// Allows http:// to a host other than this machine. Only an explicit
  /// option sets it; the config file cannot.
  std::optional<bool> AllowInsecureHTTP;
};

/// Fully resolved settings.
struct LLMConfig {
  Provider Prov = Provider::OpenAI;
  std::string Model;
  /// Without the endpoint path: "https://api.openai.com/v1",
  /// "https://api.anthropic.com".
  std::string BaseURL;
  /// Empty when the server needs none (a local vLLM or Ollama).
  std::string APIKey;
  /// The variable the key is read from (whether it was set or not).
  std::string APIKeyEnv;
  std::chrono::milliseconds Timeout{120000};
  std::chrono::milliseconds ConnectTimeout{10000};
  /// Attempts per call, the first included.
  unsigned MaxAttempts = 5;
  std::chrono::milliseconds InitialBackoff{1000};
  std::chrono::milliseconds MaxBackoff{30000};
  /// A Retry-After longer than this fails the call instead of waiting.
  std::chrono::milliseconds MaxRetryAfter{120000};
  /// HTTP requests in flight at once, across threads sharing the client.
  unsigned MaxConcurrency = 4;
  /// Total tokens (input + output) the client may spend; 0 = unlimited.
  uint64_t TokenBudget = 0;
  unsigned MaxOutputTokens = 4096;
  std::optional<double> Temperature;
  /// Response cache directory; empty disables the cache.
  std::string CacheDir;
  bool NoCache = false;
  size_t MaxResponseBytes = 4u << 20;

  /// The URL requests go to: <base>/chat/completions or <base>/v1/messages.
  std::string endpointURL() const;
};

using EnvLookup = std::function<std::optional<std::string>(llvm::StringRef)>;

/// Looks variables up in the process environment.
EnvLookup processEnvironment();

/// The name of the project config file.
llvm::StringRef configFileName();

/// Parses the "llm" object of a project config file. Text is the whole
/// file; Path only names it in errors. Unknown fields under "llm" and a
/// literal "api_key" are errors; other top-level sections are ignored.
llvm::Expected<LLMSettings> parseConfigText(llvm::StringRef Text,
                                            llvm::StringRef Path);
llvm::Expected<LLMSettings> loadConfigFile(llvm::StringRef Path);

/// The directories searched for .clang-optiml.json from \p Dir, nearest
/// first: Dir and its parents up to the project root, the nearest one
/// holding .git or .hg (the way clang-format looks for .clang-format, but
/// never beyond the project). Without a project root above Dir, Dir alone:
/// a config in an unrelated parent (a home directory) never applies.
std::vector<std::string> configSearchPath(llvm::StringRef Dir);

/// The first .clang-optiml.json on configSearchPath(Dir).
std::optional<std::string> findConfigFile(llvm::StringRef Dir);

/// Whether a URL's host is this machine: localhost, 127.0.0.0/8, ::1.
bool isLoopbackURL(llvm::StringRef URL);
/// The host (and port) of a URL, without credentials: "api.openai.com",
/// "127.0.0.1:8000".
std::string urlHost(llvm::StringRef URL);

/// How the LLM of a project is configured, as the tool reports it.
struct ProjectLLM {
  /// The config file that applies, if any.
  std::optional<std::string> ConfigPath;
  LLMSettings File;
  /// Whether an LLM is configured (isLLMConfigured).
  bool Configured = false;
  /// What configured it: "--llm-model", "<path>/.clang-optiml.json".
  std::string EnabledBy;
};

/// Finds and reads the config for a source file in \p SourceDir, and says
/// whether an LLM is configured for it.
llvm::Expected<ProjectLLM> findProjectLLM(const LLMSettings &Explicit,
                                          llvm::StringRef SourceDir,
                                          const EnvLookup &Env);

/// The default cache directory: $XDG_CACHE_HOME/clang-optiml/llm or
/// ~/.cache/clang-optiml/llm.
std::string defaultCacheDir(const EnvLookup &Env);

/// Combines the sources (see the file comment). Without a provider in any
/// source, picks Anthropic when only ANTHROPIC_API_KEY is set, else OpenAI.
/// Fails when no model is configured, or when the official endpoint is used
/// without a key.
llvm::Expected<LLMConfig> resolveLLMConfig(const LLMSettings &Explicit,
                                           const LLMSettings &File,
                                           const EnvLookup &Env);

/// What the tool calls: finds .clang-optiml.json from ProjectDir upwards
/// (findConfigFile), and resolves it with Explicit and the process
/// environment. The key's variable is then taken out of the environment
/// (takeSecretVariable), whatever its name.
llvm::Expected<LLMConfig> loadLLMConfig(const LLMSettings &Explicit,
                                        llvm::StringRef ProjectDir);
/// The same with the file's settings already read.
llvm::Expected<LLMConfig> loadLLMConfig(const LLMSettings &Explicit,
                                        const LLMSettings &File);

/// Whether any LLM is configured at all (a model and either a key or an
/// explicit base URL): decides whether the tool defaults to the mixed
/// policy.
bool isLLMConfigured(const LLMSettings &Explicit, const LLMSettings &File,
                     const EnvLookup &Env);

} // namespace llm
} // namespace optiml

#endif // OPTIML_LLM_LLMCONFIG_H
