//===- WireFormat.cpp - OpenAI and Anthropic request/reply JSON -----------===//
//
// The two wire formats, kept to one file so the differences are visible
// side by side. nlohmann/json stays in here: requests go out as text,
// replies come back as WireReply.
//
//===----------------------------------------------------------------------===//

#include "JsonInternal.h"
#include "WireFormatInternal.h"
#include "optiml/LLM/LLMError.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace optiml {
namespace llm {

using json = nlohmann::json;

static constexpr StringLiteral AnthropicVersion = "2023-06-01";

/// With no structured-output feature left, the schema goes into the
/// system prompt.
static std::string textModeInstruction(const OutputSchema &S) {
  return "\n\nAnswer with exactly one JSON document and nothing else (no "
         "prose, no markdown). It must match this JSON Schema:\n" +
         S.SchemaJSON + "\n";
}

static Expected<json> schemaObject(const OutputSchema &S) {
  Expected<json> J =
      parseJSON(S.SchemaJSON, "the output schema '" + S.Name + "'");
  if (!J)
    return J.takeError();
  if (!J->is_object())
    return makeLLMError(LLMErrorCode::Config,
                        "the output schema '" + S.Name + "' must be an object");
  return J;
}

static StringRef roleName(Role R) {
  return R == Role::Assistant ? "assistant" : "user";
}

Expected<std::string> buildRequestBody(const LLMConfig &Config,
                                       const ChatRequest &Request,
                                       StructuredMode Mode) {
  bool IsAnthropic = Config.Prov == Provider::Anthropic;
  if (IsAnthropic && Mode == StructuredMode::JsonSchema)
    Mode = StructuredMode::ToolCall; // Anthropic's structured output.
  std::string System = Request.System;
  std::optional<json> Schema;
  if (Request.Schema) {
    Expected<json> S = schemaObject(*Request.Schema);
    if (!S)
      return S.takeError();
    Schema = std::move(*S);
    if (Mode == StructuredMode::Text)
      System += textModeInstruction(*Request.Schema);
  }
  unsigned MaxTokens = Request.MaxOutputTokens.value_or(Config.MaxOutputTokens);
  std::optional<double> Temperature =
      Request.Temperature ? Request.Temperature : Config.Temperature;

  json Body = json::object();
  Body["model"] = Config.Model;
  json Messages = json::array();
  if (!IsAnthropic && !System.empty())
    Messages.push_back({{"role", "system"}, {"content", System}});
  for (const ChatMessage &M : Request.Messages)
    Messages.push_back({{"role", roleName(M.R).str()}, {"content", M.Content}});
  Body["messages"] = std::move(Messages);
  if (Temperature)
    Body["temperature"] = *Temperature;

  if (IsAnthropic) {
    Body["max_tokens"] = MaxTokens;
    if (!System.empty())
      Body["system"] = System;
    if (Schema && Mode == StructuredMode::ToolCall) {
      Body["tools"] =
          json::array({{{"name", Request.Schema->Name},
                        {"description", Request.Schema->Description},
                        {"input_schema", *Schema}}});
      Body["tool_choice"] = {{"type", "tool"}, {"name", Request.Schema->Name}};
    }
    return dumpJSON(Body);
  }

  // The official API wants max_completion_tokens (newer models refuse
  // max_tokens); the compatible servers know max_tokens.
  if (StringRef(Config.BaseURL).contains("api.openai.com"))
    Body["max_completion_tokens"] = MaxTokens;
  else
    Body["max_tokens"] = MaxTokens;
  if (Schema && Mode == StructuredMode::JsonSchema) {
    Body["response_format"] = {{"type", "json_schema"},
                               {"json_schema",
                                {{"name", Request.Schema->Name},
                                 {"schema", *Schema},
                                 {"strict", Request.Schema->Strict}}}};
  } else if (Schema && Mode == StructuredMode::ToolCall) {
    Body["tools"] =
        json::array({{{"type", "function"},
                      {"function",
                       {{"name", Request.Schema->Name},
                        {"description", Request.Schema->Description},
                        {"parameters", *Schema}}}}});
    Body["tool_choice"] = {{"type", "function"},
                           {"function", {{"name", Request.Schema->Name}}}};
  }
  return dumpJSON(Body);
}

std::vector<HttpHeader> buildHeaders(const LLMConfig &Config) {
  std::vector<HttpHeader> H = {{"Content-Type", "application/json"},
                               {"Accept", "application/json"},
                               {"User-Agent", "clang-optiml"}};
  if (Config.Prov == Provider::Anthropic) {
    if (!Config.APIKey.empty())
      H.push_back({"x-api-key", Config.APIKey});
    H.push_back({"anthropic-version", AnthropicVersion.str()});
  } else if (!Config.APIKey.empty()) {
    H.push_back({"Authorization", "Bearer " + Config.APIKey});
  }
  return H;
}

static uint64_t readCount(const json &Obj, const char *Key) {
  auto It = Obj.find(Key);
  if (It == Obj.end() || !It->is_number_unsigned())
    return 0;
  return It->get<uint64_t>();
}

static Expected<WireReply> parseOpenAI(const json &Doc) {
  WireReply R;
  if (Doc.contains("error") && !Doc.contains("choices"))
    return makeLLMError(LLMErrorCode::BadResponse,
                        "the server returned an error: " +
                            serverErrorMessage(dumpJSON(Doc)));
  auto Choices = Doc.find("choices");
  if (Choices == Doc.end() || !Choices->is_array() || Choices->empty())
    return makeLLMError(LLMErrorCode::BadResponse,
                        "the reply has no \"choices\" (not an OpenAI-style "
                        "chat completion: check the base URL)");
  const json &Choice = (*Choices)[0];
  if (!Choice.is_object())
    return makeLLMError(LLMErrorCode::BadResponse,
                        "\"choices[0]\" is not an object");
  if (auto F = Choice.find("finish_reason");
      F != Choice.end() && F->is_string())
    R.FinishReason = F->get<std::string>();
  R.HitTokenLimit = R.FinishReason == "length";
  auto Msg = Choice.find("message");
  if (Msg == Choice.end() || !Msg->is_object())
    return makeLLMError(LLMErrorCode::BadResponse,
                        "\"choices[0]\" has no \"message\" object");
  if (auto C = Msg->find("content"); C != Msg->end()) {
    if (C->is_string()) {
      R.Text = C->get<std::string>();
    } else if (C->is_array()) {
      // Some servers return content parts.
      for (const json &Part : *C)
        if (Part.is_object() && Part.value("type", "") == "text" &&
            Part.contains("text") && Part["text"].is_string())
          R.Text += Part["text"].get<std::string>();
    }
  }
  if (auto T = Msg->find("tool_calls");
      T != Msg->end() && T->is_array() && !T->empty()) {
    const json &Call = (*T)[0];
    if (Call.is_object() && Call.contains("function") &&
        Call["function"].is_object()) {
      const json &F = Call["function"];
      if (auto A = F.find("arguments"); A != F.end()) {
        if (A->is_string())
          R.ToolInput = A->get<std::string>();
        else if (A->is_object())
          R.ToolInput = dumpJSON(*A);
      }
    }
  }
  if (R.Text.empty() && !R.ToolInput) {
    if (auto Refusal = Msg->find("refusal");
        Refusal != Msg->end() && Refusal->is_string())
      return makeLLMError(LLMErrorCode::BadResponse,
                          "the model refused: " +
                              excerpt(Refusal->get<std::string>(), 200));
  }
  if (auto U = Doc.find("usage"); U != Doc.end() && U->is_object()) {
    R.Usage.Input = readCount(*U, "prompt_tokens");
    R.Usage.Output = readCount(*U, "completion_tokens");
    R.HasUsage =
        U->contains("prompt_tokens") || U->contains("completion_tokens");
  }
  return R;
}

static Expected<WireReply> parseAnthropic(const json &Doc) {
  WireReply R;
  if (Doc.value("type", "") == "error")
    return makeLLMError(LLMErrorCode::BadResponse,
                        "the server returned an error object: " +
                            serverErrorMessage(dumpJSON(Doc)));
  auto Content = Doc.find("content");
  if (Content == Doc.end() || !Content->is_array())
    return makeLLMError(LLMErrorCode::BadResponse,
                        "the reply has no \"content\" array (not an "
                        "Anthropic Messages reply: check the base URL)");
  for (const json &Block : *Content) {
    if (!Block.is_object())
      continue;
    std::string Type = Block.value("type", "");
    if (Type == "text" && Block.contains("text") && Block["text"].is_string())
      R.Text += Block["text"].get<std::string>();
    else if (Type == "tool_use" && !R.ToolInput && Block.contains("input"))
      R.ToolInput = dumpJSON(Block["input"]);
  }
  if (auto S = Doc.find("stop_reason"); S != Doc.end() && S->is_string())
    R.FinishReason = S->get<std::string>();
  R.HitTokenLimit = R.FinishReason == "max_tokens";
  if (auto U = Doc.find("usage"); U != Doc.end() && U->is_object()) {
    R.Usage.Input = readCount(*U, "input_tokens") +
                    readCount(*U, "cache_creation_input_tokens") +
                    readCount(*U, "cache_read_input_tokens");
    R.Usage.Output = readCount(*U, "output_tokens");
    R.HasUsage = U->contains("input_tokens") || U->contains("output_tokens");
  }
  return R;
}

Expected<WireReply> parseReply(Provider P, StringRef Body) {
  Expected<json> Doc = parseJSON(Body, "the server's reply");
  if (!Doc)
    return Doc.takeError();
  if (!Doc->is_object())
    return makeLLMError(LLMErrorCode::BadResponse,
                        "the server's reply is not a JSON object");
  try {
    return P == Provider::Anthropic ? parseAnthropic(*Doc) : parseOpenAI(*Doc);
  } catch (const json::exception &E) {
    return makeLLMError(LLMErrorCode::BadResponse,
                        Twine("malformed reply: ") + E.what());
  }
}

std::string serverErrorMessage(StringRef Body) {
  json Doc = json::parse(Body.begin(), Body.end(), nullptr,
                         /*allow_exceptions=*/false);
  if (Doc.is_object()) {
    if (auto E = Doc.find("error"); E != Doc.end()) {
      if (E->is_string())
        return excerpt(E->get_ref<const std::string &>(), 300);
      if (auto M = E->is_object() ? E->find("message") : E->end();
          M != E->end() && M->is_string())
        return excerpt(M->get_ref<const std::string &>(), 300);
    }
  }
  if (Body.empty())
    return "(empty body)";
  return excerpt(Body, 200);
}

std::string cacheKeyMaterial(const LLMConfig &Config,
                             const ChatRequest &Request) {
  json K = json::object();
  K["version"] = 1;
  K["provider"] = providerName(Config.Prov).str();
  K["endpoint"] = Config.endpointURL();
  K["model"] = Config.Model;
  K["system"] = Request.System;
  json Messages = json::array();
  for (const ChatMessage &M : Request.Messages)
    Messages.push_back({roleName(M.R).str(), M.Content});
  K["messages"] = std::move(Messages);
  if (Request.Schema) {
    K["schema"] = {{"name", Request.Schema->Name},
                   {"description", Request.Schema->Description},
                   {"schema", Request.Schema->SchemaJSON},
                   {"strict", Request.Schema->Strict},
                   {"validation", Request.Schema->ValidationSchemaJSON}};
  }
  K["max_tokens"] = Request.MaxOutputTokens.value_or(Config.MaxOutputTokens);
  std::optional<double> T =
      Request.Temperature ? Request.Temperature : Config.Temperature;
  K["temperature"] = T ? json(*T) : json(nullptr);
  return dumpJSON(K);
}

std::string serializeResponse(const ChatResponse &R) {
  json J = {{"version", 1},
            {"text", R.Text},
            {"json", R.JSON},
            {"mode", structuredModeName(R.Mode).str()},
            {"usage", {{"input", R.Usage.Input}, {"output", R.Usage.Output}}},
            {"usage_estimated", R.UsageEstimated},
            {"finish_reason", R.FinishReason}};
  return J.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Expected<ChatResponse> deserializeResponse(StringRef Text) {
  Expected<json> J = parseJSON(Text, "the cache entry");
  if (!J)
    return J.takeError();
  try {
    if (!J->is_object() || J->value("version", 0) != 1)
      return makeLLMError(LLMErrorCode::Cache, "unknown cache entry version");
    ChatResponse R;
    R.Text = J->at("text").get<std::string>();
    R.JSON = J->at("json").get<std::string>();
    std::string Mode = J->at("mode").get<std::string>();
    R.Mode = Mode == "json_schema" ? StructuredMode::JsonSchema
             : Mode == "tool_call" ? StructuredMode::ToolCall
                                   : StructuredMode::Text;
    R.Usage.Input = J->at("usage").at("input").get<uint64_t>();
    R.Usage.Output = J->at("usage").at("output").get<uint64_t>();
    R.UsageEstimated = J->value("usage_estimated", false);
    R.FinishReason = J->value("finish_reason", "");
    return R;
  } catch (const json::exception &E) {
    return makeLLMError(LLMErrorCode::Cache,
                        Twine("malformed cache entry: ") + E.what());
  }
}

} // namespace llm
} // namespace optiml
