//===- ProposalTest.cpp ---------------------------------------------------===//

#include "optiml/LLM/Proposal.h"
#include "optiml/LLM/LLMError.h"
#include "optiml/LLM/StructuredOutput.h"

#include "gtest/gtest.h"

using namespace llvm;

namespace optiml {
namespace llm {
namespace {

ProposalBatch parse(StringRef Reply, unsigned K = 8,
                    const ProposalValidator &V = nullptr) {
  Expected<ProposalBatch> B = parseProposals(Reply, K, V);
  EXPECT_TRUE(bool(B)) << toString(B.takeError());
  return B ? std::move(*B) : ProposalBatch();
}

TEST(Proposal, SchemasAreValidJSONSchemas) {
  // The reply schema accepts a good reply and the envelope a sloppy one.
  StringRef Good = R"({"proposals": [{"kind": "tile-loop", "target": "k/loop0",
                       "params": {"tile": 32}, "rationale": "reuse"}]})";
  EXPECT_FALSE(bool(validateJSONSchema(Good, proposalReplySchema())));
  StringRef Sloppy = R"({"proposals": [{"kind": 3}]})";
  Error E = validateJSONSchema(Sloppy, proposalReplySchema());
  EXPECT_TRUE(bool(E));
  consumeError(std::move(E));
  EXPECT_FALSE(bool(validateJSONSchema(Sloppy, proposalEnvelopeSchema())));
}

TEST(Proposal, GoodReply) {
  ProposalBatch B = parse(R"({"proposals": [
    {"kind": "tile-loop", "target": "k/loop0", "params": {"tile": 32},
     "rationale": "  improves reuse  "},
    {"kind": "replace-function", "target": "k", "params": {},
     "code": "__global__ void k(float *a) {\n  a[threadIdx.x] = 0;\n}\n",
     "rationale": "simpler"}]})");
  ASSERT_EQ(B.Accepted.size(), 2u);
  EXPECT_TRUE(B.Rejected.empty());
  EXPECT_EQ(B.Accepted[0].Kind, "tile-loop");
  EXPECT_EQ(B.Accepted[0].ParamsJSON, R"({"tile":32})");
  EXPECT_EQ(B.Accepted[0].Rationale, "improves reuse");
  EXPECT_EQ(B.Accepted[0].toEditJSON(),
            R"({"kind":"tile-loop","params":{"tile":32},"target":"k/loop0"})");
  EXPECT_EQ(B.Accepted[0].summary(), R"(tile-loop @ k/loop0 {"tile":32})");
  EXPECT_EQ(B.Accepted[1].summary(), "replace-function @ k (4 lines of code)");
}

TEST(Proposal, OneBadProposalDoesNotLoseTheOthers) {
  ProposalBatch B = parse(R"({"proposals": [
    {"kind": "tile-loop", "target": "k/loop0", "params": {"tile": 32}, "rationale": "r"},
    {"kind": "replace-function", "target": "k", "code": "__global__ void k() {\n  if (x) {\n", "rationale": "cut off"},
    {"kind": "Unroll Loop", "target": "k/loop0", "rationale": "r"},
    {"kind": "unroll", "target": "k/loop0", "params": [4], "rationale": "r"},
    {"kind": "unroll", "target": "", "rationale": "r"},
    {"kind": "unroll", "target": "k/loop0", "rationale": "r", "confidence": 0.9},
    {"kind": "unroll", "target": "k/loop0", "code": "int x;", "rationale": "r"},
    {"kind": "replace-function", "target": "k", "rationale": "no code"},
    "not an object",
    {"kind": "unroll", "target": "k/loop0", "params": {"factor": 4}}
  ]})");
  ASSERT_EQ(B.Accepted.size(), 1u);
  EXPECT_EQ(B.Accepted[0].Kind, "tile-loop");
  ASSERT_EQ(B.Rejected.size(), 9u);
  auto ReasonOf = [&](unsigned Index) -> std::string {
    for (const RejectedProposal &R : B.Rejected)
      if (R.Index == Index)
        return R.Reason;
    return "(accepted)";
  };
  EXPECT_EQ(ReasonOf(1), "code has 2 unclosed bracket(s) (cut off?)");
  EXPECT_NE(ReasonOf(2).find("lowercase edit name"), std::string::npos);
  EXPECT_EQ(ReasonOf(3), "\"params\" must be an object");
  EXPECT_EQ(ReasonOf(4), "\"target\" is empty");
  EXPECT_EQ(ReasonOf(5), "unexpected field \"confidence\"");
  EXPECT_NE(ReasonOf(6).find("\"code\" is only for"), std::string::npos);
  EXPECT_EQ(ReasonOf(7), "replace-function needs the new function in \"code\"");
  EXPECT_EQ(ReasonOf(8), "a proposal must be a JSON object");
  EXPECT_EQ(ReasonOf(9), "missing \"rationale\"");
  EXPECT_EQ(B.Rejected[1].Summary, "Unroll Loop");
}

