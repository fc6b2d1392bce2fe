#include "optiml/Support/Process.h"
#include "llvm/Support/FileSystem.h"
#include "gtest/gtest.h"
#include <csignal>
#include <cstdlib>

using namespace llvm;
using namespace optiml;

namespace {

ProcessResult runShell(StringRef Script, double Timeout = 20,
                       size_t Limit = 1 << 20) {
  ProcessOptions O;
  O.Args = {"/bin/sh", "-c", Script.str()};
  O.TimeoutSeconds = Timeout;
  O.OutputLimit = Limit;
  auto R = runProcess(O);
  if (!R) {
    ADD_FAILURE() << toString(R.takeError());
    return ProcessResult();
  }
  return std::move(*R);
}

TEST(ProcessTest, CapturesOutputAndStatus) {
  ProcessResult R = runShell("echo hello; echo oops >&2; exit 3");
  ASSERT_TRUE(R.ExitCode.has_value());
  EXPECT_EQ(*R.ExitCode, 3);
  EXPECT_FALSE(R.succeeded());
  EXPECT_EQ(R.Stdout, "hello\n");
  EXPECT_EQ(R.Stderr, "oops\n");
  EXPECT_EQ(R.describe(), "exited with status 3");
  // SHA-256 of "hello\n".
  EXPECT_EQ(R.StdoutHash,
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
}

TEST(ProcessTest, HangIsKilledWithItsGroup) {
  // The shell's child keeps the pipe open too: the whole group must go.
  ProcessResult R = runShell("sleep 100 & sleep 100; echo never", 0.5);
  EXPECT_TRUE(R.TimedOut);
  EXPECT_FALSE(R.ExitCode.has_value());
  EXPECT_LT(R.WallSeconds, 5.0);
  EXPECT_EQ(R.Stdout, "");
  EXPECT_NE(R.describe().find("timed out"), std::string::npos);
}

TEST(ProcessTest, CrashIsReportedAsSignal) {
  ProcessResult R = runShell("kill -SEGV $$");
  EXPECT_FALSE(R.TimedOut);
  EXPECT_EQ(R.Signal, SIGSEGV);
  EXPECT_EQ(R.describe(), "killed by signal 11 (SIGSEGV)");
}

TEST(ProcessTest, FloodKeepsTheTail) {
  // About 8 MB of output, 4 KiB kept: the last line must survive.
  ProcessResult R =
      runShell("yes 0123456789012345678901234567890123456789 | head -n 200000; "
               "echo THE-END",
               30, 4096);
  ASSERT_TRUE(R.succeeded()) << R.describe();
  EXPECT_EQ(R.Stdout.size(), 4096u);
  EXPECT_TRUE(R.stdoutTruncated());
  EXPECT_EQ(R.StdoutBytes, 200000u * 41 + 8);
  EXPECT_EQ(StringRef(R.Stdout).take_back(8), "THE-END\n");
}

TEST(ProcessTest, StdinIsClosed) {
  // `cat` would block forever on an open terminal or pipe; what it reads
  // (nothing, from /dev/null) is counted, not printed.
  ProcessResult R = runShell("/bin/cat | /usr/bin/wc -c; echo done", 5);
  ASSERT_TRUE(R.succeeded()) << R.describe();
  EXPECT_EQ(StringRef(R.Stdout).trim(), "0\ndone");
}

TEST(ProcessTest, PrivateTempDirIsCwdAndTmpdirAndIsRemoved) {
  ProcessOptions O;
  O.Args = {"/bin/sh", "-c", "pwd; echo $TMPDIR; touch scratch"};
  auto R = runProcess(O);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  StringRef Out = R->Stdout;
  auto [Pwd, Rest] = Out.split('\n');
  StringRef Tmp = Rest.split('\n').first;
  EXPECT_EQ(Pwd, Tmp);
  EXPECT_NE(Pwd.find("optiml-run"), StringRef::npos);
  EXPECT_FALSE(sys::fs::exists(Pwd));
}

TEST(ProcessTest, ChildEnvironmentIsAnAllowList) {
  ::setenv("OPENAI_API_KEY", "sk-secret", 1);
  ::setenv("SOMEVENDOR_API_KEY", "secret2", 1);
  ::setenv("GITHUB_TOKEN", "secret3", 1);
  // A key under a name that looks like nothing in particular (what
  // "api_key_env" may name): a deny-list would let it through.
  ::setenv("MY_LLM_CRED", "secret4", 1);
  ::setenv("OPTIML_HARMLESS", "dropped", 1);
  ::setenv("CUDA_CACHE_MAXSIZE", "1234", 1);
  ::setenv("LC_ALL", "C", 1);
  ProcessOptions O;
  O.Args = {"/usr/bin/env"};
  O.Env["OPTIML_SET"] = "yes";
  O.Env["EXTRA_API_KEY"] = "secret5"; // set explicitly: still refused
  auto R = runProcess(O);
  for (const char *N :
       {"OPENAI_API_KEY", "SOMEVENDOR_API_KEY", "GITHUB_TOKEN", "MY_LLM_CRED",
        "OPTIML_HARMLESS", "CUDA_CACHE_MAXSIZE", "LC_ALL"})
    ::unsetenv(N);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Stdout.find("secret"), std::string::npos) << R->Stdout;
  EXPECT_EQ(R->Stdout.find("sk-"), std::string::npos);
  EXPECT_EQ(R->Stdout.find("OPTIML_HARMLESS"), std::string::npos);
  EXPECT_NE(R->Stdout.find("CUDA_CACHE_MAXSIZE=1234"), std::string::npos);
  EXPECT_NE(R->Stdout.find("LC_ALL=C"), std::string::npos);
  EXPECT_NE(("\n" + R->Stdout).find("\nPATH="), std::string::npos);
  EXPECT_NE(R->Stdout.find("OPTIML_SET=yes"), std::string::npos);
  EXPECT_NE(R->Stdout.find("TMPDIR="), std::string::npos);
}

TEST(ProcessTest, MissingProgramIsAnError) {
  ProcessOptions O;
  O.Args = {"/nonexistent/program"};
  auto R = runProcess(O);
  ASSERT_FALSE(bool(R));
  EXPECT_NE(toString(R.takeError()).find("/nonexistent/program"),
            std::string::npos);
}

TEST(ProcessTest, NextRunAfterFailuresIsNormal) {
  runShell("sleep 100", 0.3);
  runShell("kill -SEGV $$");
  ProcessResult R = runShell("echo fine");
  EXPECT_TRUE(R.succeeded());
  EXPECT_EQ(R.Stdout, "fine\n");
  EXPECT_LT(R.WallSeconds, 2.0);
}

TEST(ProcessTest, LastLines) {
  EXPECT_EQ(lastLines("a\nb\n\nc\n", 2), "b\nc\n");
  EXPECT_EQ(lastLines("", 3), "");
}

} // namespace
