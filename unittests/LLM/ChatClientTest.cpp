//===- ChatClientTest.cpp - The client against the scripted server --------===//

#include "TestServer.h"

#include "optiml/LLM/ChatClient.h"
#include "optiml/LLM/LLMError.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include <chrono>
#include <thread>

using namespace llvm;

namespace optiml {
namespace llm {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using Ptr = json::json_pointer;

const char *const PointSchema = R"({
  "type": "object",
  "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
  "required": ["x", "y"],
  "additionalProperties": false
})";

ChatRequest pointRequest(StringRef Question = "Where?") {
  ChatRequest R;
  R.System = "You answer with points.";
  R.Messages.push_back({Role::User, Question.str()});
  R.Schema = OutputSchema{"point", "A point.", PointSchema, true, ""};
  return R;
}

/// The request the server saw, as JSON.
json lastRequest(ScriptedServer &S) {
  Expected<json> Stats = S.stats();
  if (!Stats) {
    ADD_FAILURE() << toString(Stats.takeError());
    return json::object();
  }
  auto Reqs = Stats->find("requests");
  if (Reqs == Stats->end() || !Reqs->is_array() || Reqs->empty() ||
      !Reqs->back().is_object()) {
    ADD_FAILURE() << "no request in " << Stats->dump();
    return json::object();
  }
  return Reqs->back();
}

/// The string at \p Path in \p J ("" when there is none).
std::string str(const json &J, const char *Path) {
  Ptr P(Path);
  return J.contains(P) && J.at(P).is_string() ? J.at(P).get<std::string>() : "";
}

int64_t stat(ScriptedServer &S, StringRef Name) {
  Expected<json> Stats = S.stats();
  if (!Stats) {
    ADD_FAILURE() << toString(Stats.takeError());
    return -1;
  }
  auto It = Stats->find(Name.str());
  return It != Stats->end() && It->is_number_integer() ? It->get<int64_t>()
                                                       : -1;
}

ErrorSummary failure(Expected<ChatResponse> R) {
  EXPECT_FALSE(bool(R)) << "expected an error, got: "
                        << (R ? R->Text + R->JSON : "");
  if (R)
    return {};
  return summarizeError(R.takeError());
}

class ChatClientTest : public ServerTest {};

TEST_F(ChatClientTest, OpenAIJsonSchemaRoundTrip) {
  script(
      R"({"steps": [{"reply": {"json": {"x": 1, "y": 2}, "usage": [30, 7]}}]})");
  ChatClient Client(config(Provider::OpenAI), Transport);
  Expected<ChatResponse> R = Client.complete(pointRequest());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->JSON, R"({"x":1,"y":2})");
  EXPECT_EQ(R->Mode, StructuredMode::JsonSchema);
  EXPECT_EQ(R->Usage.Input, 30u);
  EXPECT_EQ(R->Usage.Output, 7u);
  EXPECT_FALSE(R->UsageEstimated);
  EXPECT_EQ(Client.ledger().used().total(), 37u);

  json Req = lastRequest(*Server);
  EXPECT_EQ(str(Req, "/path"), "/v1/chat/completions");
  EXPECT_EQ(str(Req, "/headers/authorization"),
            std::string("Bearer ") + FakeKey);
  EXPECT_EQ(str(Req, "/body/model"), "gpt-test");
  EXPECT_EQ(str(Req, "/body/response_format/type"), "json_schema");
  EXPECT_EQ(str(Req, "/body/messages/0/role"), "system");
  EXPECT_EQ(stat(*Server, "invalid"), 0);
}

TEST_F(ChatClientTest, AnthropicToolUseRoundTrip) {
  script(
      R"({"steps": [{"reply": {"json": {"x": 3, "y": 4}, "usage": [11, 5]}}]})");
  ChatClient Client(config(Provider::Anthropic), Transport);
  Expected<ChatResponse> R = Client.complete(pointRequest());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->JSON, R"({"x":3,"y":4})");
  EXPECT_EQ(R->Mode, StructuredMode::ToolCall);
  EXPECT_EQ(R->Usage.total(), 16u);

  json Req = lastRequest(*Server);
  EXPECT_EQ(str(Req, "/path"), "/v1/messages");
  EXPECT_EQ(str(Req, "/headers/x-api-key"), FakeKey);
  EXPECT_NE(str(Req, "/headers/anthropic-version"), "");
  EXPECT_FALSE(Req.contains(Ptr("/headers/authorization")));
  EXPECT_EQ(str(Req, "/body/system"), "You answer with points.");
  EXPECT_EQ(str(Req, "/body/tool_choice/name"), "point");
  EXPECT_EQ(stat(*Server, "invalid"), 0);
}

