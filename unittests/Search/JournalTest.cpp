//===- JournalTest.cpp - Journal format, and resuming a killed search -----===//

#include "optiml/Search/Journal.h"
#include "ToyWorld.h"
#include "optiml/Support/FileUtil.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
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
    ASSERT_FALSE(
        errorToBool(writeFileAtomically(J, *T + "{\"type\":\"node\",\"id\":")));
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

// A journal made by a short finished search, for the damage tests below.
struct DamagedJournal {
  std::string D = tempDir();
  std::string J = D + "/journal.jsonl";
  ToyRun S{D};
  std::vector<std::string> Warnings;
  DamagedJournal() {
    StandInEvaluator E;
    S.W.install(E);
    S.O.Budget = 3;
    EXPECT_TRUE(bool(runSearch(original(), S.O, S.Pol, S.App, E)));
    S.O.Resume = true;
    S.O.Budget = 5;
    S.O.OnWarning = [this](StringRef M) { Warnings.push_back(M.str()); };
  }
  ~DamagedJournal() { sys::fs::remove_directories(D); }
  /// Replaces the journal's lines (complete ones end with "\n").
  void rewrite(const std::vector<std::string> &Lines, StringRef Tail = "") {
    std::string T;
    for (const std::string &L : Lines)
      T += L + "\n";
    T += Tail.str();
    ASSERT_FALSE(errorToBool(writeFileAtomically(J, T)));
  }
  /// The resumed search's error ("" if it ran).
  std::string resumeError() {
    StandInEvaluator E;
    S.W.install(E);
    auto R = runSearch(original(), S.O, S.Pol, S.App, E);
    return R ? std::string() : toString(R.takeError());
  }
};

/// Line \p L with \p From replaced by \p To (which must be there once).
std::string edited(const std::string &L, StringRef From, StringRef To) {
  size_t At = L.find(From.str());
  EXPECT_NE(At, std::string::npos) << From.str() << " not in " << L;
  if (At == std::string::npos)
    return L;
  return L.substr(0, At) + To.str() + L.substr(At + From.size());
}

unsigned lastEvaluation(const JournalContents &C) {
  unsigned Last = 0;
  for (const SearchNode &N : C.Nodes)
    Last = std::max(Last, N.Evaluation);
  return Last;
}

testing::AssertionResult contains(const std::string &Text, StringRef Part) {
  if (Text.find(Part.str()) != std::string::npos)
    return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << "'" << Part.str() << "' not in '" << Text << "'";
}

/// A stand-in that, like the GPU evaluator once it dropped the original's
/// noisy last launch, verifies the first launches alone.
class FirstLaunchesOnly : public StandInEvaluator {
public:
  VerificationScope verification() const override {
    return {false, "k launch 9: 'y': 3 element(s) differ"};
  }
};

TEST(JournalTest, TheHeaderKeepsWhichLaunchesAreVerified) {
  std::string D = tempDir();
  ToyRun S(D);
  S.O.Budget = 2;
  FirstLaunchesOnly E;
  S.W.install(E);
  ASSERT_TRUE(bool(runSearch(original(), S.O, S.Pol, S.App, E)));
  auto L = lines(D + "/journal.jsonl");
  ASSERT_FALSE(L.empty());
  EXPECT_TRUE(contains(L[0], "\"verify_last\":false,\"verify_last_dropped\":"
                             "\"k launch 9: 'y': 3 element(s) differ\""));
  auto JC = readJournal(D);
  ASSERT_TRUE(bool(JC)) << toString(JC.takeError());
  ASSERT_TRUE(JC->Header.has_value());
  EXPECT_FALSE(JC->Header->VerifyLast);
  EXPECT_EQ(JC->Header->VerifyLastDropped,
            "k launch 9: 'y': 3 element(s) differ");
  std::string Summary = summaryToJSON(SearchResult(), *JC->Header, "stand-in");
  EXPECT_TRUE(contains(Summary, "\"verify_last\": false"));
  EXPECT_TRUE(contains(Summary, "\"verify_last_dropped\": \"k launch 9: 'y': "
                                "3 element(s) differ\""));

  // An evaluator that verifies the last launch too writes neither field.
  std::string D2 = tempDir();
  ToyRun S2(D2);
  S2.O.Budget = 2;
  StandInEvaluator E2;
  S2.W.install(E2);
  ASSERT_TRUE(bool(runSearch(original(), S2.O, S2.Pol, S2.App, E2)));
  auto L2 = lines(D2 + "/journal.jsonl");
  ASSERT_FALSE(L2.empty());
  EXPECT_EQ(L2[0].find("verify_last"), std::string::npos) << L2[0];
  auto JC2 = readJournal(D2);
  ASSERT_TRUE(bool(JC2)) << toString(JC2.takeError());
  ASSERT_TRUE(JC2->Header.has_value());
  EXPECT_TRUE(JC2->Header->VerifyLast);
  EXPECT_TRUE(JC2->Header->VerifyLastDropped.empty());
  Summary = summaryToJSON(SearchResult(), *JC2->Header, "stand-in");
  EXPECT_TRUE(contains(Summary, "\"verify_last\": true"));
  EXPECT_FALSE(contains(Summary, "verify_last_dropped"));
  (void)sys::fs::remove_directories(D);
  (void)sys::fs::remove_directories(D2);
}

