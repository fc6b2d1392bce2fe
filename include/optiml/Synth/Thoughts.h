//===- Thoughts.h - The mixture of thoughts: a model's programs -*- C++ -*-===//
//
// With an LLM configured, synthesize asks it first for K strategies
// ("thoughts": one thread per output, a warp per row with shuffles, shared
// tiles...), then for one program per strategy, written as the GPU's part
// of the harness every synthesized program shares (KernelCode: kernels and
// launch statements; the harness draws the inputs, runs the reference and
// checks). A candidate that fails is given the checks', the compiler's or
// the verifier's words once and asked for a corrected program.
//
// Prompts: prompts/synthesize.*.md (docs/llm.md). The replies are JSON
// checked against schemas; a reply that does not fit becomes a candidate
// with a Problem, reported like any other failure.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_SYNTH_THOUGHTS_H
#define OPTIML_SYNTH_THOUGHTS_H

#include "optiml/LLM/ChatClient.h"
#include "optiml/LLM/PromptTemplate.h"
#include "optiml/Synth/Synthesize.h"
#include <functional>

namespace optiml {
namespace synth {

struct ThoughtsOptions {
  /// Strategies asked for (K).
  unsigned Thoughts = 3;
  /// "NVIDIA H200 (sm_90)", for the prompts; empty: unknown.
  std::string GPUDescription;
  /// One line per model call ("strategies: 3 received") (may be empty).
  std::function<void(llvm::StringRef)> Log;
};

/// A strategy in the model's words.
struct Thought {
  std::string Name, Idea;
};

/// The spec as the prompts show it: the request, the class, the tensors
/// with their shapes and sizes, the reference, the names the launch
/// statements may use.
std::string describeSpecForModel(const Spec &S);

/// The strategies of a reply ({"strategies": [{"name", "idea"}]}); names
/// and ideas clipped and made one line, empty or repeated names dropped, at
/// most \p Max kept.
llvm::Expected<std::vector<Thought>> parseThoughts(llvm::StringRef JSON,
                                                   unsigned Max);

/// The program of a reply ({"kernels", "launch", "notes"}) as KernelCode,
/// its title naming \p T.
llvm::Expected<KernelCode> parseProgramReply(llvm::StringRef JSON,
                                             const Spec &S, const Thought &T);

std::unique_ptr<Proposer> createThoughtsProposer(llm::ChatClient &Client,
                                                 llm::PromptLibrary Prompts,
                                                 ThoughtsOptions Opts);

} // namespace synth
} // namespace optiml

#endif
