//===- ChatClient.cpp - One chat completion, robustly ---------------------===//

#include "optiml/LLM/ChatClient.h"
#include "JsonInternal.h"
#include "WireFormatInternal.h"
#include "optiml/LLM/LLMError.h"
#include "optiml/LLM/StructuredOutput.h"

#include "llvm/ADT/StringExtras.h"

#include <ctime>
#include <thread>

using namespace llvm;

namespace optiml {
namespace llm {

StringRef structuredModeName(StructuredMode M) {
  switch (M) {
  case StructuredMode::JsonSchema:
    return "json_schema";
  case StructuredMode::ToolCall:
    return "tool_call";
  case StructuredMode::Text:
    return "text";
  }
  return "text";
}

//===----------------------------------------------------------------------===//
// TokenLedger, ConcurrencyLimiter
//===----------------------------------------------------------------------===//

Error TokenLedger::checkAvailable() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Budget == 0 || Used.total() < Budget)
    return Error::success();
  return makeLLMError(LLMErrorCode::BudgetExceeded,
                      "LLM token budget spent (" + Twine(Used.total()) +
                          " of " + Twine(Budget) +
                          " tokens used); raise --llm-token-budget to "
                          "continue");
}

void TokenLedger::record(const TokenUsage &Usage) {
  std::lock_guard<std::mutex> Lock(Mutex);
  Used.Input += Usage.Input;
  Used.Output += Usage.Output;
}

TokenUsage TokenLedger::used() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return Used;
}

uint64_t TokenLedger::remaining() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Budget == 0)
    return UINT64_MAX;
  return Used.total() >= Budget ? 0 : Budget - Used.total();
}

void ConcurrencyLimiter::acquire() {
  std::unique_lock<std::mutex> Lock(Mutex);
  Available.wait(Lock, [&] { return InFlight < Limit; });
  ++InFlight;
}

void ConcurrencyLimiter::release() {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    --InFlight;
  }
  Available.notify_one();
}

//===----------------------------------------------------------------------===//
// Retry policy
//===----------------------------------------------------------------------===//

/// Statuses worth retrying: timeouts, conflicts, rate limits and server
/// trouble (Anthropic's 529 "overloaded" included).
static bool isRetryableStatus(unsigned Status) {
  if (Status == 408 || Status == 409 || Status == 425 || Status == 429)
    return true;
  return Status >= 500 && Status != 501 && Status != 505;
}

/// Statuses with which a server refuses a request feature (response_format,
/// tools) it does not implement.
static bool isFeatureRefusal(unsigned Status) {
  return Status == 400 || Status == 404 || Status == 422 || Status == 501;
}