TEST_F(ChatClientTest, FallsBackToToolsWhenResponseFormatIsRefused) {
  script(R"({"unsupported": ["response_format"],
             "default": {"reply": {"json": {"x": 5, "y": 6}}}})");
  ChatClient Client(config(Provider::OpenAI), Transport);
  Expected<ChatResponse> R = Client.complete(pointRequest());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Mode, StructuredMode::ToolCall);
  EXPECT_EQ(R->JSON, R"({"x":5,"y":6})");
  EXPECT_EQ(count(), 2u);
  EXPECT_EQ(Client.stats().ModeFallbacks, 1u);
  // The client remembers: the next call goes straight to tools.
  ASSERT_TRUE(bool(Client.complete(pointRequest("Again?"))));
  EXPECT_EQ(count(), 3u);
}

TEST_F(ChatClientTest, FallsBackToTextAndReadsFencedJSON) {
  script(R"({"unsupported": ["response_format", "tools"],
             "default": {"reply": {"text": "Sure! Here it is:\n```json\n{\"x\": 7, \"y\": 8}\n```\nHope that helps."}}})");
  ChatClient Client(config(Provider::OpenAI), Transport);
  Expected<ChatResponse> R = Client.complete(pointRequest());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Mode, StructuredMode::Text);
  EXPECT_EQ(R->JSON, R"({"x":7,"y":8})");
  // The schema went into the system prompt.
  json Req = lastRequest(*Server);
  std::string System = str(Req, "/body/messages/0/content");
  EXPECT_TRUE(StringRef(System).contains("JSON Schema")) << System;
}

TEST_F(ChatClientTest, A400ForTheRequestItselfKeepsItsMessage) {
  // A 400 in every mode is about the request, not the feature: the caller
  // sees the first message, and later calls still try json_schema first.
  script(R"({"default": {"status": 400,
             "body": "{\"error\": {\"message\": \"context length exceeded\"}}"}})");
  ChatClient Client(config(Provider::OpenAI), Transport);
  ErrorSummary E = failure(Client.complete(pointRequest()));
  EXPECT_EQ(E.HttpStatus, 400u);
  EXPECT_NE(E.Message.find("context length exceeded"), std::string::npos);
  EXPECT_EQ(count(), 3u) << "json_schema, tools, text";
  EXPECT_EQ(Client.stats().ModeFallbacks, 0u);
  script(R"({"default": {"reply": {"json": {"x": 1, "y": 1}}}})");
  Expected<ChatResponse> R = Client.complete(pointRequest());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Mode, StructuredMode::JsonSchema);
}

TEST_F(ChatClientTest, ErrorObjectWithStatus200) {
  script(
      R"({"steps": [{"body": "{\"error\": {\"message\": \"model not loaded\"}}"}]})");
  ChatClient Client(config(Provider::OpenAI), Transport);
  ErrorSummary E = failure(Client.complete(pointRequest()));
  EXPECT_EQ(E.Code, LLMErrorCode::BadResponse);
  EXPECT_NE(E.Message.find("model not loaded"), std::string::npos) << E.Message;
}

TEST_F(ChatClientTest, TruncatedJSONIsReportedAsTruncated) {
  script(
      R"({"steps": [{"reply": {"json_raw": "{\"x\": 1, \"y\": ", "finish": "length"}}]})");
  ChatClient Client(config(Provider::OpenAI), Transport);
  ErrorSummary E = failure(Client.complete(pointRequest()));
  EXPECT_EQ(E.Code, LLMErrorCode::Truncated) << E.Message;
  EXPECT_NE(E.Message.find("max_output_tokens"), std::string::npos)
      << E.Message;
  // Tokens were spent all the same.
  EXPECT_EQ(Client.ledger().used().total(), 150u);
}

TEST_F(ChatClientTest, WrongSchemaIsRejected) {
  script(R"({"steps": [{"reply": {"json": {"x": "one", "y": 2}}}]})");
  ChatClient Client(config(Provider::OpenAI), Transport);
  ErrorSummary E = failure(Client.complete(pointRequest()));
  EXPECT_EQ(E.Code, LLMErrorCode::SchemaMismatch) << E.Message;
  EXPECT_NE(E.Message.find("$.x"), std::string::npos) << E.Message;

  script(R"({"steps": [{"reply": {"json": {"x": 1, "y": 2, "z": 3}}}]})");
  E = failure(Client.complete(pointRequest()));
  EXPECT_EQ(E.Code, LLMErrorCode::SchemaMismatch) << E.Message;
  EXPECT_NE(E.Message.find("\"z\""), std::string::npos) << E.Message;
}

