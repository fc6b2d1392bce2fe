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

TEST(Redactor, MasksKeysInJSONWhateverTheirSpelling) {
  Redactor R;
  R.addSecret("local-canary-0123456789");
  // \u escapes hide the key from a text search of the document.
  std::string Doc = R"({"proposals": [{"kind": "\u006cocal-canary-0123456789",
    "rationale": "echo local-canary-0123456789", "local-canary-0123456789": 1}]})";
  std::string Out = redactReplyJSON(Doc, R);
  EXPECT_EQ(Out.find("canary-0123456789"), std::string::npos) << Out;
  EXPECT_NE(Out.find("[REDACTED]"), std::string::npos);
  // Not JSON: redacted as text.
  EXPECT_EQ(redactReplyJSON("{ local-canary-0123456789", R), "{ [REDACTED]");
}
} // namespace
} // namespace llm
} // namespace optiml
