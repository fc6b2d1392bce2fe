//===- ReferenceTest.cpp - The original's reference, made once and reused -===//
//
// Fake nvcc and fake programs (EvalTestUtil.h): each program appends its
// probe mode to a log, so a test counts the runs of the original and of the
// candidate.
//
//===----------------------------------------------------------------------===//

#include "EvalTestUtil.h"
#include "optiml/Eval/Evaluator.h"
#include "llvm/Support/MemoryBuffer.h"
#include "gtest/gtest.h"
#include <map>

using namespace llvm;
using namespace optiml;
using namespace optiml::testing;

namespace {

KernelModel saxpyModel() {
  KernelModel M;
  M.File = "saxpy.cu";
  KernelInfo K;
  K.Name = K.QualifiedName = "saxpy";
  auto Param = [](unsigned I, const char *Name, bool Ptr, bool Float) {
    ParamInfo P;
    P.Index = I;
    P.Name = Name;
    P.ElementType = Float ? "float" : "int";
    P.ElementSize = 4;
    P.IsPointer = Ptr;
    P.IsFloat = Float;
    return P;
  };
  K.Params = {Param(0, "n", false, false), Param(1, "a", false, true),
              Param(2, "x", true, true), Param(3, "y", true, true)};
  LaunchSite L;
  L.Id = "saxpy/launch0";
  L.Kernel = "saxpy";
  K.Launches.push_back(L);
  M.Kernels.push_back(K);
  return M;
}

ProbeResult result(ProbeMode Mode, double Ms = 1.0) {
  ProbeResult R;
  R.Mode = Mode;
  LaunchRecord L;
  L.Kernel = "saxpy(int, float, const float *, float *)";
  L.Verified = Mode == ProbeMode::Reference || Mode == ProbeMode::Candidate;
  if (L.Verified)
    for (unsigned P : {2u, 3u}) {
      BufferCheck B;
      B.Param = P;
      B.Bytes = 4096;
      L.Buffers.push_back(B);
    }
  if (Mode == ProbeMode::Time)
    L.TimesMs = {Ms, Ms, Ms};
  if (Mode == ProbeMode::Metrics)
    L.Metrics = {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 70}};
  R.Launches.push_back(L);
  return R;
}

std::map<ProbeMode, ProbeResult> good(double Ms = 1.0) {
  return {{ProbeMode::Reference, result(ProbeMode::Reference)},
          {ProbeMode::Candidate, result(ProbeMode::Candidate)},
          {ProbeMode::Time, result(ProbeMode::Time, Ms)},
          {ProbeMode::Metrics, result(ProbeMode::Metrics)}};
}

class ReferenceTest : public ::testing::Test {
protected:
  void SetUp() override {
    BuildOptions BO;
    BO.Nvcc = writeFakeNvcc(D, D.file("count"));
    BO.CacheDir = D.file("cache");
    auto Bu = Builder::create(BO);
    ASSERT_TRUE(bool(Bu)) << toString(Bu.takeError());
    B = std::move(*Bu);
    Opts.Devices = {0};
    Opts.Gpus = GpuQuery{{GpuInfo{0, "Fake GPU", "sm_90", 1}}, ""};
    Opts.Runner.ProbeLibrary = D.write("liboptiml-probe.so", "");
    Opts.Runner.CudaPath = D.file("no-cuda");
    Opts.Runner.TimeoutSeconds = 20;
    Model = saxpyModel();
  }

  /// A program that logs "<name> <mode>" to runs.log, then copies its
  /// canned result. \p Tag changes the text (and so the build) only.
  std::string program(StringRef Name, std::map<ProbeMode, ProbeResult> Canned,
                      StringRef Tag = "") {
    for (auto &[Mode, R] : Canned)
      D.write((Name + "/" + toString(Mode) + ".json").str(),
              writeProbeResult(R));
    std::string S = "#!/bin/sh\n# " + Tag.str() +
                    "\n"
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
                    "echo result 42\n";
    return D.write((Name + ".cu").str(), S);
  }

  /// How often \p What ("orig reference") appears in the run log.
  unsigned runs(StringRef What) {
    auto Buf = MemoryBuffer::getFile(D.file("runs.log"));
    if (!Buf)
      return 0;
    SmallVector<StringRef> Lines;
    (*Buf)->getBuffer().split(Lines, '\n', -1, false);
    return llvm::count(Lines, What);
  }

