//===- SearchTest.cpp - MCTS, strategies and guardrails on a toy world ----===//

#include "optiml/Search/Search.h"
#include "ToyWorld.h"
#include "gtest/gtest.h"
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

using namespace optiml;
using namespace optiml::toy;

namespace {

struct Fixture {
  World W;
  StandInEvaluator Eval{/*Seed=*/1, /*NoisePct=*/0};
  Applier App;
  ScriptedPolicy Pol;
  SearchOptions O;

  explicit Fixture(std::string Alphabet) : Pol(std::move(Alphabet)) {
    O.FileName = "toy.cu";
    O.Budget = 10;
    O.Prefetch = 0;
  }
  SearchResult run() {
    W.install(Eval);
    auto R = runSearch(original(), O, Pol, App, Eval);
    if (!R) {
      ADD_FAILURE() << llvm::toString(R.takeError());
      return SearchResult();
    }
    return std::move(*R);
  }
};

std::string lettersOf(const SearchResult &R, unsigned Id) {
  return letters(R.Nodes[Id].Source);
}

unsigned evaluated(const SearchResult &R) {
  unsigned N = 0;
  for (const SearchNode &Nd : R.Nodes)
    N += Nd.Evaluation != 0;
  return N;
}

TEST(SearchTest, PuctAndWideningFormulas) {
  EXPECT_DOUBLE_EQ(puctScore(0.5, 0.25, 16, 3, 2.0), 0.5 + 2 * 0.25 * 4 / 4);
  EXPECT_GT(puctScore(0, 0.9, 4, 0, 1), puctScore(0, 0.1, 4, 0, 1));
  // More visits to a child lower its exploration bonus.
  EXPECT_GT(puctScore(0, 0.5, 9, 0, 1), puctScore(0, 0.5, 9, 5, 1));
  EXPECT_EQ(wideningLimit(1, 1, 0.5), 1u);
  EXPECT_EQ(wideningLimit(2, 1, 0.5), 2u);
  EXPECT_EQ(wideningLimit(4, 1, 0.5), 2u);
  EXPECT_EQ(wideningLimit(5, 1, 0.5), 3u);
  EXPECT_EQ(wideningLimit(100, 2, 0.5), 20u);
}

// The first child is the highest prior; then PUCT follows the child that
// paid off, not the one the prior liked.
TEST(SearchTest, PuctSelectionFollowsRewardOverPrior) {
  Fixture F("ab");
  F.W.Factor = {{'a', 2.0}, {'b', 1.0}};
  F.Pol.Priors = {{'a', 0.4}, {'b', 0.6}};
  F.O.Budget = 3;
  auto R = F.run();
  ASSERT_EQ(R.Evaluations, 3u);
  std::vector<unsigned> ByEval(4);
  for (const SearchNode &N : R.Nodes)
    if (N.Evaluation)
      ByEval[N.Evaluation] = N.Id;
  EXPECT_EQ(lettersOf(R, ByEval[1]), "b"); // prior first
  EXPECT_EQ(lettersOf(R, ByEval[2]), "a"); // widening admits a second child
  // Root has 3 visits: the limit is still 2 children, so the search
  // descends, and PUCT picks 'a' (Q = log 2) over 'b' (Q = 0, higher prior).
  EXPECT_EQ(lettersOf(R, ByEval[3]), "ab");
  EXPECT_EQ(R.Nodes[ByEval[3]].Parent, int(ByEval[2]));
}

// Progressive widening: the root does not get every child before the
// search goes deeper.
TEST(SearchTest, ProgressiveWideningLimitsChildren) {
  Fixture F("abcdefgh");
  F.O.Budget = 8;
  auto R = F.run();
  unsigned RootChildren = 0;
  for (unsigned C : R.Nodes[0].Children)
    RootChildren += R.Nodes[C].Evaluation != 0;
  EXPECT_LE(RootChildren, wideningLimit(R.Nodes[0].Visits, 1, 0.5));
  EXPECT_LT(RootChildren, 8u);
  unsigned Deep = 0;
  for (const SearchNode &N : R.Nodes)
    Deep += N.Evaluation && N.Depth >= 2;
  EXPECT_GT(Deep, 0u);
}

// The same program reached by two orders is evaluated once.
TEST(SearchTest, TranspositionTableEvaluatesEachProgramOnce) {
  Fixture F("abc");
  F.O.Budget = 40; // more than the 7 distinct programs
  F.O.Strat = Strategy::Greedy;
  auto R = F.run();
  EXPECT_EQ(R.Evaluations, 7u); // {a,b,c,ab,ac,bc,abc}
  auto Calls = F.Eval.calls();
  std::set<std::string> Unique(Calls.begin(), Calls.end());
  EXPECT_EQ(Unique.size(), Calls.size()); // nothing evaluated twice
  unsigned Dups = 0;
  for (const SearchNode &N : R.Nodes)
    if (N.Status == NodeStatus::Duplicate) {
      ++Dups;
      EXPECT_GE(N.DuplicateOf, 0);
      EXPECT_EQ(N.Evaluation, 0u);
    }
  EXPECT_GT(Dups, 0u);
  EXPECT_EQ(R.StopReason, "every reachable program has been evaluated");
}

TEST(SearchTest, FailedCandidatesGetMinimumRewardAndNoChildren) {
  Fixture F("xya");
  F.O.Budget = 20;
  F.O.Strat = Strategy::MCTS;
  auto R = F.run();
  bool SawX = false, SawY = false;
  for (const SearchNode &N : R.Nodes) {
    std::string L = letters(N.Source);
    if (N.Status != NodeStatus::Failed)
      continue;
    SawX |= L.find('x') != std::string::npos;
    SawY |= L.find('y') != std::string::npos;
    EXPECT_EQ(N.Reward.Total, F.O.Reward.Weights.MinReward);
    EXPECT_TRUE(N.Children.empty()) << "failed node " << N.Id << " expanded";
  }
  EXPECT_TRUE(SawX && SawY);
  // Only "a" and the original are expandable: {x, y, a, ax, ay} evaluated.
  EXPECT_EQ(R.Evaluations, 5u);
}

TEST(SearchTest, RegressionsBeyondNoiseAreNotExpanded) {
  Fixture F("sa");
  F.W.Factor = {{'s', 0.5}}; // twice as slow
  F.O.Budget = 20;
  F.O.Strat = Strategy::Beam;
  auto R = F.run();
  for (const SearchNode &N : R.Nodes)
    if (letters(N.Source) == "s") {
      EXPECT_EQ(N.Reward.Speed.Cmp, Comparison::Slower);
      EXPECT_TRUE(N.Children.empty());
    }
  // "as" is still reached through "a".
  EXPECT_EQ(R.Evaluations, 3u);
}

// 'l' (a block shape, 1.16x alone) is offered only before 'v' (a
// vectorizing rewrite, 1.7x alone), and edits within noise ('u', 'r',
// 'h') are offered only after 'v', as unrolls of the loops it writes:
// MCTS alone spends the budget on 'v''s branch. The combination step
// tries 'v' after 'l' as soon as 'l' is faster on its own.
TEST(SearchTest, MctsCombinesAFasterEditThatOnlyAppliesBeforeTheBest) {
  Fixture F("vlurh");
  F.W.Factor = {{'v', 1.7}, {'l', 1.16}};
  F.Pol.NotAfter = {{'l', 'v'}};
  F.Pol.OnlyAfter = {{'u', 'v'}, {'r', 'v'}, {'h', 'v'}};
  F.Pol.Priors = {{'v', 1.0}, {'l', 0.5}};
  F.O.Budget = 8;
  auto R = F.run();
  std::string Best = lettersOf(R, R.Best);
  EXPECT_NE(Best.find('l'), std::string::npos) << Best;
  EXPECT_NE(Best.find('v'), std::string::npos) << Best;
  unsigned FoundAt = 0;
  for (const SearchNode &N : R.Nodes)
    if (letters(N.Source) == "lv")
      FoundAt = N.Evaluation;
  EXPECT_GT(FoundAt, 0u);
  EXPECT_LE(FoundAt, 4u);
}

TEST(SearchTest, RejectedEditsAreJournaledButCostNoEvaluation) {
  Fixture F("!a");
  F.O.Budget = 5;
  auto R = F.run();
  bool Rejected = false;
  for (const SearchNode &N : R.Nodes)
    if (N.Status == NodeStatus::Rejected) {
      Rejected = true;
      EXPECT_EQ(N.Evaluation, 0u);
      EXPECT_EQ(N.RejectReason, "signature: renames the kernel");
      ASSERT_EQ(N.Checks.size(), 1u);
    }
  EXPECT_TRUE(Rejected);
  EXPECT_EQ(R.Evaluations, 1u); // only "a"
}

TEST(SearchTest, SpeedupWithinNoiseIsNotAnImprovement) {
  Fixture F("a");
  F.W.Factor = {{'a', 1.005}}; // 0.5% faster, noise bands of 1%
  F.O.Budget = 5;
  auto R = F.run();
  EXPECT_FALSE(R.Improved);
  EXPECT_EQ(R.Best, 0);
  EXPECT_EQ(R.BestSpeedup, 1);
  EXPECT_EQ(F.Eval.remeasureCalls(), 0u); // nothing to finalize
  EXPECT_NE(R.Conclusion.find("nothing written"), std::string::npos);
  EXPECT_TRUE(R.FinalSource.empty());
}

TEST(SearchTest, SuspiciousSpeedupIsRemeasuredBeforeItLeads) {
  Fixture F("ab");
  F.W.Factor = {{'b', 1.2}};
  F.O.Budget = 3;
  F.O.Finalize = false;
  F.W.install(F.Eval);
  // "a" looks 10x faster once, but re-measures at the original's speed.
  StandInEvaluator::Script Lucky{StandInEvaluator::passing(1.0), 10.0, true};
  F.Eval.set(program("a", "a"), Lucky);
  auto R = runSearch(original(), F.O, F.Pol, F.App, F.Eval);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  bool Checked = false;
  for (const SearchNode &N : R->Nodes)
    if (letters(N.Source) == "a") {
      Checked = true;
      EXPECT_TRUE(N.Remeasured);
      EXPECT_EQ(N.FirstMeasuredMs, 1.0);
      EXPECT_EQ(N.Reward.Speed.Cmp, Comparison::WithinNoise);
    }
  EXPECT_TRUE(Checked);
  EXPECT_NEAR(R->BestSpeedup, 1.2, 1e-9);
  EXPECT_EQ(letters(R->Nodes[R->Best].Source).find('a'), std::string::npos);
}

TEST(SearchTest, FinalCheckRejectsARacyBestAndFallsBack) {
  Fixture F("ab");
  F.W.Factor = {{'a', 1.5}, {'b', 1.3}};
  F.O.Budget = 2;
  F.O.Strat = Strategy::Beam; // evaluates exactly a and b
  F.W.install(F.Eval);
  StandInEvaluator::Script Racy{StandInEvaluator::passing(10 / 1.5), {}, false};
  F.Eval.set(program("a", "a"), Racy);
  auto R = runSearch(original(), F.O, F.Pol, F.App, F.Eval);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  EXPECT_TRUE(R->Improved);
  EXPECT_EQ(letters(R->FinalSource), "b");
  EXPECT_NEAR(R->FinalSpeedup, 1.3, 1e-9);
  EXPECT_EQ(F.Eval.remeasureCalls(), 2u);
  EXPECT_FALSE(R->FinalDiff.empty());
}

TEST(SearchTest, FinalCheckWritesTheBestAndItsFlags) {
  Fixture F("fa");
  F.W.Factor = {{'f', 2.0}, {'a', 1.0}};
  F.O.Budget = 4;
  auto R = F.run();
  ASSERT_TRUE(R.Improved) << R.Conclusion;
  EXPECT_NE(letters(R.FinalSource).find('f'), std::string::npos);
  EXPECT_EQ(R.FinalFlags, std::vector<std::string>{"-use_fast_math"});
  EXPECT_TRUE(R.Nodes[R.Best].ChangesPrecision);
  ASSERT_TRUE(R.Final.has_value());
  EXPECT_TRUE(R.Final->SanitizerRan);
  EXPECT_NE(R.Conclusion.find("2.00x faster"), std::string::npos)
      << R.Conclusion;
}

TEST(SearchTest, BackupModes) {
  for (BackupMode M : {BackupMode::Max, BackupMode::Mean}) {
    Fixture F("abc");
    F.W.Factor = {{'a', 2.0}, {'b', 1.0}, {'c', 0.9}};
    F.O.Backup = M;
    F.O.Budget = 7;
    auto R = F.run();
    double Max = -1e300, Sum = 0;
    unsigned N = 0;
    for (const SearchNode &Nd : R.Nodes)
      if (Nd.Evaluation) {
        Max = std::max(Max, Nd.Reward.Total);
        Sum += Nd.Reward.Total;
        ++N;
      }
    // The root holds every backup: its own (0) and one per evaluation.
    EXPECT_EQ(R.Nodes[0].Visits, N + 1);
    EXPECT_DOUBLE_EQ(R.Nodes[0].MaxValue, std::max(0.0, Max));
    EXPECT_NEAR(R.Nodes[0].ValueSum, Sum, 1e-9);
  }
}

TEST(SearchTest, EveryStrategyRespectsTheBudgetAndNeverRepeats) {
  for (Strategy S :
       {Strategy::MCTS, Strategy::Greedy, Strategy::Beam, Strategy::Random}) {
    Fixture F("abcdef");
    F.W.Factor = {{'a', 1.3}, {'c', 1.1}, {'e', 0.8}};
    F.O.Strat = S;
    F.O.Budget = 12;
    F.O.Seed = 7;
    auto R = F.run();
    EXPECT_EQ(R.Evaluations, 12u) << toString(S);
    EXPECT_EQ(evaluated(R), 12u) << toString(S);
    auto Calls = F.Eval.calls();
    EXPECT_EQ(std::set<std::string>(Calls.begin(), Calls.end()).size(),
              Calls.size())
        << toString(S);
    EXPECT_EQ(Calls.size(), 13u) << toString(S); // + the original
    EXPECT_EQ(R.Curve.size(), 12u);
    for (size_t I = 1; I < R.Curve.size(); ++I)
      EXPECT_GE(R.Curve[I].second, R.Curve[I - 1].second);
  }
}

/// The toy applier, declared concurrent: an apply on a thread other than
/// the search's waits (up to 2 s) for a candidate to be running and counts
/// whether one was.
class OverlapApplier : public Applier {
public:
  explicit OverlapApplier(const std::atomic<bool> &Running)
      : Running(Running) {}
  bool concurrent() const override { return true; }
  ApplyOutcome apply(llvm::StringRef Code, const Edit &E) override {
    if (std::this_thread::get_id() == Main)
      ++OnThread;
    if (std::this_thread::get_id() != Main) {
      ++OffThread;
      for (int I = 0; I < 2000 && !Running; ++I)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (Running)
        ++Overlapped;
    }
    std::lock_guard<std::mutex> Lock(M);
    return Applier::apply(Code, E);
  }
  const std::thread::id Main = std::this_thread::get_id();
  std::atomic<unsigned> OnThread{0}, OffThread{0}, Overlapped{0};

private:
  const std::atomic<bool> &Running;
  std::mutex M;
};

/// An original that does not build (nvcc's words), or that disagrees
/// with itself: the search stops before it starts, saying what to do.
class BrokenOriginalEvaluator : public CandidateEvaluator {
public:
  explicit BrokenOriginalEvaluator(std::string Failure)
      : Failure(std::move(Failure)) {}
  llvm::Expected<EvalOutcome> evaluateOriginal(const CandidateSpec &) override {
    EvalOutcome O;
    O.Compiled = !llvm::StringRef(Failure).starts_with("nvcc: ");
    O.Failure = Failure;
    return O;
  }
  llvm::Expected<EvalOutcome> evaluate(const CandidateSpec &) override {
    ADD_FAILURE() << "no candidate is evaluated";
    return EvalOutcome();
  }
  llvm::Expected<Remeasurement> remeasure(const CandidateSpec &,
                                          const RemeasureOptions &) override {
    return Remeasurement();
  }
  std::string describe() const override { return "broken original"; }

private:
  std::string Failure;
};

TEST(SearchTest, AnOriginalThatFailsStopsTheSearchWithAHint) {
  Applier App;
  ScriptedPolicy Pol("ab");
  SearchOptions O;
  O.FileName = "toy.cu";
  O.Budget = 5;
  BrokenOriginalEvaluator Link(
      "nvcc: undefined reference to `cublasCreate_v2'");
  auto R = runSearch(original(), O, Pol, App, Link);
  ASSERT_FALSE(bool(R));
  std::string Msg = llvm::toString(R.takeError());
  EXPECT_NE(Msg.find("(nvcc: undefined reference to `cublasCreate_v2'); fix "
                     "it (flags it needs to build at all, such as -lcublas, "
                     "go with --build-arg) first"),
            std::string::npos)
      << Msg;
  BrokenOriginalEvaluator Noisy("nondeterministic: 'y' differs");
  auto N = runSearch(original(), O, Pol, App, Noisy);
  ASSERT_FALSE(bool(N));
  Msg = llvm::toString(N.takeError());
  EXPECT_NE(Msg.find("fix it or pick a deterministic harness first"),
            std::string::npos)
      << Msg;
}

/// The stand-in, with a flag raised while a candidate runs (at least
/// 20 ms) and a count of the candidates handed over for building.
class RunningEvaluator : public CandidateEvaluator {
public:
  RunningEvaluator(StandInEvaluator &Inner, std::atomic<bool> &Running)
      : Inner(Inner), Running(Running) {}
  llvm::Expected<EvalOutcome>
  evaluateOriginal(const CandidateSpec &C) override {
    return Inner.evaluateOriginal(C);
  }
  llvm::Expected<EvalOutcome> evaluate(const CandidateSpec &C) override {
    Running = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto R = Inner.evaluate(C);
    Running = false;
    return R;
  }
  llvm::Expected<Remeasurement> remeasure(const CandidateSpec &C,
                                          const RemeasureOptions &O) override {
    return Inner.remeasure(C, O);
  }
  void prefetch(llvm::ArrayRef<CandidateSpec> Next) override {
    Prefetched += Next.size();
  }
  std::string describe() const override { return "running stand-in"; }
  std::atomic<unsigned> Prefetched{0};

private:
  StandInEvaluator &Inner;
  std::atomic<bool> &Running;
};

/// A search prefetching two edits ahead, through the applier that counts
/// where applies ran and the stand-in that says when a candidate runs.
struct PrefetchingRun {
  StandInEvaluator Inner{1, 0};
  std::atomic<bool> Running{false};
  RunningEvaluator Eval{Inner, Running};
  OverlapApplier Overlap{Running};
  llvm::Expected<SearchResult> run(const World &W, SearchOptions O,
                                   Policy &Pol) {
    W.install(Inner);
    O.Prefetch = 2;
    return runSearch(original(), O, Pol, Overlap, Eval);
  }
};

// With an applier that may run concurrently, the edits prefetched for the
// next expansions are applied off the search's thread while a candidate
// runs (the GPU's time is not spent parsing), handed to the evaluator to
// build, and the search evaluates exactly what it evaluates without
// prefetching.
TEST(SearchTest, PrefetchAppliesInTheBackgroundWhileACandidateRuns) {
  World W;
  W.Factor = {{'a', 1.5}, {'b', 1.2}, {'c', 0.8}, {'d', 1.1}};
  SearchOptions O;
  O.FileName = "toy.cu";
  O.Budget = 10;
  ScriptedPolicy Pol("abcdef");

  StandInEvaluator Plain{1, 0};
  W.install(Plain);
  Applier App;
  O.Prefetch = 0;
  auto Without = runSearch(original(), O, Pol, App, Plain);
  ASSERT_TRUE(bool(Without)) << llvm::toString(Without.takeError());

  PrefetchingRun P;
  auto With = P.run(W, O, Pol);
  ASSERT_TRUE(bool(With)) << llvm::toString(With.takeError());

  EXPECT_GT(P.Overlap.OffThread.load(), 0u);
  EXPECT_GT(P.Overlap.Overlapped.load(), 0u);
  EXPECT_GT(P.Eval.Prefetched.load(), 0u);
  EXPECT_EQ(P.Inner.calls(), Plain.calls());
  EXPECT_EQ(With->BestSpeedup, Without->BestSpeedup);
}

/// (evaluation, program key) of every evaluated node, in order.
std::vector<std::pair<unsigned, std::string>>
evaluatedInOrder(const SearchResult &R) {
  std::vector<std::pair<unsigned, std::string>> Out;
  for (const SearchNode &N : R.Nodes)
    if (N.Evaluation)
      Out.emplace_back(N.Evaluation, N.Key);
  llvm::sort(Out);
  return Out;
}

// Random search draws its next node and edit from its generator; the
// prefetch makes the same draws on a copy, so some expansions find their
// edit applied already, and the search evaluates the same programs in the
// same order as without prefetching.
TEST(SearchTest, RandomSearchPrefetchesItsNextDraw) {
  World W;
  W.Factor = {{'a', 1.5}, {'b', 1.2}, {'c', 0.8}, {'d', 1.1}, {'e', 1.3}};
  SearchOptions O;
  O.FileName = "toy.cu";
  O.Budget = 14;
  O.Strat = Strategy::Random;
  O.Seed = 7;
  ScriptedPolicy Pol("abcdefg");

  StandInEvaluator Plain{1, 0};
  W.install(Plain);
  std::atomic<bool> NeverRunning{false};
  OverlapApplier Sync(NeverRunning);
  O.Prefetch = 0;
  auto Without = runSearch(original(), O, Pol, Sync, Plain);
  ASSERT_TRUE(bool(Without)) << llvm::toString(Without.takeError());
  EXPECT_EQ(Sync.OffThread.load(), 0u);

  PrefetchingRun P;
  auto With = P.run(W, O, Pol);
  ASSERT_TRUE(bool(With)) << llvm::toString(With.takeError());

  EXPECT_EQ(evaluatedInOrder(*With), evaluatedInOrder(*Without));
  EXPECT_EQ(With->BestSpeedup, Without->BestSpeedup);
  EXPECT_GT(P.Eval.Prefetched.load(), 0u);
  EXPECT_GT(P.Overlap.Overlapped.load(), 0u);
  // Fewer applies wait on the search's thread than without prefetching:
  // 10 of 15 here, where prefetching the parent's first untried edits (as
  // for MCTS) leaves 12; a draw of a node not yet proposed to, or of the
  // candidate still running, cannot be guessed.
  EXPECT_LE(P.Overlap.OnThread.load(), 10u)
      << P.Overlap.OnThread.load() << " of " << Sync.OnThread.load();
}

TEST(SearchTest, AnOriginalThatFailsIsAnError) {
  Fixture F("a");
  F.W.install(F.Eval);
  F.Eval.set(original(),
             {StandInEvaluator::verifyFailure("nondeterministic: buffer 'h'"),
              std::nullopt, true});
  auto R = runSearch(original(), F.O, F.Pol, F.App, F.Eval);
  ASSERT_FALSE(bool(R));
  EXPECT_NE(llvm::toString(R.takeError()).find("nondeterministic"),
            std::string::npos);
}

TEST(SearchTest, NoBudgetIsAnError) {
  Fixture F("a");
  F.O.Budget = 0;
  F.W.install(F.Eval);
  auto R = runSearch(original(), F.O, F.Pol, F.App, F.Eval);
  ASSERT_FALSE(bool(R));
  llvm::consumeError(R.takeError());
}

} // namespace
