//===- WireFormatInternal.h - OpenAI and Anthropic request/reply JSON -----===//

#ifndef OPTIML_LIB_LLM_WIREFORMATINTERNAL_H
#define OPTIML_LIB_LLM_WIREFORMATINTERNAL_H

#include "optiml/LLM/ChatClient.h"
#include "optiml/LLM/HttpTransport.h"
#include "optiml/LLM/LLMConfig.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace optiml {
namespace llm {

/// A reply reduced to what the client needs, whatever the wire format.
struct WireReply {
  std::string Text;
  /// The tool call's arguments as JSON text, when the model called the tool.
  std::optional<std::string> ToolInput;
  TokenUsage Usage;
  bool HasUsage = false;
  std::string FinishReason;
  /// The reply stopped at the output token limit.
  bool HitTokenLimit = false;
};

llvm::Expected<std::string> buildRequestBody(const LLMConfig &Config,
                                             const ChatRequest &Request,
                                             StructuredMode Mode);

std::vector<HttpHeader> buildHeaders(const LLMConfig &Config);

llvm::Expected<WireReply> parseReply(Provider P, llvm::StringRef Body);

/// The server's own error message ("error": {"message": ...}) or the start
/// of the body.
std::string serverErrorMessage(llvm::StringRef Body);

/// What the cache key hashes: the request in canonical form, without
/// credentials.
std::string cacheKeyMaterial(const LLMConfig &Config,
                             const ChatRequest &Request);

/// Cache entries: a response, serialized and back.
std::string serializeResponse(const ChatResponse &R);
llvm::Expected<ChatResponse> deserializeResponse(llvm::StringRef Text);

} // namespace llm
} // namespace optiml

#endif // OPTIML_LIB_LLM_WIREFORMATINTERNAL_H
