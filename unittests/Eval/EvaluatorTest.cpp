#include "optiml/Eval/Evaluator.h"
#include "EvalTestUtil.h"
#include "optiml/Eval/Compare.h"
#include "optiml/Eval/ProbeProtocol.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <set>

using namespace llvm;
using namespace optiml;
using namespace optiml::testing;

namespace {

//===----------------------------------------------------------------------===//
// Pieces: statistics, verdicts, parsers
//===----------------------------------------------------------------------===//

TEST(SummarizeTimesTest, MedianSpreadAndReplaysNeeded) {
  TimingReport T = summarizeTimes({1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0});
  ASSERT_TRUE(T.Available);
  EXPECT_DOUBLE_EQ(T.MedianMs, 1.0);
  EXPECT_DOUBLE_EQ(T.MinMs, 0.98);
  EXPECT_DOUBLE_EQ(T.MaxMs, 1.02);
  EXPECT_EQ(T.Samples, 7u);
  EXPECT_NEAR(T.SpreadPct, 1.0, 1e-9); // IQR 0.995..1.005
  EXPECT_GE(T.ReplaysFor1Pct, 1u);
  EXPECT_LE(T.ReplaysFor1Pct, 10u);
  TimingReport Noisy = summarizeTimes({1, 2, 1, 2, 1, 2});
  EXPECT_GT(Noisy.ReplaysFor1Pct, 1000u);
  EXPECT_FALSE(summarizeTimes({}).Available);
  EXPECT_FALSE(summarizeTimes({0.0, -1.0}).Available);
}

TEST(ClassifyMetricsTest, MemoryComputeLatency) {
  // 1 ms moving 4 GB: 4 TB/s of a 4.3 TB/s peak.
  MetricsReport M = classifyMetrics(
      {{"gpu__time_duration.sum", 1e6},
       {"dram__bytes_read.sum", 2e9},
       {"dram__bytes_write.sum", 2e9},
       {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 20},
       {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 93},
       {"sm__warps_active.avg.pct_of_peak_sustained_active", 80}},
      4300);
  ASSERT_TRUE(M.Available);
  EXPECT_EQ(M.Bound, "memory-bound");
  EXPECT_NEAR(M.DramGBs, 4000, 1e-6);
  EXPECT_NEAR(M.DramFraction, 4000.0 / 4300, 1e-9);
  EXPECT_NE(M.Verdict.find("memory-bound: DRAM 4.00 TB/s (93% of 4.3 TB/s)"),
            std::string::npos)
      << M.Verdict;

  MetricsReport C = classifyMetrics(
      {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 85},
       {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
        30}},
      0);
  EXPECT_EQ(C.Bound, "compute-bound");
  EXPECT_LT(C.DramFraction, 0);

  MetricsReport L = classifyMetrics(
      {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 12},
       {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 15},
       {"sm__warps_active.avg.pct_of_peak_sustained_active", 9}},
      4300);
  EXPECT_EQ(L.Bound, "latency-bound");
  EXPECT_NE(L.Verdict.find("warps active 9%"), std::string::npos);

  EXPECT_FALSE(classifyMetrics({}, 4300).Available);
}

