//===- LLMPolicyTest.cpp - The LLM policy against the scripted server -----===//
//
// The model is test/Inputs/llm/server.py serving scripted replies; the edits
// go through the real edit schema and the checked rewriter on a hermetic
// CUDA input (the mock header).

#include "TestServer.h"

#include "optiml/Frontend/CudaToolchain.h"
#include "optiml/Report/Report.h"
#include "optiml/Search/CatalogPolicy.h"
#include "optiml/Search/Journal.h"
#include "optiml/Search/LLMPolicy.h"
#include "optiml/Search/Search.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

using namespace llvm;

namespace optiml {
namespace {

using llm::ChatClient;
using llm::PromptLibrary;
using llm::Provider;
using nlohmann::json;

const char *const Program = R"(#include "cuda_mock.h"

__global__ void scale(int n, float a, float *x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = a * x[i];
}

int main() {
  const int n = 1 << 20;
  float *x;
  cudaMalloc(&x, n * sizeof(float));
  scale<<<(n + 255) / 256, 256>>>(n, 2.0f, x);
  cudaDeviceSynchronize();
  return 0;
}
)";

/// Five proposals: two good ones, a kind the catalog lacks, a target the
/// program lacks, and a function that does not type-check.
const char *const Reply = R"({"steps": [{"reply": {"json": {"proposals": [
  {"kind": "vectorize", "target": "scale", "params": {"width": 4},
   "rationale": "memory-bound map: wider loads"},
  {"kind": "replace-function", "target": "scale", "params": {},
   "code": "__global__ void scale(int n, float a, float *x) {\n  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n    x[i] = a * x[i];\n}",
   "rationale": "grid-stride loop"},
  {"kind": "fuse-everything", "target": "scale", "params": {},
   "rationale": "?"},
  {"kind": "vectorize", "target": "nope", "params": {"width": 4},
   "rationale": "wrong kernel"},
  {"kind": "replace-function", "target": "scale", "params": {},
   "code": "__global__ void scale(int n, float a, float *x) {\n  x[i] = a * y;\n}",
   "rationale": "broken"}
]}, "usage": [1200, 300]}}]})";

class LLMPolicyTest : public llm::ServerTest {
protected:
  void SetUp() override {
    ServerTest::SetUp();
    Expected<PromptLibrary> L = PromptLibrary::load(OPTIML_TEST_PROMPTS_DIR);
    ASSERT_TRUE(bool(L)) << toString(L.takeError());
    Prompts = std::move(*L);
    ToolchainOptions O;
    O.ResourceDir = OPTIML_TEST_RESOURCE_DIR;
    if (auto T = discoverToolchain(O)) {
      Config.Tools = *T;
    } else {
      consumeError(T.takeError());
      Config.Tools.CudaPath = "/usr/local/cuda";
      Config.Tools.GpuArch = "sm_90";
      Config.Tools.ResourceDir = OPTIML_TEST_RESOURCE_DIR;
    }
    Config.ExtraArgs = {"-nocudainc", "-nocudalib",
                        std::string("-I") + OPTIML_TEST_INPUTS};
    FileName = std::string(OPTIML_TEST_INPUTS) + "/llm-policy-unit.cu";
  }

  LLMPolicy policy(ChatClient &C, LLMPolicyOptions O = {}) {
    O.NumProposals = 5;
    return LLMPolicy(FileName, Config, C, Prompts, O);
  }

  PolicyContext context() const {
    PolicyContext Ctx;
    Ctx.FileName = FileName;
    Ctx.Source = Program;
    return Ctx;
  }

  static const Action *find(const std::vector<Action> &As, StringRef Kind,
                            StringRef Target) {
    for (const Action &A : As)
      if (A.E.Kind == Kind && A.E.Target == Target &&
          !StringRef(A.Rationale).starts_with("refused: "))
        return &A;
    return nullptr;
  }

  /// The prompt of the request the server saw at \p Index.
  std::string prompt(unsigned Index) {
    Expected<json> St = Server->stats();
    if (!St) {
      ADD_FAILURE() << toString(St.takeError());
      return "";
    }
    auto Reqs = St->find("requests");
    if (Reqs == St->end() || !Reqs->is_array() || Reqs->size() <= Index)
      return "";
    return (*Reqs)[Index].dump(-1, ' ', false, json::error_handler_t::replace);
  }

  PromptLibrary Prompts;
  ParseConfig Config;
  std::string FileName;
};

