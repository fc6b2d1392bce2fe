//===- GpuEvaluatorTest.cpp - The original evaluated once per search ------===//
//
// The GPU evaluator over the real Eval library with the Eval tests' fake
// nvcc and fake programs (each logs "<name> <probe mode>" when it runs), so
// the tests count how often the original runs.
//
//===----------------------------------------------------------------------===//

#include "../Eval/EvalTestUtil.h"
#include "optiml/Search/EvalAdapter.h"
#include "llvm/Support/MemoryBuffer.h"
#include "gtest/gtest.h"
#include <map>

using namespace llvm;
using namespace optiml;
using namespace optiml::testing;

namespace {

KernelModel scaleModel() {
  KernelModel M;
  M.File = "scale.cu";
  KernelInfo K;
  K.Name = K.QualifiedName = "scale";
  ParamInfo N;
  N.Index = 0;
  N.Name = "n";
  N.ElementType = "int";
  N.ElementSize = 4;
  ParamInfo Y;
  Y.Index = 1;
  Y.Name = "y";
  Y.ElementType = "float";
  Y.ElementSize = 4;
  Y.IsPointer = Y.IsFloat = true;
  K.Params = {N, Y};
  LaunchSite L;
  L.Id = "scale/launch0";
  L.Kernel = "scale";
  K.Launches.push_back(L);
  M.Kernels.push_back(K);
  return M;
}

ProbeResult result(ProbeMode Mode, double Ms) {
  ProbeResult R;
  R.Mode = Mode;
  LaunchRecord L;
  L.Kernel = "scale(int, float *)";
  L.Verified = Mode == ProbeMode::Reference || Mode == ProbeMode::Candidate;
  if (L.Verified) {
    BufferCheck B;
    B.Param = 1;
    B.Bytes = 4096;
    L.Buffers.push_back(B);
  }
  // Candidate runs of a search time the launch once it verifies.
  if (Mode == ProbeMode::Time || Mode == ProbeMode::Candidate)
    L.TimesMs = {Ms, Ms, Ms, Ms};
  if (Mode == ProbeMode::Metrics)
    L.Metrics = {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 30}};
  R.Launches.push_back(L);
  return R;
}

class GpuEvaluatorTest : public ::testing::Test {
protected:
  void SetUp() override {
    BuildOptions BO;
    BO.Nvcc = writeFakeNvcc(D, D.file("count"));
    BO.CacheDir = D.file("cache");
    auto Bu = Builder::create(BO);
    ASSERT_TRUE(bool(Bu)) << toString(Bu.takeError());
    B = std::move(*Bu);
    Model = scaleModel();
    GO.OriginalPath = D.write("scale.cu", program("orig", 1.0));
    GO.Model = &Model;
    GO.Eval.Devices = {0};
    GO.Eval.Gpus = GpuQuery{{GpuInfo{0, "Fake GPU", "sm_90", 1}}, ""};
    GO.Eval.Runner.ProbeLibrary = D.write("liboptiml-probe.so", "");
    GO.Eval.Runner.CudaPath = D.file("no-cuda");
    GO.Eval.Runner.TimeoutSeconds = 20;
    GO.Eval.RunDir = D.file("run/eval");
    GO.Eval.KeepRunDir = true;
    GO.RetimeEvery = 0;
  }

  /// A program's text: logs its runs, answers with canned results whose
  /// kernel time is \p Ms.
  std::string program(StringRef Name, double Ms) {
    for (ProbeMode M : {ProbeMode::Reference, ProbeMode::Candidate,
                        ProbeMode::Time, ProbeMode::Metrics})
      D.write((Name + "/" + toString(M) + ".json").str(),
              writeProbeResult(result(M, Ms)));
    return "#!/bin/sh\n"
           "cfg=\"$OPTIML_PROBE_CONFIG\"\n"
           "mode=$(sed -n 's/.*\"mode\": *\"\\([a-z]*\\)\".*/\\1/p' "
           "\"$cfg\" | head -n 1)\n"
           "out=$(sed -n 's/.*\"resultPath\": *\"\\([^\"]*\\)\".*/"
           "\\1/p' \"$cfg\" | head -n 1)\n"
           "echo \"" +
           Name.str() + " $mode\" >> \"" + D.file("runs.log") +
           "\"\n"
           "cp \"" +
           D.file(Name) +
           "/$mode.json\" \"$out\"\n"
           "echo done\n";
  }

