//===- JsonInternal.h - nlohmann/json helpers private to lib/LLM ----------===//
//
// nlohmann/json is used only inside lib/LLM's .cpp files (the wire formats,
// the cache, the config file); these helpers turn its exceptions into
// llvm::Error so none crosses a function boundary.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_LIB_LLM_JSONINTERNAL_H
#define OPTIML_LIB_LLM_JSONINTERNAL_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <string>

namespace optiml {
namespace llm {

/// Parses Text, checking UTF-8 first. What names the document in errors.
llvm::Expected<nlohmann::json> parseJSON(llvm::StringRef Text,
                                         llvm::StringRef What);

/// Validates Doc against Schema (see validateJSONSchema).
llvm::Error validateSchema(const nlohmann::json &Doc,
                           const nlohmann::json &Schema);

/// Serializes without throwing on invalid UTF-8 in strings.
std::string dumpJSON(const nlohmann::json &J);

/// Whether Text is valid UTF-8 (nlohmann/json refuses anything else).
bool isUTF8(llvm::StringRef Text);

/// Text with every byte sequence that is not UTF-8 replaced by U+FFFD.
std::string fixUTF8(llvm::StringRef Text);

/// The first N characters of Text, on one line, for error messages.
std::string excerpt(llvm::StringRef Text, size_t N = 120);

} // namespace llm
} // namespace optiml

#endif // OPTIML_LIB_LLM_JSONINTERNAL_H