TEST(JournalTest, MissingSourcesAreListedNotAnError) {
  std::string D = tempDir();
  ToyRun S(D);
  S.O.Budget = 2;
  StandInEvaluator E;
  S.W.install(E);
  ASSERT_TRUE(bool(runSearch(original(), S.O, S.Pol, S.App, E)));
  auto Whole = readJournal(D);
  ASSERT_TRUE(bool(Whole)) << toString(Whole.takeError());
  EXPECT_TRUE(Whole->MissingSources.empty());
  std::vector<unsigned> WithSource;
  for (const SearchNode &N : Whole->Nodes)
    if (N.Id > 0 && !N.Source.empty())
      WithSource.push_back(N.Id);
  ASSERT_FALSE(WithSource.empty());
  ASSERT_FALSE(bool(sys::fs::remove_directories(D + "/sources")));
  auto Bare = readJournal(D);
  ASSERT_TRUE(bool(Bare)) << toString(Bare.takeError());
  EXPECT_EQ(Bare->MissingSources, WithSource);
  for (unsigned Id : WithSource)
    EXPECT_TRUE(Bare->Nodes[Id].Source.empty());
  (void)sys::fs::remove_directories(D);
}

TEST(JournalResumeTest, MissingHeaderIsAnError) {
  DamagedJournal T;
  auto L = lines(T.J);
  L.erase(L.begin());
  T.rewrite(L);
  std::string Err = T.resumeError();
  EXPECT_TRUE(contains(Err, "journal.jsonl:1: the journal has no header"));
  // Not restarted: the journal is as it was.
  EXPECT_EQ(lines(T.J), L);
}

TEST(JournalResumeTest, UnknownVersionIsAnError) {
  DamagedJournal T;
  auto L = lines(T.J);
  L[0] = edited(L[0], "\"version\":1", "\"version\":99");
  T.rewrite(L);
  EXPECT_TRUE(contains(T.resumeError(),
                       "journal.jsonl:1: journal version 99 is not "
                       "supported (this clang-optiml reads version 1)"));
  L[0] = edited(L[0], ",\"version\":99", "");
  T.rewrite(L);
  EXPECT_TRUE(
      contains(T.resumeError(), "journal.jsonl:1: the header has no version"));
}

TEST(JournalResumeTest, SettingsMustMatchTheJournal) {
  DamagedJournal T;
  T.S.O.Strat = Strategy::Greedy;
  EXPECT_TRUE(contains(T.resumeError(),
                       "journal.jsonl:1: cannot resume: the journal's "
                       "search uses strategy mcts, this run asks for "
                       "greedy; resume with --strategy mcts"));
  T.S.O.Strat = Strategy::MCTS;
  struct Renamed : ScriptedPolicy {
    using ScriptedPolicy::ScriptedPolicy;
    StringRef name() const override { return "llm"; }
  } Llm("abcdefg");
  StandInEvaluator E;
  T.S.W.install(E);
  auto R = runSearch(original(), T.S.O, Llm, T.S.App, E);
  ASSERT_FALSE(bool(R));
  EXPECT_TRUE(contains(toString(R.takeError()),
                       "the journal's search uses policy scripted, this run "
                       "uses llm; resume with --policy scripted"));
  T.S.O.Kernels = {"other"};
  EXPECT_TRUE(contains(T.resumeError(), "this run targets other"));
  T.S.O.Kernels = {};
  EXPECT_EQ(T.resumeError(), "");
}

