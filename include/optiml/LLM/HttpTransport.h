//===- HttpTransport.h - The HTTP interface the LLM client uses ----------===//
//
// A deliberately small interface: one POST, a response or an error. The
// libcurl implementation lives in lib/LLM/CurlTransport.cpp, the only file
// that includes curl; tests can substitute their own.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_LLM_HTTPTRANSPORT_H
#define OPTIML_LLM_HTTPTRANSPORT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace optiml {
namespace llm {

struct HttpHeader {
  std::string Name;
  std::string Value;
};

struct HttpRequest {
  std::string Url;
  std::vector<HttpHeader> Headers;
  std::string Body;
  /// Whole-transfer limit; a reply still arriving after it is a Timeout.
  std::chrono::milliseconds Timeout{120000};
  std::chrono::milliseconds ConnectTimeout{10000};
  /// Replies larger than this fail with BodyTooLarge instead of filling
  /// memory.
  size_t MaxResponseBytes = 8u << 20;
};

struct HttpResponse {
  unsigned Status = 0;
  std::vector<HttpHeader> Headers;
  std::string Body;

  /// The first header with this name, compared case-insensitively.
  std::optional<llvm::StringRef> header(llvm::StringRef Name) const;
};

class HttpTransport {
public:
  virtual ~HttpTransport();

  /// Sends a POST. A reply with any status is a response; only failures to
  /// get one (timeout, dropped connection, oversize body) are errors, as
  /// LLMError values with codes Timeout, Transport or BodyTooLarge. Error
  /// messages never contain header values.
  virtual llvm::Expected<HttpResponse> post(const HttpRequest &Request) = 0;
};

/// The libcurl transport. Thread-safe: each call uses its own handle.
std::unique_ptr<HttpTransport> createCurlTransport();

} // namespace llm
} // namespace optiml

#endif // OPTIML_LLM_HTTPTRANSPORT_H
