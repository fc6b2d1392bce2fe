//===- ProbeProtocolTest.cpp - Probe config/result JSON
//--------------------===//

#include "optiml/Eval/ProbeProtocol.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>

using namespace optiml;

namespace {

std::string errorText(llvm::Error E) { return llvm::toString(std::move(E)); }

ProbeParam param(unsigned Index, bool Pointer, std::string Type, unsigned Size,
                 bool Float) {
  ProbeParam P;
  P.Index = Index;
  P.Pointer = Pointer;
  P.ElementType = std::move(Type);
  P.ElementSize = Size;
  P.Float = Float;
  return P;
}

ProbeConfig sampleConfig() {
  ProbeConfig C;
  C.Mode = ProbeMode::Candidate;
  ProbeKernel K;
  K.Name = "ops::scale";
  K.Params.push_back(param(0, true, "float", 4, true));
  K.Params.push_back(param(1, false, "int", 4, false));
  ProbeParam Array = param(2, true, "float *", 8, false);
  Array.PointerArray = true;
  Array.InnerElementType = "float";
  Array.InnerElementSize = 4;
  Array.InnerFloat = true;
  K.Params.push_back(Array);
  ProbeParam Structs = param(3, true, "Mats", 24, false);
  Structs.PointerArray = true;
  Structs.PointerFields.push_back({0, "a", "float", 4, true});
  Structs.PointerFields.push_back({16, "inner.c", "double", 8, true});
  K.Params.push_back(Structs);
  C.Kernels.push_back(K);
  C.VerifyFirst = 2;
  C.VerifyLast = false;
  C.SnapshotDir = "/tmp/run/snap";
  C.Tol.RelTol = 1e-4;
  C.Tol.AbsTol = 1e-7;
  C.Tol.ScaleRelTol = 1e-4;
  C.Tol.NaNEqual = false;
  C.Replays = 7;
  C.TimeLaunches = 2;
  C.FlushL2 = true;
  C.Metrics = {"dram__bytes_read.sum", "gpu__time_duration.sum"};
  C.CleanL2 = false;
  C.CompareOnHost = true;
  C.TimeVerified = true;
  C.FreshProfiler = true;
  C.RestoreWrittenOnly = true;
  C.KernelReplay = true;
  C.WarmUpLaunches = 2;
  C.CleanInPass = true;
  C.ResultPath = "/tmp/run/result.json";
  return C;
}

TEST(ProbeProtocolTest, ConfigRoundTrip) {
  ProbeConfig C = sampleConfig();
  auto R = readProbeConfig(writeProbeConfig(C));
  ASSERT_TRUE(bool(R)) << errorText(R.takeError());
  EXPECT_EQ(R->Mode, ProbeMode::Candidate);
  ASSERT_EQ(R->Kernels.size(), 1u);
  EXPECT_EQ(R->Kernels[0].Name, "ops::scale");
  ASSERT_EQ(R->Kernels[0].Params.size(), 4u);
  EXPECT_TRUE(R->Kernels[0].Params[0].Pointer);
  EXPECT_EQ(R->Kernels[0].Params[0].ElementType, "float");
  EXPECT_FALSE(R->Kernels[0].Params[0].PointerArray);
  EXPECT_EQ(R->Kernels[0].Params[1].Index, 1u);
  const ProbeParam &Array = R->Kernels[0].Params[2];
  EXPECT_TRUE(Array.PointerArray);
  EXPECT_EQ(Array.InnerElementType, "float");
  EXPECT_EQ(Array.InnerElementSize, 4u);
  EXPECT_TRUE(Array.InnerFloat);
  EXPECT_TRUE(Array.PointerFields.empty());
  const ProbeParam &Structs = R->Kernels[0].Params[3];
  EXPECT_TRUE(Structs.PointerArray);
  ASSERT_EQ(Structs.PointerFields.size(), 2u);
  EXPECT_EQ(Structs.PointerFields[1].Offset, 16u);
  EXPECT_EQ(Structs.PointerFields[1].Name, "inner.c");
  EXPECT_EQ(Structs.PointerFields[1].InnerElementType, "double");
  EXPECT_EQ(Structs.PointerFields[1].InnerElementSize, 8u);
  EXPECT_TRUE(Structs.PointerFields[1].InnerFloat);
  EXPECT_EQ(R->VerifyFirst, 2u);
  EXPECT_FALSE(R->VerifyLast);
  EXPECT_EQ(R->SnapshotDir, "/tmp/run/snap");
  EXPECT_DOUBLE_EQ(R->Tol.RelTol, 1e-4);
  EXPECT_DOUBLE_EQ(R->Tol.AbsTol, 1e-7);
  EXPECT_DOUBLE_EQ(R->Tol.ScaleRelTol, 1e-4);
  EXPECT_FALSE(R->Tol.NaNEqual);
  EXPECT_EQ(R->Replays, 7u);
  EXPECT_EQ(R->TimeLaunches, 2u);
  EXPECT_TRUE(R->FlushL2);
  EXPECT_EQ(R->Metrics.size(), 2u);
  EXPECT_FALSE(R->CleanL2);
  EXPECT_TRUE(R->CompareOnHost);
  EXPECT_TRUE(R->TimeVerified);
  EXPECT_TRUE(R->FreshProfiler);
  EXPECT_TRUE(R->RestoreWrittenOnly);
  EXPECT_TRUE(R->KernelReplay);
  EXPECT_EQ(R->WarmUpLaunches, 2u);
  EXPECT_TRUE(R->CleanInPass);
  EXPECT_EQ(R->ResultPath, "/tmp/run/result.json");
}

TEST(ProbeProtocolTest, ConfigDefaults) {
  auto R = readProbeConfig(
      R"({"mode": "time", "kernels": [{"name": "saxpy"}], "resultPath": "r.json"})");
  ASSERT_TRUE(bool(R)) << errorText(R.takeError());
  EXPECT_EQ(R->Mode, ProbeMode::Time);
  EXPECT_EQ(R->Replays, 20u);
  EXPECT_EQ(R->VerifyFirst, 3u);
  EXPECT_TRUE(R->VerifyLast);
  EXPECT_TRUE(R->CleanL2);
  EXPECT_FALSE(R->CompareOnHost);
  EXPECT_FALSE(R->TimeVerified);
  EXPECT_FALSE(R->FreshProfiler);
  EXPECT_FALSE(R->RestoreWrittenOnly);
  EXPECT_FALSE(R->KernelReplay);
  EXPECT_EQ(R->WarmUpLaunches, 0u);
  EXPECT_FALSE(R->CleanInPass);
}

TEST(ProbeProtocolTest, MalformedConfigsAreErrors) {
  const char *Bad[] = {
      "",
      "[]",
      "{",
      R"({"mode": "fast", "resultPath": "r"})",
      R"({"mode": 3, "resultPath": "r"})",
      R"({"mode": "time"})",
      R"({"mode": "reference", "resultPath": "r"})",
      R"({"mode": "time", "resultPath": "r", "replays": -1})",
      R"({"mode": "time", "resultPath": "r", "compareOnHost": 1})",
      R"({"mode": "metrics", "resultPath": "r", "cleanL2": "no"})",
      R"({"mode": "metrics", "resultPath": "r", "freshProfiler": 1})",
      R"({"mode": "metrics", "resultPath": "r", "restoreWrittenOnly": "y"})",
      R"({"mode": "metrics", "resultPath": "r", "kernelReplay": 0})",
      R"({"mode": "metrics", "resultPath": "r", "warmUpLaunches": -1})",
      R"({"mode": "metrics", "resultPath": "r", "cleanInPass": "yes"})",
      R"({"mode": "time", "resultPath": "r", "replays": 1.5})",
      R"({"mode": "time", "resultPath": "r", "replays": 99999999999})",
      R"({"mode": "time", "resultPath": "r", "kernels": {}})",
      R"({"mode": "time", "resultPath": "r", "kernels": [{"params": []}]})",
      R"({"mode": "time", "resultPath": "r", "kernels": [{"name": "k", "params": [{"pointer": "yes"}]}]})",
      R"({"mode": "time", "resultPath": "r", "tolerance": {"relTol": -1}})",
      R"({"mode": "time", "resultPath": "r", "tolerance": []})",
      R"({"mode": "time", "resultPath": "r", "metrics": [1]})",
      R"({"mode": "time", "resultPath": "r", "flushL2": "true"})",
      // A pointer member outside its struct, or not on a whole word.
      R"({"mode": "time", "resultPath": "r", "kernels": [{"name": "k", "params": [{"pointer": true, "elementSize": 16, "pointerFields": [{"offset": 16}]}]}]})",
      R"({"mode": "time", "resultPath": "r", "kernels": [{"name": "k", "params": [{"pointer": true, "elementSize": 16, "pointerFields": [{"offset": 4}]}]}]})",
      R"({"mode": "time", "resultPath": "r", "kernels": [{"name": "k", "params": [{"pointer": true, "elementSize": 16, "pointerFields": {}}]}]})",
  };
  for (const char *Text : Bad) {
    auto R = readProbeConfig(Text);
    EXPECT_FALSE(bool(R)) << Text;
    if (!R) {
      std::string Msg = errorText(R.takeError());
      EXPECT_EQ(Msg.rfind("invalid probe config: ", 0), 0u) << Msg;
    }
  }
}

TEST(ProbeProtocolTest, ResultRoundTripKeepsNonFiniteErrors) {
  ProbeResult R;
  R.Mode = ProbeMode::Candidate;
  LaunchRecord L;
  L.Kernel = "saxpy";
  L.Ordinal = 4;
  L.Grid[0] = 4096;
  L.Block[0] = 256;
  L.DynamicShared = 1024;
  L.Registers = 16;
  L.Verified = true;
  BufferCheck B;
  B.Param = 3;
  B.Word = 1;
  B.Element = 5;
  B.Bytes = 4096;
  B.Status = "mismatch";
  B.Written = true;
  B.UnexpectedWrite = true;
  B.Mismatches = 12;
  B.FirstDiffIndex = 1023;
  B.Expected = "1.5";
  B.Actual = "nan";
  B.MaxAbsErr = std::numeric_limits<double>::infinity();
  B.MaxRelErr = 0.5;
  B.Scale = 4.25;
  L.Buffers.push_back(B);
  BufferCheck Ok;
  L.Buffers.push_back(Ok);
  L.TimesMs = {1.25, 1.5};
  L.Metrics["dram__bytes_read.sum"] = 1e9;
  L.ComparedOn = "device";
  L.Replay = "user";
  L.L2Cleaned = true;
  L.Passes = 3;
  R.Launches.push_back(L);
  R.Errors.push_back("cuptiSubscribe failed");
  R.MetricsUnavailable = "profiling is not supported on this device";
  R.ProfilerPasses = 3;

  auto Back = readProbeResult(writeProbeResult(R));
  ASSERT_TRUE(bool(Back)) << errorText(Back.takeError());
  ASSERT_EQ(Back->Launches.size(), 1u);
  const LaunchRecord &BL = Back->Launches[0];
  EXPECT_EQ(BL.Kernel, "saxpy");
  EXPECT_EQ(BL.Ordinal, 4u);
  EXPECT_EQ(BL.Grid[0], 4096u);
  EXPECT_EQ(BL.Block[0], 256u);
  EXPECT_EQ(BL.DynamicShared, 1024u);
  EXPECT_EQ(BL.Registers, 16u);
  EXPECT_TRUE(BL.Verified);
  ASSERT_EQ(BL.Buffers.size(), 2u);
  const BufferCheck &BB = BL.Buffers[0];
  EXPECT_EQ(BB.Param, 3u);
  EXPECT_EQ(BB.Word, 1u);
  EXPECT_EQ(BB.Element, 5u);
  EXPECT_EQ(BB.Status, "mismatch");
  EXPECT_TRUE(BB.Written);
  EXPECT_TRUE(BB.UnexpectedWrite);
  EXPECT_EQ(BB.Mismatches, 12u);
  ASSERT_TRUE(BB.FirstDiffIndex);
  EXPECT_EQ(*BB.FirstDiffIndex, 1023u);
  EXPECT_EQ(BB.Actual, "nan");
  EXPECT_TRUE(std::isinf(BB.MaxAbsErr));
  EXPECT_DOUBLE_EQ(BB.MaxRelErr, 0.5);
  EXPECT_DOUBLE_EQ(BB.Scale, 4.25);
  EXPECT_EQ(BL.Buffers[1].Scale, 0);
  EXPECT_FALSE(BL.Buffers[1].FirstDiffIndex);
  EXPECT_EQ(BL.TimesMs.size(), 2u);
  EXPECT_DOUBLE_EQ(BL.Metrics.at("dram__bytes_read.sum"), 1e9);
  EXPECT_EQ(BL.ComparedOn, "device");
  EXPECT_EQ(BL.Replay, "user");
  EXPECT_TRUE(BL.L2Cleaned);
  EXPECT_EQ(BL.Passes, 3u);
  EXPECT_EQ(Back->Errors.size(), 1u);
  EXPECT_EQ(Back->ProfilerPasses, 3u);
  EXPECT_EQ(Back->MetricsUnavailable, R.MetricsUnavailable);
}

TEST(ProbeProtocolTest, MalformedResultsAreErrors) {
  const char *Bad[] = {
      "null",
      R"({"launches": [{"grid": [1, 2]}]})",
      R"({"launches": [{"buffers": [{"maxAbsErr": "big"}]}]})",
      R"({"launches": [{"metrics": {"m": true}}]})",
      R"({"launches": [{"timesMs": [1, null]}]})",
      R"({"launches": [{"replay": 1}]})",
      R"({"launches": [{"comparedOn": false}]})",
      R"({"launches": [{"l2Cleaned": "yes"}]})",
      R"({"launches": [{"passes": -2}]})",
      R"({"profilerPasses": "two"})",
      R"({"errors": "one"})",
  };
  for (const char *Text : Bad) {
    auto R = readProbeResult(Text);
    EXPECT_FALSE(bool(R)) << Text;
    if (!R)
      llvm::consumeError(R.takeError());
  }
}

// A truncated or corrupted document (a probe killed mid-write, a disk full)
// must come back as an error, never abort the evaluator.
TEST(ProbeProtocolTest, FuzzedDocumentsNeverAbort) {
  ProbeResult R;
  LaunchRecord L;
  L.Kernel = "k";
  L.Buffers.resize(2);
  L.TimesMs = {1, 2, 3};
  R.Launches.push_back(L);
  std::string Docs[] = {writeProbeResult(R), writeProbeConfig(sampleConfig())};
  std::mt19937 Rng(42);
  const char Alphabet[] = "{}[]\":,0123456789.-eE truefalsnul\\";
  unsigned Errors = 0;
  for (const std::string &Doc : Docs) {
    for (unsigned I = 0; I < 3000; ++I) {
      std::string S = Doc;
      unsigned Edits = 1 + Rng() % 4;
      for (unsigned E = 0; E < Edits; ++E) {
        size_t Pos = Rng() % S.size();
        switch (Rng() % 3) {
        case 0:
          S[Pos] = Alphabet[Rng() % (sizeof(Alphabet) - 1)];
          break;
        case 1:
          S.erase(Pos, 1 + Rng() % 8);
          break;
        default:
          S.resize(Pos);
          break;
        }
        if (S.empty())
          S = "{";
      }
      if (auto C = readProbeConfig(S); !C) {
        llvm::consumeError(C.takeError());
        ++Errors;
      }
      if (auto P = readProbeResult(S); !P) {
        llvm::consumeError(P.takeError());
        ++Errors;
      }
    }
  }
  EXPECT_GT(Errors, 3000u);
}

TEST(KernelNameTest, BaseName) {
  EXPECT_EQ(kernelBaseName("saxpy(int, float, float const*, float*)"), "saxpy");
  EXPECT_EQ(kernelBaseName("void ops::scale<float, 256>(float*, int)"),
            "ops::scale<float, 256>");
  EXPECT_EQ(kernelBaseName("(anonymous namespace)::k(int*)"),
            "(anonymous namespace)::k");
  EXPECT_EQ(kernelBaseName("reduce_sum"), "reduce_sum");
  EXPECT_EQ(kernelBaseName("void f<(anonymous namespace)::T>(int)"),
            "f<(anonymous namespace)::T>");
  EXPECT_EQ(kernelBaseName("unsigned int g<unsigned int>(void (*)(int))"),
            "g<unsigned int>");
}

TEST(KernelNameTest, Matching) {
  EXPECT_TRUE(kernelNameMatches("saxpy", "saxpy"));
  EXPECT_FALSE(kernelNameMatches("saxpy", "saxpy2"));
  EXPECT_FALSE(kernelNameMatches("sax", "saxpy"));
  EXPECT_TRUE(kernelNameMatches("ops::scale", "ops::scale<float, 256>"));
  EXPECT_TRUE(
      kernelNameMatches("ops::scale<float, 256>", "ops::scale<float, 256>"));
  EXPECT_FALSE(
      kernelNameMatches("ops::scale<int, 256>", "ops::scale<float, 256>"));
  EXPECT_FALSE(kernelNameMatches("", "k"));
}

} // namespace