  OriginalReference prepare(StringRef Orig) {
    EvalInput In;
    In.CandidatePath = Orig.str();
    In.Model = &Model;
    EvalOptions O = Opts;
    O.RunDir = D.file("original");
    auto R = prepareReference(In, *B, O);
    if (!R) {
      ADD_FAILURE() << toString(R.takeError());
      return OriginalReference();
    }
    return std::move(*R);
  }

  EvalReport eval(StringRef Cand, StringRef Orig, const OriginalReference *Ref,
                  EvalOptions O) {
    EvalInput In;
    In.CandidatePath = Cand.str();
    In.OriginalPath = Orig.str();
    In.Model = &Model;
    auto R = evaluate(In, *B, O, Ref);
    if (!R) {
      ADD_FAILURE() << toString(R.takeError());
      return EvalReport();
    }
    return std::move(*R);
  }

  static std::vector<std::string> labels(const EvalReport &R) {
    std::vector<std::string> L;
    for (const RunSummary &S : R.Runs)
      L.push_back(S.Label);
    llvm::sort(L);
    return L;
  }

  TempDir D;
  std::unique_ptr<Builder> B;
  EvalOptions Opts;
  KernelModel Model;
};

TEST_F(ReferenceTest, PreparedOnceThenEachCandidateRunsAlone) {
  std::string Orig = program("orig", good(1.0));
  OriginalReference Ref = prepare(Orig);
  ASSERT_TRUE(Ref.usable()) << Ref.SelfCheck.Detail;
  EXPECT_EQ(Ref.Report.Verify.Status, VerifyStatus::Deterministic);
  EXPECT_TRUE(sys::fs::is_directory(Ref.SnapshotDir));
  ASSERT_EQ(Ref.Report.Kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(Ref.Report.Kernels[0].Time.MedianMs, 1.0);
  EXPECT_EQ(runs("orig reference"), 1u);
  EXPECT_EQ(runs("orig candidate"), 1u); // the self-check

  EvalOptions O = Opts;
  O.RunDir = D.file("cand-runs");
  O.TimeOriginal = false;
  std::string Fast = program("fast", good(0.5));
  std::string Slow = program("slow", good(2.0));
  for (const std::string &C : {Fast, Slow, Fast}) {
    EvalReport R = eval(C, Orig, &Ref, O);
    EXPECT_TRUE(R.ReusedReference);
    EXPECT_EQ(R.Verify.Status, VerifyStatus::Verified) << R.Verify.Detail;
    EXPECT_TRUE(R.Verify.StdoutCompared);
    EXPECT_EQ(labels(R),
              (std::vector<std::string>{"candidate", "metrics", "time"}));
    ASSERT_EQ(R.Kernels.size(), 1u);
    EXPECT_FALSE(R.Kernels[0].OriginalTime.has_value());
    EXPECT_TRUE(R.passed());
  }
  // The original ran only while the reference was prepared.
  EXPECT_EQ(runs("orig reference"), 1u);
  EXPECT_EQ(runs("orig candidate"), 1u);
  EXPECT_EQ(runs("orig time"), 1u);
  EXPECT_EQ(runs("fast candidate"), 2u);
  // The snapshots are still there for the next candidate.
  EXPECT_TRUE(sys::fs::is_directory(Ref.SnapshotDir));
}

TEST_F(ReferenceTest, ReusedReferenceStillCatchesAWrongCandidate) {
  std::string Orig = program("orig", good());
  OriginalReference Ref = prepare(Orig);
  ASSERT_TRUE(Ref.usable());
  auto Bad = good();
  BufferCheck &Y = Bad[ProbeMode::Candidate].Launches[0].Buffers[1];
  Y.Status = "mismatch";
  Y.Mismatches = 3;
  Y.FirstDiffIndex = 7;
  Y.Expected = "1";
  Y.Actual = "2";
  std::string Cand = program("bad", Bad);
  EvalReport R = eval(Cand, Orig, &Ref, Opts);
  EXPECT_TRUE(R.ReusedReference);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Mismatch);
  EXPECT_NE(R.Verify.Detail.find("'y' (parameter 3, float): 3 element(s) "
                                 "differ, first at [7]"),
            std::string::npos)
      << R.Verify.Detail;
  EXPECT_FALSE(R.passed());
}

