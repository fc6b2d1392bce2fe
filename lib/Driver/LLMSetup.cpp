//===- LLMSetup.cpp - The model a project configures ----------------------===//

#include "optiml/Driver/LLMSetup.h"
#include "optiml/LLM/ChatClient.h"
#include "optiml/LLM/HttpTransport.h"
#include "optiml/LLM/LLMConfig.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace optiml {

Expected<std::optional<LLMSetup>> configureLLM(const llm::LLMSettings &Explicit,
                                               StringRef SourcePath,
                                               StringRef RequiredBy,
                                               raw_ostream *Log) {
  bool Required = !RequiredBy.empty();
  // The project's config: next to the source or above it, up to the
  // project root; never the current directory's.
  SmallString<256> SourceDir(SourcePath);
  (void)sys::fs::make_absolute(SourceDir);
  sys::path::remove_filename(SourceDir);
  auto Project =
      llm::findProjectLLM(Explicit, SourceDir, llm::processEnvironment());
  if (!Project)
    return Project.takeError();
  if (!Required && !Project->Configured)
    return std::nullopt;
  auto Config = llm::loadLLMConfig(Explicit, Project->File);
  if (!Config)
    return createStringError(
        (Required ? RequiredBy + " needs an LLM: "
                  : "the LLM configured by " + Project->EnabledBy +
                        " cannot be used: ") +
        toString(Config.takeError()) + " (see docs/llm.md)");
  LLMSetup S;
  raw_string_ostream D(S.Description);
  D << "model '" << Config->Model << "' at " << llm::urlHost(Config->BaseURL)
    << (StringRef(Config->BaseURL).starts_with("https://") ? "" : " (http)")
    << (Config->APIKey.empty() ? ", no key" : ", key from " + Config->APIKeyEnv)
    << (Required ? ", " + RequiredBy.str()
                 : ", enabled by " + Project->EnabledBy)
    << (Project->ConfigPath ? "; config " + *Project->ConfigPath
                            : std::string());
  S.Client = std::make_unique<llm::ChatClient>(
      std::move(*Config),
      std::shared_ptr<llm::HttpTransport>(llm::createCurlTransport()));
  if (Log)
    S.Client->setLogger([Log](StringRef L) { *Log << "llm: " << L << "\n"; });
  return std::optional<LLMSetup>(std::move(S));
}

LLMSetup::LLMSetup() = default;
LLMSetup::LLMSetup(LLMSetup &&) = default;
LLMSetup::~LLMSetup() = default;
} // namespace optiml
