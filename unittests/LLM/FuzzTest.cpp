//===- FuzzTest.cpp - Malformed documents never abort ---------------------===//
//
// nlohmann/json throws on bad input, and with LLVM's flags an escaped
// exception aborts. Feed every JSON entry point mutations of valid
// documents and check that each returns (a value or an Error).
//
//===----------------------------------------------------------------------===//

#include "optiml/LLM/LLMConfig.h"
#include "optiml/LLM/Proposal.h"
#include "optiml/LLM/StructuredOutput.h"

#include "gtest/gtest.h"

#include <random>

using namespace llvm;

namespace optiml {
namespace llm {
namespace {

const char *const Seeds[] = {
    R"({"proposals": [{"kind": "unroll", "target": "k/loop0", "params": {"factor": 4}, "rationale": "r"},
        {"kind": "replace-function", "target": "k", "code": "__global__ void k() { }", "rationale": "r"}]})",
    R"({"llm": {"provider": "openai", "model": "m", "token_budget": 10, "temperature": 0.5, "no_cache": true}})",
    R"(Sure: ```json
{"a": [1, 2.5e3, null, true, "\u00e9\n"]}
``` done)",
};

std::string mutate(std::string S, std::mt19937 &Rng) {
  static const char Alphabet[] =
      "{}[]\",:\\ 0123456789.eE+-truefalsnul\xff\xc3";
  std::uniform_int_distribution<int> Op(0, 3);
  unsigned Edits = 1 + Rng() % 4;
  for (unsigned I = 0; I < Edits && !S.empty(); ++I) {
    size_t Pos = Rng() % S.size();
    char C = Alphabet[Rng() % (sizeof(Alphabet) - 1)];
    switch (Op(Rng)) {
    case 0:
      S[Pos] = C;
      break;
    case 1:
      S.insert(S.begin() + Pos, C);
      break;
    case 2:
      S.erase(Pos, 1 + Rng() % 8);
      break;
    default:
      S.resize(Pos); // Truncation.
      break;
    }
  }
  return S;
}

TEST(Fuzz, JSONEntryPointsNeverAbort) {
  std::mt19937 Rng(12345);
  unsigned Parsed = 0;
  for (unsigned I = 0; I < 3000; ++I) {
    std::string Doc = mutate(Seeds[I % std::size(Seeds)], Rng);
    if (Expected<std::string> J = extractJSON(Doc))
      ++Parsed;
    else
      consumeError(J.takeError());
    if (Expected<ProposalBatch> B = parseProposals(Doc, 4))
      ++Parsed;
    else
      consumeError(B.takeError());
    if (Expected<LLMSettings> S = parseConfigText(Doc, "fuzz.json"))
      ++Parsed;
    else
      consumeError(S.takeError());
    consumeError(validateJSONSchema(Doc, proposalReplySchema()));
    consumeError(validateJSONSchema(R"({"a": 1})", Doc));
  }
  // Some mutations stay valid; most don't. Both paths ran.
  EXPECT_GT(Parsed, 0u);
}

} // namespace
} // namespace llm
} // namespace optiml