TEST(ClassifyMetricsTest, MemoryBoundOnChip) {
  // A naive matmul on the H200: memory throughput 97% of peak, DRAM idle
  // (3.18 ms moving 33.6 + 12.4 MB): the limit is L1/L2, said so.
  MetricsReport OnChip = classifyMetrics(
      {{"gpu__time_duration.sum", 3.18e6},
       {"dram__bytes_read.sum", 33.6e6},
       {"dram__bytes_write.sum", 12.4e6},
       {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 65},
       {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 97},
       {"sm__warps_active.avg.pct_of_peak_sustained_active", 98}},
      4300);
  EXPECT_EQ(OnChip.Bound, "memory-bound");
  EXPECT_EQ(OnChip.Verdict.rfind("memory-bound (on chip: L1/shared memory or "
                                 "L2, not DRAM): DRAM 0.01 TB/s (0% of",
                                 0),
            0u)
      << OnChip.Verdict;
  // DRAM at 57% with memory throughput at 70%: DRAM is the unit, no remark.
  MetricsReport Dram = classifyMetrics(
      {{"gpu__time_duration.sum", 1e6},
       {"dram__bytes_read.sum", 1.6e9},
       {"dram__bytes_write.sum", 0.85e9},
       {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 70},
       {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 40}},
      4300);
  EXPECT_EQ(Dram.Verdict.rfind("memory-bound: DRAM 2.45 TB/s (57%", 0), 0u)
      << Dram.Verdict;
  // Without a known DRAM peak nothing is claimed about where.
  MetricsReport NoPeak = classifyMetrics(
      {{"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 90},
       {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 30}},
      0);
  EXPECT_EQ(NoPeak.Verdict.rfind("memory-bound: memory throughput 90%", 0), 0u)
      << NoPeak.Verdict;
}

TEST(RunnerParsersTest, NvidiaSmi) {
  auto G =
      parseNvidiaSmi("0, NVIDIA H200, 9.0, 143771\n1, NVIDIA A100-SXM4-80GB, "
                     "8.0, 81920\ngarbage line\n");
  ASSERT_EQ(G.size(), 2u);
  EXPECT_EQ(G[0].Arch, "sm_90");
  EXPECT_EQ(G[0].Name, "NVIDIA H200");
  EXPECT_EQ(G[0].MemoryMiB, 143771u);
  EXPECT_EQ(G[1].Index, 1u);
  EXPECT_EQ(G[1].Arch, "sm_80");
  EXPECT_TRUE(parseNvidiaSmi("").empty());
  EXPECT_EQ(knownPeakDramGBs("NVIDIA H200"), 4300);
  EXPECT_EQ(knownPeakDramGBs("Some GPU"), 0);
}

TEST(RunnerParsersTest, SanitizerOutput) {
  SanitizerReport Clean = parseSanitizerOutput(
      "memcheck", "========= COMPUTE-SANITIZER\nok\n========= ERROR SUMMARY: "
                  "0 errors\n");
  EXPECT_TRUE(Clean.clean());
  SanitizerReport Bad = parseSanitizerOutput(
      "memcheck",
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at saxpy(int, float, const float *, float *)+0x70\n"
      "========= \n"
      "========= ERROR SUMMARY: 3 errors\n");
  EXPECT_TRUE(Bad.Ran);
  EXPECT_FALSE(Bad.clean());
  EXPECT_EQ(*Bad.Errors, 3u);
  EXPECT_EQ(Bad.FirstError, "Invalid __global__ write of size 4 bytes");
  SanitizerReport Race = parseSanitizerOutput(
      "racecheck", "========= Error: Race reported between Write access at "
                   "k+0x10\n========= RACECHECK SUMMARY: 1 hazard displayed (1 "
                   "error, 0 warnings)\n========= ERROR SUMMARY: 1 error\n");
  EXPECT_EQ(*Race.Errors, 1u);
  EXPECT_NE(Race.FirstError.find("Race reported"), std::string::npos);
  // CUDA 13's racecheck prints no ERROR SUMMARY (seen on the H200).
  SanitizerReport RaceClean = parseSanitizerOutput(
      "racecheck", "saxpy: PASS\n========= RACECHECK SUMMARY: 0 hazards "
                   "displayed (0 errors, 0 warnings)\n");
  EXPECT_TRUE(RaceClean.clean());
  SanitizerReport RaceBad = parseSanitizerOutput(
      "racecheck", "========= Error: Race reported between Write access at "
                   "k+0x10\n========= RACECHECK SUMMARY: 2 hazards displayed "
                   "(2 errors, 0 warnings)\n");
  EXPECT_EQ(*RaceBad.Errors, 2u);
  SanitizerReport None = parseSanitizerOutput("memcheck", "it crashed\n");
  EXPECT_FALSE(None.Ran);
  EXPECT_FALSE(None.clean());
}

TEST(ResolveProgramArgsTest, ExistingRelativePathsBecomeAbsolute) {
  SmallString<128> Dir;
  ASSERT_FALSE(sys::fs::createUniqueDirectory("optiml-args", Dir));
  SmallString<128> Data(Dir), Sub(Dir);
  sys::path::append(Data, "input.dat");
  sys::path::append(Sub, "meshes");
  ASSERT_FALSE(sys::fs::create_directory(Sub));
  {
    std::ofstream(std::string(Data)) << "x";
  }
  // A file named like a number stays a number.
  SmallString<128> Ten(Dir);
  sys::path::append(Ten, "10");
  {
    std::ofstream(std::string(Ten)) << "x";
  }

  std::vector<std::string> Notes;
  auto Out =
      resolveProgramArgs({"input.dat", "./meshes", "10", "-n", "missing.dat",
                          "/abs/path", "1e6", "--in=input.dat"},
                         Dir, &Notes);
  ASSERT_EQ(Out.size(), 8u);
  EXPECT_EQ(Out[0], std::string(Data));
  EXPECT_EQ(Out[1], std::string(Sub));
  EXPECT_EQ(Out[2], "10");
  EXPECT_EQ(Out[3], "-n");
  EXPECT_EQ(Out[4], "missing.dat");
  EXPECT_EQ(Out[5], "/abs/path");
  EXPECT_EQ(Out[6], "1e6");
  EXPECT_EQ(Out[7], "--in=input.dat");
  ASSERT_EQ(Notes.size(), 2u);
  EXPECT_NE(Notes[0].find("'input.dat' passed as '"), std::string::npos)
      << Notes[0];
  EXPECT_EQ(missingPathArgs({"input.dat", "missing.dat", "data/x", "10", "0.5",
                             "-o", "plain", "/abs/missing.dat"},
                            Dir),
            (std::vector<std::string>{"missing.dat", "data/x"}));
  sys::fs::remove_directories(Dir);
}

TEST(TargetKernelsTest, TemplateElementsComparedAsTheirInstantiations) {
  KernelModel M;
  KernelInfo K;
  K.Name = K.QualifiedName = "ns::k";
  ParamInfo Dep, Mixed;
  Dep.Index = 0;
  Dep.IsPointer = true;
  Dep.ElementType = "T";
  Dep.InstanceElementType = "float";
  Dep.InstanceElementSize = 4;
  Dep.InstanceIsFloat = true;
  Mixed.Index = 1;
  Mixed.IsPointer = true;
  Mixed.ElementType = "U";
  K.Params = {Dep, Mixed};
  K.Launches.emplace_back();
  M.Kernels.push_back(K);
  auto T = targetKernels(M, {"ns::k"});
  ASSERT_TRUE(bool(T)) << toString(T.takeError());
  ASSERT_EQ(T->size(), 1u);
  const ProbeParam &P0 = (*T)[0].Params[0];
  EXPECT_EQ(P0.ElementType, "float");
  EXPECT_EQ(P0.ElementSize, 4u);
  EXPECT_TRUE(P0.Float);
  EXPECT_EQ(elementTypeFor(P0).Kind, ElementKind::Float);
  // Unresolved: compared byte for byte, as before.
  EXPECT_EQ(elementTypeFor((*T)[0].Params[1]).Kind, ElementKind::Bytes);
}

TEST(TargetKernelsTest, TypedefsAndPointerArraysComparedByWhatTheyHold) {
  // `typedef float real; real *x`, `float **a` as the model describes them.
  KernelModel M;
  KernelInfo K;
  K.Name = K.QualifiedName = "k";
  ParamInfo X, A;
  X.Index = 0;
  X.IsPointer = true;
  X.ElementType = "real";
  X.CanonicalElementType = "float";
  X.ElementSize = 4;
  X.IsFloat = true;
  A.Index = 1;
  A.IsPointer = true;
  A.ElementType = A.CanonicalElementType = "float *";
  A.ElementSize = 8;
  A.ElementIsPointer = true;
  A.InnerElementType = "float";
  A.InnerElementSize = 4;
  A.InnerIsFloat = true;
  K.Params = {X, A};
  K.Launches.emplace_back();
  M.Kernels.push_back(K);
  auto T = targetKernels(M, {});
  ASSERT_TRUE(bool(T)) << toString(T.takeError());
  ASSERT_EQ(T->size(), 1u);
  const ProbeParam &P0 = (*T)[0].Params[0], &P1 = (*T)[0].Params[1];
  EXPECT_EQ(P0.ElementType, "float");
  EXPECT_EQ(elementTypeFor(P0).Kind, ElementKind::Float);
  EXPECT_TRUE(P1.PointerArray);
  EXPECT_EQ(elementTypeFor(P1).Kind, ElementKind::Bytes);
  EXPECT_EQ(elementTypeFor(P1, 1).Kind, ElementKind::Float);
}

TEST(TargetKernelsTest, StructsOfPointersAreFollowed) {
  KernelModel M;
  KernelInfo K;
  K.Name = K.QualifiedName = "k";
  ParamInfo S;
  S.Index = 0;
  S.IsPointer = true;
  S.ElementType = S.CanonicalElementType = "Mats";
  S.ElementSize = 16;
  S.ElementPointerFields.push_back({8, "c", "float", 4, true});
  K.Params = {S};
  K.Launches.emplace_back();
  M.Kernels.push_back(K);
  auto T = targetKernels(M, {});
  ASSERT_TRUE(bool(T)) << toString(T.takeError());
  const ProbeParam &P = (*T)[0].Params[0];
  EXPECT_TRUE(P.PointerArray);
  ASSERT_EQ(P.PointerFields.size(), 1u);
  EXPECT_EQ(P.PointerFields[0].Offset, 8u);
  EXPECT_EQ(P.PointerFields[0].Name, "c");
  EXPECT_EQ(elementTypeFor(P, 1).Kind, ElementKind::Float);
}

TEST(DevicePoolTest, OneRunPerDevice) {
  DevicePool P({4, 7});
  unsigned A = P.acquire(), B = P.acquire();
  EXPECT_NE(A, B);
  P.release(A);
  EXPECT_EQ(P.acquire(), A);
}

//===----------------------------------------------------------------------===//
// The whole evaluation, with fake programs standing in for the probe
//===----------------------------------------------------------------------===//

/// A kernel model for `saxpy(int n, float a, const float *x, float *y)`.
KernelModel saxpyModel() {
  KernelModel M;
  M.File = "saxpy.cu";
  KernelInfo K;
  K.Name = K.QualifiedName = "saxpy";
  auto Param = [](unsigned I, const char *Name, const char *Elt, bool Ptr,
                  bool Float) {
    ParamInfo P;
    P.Index = I;
    P.Name = Name;
    P.ElementType = Elt;
    P.ElementSize = 4;
    P.IsPointer = Ptr;
    P.IsFloat = Float;
    return P;
  };
  K.Params = {
      Param(0, "n", "int", false, false), Param(1, "a", "float", false, true),
      Param(2, "x", "float", true, true), Param(3, "y", "float", true, true)};
  LaunchSite L;
  L.Id = "saxpy/launch0";
  L.Kernel = "saxpy";
  K.Launches.push_back(L);
  M.Kernels.push_back(K);
  KernelInfo Unlaunched;
  Unlaunched.Name = Unlaunched.QualifiedName = "unused";
  M.Kernels.push_back(Unlaunched);
  return M;
}

ProbeResult result(ProbeMode Mode) {
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
    L.TimesMs = {1.0, 1.01, 0.99, 1.0};
  if (Mode == ProbeMode::Metrics)
    L.Metrics = {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 70},
                 {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_"
                  "elapsed",
                  20}};
  R.Launches.push_back(L);
  return R;
}

