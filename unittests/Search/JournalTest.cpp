//===- JournalTest.cpp - Journal format, and resuming a killed search -----===//

#include "ToyWorld.h"
#include "optiml/Search/Journal.h"
#include "optiml/Support/FileUtil.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <chrono>
#include <csignal>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace optiml;
using namespace optiml::toy;
using namespace llvm;

namespace {

std::string tempDir() {
  SmallString<128> D;
  EXPECT_FALSE(sys::fs::createUniqueDirectory("optiml-journal", D));
  return std::string(D);
}

std::vector<std::string> lines(StringRef Path) {
  std::vector<std::string> Out;
  auto T = readFile(Path);
  if (!T) {
    consumeError(T.takeError());
    return Out;
  }
  SmallVector<StringRef, 32> L;
  StringRef(*T).split(L, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef S : L)
    Out.push_back(S.str());
  return Out;
}

struct ToyRun {
  World W;
  Applier App;
  ScriptedPolicy Pol{"abcdefg"};
  SearchOptions O;
  ToyRun(std::string RunDir) {
    W.Factor = {{'a', 1.2}, {'c', 1.1}, {'d', 0.7}};
    O.FileName = "toy.cu";
    O.Budget = 24;
    O.RunDir = std::move(RunDir);
    O.Prefetch = 0;
  }
};

TEST(JournalTest, NodeRoundTrips) {
  SearchNode N;
  N.Id = 3;
  N.Parent = 1;
  N.Depth = 2;
  N.Status = NodeStatus::Evaluated;
  N.Step = Edit{"unroll", "k/loop0", {{"factor", int64_t(4)}}};
  N.Step->Params["full"] = false;
  N.Step->Params["flags"] = std::vector<std::string>{"-O3"};
  N.Prior = 0.25;
  N.Key = "abc";
  N.Flags = {"-use_fast_math"};
  N.Checks.push_back({"scope", "k.cu", 3, 4, "touches 'main'"});
  N.Outcome = StandInEvaluator::passing(1.5, 0.7);
  N.Outcome.Metrics["dram__bytes_read.sum"] = 1e9;
  N.Outcome.Bound = "memory-bound";
  N.Outcome.Stages = {{"build", 1.5}, {"candidate", 2.25}, {"time", 0.75}};
  N.Reward.Total = 0.3;
  N.Reward.Speed.Cmp = Comparison::Faster;
  N.Reward.Expandable = true;
  N.Evaluation = 2;
  auto Back = nodeFromJSON(nodeToJSON(N));
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
  EXPECT_EQ(nodeToJSON(*Back), nodeToJSON(N));
  EXPECT_EQ(editKey(*Back->Step), editKey(*N.Step));
  EXPECT_EQ(Back->Outcome.Metrics["dram__bytes_read.sum"], 1e9);
  ASSERT_EQ(Back->Outcome.Stages.size(), 3u);
  EXPECT_EQ(Back->Outcome.Stages[1].first, "candidate");
  EXPECT_EQ(Back->Outcome.Stages[1].second, 2.25);
}

TEST(JournalTest, MalformedLinesAreErrorsNotCrashes) {
  for (StringRef Bad : {"{", "[]", "{\"id\": \"x\"}", "null", "{\"id\":1}"}) {
    auto N = nodeFromJSON(Bad);
    EXPECT_FALSE(bool(N)) << Bad.str();
    consumeError(N.takeError());
  }
}

TEST(JournalTest, ExistingJournalNeedsResume) {
  std::string D = tempDir();
  ToyRun S(D);
  StandInEvaluator E;
  S.W.install(E);
  S.O.Budget = 2;
  ASSERT_TRUE(bool(runSearch(original(), S.O, S.Pol, S.App, E)));
  auto R = runSearch(original(), S.O, S.Pol, S.App, E);
  ASSERT_FALSE(bool(R));
  EXPECT_NE(toString(R.takeError()).find("pass --resume"), std::string::npos);
  // A different input in the same run directory.
  S.O.Resume = true;
  R = runSearch(program("q", "q"), S.O, S.Pol, S.App, E);
  ASSERT_FALSE(bool(R));
  EXPECT_NE(toString(R.takeError()).find("different program"),
            std::string::npos);
}

TEST(JournalTest, PartialLastLineIsDroppedAndTruncatedOnResume) {
  std::string D = tempDir();
  ToyRun S(D);
  S.O.Budget = 3;
  StandInEvaluator E;
  S.W.install(E);
  ASSERT_TRUE(bool(runSearch(original(), S.O, S.Pol, S.App, E)));
  std::string J = D + "/journal.jsonl";
  unsigned Before = lines(J).size();
  {
    auto T = readFile(J);
    ASSERT_TRUE(bool(T));
    ASSERT_FALSE(errorToBool(
        writeFileAtomically(J, *T + "{\"type\":\"node\",\"id\":")));
  }
  auto C = readJournal(D);
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_TRUE(C->DroppedPartialLine);
  EXPECT_EQ(C->Nodes.size() + 2 /*header, final*/, Before);

  S.O.Resume = true;
  S.O.Budget = 5;
  StandInEvaluator E2;
  S.W.install(E2);
  auto R = runSearch(original(), S.O, S.Pol, S.App, E2);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Evaluations, 5u);
  EXPECT_EQ(R->EvaluationsThisRun, 2u);
  auto C2 = readJournal(D);
  ASSERT_TRUE(bool(C2)) << toString(C2.takeError());
  EXPECT_FALSE(C2->DroppedPartialLine);
}