TEST_F(ReferenceTest, ChangedStdoutIsStillAMismatch) {
  std::string Orig = program("orig", good());
  OriginalReference Ref = prepare(Orig);
  ASSERT_TRUE(Ref.StdoutStable);
  std::string Cand = program("cand", good());
  // Same results, different output.
  std::string Text = "#!/bin/sh\necho extra\nexec sh \"" + Cand + "\"\n";
  std::string Chatty = D.write("chatty.cu", Text);
  EvalReport R = eval(Chatty, Orig, &Ref, Opts);
  EXPECT_TRUE(R.ReusedReference);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Mismatch);
  EXPECT_NE(R.Verify.Detail.find("stdout"), std::string::npos);
}

TEST_F(ReferenceTest, TimeOriginalOnRequest) {
  std::string Orig = program("orig", good(1.0));
  OriginalReference Ref = prepare(Orig);
  std::string Cand = program("cand", good(0.5));
  EvalReport R = eval(Cand, Orig, &Ref, Opts); // TimeOriginal defaults on
  EXPECT_TRUE(R.ReusedReference);
  ASSERT_EQ(R.Kernels.size(), 1u);
  ASSERT_TRUE(R.Kernels[0].OriginalTime.has_value());
  EXPECT_DOUBLE_EQ(R.Kernels[0].OriginalTime->MedianMs, 1.0);
  EXPECT_EQ(runs("orig time"), 2u);
  EXPECT_EQ(runs("orig reference"), 1u);
}

TEST_F(ReferenceTest, TimingRoundsNeedNoVerification) {
  std::string Orig = program("orig", good(1.0));
  OriginalReference Ref = prepare(Orig);
  EvalOptions O = Opts;
  O.VerifyCandidate = false;
  O.TimeOriginal = false;
  O.Metrics = false;
  std::string Cand = program("cand", good(0.5));
  EvalReport R = eval(Cand, Orig, &Ref, O);
  EXPECT_EQ(labels(R), std::vector<std::string>{"time"});
  EXPECT_DOUBLE_EQ(R.Kernels[0].Time.MedianMs, 0.5);
  EXPECT_NE(R.Verify.Status, VerifyStatus::Verified);
  EXPECT_EQ(runs("cand candidate"), 0u);
}

TEST_F(ReferenceTest, ChangedOriginalIsRunAgain) {
  std::string Orig = program("orig", good());
  OriginalReference Ref = prepare(Orig);
  ASSERT_TRUE(Ref.usable());
  // The file changes under the search: a different binary.
  program("orig", good(), "edited");
  std::string Cand = program("cand", good());
  EvalReport R = eval(Cand, Orig, &Ref, Opts);
  EXPECT_FALSE(R.ReusedReference);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Verified) << R.Verify.Detail;
  EXPECT_EQ(runs("orig reference"), 2u);
  ASSERT_FALSE(R.Notes.empty());
  EXPECT_NE(R.Notes[0].find("the original's build differs"), std::string::npos)
      << R.Notes[0];
}

TEST_F(ReferenceTest, ChangedRunArgumentsAreRunAgain) {
  std::string Orig = program("orig", good());
  OriginalReference Ref = prepare(Orig);
  EvalOptions O = Opts;
  O.Runner.ProgramArgs = {"1024"};
  std::string Cand = program("cand", good());
  EvalReport R = eval(Cand, Orig, &Ref, O);
  EXPECT_FALSE(R.ReusedReference);
  EXPECT_EQ(runs("orig reference"), 2u);
  ASSERT_FALSE(R.Notes.empty());
  EXPECT_NE(R.Notes[0].find("probe setup"), std::string::npos) << R.Notes[0];
  // So are other verified launches.
  O = Opts;
  O.VerifyFirst = 1;
  R = eval(Cand, Orig, &Ref, O);
  EXPECT_FALSE(R.ReusedReference);
}

TEST_F(ReferenceTest, UnusableReferenceIsNotReused) {
  auto Noisy = good();
  BufferCheck &Y = Noisy[ProbeMode::Candidate].Launches[0].Buffers[1];
  Y.Status = "mismatch";
  Y.Mismatches = 12;
  Y.MaxAbsErr = 1.0;
  Y.MaxRelErr = 0.5;
  std::string Orig = program("orig", Noisy);
  OriginalReference Ref = prepare(Orig);
  EXPECT_FALSE(Ref.usable());
  EXPECT_EQ(Ref.SelfCheck.Status, VerifyStatus::Nondeterministic);
  std::string Cand = program("cand", good());
  EvalReport R = eval(Cand, Orig, &Ref, Opts);
  EXPECT_FALSE(R.ReusedReference);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Nondeterministic);
}