class EvaluatorTest : public ::testing::Test {
protected:
  void SetUp() override {
    Nvcc = writeFakeNvcc(D, D.file("count"));
    BuildOptions BO;
    BO.Nvcc = Nvcc;
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

  /// A "program": copies the canned result for its probe mode from
  /// \p Name's folder. \p Extra runs first for the named mode.
  std::string program(StringRef Name, std::map<ProbeMode, ProbeResult> Canned,
                      StringRef ExtraMode = "", StringRef Extra = "") {
    for (auto &[Mode, R] : Canned)
      D.write((Name + "/" + toString(Mode) + ".json").str(),
              writeProbeResult(R));
    std::string S = "#!/bin/sh\n"
                    "cfg=\"$OPTIML_PROBE_CONFIG\"\n"
                    "mode=$(sed -n 's/.*\"mode\": *\"\\([a-z]*\\)\".*/\\1/p' "
                    "\"$cfg\" | head -n 1)\n"
                    "out=$(sed -n 's/.*\"resultPath\": *\"\\([^\"]*\\)\".*/"
                    "\\1/p' \"$cfg\" | head -n 1)\n";
    if (!ExtraMode.empty())
      S +=
          ("if [ \"$mode\" = \"" + ExtraMode + "\" ]; then " + Extra + "; fi\n")
              .str();
    S += "cp \"" + D.file(Name) +
         "/$mode.json\" \"$out\"\n"
         "echo result 42\n";
    return D.write((Name + ".cu").str(), S);
  }

  std::map<ProbeMode, ProbeResult> good() {
    return {{ProbeMode::Reference, result(ProbeMode::Reference)},
            {ProbeMode::Candidate, result(ProbeMode::Candidate)},
            {ProbeMode::Time, result(ProbeMode::Time)},
            {ProbeMode::Metrics, result(ProbeMode::Metrics)}};
  }

  EvalReport eval(StringRef File, StringRef Against = "") {
    EvalInput In;
    In.CandidatePath = File.str();
    In.OriginalPath = Against.str();
    In.Model = &Model;
    auto R = evaluate(In, *B, Opts);
    if (!R) {
      ADD_FAILURE() << toString(R.takeError());
      return EvalReport();
    }
    return std::move(*R);
  }

  TempDir D;
  std::string Nvcc;
  std::unique_ptr<Builder> B;
  EvalOptions Opts;
  KernelModel Model;
};

TEST_F(EvaluatorTest, SelfCheckDeterministicTimedProfiled) {
  std::string P = program("orig", good());
  EvalReport R = eval(P);
  EXPECT_TRUE(R.Candidate.Succeeded);
  EXPECT_TRUE(R.GpuAvailable);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Deterministic) << R.Verify.Detail;
  EXPECT_EQ(R.Verify.LaunchesCompared, 1u);
  EXPECT_EQ(R.Verify.BuffersCompared, 2u);
  EXPECT_TRUE(R.Verify.StdoutCompared);
  ASSERT_EQ(R.Kernels.size(), 1u); // 'unused' is never launched
  EXPECT_EQ(R.Kernels[0].Name, "saxpy");
  EXPECT_EQ(R.Kernels[0].Resources.size(), 1u);
  EXPECT_TRUE(R.Kernels[0].Time.Available);
  EXPECT_DOUBLE_EQ(R.Kernels[0].Time.MedianMs, 1.0);
  EXPECT_EQ(R.Kernels[0].Metrics.Bound, "compute-bound");
  EXPECT_TRUE(R.passed());
  // reference, self-check, time, metrics
  EXPECT_EQ(R.Runs.size(), 4u);
  std::string Text;
  raw_string_ostream OS(Text);
  printReport(OS, R);
  EXPECT_NE(Text.find("deterministic: two runs agree"), std::string::npos)
      << Text;
  EXPECT_NE(reportToJSON(R).find("\"status\": \"deterministic\""),
            std::string::npos);
}

