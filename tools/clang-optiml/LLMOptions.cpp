//===- LLMOptions.cpp - The LLM options optimize and synthesize share -----===//
//
// Where the model is and how to reach it: the options, and the resolution
// of options, environment and the project's .clang-optiml.json into a
// client (docs/llm.md). optimize uses the model as a policy, synthesize as
// the mixture of thoughts.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#ifdef OPTIML_WITH_LLM
#include "optiml/LLM/ChatClient.h"
#include "optiml/LLM/HttpTransport.h"
#include "optiml/LLM/LLMConfig.h"
#endif

using namespace llvm;

namespace optiml {
namespace tool {

cl::OptionCategory LLMCategory("LLM options (docs/llm.md)");

#ifdef OPTIML_WITH_LLM
namespace {
/// The options name two subcommands defined in other files: they are made
/// on first use (registerLLMOptions, before the command line is parsed),
/// when every subcommand exists.
struct LLMOptions {
  cl::opt<std::string> LLMProvider{
      "llm-provider",
      cl::desc("openai, anthropic, vllm, sglang, llama.cpp, ollama"),
      cl::value_desc("name"),
      cl::sub(OptimizeCommand),
      cl::sub(SynthesizeCommand),
      cl::cat(LLMCategory)};
  cl::opt<std::string> LLMModel{"llm-model",
                                cl::desc("The model, as the server "
                                         "names it"),
                                cl::value_desc("name"),
                                cl::sub(OptimizeCommand),
                                cl::sub(SynthesizeCommand),
                                cl::cat(LLMCategory)};
  cl::opt<std::string> LLMBaseURL{
      "llm-base-url",
      cl::desc("The server, without the endpoint path "
               "(http://host:8000/v1)"),
      cl::value_desc("url"),
      cl::sub(OptimizeCommand),
      cl::sub(SynthesizeCommand),
      cl::cat(LLMCategory)};
  cl::opt<bool> AllowInsecureHTTP{
      "allow-insecure-http",
      cl::desc("Allow an http:// LLM base URL to another machine (the key and "
               "the source then cross the network unencrypted)"),
      cl::sub(OptimizeCommand), cl::sub(SynthesizeCommand),
      cl::cat(LLMCategory)};
  cl::opt<bool> NoLLMCache{"no-llm-cache",
                           cl::desc("Do not read or write the LLM "
                                    "response cache"),
                           cl::sub(OptimizeCommand), cl::sub(SynthesizeCommand),
                           cl::cat(LLMCategory)};
  cl::opt<uint64_t> LLMTokenBudget{
      "llm-token-budget",
      cl::desc("Tokens the LLM may spend (input + output); "
               "once they are spent, no more is asked"),
      cl::value_desc("N"),
      cl::sub(OptimizeCommand),
      cl::sub(SynthesizeCommand),
      cl::cat(LLMCategory)};
};
} // namespace

static LLMOptions &options() {
  static LLMOptions O;
  return O;
}

void registerLLMOptions() { (void)options(); }

Expected<llm::LLMSettings> explicitLLMSettings() {
  LLMOptions &O = options();
  llm::LLMSettings S;
  if (!O.LLMModel.empty())
    S.Model = O.LLMModel;
  if (!O.LLMBaseURL.empty())
    S.BaseURL = O.LLMBaseURL;
  if (O.LLMTokenBudget.getNumOccurrences())
    S.TokenBudget = O.LLMTokenBudget;
  if (O.NoLLMCache)
    S.NoCache = true;
  if (O.AllowInsecureHTTP)
    S.AllowInsecureHTTP = true;
  if (!O.LLMProvider.empty()) {
    auto P = llm::parseProvider(O.LLMProvider);
    if (!P)
      return createStringError("--llm-provider: " + toString(P.takeError()));
    S.Prov = *P;
  }
  return S;
}

Expected<std::optional<LLMSetup>> configuredLLM(StringRef SourcePath,
                                                StringRef RequiredBy) {
  auto Explicit = explicitLLMSettings();
  if (!Explicit)
    return Explicit.takeError();
  return configureLLM(*Explicit, SourcePath, RequiredBy, verboseLog());
}
#else
void registerLLMOptions() {}
#endif

} // namespace tool
} // namespace optiml
