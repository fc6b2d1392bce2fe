//===- LLMProposerTest.cpp - The policy end to end against the server -----===//

#include "TestServer.h"

#include "optiml/LLM/LLMError.h"
#include "optiml/LLM/LLMProposer.h"

#include "gtest/gtest.h"

using namespace llvm;

namespace optiml {
namespace llm {
namespace {

class LLMProposerTest : public ServerTest {
protected:
  void SetUp() override {
    ServerTest::SetUp();
    Expected<PromptLibrary> L = PromptLibrary::load(OPTIML_TEST_PROMPTS_DIR);
    ASSERT_TRUE(bool(L)) << toString(L.takeError());
    Prompts = std::move(*L);
  }

  ProposalContext context() const {
    ProposalContext Ctx;
    Ctx.KernelName = "saxpy";
    Ctx.KernelSource =
        "__global__ void saxpy(int n, float a, const float *x, float *y) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) y[i] = a * x[i] + y[i];\n}\n";
    Ctx.KernelModelJSON = R"({"kernels": [{"name": "saxpy"}]})";
    Ctx.LastProfile = "time 1.20 ms; dram throughput 91%";
    Ctx.BottleneckVerdict = "memory-bound (DRAM)";
    Ctx.History = {{R"({"kind":"unroll","target":"saxpy/loop0"})", "rejected",
                    "saxpy has no loop"},
                   {"replace-function @ saxpy", "failed-verification",
                    "y[17]: 3.5 vs 3.25"}};
    Ctx.CatalogDescription = "unroll(factor), vectorize-loads(width)";
    Ctx.GPUDescription = "H200 (sm_90)";
    Ctx.NumProposals = 3;
    return Ctx;
  }

  PromptLibrary Prompts;
};

const char *const GoodReply = R"({"steps": [{"reply": {"json": {"proposals": [
  {"kind": "vectorize-loads", "target": "saxpy", "params": {"width": 4},
   "rationale": "memory-bound: wider loads cut transactions"},
  {"kind": "replace-function", "target": "saxpy", "params": {},
   "code": "```cuda\n__global__ void saxpy(int n, float a, const float *x, float *y) {\n  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n    y[i] = a * x[i] + y[i];\n}\n```",
   "rationale": "grid-stride loop"},
  {"kind": "replace-function", "target": "saxpy", "params": {},
   "code": "__global__ void saxpy(int n, float a, const float *x, float *y) {\n  int i = threadIdx.x;\n",
   "rationale": "cut off"},
  {"kind": "fuse-everything", "target": "saxpy", "params": {}, "rationale": "?"}
]}, "usage": [1200, 300]}}]})";

ProposalValidator catalogValidator() {
  return [](const Proposal &P) -> Error {
    if (P.Kind == "replace-function" || P.Kind == "vectorize-loads" ||
        P.Kind == "unroll")
      return Error::success();
    return createStringError("unknown edit kind '" + P.Kind + "'");
  };
}