TEST_F(EvaluatorTest, MetricsProfiledWithoutACleanL2AreNoted) {
  auto HasNote = [](const EvalReport &R) {
    return llvm::any_of(R.Notes, [](const std::string &N) {
      return N.find("DRAM bytes written by saxpy may include write-backs") !=
             std::string::npos;
    });
  };
  auto Canned = good();
  LaunchRecord &M = Canned[ProbeMode::Metrics].Launches[0];
  M.Replay = "kernel";
  M.L2Cleaned = false;
  EvalReport Dirty = eval(program("dirty", Canned));
  EXPECT_EQ(Dirty.Kernels[0].Metrics.Bound, "compute-bound");
  EXPECT_TRUE(HasNote(Dirty));
  M.Replay = "user";
  M.L2Cleaned = true;
  EvalReport Clean = eval(program("clean", Canned));
  EXPECT_EQ(Clean.Kernels[0].Metrics.Bound, "compute-bound");
  EXPECT_FALSE(HasNote(Clean));
}

TEST_F(EvaluatorTest, TheReportSaysHowMetricsWereCollected) {
  auto Canned = good();
  LaunchRecord &M = Canned[ProbeMode::Metrics].Launches[0];
  M.Replay = "user";
  M.L2Cleaned = true;
  M.Passes = 9;
  EvalReport R = eval(program("how", Canned));
  const MetricsReport &MR = R.Kernels[0].Metrics;
  EXPECT_EQ(MR.Replay, "user");
  EXPECT_TRUE(MR.L2Cleaned);
  EXPECT_EQ(MR.Passes, 9u);
  EXPECT_TRUE(MR.FreshProfiler);
  EXPECT_FALSE(MR.OwnRun);
  std::string J = reportToJSON(R);
  EXPECT_NE(J.find(R"("collection": {)"), std::string::npos) << J;
  EXPECT_NE(J.find(R"("passes": 9)"), std::string::npos) << J;
  EXPECT_NE(J.find(R"("profiler": "per launch")"), std::string::npos) << J;
  EXPECT_NE(J.find(R"("replay": "user")"), std::string::npos) << J;

  M.Replay = "kernel";
  M.L2Cleaned = false;
  M.Passes = 0;
  Opts.FreshProfiler = false;
  EvalReport K = eval(program("how-kernel", Canned));
  EXPECT_EQ(K.Kernels[0].Metrics.Replay, "kernel");
  EXPECT_FALSE(K.Kernels[0].Metrics.L2Cleaned);
  EXPECT_FALSE(K.Kernels[0].Metrics.FreshProfiler);
  J = reportToJSON(K);
  EXPECT_NE(J.find(R"("profiler": "shared")"), std::string::npos) << J;
  EXPECT_NE(J.find(R"("l2_cleaned": false)"), std::string::npos) << J;
}

