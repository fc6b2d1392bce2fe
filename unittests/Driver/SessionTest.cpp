//===- SessionTest.cpp - The optimize session as a library ----------------===//
//
// The request's checks, the dry run followed through an observer (its
// events in order, the input untouched), the refusals before any work, and
// the events' JSON lines read back as written.
//
//===----------------------------------------------------------------------===//

#include "optiml/Driver/Events.h"
#include "optiml/Driver/Optimize.h"
#include "optiml/Eval/Runner.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace llvm;
using namespace optiml;

namespace {

/// Every event, in order, as "kind: text".
struct Recorder : SessionObserver {
  std::vector<std::string> Events;
  unsigned Progress = 0;
  bool Stop = false;
  void message(StringRef T) override {
    Events.push_back("message: " + T.str());
  }
  void warning(StringRef T) override {
    Events.push_back("warning: " + T.str());
  }
  void note(StringRef T) override { Events.push_back("note: " + T.str()); }
  void result(StringRef T) override { Events.push_back("result: " + T.str()); }
  void started(const SessionStart &S) override {
    Events.push_back("started: " + S.RunDir);
  }
  void progress(const SearchProgress &) override { ++Progress; }
  bool shouldStop() override { return Stop; }
};

const char *const Program = R"(#include "cuda_mock.h"
__global__ void scale(int n, float a, float *x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    for (int k = 0; k < 4; ++k)
      x[i] = a * x[i] + 1.0f;
}
int main() {
  float *x = nullptr;
  cudaMalloc(&x, 1024 * sizeof(float));
  scale<<<4, 256>>>(1024, 2.0f, x);
  cudaDeviceSynchronize();
  return 0;
}
)";

class SessionTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("optiml-session", Dir));
    File = (Dir + "/scale.cu").str();
    std::error_code EC;
    raw_fd_ostream OS(File, EC);
    ASSERT_FALSE(EC);
    OS << Program;
  }
  void TearDown() override { (void)sys::fs::remove_directories(Dir); }

  OptimizeRequest request() const {
    OptimizeRequest R;
    R.InputFile = File;
    R.Policy = "catalog";
    R.NoDb = true;
    R.Analyze.Tools.ResourceDir = OPTIML_TEST_RESOURCE_DIR;
    R.Analyze.ExtraArgs = {"-nocudainc", "-nocudalib",
                           std::string("-I") + OPTIML_TEST_INPUTS};
    return R;
  }

  static std::string requestMessage(Error E) {
    std::string M;
    handleAllErrors(
        std::move(E), [&](const RequestError &R) { M = R.message(); },
        [&](const ErrorInfoBase &Other) {
          M = "not a request error: " + Other.message();
        });
    return M;
  }

  SmallString<128> Dir;
  std::string File;
};

TEST_F(SessionTest, RequestsThatConflictAreRefusedAsRequestErrors) {
  OptimizeRequest R = request();
  R.InPlace = true;
  R.Output = "out.cu";
  EXPECT_EQ(requestMessage(checkRequest(R)),
            "-o and -i are exclusive: write the best variant to a new file or "
            "over the input, not both");
  R = request();
  R.Budget = 0u;
  EXPECT_EQ(requestMessage(checkRequest(R)), "--budget must be at least 1");
  R = request();
  R.Strategy = "annealing";
  EXPECT_EQ(requestMessage(checkRequest(R)),
            "unknown --strategy 'annealing' (expected mcts, greedy, beam or "
            "random)");
  R = request();
  R.NoCompile = true;
  EXPECT_EQ(requestMessage(checkRequest(R)),
            "--no-compile only applies to --dry-run");
  R = request();
  R.BuildArgs = {"-lcublas; rm -rf /"};
  EXPECT_NE(requestMessage(checkRequest(R)).find("--build-arg"),
            std::string::npos);
  EXPECT_FALSE(bool(checkRequest(request())));
}