TEST_F(LLMProposerTest, ProposalsParsedCheckedAndRejectedWithReasons) {
  script(GoodReply);
  ChatClient Client(config(Provider::OpenAI), Transport);
  LLMProposer Proposer(Client, Prompts, catalogValidator());
  Expected<ProposeResult> R = Proposer.propose(context());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_EQ(R->Batch.Accepted.size(), 2u);
  EXPECT_EQ(R->Batch.Accepted[0].Kind, "vectorize-loads");
  EXPECT_EQ(R->Batch.Accepted[1].Kind, "replace-function");
  EXPECT_EQ(StringRef(R->Batch.Accepted[1].Code).find("```"), StringRef::npos);
  ASSERT_EQ(R->Batch.Rejected.size(), 2u);
  EXPECT_EQ(R->Batch.Rejected[0].Index, 2u);
  EXPECT_EQ(R->Batch.Rejected[0].Reason,
            "code has 1 unclosed bracket(s) (cut off?)");
  EXPECT_EQ(R->Batch.Rejected[1].Reason, "unknown edit kind 'fuse-everything'");
  EXPECT_EQ(R->Usage.total(), 1500u);

  // Rejections go back into the next prompt.
  ProposalContext Next = context();
  appendRejections(R->Batch, Next.History);
  ASSERT_EQ(Next.History.size(), 4u);
  EXPECT_EQ(Next.History[3].Edit, "fuse-everything @ saxpy");
  EXPECT_EQ(Next.History[3].Outcome, "rejected");
  EXPECT_EQ(Next.History[3].Detail, "unknown edit kind 'fuse-everything'");

  // What was sent: the kernel, the model, the profile, the verdict, the
  // history with its reasons, and the reply schema.
  using nlohmann::json;
  Expected<json> Stats = Server->stats();
  ASSERT_TRUE(bool(Stats)) << toString(Stats.takeError());
  auto Reqs = Stats->find("requests");
  ASSERT_TRUE(Reqs != Stats->end() && Reqs->is_array() && !Reqs->empty());
  json Body = Reqs->back().value("body", json::object());
  auto Text = [&](const char *Path) {
    json::json_pointer P(Path);
    return Body.contains(P) && Body.at(P).is_string()
               ? Body.at(P).get<std::string>()
               : std::string();
  };
  ASSERT_EQ(Body.value("messages", json::array()).size(), 2u);
  std::string SystemText = Text("/messages/0/content");
  std::string UserText = Text("/messages/1/content");
  StringRef System = SystemText, User = UserText;
  EXPECT_TRUE(System.contains("vectorize-loads(width)"));
  EXPECT_TRUE(System.contains("H200 (sm_90)"));
  EXPECT_TRUE(User.contains("Propose 3 different edits"));
  EXPECT_TRUE(User.contains("y[i] = a * x[i] + y[i];"));
  EXPECT_TRUE(User.contains(R"({"kernels": [{"name": "saxpy"}]})"));
  EXPECT_TRUE(User.contains("dram throughput 91%"));
  EXPECT_TRUE(User.contains("memory-bound (DRAM)"));
  EXPECT_TRUE(User.contains("outcome: rejected\n   detail: saxpy has no loop"));
  EXPECT_TRUE(User.contains("y[17]: 3.5 vs 3.25"));
  EXPECT_FALSE(User.contains("{{")) << "every placeholder was filled";
  EXPECT_EQ(Text("/response_format/json_schema/name"), "propose_edits");
}

TEST_F(LLMProposerTest, AnthropicAndFencedTextReplies) {
  // An Anthropic model that answers in prose instead of calling the tool.
  script(
      R"({"steps": [{"reply": {"text": "Here are my proposals:\n```json\n{\"proposals\": [{\"kind\": \"unroll\", \"target\": \"saxpy/loop0\", \"params\": {\"factor\": 4}, \"rationale\": \"ilp\"}]}\n```"}}]})");
  ChatClient Client(config(Provider::Anthropic), Transport);
  LLMProposer Proposer(Client, Prompts, catalogValidator());
  Expected<ProposeResult> R = Proposer.propose(context());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_EQ(R->Batch.Accepted.size(), 1u);
  EXPECT_EQ(R->Batch.Accepted[0].ParamsJSON, R"({"factor":4})");
  EXPECT_EQ(R->Mode, StructuredMode::Text);
}

TEST_F(LLMProposerTest, WrongShapeAndTruncationFailTheCall) {
  script(R"({"steps": [{"reply": {"json": {"edits": []}}},
                       {"reply": {"json_raw": "{\"proposals\": [{\"kind\": \"unr", "finish": "length"}}]})");
  ChatClient Client(config(Provider::OpenAI), Transport);
  LLMProposer Proposer(Client, Prompts);
  Expected<ProposeResult> R = Proposer.propose(context());
  ASSERT_FALSE(bool(R));
  ErrorSummary E = summarizeError(R.takeError());
  EXPECT_EQ(E.Code, LLMErrorCode::SchemaMismatch) << E.Message;
  EXPECT_NE(E.Message.find("\"proposals\""), std::string::npos) << E.Message;
  R = Proposer.propose(context());
  ASSERT_FALSE(bool(R));
  E = summarizeError(R.takeError());
  EXPECT_EQ(E.Code, LLMErrorCode::Truncated) << E.Message;
}