/// Two launched kernels; each metrics run copies its config next to the
/// canned results, so the test sees what every run was asked.
TEST_F(EvaluatorTest, MetricsPerKernelProfilesEachKernelAlone) {
  KernelInfo Scale = Model.Kernels[0];
  Scale.Name = Scale.QualifiedName = "scale";
  Scale.Launches[0].Id = "scale/launch0";
  Scale.Launches[0].Kernel = "scale";
  Model.Kernels.push_back(Scale);
  auto Canned = good();
  for (auto &[Mode, R] : Canned) {
    LaunchRecord L = R.Launches[0];
    L.Kernel = "scale(int, float, const float *, float *)";
    R.Launches.push_back(L);
  }
  std::string Copy = "cp \"$cfg\" \"" + D.file("cfg") + "/$$.json\"";
  sys::fs::create_directories(D.file("cfg"));
  auto Configs = [&] {
    std::vector<ProbeConfig> Out;
    std::error_code EC;
    for (sys::fs::directory_iterator I(D.file("cfg"), EC), E; I != E && !EC;
         I.increment(EC)) {
      auto Buf = MemoryBuffer::getFile(I->path());
      auto C = readProbeConfig((*Buf)->getBuffer());
      EXPECT_TRUE(bool(C)) << toString(C.takeError());
      if (C)
        Out.push_back(*C);
      sys::fs::remove(I->path());
    }
    return Out;
  };

  // Default: one metrics run profiles both kernels, with the shared object.
  EvalReport One = eval(program("two", Canned, "metrics", Copy));
  std::vector<ProbeConfig> C1 = Configs();
  ASSERT_EQ(C1.size(), 1u);
  EXPECT_EQ(C1[0].Kernels.size(), 2u);
  EXPECT_TRUE(C1[0].FreshProfiler);
  ASSERT_EQ(One.Kernels.size(), 2u);

  Opts.MetricsPerKernel = true;
  Opts.FreshProfiler = false;
  EvalReport Each = eval(program("two-each", Canned, "metrics", Copy));
  std::vector<ProbeConfig> C2 = Configs();
  ASSERT_EQ(C2.size(), 2u);
  std::set<std::string> Profiled;
  for (const ProbeConfig &C : C2) {
    ASSERT_EQ(C.Kernels.size(), 1u);
    Profiled.insert(C.Kernels[0].Name);
    EXPECT_FALSE(C.FreshProfiler);
    EXPECT_EQ(C.Mode, ProbeMode::Metrics);
  }
  EXPECT_EQ(Profiled, (std::set<std::string>{"saxpy", "scale"}));
  ASSERT_EQ(Each.Kernels.size(), 2u);
  for (const KernelReport &K : Each.Kernels) {
    EXPECT_EQ(K.Metrics.Bound, "compute-bound") << K.Name;
    EXPECT_TRUE(K.Metrics.OwnRun) << K.Name;
  }
  unsigned MetricsRuns = llvm::count_if(Each.Runs, [](const RunSummary &R) {
    return StringRef(R.Label).starts_with("metrics-");
  });
  EXPECT_EQ(MetricsRuns, 2u);
}