  CandidateSpec candidate(StringRef Name, double Ms) {
    return CandidateSpec{program(Name, Ms), {}, false};
  }

  unsigned runs(StringRef What) {
    auto Buf = MemoryBuffer::getFile(D.file("runs.log"));
    if (!Buf)
      return 0;
    SmallVector<StringRef> Lines;
    (*Buf)->getBuffer().split(Lines, '\n', -1, false);
    return llvm::count(Lines, What);
  }

  EvalOutcome eval(GpuEvaluator &E, const CandidateSpec &C) {
    auto O = E.evaluate(C);
    if (!O) {
      ADD_FAILURE() << toString(O.takeError());
      return EvalOutcome();
    }
    return std::move(*O);
  }

  TempDir D;
  std::unique_ptr<Builder> B;
  KernelModel Model;
  GpuEvaluatorOptions GO;
};

TEST_F(GpuEvaluatorTest, TheOriginalIsEvaluatedOncePerSearch) {
  GpuEvaluator E(*B, GO);
  auto Orig = E.evaluateOriginal(CandidateSpec{"", {}, false});
  ASSERT_TRUE(bool(Orig)) << toString(Orig.takeError());
  EXPECT_TRUE(Orig->passed()) << Orig->Failure;
  EXPECT_DOUBLE_EQ(Orig->Time.MedianMs, 1.0);
  for (int I = 0; I < 4; ++I) {
    EvalOutcome O = eval(E, candidate(("slow" + Twine(I)).str(), 2.0));
    EXPECT_TRUE(O.passed()) << O.Failure;
    EXPECT_DOUBLE_EQ(O.Time.MedianMs, 2.0);
    ASSERT_TRUE(O.Baseline.has_value());
    EXPECT_DOUBLE_EQ(O.Baseline->MedianMs, 1.0);
  }
  // Reference, self-check and timing of the original: once each, and the
  // baseline timed once more the way candidates are timed (in a
  // verification run).
  EXPECT_EQ(runs("orig reference"), 1u);
  EXPECT_EQ(runs("orig candidate"), 2u);
  EXPECT_EQ(runs("orig time"), 1u);
  // A candidate: one verification run that also times it, one metrics run.
  EXPECT_EQ(runs("slow0 candidate"), 1u);
  EXPECT_EQ(runs("slow3 candidate"), 1u);
  EXPECT_EQ(runs("slow3 time"), 0u);
  EXPECT_EQ(runs("slow3 metrics"), 1u);
  EXPECT_EQ(E.referenceRuns(), 1u);
  EXPECT_EQ(E.originalTimings(), 2u);
  // The reference lives beside the candidates' runs.
  EXPECT_TRUE(sys::fs::is_directory(D.file("run/eval/original/snapshots")));
}

TEST_F(GpuEvaluatorTest, AWrongCandidateIsStillCaught) {
  GpuEvaluator E(*B, GO);
  ASSERT_TRUE(bool(E.evaluateOriginal(CandidateSpec{"", {}, false})));
  CandidateSpec Bad = candidate("bad", 0.5);
  ProbeResult R = result(ProbeMode::Candidate, 0.5);
  R.Launches[0].Buffers[0].Status = "mismatch";
  R.Launches[0].Buffers[0].Mismatches = 4;
  D.write("bad/candidate.json", writeProbeResult(R));
  EvalOutcome O = eval(E, Bad);
  EXPECT_TRUE(O.Compiled);
  EXPECT_FALSE(O.Verified);
  EXPECT_NE(O.Failure.find("mismatch"), std::string::npos) << O.Failure;
  EXPECT_EQ(runs("orig reference"), 1u);
  // Nothing more is run for a wrong candidate.
  EXPECT_EQ(runs("bad candidate"), 1u);
  EXPECT_EQ(runs("bad time"), 0u);
  EXPECT_EQ(runs("bad metrics"), 0u);
}

