//===- LLMProposer.h - The LLM as a source of edit proposals --------------===//
//
// Builds the prompt from what the search knows at a node (kernel source,
// kernel model, last profile and bottleneck verdict, edits tried and their
// outcomes), asks the model for K proposals, and parses them. Optionally
// asks the model to rank candidate proposals (the ranking becomes the
// search's prior).
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_LLM_LLMPROPOSER_H
#define OPTIML_LLM_LLMPROPOSER_H

#include "optiml/LLM/ChatClient.h"
#include "optiml/LLM/PromptTemplate.h"
#include "optiml/LLM/Proposal.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace optiml {
namespace llm {

/// One edit tried earlier at this node.
struct EditAttempt {
  /// The edit (JSON text or a one-line summary).
  std::string Edit;
  /// "rejected" (failed a check), "failed-verification", "slower",
  /// "faster", "no-change", ...
  std::string Outcome;
  /// The reason, the first difference, or the timings.
  std::string Detail;
};

struct ProposalContext {
  std::string KernelName;
  std::string KernelSource;
  std::string KernelModelJSON;
  /// Profile summary of the current best variant (text or JSON).
  std::string LastProfile;
  std::string BottleneckVerdict;
  std::vector<EditAttempt> History;
  /// The catalog kinds the model may use, with their parameters (text).
  std::string CatalogDescription;
  std::string GPUDescription;
  unsigned NumProposals = 4;
};

struct ProposeResult {
  ProposalBatch Batch;
  TokenUsage Usage;
  bool FromCache = false;
  StructuredMode Mode = StructuredMode::Text;
};

class LLMProposer {
public:
  LLMProposer(ChatClient &Client, PromptLibrary Prompts,
              ProposalValidator Validator = nullptr)
      : Client(Client), Prompts(std::move(Prompts)),
        Validator(std::move(Validator)) {}

  /// The request propose() would send; exposed for journaling and tests.
  llvm::Expected<ChatRequest> buildRequest(const ProposalContext &Ctx) const;

  llvm::Expected<ProposeResult> propose(const ProposalContext &Ctx);

  /// Asks the model to score Candidates for the kernel in Ctx; returns one
  /// weight per candidate, non-negative and summing to 1 (a PUCT prior).
  /// A candidate the model leaves out scores half the lowest score given.
  llvm::Expected<std::vector<double>> rank(const ProposalContext &Ctx,
                                           llvm::ArrayRef<Proposal> Candidates);

private:
  ChatClient &Client;
  PromptLibrary Prompts;
  ProposalValidator Validator;
};

/// Adds the proposals a batch rejected to History (outcome "rejected",
/// detail the reason), so the next prompt shows the model what went wrong.
void appendRejections(const ProposalBatch &Batch,
                      std::vector<EditAttempt> &History);

/// Renders the history for a prompt, newest last, at most MaxEntries (the
/// newest) with long details clipped.
std::string formatHistory(llvm::ArrayRef<EditAttempt> History,
                          unsigned MaxEntries = 20);

} // namespace llm
} // namespace optiml

#endif // OPTIML_LLM_LLMPROPOSER_H
