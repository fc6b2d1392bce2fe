//===- SecretsTest.cpp ----------------------------------------------------===//

#include "optiml/LLM/Secrets.h"

#include "gtest/gtest.h"

namespace optiml {
namespace llm {
namespace {

TEST(Redactor, MasksRegisteredSecrets) {
  Redactor R;
  R.addSecret("my-local-token-value");
  R.addSecret("ab"); // Too short to mask safely.
  EXPECT_EQ(R.redact("token my-local-token-value and my-local-token-value"),
            "token [REDACTED] and [REDACTED]");
  EXPECT_EQ(R.redact("ab cd"), "ab cd");
}

TEST(Redactor, MasksKeyShapedStrings) {
  Redactor R;
  EXPECT_EQ(R.redact("key sk-proj-abcdefghijklmnop end"), "key [REDACTED] end");
  EXPECT_EQ(R.redact("Authorization: Bearer abc.def-ghijklmnop"),
            "Authorization: Bearer [REDACTED]");
  EXPECT_EQ(
      R.redact("x-api-key: sk-ant-api03-zzzzzzzzzzzz\nx-api-key: other12345"),
      "x-api-key: [REDACTED]\nx-api-key: [REDACTED]");
  EXPECT_EQ(R.redact("a risk-free sk-1 task"), "a risk-free sk-1 task");
}

TEST(Environment, SecretVariables) {
  EXPECT_TRUE(isSecretVariable("OPENAI_API_KEY"));
  EXPECT_TRUE(isSecretVariable("ANTHROPIC_API_KEY"));
  EXPECT_TRUE(isSecretVariable("ANTHROPIC_AUTH_TOKEN"));
  EXPECT_TRUE(isSecretVariable("MY_SERVER_API_KEY"));
  EXPECT_FALSE(isSecretVariable("OPENAI_BASE_URL"));
  EXPECT_FALSE(isSecretVariable("PATH"));
}

TEST(Environment, WithoutSecrets) {
  std::vector<std::string> Env = {
      "PATH=/bin", "OPENAI_API_KEY=sk-x",      "ANTHROPIC_API_KEY=y",
      "HOME=/h",   "OPENAI_BASE_URL=http://h", "A_API_KEY="};
  std::vector<std::string> Expected = {"PATH=/bin", "HOME=/h",
                                       "OPENAI_BASE_URL=http://h"};
  EXPECT_EQ(environmentWithoutSecrets(Env), Expected);
}

TEST(Environment, CurrentWithoutSecrets) {
  ::setenv("OPTIML_TEST_API_KEY", "secret-value", 1);
  ::setenv("OPTIML_TEST_PLAIN", "plain", 1);
  std::vector<std::string> Env = currentEnvironmentWithoutSecrets();
  ::unsetenv("OPTIML_TEST_API_KEY");
  ::unsetenv("OPTIML_TEST_PLAIN");
  bool SawPlain = false;
  for (const std::string &E : Env) {
    EXPECT_EQ(E.find("secret-value"), std::string::npos);
    SawPlain |= E == "OPTIML_TEST_PLAIN=plain";
  }
  EXPECT_TRUE(SawPlain);
}

} // namespace
} // namespace llm
} // namespace optiml
