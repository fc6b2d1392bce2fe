//===- CurlTransport.cpp - HttpTransport over libcurl ---------------------===//
//
// The only file that includes curl.
//
//===----------------------------------------------------------------------===//

#include "optiml/LLM/HttpTransport.h"
#include "optiml/LLM/LLMError.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Process.h"

#include <curl/curl.h>

#include <mutex>

using namespace llvm;

namespace optiml {
namespace llm {

HttpTransport::~HttpTransport() = default;

std::optional<StringRef> HttpResponse::header(StringRef Name) const {
  for (const HttpHeader &H : Headers)
    if (StringRef(H.Name).equals_insensitive(Name))
      return StringRef(H.Value);
  return std::nullopt;
}

namespace {

struct Transfer {
  std::string Body;
  std::vector<HttpHeader> Headers;
  size_t Cap = 0;
  bool Overflow = false;
};

size_t writeBody(char *Data, size_t Size, size_t Count, void *User) {
  auto *T = static_cast<Transfer *>(User);
  size_t N = Size * Count;
  if (T->Body.size() + N > T->Cap) {
    T->Overflow = true;
    return 0; // Makes curl stop with CURLE_WRITE_ERROR.
  }
  T->Body.append(Data, N);
  return N;
}

size_t writeHeader(char *Data, size_t Size, size_t Count, void *User) {
  auto *T = static_cast<Transfer *>(User);
  size_t N = Size * Count;
  StringRef Line(Data, N);
  // A new status line (after a redirect or 100-continue) starts a new set.
  if (Line.starts_with("HTTP/")) {
    T->Headers.clear();
    return N;
  }
  auto [Name, Value] = Line.split(':');
  if (!Value.empty() || Line.contains(':'))
    T->Headers.push_back({Name.trim().str(), Value.trim().str()});
  return N;
}

/// no_proxy as the user set it, plus the loopback names. Setting
/// CURLOPT_NOPROXY replaces the variable, so both go in.
std::string noProxyList() {
  std::string List = "localhost,127.0.0.1,::1";
  for (const char *Var : {"no_proxy", "NO_PROXY"})
    if (std::optional<std::string> V = sys::Process::GetEnv(Var))
      if (!V->empty()) {
        if (*V == "*")
          return "*"; // curl only honours the wildcard on its own.
        List += "," + *V;
      }
  return List;
}

class CurlTransport : public HttpTransport {
public:
  CurlTransport() {
    static std::once_flag Once;
    std::call_once(Once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  }

  Expected<HttpResponse> post(const HttpRequest &Request) override {
    CURL *Handle = curl_easy_init();
    if (!Handle)
      return makeLLMError(LLMErrorCode::Transport,
                          "could not initialize libcurl");
    struct curl_slist *Headers = nullptr;
    llvm::scope_exit Cleanup([&] {
      curl_slist_free_all(Headers);
      curl_easy_cleanup(Handle);
    });
    for (const HttpHeader &H : Request.Headers)
      Headers = curl_slist_append(Headers, (H.Name + ": " + H.Value).c_str());
    // curl adds "Expect: 100-continue" to large POSTs; servers differ in
    // how they handle it, so don't.
    Headers = curl_slist_append(Headers, "Expect:");

    Transfer T;
    T.Cap = Request.MaxResponseBytes;
    char ErrorBuffer[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(Handle, CURLOPT_URL, Request.Url.c_str());
    curl_easy_setopt(Handle, CURLOPT_POST, 1L);
    curl_easy_setopt(Handle, CURLOPT_POSTFIELDS, Request.Body.data());
    curl_easy_setopt(Handle, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(Request.Body.size()));
    curl_easy_setopt(Handle, CURLOPT_HTTPHEADER, Headers);
    curl_easy_setopt(Handle, CURLOPT_WRITEFUNCTION, writeBody);
    curl_easy_setopt(Handle, CURLOPT_WRITEDATA, &T);
    curl_easy_setopt(Handle, CURLOPT_HEADERFUNCTION, writeHeader);
    curl_easy_setopt(Handle, CURLOPT_HEADERDATA, &T);
    curl_easy_setopt(Handle, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(Request.Timeout.count()));
    curl_easy_setopt(Handle, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(Request.ConnectTimeout.count()));
    curl_easy_setopt(Handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(Handle, CURLOPT_ERRORBUFFER, ErrorBuffer);
    curl_easy_setopt(Handle, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(Handle, CURLOPT_FOLLOWLOCATION, 0L);
    // Proxies come from the usual variables (https_proxy, no_proxy), which
    // curl reads itself; a local server (vLLM, Ollama, the tests' scripted
    // one) is never reached through a proxy.
    std::string NoProxy = noProxyList();
    curl_easy_setopt(Handle, CURLOPT_NOPROXY, NoProxy.c_str());

    CURLcode Code = curl_easy_perform(Handle);
    if (Code != CURLE_OK) {
      std::string Detail =
          ErrorBuffer[0] ? ErrorBuffer : curl_easy_strerror(Code);
      if (T.Overflow || Code == CURLE_FILESIZE_EXCEEDED)
        return makeLLMError(LLMErrorCode::BodyTooLarge,
                            "reply from " + Request.Url + " exceeds " +
                                Twine(Request.MaxResponseBytes) +
                                " bytes; raise max_response_bytes if this "
                                "is expected");
      if (Code == CURLE_OPERATION_TIMEDOUT)
        return makeLLMError(LLMErrorCode::Timeout,
                            "request to " + Request.Url + " timed out after " +
                                Twine(Request.Timeout.count()) + " ms");
      return makeLLMError(LLMErrorCode::Transport,
                          "request to " + Request.Url + " failed: " + Detail);
    }
    HttpResponse Response;
    long Status = 0;
    curl_easy_getinfo(Handle, CURLINFO_RESPONSE_CODE, &Status);
    Response.Status = static_cast<unsigned>(Status);
    Response.Headers = std::move(T.Headers);
    Response.Body = std::move(T.Body);
    return Response;
  }
};

} // namespace

std::unique_ptr<HttpTransport> createCurlTransport() {
  return std::make_unique<CurlTransport>();
}

} // namespace llm
} // namespace optiml
