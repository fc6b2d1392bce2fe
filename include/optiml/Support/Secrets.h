//===- Secrets.h - API keys: kept in memory, out of children and logs
//------===//
//
// The one secret policy of the tool:
//
// - Which variables hold credentials (isSecretEnvName).
// - Which variables a child process (nvcc, the program, the sanitizer) may
//   inherit: an allow-list (isChildEnvAllowed), never the user's
//   environment minus a deny-list.
// - At start-up, scrubEnvironmentAtStartup moves credentials into this
//   process's memory and overwrites them, and every other variable a child
//   may not see, in the original environment block: /proc/<pid>/environ
//   reads that block, so unsetenv alone would leave them readable there.
// - Everything shown or written that may quote a server's reply goes
//   through redactSecrets (or a Redactor), which masks the captured keys
//   and anything shaped like a key.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SUPPORT_SECRETS_H
#define OPTIML_SUPPORT_SECRETS_H

#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>
#include <vector>

namespace optiml {

/// Whether a variable holds a credential: any name ending in _API_KEY,
/// _APIKEY, _KEY, _TOKEN, _SECRET, _PASSWORD, _PASSWD or _CREDENTIALS (any
/// case), the bare API_KEY, TOKEN, SECRET and PASSWORD, and OPENAI_ORG_ID.
bool isSecretEnvName(llvm::StringRef Name);

/// Whether a child process may inherit the variable from the tool's
/// environment: PATH, HOME, USER, LOGNAME, TMPDIR, TMP, TEMP, TZ, LANG,
/// LANGUAGE, LC_*, CUDA_*, NVIDIA_*, NVCC_*, NV_COMPUTE_SANITIZER_*,
/// LD_LIBRARY_PATH, and the host compiler's CPATH, C_INCLUDE_PATH,
/// CPLUS_INCLUDE_PATH and LIBRARY_PATH; and the names listed,
/// comma-separated, in OPTIML_PASS_ENV (what the user's program needs).
/// Never a secret name (isSecretEnvName) nor a captured one. Variables the tool
/// sets for a child itself (ProcessOptions::Env) are passed whatever their
/// name, secrets excepted.
bool isChildEnvAllowed(llvm::StringRef Name);

/// What scrubEnvironmentAtStartup did.
struct ScrubSummary {
  /// Credential variables now held only in memory (names).
  std::vector<std::string> Captured;
  /// Other variables moved off the original block (still visible to this
  /// process through getenv, never to a child).
  unsigned Moved = 0;
  /// Whether the original block was found (/proc/self/stat) and wiped.
  bool Wiped = false;
};

/// Call first thing in main, before any thread or child starts. Every
/// credential variable is read into memory (capturedSecret) and removed
/// from the environment; every other variable a child may not inherit is
/// copied to the heap; then the bytes of both in the original environment
/// block are overwritten, so /proc/<pid>/environ shows only allowed
/// variables. Then makes the process non-dumpable (protectProcessMemory):
/// a key under a name not known yet is still in its memory.
ScrubSummary scrubEnvironmentAtStartup();

/// Takes a variable named by configuration (an "api_key_env" that need not
/// look like a credential) into memory: its value is returned, it is
/// removed from the environment (and its bytes from the original block),
/// and it is never passed to a child. Repeated calls return the value.
std::optional<std::string> takeSecretVariable(llvm::StringRef Name);

/// A captured credential by variable name.
std::optional<std::string> capturedSecret(llvm::StringRef Name);
/// Whether the variable was captured.
bool isCapturedSecretName(llvm::StringRef Name);

/// A variable from the captured credentials, else the environment. Empty
/// values count as unset.
std::optional<std::string> lookupEnvironment(llvm::StringRef Name);

/// Registers a value to mask in redactSecrets (a key from any source);
/// values shorter than 4 characters are ignored.
void registerSecretValue(llvm::StringRef Value);

/// Makes the process non-dumpable: a child running as the same user can
/// then neither read /proc/<pid>/mem (where the keys are) nor attach to
/// this process. Children are dumpable again after exec.
void protectProcessMemory();

/// Masks secrets with "[REDACTED]": values registered with the Redactor,
/// then key-shaped strings (sk-..., bearer tokens, x-api-key values,
/// "api_key": values, credentials in URLs, GitHub, Hugging Face, AWS and
/// Google key formats).
class Redactor {
public:
  /// Values shorter than 4 characters are ignored (they would mask
  /// ordinary words).
  void addSecret(llvm::StringRef Secret);
  std::string redact(llvm::StringRef Text) const;

private:
  std::vector<std::string> Secrets;
};

/// Redacts with every captured and registered secret and the key shapes.
std::string redactSecrets(llvm::StringRef Text);

/// Only the key shapes (no known values).
std::string redactKeyShapes(llvm::StringRef Text);

} // namespace optiml

#endif
