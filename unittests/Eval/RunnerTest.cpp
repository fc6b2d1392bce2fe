#include "optiml/Eval/Runner.h"
#include "EvalTestUtil.h"
#include "optiml/Support/FileUtil.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

using namespace llvm;
using namespace optiml;
using namespace optiml::testing;

namespace {

/// Runs the test in \p Dir (relative paths are relative to it) and goes
/// back afterwards.
class InDirectory {
public:
  explicit InDirectory(StringRef Dir) {
    sys::fs::current_path(Old);
    sys::fs::set_current_path(Dir);
  }
  ~InDirectory() { sys::fs::set_current_path(Old); }

private:
  SmallString<256> Old;
};

std::vector<std::string> lines(StringRef Path) {
  std::vector<std::string> Out;
  auto Text = readFile(Path);
  if (!Text) {
    consumeError(Text.takeError());
    return Out;
  }
  SmallVector<StringRef, 8> L;
  StringRef(*Text).split(L, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef S : L)
    Out.push_back(S.str());
  return Out;
}

// The program runs in a private directory: the run directory, the probe,
// the snapshots and the program itself, named relatively by the caller,
// reach it as absolute paths (the default run directory once broke every
// evaluation this way).
TEST(RunnerTest, ProbedRunGetsAbsolutePaths) {
  TempDir D;
  InDirectory In(D.Path);
  std::string Record = D.file("record");
  D.write("probe.so", "");
  D.write("prog",
          "#!/bin/sh\n"
          "echo \"$OPTIML_PROBE_CONFIG\" > " +
              Record +
              "\n"
              "echo \"$CUDA_INJECTION64_PATH\" >> " +
              Record +
              "\n"
              "sed -n 's/.*\"snapshotDir\": *\"\\([^\"]*\\)\".*/\\1/p;"
              "s/.*\"resultPath\": *\"\\([^\"]*\\)\".*/\\1/p' "
              "\"$OPTIML_PROBE_CONFIG\" >> " +
              Record + "\n",
          /*Executable=*/true);
  RunnerOptions Opts;
  Opts.ProbeLibrary = "probe.so";
  ProbeConfig C;
  C.SnapshotDir = "run/snapshots";
  sys::fs::create_directories("run");
  auto R = runWithProbe("./prog", C, "run", "reference", std::nullopt, Opts);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_TRUE(R->Process.succeeded()) << R->Process.Stderr;
  std::vector<std::string> Got = lines(Record);
  ASSERT_EQ(Got.size(), 4u);
  for (const std::string &P : Got)
    EXPECT_TRUE(sys::path::is_absolute(P)) << P;
  EXPECT_EQ(Got[0], D.file("run/reference.config.json"));
  EXPECT_EQ(Got[1], D.file("probe.so"));
  EXPECT_EQ(Got[2], D.file("run/reference.result.json"));
  EXPECT_EQ(Got[3], D.file("run/snapshots"));
  EXPECT_TRUE(sys::path::is_absolute(R->ConfigPath));
}

// A probe that cannot read its configuration or write its result is the
// tool's failure, reported as an error, not a verdict on the program.
TEST(RunnerTest, ProbeMachineryFailureIsAnError) {
  TempDir D;
  D.write("probe.so", "");
  std::string Prog = D.write(
      "prog",
      "#!/bin/sh\n"
      "echo \"optiml-probe: cannot read $OPTIML_PROBE_CONFIG: the program "
      "runs unobserved\" >&2\n",
      /*Executable=*/true);
  RunnerOptions Opts;
  Opts.ProbeLibrary = D.file("probe.so");
  auto R = runWithProbe(Prog, ProbeConfig(), D.Path, "reference", std::nullopt,
                        Opts);
  ASSERT_FALSE(bool(R));
  std::string Msg = toString(R.takeError());
  EXPECT_NE(Msg.find("internal error: the tool could not observe the "
                     "reference run"),
            std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("this is not a fault of the program"), std::string::npos);

  // The same words about some other file are the program's own output: the
  // run is a result (without a probe result), not an error.
  std::string Other =
      D.write("other",
              "#!/bin/sh\n"
              "echo 'optiml-probe: cannot write /elsewhere/x' >&2\n",
              /*Executable=*/true);
  auto R2 = runWithProbe(Other, ProbeConfig(), D.Path, "candidate",
                         std::nullopt, Opts);
  ASSERT_TRUE(bool(R2)) << toString(R2.takeError());
  EXPECT_EQ(R2->ProbeProblem, "the probe wrote no result");
}

TEST(RunnerTest, ProbeMachineryFailureLines) {
  EXPECT_EQ(probeMachineryFailure("x\noptiml-probe: cannot read /r/a.json: "
                                  "the program runs unobserved\n"),
            "optiml-probe: cannot read /r/a.json: the program runs unobserved");
  EXPECT_EQ(probeMachineryFailure("optiml-probe: cannot write /r/b.json\n"),
            "optiml-probe: cannot write /r/b.json");
  EXPECT_EQ(probeMachineryFailure("optiml-probe: scale launch 0: out of "
                                  "memory\n"),
            "");
  EXPECT_EQ(probeMachineryFailure("cannot write /r/b.json\n"), "");
}

} // namespace
