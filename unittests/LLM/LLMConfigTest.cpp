//===- LLMConfigTest.cpp --------------------------------------------------===//

#include "optiml/LLM/LLMConfig.h"
#include "optiml/LLM/LLMError.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace llvm;

namespace optiml {
namespace llm {
namespace {

EnvLookup envOf(std::map<std::string, std::string> Vars) {
  return [Vars](StringRef Name) -> std::optional<std::string> {
    auto It = Vars.find(Name.str());
    if (It == Vars.end())
      return std::nullopt;
    return It->second;
  };
}

LLMSettings withModel(StringRef Model) {
  LLMSettings S;
  S.Model = Model.str();
  return S;
}

TEST(LLMConfig, ProviderNames) {
  EXPECT_EQ(*parseProvider("OpenAI"), Provider::OpenAI);
  EXPECT_EQ(*parseProvider("ollama"), Provider::OpenAI);
  EXPECT_EQ(*parseProvider("vllm"), Provider::OpenAI);
  EXPECT_EQ(*parseProvider("anthropic"), Provider::Anthropic);
  Expected<Provider> Bad = parseProvider("gemini");
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(toString(Bad.takeError()).find("unknown LLM provider 'gemini'"),
            std::string::npos);
}

TEST(LLMConfig, OpenAIDefaults) {
  Expected<LLMConfig> C =
      resolveLLMConfig(withModel("gpt-x"), {},
                       envOf({{"OPENAI_API_KEY", "sk-abc"}, {"HOME", "/h"}}));
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Prov, Provider::OpenAI);
  EXPECT_EQ(C->APIKey, "sk-abc");
  EXPECT_EQ(C->endpointURL(), "https://api.openai.com/v1/chat/completions");
  EXPECT_EQ(C->CacheDir, "/h/.cache/clang-optiml/llm");
}

TEST(LLMConfig, AnthropicFromEnvironment) {
  Expected<LLMConfig> C =
      resolveLLMConfig(withModel("claude-x"), {},
                       envOf({{"ANTHROPIC_API_KEY", "k-ant-1234"},
                              {"ANTHROPIC_BASE_URL", "https://proxy:8080/"}}));
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Prov, Provider::Anthropic);
  EXPECT_EQ(C->endpointURL(), "https://proxy:8080/v1/messages");
}

TEST(LLMConfig, Precedence) {
  LLMSettings File;
  File.Prov = Provider::OpenAI;
  File.Model = "file-model";
  File.BaseURL = "https://file:1/v1";
  File.TokenBudget = 1000;
  LLMSettings Explicit;
  Explicit.Model = "option-model";
  EnvLookup Env = envOf({{"OPENAI_BASE_URL", "https://env:2/v1"}});
  Expected<LLMConfig> C = resolveLLMConfig(Explicit, File, Env);
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Model, "option-model");
  EXPECT_EQ(C->BaseURL, "https://env:2/v1");
  EXPECT_EQ(C->TokenBudget, 1000u);
  EXPECT_TRUE(C->APIKey.empty()) << "local servers need no key";
  Explicit.BaseURL = "https://option:3/v1";
  C = resolveLLMConfig(Explicit, File, Env);
  ASSERT_TRUE(bool(C));
  EXPECT_EQ(C->BaseURL, "https://option:3/v1");
}

TEST(LLMConfig, Errors) {
  Expected<LLMConfig> C = resolveLLMConfig({}, {}, envOf({}));
  ASSERT_FALSE(bool(C));
  EXPECT_NE(toString(C.takeError()).find("--llm-model"), std::string::npos);

  C = resolveLLMConfig(withModel("m"), {}, envOf({}));
  ASSERT_FALSE(bool(C));
  EXPECT_NE(toString(C.takeError()).find("set OPENAI_API_KEY"),
            std::string::npos);

  LLMSettings Bad = withModel("m");
  Bad.BaseURL = "localhost:8000";
  C = resolveLLMConfig(Bad, {}, envOf({}));
  ASSERT_FALSE(bool(C));
  consumeError(C.takeError());
}

TEST(LLMConfig, KeyFromNamedVariable) {
  LLMSettings File = withModel("m");
  File.APIKeyEnv = "MY_GATEWAY_KEY";
  Expected<LLMConfig> C =
      resolveLLMConfig({}, File, envOf({{"MY_GATEWAY_KEY", "gw-secret"}}));
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->APIKey, "gw-secret");
}

