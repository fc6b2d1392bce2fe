//===- LLMPolicy.h - The LLM as a proposal policy ---------------*- C++ -*-===//
//
// LLMPolicy asks a model (through llm::LLMProposer) for K edits per
// expansion. The prompt carries the target kernels' source at the node, the
// kernel model, the node's last profile and bottleneck verdict, and the
// edits tried at the node with their outcomes. Every proposal is checked
// against the real edit schema (kind, parameters, target in the node's
// kernel model) before it becomes an action; accepted ones then go through
// the checked rewriter like any edit.
//
// Proposals the checks refuse are still handed to the search, as actions
// that LLMCheckedApplier refuses with the proposer's reason: the search
// journals them as rejected nodes (costing no evaluation), and the reasons
// go back into the next prompt (llm::appendRejections).
//
// The run's token budget (llm::TokenLedger) is a search budget: once it is
// spent the policy sends nothing more, and the first expansion that would
// have needed the model sets budgetStopped(), which the tool turns into
// SearchOptions::ShouldStop (the proposals already paid for are explored
// until then).
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SEARCH_LLMPOLICY_H
#define OPTIML_SEARCH_LLMPOLICY_H

#include "optiml/Frontend/KernelModel.h"
#include "optiml/Frontend/Parse.h"
#include "optiml/LLM/LLMProposer.h"
#include "optiml/Search/Policy.h"
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace optiml {

struct LLMPolicyOptions {
  /// Proposals asked for per expansion (K).
  unsigned NumProposals = 4;
  /// Ask the model to rank its accepted proposals; the ranking becomes the
  /// prior (otherwise the model's order, decaying).
  bool Rank = false;
  /// "NVIDIA H200 (sm_90)"; empty when unknown.
  std::string GPUDescription;
};

/// Turns a proposal into an edit as the edit library reads it (code goes to
/// params.code), checked against the edit schema; with \p Model, the target
/// must also exist there and be of the kind the transform expects.
llvm::Expected<Edit> proposalToEdit(const llm::Proposal &P,
                                    const KernelModel *Model = nullptr);

class LLMPolicy : public Policy {
public:
  LLMPolicy(std::string FileName, ParseConfig Config, llm::ChatClient &Client,
            llm::PromptLibrary Prompts, LLMPolicyOptions Opts = {});
  LLMPolicy(const LLMPolicy &) = delete; // the validator points at this
  LLMPolicy &operator=(const LLMPolicy &) = delete;

  llvm::StringRef name() const override { return "llm"; }
  /// Fails only for what asking again cannot fix (prompt templates, the
  /// configuration, HTTP 400/401/403/404, a program state that does not
  /// parse). Other failures of a request (timeouts, dropped connections,
  /// unreadable replies, after the client's retries) are reported through
  /// the logger and yield no actions.
  llvm::Expected<std::vector<Action>>
  propose(const PolicyContext &Ctx) override;
  bool canProposeMore() const override { return !budgetSpent(); }

  /// The token budget is spent: no more requests will be made.
  bool budgetSpent() const;
  /// The policy needed the model and the budget was spent: the search
  /// should stop.
  bool budgetStopped() const { return Spent; }
  /// "LLM token budget of N tokens spent (M used)".
  std::string budgetReason() const;

  /// Why a proposal was refused before it reached the rewriter, when
  /// \p E (proposed for the program \p Code) is one of those.
  std::optional<std::string> rejection(llvm::StringRef Code,
                                       const Edit &E) const;
  /// What the policy keeps telling the model about a program state.
  const std::vector<llm::EditAttempt> &history(llvm::StringRef Code);

  /// Receives warnings (a failed request, a failed ranking); one line each.
  void setLogger(std::function<void(llvm::StringRef)> L) {
    Logger = std::move(L);
  }

  /// Requests made, proposals accepted and refused so far.
  struct Stats {
    unsigned Requests = 0, Accepted = 0, Rejected = 0, Failures = 0;
  };
  Stats stats() const { return S; }

private:
  void warn(const llvm::Twine &Msg);

  std::string FileName;
  ParseConfig Config;
  llm::ChatClient &Client;
  llm::LLMProposer Proposer;
  const KernelModel *CurrentModel = nullptr;
  LLMPolicyOptions Opts;
  std::function<void(llvm::StringRef)> Logger;
  /// By program key: the rejections fed back to the model.
  std::map<std::string, std::vector<llm::EditAttempt>> Histories;
  /// By program key and edit key: the proposer's reason.
  std::map<std::string, std::string> Rejections;
  bool Spent = false;
  Stats S;
};

/// Applies edits with \p Inner, except those \p P refused as proposals:
/// these come back rejected (check "proposal") with the proposer's reason.
class LLMCheckedApplier : public EditApplier {
public:
  LLMCheckedApplier(const LLMPolicy &P, EditApplier &Inner)
      : P(P), Inner(Inner) {}
  ApplyOutcome apply(llvm::StringRef Code, const Edit &E) override;
  std::string diff(llvm::StringRef Old, llvm::StringRef New) override {
    return Inner.diff(Old, New);
  }

private:
  const LLMPolicy &P;
  EditApplier &Inner;
};

} // namespace optiml

#endif
