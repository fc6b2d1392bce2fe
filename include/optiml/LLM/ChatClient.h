//===- ChatClient.h - One chat completion, robustly -----------------------===//
//
// ChatClient turns a provider-neutral ChatRequest into an OpenAI-style or
// Anthropic request, and handles what goes wrong on the way: retries with
// backoff on 429/5xx/dropped connections (honouring Retry-After), a limit
// on requests in flight, a token budget, the response cache, and the
// structured-output fallback chain (json_schema, then tool calling, then
// JSON extracted from text).
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_LLM_CHATCLIENT_H
#define OPTIML_LLM_CHATCLIENT_H

#include "optiml/LLM/HttpTransport.h"
#include "optiml/LLM/LLMConfig.h"
#include "optiml/LLM/ResponseCache.h"
#include "optiml/LLM/Secrets.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace optiml {
namespace llm {

enum class Role { User, Assistant };

struct ChatMessage {
  Role R = Role::User;
  std::string Content;
};

/// The JSON shape the reply must have.
struct OutputSchema {
  /// A name for the schema / tool ("propose_edits"); [a-zA-Z0-9_-]+.
  std::string Name;
  std::string Description;
  /// The JSON Schema sent to the model.
  std::string SchemaJSON;
  /// Asks OpenAI-style servers for strict decoding; only valid for schemas
  /// whose objects all list every property as required and forbid others.
  bool Strict = false;
  /// The schema the reply is checked against locally; empty means
  /// SchemaJSON. A looser one lets a caller check parts of the reply itself
  /// (the proposal parser keeps good proposals next to bad ones).
  std::string ValidationSchemaJSON;
};

struct ChatRequest {
  std::string System;
  std::vector<ChatMessage> Messages;
  std::optional<OutputSchema> Schema;
  std::optional<unsigned> MaxOutputTokens;
  std::optional<double> Temperature;
};

/// How the structured reply was obtained, in the order they are tried.
enum class StructuredMode { JsonSchema, ToolCall, Text };
llvm::StringRef structuredModeName(StructuredMode M);

struct TokenUsage {
  uint64_t Input = 0;
  uint64_t Output = 0;
  uint64_t total() const { return Input + Output; }
};

struct ChatResponse {
  /// The reply's text (empty when the reply was only a tool call).
  std::string Text;
  /// With a schema: the validated JSON document.
  std::string JSON;
  StructuredMode Mode = StructuredMode::Text;
  TokenUsage Usage;
  /// Usage was missing from the reply and estimated from lengths.
  bool UsageEstimated = false;
  bool FromCache = false;
  /// HTTP requests this call made (0 on a cache hit).
  unsigned Attempts = 0;
  std::string FinishReason;
};

/// Tokens spent, and a budget that refuses calls once spent. Share one
/// between clients to budget a whole run.
class TokenLedger {
public:
  explicit TokenLedger(uint64_t Budget = 0) : Budget(Budget) {}

  /// Fails with BudgetExceeded once the budget is spent.
  llvm::Error checkAvailable() const;
  void record(const TokenUsage &Usage);
  TokenUsage used() const;
  uint64_t budget() const { return Budget; }
  /// Tokens left; UINT64_MAX when unlimited.
  uint64_t remaining() const;

private:
  mutable std::mutex Mutex;
  uint64_t Budget;
  TokenUsage Used;
};

/// A counting semaphore bounding the requests in flight.
class ConcurrencyLimiter {
public:
  explicit ConcurrencyLimiter(unsigned Limit) : Limit(Limit ? Limit : 1) {}
  void acquire();
  void release();
  unsigned limit() const { return Limit; }

private:
  std::mutex Mutex;
  std::condition_variable Available;
  unsigned Limit;
  unsigned InFlight = 0;
};

struct ChatClientStats {
  unsigned Calls = 0;
  unsigned HttpRequests = 0;
  unsigned Retries = 0;
  unsigned CacheHits = 0;
  /// Times the structured mode was lowered because a server refused it.
  unsigned ModeFallbacks = 0;
};

class ChatClient {
public:
  /// Ledger may be null (the client then makes its own with the config's
  /// budget).
  ChatClient(LLMConfig Config, std::shared_ptr<HttpTransport> Transport,
             std::shared_ptr<TokenLedger> Ledger = nullptr);

  /// Runs one chat completion. Thread-safe.
  llvm::Expected<ChatResponse> complete(const ChatRequest &Request);

  /// Receives one line per request, retry and fallback; already redacted.
  void setLogger(std::function<void(llvm::StringRef)> Logger);

  /// The cache key: the hash of everything that shapes the reply (provider,
  /// endpoint, model, messages, schema, limits) and nothing secret.
  std::string cacheKey(const ChatRequest &Request) const;

  ChatClientStats stats() const;
  const TokenLedger &ledger() const { return *Ledger; }
  const LLMConfig &config() const { return Config; }
  const Redactor &redactor() const { return Redact; }

private:
  struct Attempt;
  llvm::Expected<ChatResponse> completeUncached(const ChatRequest &Request);
  llvm::Expected<ChatResponse> completeInMode(const ChatRequest &Request,
                                              StructuredMode Mode);
  std::chrono::milliseconds backoffDelay(unsigned Retry);
  void log(const llvm::Twine &Line) const;

  LLMConfig Config;
  std::shared_ptr<HttpTransport> Transport;
  std::shared_ptr<TokenLedger> Ledger;
  std::optional<ResponseCache> Cache;
  Redactor Redact;
  ConcurrencyLimiter Limiter;
  /// The lowest structured mode a server accepted; starts at JsonSchema for
  /// OpenAI-style servers and ToolCall for Anthropic.
  std::atomic<int> ModeFloor;
  std::function<void(llvm::StringRef)> Logger;
  mutable std::mutex StatsMutex;
  ChatClientStats Stats;
  std::mutex RngMutex;
  std::mt19937_64 Rng;
};

} // namespace llm
} // namespace optiml

#endif // OPTIML_LLM_CHATCLIENT_H