TEST_F(GpuEvaluatorTest, TheFastestCandidateYetIsComparedWithAFreshBaseline) {
  GpuEvaluator E(*B, GO);
  ASSERT_TRUE(bool(E.evaluateOriginal(CandidateSpec{"", {}, false})));
  // The original's verification runs: the self-check, then the timings of
  // the baseline (at the start and for each new leader).
  EXPECT_EQ(runs("orig candidate"), 2u);
  EvalOutcome A = eval(E, candidate("a", 0.5)); // fastest yet: re-time
  EXPECT_EQ(runs("orig candidate"), 3u);
  EXPECT_EQ(E.originalTimings(), 3u);
  ASSERT_FALSE(A.Notes.empty());
  EXPECT_NE(A.Notes.back().find("original re-timed (fastest candidate yet)"),
            std::string::npos)
      << A.Notes.back();
  eval(E, candidate("b", 0.6)); // faster than the original, not than 'a'
  EXPECT_EQ(runs("orig candidate"), 3u);
  eval(E, candidate("c", 3.0)); // slower
  EXPECT_EQ(runs("orig candidate"), 3u);
  eval(E, candidate("d", 0.4)); // a new leader
  EXPECT_EQ(runs("orig candidate"), 4u);
  EXPECT_EQ(runs("orig time"), 1u); // the reference's own timing only
  EXPECT_EQ(runs("orig reference"), 1u);
}

TEST_F(GpuEvaluatorTest, TheBaselineIsRetimedPeriodically) {
  GO.RetimeEvery = 2;
  GpuEvaluator E(*B, GO);
  ASSERT_TRUE(bool(E.evaluateOriginal(CandidateSpec{"", {}, false})));
  for (int I = 0; I < 5; ++I)
    eval(E, candidate(("s" + Twine(I)).str(), 2.0));
  // The self-check, then at the start, after 2 and after 4.
  EXPECT_EQ(runs("orig candidate"), 4u);
  EXPECT_EQ(runs("orig reference"), 1u);
}

TEST_F(GpuEvaluatorTest, AResumedSearchPreparesTheReferenceOnFirstUse) {
  GpuEvaluator E(*B, GO);
  EvalOutcome O = eval(E, candidate("a", 2.0)); // no evaluateOriginal
  EXPECT_TRUE(O.passed()) << O.Failure;
  ASSERT_TRUE(O.Baseline.has_value());
  EXPECT_DOUBLE_EQ(O.Baseline->MedianMs, 1.0);
  eval(E, candidate("b", 2.0));
  EXPECT_EQ(runs("orig reference"), 1u);
  EXPECT_EQ(E.referenceRuns(), 1u);
}

TEST_F(GpuEvaluatorTest, AnUnusableReferenceIsNotPreparedAgain) {
  // The original disagrees with itself.
  ProbeResult Self = result(ProbeMode::Candidate, 1.0);
  Self.Launches[0].Buffers[0].Status = "mismatch";
  Self.Launches[0].Buffers[0].Mismatches = 9;
  Self.Launches[0].Buffers[0].MaxAbsErr = 1.0;
  Self.Launches[0].Buffers[0].MaxRelErr = 0.5;
  D.write("orig/candidate.json", writeProbeResult(Self));
  GpuEvaluator E(*B, GO);
  auto Orig = E.evaluateOriginal(CandidateSpec{"", {}, false});
  ASSERT_TRUE(bool(Orig)) << toString(Orig.takeError());
  EXPECT_FALSE(Orig->passed());
  EXPECT_NE(Orig->Failure.find("nondeterministic"), std::string::npos)
      << Orig->Failure;
  EvalOutcome O = eval(E, candidate("a", 0.5));
  EXPECT_FALSE(O.Verified);
  EXPECT_EQ(E.referenceRuns(), 1u);
  EXPECT_EQ(runs("orig reference"), 2u); // prepared once, then in full
  auto R = E.remeasure(candidate("a", 0.5), RemeasureOptions{1, 10, false});
  ASSERT_FALSE(bool(R));
  EXPECT_NE(toString(R.takeError()).find("does not pass its own evaluation"),
            std::string::npos);
}

/// The original: its two runs disagree at launch 9 of scale (its last) when
/// the last launch is verified, and with \p FirstToo at launch 0 as well.
void noisyOriginal(TempDir &D, std::string Program, bool FirstToo) {
  ProbeResult Self = result(ProbeMode::Candidate, 1.0);
  LaunchRecord Last = Self.Launches[0];
  Last.Ordinal = 9;
  auto Noise = [](BufferCheck &B) {
    B.Status = "mismatch";
    B.Mismatches = 9;
    B.FirstDiffIndex = 2;
    B.MaxAbsErr = 1.0;
    B.MaxRelErr = 0.5;
  };
  Noise(Last.Buffers[0]);
  if (FirstToo)
    Noise(Self.Launches[0].Buffers[0]);
  Self.Launches.push_back(Last);
  D.write("orig/candidate-last.json", writeProbeResult(Self));
  Program.insert(Program.find("cp \""),
                 "if [ \"$mode\" = candidate ] && grep -q '\"verifyLast\": "
                 "*true' \"$cfg\"; then mode=candidate-last; fi\n");
  D.write("scale.cu", Program);
}