TEST_F(LLMPolicyTest, ProposalsCheckedAppliedAndRejectedWithReasons) {
  script(Reply);
  ChatClient Client(config(Provider::OpenAI), Transport);
  LLMPolicy P = policy(Client);
  auto Acts = P.propose(context());
  ASSERT_TRUE(bool(Acts)) << toString(Acts.takeError());
  EXPECT_EQ(count(), 1u);

  // Refused proposals come first, with the proposer's reason.
  std::vector<std::string> Refused;
  for (const Action &A : *Acts)
    if (StringRef(A.Rationale).starts_with("refused: "))
      Refused.push_back(A.Rationale);
  ASSERT_EQ(Refused.size(), 2u);
  EXPECT_NE(Refused[0].find("unknown edit kind 'fuse-everything'"),
            std::string::npos)
      << Refused[0];
  EXPECT_NE(Refused[1].find("no kernel named 'nope'"), std::string::npos)
      << Refused[1];
  EXPECT_EQ(P.stats().Rejected, 2u);
  EXPECT_EQ(P.stats().Accepted, 3u);

  RewriterApplier Real(FileName, Config);
  LLMCheckedApplier App(P, Real);
  // A refused proposal is refused again by the applier: the search records
  // it as a rejected node with check "proposal".
  const Action &First = Acts->front();
  ApplyOutcome R0 = App.apply(Program, First.E);
  EXPECT_FALSE(R0.Applied);
  ASSERT_EQ(R0.Failures.size(), 1u);
  EXPECT_EQ(R0.Failures[0].Check, "proposal");
  EXPECT_NE(R0.reason().find("unknown edit kind 'fuse-everything'"),
            std::string::npos);

  // The catalog edit is applied through the checked rewriter.
  const Action *Vec = find(*Acts, "vectorize", "scale");
  ASSERT_NE(Vec, nullptr);
  EXPECT_EQ(Vec->Origin, "llm");
  EXPECT_EQ(Vec->Rationale, "memory-bound map: wider loads");
  ApplyOutcome R1 = App.apply(Program, Vec->E);
  EXPECT_TRUE(R1.Applied) << R1.reason();

  // Both replace-function proposals pass the schema; the rewriter applies
  // the good one and rejects the one that does not type-check.
  unsigned Applied = 0, Rejected = 0;
  for (const Action &A : *Acts) {
    if (A.E.Kind != "replace-function")
      continue;
    ApplyOutcome R = App.apply(Program, A.E);
    if (R.Applied) {
      ++Applied;
      EXPECT_NE(R.NewCode.find("i += gridDim.x * blockDim.x"),
                std::string::npos);
    } else {
      ++Rejected;
      ASSERT_FALSE(R.Failures.empty()) << R.reason();
      EXPECT_NE(R.Failures[0].Check, "proposal");
      EXPECT_NE(R.reason().find("'i'"), std::string::npos) << R.reason();
    }
  }
  EXPECT_EQ(Applied, 1u);
  EXPECT_EQ(Rejected, 1u);
}

TEST_F(LLMPolicyTest, RejectionsAreFedBackIntoTheNextPrompt) {
  script(R"({"steps": [{"reply": {"json": {"proposals": [
    {"kind": "fuse-everything", "target": "scale", "params": {},
     "rationale": "?"}]}}},
    {"reply": {"json": {"proposals": []}}}]})");
  ChatClient Client(config(Provider::OpenAI), Transport);
  LLMPolicy P = policy(Client);
  PolicyContext Ctx = context();
  auto A1 = P.propose(Ctx);
  ASSERT_TRUE(bool(A1)) << toString(A1.takeError());
  ASSERT_EQ(P.history(Program).size(), 1u);
  EXPECT_EQ(P.history(Program)[0].Outcome, "rejected");
  EXPECT_EQ(prompt(0).find("fuse-everything @ scale"), std::string::npos);

  // The search tells the policy what the rewriter and evaluator said too.
  Edit Tried;
  Tried.Kind = "unroll";
  Tried.Target = "scale/loop0";
  TriedAction T{Tried, "failed: y[17]: 3.5 vs 3.25"};
  Ctx.Tried = ArrayRef<TriedAction>(T);
  auto A2 = P.propose(Ctx);
  ASSERT_TRUE(bool(A2)) << toString(A2.takeError());
  EXPECT_TRUE(A2->empty());
  std::string Second = prompt(1);
  EXPECT_NE(Second.find("fuse-everything @ scale"), std::string::npos);
  EXPECT_NE(Second.find("unknown edit kind 'fuse-everything'"),
            std::string::npos);
  EXPECT_NE(Second.find("y[17]: 3.5 vs 3.25"), std::string::npos);
}

