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
                              {"ANTHROPIC_BASE_URL", "http://proxy:8080/"}}));
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Prov, Provider::Anthropic);
  EXPECT_EQ(C->endpointURL(), "http://proxy:8080/v1/messages");
}

TEST(LLMConfig, Precedence) {
  LLMSettings File;
  File.Prov = Provider::OpenAI;
  File.Model = "file-model";
  File.BaseURL = "http://file:1/v1";
  File.TokenBudget = 1000;
  LLMSettings Explicit;
  Explicit.Model = "option-model";
  EnvLookup Env = envOf({{"OPENAI_BASE_URL", "http://env:2/v1"}});
  Expected<LLMConfig> C = resolveLLMConfig(Explicit, File, Env);
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Model, "option-model");
  EXPECT_EQ(C->BaseURL, "http://env:2/v1");
  EXPECT_EQ(C->TokenBudget, 1000u);
  EXPECT_TRUE(C->APIKey.empty()) << "local servers need no key";
  Explicit.BaseURL = "http://option:3/v1";
  C = resolveLLMConfig(Explicit, File, Env);
  ASSERT_TRUE(bool(C));
  EXPECT_EQ(C->BaseURL, "http://option:3/v1");
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

TEST(ConfigFile, FoundInParentDirectories) {
  SmallString<128> Root;
  ASSERT_FALSE(sys::fs::createUniqueDirectory("llm-config", Root));
  SmallString<128> Deep(Root);
  sys::path::append(Deep, "a", "b");
  ASSERT_FALSE(sys::fs::create_directories(Deep));
  EXPECT_FALSE(findConfigFile(Deep).has_value() &&
               StringRef(*findConfigFile(Deep)).starts_with(Root));
  SmallString<128> File(Root);
  sys::path::append(File, configFileName());
  {
    std::error_code EC;
    raw_fd_ostream OS(File, EC);
    ASSERT_FALSE(EC);
    OS << R"({"llm": {"model": "m"}})";
  }
  std::optional<std::string> Found = findConfigFile(Deep);
  ASSERT_TRUE(Found.has_value());
  EXPECT_EQ(*Found, std::string(File));
  Expected<LLMSettings> S = loadConfigFile(*Found);
  ASSERT_TRUE(bool(S));
  EXPECT_EQ(*S->Model, "m");

  // The tool's entry point: file plus options; the option wins.
  LLMSettings Explicit;
  Explicit.BaseURL = "http://127.0.0.1:9/v1";
  Expected<LLMConfig> C = loadLLMConfig(Explicit, Deep);
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Model, "m");
  EXPECT_EQ(C->BaseURL, "http://127.0.0.1:9/v1");
  sys::fs::remove_directories(Root);
}

} // namespace
} // namespace llm
} // namespace optiml
