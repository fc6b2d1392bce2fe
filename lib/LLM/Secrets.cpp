//===- Secrets.cpp - Redacting replies ------------------------------------===//

#include "optiml/LLM/Secrets.h"
#include "JsonInternal.h"

using namespace llvm;

namespace optiml {
namespace llm {

using json = nlohmann::json;

static json redactValue(const json &V, const Redactor &R) {
  if (V.is_string())
    return R.redact(V.get_ref<const std::string &>());
  if (V.is_array()) {
    json Out = json::array();
    for (const json &E : V)
      Out.push_back(redactValue(E, R));
    return Out;
  }
  if (V.is_object()) {
    json Out = json::object();
    for (auto It = V.begin(); It != V.end(); ++It)
      Out[R.redact(It.key())] = redactValue(It.value(), R);
    return Out;
  }
  return V;
}

std::string redactReplyJSON(StringRef JSON, const Redactor &R) {
  try {
    json Doc = json::parse(JSON.begin(), JSON.end());
    return redactValue(Doc, R).dump(-1, ' ', false,
                                    json::error_handler_t::replace);
  } catch (const json::exception &) {
    return R.redact(JSON);
  }
}

} // namespace llm
} // namespace optiml
