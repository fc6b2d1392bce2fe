//===- Secrets.h - Keeping API keys out of what the LLM client writes -----===//
//
// The secret policy itself (which variables are credentials, what a child
// may inherit, the redactor) is in optiml/Support/Secrets.h. The client
// redacts every reply as it arrives (redactReplyJSON for structured
// output), so nothing derived from a reply (proposals, rationales, code,
// errors, cache entries, the prompts fed back) can carry a key further.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_LLM_SECRETS_H
#define OPTIML_LLM_SECRETS_H

#include "optiml/Support/Secrets.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace optiml {
namespace llm {

using optiml::Redactor;

/// Redacts every string (keys included) of a JSON document and prints it
/// again, so a key spelt with \u escapes is masked too. Text that is not
/// JSON is redacted as text.
std::string redactReplyJSON(llvm::StringRef JSON, const Redactor &R);

} // namespace llm
} // namespace optiml

#endif // OPTIML_LLM_SECRETS_H