TEST_F(ReferenceTest, RetimeRunsTheOriginalOnceMore) {
  std::string Orig = program("orig", good(1.25));
  OriginalReference Ref = prepare(Orig);
  ASSERT_TRUE(Ref.usable());
  auto R = retimeOriginal(Ref, Opts);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_EQ(R->Kernels.size(), 1u);
  EXPECT_TRUE(R->Kernels[0].Time.Available);
  EXPECT_DOUBLE_EQ(R->Kernels[0].Time.MedianMs, 1.25);
  EXPECT_EQ(labels(*R), std::vector<std::string>{"time-original"});
  EXPECT_EQ(runs("orig time"), 2u);
  EXPECT_EQ(runs("orig reference"), 1u);
}

// The evaluation's stages run the programs in a fixed order (one GPU: one
// at a time): the reference run, then the self-check, timing and metrics,
// then the candidate's verification; with a prepared reference and timing
// in the verification run, the candidate's run comes first, and a candidate
// that fails it is not profiled.
TEST_F(ReferenceTest, RunsInStageOrder) {
  auto Order = [](const EvalReport &R) {
    std::vector<std::string> L;
    for (const RunSummary &S : R.Runs)
      L.push_back(S.Label);
    return L;
  };
  auto Log = [&] {
    auto Buf = MemoryBuffer::getFile(D.file("runs.log"));
    std::vector<std::string> L;
    if (!Buf)
      return L;
    SmallVector<StringRef> Lines;
    (*Buf)->getBuffer().split(Lines, '\n', -1, false);
    for (StringRef Line : Lines)
      L.push_back(Line.str());
    sys::fs::remove(D.file("runs.log"));
    return L;
  };
  using Strings = std::vector<std::string>;
  std::string Orig = program("orig", good(1.0));
  OriginalReference Ref = prepare(Orig);
  ASSERT_TRUE(Ref.usable());
  EXPECT_EQ(Order(Ref.Report),
            (Strings{"reference", "self-check", "time", "metrics"}));
  EXPECT_EQ(Log(), (Strings{"orig reference", "orig candidate", "orig time",
                            "orig metrics"}));

  std::string Cand = program("cand", good(0.5));
  EvalReport R = eval(Cand, Orig, nullptr, Opts);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Verified) << R.Verify.Detail;
  EXPECT_EQ(Order(R), (Strings{"reference", "self-check", "time",
                               "time-original", "metrics", "candidate"}));
  EXPECT_EQ(Log(), (Strings{"orig reference", "orig candidate", "cand time",
                            "orig time", "cand metrics", "cand candidate"}));
  EXPECT_EQ(R.Stages.front().first, "build");

  EvalOptions O = Opts;
  O.TimeInVerification = true;
  R = eval(Cand, Orig, &Ref, O);
  EXPECT_TRUE(R.ReusedReference);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Verified) << R.Verify.Detail;
  EXPECT_EQ(Order(R), (Strings{"candidate", "time-original", "metrics"}));
  EXPECT_EQ(Log(), (Strings{"cand candidate", "orig time", "cand metrics"}));

  auto Bad = good(0.5);
  Bad[ProbeMode::Candidate].Launches[0].Buffers[1].Status = "mismatch";
  Bad[ProbeMode::Candidate].Launches[0].Buffers[1].Mismatches = 1;
  std::string Wrong = program("wrong", Bad);
  R = eval(Wrong, Orig, &Ref, O);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Mismatch);
  EXPECT_EQ(Order(R), (Strings{"candidate", "time-original"}));
  EXPECT_NE(llvm::find(R.Notes, "the candidate failed verification: not "
                                "profiled"),
            R.Notes.end());
}

TEST_F(ReferenceTest, PrepareRejectsAnAgainst) {
  EvalInput In;
  In.CandidatePath = program("orig", good());
  In.OriginalPath = In.CandidatePath;
  In.Model = &Model;
  auto R = prepareReference(In, *B, Opts);
  ASSERT_FALSE(bool(R));
  consumeError(R.takeError());
}

} // namespace
