//===- LLMError.cpp -------------------------------------------------------===//

#include "optiml/LLM/LLMError.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace optiml {
namespace llm {

char LLMError::ID = 0;

StringRef errorCodeName(LLMErrorCode Code) {
  switch (Code) {
  case LLMErrorCode::Config:
    return "config";
  case LLMErrorCode::Transport:
    return "transport";
  case LLMErrorCode::Timeout:
    return "timeout";
  case LLMErrorCode::HttpStatus:
    return "http-status";
  case LLMErrorCode::BodyTooLarge:
    return "body-too-large";
  case LLMErrorCode::BudgetExceeded:
    return "budget-exceeded";
  case LLMErrorCode::BadResponse:
    return "bad-response";
  case LLMErrorCode::NotUTF8:
    return "not-utf8";
  case LLMErrorCode::NoJSON:
    return "no-json";
  case LLMErrorCode::Truncated:
    return "truncated";
  case LLMErrorCode::SchemaMismatch:
    return "schema-mismatch";
  case LLMErrorCode::Cache:
    return "cache";
  case LLMErrorCode::Prompt:
    return "prompt";
  }
  return "unknown";
}

void LLMError::log(raw_ostream &OS) const { OS << Message; }

std::error_code LLMError::convertToErrorCode() const {
  return inconvertibleErrorCode();
}

Error makeLLMError(LLMErrorCode Code, const Twine &Message,
                   unsigned HttpStatus) {
  return make_error<LLMError>(Code, Message.str(), HttpStatus);
}

ErrorSummary summarizeError(Error Err) {
  ErrorSummary Summary;
  handleAllErrors(
      std::move(Err),
      [&](const LLMError &E) {
        Summary.Code = E.code();
        Summary.HttpStatus = E.httpStatus();
        Summary.Message = E.message();
      },
      [&](const ErrorInfoBase &E) { Summary.Message = E.message(); });
  return Summary;
}

} // namespace llm
} // namespace optiml