TEST(ApplyMetricsEnvironmentTest, OneSetsZeroClearsAnythingElseLeaves) {
  EvalOptions O;
  EXPECT_FALSE(O.MetricsPerKernel);
  EXPECT_TRUE(O.FreshProfiler);
  ::setenv("OPTIML_METRICS_PER_KERNEL", "1", 1);
  ::setenv("OPTIML_PROBE_FRESH_PROFILER", "no", 1);
  applyMetricsEnvironment(O);
  EXPECT_TRUE(O.MetricsPerKernel);
  EXPECT_TRUE(O.FreshProfiler);
  ::setenv("OPTIML_METRICS_PER_KERNEL", "0", 1);
  ::setenv("OPTIML_PROBE_FRESH_PROFILER", "0", 1);
  applyMetricsEnvironment(O);
  EXPECT_FALSE(O.MetricsPerKernel);
  EXPECT_FALSE(O.FreshProfiler);
  ::unsetenv("OPTIML_METRICS_PER_KERNEL");
  ::unsetenv("OPTIML_PROBE_FRESH_PROFILER");
  applyMetricsEnvironment(O);
  EXPECT_FALSE(O.FreshProfiler);
}

TEST_F(EvaluatorTest, WrongCandidateIsCaughtWithItsBuffer) {
  std::string Orig = program("orig", good());
  auto Bad = good();
  BufferCheck &Y = Bad[ProbeMode::Candidate].Launches[0].Buffers[1];
  Y.Status = "mismatch";
  Y.Mismatches = 7;
  Y.FirstDiffIndex = 1023;
  Y.Expected = "3.5";
  Y.Actual = "0";
  std::string Cand = program("cand", Bad);
  EvalReport R = eval(Cand, Orig);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Mismatch);
  EXPECT_NE(
      R.Verify.Detail.find("'y' (parameter 3, float): 7 element(s) "
                           "differ, first at [1023]: expected 3.5, got 0"),
      std::string::npos)
      << R.Verify.Detail;
  EXPECT_FALSE(R.passed());
  // Its time beside the original's is no speedup.
  std::string Text;
  raw_string_ostream OS(Text);
  printReport(OS, R);
  EXPECT_NE(Text.find("x (not a speedup: not verified)\n"), std::string::npos)
      << Text;
  EvalReport Good = eval(program("good", good()), Orig);
  ASSERT_EQ(Good.Verify.Status, VerifyStatus::Verified);
  Text.clear();
  printReport(OS, Good);
  EXPECT_NE(Text.find("; original "), std::string::npos) << Text;
  EXPECT_EQ(Text.find("not a speedup"), std::string::npos) << Text;
}

TEST_F(EvaluatorTest, InputMutationIsCaught) {
  std::string Orig = program("orig", good());
  auto Bad = good();
  Bad[ProbeMode::Candidate].Launches[0].Buffers[0].UnexpectedWrite = true;
  std::string Cand = program("cand", Bad);
  EvalReport R = eval(Cand, Orig);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Mismatch);
  EXPECT_NE(R.Verify.Detail.find("'x' (parameter 2, float): changed, though "
                                 "the original does not write it"),
            std::string::npos)
      << R.Verify.Detail;
}

TEST_F(EvaluatorTest, CorrectCandidateIsVerifiedAndCompared) {
  std::string Orig = program("orig", good());
  auto Faster = good();
  Faster[ProbeMode::Time].Launches[0].TimesMs = {0.5, 0.5, 0.5};
  std::string Cand = program("cand", Faster);
  EvalReport R = eval(Cand, Orig);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Verified) << R.Verify.Detail;
  ASSERT_TRUE(R.Kernels[0].OriginalTime);
  EXPECT_DOUBLE_EQ(R.Kernels[0].OriginalTime->MedianMs, 1.0);
  EXPECT_DOUBLE_EQ(R.Kernels[0].Time.MedianMs, 0.5);
  EXPECT_TRUE(R.passed());
}

TEST_F(EvaluatorTest, NondeterministicReferenceNamesTheBuffer) {
  auto Canned = good();
  BufferCheck &Y = Canned[ProbeMode::Candidate].Launches[0].Buffers[1];
  Y.Status = "mismatch";
  Y.Mismatches = 12;
  Y.FirstDiffIndex = 5;
  Y.MaxAbsErr = 1.0;
  Y.MaxRelErr = 0.5;
  std::string P = program("orig", Canned);
  EvalReport R = eval(P);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Nondeterministic);
  EXPECT_NE(R.Verify.Detail.find("'y'"), std::string::npos) << R.Verify.Detail;
  EXPECT_FALSE(R.passed());
}