TEST(LLMConfig, IsConfigured) {
  EXPECT_FALSE(isLLMConfigured({}, {}, envOf({})));
  EXPECT_FALSE(isLLMConfigured(withModel("m"), {}, envOf({})));
  EXPECT_TRUE(isLLMConfigured(withModel("m"), {},
                              envOf({{"OPENAI_API_KEY", "sk-1234"}})));
  EXPECT_TRUE(isLLMConfigured(withModel("m"), {},
                              envOf({{"OPENAI_BASE_URL", "http://l:1/v1"}})));
}

TEST(ConfigFile, Parses) {
  Expected<LLMSettings> S = parseConfigText(R"({
    "llm": {"provider": "ollama", "model": "qwen", "base_url": "http://localhost:11434/v1",
            "token_budget": 50000, "max_concurrency": 2, "timeout_s": 30,
            "temperature": 0.2, "no_cache": true, "api_key_env": "X_KEY"},
    "search": {"whatever": 1}
  })",
                                            "cfg.json");
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_EQ(*S->Prov, Provider::OpenAI);
  EXPECT_EQ(*S->Model, "qwen");
  EXPECT_EQ(*S->TokenBudget, 50000u);
  EXPECT_EQ(*S->MaxConcurrency, 2u);
  EXPECT_EQ(*S->TimeoutSeconds, 30u);
  EXPECT_DOUBLE_EQ(*S->Temperature, 0.2);
  EXPECT_TRUE(*S->NoCache);
  EXPECT_EQ(*S->APIKeyEnv, "X_KEY");
}

std::string configError(StringRef Text) {
  Expected<LLMSettings> S = parseConfigText(Text, "cfg.json");
  if (S)
    return "ok";
  return toString(S.takeError());
}

TEST(ConfigFile, Rejects) {
  EXPECT_EQ(configError("{}"), "ok");
  EXPECT_EQ(configError("[]"), "cfg.json: the top level must be a JSON object");
  EXPECT_EQ(configError(R"({"llm": {"model": 3}})"),
            "cfg.json: \"llm.model\" must be a string");
  EXPECT_EQ(configError(R"({"llm": {"token_budget": -1}})"),
            "cfg.json: \"llm.token_budget\" must be a non-negative integer");
  EXPECT_EQ(
      configError(R"({"llm": {"modle": "x"}})"),
      "cfg.json: unknown field \"llm.modle\" (see docs/llm.md for the fields)");
  EXPECT_NE(configError(R"({"llm": {"api_key": "sk-1"}})").find("not allowed"),
            std::string::npos);
  EXPECT_NE(configError("{\"llm\": ").find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(
      configError(R"({"llm": {"provider": "x"}})").find("unknown LLM provider"),
      std::string::npos);
}

static void writeConfig(StringRef Dir, StringRef Text) {
  SmallString<128> File(Dir);
  sys::path::append(File, configFileName());
  std::error_code EC;
  raw_fd_ostream OS(File, EC);
  ASSERT_FALSE(EC);
  OS << Text;
}

TEST(ConfigFile, FoundInParentDirectoriesUpToTheProjectRoot) {
  SmallString<128> Root;
  ASSERT_FALSE(sys::fs::createUniqueDirectory("llm-config", Root));
  SmallString<128> Project(Root), Deep(Root);
  sys::path::append(Project, "project");
  sys::path::append(Deep, "project", "a", "b");
  ASSERT_FALSE(sys::fs::create_directories(Deep));
  ASSERT_FALSE(sys::fs::create_directories(Project + "/.git"));
  EXPECT_FALSE(findConfigFile(Deep).has_value());
  writeConfig(Project, R"({"llm": {"model": "m"}})");
  std::optional<std::string> Found = findConfigFile(Deep);
  ASSERT_TRUE(Found.has_value());
  EXPECT_EQ(*Found, (Project + "/" + configFileName()).str());
  Expected<LLMSettings> S = loadConfigFile(*Found);
  ASSERT_TRUE(bool(S));
  EXPECT_EQ(*S->Model, "m");
  EXPECT_EQ(configSearchPath(Deep).back(), std::string(Project));

  // The tool's entry point: file plus options; the option wins.
  LLMSettings Explicit;
  Explicit.BaseURL = "http://127.0.0.1:9/v1";
  Expected<LLMConfig> C = loadLLMConfig(Explicit, Deep);
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Model, "m");
  EXPECT_EQ(C->BaseURL, "http://127.0.0.1:9/v1");
  sys::fs::remove_directories(Root);
}

