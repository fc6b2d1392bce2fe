//===- EvalCacheTest.cpp - Evaluations shared between search runs ---------===//

#include "optiml/Search/EvalCache.h"
#include "ToyWorld.h"
#include "optiml/Search/Journal.h"
#include "optiml/Search/Search.h"
#include "optiml/Support/FileUtil.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <set>

using namespace llvm;
using namespace optiml;
using namespace optiml::toy;

namespace {

struct TempDir {
  TempDir() { sys::fs::createUniqueDirectory("optiml-evalcache", Path); }
  ~TempDir() { sys::fs::remove_directories(Path); }
  std::string sub(StringRef Name) const {
    SmallString<128> P(Path);
    sys::path::append(P, Name);
    return std::string(P);
  }
  SmallString<128> Path;
};

EvalCache openCache(StringRef Dir, std::string Context = "ctx") {
  auto C = EvalCache::open(Dir, std::move(Context));
  EXPECT_TRUE(bool(C));
  if (!C) {
    consumeError(C.takeError());
    return std::move(*EvalCache::open(Dir, "fallback"));
  }
  return std::move(*C);
}

/// One search of the toy world through an evaluation cache.
struct CachedRun {
  World W;
  StandInEvaluator Eval{/*Seed=*/1, /*NoisePct=*/0};
  Applier App;
  ScriptedPolicy Pol{"abcde"};
  SearchOptions O;
  std::unique_ptr<CachingEvaluator> Caching;