TEST_F(LLMPolicyTest, TokenBudgetStopsTheSearchAndRefusalsAreJournaled) {
  script(Reply);
  llm::LLMConfig C = config(Provider::OpenAI);
  C.TokenBudget = 1000; // the first reply spends 1500
  ChatClient Client(C, Transport);
  LLMPolicy P = policy(Client);
  RewriterApplier Real(FileName, Config);
  LLMCheckedApplier App(P, Real);
  StandInEvaluator Eval;
  Eval.setOriginal(Program, StandInEvaluator::passing(1.0));
  Eval.setFallback([](StringRef) {
    return StandInEvaluator::Script{StandInEvaluator::passing(1.0),
                                    std::nullopt, true};
  });

  SmallString<128> RunDir(TempDir);
  sys::path::append(RunDir, "run");
  SearchOptions O;
  O.FileName = FileName;
  O.Budget = 20;
  O.RunDir = std::string(RunDir);
  O.Finalize = false;
  O.Strat = Strategy::Greedy;
  O.ShouldStop = [&P] { return P.budgetStopped(); };
  auto R = runSearch(Program, O, P, App, Eval);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(count(), 1u) << "no request may be sent once the budget is spent";
  EXPECT_TRUE(P.budgetSpent());
  EXPECT_TRUE(P.budgetStopped());
  EXPECT_EQ(R->StopReason, "stopped");
  EXPECT_LT(R->Evaluations, 20u);
  EXPECT_NE(P.budgetReason().find("1000 tokens"), std::string::npos);

  // The refusals are journaled as rejected nodes with the reason.
  auto J = readJournal(O.RunDir);
  ASSERT_TRUE(bool(J)) << toString(J.takeError());
  unsigned Refused = 0, Evaluated = 0;
  for (const SearchNode &N : J->Nodes) {
    if (N.Status == NodeStatus::Rejected && !N.Checks.empty() &&
        N.Checks[0].Check == "proposal") {
      ++Refused;
      EXPECT_EQ(N.Origin, "llm");
      EXPECT_TRUE(
          N.RejectReason.find("unknown edit kind") != std::string::npos ||
          N.RejectReason.find("no kernel named 'nope'") != std::string::npos)
          << N.RejectReason;
    }
    if (N.Status == NodeStatus::Evaluated)
      ++Evaluated;
  }
  EXPECT_EQ(Refused, 2u);
  EXPECT_GE(Evaluated, 1u);
}

// Finding 3(a): a key the server echoes (in a rationale, in code, in a
// refused proposal's kind and its reason) reached journal.jsonl, the
// sources the journal keeps, the HTML report and the next prompt.
TEST_F(LLMPolicyTest, EchoedKeyReachesNoJournalReportOrPrompt) {
  const std::string Key = "local-canary-5151-6262-key"; // not key-shaped
  std::string Code = "__global__ void scale(int n, float a, float *x) {\n"
                     "  // " +
                     Key +
                     "\n"
                     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                     "  if (i < n)\n    x[i] = a * x[i];\n}";
  json Vectorize = {{"kind", "vectorize"},
                    {"target", "scale"},
                    {"params", {{"width", 4}}},
                    {"rationale", "your key is " + Key}};
  json Replace = {{"kind", "replace-function"},
                  {"target", "scale"},
                  {"params", json::object()},
                  {"code", Code},
                  {"rationale", "same, commented"}};
  json Unknown = {{"kind", Key},
                  {"target", "scale"},
                  {"params", json::object()},
                  {"rationale", Key}};
  json Reply = json::object();
  Reply["json"]["proposals"] = json::array({Vectorize, Replace, Unknown});
  Reply["usage"] = json::array({100, 50});
  json S = json::object();
  S["default"]["reply"] = std::move(Reply);
  script(S.dump());
  llm::LLMConfig C = config(Provider::OpenAI);
  C.APIKey = Key;
  ChatClient Client(C, Transport);
  LLMPolicy P = policy(Client);
  RewriterApplier Real(FileName, Config);
  LLMCheckedApplier App(P, Real);
  StandInEvaluator Eval;
  Eval.setOriginal(Program, StandInEvaluator::passing(2.0));
  Eval.setFallback([](StringRef) {
    return StandInEvaluator::Script{StandInEvaluator::passing(1.0),
                                    std::nullopt, true};
  });
  SmallString<128> RunDir(TempDir);
  sys::path::append(RunDir, "run");
  SearchOptions O;
  O.FileName = FileName;
  O.Budget = 4;
  O.RunDir = std::string(RunDir);
  O.Finalize = false;
  O.Strat = Strategy::Greedy;
  auto R = runSearch(Program, O, P, App, Eval);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_GE(count(), 2u) << "a second prompt carries the history";

  // Every file of the run directory.
  std::error_code EC;
  unsigned Files = 0;
  for (sys::fs::recursive_directory_iterator It(O.RunDir, EC), End;
       It != End && !EC; It.increment(EC)) {
    auto B = MemoryBuffer::getFile(It->path());
    if (!B)
      continue;
    ++Files;
    EXPECT_EQ((*B)->getBuffer().find("5151-6262"), StringRef::npos)
        << It->path();
  }
  EXPECT_GE(Files, 2u);
  auto J = readJournal(O.RunDir);
  ASSERT_TRUE(bool(J)) << toString(J.takeError());
  bool SawMask = false;
  for (const SearchNode &N : J->Nodes)
    SawMask |= StringRef(N.RejectReason + N.Rationale).contains("[REDACTED]");
  EXPECT_TRUE(SawMask);
  std::string Html = renderHtmlReport(
      *R, ReportInfo{FileName, "cmd", "greedy", "llm", "stand-in"});
  EXPECT_EQ(Html.find("5151-6262"), std::string::npos);
  // The prompts fed back (the request's body: its headers carry the key).
  for (unsigned I = 1; I < count(); ++I) {
    std::string Req = prompt(I);
    StringRef Body = StringRef(Req).split("\"headers\":").first;
    EXPECT_NE(Body.find("\"messages\""), StringRef::npos);
    EXPECT_EQ(Body.find("5151-6262"), StringRef::npos) << Body.str();
  }
}

