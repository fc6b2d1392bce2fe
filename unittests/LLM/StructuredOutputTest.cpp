//===- StructuredOutputTest.cpp -------------------------------------------===//

#include "optiml/LLM/StructuredOutput.h"
#include "optiml/LLM/LLMError.h"

#include "gtest/gtest.h"

using namespace llvm;

namespace optiml {
namespace llm {
namespace {

std::string extracted(StringRef Text) {
  Expected<std::string> J = extractJSON(Text);
  if (!J)
    return "error: " + toString(J.takeError());
  return *J;
}

std::optional<LLMErrorCode> extractError(StringRef Text) {
  Expected<std::string> J = extractJSON(Text);
  EXPECT_FALSE(bool(J)) << (J ? *J : "");
  if (J)
    return std::nullopt;
  return summarizeError(J.takeError()).Code;
}

TEST(ExtractJSON, WholeText) {
  EXPECT_EQ(extracted("  {\"a\": 1}\n"), R"({"a":1})");
  EXPECT_EQ(extracted("[1, 2]"), "[1,2]");
}

TEST(ExtractJSON, MarkdownFence) {
  EXPECT_EQ(
      extracted("Here you go:\n```json\n{\"a\": [1, {\"b\": \"}\"}]}\n```\n"
                "Let me know."),
      R"({"a":[1,{"b":"}"}]})");
  // A fence without a language, after a fence with no JSON.
  EXPECT_EQ(
      extracted(
          "```cuda\n__global__ void k() {}\n```\nand\n```\n{\"a\": 2}\n```"),
      R"({"a":2})");
}

TEST(ExtractJSON, ProseAroundIt) {
  EXPECT_EQ(extracted("I think {\"a\": \"x{y\"} is best. {not json}"),
            R"({"a":"x{y"})");
  // A brace in prose before the document.
  EXPECT_EQ(extracted("Use {braces} carefully: {\"k\": true}"),
            R"({"k":true})");
}

TEST(ExtractJSON, Truncated) {
  EXPECT_EQ(extractError("{\"proposals\": [{\"kind\": \"tile"),
            LLMErrorCode::Truncated);
  EXPECT_EQ(extractError("Here:\n```json\n{\"a\": [1, 2"),
            LLMErrorCode::Truncated);
}

TEST(ExtractJSON, NoJSON) {
  EXPECT_EQ(extractError("I cannot help with that."), LLMErrorCode::NoJSON);
  EXPECT_EQ(extractError("   "), LLMErrorCode::NoJSON);
  EXPECT_EQ(extractError("just a number 42"), LLMErrorCode::NoJSON);
}

TEST(ExtractJSON, NotUTF8) {
  EXPECT_EQ(extractError("{\"a\": \"\xff\"}"), LLMErrorCode::NotUTF8);
}

const char *const Schema = R"({
  "type": "object",
  "properties": {
    "n": {"type": "integer", "minimum": 1, "maximum": 10},
    "s": {"type": "string", "enum": ["a", "b"]},
    "l": {"type": "array", "items": {"type": ["string", "null"]},
          "minItems": 1, "maxItems": 2},
    "o": {"type": "object", "additionalProperties": {"type": "number"}}
  },
  "required": ["n"],
  "additionalProperties": false
})";

std::string schemaError(StringRef Doc) {
  Error E = validateJSONSchema(Doc, Schema);
  if (!E)
    return "ok";
  ErrorSummary S = summarizeError(std::move(E));
  EXPECT_EQ(S.Code, LLMErrorCode::SchemaMismatch);
  return S.Message;
}

TEST(JSONSchema, Accepts) {
  EXPECT_EQ(schemaError(R"({"n": 3})"), "ok");
  EXPECT_EQ(
      schemaError(R"({"n": 3.0, "s": "b", "l": ["x", null], "o": {"q": 1.5}})"),
      "ok");
}

TEST(JSONSchema, Rejects) {
  EXPECT_EQ(schemaError(R"({})"), "$ lacks the required field \"n\"");
  EXPECT_EQ(schemaError(R"({"n": "3"})"),
            "$.n should be integer, found a string");
  EXPECT_EQ(schemaError(R"({"n": 2.5})"),
            "$.n should be integer, found a number");
  EXPECT_EQ(schemaError(R"({"n": 11})"), "$.n is above the maximum 10");
  EXPECT_EQ(schemaError(R"({"n": 1, "s": "c"})"),
            "$.s should be one of [\"a\",\"b\"], found \"c\"");
  EXPECT_EQ(schemaError(R"({"n": 1, "l": []})"),
            "$.l has 0 items, fewer than 1");
  EXPECT_EQ(schemaError(R"({"n": 1, "l": [1]})"),
            "$.l[0] should be string or null, found an integer");
  EXPECT_EQ(schemaError(R"({"n": 1, "o": {"q": "x"}})"),
            "$.o.q should be number, found a string");
  EXPECT_EQ(schemaError(R"({"n": 1, "extra": 0})"),
            "$ has an unexpected field \"extra\"");
  EXPECT_EQ(schemaError(R"([1])"), "$ should be object, found an array");
}

TEST(JSONSchema, BadDocuments) {
  ErrorSummary S = summarizeError(validateJSONSchema("{\"n\": ", Schema));
  EXPECT_EQ(S.Code, LLMErrorCode::Truncated) << S.Message;
  S = summarizeError(validateJSONSchema("{\"n\" 1}", Schema));
  EXPECT_EQ(S.Code, LLMErrorCode::BadResponse) << S.Message;
}

} // namespace
} // namespace llm
} // namespace optiml