TEST_F(ChatClientTest, HugeBodyIsCapped) {
  script(R"({"steps": [{"huge": 2000000}]})");
  LLMConfig C = config(Provider::OpenAI);
  C.MaxResponseBytes = 64 * 1024;
  ChatClient Client(C, Transport);
  ErrorSummary E = failure(Client.complete(pointRequest()));
  EXPECT_EQ(E.Code, LLMErrorCode::BodyTooLarge) << E.Message;
  EXPECT_EQ(count(), 1u) << "an oversize body is not retried";
}

TEST_F(ChatClientTest, NonUTF8BodyIsRejected) {
  // {"choices": ... "\xff\xfe"} : invalid UTF-8 inside a string.
  script(
      R"({"steps": [{"body_b64": "eyJjaG9pY2VzIjogW3sibWVzc2FnZSI6IHsiY29udGVudCI6ICL//iJ9fV19"}]})");
  ChatClient Client(config(Provider::OpenAI), Transport);
  ErrorSummary E = failure(Client.complete(pointRequest()));
  EXPECT_EQ(E.Code, LLMErrorCode::NotUTF8) << E.Message;
}

TEST_F(ChatClientTest, RetriesAfter429HonouringRetryAfter) {
  script(R"({"steps": [
      {"status": 429, "headers": {"Retry-After": "1"},
       "body": "{\"error\": {\"message\": \"rate limited\"}}"},
      {"reply": {"json": {"x": 1, "y": 1}}}]})");
  LLMConfig C = config(Provider::OpenAI);
  C.InitialBackoff = std::chrono::milliseconds(1); // Retry-After must win.
  ChatClient Client(C, Transport);
  auto Start = Clock::now();
  Expected<ChatResponse> R = Client.complete(pointRequest());
  auto Elapsed = Clock::now() - Start;
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Attempts, 2u);
  EXPECT_GE(Elapsed, std::chrono::milliseconds(1000));
  EXPECT_EQ(Client.stats().Retries, 1u);
  EXPECT_EQ(count(), 2u);
}

TEST_F(ChatClientTest, HonoursRetryAfterMs) {
  script(R"({"steps": [
      {"status": 503, "headers": {"retry-after-ms": "300"}, "body": "busy"},
      {"reply": {"json": {"x": 1, "y": 1}}}]})");
  LLMConfig C = config(Provider::OpenAI);
  C.InitialBackoff = std::chrono::milliseconds(1);
  ChatClient Client(C, Transport);
  auto Start = Clock::now();
  Expected<ChatResponse> R = Client.complete(pointRequest());
  auto Elapsed = Clock::now() - Start;
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_GE(Elapsed, std::chrono::milliseconds(300));
  EXPECT_LT(Elapsed, std::chrono::milliseconds(5000)) << "milliseconds, not s";
}

TEST_F(ChatClientTest, RetryAfterBeyondTheLimitFailsAtOnce) {
  script(
      R"({"steps": [{"status": 429, "headers": {"Retry-After": "3600"}, "body": "{}"}]})");
  ChatClient Client(config(Provider::OpenAI), Transport);
  auto Start = Clock::now();
  ErrorSummary E = failure(Client.complete(pointRequest()));
  EXPECT_LT(Clock::now() - Start, std::chrono::milliseconds(3000));
  EXPECT_EQ(E.Code, LLMErrorCode::HttpStatus);
  EXPECT_EQ(E.HttpStatus, 429u);
  EXPECT_NE(E.Message.find("3600 s"), std::string::npos) << E.Message;
}

