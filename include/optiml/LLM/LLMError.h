//===- LLMError.h - Errors of the LLM client ------------------------------===//
//
// One error class for everything the LLM client can report, with a code so
// callers (retry logic, the policy, tests) can tell a timeout from a schema
// mismatch without matching on message text.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_LLM_LLMERROR_H
#define OPTIML_LLM_LLMERROR_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace optiml {
namespace llm {

enum class LLMErrorCode {
  Config,         ///< Missing or invalid configuration.
  Transport,      ///< Connection refused, reset, dropped.
  Timeout,        ///< The request took longer than the configured timeout.
  HttpStatus,     ///< The server answered with a non-2xx status.
  BodyTooLarge,   ///< The reply exceeded the body size cap.
  BudgetExceeded, ///< The token budget is spent.
  BadResponse,    ///< The reply is not in the expected wire format.
  NotUTF8,        ///< The reply is not valid UTF-8.
  NoJSON,         ///< No JSON document could be found in the reply.
  Truncated,      ///< The JSON document in the reply is cut off.
  SchemaMismatch, ///< The JSON document does not match the expected schema.
  Cache,          ///< The on-disk cache could not be read or written.
  Prompt,         ///< A prompt template could not be loaded or rendered.
};

llvm::StringRef errorCodeName(LLMErrorCode Code);

class LLMError : public llvm::ErrorInfo<LLMError> {
public:
  static char ID;

  LLMError(LLMErrorCode Code, std::string Message, unsigned HttpStatus = 0)
      : Code(Code), Message(std::move(Message)), Status(HttpStatus) {}

  LLMErrorCode code() const { return Code; }
  unsigned httpStatus() const { return Status; }
  std::string message() const override { return Message; }

  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  LLMErrorCode Code;
  std::string Message;
  unsigned Status;
};

llvm::Error makeLLMError(LLMErrorCode Code, const llvm::Twine &Message,
                         unsigned HttpStatus = 0);

/// What a consumed error said: its code when it was an LLMError, and its
/// message. Convenient for callers that branch on the code and for tests.
struct ErrorSummary {
  std::optional<LLMErrorCode> Code;
  unsigned HttpStatus = 0;
  std::string Message;
};
ErrorSummary summarizeError(llvm::Error Err);

} // namespace llm
} // namespace optiml

#endif // OPTIML_LLM_LLMERROR_H
