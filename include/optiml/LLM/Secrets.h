//===- Secrets.h - Keeping API keys out of logs and child processes ------===//
//
// API keys travel only in HTTP headers. Everything the client writes
// (errors, log lines, cache files) goes through a Redactor first, and child
// processes (the user's program under evaluation, nvcc) get an environment
// without key variables.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_LLM_SECRETS_H
#define OPTIML_LLM_SECRETS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace optiml {
namespace llm {

/// Replaces known secrets, and anything shaped like a key or a bearer token,
/// with "[REDACTED]".
class Redactor {
public:
  /// Registers a secret; values shorter than 4 characters are ignored (they
  /// would redact ordinary words).
  void addSecret(llvm::StringRef Secret);
  std::string redact(llvm::StringRef Text) const;

private:
  std::vector<std::string> Secrets;
};

/// Whether an environment variable holds a credential: the provider key
/// variables and any name ending in _API_KEY, _AUTH_TOKEN, _ACCESS_TOKEN or
/// _SECRET_KEY.
bool isSecretVariable(llvm::StringRef Name);

/// Returns Env ("NAME=value" entries) without the secret variables.
std::vector<std::string>
environmentWithoutSecrets(llvm::ArrayRef<std::string> Env);

/// The current process environment without the secret variables, for
/// launching children.
std::vector<std::string> currentEnvironmentWithoutSecrets();

} // namespace llm
} // namespace optiml

#endif // OPTIML_LLM_SECRETS_H