TEST_F(ChatClientTest, ServerErrorsBackOffThenGiveUp) {
  script(
      R"({"default": {"status": 500, "body": "{\"error\": {\"message\": \"boom\"}}"}})");
  LLMConfig C = config(Provider::OpenAI);
  C.MaxAttempts = 3;
  C.InitialBackoff = std::chrono::milliseconds(100);
  C.MaxBackoff = std::chrono::milliseconds(1000);
  ChatClient Client(C, Transport);
  auto Start = Clock::now();
  ErrorSummary E = failure(Client.complete(pointRequest()));
  auto Elapsed = Clock::now() - Start;
  EXPECT_EQ(E.Code, LLMErrorCode::HttpStatus);
  EXPECT_EQ(E.HttpStatus, 500u);
  EXPECT_NE(E.Message.find("boom"), std::string::npos) << E.Message;
  EXPECT_NE(E.Message.find("gave up after 3 attempts"), std::string::npos);
  EXPECT_EQ(count(), 3u);
  // Two backoffs: at least half of 100 ms, then half of 200 ms.
  EXPECT_GE(Elapsed, std::chrono::milliseconds(150));
}

TEST_F(ChatClientTest, RecoversFrom500) {
  script(R"({"steps": [{"status": 502, "body": "bad gateway"},
                       {"reply": {"json": {"x": 2, "y": 2}}}]})");
  ChatClient Client(config(Provider::Anthropic), Transport);
  Expected<ChatResponse> R = Client.complete(pointRequest());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Attempts, 2u);
}

TEST_F(ChatClientTest, SlowRepliesTimeOut) {
  script(R"({"default": {"delay": 3, "reply": {"json": {"x": 1, "y": 1}}}})");
  LLMConfig C = config(Provider::OpenAI);
  C.Timeout = std::chrono::milliseconds(300);
  C.MaxAttempts = 2;
  ChatClient Client(C, Transport);
  auto Start = Clock::now();
  ErrorSummary E = failure(Client.complete(pointRequest()));
  EXPECT_LT(Clock::now() - Start, std::chrono::milliseconds(2900));
  EXPECT_EQ(E.Code, LLMErrorCode::Timeout) << E.Message;
  EXPECT_NE(E.Message.find("gave up after 2 attempts"), std::string::npos);
}

TEST_F(ChatClientTest, RetriesDroppedConnections) {
  script(
      R"({"steps": [{"drop": true}, {"reply": {"json": {"x": 9, "y": 9}}}]})");
  ChatClient Client(config(Provider::OpenAI), Transport);
  Expected<ChatResponse> R = Client.complete(pointRequest());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Attempts, 2u);
  EXPECT_EQ(count(), 2u);
}

TEST_F(ChatClientTest, KeyNeverAppearsInErrorsOrLogs) {
  // Some servers echo the key they were given.
  std::string Body =
      std::string(R"({"error": {"message": "Incorrect API key provided: )") +
      FakeKey + R"(. Bearer )" + FakeKey + R"("}})";
  // Built as JSON to escape the body.
  json Step = json::object();
  Step["status"] = 401;
  Step["body"] = Body;
  json S = json::object();
  S["steps"] = json::array({Step});
  script(S.dump());
  std::vector<std::string> Lines;
  ChatClient Client(config(Provider::OpenAI), Transport);
  Client.setLogger([&](StringRef L) { Lines.push_back(L.str()); });
  ErrorSummary E = failure(Client.complete(pointRequest()));
  EXPECT_EQ(E.HttpStatus, 401u);
  EXPECT_EQ(count(), 1u) << "401 is not retried";
  EXPECT_EQ(E.Message.find(FakeKey), std::string::npos) << E.Message;
  EXPECT_NE(E.Message.find("[REDACTED]"), std::string::npos) << E.Message;
  EXPECT_NE(E.Message.find("OPENAI_API_KEY"), std::string::npos) << E.Message;
  ASSERT_FALSE(Lines.empty());
  for (const std::string &L : Lines)
    EXPECT_EQ(L.find(FakeKey), std::string::npos) << L;
}

