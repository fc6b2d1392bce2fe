//===- LLMSetup.h - The model a project configures --------------*- C++ -*-===//
//
// The resolution of the --llm-* options, the environment and the project's
// .clang-optiml.json into a client (docs/llm.md): optimize uses the model as
// a policy, synthesize as the mixture of thoughts. Only in a build with LLM
// support (OPTIML_WITH_LLM).
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_DRIVER_LLMSETUP_H
#define OPTIML_DRIVER_LLMSETUP_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <optional>
#include <string>

namespace optiml {
namespace llm {
class ChatClient;
struct LLMSettings;
} // namespace llm

/// A client for the configured model, and how it was configured, in words
/// ("model 'm' at host:port, key from OPENAI_API_KEY, enabled by ...").
struct LLMSetup {
  LLMSetup();
  LLMSetup(LLMSetup &&);
  ~LLMSetup();
  std::unique_ptr<llm::ChatClient> Client;
  std::string Description;
};

/// The model configured for \p SourcePath's project: \p Explicit (the
/// options), the environment, .clang-optiml.json from the source's
/// directory up. None when none is configured and nothing requires one; an
/// error when one is configured, or \p RequiredBy ("--policy llm") requires
/// one, but it cannot be used. The client's exchanges are logged on \p Log.
llvm::Expected<std::optional<LLMSetup>>
configureLLM(const llm::LLMSettings &Explicit, llvm::StringRef SourcePath,
             llvm::StringRef RequiredBy, llvm::raw_ostream *Log);

} // namespace optiml

#endif
