//===- SecretsTest.cpp - Keys out of children, /proc and logs -------------===//

#include "optiml/Support/Secrets.h"
#include "optiml/Support/Process.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "gtest/gtest.h"
#include <cstdlib>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace llvm;
using namespace optiml;

namespace {

// Built at run time, so the values are in no file (not even this binary).
std::string canary(StringRef Tag) {
  return ("canary-" + Tag + "-" + std::to_string(0x5eed * 7919) + "-x").str();
}

std::string readProcFile(const char *Path) {
  auto B = MemoryBuffer::getFileAsStream(Path);
  return B ? (*B)->getBuffer().str() : std::string();
}

TEST(SecretNames, OnePolicy) {
  for (const char *N :
       {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
        "MY_SERVER_API_KEY", "hf_token", "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "OPENAI_ORG_ID", "API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS"})
    EXPECT_TRUE(isSecretEnvName(N)) << N;
  for (const char *N : {"PATH", "CUDA_VISIBLE_DEVICES", "OPENAI_BASE_URL",
                        "KEYBOARD", "TOKENIZERS_PARALLELISM"})
    EXPECT_FALSE(isSecretEnvName(N)) << N;
}

TEST(SecretNames, ChildAllowList) {
  for (const char *N :
       {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES",
        "CUDA_HOME", "NVIDIA_DRIVER_CAPABILITIES", "LD_LIBRARY_PATH",
        "NVCC_CCBIN", "CPATH"})
    EXPECT_TRUE(isChildEnvAllowed(N)) << N;
  for (const char *N : {"OPENAI_API_KEY", "CUDA_API_KEY", "MY_LLM_CRED",
                        "OPENAI_BASE_URL", "LD_PRELOAD", "https_proxy",
                        "SSH_AUTH_SOCK", "PWD", "OPTIML_PROBE_CONFIG", ""})
    EXPECT_FALSE(isChildEnvAllowed(N)) << N;
}

TEST(Redaction, KeyShapesWithBoundaries) {
  EXPECT_EQ(redactKeyShapes("key sk-proj-abcdefghijklmnop end"),
            "key [REDACTED] end");
  EXPECT_EQ(redactKeyShapes("Authorization: Bearer abc.def-ghijklmnop"),
            "Authorization: Bearer [REDACTED]");
  EXPECT_EQ(redactKeyShapes("{\"api_key\": \"local-1234-abcd\", \"n\": 1}"),
            "{\"api_key\": \"[REDACTED]\", \"n\": 1}");
  EXPECT_EQ(redactKeyShapes("http://bob:hunter2@gpu-box:8000/v1"),
            "http://[REDACTED]@gpu-box:8000/v1");
  EXPECT_EQ(redactKeyShapes("token ghp_abcdefghijklmnopqrstuvwxyz0123 x"),
            "token [REDACTED] x");
  // Code that merely contains the letters stays as it is.
  for (const char *Code : {"int v = mask-offset_value_per_block;",
                           "a risk-free sk-1 task", "http://127.0.0.1:8000/v1",
                           "float api_keys = 2;", "const int bearer = 3;"})
    EXPECT_EQ(redactKeyShapes(Code), Code);
}

TEST(Redaction, RegisteredValuesAndTheGlobalStore) {
  std::string V = canary("registered");
  EXPECT_EQ(redactSecrets("a " + V + " b"), "a " + V + " b");
  registerSecretValue(V);
  EXPECT_EQ(redactSecrets("a " + V + " b " + V), "a [REDACTED] b [REDACTED]");
  Redactor R;
  R.addSecret("abc"); // too short to mask safely
  EXPECT_EQ(R.redact("abc def"), "abc def");
}

TEST(Redaction, ChildEnvironmentDropsTakenVariables) {
  std::string V = canary("taken");
  ::setenv("OPTIML_TEST_CUDA_LIKE", V.c_str(), 1);
  ::setenv("CUDA_OPTIML_TEST_CRED", V.c_str(), 1); // allow-listed by prefix
  EXPECT_EQ(takeSecretVariable("CUDA_OPTIML_TEST_CRED"), V);
  EXPECT_EQ(::getenv("CUDA_OPTIML_TEST_CRED"), nullptr);
  EXPECT_EQ(lookupEnvironment("CUDA_OPTIML_TEST_CRED"), V);
  EXPECT_EQ(takeSecretVariable("CUDA_OPTIML_TEST_CRED"), V); // again
  std::map<std::string, std::string> Set = {{"CUDA_OPTIML_TEST_CRED", "x"}};
  for (const std::string &E : childEnvironment(Set)) {
    EXPECT_EQ(E.find(V), std::string::npos) << E;
    EXPECT_FALSE(StringRef(E).starts_with("CUDA_OPTIML_TEST_CRED=")) << E;
  }
  ::unsetenv("OPTIML_TEST_CUDA_LIKE");
}

// Runs in a copy of this binary started with keys in its original
// environment block (ScrubAtStartup below); skipped otherwise.
TEST(ScrubChild, KeysLeaveTheEnvironmentBlock) {
  if (!::getenv("OPTIML_SCRUB_CHILD"))
    GTEST_SKIP() << "runs only in the copy ScrubAtStartup starts";
  std::string Key = canary("openai"), Cred = canary("custom");
  std::string Before = readProcFile("/proc/self/environ");
  ASSERT_NE(Before.find(Key), std::string::npos);
  ASSERT_NE(Before.find(Cred), std::string::npos);

  ScrubSummary S = scrubEnvironmentAtStartup();
  EXPECT_TRUE(S.Wiped);
  EXPECT_EQ(S.Captured, std::vector<std::string>{"OPENAI_API_KEY"});
  EXPECT_EQ(capturedSecret("OPENAI_API_KEY"), Key);
  EXPECT_EQ(::getenv("OPENAI_API_KEY"), nullptr);
  // Other variables stay readable by the tool itself.
  ASSERT_NE(::getenv("MY_LLM_CRED"), nullptr);
  EXPECT_EQ(std::string(::getenv("MY_LLM_CRED")), Cred);
  EXPECT_EQ(std::string(::getenv("OPTIML_SCRUB_CHILD")), "1");
  // ...and an api_key_env variable is taken when the config names it.
  EXPECT_EQ(takeSecretVariable("MY_LLM_CRED"), Cred);

  std::string After = readProcFile("/proc/self/environ");
  EXPECT_EQ(After.find(Key), std::string::npos);
  EXPECT_EQ(After.find(Cred), std::string::npos);
  EXPECT_EQ(After.find("OPENAI_API_KEY"), std::string::npos);
  EXPECT_EQ(After.find("MY_LLM_CRED"), std::string::npos);
  EXPECT_NE(After.find("PATH="), std::string::npos); // allowed ones stay

  // A child looks for them: its environment, the parent's block, the
  // parent's memory.
  ProcessOptions O;
  O.Args = {"/bin/sh", "-c",
            "env; echo; cat /proc/$PPID/environ; echo; "
            "cat /proc/$PPID/cmdline; echo; "
            "if (exec 3</proc/$PPID/mem) 2>/dev/null; then echo MEM-READABLE; "
            "else echo MEM-DENIED; fi"};
  auto R = runProcess(O);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Stdout.find(Key), std::string::npos) << R->Stdout;
  EXPECT_EQ(R->Stdout.find(Cred), std::string::npos) << R->Stdout;
  EXPECT_EQ(R->Stdout.find("MY_LLM_CRED"), std::string::npos) << R->Stdout;
  EXPECT_NE(R->Stdout.find("MEM-DENIED"), std::string::npos) << R->Stdout;
}

TEST(Secrets, ScrubAtStartup) {
  std::string Self = sys::fs::getMainExecutable(nullptr, nullptr);
  ASSERT_FALSE(Self.empty());
  std::string Key = "OPENAI_API_KEY=" + canary("openai");
  std::string Cred = "MY_LLM_CRED=" + canary("custom");
  std::vector<std::string> Env = {Key, Cred, "OPTIML_SCRUB_CHILD=1"};
  for (char **E = environ; E && *E; ++E)
    if (!StringRef(*E).starts_with("OPENAI_API_KEY=") &&
        !StringRef(*E).starts_with("MY_LLM_CRED="))
      Env.push_back(*E);
  std::vector<char *> Envp;
  for (std::string &E : Env)
    Envp.push_back(E.data());
  Envp.push_back(nullptr);
  std::string Filter = "--gtest_filter=ScrubChild.*";
  char *Argv[] = {Self.data(), Filter.data(), nullptr};
  pid_t Pid;
  ASSERT_EQ(
      ::posix_spawn(&Pid, Self.c_str(), nullptr, nullptr, Argv, Envp.data()),
      0);
  int Status = 0;
  ASSERT_EQ(::waitpid(Pid, &Status, 0), Pid);
  ASSERT_TRUE(WIFEXITED(Status));
  EXPECT_EQ(WEXITSTATUS(Status), 0) << "the scrubbed copy failed; its output "
                                       "is above";
}

} // namespace