// Finding 3(d): a config in a directory above the project (a home
// directory) switched every run below it to an LLM.
TEST(ConfigFile, NeverBeyondTheProject) {
  SmallString<128> Root;
  ASSERT_FALSE(sys::fs::createUniqueDirectory("llm-config", Root));
  writeConfig(
      Root, R"({"llm": {"model": "m", "base_url": "http://gpu-box:8000/v1"}})");
  // A project below it: its root stops the search.
  SmallString<128> Project(Root), Src(Root);
  sys::path::append(Project, "project");
  sys::path::append(Src, "project", "src");
  ASSERT_FALSE(sys::fs::create_directories(Src));
  ASSERT_FALSE(sys::fs::create_directories(Project + "/.git"));
  EXPECT_FALSE(findConfigFile(Src).has_value());
  // No project at all: only the source's own directory counts.
  SmallString<128> Loose(Root);
  sys::path::append(Loose, "loose", "dir");
  ASSERT_FALSE(sys::fs::create_directories(Loose));
  EXPECT_FALSE(findConfigFile(Loose).has_value());
  EXPECT_EQ(configSearchPath(Loose),
            std::vector<std::string>{std::string(Loose)});
  Expected<ProjectLLM> P = findProjectLLM({}, Loose, envOf({}));
  ASSERT_TRUE(bool(P)) << toString(P.takeError());
  EXPECT_FALSE(P->Configured);
  // Next to the source it applies, and says so.
  P = findProjectLLM({}, Root, envOf({}));
  ASSERT_TRUE(bool(P)) << toString(P.takeError());
  EXPECT_TRUE(P->Configured);
  EXPECT_EQ(P->EnabledBy, (Root + "/" + configFileName()).str());
  sys::fs::remove_directories(Root);
}

// Finding 3(d): the key went to a plain http:// server on another machine.
TEST(LLMConfig, PlainHTTPOnlyToLoopback) {
  for (const char *URL :
       {"http://127.0.0.1:8000/v1", "http://localhost:11434/v1",
        "http://127.3.4.5/v1", "http://[::1]:8080/v1", "https://gpu-box/v1"}) {
    LLMSettings S = withModel("m");
    S.BaseURL = URL;
    Expected<LLMConfig> C = resolveLLMConfig(S, {}, envOf({}));
    EXPECT_TRUE(bool(C)) << URL;
    if (!C)
      consumeError(C.takeError());
  }
  for (const char *URL :
       {"http://gpu-box:8000/v1", "http://10.0.0.1/v1",
        "http://127.0.0.1.evil.com/v1", "http://localhost.evil.com/v1",
        "http://127.0.0.1@evil.com/v1"}) {
    LLMSettings S = withModel("m");
    S.BaseURL = URL;
    Expected<LLMConfig> C = resolveLLMConfig(
        {}, S, envOf({{"OPENAI_API_KEY", "sk-abcdefghijklmnop1234"}}));
    ASSERT_FALSE(bool(C)) << URL;
    std::string Msg = toString(C.takeError());
    EXPECT_NE(Msg.find("--allow-insecure-http"), std::string::npos) << Msg;
    // Configured all the same: the run fails with the reason instead of
    // quietly using the catalog.
    EXPECT_TRUE(isLLMConfigured({}, S, envOf({{"OPENAI_API_KEY", "sk-1234"}})));
    LLMSettings Allow;
    Allow.AllowInsecureHTTP = true;
    C = resolveLLMConfig(Allow, S, envOf({}));
    EXPECT_TRUE(bool(C)) << URL;
    if (!C)
      consumeError(C.takeError());
  }
  EXPECT_EQ(urlHost("http://bob:pw@Gpu-Box:8000/v1"), "gpu-box:8000");
}

} // namespace
} // namespace llm
} // namespace optiml