TEST_F(GpuEvaluatorTest,
       AnOriginalNoisyOnlyAtItsLastLaunchIsVerifiedOnItsFirst) {
  noisyOriginal(D, program("orig", 1.0), /*FirstToo=*/false);
  GO.DropNoisyLast = true;
  std::vector<std::string> Notes;
  GO.OnDropLast = [&Notes](StringRef N) { Notes.push_back(N.str()); };
  GpuEvaluator E(*B, GO);
  std::string Strict = E.cacheContext();
  EXPECT_TRUE(E.verification().LastLaunch);
  auto Orig = E.evaluateOriginal(CandidateSpec{"", {}, false});
  ASSERT_TRUE(bool(Orig)) << toString(Orig.takeError());
  EXPECT_TRUE(Orig->passed()) << Orig->Failure;
  ASSERT_EQ(Notes.size(), 1u);
  EXPECT_NE(Notes[0].find("only at the last launch of its targets (scale "
                          "launch 9: 'y' (parameter 1, float): two reference "
                          "runs differ in 9 element(s)"),
            std::string::npos)
      << Notes[0];
  EXPECT_NE(Notes[0].find("its first 3 launch(es) of each target agree"),
            std::string::npos)
      << Notes[0];
  VerificationScope VS = E.verification();
  EXPECT_FALSE(VS.LastLaunch);
  EXPECT_EQ(VS.Dropped.rfind("scale launch 9: 'y'", 0), 0u) << VS.Dropped;
  // The reference is made again without the last launch.
  EXPECT_EQ(E.referenceRuns(), 2u);
  EXPECT_EQ(runs("orig reference"), 2u);
  EXPECT_NE(E.cacheContext(), Strict);
  EXPECT_NE(E.cacheContext().find("verify-last=0"), std::string::npos);
  EXPECT_NE(E.describe().find("; verifies the first 3 launch(es) of each "
                              "target, not the last (dropped: "),
            std::string::npos)
      << E.describe();
  // Candidates and the final check verify the same launches.
  EXPECT_TRUE(eval(E, candidate("a", 0.5)).passed());
  auto Config = MemoryBuffer::getFile(D.file("run/eval/candidate.config.json"));
  ASSERT_TRUE(bool(Config));
  EXPECT_NE((*Config)->getBuffer().find("\"verifyLast\": false"),
            StringRef::npos);
  auto R = E.remeasure(candidate("a", 0.5), RemeasureOptions{1, 10, false});
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_TRUE(R->Verified) << R->Failure;
  EXPECT_EQ(Notes.size(), 1u);
}

TEST_F(GpuEvaluatorTest, AnOriginalNoisyAtItsLastLaunchIsRefusedWhenStrict) {
  // Without DropNoisyLast (an explicit --verify-last=true, a resumed search).
  noisyOriginal(D, program("orig", 1.0), /*FirstToo=*/false);
  bool Told = false;
  GO.OnDropLast = [&Told](StringRef) { Told = true; };
  GpuEvaluator E(*B, GO);
  auto Orig = E.evaluateOriginal(CandidateSpec{"", {}, false});
  ASSERT_TRUE(bool(Orig)) << toString(Orig.takeError());
  EXPECT_FALSE(Orig->passed());
  EXPECT_NE(Orig->Failure.find("nondeterministic: scale launch 9"),
            std::string::npos)
      << Orig->Failure;
  EXPECT_FALSE(Told);
  EXPECT_TRUE(E.verification().LastLaunch);
  EXPECT_EQ(E.referenceRuns(), 1u);
}

TEST_F(GpuEvaluatorTest, AnOriginalNoisyAtItsFirstLaunchesIsRefused) {
  // Dropping the last launch would not help: nothing is dropped.
  noisyOriginal(D, program("orig", 1.0), /*FirstToo=*/true);
  GO.DropNoisyLast = true;
  bool Told = false;
  GO.OnDropLast = [&Told](StringRef) { Told = true; };
  GpuEvaluator E(*B, GO);
  auto Orig = E.evaluateOriginal(CandidateSpec{"", {}, false});
  ASSERT_TRUE(bool(Orig)) << toString(Orig.takeError());
  EXPECT_FALSE(Orig->passed());
  EXPECT_NE(Orig->Failure.find("nondeterministic: scale launch 0"),
            std::string::npos)
      << Orig->Failure;
  EXPECT_FALSE(Told);
  EXPECT_TRUE(E.verification().LastLaunch);
  EXPECT_EQ(E.referenceRuns(), 1u);
  EXPECT_EQ(E.cacheContext().find("verify-last=0"), std::string::npos);
}