TEST(Proposal, MarkdownFencedCodeIsUnwrapped) {
  ProposalBatch B = parse(R"({"proposals": [
    {"kind": "replace-function", "target": "k",
     "code": "```cuda\n__global__ void k(int *a) { a[0] = 1; }\n```",
     "rationale": "r"},
    {"kind": "add-device-function", "target": "k",
     "code": "__device__ int f() { return 1; }\n```\nextra\n```", "rationale": "r"}]})");
  ASSERT_EQ(B.Accepted.size(), 1u);
  EXPECT_EQ(B.Accepted[0].Code, "__global__ void k(int *a) { a[0] = 1; }\n");
  ASSERT_EQ(B.Rejected.size(), 1u);
  EXPECT_EQ(B.Rejected[0].Reason, "code still contains a markdown fence");
}

TEST(Proposal, CodeShapeIgnoresStringsAndComments) {
  ProposalBatch B = parse(R"({"proposals": [
    {"kind": "replace-function", "target": "k",
     "code": "__global__ void k(char *s) {\n  // a } in a comment\n  /* { */ s[0] = '}';\n  printf(\"{\");\n}",
     "rationale": "r"},
    {"kind": "replace-function", "target": "k2",
     "code": "__global__ void k2() { int a[2] = {1, 2)); }", "rationale": "r"},
    {"kind": "replace-function", "target": "k3",
     "code": "no function body here", "rationale": "r"}]})");
  ASSERT_EQ(B.Accepted.size(), 1u);
  ASSERT_EQ(B.Rejected.size(), 2u);
  EXPECT_EQ(B.Rejected[0].Reason, "code has an unmatched ')' on line 1");
  EXPECT_EQ(B.Rejected[1].Reason, "code has no function body");
}

TEST(Proposal, DuplicatesAndLimit) {
  ProposalBatch B = parse(R"({"proposals": [
    {"kind": "unroll", "target": "k/loop0", "params": {"factor": 4}, "rationale": "a"},
    {"kind": "unroll", "target": "k/loop0", "params": {"factor": 4}, "rationale": "b"},
    {"kind": "unroll", "target": "k/loop0", "params": {"factor": 8}, "rationale": "c"},
    {"kind": "unroll", "target": "k/loop0", "params": {"factor": 16}, "rationale": "d"}]})",
                          /*K=*/2);
  ASSERT_EQ(B.Accepted.size(), 2u);
  ASSERT_EQ(B.Rejected.size(), 2u);
  EXPECT_EQ(B.Rejected[0].Reason, "duplicate of an earlier proposal");
  EXPECT_EQ(B.Rejected[1].Reason, "beyond the 2 proposals asked for");
}

TEST(Proposal, ValidatorPlugsIn) {
  ProposalValidator V = [](const Proposal &P) -> Error {
    if (P.Kind != "unroll" && P.Kind != "replace-function")
      return createStringError("unknown edit kind '" + P.Kind +
                               "'; see docs/edits.md");
    return Error::success();
  };
  ProposalBatch B = parse(R"({"proposals": [
    {"kind": "unroll", "target": "k/loop0", "params": {"factor": 4}, "rationale": "a"},
    {"kind": "vectorize-everything", "target": "k", "rationale": "b"}]})",
                          8, V);
  ASSERT_EQ(B.Accepted.size(), 1u);
  ASSERT_EQ(B.Rejected.size(), 1u);
  EXPECT_EQ(B.Rejected[0].Index, 1u);
  EXPECT_EQ(B.Rejected[0].Reason,
            "unknown edit kind 'vectorize-everything'; see docs/edits.md");
}

TEST(Proposal, WholeReplyErrors) {
  for (StringRef Bad :
       {R"({"edits": []})", R"([{"kind": "x"}])",
        R"({"proposals": {"kind": "x"}})", "{\"proposals\": ["}) {
    Expected<ProposalBatch> B = parseProposals(Bad, 4);
    EXPECT_FALSE(bool(B)) << Bad.str();
    if (!B)
      consumeError(B.takeError());
  }
}

} // namespace
} // namespace llm
} // namespace optiml