TEST_F(EvaluatorTest, TheSelfCheckRecordsEachLaunchThatDisagrees) {
  // saxpy launched 10 times: launch 0 agrees, the last (9) disagrees in y.
  auto Canned = good();
  for (ProbeMode M : {ProbeMode::Reference, ProbeMode::Candidate}) {
    LaunchRecord Last = Canned[M].Launches[0];
    Last.Ordinal = 9;
    if (M == ProbeMode::Candidate) {
      BufferCheck &Y = Last.Buffers[1];
      Y.Status = "mismatch";
      Y.Mismatches = 12;
      Y.FirstDiffIndex = 5;
      Y.MaxAbsErr = 1.0;
      Y.MaxRelErr = 0.5;
    }
    Canned[M].Launches.push_back(Last);
  }
  EvalReport R = eval(program("orig", Canned));
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Nondeterministic);
  ASSERT_EQ(R.Verify.Disagreements.size(), 1u);
  const SelfCheckDisagreement &D = R.Verify.Disagreements[0];
  EXPECT_EQ(D.Kernel, "saxpy");
  EXPECT_EQ(D.Ordinal, 9u);
  EXPECT_EQ(D.Detail, R.Verify.Detail);
  EXPECT_EQ(D.Detail.rfind("saxpy launch 9: 'y' (parameter 3, float): two "
                           "reference runs differ in 12 element(s)",
                           0),
            0u)
      << D.Detail;
  // Launch 9 is verified only because of VerifyLast with the first 3...
  auto Only = disagreesOnlyAtLastLaunch(R.Verify, 3);
  ASSERT_TRUE(Only.has_value());
  EXPECT_EQ(Only->Ordinal, 9u);
  // ...but is one of the first 10.
  EXPECT_FALSE(disagreesOnlyAtLastLaunch(R.Verify, 10).has_value());
}

TEST(DisagreesOnlyAtLastLaunchTest, EveryDisagreementMustBeAfterTheFirst) {
  VerifyReport V;
  V.Status = VerifyStatus::Nondeterministic;
  V.Disagreements = {{"cg_dot", 1299, "cg_dot launch 1299: 'r' ..."},
                     {"cg_axpy", 1299, "cg_axpy launch 1299: 'x' ..."}};
  auto D = disagreesOnlyAtLastLaunch(V, 3);
  ASSERT_TRUE(D.has_value());
  EXPECT_EQ(D->Kernel, "cg_dot"); // the first found
  // Another buffer disagrees at a first launch: dropping the last would not
  // help.
  V.Disagreements.push_back({"cg_dot", 2, "cg_dot launch 2: 'r' ..."});
  EXPECT_FALSE(disagreesOnlyAtLastLaunch(V, 3).has_value());
  EXPECT_TRUE(disagreesOnlyAtLastLaunch(V, 2).has_value());
  // A self-check that passed, or failed for another reason (the runs exit
  // differently: no launch disagrees), drops nothing.
  V.Status = VerifyStatus::Deterministic;
  EXPECT_FALSE(disagreesOnlyAtLastLaunch(V, 2).has_value());
  VerifyReport Exit;
  Exit.Status = VerifyStatus::Nondeterministic;
  EXPECT_FALSE(disagreesOnlyAtLastLaunch(Exit, 3).has_value());
}

TEST_F(EvaluatorTest, FloatNoiseIsCalibratedNotFatal) {
  auto Canned = good();
  BufferCheck &Y = Canned[ProbeMode::Candidate].Launches[0].Buffers[1];
  Y.MaxAbsErr = 2e-7;
  Y.MaxRelErr = 1e-7;
  std::string P = program("orig", Canned);
  EvalReport R = eval(P);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Deterministic) << R.Verify.Detail;
  EXPECT_TRUE(R.Verify.Disagreements.empty());
  ASSERT_EQ(R.Verify.Notes.size(), 1u);
  EXPECT_NE(R.Verify.Notes[0].find("float noise"), std::string::npos);
}

TEST_F(EvaluatorTest, CrashingCandidateIsContained) {
  std::string Orig = program("orig", good());
  std::string Cand = program("cand", good(), "candidate", "kill -SEGV $$");
  EvalReport R = eval(Cand, Orig);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Failed);
  EXPECT_NE(R.Verify.Detail.find("killed by signal 11 (SIGSEGV)"),
            std::string::npos)
      << R.Verify.Detail;
  // The next evaluation runs normally.
  EvalReport Next = eval(Orig);
  EXPECT_EQ(Next.Verify.Status, VerifyStatus::Deterministic);
}

TEST_F(EvaluatorTest, FailingReferenceRunSaysHowOnce) {
  // The program cannot open its input: it exits 2 before any launch.
  std::string Orig = program("orig", good(), "reference",
                             "echo \"cannot open 'data/in.dat'\" >&2; exit 2");
  EvalReport R = eval(Orig);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Failed);
  EXPECT_TRUE(R.Verify.ReferenceFailed);
  EXPECT_EQ(R.Verify.Detail, "the program exited with status 2 in the "
                             "reference run:\ncannot open 'data/in.dat'")
      << R.Verify.Detail;
  std::string Text;
  raw_string_ostream OS(Text);
  printReport(OS, R);
  EXPECT_NE(Text.find("'data/in.dat'\nsaxpy: not timed\n"), std::string::npos)
      << Text;
  // A candidate that fails is not a failed reference.
  std::string Cand = program("cand", good(), "candidate", "kill -SEGV $$");
  EXPECT_FALSE(eval(Cand, program("orig2", good())).Verify.ReferenceFailed);
}