// The acceptance test of resumability: a child process runs a search with
// the stand-in evaluator, is killed with SIGKILL in the middle, and the
// search is resumed from its journal. No journaled evaluation may be
// repeated, none may be lost, and the budget comes out exact.
TEST(JournalTest, KilledRunResumesWithoutLosingOrRepeatingEvaluations) {
  std::string D = tempDir();
  std::string Run = D + "/run", Calls1 = D + "/calls1",
              Calls2 = D + "/calls2";
  pid_t Pid = fork();
  ASSERT_GE(Pid, 0);
  if (Pid == 0) {
    ToyRun S(Run);
    StandInEvaluator E(/*Seed=*/3, /*NoisePct=*/0.5);
    S.W.install(E);
    E.setCallLog(Calls1);
    E.setDelayMs(40);
    auto R = runSearch(original(), S.O, S.Pol, S.App, E);
    _exit(R ? 0 : 3);
  }
  // Kill it once it has journaled a few evaluations.
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (lines(Run + "/journal.jsonl").size() < 8 &&
         std::chrono::steady_clock::now() < Deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(kill(Pid, SIGKILL), 0);
  int Status = 0;
  ASSERT_EQ(waitpid(Pid, &Status, 0), Pid);
  ASSERT_TRUE(WIFSIGNALED(Status)) << "the child finished before the kill";

  auto First = readJournal(Run);
  ASSERT_TRUE(bool(First)) << toString(First.takeError());
  std::set<std::string> Journaled;
  unsigned Evals1 = 0;
  for (const SearchNode &N : First->Nodes)
    if (N.Evaluation || N.Status == NodeStatus::Original) {
      Journaled.insert(N.Key);
      Evals1 += N.Evaluation != 0;
    }
  ASSERT_GT(Evals1, 0u);
  ASSERT_LT(Evals1, 24u) << "killed too late to test anything";

  ToyRun S(Run);
  S.O.Resume = true;
  StandInEvaluator E(/*Seed=*/3, /*NoisePct=*/0.5);
  S.W.install(E);
  E.setCallLog(Calls2);
  auto R = runSearch(original(), S.O, S.Pol, S.App, E);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());

  // The budget is exact across both processes.
  EXPECT_EQ(R->Evaluations, 24u);
  EXPECT_EQ(R->EvaluationsThisRun, 24u - Evals1);
  // Nothing journaled was evaluated again (the original included).
  for (const std::string &K : lines(Calls2))
    EXPECT_FALSE(Journaled.count(K)) << "re-evaluated " << K;
  EXPECT_EQ(lines(Calls2).size(), 24u - Evals1);
  // At most the one evaluation in flight at the kill was lost.
  unsigned Lost = 0;
  for (const std::string &K : lines(Calls1))
    Lost += !Journaled.count(K);
  EXPECT_LE(Lost, 1u);
  // The resumed journal keeps the first run's nodes as they were, and
  // holds every evaluation once.
  auto Final = readJournal(Run);
  ASSERT_TRUE(bool(Final)) << toString(Final.takeError());
  for (size_t I = 0; I < First->Nodes.size(); ++I) {
    EXPECT_EQ(Final->Nodes[I].Key, First->Nodes[I].Key);
    EXPECT_EQ(Final->Nodes[I].Evaluation, First->Nodes[I].Evaluation);
  }
  std::set<std::string> Keys;
  std::set<unsigned> Indices;
  for (const SearchNode &N : Final->Nodes)
    if (N.Evaluation) {
      EXPECT_TRUE(Keys.insert(N.Key).second) << "evaluated twice: " << N.Key;
      Indices.insert(N.Evaluation);
    }
  EXPECT_EQ(Keys.size(), 24u);
  EXPECT_EQ(Indices.size(), 24u);
  EXPECT_EQ(*Indices.rbegin(), 24u);
  sys::fs::remove_directories(D);
}

} // namespace