TEST_F(LLMPolicyTest, SpentBudgetSendsNothing) {
  script(Reply);
  llm::LLMConfig C = config(Provider::OpenAI);
  C.TokenBudget = 1000;
  auto Ledger = std::make_shared<llm::TokenLedger>(1000);
  Ledger->record({900, 200});
  ChatClient Client(C, Transport, Ledger);
  LLMPolicy P = policy(Client);
  EXPECT_TRUE(P.budgetSpent());
  EXPECT_FALSE(P.budgetStopped());
  EXPECT_FALSE(P.canProposeMore());
  auto Acts = P.propose(context());
  ASSERT_TRUE(bool(Acts)) << toString(Acts.takeError());
  EXPECT_TRUE(Acts->empty());
  EXPECT_TRUE(P.budgetStopped());
  EXPECT_EQ(count(), 0u);
}

TEST(ProposalToEdit, CodeGoesToParamsAndTargetsAreChecked) {
  llm::Proposal P;
  P.Kind = "replace-function";
  P.Target = "k";
  P.Code = "__global__ void k() {}";
  auto E = proposalToEdit(P);
  ASSERT_TRUE(bool(E)) << toString(E.takeError());
  EXPECT_EQ(E->getString("code").value_or(""), P.Code);
  P.Kind = "vectorize";
  P.Code.clear();
  P.ParamsJSON = R"({"width": "four"})";
  auto Bad = proposalToEdit(P);
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(toString(Bad.takeError()).find("params.width"), std::string::npos);
}

// The model writes the parameters and the code: text that is not JSON or
// not UTF-8 is refused or repaired, never thrown out of proposalToEdit.
TEST(ProposalToEdit, HostileTextIsAnErrorNotAThrow) {
  llm::Proposal P;
  P.Kind = "vectorize";
  P.Target = "k";
  P.ParamsJSON = R"({"width": )";
  auto Cut = proposalToEdit(P);
  ASSERT_FALSE(bool(Cut));
  EXPECT_NE(toString(Cut.takeError()).find("params"), std::string::npos);
  P.ParamsJSON = "[4]";
  auto NotObject = proposalToEdit(P);
  ASSERT_FALSE(bool(NotObject));
  EXPECT_NE(toString(NotObject.takeError()).find("expected an object"),
            std::string::npos);
  P.ParamsJSON = "{\"width\": \"\xff\"}";
  auto BadBytes = proposalToEdit(P);
  ASSERT_FALSE(bool(BadBytes));
  consumeError(BadBytes.takeError());
  P.Kind = "replace-function";
  P.ParamsJSON = "{}";
  P.Code = "__global__ void k() { /* caf\xe9 */ }";
  auto Latin1 = proposalToEdit(P);
  ASSERT_TRUE(bool(Latin1)) << toString(Latin1.takeError());
  EXPECT_EQ(Latin1->getString("code").value_or(""),
            "__global__ void k() { /* caf\xef\xbf\xbd */ }");
}

} // namespace
} // namespace optiml
