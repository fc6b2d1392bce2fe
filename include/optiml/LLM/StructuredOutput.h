//===- StructuredOutput.h - JSON out of model replies ---------------------===//
//
// Models answer in JSON when asked through response_format or tool use, and
// in prose with JSON somewhere inside when those are unavailable. These
// functions find the document and check it against a JSON Schema.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_LLM_STRUCTUREDOUTPUT_H
#define OPTIML_LLM_STRUCTUREDOUTPUT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace optiml {
namespace llm {

/// Finds the JSON object or array in a reply: the whole text, else the
/// first markdown fence (```json ... ```) that holds one, else the first
/// balanced {...} or [...] in the prose. Returns it re-serialized. Errors:
/// NotUTF8, Truncated (an object opened and never closed), NoJSON.
llvm::Expected<std::string> extractJSON(llvm::StringRef Text);

/// Checks Document against Schema (both JSON text). Supports the subset of
/// JSON Schema that structured-output APIs accept: type (single or list),
/// properties, required, additionalProperties (bool or schema), items,
/// enum, const, minItems, maxItems, minLength, maxLength, minimum, maximum,
/// pattern-free strings. Errors are SchemaMismatch and name the JSON path
/// ("$.proposals[2].kind").
llvm::Error validateJSONSchema(llvm::StringRef Document,
                               llvm::StringRef Schema);

/// Why a JSON document failed to parse, guessing truncation from an
/// unexpected end of input: Truncated or BadResponse.
llvm::Error diagnoseBadJSON(llvm::StringRef Text, llvm::StringRef What);

} // namespace llm
} // namespace optiml

#endif // OPTIML_LLM_STRUCTUREDOUTPUT_H