TEST_F(LLMProposerTest, RetriesAndBudgetsApplyToThePolicy) {
  script(
      R"({"steps": [{"status": 429, "headers": {"retry-after-ms": "50"}, "body": "{}"},
                       {"drop": true}], "default": {"reply": {"json": {"proposals": [
      {"kind": "unroll", "target": "saxpy/loop0", "params": {"factor": 2}, "rationale": "r"}]},
      "usage": [900, 200]}}})");
  LLMConfig C = config(Provider::OpenAI);
  C.TokenBudget = 1000;
  ChatClient Client(C, Transport);
  LLMProposer Proposer(Client, Prompts, catalogValidator());
  Expected<ProposeResult> R = Proposer.propose(context());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Batch.Accepted.size(), 1u);
  EXPECT_EQ(count(), 3u);
  ProposalContext Next = context();
  Next.History.push_back(
      {R->Batch.Accepted[0].toEditJSON(), "slower", "1.31 ms vs 1.20 ms"});
  Expected<ProposeResult> Again = Proposer.propose(Next);
  ASSERT_FALSE(bool(Again));
  EXPECT_EQ(summarizeError(Again.takeError()).Code,
            LLMErrorCode::BudgetExceeded);
  EXPECT_EQ(count(), 3u);
}

TEST_F(LLMProposerTest, RankGivesANormalizedPrior) {
  script(R"({"steps": [{"reply": {"json": {"ranking": [
      {"index": 1, "score": 0.8}, {"index": 0, "score": 0.2}]}}}]})");
  ChatClient Client(config(Provider::Anthropic), Transport);
  LLMProposer Proposer(Client, Prompts);
  std::vector<Proposal> Candidates(3);
  Candidates[0].Kind = "unroll";
  Candidates[0].Target = "saxpy/loop0";
  Candidates[1].Kind = "vectorize-loads";
  Candidates[1].Target = "saxpy";
  Candidates[2].Kind = "replace-function";
  Candidates[2].Target = "saxpy";
  Candidates[2].Code = "__global__ void saxpy() {}";
  Expected<std::vector<double>> W = Proposer.rank(context(), Candidates);
  ASSERT_TRUE(bool(W)) << toString(W.takeError());
  ASSERT_EQ(W->size(), 3u);
  // 0.2, 0.8 and half the lowest (0.1) for the one left out, normalized.
  EXPECT_NEAR((*W)[0], 0.2 / 1.1, 1e-9);
  EXPECT_NEAR((*W)[1], 0.8 / 1.1, 1e-9);
  EXPECT_NEAR((*W)[2], 0.1 / 1.1, 1e-9);

  script(
      R"({"steps": [{"reply": {"json": {"ranking": [{"index": 7, "score": 0.5}]}}}]})");
  Expected<std::vector<double>> Bad = Proposer.rank(context(), Candidates);
  ASSERT_FALSE(bool(Bad));
  EXPECT_EQ(summarizeError(Bad.takeError()).Code, LLMErrorCode::SchemaMismatch);
}

TEST(FormatHistory, ClipsAndKeepsTheNewest) {
  std::vector<EditAttempt> H;
  for (int I = 0; I < 25; ++I)
    H.push_back({"edit" + std::to_string(I), "slower", std::string(2000, 'd')});
  std::string Out = formatHistory(H, 20);
  EXPECT_NE(Out.find("(5 older attempts omitted)"), std::string::npos);
  EXPECT_EQ(Out.find("edit4\n"), std::string::npos);
  EXPECT_NE(Out.find("edit24"), std::string::npos);
  EXPECT_NE(Out.find("[... 1200 more bytes]"), std::string::npos);
  EXPECT_EQ(formatHistory({}), "(no edits tried yet)");
}

} // namespace
} // namespace llm
} // namespace optiml