/// The delay a reply asks for: OpenAI's retry-after-ms, else Retry-After
/// in seconds (fractions accepted) or as an HTTP date.
static std::optional<std::chrono::milliseconds>
retryAfter(const HttpResponse &R) {
  if (std::optional<StringRef> Ms = R.header("retry-after-ms")) {
    double V;
    if (!Ms->trim().getAsDouble(V) && V >= 0)
      return std::chrono::milliseconds(static_cast<int64_t>(V));
  }
  std::optional<StringRef> H = R.header("retry-after");
  if (!H)
    return std::nullopt;
  StringRef Value = H->trim();
  double Seconds;
  if (!Value.getAsDouble(Seconds) && Seconds >= 0)
    return std::chrono::milliseconds(static_cast<int64_t>(Seconds * 1000));
  std::tm Tm = {};
  std::string Copy = Value.str();
  if (strptime(Copy.c_str(), "%a, %d %b %Y %H:%M:%S", &Tm)) {
    time_t When = timegm(&Tm);
    time_t Now = std::time(nullptr);
    return std::chrono::milliseconds(
        When > Now ? static_cast<int64_t>(When - Now) * 1000 : 0);
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// ChatClient
//===----------------------------------------------------------------------===//

ChatClient::ChatClient(LLMConfig C, std::shared_ptr<HttpTransport> T,
                       std::shared_ptr<TokenLedger> L)
    : Config(std::move(C)), Transport(std::move(T)), Ledger(std::move(L)),
      Limiter(Config.MaxConcurrency),
      ModeFloor(static_cast<int>(Config.Prov == Provider::Anthropic
                                     ? StructuredMode::ToolCall
                                     : StructuredMode::JsonSchema)),
      Rng(std::random_device{}()) {
  if (!Ledger)
    Ledger = std::make_shared<TokenLedger>(Config.TokenBudget);
  if (!Config.NoCache && !Config.CacheDir.empty())
    Cache.emplace(Config.CacheDir);
  Redact.addSecret(Config.APIKey);
  // Also for what is redacted outside the client (journal, report).
  registerSecretValue(Config.APIKey);
}

void ChatClient::setLogger(std::function<void(StringRef)> L) {
  Logger = std::move(L);
}

void ChatClient::log(const Twine &Line) const {
  if (Logger)
    Logger(Redact.redact(Line.str()));
}

ChatClientStats ChatClient::stats() const {
  std::lock_guard<std::mutex> Lock(StatsMutex);
  return Stats;
}

std::string ChatClient::cacheKey(const ChatRequest &Request) const {
  return ResponseCache::hashKey(cacheKeyMaterial(Config, Request));
}

std::chrono::milliseconds ChatClient::backoffDelay(unsigned Retry) {
  // Exponential with "equal jitter": half the step is fixed, half random,
  // so clients that failed together don't retry together.
  int64_t Base = Config.InitialBackoff.count();
  int64_t Step = Base << std::min(Retry > 0 ? Retry - 1 : 0u, 20u);
  Step = std::min<int64_t>(Step, Config.MaxBackoff.count());
  std::lock_guard<std::mutex> Lock(RngMutex);
  std::uniform_int_distribution<int64_t> Jitter(0,
                                                std::max<int64_t>(Step / 2, 0));
  return std::chrono::milliseconds(Step - Step / 2 + Jitter(Rng));
}

/// Re-creates an error with its message redacted, keeping its code.
static Error redacted(Error Err, const Redactor &R, const Twine &Suffix = "") {
  ErrorSummary S = summarizeError(std::move(Err));
  return makeLLMError(S.Code.value_or(LLMErrorCode::BadResponse),
                      R.redact(S.Message + Suffix.str()), S.HttpStatus);
}

Expected<ChatResponse> ChatClient::complete(const ChatRequest &Request) {
  {
    std::lock_guard<std::mutex> Lock(StatsMutex);
    ++Stats.Calls;
  }
  std::string Key;
  if (Cache) {
    Key = cacheKey(Request);
    if (std::optional<std::string> Entry = Cache->lookup(Key)) {
      Expected<ChatResponse> R = deserializeResponse(*Entry);
      if (R) {
        // Entries written before replies were redacted on arrival.
        R->Text = Redact.redact(R->Text);
        R->JSON = redactReplyJSON(R->JSON, Redact);
        R->FromCache = true;
        R->Attempts = 0;
        log("llm: cache hit " + Key.substr(0, 16));
        std::lock_guard<std::mutex> Lock(StatsMutex);
        ++Stats.CacheHits;
        return R;
      }
      log("llm: ignoring unreadable cache entry " + Cache->pathFor(Key) + ": " +
          toString(R.takeError()));
    }
  }
  if (Error E = Ledger->checkAvailable())
    return std::move(E);

  Expected<ChatResponse> R = completeUncached(Request);
  if (!R)
    return redacted(R.takeError(), Redact);
  if (Cache) {
    ChatResponse Stored = *R;
    Stored.Text = Redact.redact(Stored.Text);
    Stored.JSON = Redact.redact(Stored.JSON);
    if (Error E = Cache->store(Key, serializeResponse(Stored)))
      log("llm: " + toString(std::move(E)));
  }
  return R;
}

Expected<ChatResponse>
ChatClient::completeUncached(const ChatRequest &Request) {
  if (!Request.Schema)
    return completeInMode(Request, StructuredMode::Text);
  const int Start = ModeFloor.load();
  // The first refusal, returned if every lower mode is refused too: then
  // the request itself is at fault (too long, a bad model name), not the
  // structured-output feature, and the first message says why best.
  std::optional<ErrorSummary> FirstRefusal;
  for (int Mode = Start;; ++Mode) {
    Expected<ChatResponse> R =
        completeInMode(Request, static_cast<StructuredMode>(Mode));
    if (R) {
      if (Mode != Start) {
        // Remember, so later calls start where this server works.
        int Seen = Start;
        ModeFloor.compare_exchange_strong(Seen, Mode);
        std::lock_guard<std::mutex> Lock(StatsMutex);
        ++Stats.ModeFallbacks;
      }
      return R;
    }
    ErrorSummary E = summarizeError(R.takeError());
    bool Refused =
        E.Code == LLMErrorCode::HttpStatus && isFeatureRefusal(E.HttpStatus);
    if (!Refused || Mode == static_cast<int>(StructuredMode::Text)) {
      if (Refused && FirstRefusal)
        E = *FirstRefusal;
      return makeLLMError(E.Code.value_or(LLMErrorCode::BadResponse), E.Message,
                          E.HttpStatus);
    }
    log("llm: server refused " +
        structuredModeName(static_cast<StructuredMode>(Mode)) + " (" +
        E.Message + "); trying " +
        structuredModeName(static_cast<StructuredMode>(Mode + 1)));
    if (!FirstRefusal)
      FirstRefusal = std::move(E);
  }
}

Expected<ChatResponse> ChatClient::completeInMode(const ChatRequest &Request,
                                                  StructuredMode Mode) {
  Expected<std::string> Body = buildRequestBody(Config, Request, Mode);
  if (!Body)
    return Body.takeError();
  HttpRequest H;
  H.Url = Config.endpointURL();
  H.Headers = buildHeaders(Config);
  H.Body = std::move(*Body);
  H.Timeout = Config.Timeout;
  H.ConnectTimeout = Config.ConnectTimeout;
  H.MaxResponseBytes = Config.MaxResponseBytes;

  unsigned MaxAttempts = std::max(1u, Config.MaxAttempts);
  for (unsigned Attempt = 1;; ++Attempt) {
    log("llm: POST " + H.Url + " model=" + Config.Model +
        " mode=" + structuredModeName(Mode) + " attempt=" + Twine(Attempt));
    Limiter.acquire();
    Expected<HttpResponse> Resp = Transport->post(H);
    Limiter.release();
    {
      std::lock_guard<std::mutex> Lock(StatsMutex);
      ++Stats.HttpRequests;
    }
    bool Last = Attempt >= MaxAttempts;
    std::optional<std::chrono::milliseconds> Delay;
    if (!Resp) {
      ErrorSummary S = summarizeError(Resp.takeError());
      bool Retryable =
          S.Code == LLMErrorCode::Timeout || S.Code == LLMErrorCode::Transport;
      if (!Retryable || Last)
        return makeLLMError(
            S.Code.value_or(LLMErrorCode::Transport),
            S.Message +
                (Retryable ? " (gave up after " + Twine(Attempt) + " attempts)"
                           : Twine("")));
      Delay = backoffDelay(Attempt);
      log("llm: " + S.Message + "; retrying in " + Twine(Delay->count()) +
          " ms");
    } else if (Resp->Status < 200 || Resp->Status >= 300) {
      unsigned Status = Resp->Status;
      std::string ServerMsg = serverErrorMessage(Resp->Body);
      std::string Msg = "LLM server " + H.Url + " returned HTTP " +
                        std::to_string(Status) + ": " + ServerMsg;
      if (Status == 401 || Status == 403)
        Msg += Config.Prov == Provider::Anthropic ? " (check ANTHROPIC_API_KEY)"
                                                  : " (check OPENAI_API_KEY)";
      if (!isRetryableStatus(Status))
        return makeLLMError(LLMErrorCode::HttpStatus, Msg, Status);
      std::optional<std::chrono::milliseconds> Asked = retryAfter(*Resp);
      if (Asked && *Asked > Config.MaxRetryAfter)
        return makeLLMError(
            LLMErrorCode::HttpStatus,
            Msg + " (the server asked to retry after " +
                Twine(Asked->count() / 1000) + " s, more than the " +
                Twine(Config.MaxRetryAfter.count() / 1000) + " s limit)",
            Status);
      if (Last)
        return makeLLMError(
            LLMErrorCode::HttpStatus,
            Msg + " (gave up after " + Twine(Attempt) + " attempts)", Status);
      Delay = Asked ? *Asked : backoffDelay(Attempt);
      log("llm: HTTP " + Twine(Status) + "; retrying in " +
          Twine(Delay->count()) + " ms" +
          (Asked ? " (as the server asked)" : ""));
    }
    if (Delay) {
      {
        std::lock_guard<std::mutex> Lock(StatsMutex);
        ++Stats.Retries;
      }
      std::this_thread::sleep_for(*Delay);
      continue;
    }

    // A 2xx reply.
    Expected<WireReply> Reply = parseReply(Config.Prov, Resp->Body);
    if (!Reply)
      return Reply.takeError();
    // A server may echo the key (or another) anywhere in its reply: masked
    // here, before anything is derived from the reply, so proposals, their
    // rationales and code, the journal, the report, the cache and the
    // prompts fed back never hold it.
    StringRef Trimmed = StringRef(Reply->Text).ltrim();
    Reply->Text = Trimmed.starts_with("{") || Trimmed.starts_with("[")
                      ? redactReplyJSON(Reply->Text, Redact)
                      : Redact.redact(Reply->Text);
    if (Reply->ToolInput)
      Reply->ToolInput = redactReplyJSON(*Reply->ToolInput, Redact);
    ChatResponse Out;
    Out.Attempts = Attempt;
    Out.Mode = Mode;
    Out.Text = Reply->Text;
    Out.FinishReason = Reply->FinishReason;
    Out.Usage = Reply->Usage;
    if (!Reply->HasUsage) {
      // Budgets must not be bypassed by servers that omit usage: estimate
      // at about four bytes per token.
      Out.Usage.Input = H.Body.size() / 4;
      Out.Usage.Output = (Reply->Text.size() +
                          (Reply->ToolInput ? Reply->ToolInput->size() : 0)) /
                         4;
      Out.UsageEstimated = true;
    }
    Ledger->record(Out.Usage);
    log("llm: reply " + Twine(Out.Usage.Input) + "+" + Twine(Out.Usage.Output) +
        " tokens, finish=" + Out.FinishReason);

    if (!Request.Schema)
      return Out;
    const OutputSchema &Schema = *Request.Schema;
    Expected<std::string> Doc = [&]() -> Expected<std::string> {
      if (Reply->ToolInput) {
        Out.Mode = StructuredMode::ToolCall;
        if (Error E =
                diagnoseBadJSON(*Reply->ToolInput, "the tool call's arguments"))
          return std::move(E);
        return extractJSON(*Reply->ToolInput);
      }
      // Servers that ignore response_format or the tool still often answer
      // with JSON in the text.
      if (Mode != StructuredMode::JsonSchema)
        Out.Mode = StructuredMode::Text;
      return extractJSON(Reply->Text);
    }();
    if (!Doc) {
      ErrorSummary S = summarizeError(Doc.takeError());
      if (Reply->HitTokenLimit)
        return makeLLMError(LLMErrorCode::Truncated,
                            S.Message +
                                " (the reply stopped at the output limit of " +
                                Twine(Request.MaxOutputTokens.value_or(
                                    Config.MaxOutputTokens)) +
                                " tokens; raise max_output_tokens)");
      return makeLLMError(S.Code.value_or(LLMErrorCode::BadResponse),
                          S.Message);
    }
    StringRef Validation = Schema.ValidationSchemaJSON.empty()
                               ? StringRef(Schema.SchemaJSON)
                               : StringRef(Schema.ValidationSchemaJSON);
    if (Error E = validateJSONSchema(*Doc, Validation)) {
      ErrorSummary S = summarizeError(std::move(E));
      return makeLLMError(LLMErrorCode::SchemaMismatch,
                          "the model's reply does not match the schema '" +
                              Schema.Name + "': " + S.Message);
    }
    // Masked again as a document: a key spelt with \u escapes in the JSON
    // text is only visible once its strings are decoded.
    Out.JSON = redactReplyJSON(*Doc, Redact);
    return Out;
  }
}

} // namespace llm
} // namespace optiml
