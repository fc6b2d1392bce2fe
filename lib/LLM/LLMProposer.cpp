//===- LLMProposer.cpp - The LLM as a source of edit proposals ------------===//

#include "optiml/LLM/LLMProposer.h"
#include "JsonInternal.h"
#include "optiml/LLM/LLMError.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace optiml {
namespace llm {

using json = nlohmann::json;

static std::string orNone(StringRef S) {
  return S.trim().empty() ? "(none)" : S.str();
}

static std::string clip(StringRef S, size_t N) {
  if (S.size() <= N)
    return S.str();
  return S.take_front(N).str() + " [... " + std::to_string(S.size() - N) +
         " more bytes]";
}

std::string formatHistory(ArrayRef<EditAttempt> History, unsigned MaxEntries) {
  if (History.empty())
    return "(no edits tried yet)";
  std::string Out;
  size_t First = History.size() > MaxEntries ? History.size() - MaxEntries : 0;
  if (First)
    Out += "(" + std::to_string(First) + " older attempts omitted)\n";
  for (size_t I = First; I < History.size(); ++I) {
    const EditAttempt &A = History[I];
    Out += std::to_string(I + 1) + ". " + clip(A.Edit, 600) +
           "\n   outcome: " + orNone(A.Outcome);
    if (!StringRef(A.Detail).trim().empty())
      Out += "\n   detail: " + clip(A.Detail, 800);
    Out += "\n";
  }
  return Out;
}

void appendRejections(const ProposalBatch &Batch,
                      std::vector<EditAttempt> &History) {
  for (const RejectedProposal &R : Batch.Rejected)
    History.push_back({R.Summary.empty() ? "(unreadable proposal)" : R.Summary,
                       "rejected", R.Reason});
}

static StringMap<std::string> contextValues(const ProposalContext &Ctx) {
  StringMap<std::string> V;
  V["kernel_name"] = Ctx.KernelName;
  V["kernel_source"] = Ctx.KernelSource;
  V["kernel_model"] = orNone(Ctx.KernelModelJSON);
  V["last_profile"] = orNone(Ctx.LastProfile);
  V["bottleneck"] = orNone(Ctx.BottleneckVerdict);
  V["history"] = formatHistory(Ctx.History);
  V["catalog"] = orNone(Ctx.CatalogDescription);
  V["gpu"] = orNone(Ctx.GPUDescription);
  V["num_proposals"] = std::to_string(std::max(1u, Ctx.NumProposals));
  return V;
}

Expected<ChatRequest>
LLMProposer::buildRequest(const ProposalContext &Ctx) const {
  StringMap<std::string> V = contextValues(Ctx);
  Expected<std::string> System = Prompts.render("propose.system", V);
  if (!System)
    return System.takeError();
  Expected<std::string> User = Prompts.render("propose.user", V);
  if (!User)
    return User.takeError();
  ChatRequest R;
  R.System = std::move(*System);
  R.Messages.push_back({Role::User, std::move(*User)});
  OutputSchema S;
  S.Name = "propose_edits";
  S.Description = "Propose edits to the CUDA kernel, each with a rationale.";
  S.SchemaJSON = proposalReplySchema().str();
  S.ValidationSchemaJSON = proposalEnvelopeSchema().str();
  R.Schema = std::move(S);
  return R;
}

Expected<ProposeResult> LLMProposer::propose(const ProposalContext &Ctx) {
  Expected<ChatRequest> Request = buildRequest(Ctx);
  if (!Request)
    return Request.takeError();
  Expected<ChatResponse> Reply = Client.complete(*Request);
  if (!Reply)
    return Reply.takeError();
  Expected<ProposalBatch> Batch =
      parseProposals(Reply->JSON, std::max(1u, Ctx.NumProposals), Validator);
  if (!Batch)
    return Batch.takeError();
  ProposeResult Result;
  Result.Batch = std::move(*Batch);
  Result.Usage = Reply->Usage;
  Result.FromCache = Reply->FromCache;
  Result.Mode = Reply->Mode;
  return Result;
}

static StringRef rankSchema() {
  return R"({
  "type": "object",
  "properties": {
    "ranking": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "index": {"type": "integer", "minimum": 0},
          "score": {"type": "number", "minimum": 0, "maximum": 1}
        },
        "required": ["index", "score"],
        "additionalProperties": false
      }
    }
  },
  "required": ["ranking"],
  "additionalProperties": false
})";
}

Expected<std::vector<double>> LLMProposer::rank(const ProposalContext &Ctx,
                                                ArrayRef<Proposal> Candidates) {
  if (Candidates.empty())
    return std::vector<double>();
  StringMap<std::string> V = contextValues(Ctx);
  std::string List;
  for (size_t I = 0; I < Candidates.size(); ++I) {
    const Proposal &P = Candidates[I];
    List += "[" + std::to_string(I) + "] " + P.Kind + " @ " + P.Target;
    if (P.ParamsJSON != "{}" && !P.ParamsJSON.empty())
      List += " params " + P.ParamsJSON;
    List += "\n";
    if (!P.Rationale.empty())
      List += "    rationale: " + clip(P.Rationale, 400) + "\n";
    if (!P.Code.empty())
      List += "    code:\n" + clip(P.Code, 4000) + "\n";
  }
  V["candidates"] = List;
  V["num_candidates"] = std::to_string(Candidates.size());
  Expected<std::string> System = Prompts.render("rank.system", V);
  if (!System)
    return System.takeError();
  Expected<std::string> User = Prompts.render("rank.user", V);
  if (!User)
    return User.takeError();
  ChatRequest R;
  R.System = std::move(*System);
  R.Messages.push_back({Role::User, std::move(*User)});
  R.Schema = OutputSchema{"rank_edits",
                          "Score each candidate edit by its expected speedup.",
                          rankSchema().str(), false, ""};
  Expected<ChatResponse> Reply = Client.complete(R);
  if (!Reply)
    return Reply.takeError();

  std::vector<std::optional<double>> Scores(Candidates.size());
  try {
    json Doc = json::parse(Reply->JSON);
    for (const json &Entry : Doc["ranking"]) {
      uint64_t Index = Entry["index"].get<uint64_t>();
      if (Index >= Candidates.size())
        return makeLLMError(LLMErrorCode::SchemaMismatch,
                            "the ranking names candidate " + Twine(Index) +
                                ", but there are only " +
                                Twine(Candidates.size()));
      Scores[Index] = Entry["score"].get<double>();
    }
  } catch (const json::exception &E) {
    return makeLLMError(LLMErrorCode::BadResponse,
                        Twine("could not read the ranking: ") + E.what());
  }
  double Lowest = 1.0;
  bool Any = false;
  for (const std::optional<double> &S : Scores)
    if (S) {
      Lowest = std::min(Lowest, *S);
      Any = true;
    }
  std::vector<double> Weights;
  double Sum = 0;
  for (const std::optional<double> &S : Scores) {
    double W = S ? *S : (Any ? Lowest / 2 : 1.0);
    Weights.push_back(W);
    Sum += W;
  }
  for (double &W : Weights)
    W = Sum > 0 ? W / Sum : 1.0 / Weights.size();
  return Weights;
}

} // namespace llm
} // namespace optiml