// Finding 3(a): a key the server echoes in a successful reply reached
// everything derived from it (proposals, journal, report, stdout, cache).
TEST_F(ChatClientTest, EchoedKeyIsMaskedInRepliesAndTheCache) {
  // Not shaped like a key: only knowing the value masks it.
  const std::string Key = "local-canary-7788-9900-key";
  const std::string Escaped = "\\u006cocal-canary-7788-9900-key";
  std::string Schema = R"({"type": "object", "properties": {"note":
    {"type": "string"}, "other": {"type": "string"}}, "required": ["note"]})";
  // json_raw goes out as the model's text: the escaped spelling survives
  // into the client.
  std::string Raw =
      "{\"note\": \"your key is " + Key + "\", \"other\": \"" + Escaped + "\"}";
  json First = json::object(), Second = json::object();
  First["reply"]["json_raw"] = Raw;
  Second["reply"]["text"] = "echo: " + Key + " and " + FakeKey;
  json S = json::object();
  S["steps"] = json::array({First, Second});
  script(S.dump());
  LLMConfig C = config(Provider::OpenAI);
  C.APIKey = Key;
  C.NoCache = false;
  C.CacheDir = TempDir + "/cache";
  ChatClient Client(C, Transport);
  ChatRequest Req = pointRequest();
  Req.Schema = OutputSchema{"note", "A note.", Schema, false, ""};
  Expected<ChatResponse> R = Client.complete(Req);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->JSON.find("7788-9900"), std::string::npos) << R->JSON;
  EXPECT_NE(R->JSON.find("your key is [REDACTED]"), std::string::npos)
      << R->JSON;
  EXPECT_EQ(R->Text.find("7788-9900"), std::string::npos) << R->Text;

  ChatRequest Plain = pointRequest("Say it");
  Plain.Schema.reset();
  Expected<ChatResponse> T = Client.complete(Plain);
  ASSERT_TRUE(bool(T)) << toString(T.takeError());
  EXPECT_EQ(T->Text, "echo: [REDACTED] and [REDACTED]");

  // Nothing in the cache either.
  std::error_code EC;
  unsigned Files = 0;
  for (sys::fs::recursive_directory_iterator It(C.CacheDir, EC), End;
       It != End && !EC; It.increment(EC)) {
    auto B = MemoryBuffer::getFile(It->path());
    if (!B)
      continue;
    ++Files;
    EXPECT_EQ((*B)->getBuffer().find("7788-9900"), StringRef::npos)
        << It->path();
    EXPECT_EQ((*B)->getBuffer().find(FakeKey), StringRef::npos) << It->path();
  }
  EXPECT_EQ(Files, 2u);
}

TEST_F(ChatClientTest, TokenBudgetRefusesOnceSpent) {
  script(
      R"({"default": {"reply": {"json": {"x": 1, "y": 1}, "usage": [80, 20]}}})");
  LLMConfig C = config(Provider::OpenAI);
  C.TokenBudget = 150;
  ChatClient Client(C, Transport);
  ASSERT_TRUE(bool(Client.complete(pointRequest("a"))));
  ASSERT_TRUE(bool(Client.complete(pointRequest("b"))));
  EXPECT_EQ(Client.ledger().used().total(), 200u);
  ErrorSummary E = failure(Client.complete(pointRequest("c")));
  EXPECT_EQ(E.Code, LLMErrorCode::BudgetExceeded) << E.Message;
  EXPECT_EQ(count(), 2u) << "a refused call never reaches the server";
}

TEST_F(ChatClientTest, SharedLedgerBudgetsSeveralClients) {
  script(
      R"({"default": {"reply": {"json": {"x": 1, "y": 1}, "usage": [60, 40]}}})");
  auto Ledger = std::make_shared<TokenLedger>(100);
  ChatClient A(config(Provider::OpenAI), Transport, Ledger);
  ChatClient B(config(Provider::Anthropic), Transport, Ledger);
  ASSERT_TRUE(bool(A.complete(pointRequest())));
  ErrorSummary E = failure(B.complete(pointRequest()));
  EXPECT_EQ(E.Code, LLMErrorCode::BudgetExceeded);
  EXPECT_EQ(Ledger->remaining(), 0u);
}

TEST_F(ChatClientTest, MissingUsageIsEstimated) {
  script(
      R"({"steps": [{"reply": {"json": {"x": 1, "y": 1}, "usage": null}}]})");
  ChatClient Client(config(Provider::OpenAI), Transport);
  Expected<ChatResponse> R = Client.complete(pointRequest());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_TRUE(R->UsageEstimated);
  EXPECT_GT(R->Usage.Input, 0u);
}