TEST_F(GpuEvaluatorTest, TheFinalCheckTimesTheOriginalOnlyInterleaved) {
  GpuEvaluator E(*B, GO);
  ASSERT_TRUE(bool(E.evaluateOriginal(CandidateSpec{"", {}, false})));
  auto R = E.remeasure(candidate("w", 0.5), RemeasureOptions{3, 50, false});
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_TRUE(R->Verified) << R->Failure;
  EXPECT_DOUBLE_EQ(R->Original.MedianMs, 1.0);
  EXPECT_DOUBLE_EQ(R->Candidate.MedianMs, 0.5);
  EXPECT_EQ(runs("orig reference"), 1u);
  EXPECT_EQ(runs("orig candidate"), 2u); // self-check, baseline
  EXPECT_EQ(runs("orig time"), 4u);
  EXPECT_EQ(runs("w candidate"), 1u); // verified once, then timed
  EXPECT_EQ(runs("w time"), 3u);
  EXPECT_EQ(runs("w metrics"), 0u);
}

TEST_F(GpuEvaluatorTest, TheCacheContextNamesWhatTheVerdictDependsOn) {
  GpuEvaluator E(*B, GO);
  std::string C = E.cacheContext();
  EXPECT_NE(C.find("original-sha256="), std::string::npos) << C;
  EXPECT_NE(C.find("gpu=Fake GPU sm_90"), std::string::npos) << C;
  GpuEvaluatorOptions Args = GO;
  Args.Eval.Runner.ProgramArgs = {"4096"};
  EXPECT_NE(GpuEvaluator(*B, Args).cacheContext(), C);
  // A working directory is in the context; none adds nothing (keys written
  // before --workdir existed stay valid).
  EXPECT_EQ(C.find("workdir="), std::string::npos) << C;
  GpuEvaluatorOptions Dir = GO;
  Dir.Eval.Runner.ProgramWorkDir = "/data/run";
  EXPECT_NE(GpuEvaluator(*B, Dir).cacheContext().find("workdir=/data/run"),
            std::string::npos);
  EXPECT_EQ(C.find("source="), std::string::npos) << C;
  {
    // The program's other sources, by content.
    BuildOptions BO = B->options();
    BO.ExtraSources = {D.write("helper.cpp", "int h() { return 1; }\n")};
    auto WithHelper = Builder::create(BO);
    ASSERT_TRUE(bool(WithHelper)) << toString(WithHelper.takeError());
    std::string H1 = GpuEvaluator(**WithHelper, GO).cacheContext();
    EXPECT_NE(H1.find("source=" + BO.ExtraSources[0] + " sha256="),
              std::string::npos)
        << H1;
    D.write("helper.cpp", "int h() { return 2; }\n");
    EXPECT_NE(GpuEvaluator(**WithHelper, GO).cacheContext(), H1);
  }
  GpuEvaluatorOptions Replays = GO;
  Replays.Eval.Replays = 50;
  EXPECT_NE(GpuEvaluator(*B, Replays).cacheContext(), C);
  // How metrics runs are isolated changes the counts, so it changes the
  // context.
  EXPECT_NE(C.find("fresh-profiler=1"), std::string::npos) << C;
  GpuEvaluatorOptions Reused = GO;
  Reused.Eval.FreshProfiler = false;
  EXPECT_NE(GpuEvaluator(*B, Reused).cacheContext(), C);
  GpuEvaluatorOptions PerKernel = GO;
  PerKernel.Eval.MetricsPerKernel = true;
  EXPECT_NE(GpuEvaluator(*B, PerKernel).cacheContext(), C);
  EXPECT_NE(GpuEvaluator(*B, PerKernel).cacheContext(),
            GpuEvaluator(*B, Reused).cacheContext());
  D.write("scale.cu", program("orig", 1.0) + "# edited\n");
  EXPECT_NE(E.cacheContext(), C);
}

} // namespace