TEST(JournalResumeTest, ParentMustBeAnEarlierNode) {
  DamagedJournal T;
  auto L = lines(T.J);
  ASSERT_GE(L.size(), 4u);
  // Line 3 is node 1 (line 2 is node 0, the original).
  L[2] = edited(L[2], "\"parent\":0", "\"parent\":99");
  T.rewrite(L);
  EXPECT_TRUE(contains(T.resumeError(),
                       "journal.jsonl:3: node 1 has parent 99, which is not "
                       "an earlier node (0 to 0)"));
  L[2] = edited(L[2], "\"parent\":99", "\"parent\":-1");
  T.rewrite(L);
  EXPECT_TRUE(contains(T.resumeError(), "journal.jsonl:3: node 1 has parent "
                                        "-1"));
}

TEST(JournalResumeTest, NodeIdsMustRunInOrder) {
  DamagedJournal T;
  auto L = lines(T.J);
  ASSERT_GE(L.size(), 5u);
  auto Dup = L;
  Dup.insert(Dup.begin() + 3, L[2]); // node 1 twice
  T.rewrite(Dup);
  EXPECT_TRUE(contains(T.resumeError(),
                       "journal.jsonl:4: node id 1 appears twice (first on "
                       "line 3)"));
  auto Skip = L;
  Skip.erase(Skip.begin() + 2); // node 1 missing
  T.rewrite(Skip);
  EXPECT_TRUE(contains(T.resumeError(),
                       "journal.jsonl:3: node 2 out of order: expected "
                       "node 1"));
}

TEST(JournalResumeTest, BadLineInTheMiddleIsAnError) {
  DamagedJournal T;
  auto L = lines(T.J);
  L[2] = L[2].substr(0, L[2].size() / 2);
  T.rewrite(L);
  EXPECT_TRUE(contains(T.resumeError(),
                       "journal.jsonl:3: malformed journal line (not "
                       "JSON)"));
}

TEST(JournalResumeTest, TornLastLineIsDroppedWithAWarning) {
  DamagedJournal T;
  auto L = lines(T.J);
  unsigned N = L.size();
  // With a newline but not JSON (a block of zeros after a crash, say).
  T.rewrite(L, "{\"type\":\"node\",\"id\":" + std::string(3, '\0') + "\n");
  EXPECT_EQ(T.resumeError(), "");
  ASSERT_EQ(T.Warnings.size(), 1u);
  EXPECT_TRUE(contains(T.Warnings[0],
                       formatv("journal.jsonl:{0}: dropped an unreadable "
                               "last line",
                               N + 1)
                           .str()));
  // Cut from the journal, which reads cleanly again.
  auto C = readJournal(T.D);
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_FALSE(C->DroppedPartialLine);
  EXPECT_EQ(lastEvaluation(*C), 5u);
}

TEST(JournalResumeTest, ResumeNeedsAJournal) {
  std::string D = tempDir();
  ToyRun S(D + "/run");
  S.O.Resume = true;
  StandInEvaluator E;
  S.W.install(E);
  auto R = runSearch(original(), S.O, S.Pol, S.App, E);
  ASSERT_FALSE(bool(R));
  EXPECT_TRUE(contains(toString(R.takeError()),
                       "cannot resume: there is no run directory"));
  EXPECT_FALSE(sys::fs::exists(D + "/run"));
  ASSERT_FALSE(sys::fs::create_directory(D + "/run"));
  R = runSearch(original(), S.O, S.Pol, S.App, E);
  ASSERT_FALSE(bool(R));
  EXPECT_TRUE(contains(toString(R.takeError()),
                       "holds no search journal (journal.jsonl); drop "
                       "--resume to start a new search there"));
  EXPECT_FALSE(sys::fs::exists(D + "/run/journal.jsonl"));
  EXPECT_TRUE(E.calls().empty()) << "evaluated something";
  sys::fs::remove_directories(D);
}