TEST_F(SessionTest, DryRunTellsItsListingInOrderAndWritesNothing) {
  OptimizeRequest R = request();
  R.DryRun = true;
  R.NoCompile = true;
  R.Output = (Dir + "/never.cu").str();
  Recorder Obs;
  auto O = optimizeFile(R, Obs);
  ASSERT_TRUE(bool(O)) << toString(O.takeError());
  EXPECT_FALSE(O->Improved);
  EXPECT_EQ(O->File, File);
  ASSERT_GE(Obs.Events.size(), 4u);
  EXPECT_EQ(Obs.Events[0], "message: clang-optiml: policy catalog (--policy "
                           "catalog)");
  EXPECT_TRUE(
      StringRef(Obs.Events[1]).starts_with("result: " + File + ": dry run: "))
      << Obs.Events[1];
  EXPECT_NE(Obs.Events[1].find("(kernels: scale)"), std::string::npos);
  EXPECT_EQ(Obs.Events[2], "result: compile skipped: --no-compile\n");
  // One block per candidate, then the closing count.
  EXPECT_TRUE(StringRef(Obs.Events[3]).starts_with("result: [1] "));
  EXPECT_TRUE(StringRef(Obs.Events.back()).contains("applied and checked"));
  EXPECT_TRUE(StringRef(Obs.Events.back())
                  .ends_with("; nothing was run or written (a CUDA GPU is "
                             "needed to measure)\n"));
  EXPECT_EQ(Obs.Progress, 0u);
  EXPECT_FALSE(sys::fs::exists(R.Output));
  auto Now = MemoryBuffer::getFile(File);
  ASSERT_TRUE(bool(Now));
  EXPECT_EQ((*Now)->getBuffer(), Program);
}

TEST_F(SessionTest, MissingInputAndMissingGpuAreRefusedBeforeAnyWork) {
  OptimizeRequest R = request();
  R.InputFile = (Dir + "/absent.cu").str();
  Recorder Obs;
  auto O = optimizeFile(R, Obs);
  ASSERT_FALSE(bool(O));
  EXPECT_EQ(toString(O.takeError()),
            "cannot open '" + R.InputFile + "': No such file or directory");
  EXPECT_TRUE(Obs.Events.empty());

  if (!queryGpus().Gpus.empty())
    GTEST_SKIP() << "this machine has a GPU";
  R = request();
  O = optimizeFile(R, Obs);
  ASSERT_FALSE(bool(O));
  EXPECT_NE(toString(O.takeError()).find("a CUDA GPU is needed to optimize"),
            std::string::npos);
  EXPECT_TRUE(Obs.Events.empty());
}

TEST_F(SessionTest, UnknownKernelIsNamedWithTheKernelsThereAre) {
  OptimizeRequest R = request();
  R.DryRun = true;
  R.Kernels = {"nosuch"};
  Recorder Obs;
  auto O = optimizeFile(R, Obs);
  ASSERT_FALSE(bool(O));
  EXPECT_EQ(toString(O.takeError()),
            "no kernel named 'nosuch' in '" + File + "' (kernels: scale)");
}

TEST_F(SessionTest, TargetWithoutBuildDirectoryIsARequestError) {
  Recorder Obs;
  auto O = optimizeTarget(request(), "app", Obs);
  ASSERT_FALSE(bool(O));
  EXPECT_EQ(requestMessage(O.takeError()),
            "--target reads a CMake target: name its build directory with -p "
            "(clang-optiml optimize -p build --target app)");
}

