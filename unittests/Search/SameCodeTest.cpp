//===- SameCodeTest.cpp - Candidates that compile alike run once ----------===//
//
// The stand-in evaluator scripts compiled-code keys: two different programs
// with one key are the same machine code, and the search must not spend an
// evaluation on the second.
//
//===----------------------------------------------------------------------===//

#include "ToyWorld.h"
#include "optiml/Search/Journal.h"
#include "optiml/Search/Search.h"
#include "optiml/Support/FileUtil.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <algorithm>

using namespace optiml;
using namespace optiml::toy;
using namespace llvm;

namespace {

std::string tempDir() {
  SmallString<128> D;
  EXPECT_FALSE(sys::fs::createUniqueDirectory("optiml-samecode", D));
  return std::string(D);
}

struct SameCodeRun {
  World W;
  Applier App;
  ScriptedPolicy Pol;
  SearchOptions O;
  explicit SameCodeRun(std::string Alphabet) : Pol(std::move(Alphabet)) {
    W.Factor = {{'a', 1.2}, {'c', 1.1}};
    O.FileName = "toy.cu";
    O.Strat = Strategy::Greedy;
    O.Budget = 10;
    O.Prefetch = 0;
    O.OnNote = [this](StringRef N) { Notes.push_back(N.str()); };
  }
  SearchResult run(StandInEvaluator &E) {
    W.install(E);
    auto R = runSearch(original(), O, Pol, App, E);
    if (!R) {
      ADD_FAILURE() << toString(R.takeError());
      return SearchResult();
    }
    return std::move(*R);
  }
  std::vector<std::string> Notes;
};

std::string key(StringRef Letters) { return sourceKey(program(Letters, "")); }

bool called(const std::vector<std::string> &Calls, StringRef Letters) {
  return std::find(Calls.begin(), Calls.end(), key(Letters)) != Calls.end();
}

/// The node whose edits are \p Letters (its source, or its diff when the
/// source was dropped as a duplicate's).
const SearchNode *nodeOf(const SearchResult &R, StringRef Letters) {
  for (const SearchNode &N : R.Nodes)
    if (N.Status != NodeStatus::Rejected &&
        (letters(N.Source) == Letters ||
         (N.Source.empty() && N.Id &&
          StringRef(N.Diff).ends_with("+" + Letters.str() + "\n"))))
      return &N;
  return nullptr;
}

// 'b' compiles to the same code as 'a', 'c' to the original's.
void script(StandInEvaluator &E) {
  E.setCodeKey(original(), "code-0");
  E.setCodeKey(program("a", ""), "code-a");
  E.setCodeKey(program("b", ""), "code-a");
  E.setCodeKey(program("c", ""), "code-0");
}

TEST(SameCodeTest, ACandidateThatCompilesLikeAnEvaluatedOneIsNotRun) {
  SameCodeRun S("abc");
  StandInEvaluator E;
  script(E);
  SearchResult R = S.run(E);
  auto Calls = E.calls();
  EXPECT_TRUE(called(Calls, "a"));
  EXPECT_FALSE(called(Calls, "b"));
  EXPECT_FALSE(called(Calls, "c"));
  const SearchNode *A = nodeOf(R, "a");
  const SearchNode *B = nodeOf(R, "b");
  const SearchNode *C = nodeOf(R, "c");
  ASSERT_TRUE(A && B && C);
  EXPECT_EQ(A->Status, NodeStatus::Evaluated);
  EXPECT_EQ(A->CodeKey, "code-a");
  EXPECT_EQ(B->Status, NodeStatus::Duplicate);
  EXPECT_TRUE(B->SameCode);
  EXPECT_EQ(B->DuplicateOf, int(A->Id));
  EXPECT_EQ(B->Evaluation, 0u);
  EXPECT_EQ(C->Status, NodeStatus::Duplicate);
  EXPECT_TRUE(C->SameCode);
  EXPECT_EQ(C->DuplicateOf, 0); // the original's code
  EXPECT_EQ(R.SameCodeSkipped, 2u);
  // Free: the budget counts only what ran (the original aside).
  EXPECT_EQ(R.Evaluations, unsigned(Calls.size() - 1));
  ASSERT_FALSE(S.Notes.empty());
  EXPECT_NE(S.Notes.back().find("2 candidates were not evaluated"),
            std::string::npos);
}

TEST(SameCodeTest, ProgressSaysHowManyWereSkipped) {
  SameCodeRun S("abc");
  std::vector<SearchProgress> Seen;
  S.O.OnProgress = [&](const SearchProgress &P) { Seen.push_back(P); };
  StandInEvaluator E;
  script(E);
  S.run(E);
  unsigned Lines = 0;
  for (const SearchProgress &P : Seen)
    if (P.Phase && StringRef(P.Current).contains("same compiled code as node"))
      ++Lines;
  EXPECT_EQ(Lines, 2u);
  ASSERT_FALSE(Seen.empty());
  EXPECT_EQ(Seen.back().SameCodeSkipped, 2u);
}

TEST(SameCodeTest, JournaledAndReplayedWithoutEvaluation) {
  std::string D = tempDir();
  SameCodeRun S("abcd");
  S.O.Strat = Strategy::Beam; // the original's children first
  S.O.RunDir = D;
  S.O.Budget = 2; // 'a' and 'd' run; 'b' and 'c' are skipped between them
  StandInEvaluator E1;
  script(E1);
  E1.setCodeKey(program("d", ""), "code-d");
  SearchResult R1 = S.run(E1);
  ASSERT_EQ(R1.Evaluations, 2u);
  ASSERT_EQ(R1.SameCodeSkipped, 2u);

  auto JC = readJournal(D);
  ASSERT_TRUE(bool(JC)) << toString(JC.takeError());
  unsigned SameCode = 0;
  for (const SearchNode &N : JC->Nodes)
    if (N.SameCode) {
      ++SameCode;
      EXPECT_EQ(N.Status, NodeStatus::Duplicate);
      EXPECT_GE(N.DuplicateOf, 0);
      EXPECT_FALSE(N.CodeKey.empty());
    }
  EXPECT_EQ(SameCode, 2u);
  EXPECT_EQ(JC->Nodes[0].CodeKey, "code-0");
  auto Text = readFile(D + "/journal.jsonl");
  ASSERT_TRUE(bool(Text));
  EXPECT_NE(Text->find("\"same_code\":true"), std::string::npos);
  EXPECT_NE(Text->find("\"same_code_skipped\":2"), std::string::npos);

  // Resumed with more budget: nothing journaled is evaluated or keyed
  // again, and 'ad' compiles like 'd', a node of the first run (whose key
  // the journal holds: this evaluator would not tell it).
  StandInEvaluator E2;
  E2.setCodeKey(program("ad", ""), "code-d");
  SameCodeRun S2("abcd");
  S2.O.Strat = Strategy::Beam;
  S2.Pol.Priors = {{'d', 2.0}}; // 'ad' first among 'a''s children
  S2.O.RunDir = D;
  S2.O.Resume = true;
  S2.O.Budget = 4;
  SearchResult R2 = S2.run(E2);
  auto Calls = E2.calls();
  for (StringRef L : {"a", "b", "c", "d", "ad"})
    EXPECT_FALSE(called(Calls, L)) << L.str();
  auto Keyed = E2.codeKeyCalls();
  for (StringRef L : {"a", "b", "c"})
    EXPECT_EQ(std::count(Keyed.begin(), Keyed.end(), key(L)), 0) << L.str();
  const SearchNode *AD = nodeOf(R2, "ad");
  ASSERT_TRUE(AD);
  EXPECT_TRUE(AD->SameCode);
  EXPECT_EQ(R2.SameCodeSkipped, 3u);
  EXPECT_EQ(R2.Evaluations, 4u);
  EXPECT_EQ(R2.EvaluationsThisRun, 2u);
  ASSERT_FALSE(S2.Notes.empty());
  EXPECT_NE(S2.Notes.front().find("(2 verified, 0 failed, 2 skipped as the "
                                  "same compiled code)"),
            std::string::npos)
      << S2.Notes.front();
  (void)sys::fs::remove_directories(D);
}

TEST(SameCodeTest, WithoutKeysTheSearchIsUnchanged) {
  SameCodeRun S("abc");
  S.O.Budget = 40;
  std::string D = tempDir();
  S.O.RunDir = D;
  StandInEvaluator E;
  SearchResult R = S.run(E);
  EXPECT_EQ(R.Evaluations, 7u); // {a,b,c,ab,ac,bc,abc}
  EXPECT_EQ(R.SameCodeSkipped, 0u);
  for (const SearchNode &N : R.Nodes) {
    EXPECT_FALSE(N.SameCode);
    EXPECT_TRUE(N.CodeKey.empty());
  }
  // Asked for every new program (and the original), told nothing.
  EXPECT_EQ(E.codeKeyCalls().size(), 8u);
  EXPECT_TRUE(S.Notes.empty());
  // The journal's nodes are written as before.
  auto Text = readFile(D + "/journal.jsonl");
  ASSERT_TRUE(bool(Text));
  EXPECT_EQ(Text->find("code_key"), std::string::npos);
  EXPECT_EQ(Text->find("\"same_code\""), std::string::npos);
  (void)sys::fs::remove_directories(D);
}

TEST(SameCodeTest, JournalNodesWithAndWithoutCodeKeysLoad) {
  SearchNode N;
  N.Id = 4;
  N.Parent = 1;
  N.Depth = 2;
  N.Status = NodeStatus::Duplicate;
  N.DuplicateOf = 2;
  N.CodeKey = "0123456789abcdef";
  N.SameCode = true;
  auto Back = nodeFromJSON(nodeToJSON(N));
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
  EXPECT_EQ(Back->CodeKey, N.CodeKey);
  EXPECT_TRUE(Back->SameCode);
  // A node written before compiled-code keys.
  N.CodeKey.clear();
  N.SameCode = false;
  std::string Old = nodeToJSON(N);
  ASSERT_EQ(Old.find("code_key"), std::string::npos);
  Back = nodeFromJSON(Old);
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
  EXPECT_TRUE(Back->CodeKey.empty());
  EXPECT_FALSE(Back->SameCode);
}

} // namespace