// Stopped while measuring the original: the journal exists but is empty.
// Resuming starts afresh, and says so.
TEST(JournalResumeTest, EmptyJournalStartsAfreshWithAWarning) {
  DamagedJournal T;
  T.rewrite({});
  EXPECT_EQ(T.resumeError(), "");
  ASSERT_EQ(T.Warnings.size(), 1u);
  EXPECT_TRUE(contains(T.Warnings[0], "holds no search node yet"));
  auto C = readJournal(T.D);
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  ASSERT_TRUE(C->Header.has_value());
  EXPECT_EQ(lastEvaluation(*C), 5u);
}

// One writer per run directory: a search whose directory is locked by
// another process fails at once, naming that process, and changes nothing.
TEST(JournalResumeTest, LockedRunDirectoryIsRefused) {
  DamagedJournal T;
  auto Before = lines(T.J);
  auto L = FileLock::tryAcquire(T.D + "/lock");
  ASSERT_TRUE(L && *L);
  std::string Err = T.resumeError();
  EXPECT_TRUE(contains(Err, formatv("is in use by another search (pid {0} "
                                    "on host ",
                                    ::getpid())
                                .str()));
  EXPECT_TRUE(contains(Err, "wait for it to finish, or choose another "
                            "--run-dir"));
  EXPECT_EQ(lines(T.J), Before);
  // A fresh search in a new directory locked the same way fails the same.
  std::string D2 = tempDir();
  auto L2 = FileLock::tryAcquire(D2 + "/lock");
  ASSERT_TRUE(L2 && *L2);
  ToyRun S(D2);
  StandInEvaluator E;
  S.W.install(E);
  auto R = runSearch(original(), S.O, S.Pol, S.App, E);
  ASSERT_FALSE(bool(R));
  EXPECT_TRUE(contains(toString(R.takeError()), "is in use by another"));
  EXPECT_FALSE(sys::fs::exists(D2 + "/journal.jsonl"));
  // Released: the resume goes ahead.
  *L = std::nullopt;
  EXPECT_EQ(T.resumeError(), "");
  sys::fs::remove_directories(D2);
}

// Two searches on one directory at once: the second fails while the first
// runs, and the journal stays readable (before the lock, both appended
// nodes with clashing ids and every later resume failed).
TEST(JournalResumeTest, ConcurrentSearchesOnOneDirectory) {
  std::string D = tempDir();
  ToyRun S1(D);
  StandInEvaluator E1;
  S1.W.install(E1);
  E1.setDelayMs(20);
  S1.O.Budget = 6;
  std::string Calls = D + "-calls";
  E1.setCallLog(Calls);
  bool FirstRan = false;
  std::thread First([&] {
    auto R = runSearch(original(), S1.O, S1.Pol, S1.App, E1);
    FirstRan = bool(R);
    if (!R)
      consumeError(R.takeError());
  });
  // Once the first has evaluated the original it holds the lock.
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (lines(Calls).empty() && std::chrono::steady_clock::now() < Deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ToyRun S2(D);
  S2.O.Resume = true;
  StandInEvaluator E2;
  S2.W.install(E2);
  auto R = runSearch(original(), S2.O, S2.Pol, S2.App, E2);
  First.join();
  EXPECT_TRUE(FirstRan);
  ASSERT_FALSE(bool(R));
  EXPECT_TRUE(contains(toString(R.takeError()), "is in use by another"));
  auto C = readJournal(D);
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(lastEvaluation(*C), 6u);
  sys::fs::remove_directories(D);
  sys::fs::remove(Calls);
}

// The acceptance test of resumability: a child process runs a search with
// the stand-in evaluator, is killed with SIGKILL in the middle, and the
// search is resumed from its journal. No journaled evaluation may be
// repeated, none may be lost, and the budget comes out exact.
TEST(JournalTest, KilledRunResumesWithoutLosingOrRepeatingEvaluations) {
  std::string D = tempDir();
  std::string Run = D + "/run", Calls1 = D + "/calls1", Calls2 = D + "/calls2";
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