  CachedRun(StringRef CacheDir, Strategy S, uint64_t Seed,
            std::string Context = "ctx") {
    W.Factor = {{'a', 1.3}, {'c', 1.1}, {'d', 0.8}};
    W.install(Eval);
    O.FileName = "toy.cu";
    O.Budget = 8;
    O.Prefetch = 0;
    O.Strat = S;
    O.Seed = Seed;
    Caching = std::make_unique<CachingEvaluator>(
        Eval, openCache(CacheDir, std::move(Context)));
  }
  SearchResult run() {
    auto R = runSearch(original(), O, Pol, App, *Caching);
    if (!R) {
      ADD_FAILURE() << toString(R.takeError());
      return SearchResult();
    }
    return std::move(*R);
  }
};

std::set<std::string> evaluatedKeys(const SearchResult &R) {
  std::set<std::string> K;
  for (const SearchNode &N : R.Nodes)
    if (N.Evaluation)
      K.insert(N.Key);
  return K;
}

TEST(EvalCacheTest, SecondStrategyReusesTheFirstsMeasurements) {
  TempDir D;
  std::string Cache = D.sub("cache");
  CachedRun First(Cache, Strategy::MCTS, 1);
  SearchResult R1 = First.run();
  EXPECT_EQ(R1.Evaluations, 8u);
  EXPECT_EQ(R1.EvaluationsCached, 0u);
  EXPECT_EQ(First.Caching->hits(), 0u);

  CachedRun Second(Cache, Strategy::Greedy, 2);
  SearchResult R2 = Second.run();
  // The budget counts cached evaluations like the others.
  EXPECT_EQ(R2.Evaluations, 8u);
  std::set<std::string> Seen = evaluatedKeys(R1), Again = evaluatedKeys(R2);
  unsigned Shared = 0;
  for (const std::string &K : Again)
    Shared += Seen.count(K);
  EXPECT_GT(Shared, 0u); // both start with the first level
  EXPECT_EQ(R2.EvaluationsCached, Shared);
  // Cached programs never reach the evaluator; the original always does.
  std::vector<std::string> Calls = Second.Eval.calls();
  ASSERT_FALSE(Calls.empty());
  EXPECT_EQ(Calls.front(), sourceKey(original()));
  EXPECT_EQ(Calls.size(), 1 + 8 - Shared);
  for (size_t I = 1; I < Calls.size(); ++I)
    EXPECT_EQ(Seen.count(Calls[I]), 0u) << Calls[I];
  // Cached nodes are marked and judged like fresh ones.
  for (const SearchNode &N : R2.Nodes) {
    if (!N.Evaluation)
      continue;
    EXPECT_EQ(N.Outcome.Cached, Seen.count(N.Key) == 1) << N.Summary;
    auto Fresh = First.W.outcome(N.Source).Outcome;
    EXPECT_EQ(N.Outcome.passed(), Fresh.passed()) << N.Summary;
  }
}

TEST(EvalCacheTest, SameRunTwiceEvaluatesOnlyTheOriginal) {
  TempDir D;
  std::string Cache = D.sub("cache");
  CachedRun First(Cache, Strategy::Random, 3);
  SearchResult R1 = First.run();
  CachedRun Second(Cache, Strategy::Random, 3);
  SearchResult R2 = Second.run();
  EXPECT_EQ(Second.Eval.calls().size(), 1u);
  EXPECT_EQ(R2.EvaluationsCached, R2.Evaluations);
  EXPECT_EQ(evaluatedKeys(R1), evaluatedKeys(R2));
  EXPECT_DOUBLE_EQ(R1.BestSpeedup, R2.BestSpeedup);
  // The final check is cached too, and says so.
  ASSERT_TRUE(R2.Final.has_value());
  EXPECT_TRUE(R2.Final->Cached);
  EXPECT_GT(First.Eval.remeasureCalls(), 0u);
  EXPECT_EQ(Second.Eval.remeasureCalls(), 0u);
}

TEST(EvalCacheTest, AnotherContextSharesNothing) {
  TempDir D;
  std::string Cache = D.sub("cache");
  CachedRun First(Cache, Strategy::MCTS, 1, "original sha256=1");
  First.run();
  CachedRun Second(Cache, Strategy::MCTS, 1, "original sha256=2");
  SearchResult R2 = Second.run();
  EXPECT_EQ(R2.EvaluationsCached, 0u);
  EXPECT_EQ(Second.Caching->hits(), 0u);
  EXPECT_EQ(Second.Eval.calls().size(), 9u);
}

TEST(EvalCacheTest, KeyIsTheNormalizedProgramItsFlagsAndPrecision) {
  TempDir D;
  EvalCache C = openCache(D.sub("cache"));
  CandidateSpec A{"__global__ void k() {  }  // v1\n", {}, false};
  CandidateSpec Spaced{"__global__   void k()\n{ }\n/* other */", {}, false};
  CandidateSpec Flagged{A.Source, {"-use_fast_math"}, false};
  CandidateSpec Loose{A.Source, {}, true};
  CandidateSpec Other{"__global__ void k2() {}\n", {}, false};
  EXPECT_EQ(C.key(A), C.key(Spaced));
  EXPECT_NE(C.key(A), C.key(Flagged));
  EXPECT_NE(C.key(A), C.key(Loose));
  EXPECT_NE(C.key(A), C.key(Other));
  EXPECT_NE(C.key(A), C.key(A, RemeasureOptions{}));
  EXPECT_NE(C.key(A, RemeasureOptions{3, 50, false}),
            C.key(A, RemeasureOptions{5, 100, true}));
  EvalCache Elsewhere = openCache(D.sub("cache"), "other context");
  EXPECT_NE(C.key(A), Elsewhere.key(A));

  EvalOutcome O = StandInEvaluator::passing(2.5, 1.5);
  O.Metrics["dram__bytes_read.sum"] = 1e6;
  O.Bound = "memory-bound";
  O.Baseline = StandInEvaluator::passing(5.0).Time;
  ASSERT_FALSE(bool(C.lookup(A)));
  ASSERT_FALSE(C.store(A, O));
  auto Back = C.lookup(Spaced);
  ASSERT_TRUE(Back.has_value());
  EXPECT_TRUE(Back->Cached);
  EXPECT_DOUBLE_EQ(Back->Time.MedianMs, 2.5);
  EXPECT_DOUBLE_EQ(Back->Time.NoisePct, 1.5);
  EXPECT_EQ(Back->Bound, "memory-bound");
  EXPECT_DOUBLE_EQ(Back->Metrics["dram__bytes_read.sum"], 1e6);
  ASSERT_TRUE(Back->Baseline.has_value());
  EXPECT_DOUBLE_EQ(Back->Baseline->MedianMs, 5.0);
  EXPECT_FALSE(C.lookup(Flagged).has_value());
  EXPECT_FALSE(Elsewhere.lookup(A).has_value());

  Remeasurement R;
  R.Original = StandInEvaluator::passing(5.0).Time;
  R.Candidate = StandInEvaluator::passing(2.0).Time;
  R.SanitizerRan = true;
  R.SanitizerDetail = "clean";
  RemeasureOptions RO{5, 100, true};
  ASSERT_FALSE(C.store(A, RO, R));
  auto RB = C.lookup(A, RO);
  ASSERT_TRUE(RB.has_value());
  EXPECT_TRUE(RB->Cached);
  EXPECT_DOUBLE_EQ(RB->Candidate.MedianMs, 2.0);
  EXPECT_TRUE(RB->SanitizerRan);
  EXPECT_FALSE(C.lookup(A, RemeasureOptions{3, 100, true}).has_value());
}

TEST(EvalCacheTest, DamagedEntryIsAMissAndIsRewritten) {
  TempDir D;
  EvalCache C = openCache(D.sub("cache"));
  CandidateSpec A{"program a\n", {}, false};
  std::string Path = D.sub("cache") + "/" + C.key(A) + ".json";
  ASSERT_FALSE(writeFileAtomically(Path, "{\"version\": 3, \"trunc"));
  EXPECT_FALSE(C.lookup(A).has_value());
  ASSERT_FALSE(writeFileAtomically(
      Path, "{\"version\": \"optiml-eval-cache/1\", \"context\": \"ctx\", "
            "\"kind\": \"evaluate\", \"outcome\": {\"compiled\": \"yes\"}}"));
  EXPECT_FALSE(C.lookup(A).has_value());

  StandInEvaluator Inner;
  Inner.set(A.Source, {StandInEvaluator::passing(1.0), std::nullopt, true});
  CachingEvaluator E(Inner, openCache(D.sub("cache")));
  auto O = E.evaluate(A);
  ASSERT_TRUE(bool(O));
  EXPECT_FALSE(O->Cached);
  EXPECT_EQ(E.misses(), 1u);
  auto O2 = E.evaluate(A);
  ASSERT_TRUE(bool(O2));
  EXPECT_TRUE(O2->Cached);
  EXPECT_EQ(E.hits(), 1u);
  EXPECT_EQ(Inner.calls().size(), 1u);
}

TEST(EvalCacheTest, OpenRejectsAFile) {
  TempDir D;
  std::string F = D.sub("file");
  ASSERT_FALSE(writeFileAtomically(F, "x"));
  auto C = EvalCache::open(F, "ctx");
  ASSERT_FALSE(bool(C));
  EXPECT_EQ(toString(C.takeError()),
            "--eval-cache: '" + F + "' is not a directory");
}

TEST(EvalCacheTest, JournalMarksCachedNodesAndKeepsTheirBaseline) {
  SearchNode N;
  N.Id = 3;
  N.Parent = 0;
  N.Status = NodeStatus::Evaluated;
  N.Evaluation = 2;
  N.Outcome = StandInEvaluator::passing(2.0);
  N.Outcome.Cached = true;
  N.Outcome.Baseline = StandInEvaluator::passing(4.0, 0.5).Time;
  std::string Line = nodeToJSON(N);
  EXPECT_NE(Line.find("\"cached\":true"), std::string::npos) << Line;
  auto Back = nodeFromJSON(Line);
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
  EXPECT_TRUE(Back->Outcome.Cached);
  ASSERT_TRUE(Back->Outcome.Baseline.has_value());
  EXPECT_DOUBLE_EQ(Back->Outcome.Baseline->MedianMs, 4.0);
  EXPECT_DOUBLE_EQ(Back->Outcome.Baseline->NoisePct, 0.5);
  // A node written before these fields existed still reads.
  std::string Old = Line;
  size_t P = Old.find("\"cached\":true,");
  ASSERT_NE(P, std::string::npos);
  Old.erase(P, std::string("\"cached\":true,").size());
  auto OldBack = nodeFromJSON(Old);
  ASSERT_TRUE(bool(OldBack)) << toString(OldBack.takeError());
  EXPECT_FALSE(OldBack->Outcome.Cached);
}

TEST(EvalCacheTest, CandidatesAreComparedWithTheBaselineTheyCarry) {
  // 'a' halves the time against the original's 10 ms, but the evaluator
  // re-timed the original at 5.1 ms next to it: no speedup.
  World W;
  StandInEvaluator Eval{1, 0};
  W.install(Eval);
  EvalOutcome A = StandInEvaluator::passing(5.0, 1.0);
  A.Baseline = StandInEvaluator::passing(5.1, 1.0).Time;
  Eval.set(program("a", "a"), {A, std::nullopt, true});
  EvalOutcome B = StandInEvaluator::passing(5.0, 1.0);
  Eval.set(program("b", "b"), {B, std::nullopt, true});
  Applier App;
  ScriptedPolicy Pol("ab");
  SearchOptions O;
  O.FileName = "toy.cu";
  O.Budget = 2;
  O.Prefetch = 0;
  O.Finalize = false;
  auto R = runSearch(original(), O, Pol, App, Eval);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  for (const SearchNode &N : R->Nodes) {
    if (letters(N.Source) == "a")
      EXPECT_NE(N.Reward.Speed.Cmp, Comparison::Faster);
    if (letters(N.Source) == "b") {
      EXPECT_EQ(N.Reward.Speed.Cmp, Comparison::Faster);
      EXPECT_NEAR(N.Reward.Speed.Raw, 2.0, 1e-9);
    }
  }
}

TEST(EvalCacheTest, SummaryNamesTheBestAndWhenItWasFound) {
  TempDir D;
  CachedRun Run(D.sub("cache"), Strategy::Greedy, 1);
  SearchResult R = Run.run();
  ASSERT_TRUE(R.Improved);
  EXPECT_GT(R.BestEvaluation, 0u);
  EXPECT_EQ(R.BestEvaluation, R.Nodes[R.Best].Evaluation);
  JournalHeader H;
  H.File = "toy.cu";
  H.Strategy = "greedy";
  H.Policy = "scripted";
  H.Seed = 1;
  H.Budget = 8;
  std::string J = summaryToJSON(R, H, "stand-in");
  EXPECT_NE(J.find("\"strategy\": \"greedy\""), std::string::npos) << J;
  EXPECT_NE(J.find("\"best_evaluation\": " + std::to_string(R.BestEvaluation)),
            std::string::npos)
      << J;
  EXPECT_NE(J.find("\"evaluations_cached\": 0"), std::string::npos) << J;
  EXPECT_NE(J.find("\"improved\": true"), std::string::npos) << J;
  EXPECT_NE(J.find("\"final_speedup\""), std::string::npos) << J;
}

} // namespace