TEST_F(EvaluatorTest, FailingCandidateNamesTheProbeError) {
  std::string Orig = program("orig", good());
  auto Bad = good();
  ProbeResult &C = Bad[ProbeMode::Candidate];
  C.Launches.clear();
  C.Errors = {"scale launch 0: cuCtxSynchronize after the launch: "
              "CUDA_ERROR_ILLEGAL_ADDRESS (700)"};
  std::string Cand =
      program("cand", Bad, "candidate",
              "cp \"" + D.file("cand") + "/$mode.json\" \"$out\"; exit 1");
  EvalReport R = eval(Cand, Orig);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Failed);
  EXPECT_NE(R.Verify.Detail.find("exited with status 1, the original exited "
                                 "with status 0: scale launch 0: "
                                 "cuCtxSynchronize"),
            std::string::npos)
      << R.Verify.Detail;
}

TEST_F(EvaluatorTest, HangingCandidateIsKilled) {
  Opts.Runner.TimeoutSeconds = 1;
  std::string Orig = program("orig", good());
  std::string Cand = program("cand", good(), "candidate", "sleep 60");
  EvalReport R = eval(Cand, Orig);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Failed);
  EXPECT_NE(R.Verify.Detail.find("timed out"), std::string::npos)
      << R.Verify.Detail;
  // Said once: the probe's missing result does not repeat how it ended.
  EXPECT_EQ(StringRef(R.Verify.Detail).count("timed out"), 1u)
      << R.Verify.Detail;
  EXPECT_LT(R.WallSeconds, 30);
}

TEST_F(EvaluatorTest, ChangedStdoutIsAMismatch) {
  std::string Orig = program("orig", good());
  std::string Cand = program("cand", good(), "candidate", "echo extra");
  EvalReport R = eval(Cand, Orig);
  EXPECT_EQ(R.Verify.Status, VerifyStatus::Mismatch);
  EXPECT_NE(R.Verify.Detail.find("stdout"), std::string::npos);
}

TEST_F(EvaluatorTest, NoGpuStillBuilds) {
  Opts.Devices.clear();
  Opts.Gpus = GpuQuery{{}, "nvidia-smi not found"};
  std::string P = program("orig", good());
  EvalReport R = eval(P);
  EXPECT_TRUE(R.Candidate.Succeeded);
  EXPECT_FALSE(R.GpuAvailable);
  EXPECT_EQ(R.GpuProblem, "nvidia-smi not found");
  EXPECT_TRUE(R.Runs.empty());
  EXPECT_FALSE(R.passed());
}

TEST_F(EvaluatorTest, CompileErrorStopsBeforeRunning) {
  std::string P = D.write("bad.cu", "COMPILE_ERROR\n");
  EvalReport R = eval(P);
  EXPECT_FALSE(R.Candidate.Succeeded);
  EXPECT_NE(R.Candidate.ErrorSummary.find("error: identifier"),
            std::string::npos);
  EXPECT_TRUE(R.Runs.empty());
}

TEST_F(EvaluatorTest, MissingProbeIsAnError) {
  Opts.Runner.ProbeLibrary = D.file("nope.so");
  std::string P = program("orig", good());
  EvalInput In;
  In.CandidatePath = P;
  In.Model = &Model;
  auto R = evaluate(In, *B, Opts);
  ASSERT_FALSE(bool(R));
  EXPECT_NE(toString(R.takeError()).find("liboptiml-probe.so"),
            std::string::npos);
}

TEST_F(EvaluatorTest, UnknownKernelIsAnError) {
  Opts.Kernels = {"nosuch"};
  EvalInput In;
  In.CandidatePath = program("orig", good());
  In.Model = &Model;
  auto R = evaluate(In, *B, Opts);
  ASSERT_FALSE(bool(R));
  EXPECT_NE(toString(R.takeError()).find("no kernel 'nosuch'"),
            std::string::npos);
}

} // namespace

namespace {
// Paths and the output of nvcc and the program are any bytes; the report's
// JSON is UTF-8 all the same (U+FFFD for a bad byte), never an abort.
TEST(EvalReportJSONTest, BytesThatAreNotUTF8) {
  optiml::EvalReport R;
  R.File = "/d/k\xff.cu";
  R.Against = "/d/o\xfe.cu";
  R.Candidate.Path = R.File;
  R.Candidate.ErrorSummary = "k\xff.cu(3): error\n";
  R.Notes.push_back("note \xc3");
  std::string J = optiml::reportToJSON(R);
  // nlohmann/json accepts only UTF-8.
  EXPECT_TRUE(nlohmann::json::accept(J)) << J;
  EXPECT_NE(J.find("/d/k\xef\xbf\xbd.cu"), std::string::npos) << J;
  EXPECT_NE(J.find("note \xef\xbf\xbd"), std::string::npos) << J;
}
} // namespace
