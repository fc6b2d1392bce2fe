//===- LLMPolicy.cpp - Edits proposed by a model, checked like any edit ---===//

#include "optiml/Search/LLMPolicy.h"
#include "optiml/Edit/EditJSON.h"
#include "optiml/Edit/Transform.h"
#include "optiml/Frontend/KernelModelOutput.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "optiml/LLM/LLMError.h"
#include "optiml/Search/Search.h"
#include "clang/Frontend/ASTUnit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

using namespace llvm;

namespace optiml {

using llm::EditAttempt;
using llm::Proposal;

Expected<Edit> proposalToEdit(const Proposal &P, const KernelModel *Model) {
  using nlohmann::json;
  // The model wrote the parameters: parse without exceptions, and write
  // text that is not UTF-8 (the code, the kind) with U+FFFD, not a throw.
  json Params = json::parse(P.ParamsJSON.empty() ? "{}" : P.ParamsJSON, nullptr,
                            /*allow_exceptions=*/false);
  if (Params.is_discarded())
    return createStringError("params: not valid JSON");
  if (!Params.is_object())
    return createStringError("params: expected an object");
  if (!P.Code.empty())
    Params["code"] = P.Code;
  json Doc = json::object();
  Doc["kind"] = P.Kind;
  Doc["target"] = P.Target;
  Doc["params"] = std::move(Params);
  std::string Text = Doc.dump(-1, ' ', false, json::error_handler_t::replace);
  Expected<Edit> E = parseEdit(Text);
  if (!E)
    return E.takeError();
  if (Model)
    if (Error Err = validateTarget(*E, *Model))
      return std::move(Err);
  return E;
}

/// The edit a refused proposal is journaled as: what could be read of its
/// summary ("kind @ target {params}").
static Edit refusedEdit(StringRef Summary, unsigned Round, unsigned Index) {
  Edit E;
  auto [Kind, Rest] = Summary.split(" @ ");
  E.Kind = Kind.trim().empty() ? "unreadable-proposal" : Kind.trim().str();
  auto [Target, Params] = Rest.split(' ');
  E.Target = Target.str();
  // Two refused proposals with the same kind and target must stay apart
  // (the search drops repeated edits).
  E.Params["proposal"] = std::string(formatv("{0}.{1}", Round, Index));
  return E;
}

static std::string programKey(StringRef Code) { return sourceKey(Code); }

static std::string rejectionKey(StringRef Code, const Edit &E) {
  return programKey(Code) + "\n" + editKey(E);
}

LLMPolicy::LLMPolicy(std::string FileName, ParseConfig Config,
                     llm::ChatClient &Client, llm::PromptLibrary Prompts,
                     LLMPolicyOptions Opts)
    : FileName(std::move(FileName)), Config(std::move(Config)), Client(Client),
      Proposer(Client, std::move(Prompts),
               [this](const Proposal &P) -> Error {
                 Expected<Edit> E = proposalToEdit(P, CurrentModel);
                 return E ? Error::success() : E.takeError();
               }),
      Opts(std::move(Opts)) {}

void LLMPolicy::warn(const Twine &Msg) {
  if (Logger)
    Logger(Client.redactor().redact(Msg.str()));
}

bool LLMPolicy::budgetSpent() const {
  if (Error E = Client.ledger().checkAvailable()) {
    consumeError(std::move(E));
    return true;
  }
  return false;
}

std::string LLMPolicy::budgetReason() const {
  const llm::TokenLedger &L = Client.ledger();
  return formatv("LLM token budget of {0} tokens spent ({1} used)", L.budget(),
                 L.used().total());
}

std::optional<std::string> LLMPolicy::rejection(StringRef Code,
                                                const Edit &E) const {
  auto It = Rejections.find(rejectionKey(Code, E));
  if (It == Rejections.end())
    return std::nullopt;
  return It->second;
}

const std::vector<EditAttempt> &LLMPolicy::history(StringRef Code) {
  return Histories[programKey(Code)];
}

static std::string catalogDescription() {
  std::string Out;
  for (const auto &T : allTransforms()) {
    StringRef Targets = T->targetKind() == TargetKind::Kernel ? "a kernel"
                        : T->targetKind() == TargetKind::Loop ? "a loop id"
                                                              : "a launch id";
    Out += "- " + T->kind().str() + " (target: " + Targets.str() +
           "): " + T->description().str() + "\n";
    for (const ParamSpec &P : T->params())
      Out += "    " + describeParam(P) + "\n";
  }
  return Out;
}

static std::string profileText(const EvalOutcome *Last) {
  if (!Last || !Last->Time.Available)
    return "";
  std::string S =
      formatv("kernel time {0:F4} ms (noise +-{1:F1}%, {2} "
              "replays)",
              Last->Time.MedianMs, Last->Time.NoisePct, Last->Time.Replays);
  for (const auto &[Name, V] : Last->Metrics)
    S += formatv("\n{0} = {1:G4}", Name, V).str();
  return S;
}

/// A tried action as the prompt shows it: "rejected: why" -> outcome
/// "rejected", detail "why".
static EditAttempt attemptOf(const TriedAction &T) {
  StringRef R = T.Result;
  for (StringRef Prefix : {"rejected", "failed"})
    if (R.consume_front(Prefix) && R.consume_front(": "))
      return {editToJSON(T.E), Prefix.str(), R.str()};
  return {editToJSON(T.E), T.Result, ""};
}

Expected<std::vector<Action>> LLMPolicy::propose(const PolicyContext &Ctx) {
  std::vector<Action> Out;
  if (budgetSpent()) {
    Spent = true;
    return Out;
  }
  auto TU = parseCuda(Ctx.Source, FileName, Config, CudaSide::Host);
  if (!TU)
    return TU.takeError();
  if (TU->errorCount())
    return createStringError("llm policy: the program state does not parse "
                             "(%u errors)",
                             TU->errorCount());
  KernelModel Full = buildKernelModel(TU->AST->getASTContext());
  Full.File = TU->FileName;
  // Kernels of this file only: Source is its text (the file the search
  // rewrites may be one the main file includes).
  KernelModel Model = modelForFile(Full, TU->FileName);

  llm::ProposalContext PC;
  std::vector<std::string> Names;
  for (const KernelInfo &K : Model.Kernels) {
    if (!Ctx.Kernels.empty()
            ? !is_contained(Ctx.Kernels, K.QualifiedName) &&
                  !is_contained(Ctx.Kernels, K.Name)
            : Full.findKernel(K.QualifiedName)->Launches.empty())
      continue;
    Names.push_back(K.QualifiedName);
    unsigned B = K.Range.Begin.Offset, E = K.Range.End.Offset;
    if (B < E && E <= Ctx.Source.size())
      PC.KernelSource += Ctx.Source.slice(B, E).str() + "\n";
  }
  if (Names.empty())
    return Out;
  PC.KernelName = join(Names, ", ");
  PC.KernelModelJSON = kernelModelToJSON(Model, 1);
  PC.LastProfile = profileText(Ctx.Last);
  if (Ctx.Last)
    PC.BottleneckVerdict =
        !Ctx.Last->Verdict.empty() ? Ctx.Last->Verdict : Ctx.Last->Bound;
  PC.CatalogDescription = catalogDescription();
  PC.GPUDescription = Opts.GPUDescription;
  PC.NumProposals = std::max(1u, Opts.NumProposals);

  // What was tried here: the search's children (evaluated, failed, rejected
  // by the rewriter), then the proposals refused before the rewriter, which
  // this policy remembers (they may not have been journaled yet).
  std::string Key = programKey(Ctx.Source);
  std::vector<EditAttempt> &Hist = Histories[Key];
  for (const TriedAction &T : Ctx.Tried)
    if (!StringRef(T.Result).starts_with("rejected: proposal: "))
      PC.History.push_back(attemptOf(T));
  PC.History.insert(PC.History.end(), Hist.begin(), Hist.end());

  CurrentModel = &Model;
  ++S.Requests;
  Expected<llm::ProposeResult> R = Proposer.propose(PC);
  CurrentModel = nullptr;
  if (!R) {
    llm::ErrorSummary Sum = llm::summarizeError(R.takeError());
    using llm::LLMErrorCode;
    if (Sum.Code == LLMErrorCode::BudgetExceeded) {
      Spent = true;
      return Out;
    }
    bool Fatal = Sum.Code == LLMErrorCode::Config ||
                 Sum.Code == LLMErrorCode::Prompt ||
                 (Sum.Code == LLMErrorCode::HttpStatus &&
                  (Sum.HttpStatus == 400 || Sum.HttpStatus == 401 ||
                   Sum.HttpStatus == 403 || Sum.HttpStatus == 404));
    if (Fatal)
      return createStringError("llm policy: " + Sum.Message);
    ++S.Failures;
    warn("llm policy: no proposals this time: " + Sum.Message);
    return Out;
  }

  // Refused proposals first, at the top prior: the search journals them at
  // the node's first expansion, for free (LLMCheckedApplier refuses them).
  unsigned Round = Hist.size();
  for (const llm::RejectedProposal &RP : R->Batch.Rejected) {
    Action A;
    A.E = refusedEdit(RP.Summary, Round, RP.Index);
    A.Prior = 1;
    A.Origin = "llm";
    A.Rationale = "refused: " + RP.Reason;
    Rejections[rejectionKey(Ctx.Source, A.E)] = RP.Reason;
    Out.push_back(std::move(A));
  }
  llm::appendRejections(R->Batch, Hist);
  S.Rejected += R->Batch.Rejected.size();

  std::vector<Action> Accepted;
  double Decay = 1;
  for (const Proposal &P : R->Batch.Accepted) {
    Expected<Edit> E = proposalToEdit(P, &Model); // checked by the validator
    if (!E) {
      consumeError(E.takeError());
      continue;
    }
    Action A;
    A.E = std::move(*E);
    A.Prior = 0.5 * Decay; // the model's order
    A.Origin = "llm";
    A.Rationale = P.Rationale;
    Accepted.push_back(std::move(A));
    Decay *= 0.8;
  }
  S.Accepted += Accepted.size();

  if (Opts.Rank && Accepted.size() > 1) {
    if (!budgetSpent()) {
      Expected<std::vector<double>> W = Proposer.rank(PC, R->Batch.Accepted);
      if (!W) {
        llm::ErrorSummary Sum = llm::summarizeError(W.takeError());
        if (Sum.Code != llm::LLMErrorCode::BudgetExceeded)
          warn("llm policy: ranking failed, keeping the model's order: " +
               Sum.Message);
      } else if (W->size() == R->Batch.Accepted.size() &&
                 W->size() == Accepted.size()) {
        // Weights sum to 1; an even ranking gives every proposal 0.5.
        for (size_t I = 0; I < Accepted.size(); ++I)
          Accepted[I].Prior =
              std::clamp((*W)[I] * Accepted.size() * 0.5, 1e-3, 1.0);
      }
    }
  }
  for (Action &A : Accepted)
    Out.push_back(std::move(A));
  return Out;
}

ApplyOutcome LLMCheckedApplier::apply(StringRef Code, const Edit &E) {
  std::optional<std::string> Why = P.rejection(Code, E);
  if (!Why)
    return Inner.apply(Code, E);
  ApplyOutcome R;
  R.Summary = "proposal " + E.Kind + " @ " + E.Target;
  CheckFailure F;
  F.Check = "proposal";
  F.Message = *Why;
  R.Failures.push_back(std::move(F));
  return R;
}

} // namespace optiml