TEST(StagedLastTest, OnlyAfterTheFirstLaunchesAndWhenSaved) {
  EXPECT_EQ(stagedLastOrdinal(130, 3, true, true),
            std::optional<unsigned>(129));
  EXPECT_EQ(stagedLastOrdinal(130, 3, false, true), std::nullopt);
  EXPECT_EQ(stagedLastOrdinal(130, 3, true, false), std::nullopt);
  // Every launch was among the first: none was staged.
  EXPECT_EQ(stagedLastOrdinal(3, 3, true, true), std::nullopt);
  EXPECT_EQ(stagedLastOrdinal(4, 3, true, true), std::optional<unsigned>(3));
  // An old reference without a launch count.
  EXPECT_EQ(stagedLastOrdinal(-1, 3, true, true), std::nullopt);
}

TEST(StagedLastTest, LastMatchedByBeingLastNotByOrdinal) {
  // The reference launched 130 times (snapshots 0-2 and 129); this run
  // launches 330 times: launch 129 is somewhere in the middle and must not
  // be compared with the reference's 129. Every launch past the first is
  // staged, and the last one kept is compared at exit.
  std::optional<unsigned> Last = 129;
  EXPECT_EQ(candidateAction(0, true, Last, 3), CandidateAction::Verify);
  EXPECT_EQ(candidateAction(2, true, Last, 3), CandidateAction::Verify);
  EXPECT_EQ(candidateAction(3, false, Last, 3), CandidateAction::StageLast);
  EXPECT_EQ(candidateAction(129, true, Last, 3), CandidateAction::StageLast);
  EXPECT_EQ(candidateAction(329, false, Last, 3), CandidateAction::StageLast);
}