TEST_F(ChatClientTest, CacheHitsDoNotReachTheServer) {
  script(
      R"({"default": {"reply": {"json": {"x": 4, "y": 2}, "usage": [10, 10]}}})");
  LLMConfig C = config(Provider::OpenAI);
  C.NoCache = false;
  C.CacheDir = TempDir + "/cache";
  {
    ChatClient Client(C, Transport);
    Expected<ChatResponse> First = Client.complete(pointRequest());
    ASSERT_TRUE(bool(First)) << toString(First.takeError());
    EXPECT_FALSE(First->FromCache);
  }
  // A new client (a resumed run) reads the same cache.
  ChatClient Client(C, Transport);
  Expected<ChatResponse> Second = Client.complete(pointRequest());
  ASSERT_TRUE(bool(Second)) << toString(Second.takeError());
  EXPECT_TRUE(Second->FromCache);
  EXPECT_EQ(Second->JSON, R"({"x":4,"y":2})");
  EXPECT_EQ(count(), 1u);
  EXPECT_EQ(Client.stats().CacheHits, 1u);
  EXPECT_EQ(Client.ledger().used().total(), 0u) << "cache hits are free";

  // The entry holds no key.
  ResponseCache Cache(C.CacheDir);
  auto Entry = Cache.lookup(Client.cacheKey(pointRequest()));
  ASSERT_TRUE(Entry.has_value());
  EXPECT_EQ(Entry->find(FakeKey), std::string::npos);

  // The key does not depend on the API key, and does on the request.
  LLMConfig Other = C;
  Other.APIKey = "sk-another-key-entirely-000";
  EXPECT_EQ(ChatClient(Other, Transport).cacheKey(pointRequest()),
            Client.cacheKey(pointRequest()));
  EXPECT_NE(Client.cacheKey(pointRequest("Elsewhere?")),
            Client.cacheKey(pointRequest()));
  ASSERT_TRUE(bool(Client.complete(pointRequest("Elsewhere?"))));
  EXPECT_EQ(count(), 2u);

  // --no-cache: every call goes to the server.
  C.NoCache = true;
  ChatClient Uncached(C, Transport);
  ASSERT_TRUE(bool(Uncached.complete(pointRequest())));
  EXPECT_EQ(count(), 3u);
}

TEST_F(ChatClientTest, FailedRepliesAreNotCached) {
  script(R"({"steps": [{"reply": {"json": {"x": "bad"}}},
                       {"reply": {"json": {"x": 1, "y": 1}}}]})");
  LLMConfig C = config(Provider::OpenAI);
  C.NoCache = false;
  C.CacheDir = TempDir + "/cache";
  ChatClient Client(C, Transport);
  ErrorSummary E = failure(Client.complete(pointRequest()));
  EXPECT_EQ(E.Code, LLMErrorCode::SchemaMismatch);
  Expected<ChatResponse> R = Client.complete(pointRequest());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_FALSE(R->FromCache);
  EXPECT_EQ(count(), 2u);
}

TEST_F(ChatClientTest, ConcurrencyLimitBoundsRequestsInFlight) {
  script(
      R"({"default": {"delay": 0.25, "reply": {"json": {"x": 1, "y": 1}}}})");
  LLMConfig C = config(Provider::OpenAI);
  C.MaxConcurrency = 2;
  ChatClient Client(C, Transport);
  std::vector<std::thread> Threads;
  std::atomic<unsigned> Ok{0};
  auto Start = Clock::now();
  for (unsigned I = 0; I < 6; ++I)
    Threads.emplace_back([&, I] {
      if (Client.complete(pointRequest("q" + std::to_string(I))))
        ++Ok;
    });
  for (std::thread &T : Threads)
    T.join();
  auto Elapsed = Clock::now() - Start;
  EXPECT_EQ(Ok.load(), 6u);
  EXPECT_EQ(count(), 6u);
  EXPECT_LE(stat(*Server, "max_in_flight"), 2);
  // Six 250 ms replies, two at a time: three rounds. Unlimited, they would
  // all finish in one.
  EXPECT_GE(Elapsed, std::chrono::milliseconds(750));
}

TEST_F(ChatClientTest, PlainTextWithoutSchema) {
  script(R"({"steps": [{"reply": {"text": "hello"}}]})");
  ChatClient Client(config(Provider::Anthropic), Transport);
  ChatRequest R;
  R.Messages.push_back({Role::User, "hi"});
  Expected<ChatResponse> Reply = Client.complete(R);
  ASSERT_TRUE(bool(Reply)) << toString(Reply.takeError());
  EXPECT_EQ(Reply->Text, "hello");
  EXPECT_TRUE(Reply->JSON.empty());
}

TEST_F(ChatClientTest, UnreachableServerIsATransportError) {
  LLMConfig C = config(Provider::OpenAI);
  C.BaseURL = "http://127.0.0.1:1/v1";
  C.MaxAttempts = 2;
  ChatClient Client(C, Transport);
  ErrorSummary E = failure(Client.complete(pointRequest()));
  EXPECT_EQ(E.Code, LLMErrorCode::Transport) << E.Message;
}

} // namespace
} // namespace llm
} // namespace optiml
