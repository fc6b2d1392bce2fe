//===- ResponseCache.h - On-disk cache of model replies -------------------===//
//
// One file per request under the cache directory, named by the SHA-256 of
// the request as sent minus credentials. Makes runs reproducible and a
// resumed search free of double spending.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_LLM_RESPONSECACHE_H
#define OPTIML_LLM_RESPONSECACHE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace optiml {
namespace llm {

class ResponseCache {
public:
  explicit ResponseCache(std::string Dir) : Dir(std::move(Dir)) {}

  /// The hex SHA-256 of KeyMaterial.
  static std::string hashKey(llvm::StringRef KeyMaterial);

  /// The stored entry for Key, or nothing (a miss, or an unreadable entry).
  std::optional<std::string> lookup(llvm::StringRef Key) const;

  /// Stores Value atomically (write to a temporary, then rename), so that
  /// concurrent writers and crashes never leave a partial entry.
  llvm::Error store(llvm::StringRef Key, llvm::StringRef Value) const;

  std::string pathFor(llvm::StringRef Key) const;
  const std::string &directory() const { return Dir; }

private:
  std::string Dir;
};

} // namespace llm
} // namespace optiml

#endif // OPTIML_LLM_RESPONSECACHE_H