TEST(StagedLastTest, WithoutAStagedLastOrdinalsDecide) {
  EXPECT_EQ(candidateAction(1, true, std::nullopt, 3), CandidateAction::Verify);
  EXPECT_EQ(candidateAction(7, false, std::nullopt, 3), CandidateAction::None);
  // A reference made with VerifyLast off or an older probe: its snapshot at
  // 5 is compared by ordinal.
  EXPECT_EQ(candidateAction(5, true, std::nullopt, 3), CandidateAction::Verify);
}

TEST(StagedLastTest, FirstLaunchesOfAReferenceWithMoreAreStillMatched) {
  // The reference verified its first 5 launches; this run's VerifyFirst
  // is 3: launches 3 and 4 are still compared by ordinal, not staged.
  std::optional<unsigned> Last = 40;
  EXPECT_EQ(candidateAction(3, true, Last, 3), CandidateAction::Verify);
  EXPECT_EQ(candidateAction(4, true, Last, 3), CandidateAction::Verify);
  EXPECT_EQ(candidateAction(5, false, Last, 3), CandidateAction::StageLast);
  // This run's VerifyFirst is larger: launches below it without a
  // snapshot are left alone.
  EXPECT_EQ(candidateAction(4, false, Last, 6), CandidateAction::None);
}