TEST(SessionEventsTest, EveryEventIsOneLineReadBackAsWritten) {
  std::string Out;
  raw_string_ostream OS(Out);
  JsonEventWriter W(OS);
  SessionStart S;
  S.Input = "k.cu";
  S.File = "/p/k.cuh";
  S.Kernels = {"a", "ns::b"};
  S.Strategy = "greedy";
  S.Policy = "catalog";
  S.Budget = 12;
  S.Seconds = 90;
  S.RunDir = "/p/.optiml/k-1";
  W.started(S);
  SearchProgress P;
  P.Done = 3;
  P.Budget = 12;
  P.BestSpeedup = 2.5;
  P.Current = "unroll k/loop0";
  P.EtaSeconds = 75;
  P.SameCodeSkipped = 2;
  W.progress(P);
  W.message("line one\nline two");
  W.searchFailed(createStringError("k.cu does not build"));
  SessionOutcome O;
  O.Improved = true;
  O.Speedup = 2.5;
  O.Conclusion = "2.50x faster than the original (verified)";
  O.BestPath = "/p/.optiml/k-1/best.cu";
  O.ExtraFlags = {"-use_fast_math"};
  W.outcome(O);

  SmallVector<StringRef, 8> Lines;
  StringRef(Out).rtrim('\n').split(Lines, '\n');
  ASSERT_EQ(Lines.size(), 5u);
  auto E0 = parseSessionEvent(Lines[0]);
  ASSERT_TRUE(E0);
  EXPECT_EQ(E0->Kind, "started");
  EXPECT_EQ(E0->Start.File, "/p/k.cuh");
  EXPECT_EQ(E0->Start.Kernels, S.Kernels);
  EXPECT_EQ(E0->Start.Budget, 12u);
  EXPECT_EQ(E0->Start.RunDir, S.RunDir);
  auto E1 = parseSessionEvent(Lines[1]);
  ASSERT_TRUE(E1);
  EXPECT_EQ(E1->Kind, "progress");
  EXPECT_EQ(progressLine(E1->Progress), progressLine(P));
  EXPECT_EQ(E1->Progress.SameCodeSkipped, 2u);
  EXPECT_EQ(progressLine(P), "[3/12] best 2.50x  eta 1m15s  unroll k/loop0");
  auto E2 = parseSessionEvent(Lines[2]);
  ASSERT_TRUE(E2);
  EXPECT_EQ(E2->Kind, "message");
  EXPECT_EQ(E2->Text, "line one\nline two");
  auto E3 = parseSessionEvent(Lines[3]);
  ASSERT_TRUE(E3);
  EXPECT_EQ(E3->Kind, "error");
  EXPECT_EQ(E3->Text, "k.cu does not build");
  auto E4 = parseSessionEvent(Lines[4]);
  ASSERT_TRUE(E4);
  EXPECT_EQ(E4->Kind, "outcome");
  EXPECT_TRUE(E4->Outcome.Improved);
  EXPECT_EQ(E4->Outcome.Conclusion, O.Conclusion);
  EXPECT_EQ(E4->Outcome.BestPath, O.BestPath);
  EXPECT_EQ(E4->Outcome.ExtraFlags, O.ExtraFlags);
}

TEST(SessionEventsTest, OtherLinesAreNotEvents) {
  EXPECT_FALSE(parseSessionEvent("clang-optiml: error: no GPU"));
  EXPECT_FALSE(parseSessionEvent(""));
  EXPECT_FALSE(parseSessionEvent("{not json"));
  EXPECT_FALSE(parseSessionEvent("[1, 2]"));
  EXPECT_FALSE(parseSessionEvent(R"({"text": "no kind"})"));
  EXPECT_FALSE(parseSessionEvent(R"({"event": 3})"));
  // Fields of the wrong type read as absent, never as garbage.
  auto E = parseSessionEvent(
      R"({"event": "progress", "done": "many", "budget": -4, "best": null})");
  ASSERT_TRUE(E);
  EXPECT_EQ(E->Progress.Done, 0u);
  EXPECT_EQ(E->Progress.Budget, 0u);
  EXPECT_EQ(E->Progress.BestSpeedup, 1.0);
  EXPECT_EQ(formatDuration(-1), "?");
  EXPECT_EQ(formatDuration(3720), "1h02m");
}

} // namespace
