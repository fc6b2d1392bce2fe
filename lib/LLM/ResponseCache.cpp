//===- ResponseCache.cpp - On-disk cache of model replies -----------------===//

#include "optiml/LLM/ResponseCache.h"
#include "optiml/LLM/LLMError.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace optiml {
namespace llm {

std::string ResponseCache::hashKey(StringRef KeyMaterial) {
  std::array<uint8_t, 32> Digest =
      SHA256::hash(arrayRefFromStringRef(KeyMaterial));
  return toHex(Digest, /*LowerCase=*/true);
}

std::string ResponseCache::pathFor(StringRef Key) const {
  // Two-level fan-out keeps directories small over long campaigns.
  SmallString<256> P(Dir);
  sys::path::append(P, Key.take_front(2), (Key + ".json").str());
  return std::string(P);
}

std::optional<std::string> ResponseCache::lookup(StringRef Key) const {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf =
      MemoryBuffer::getFile(pathFor(Key), /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!Buf)
    return std::nullopt;
  return (*Buf)->getBuffer().str();
}

Error ResponseCache::store(StringRef Key, StringRef Value) const {
  std::string Path = pathFor(Key);
  StringRef Parent = sys::path::parent_path(Path);
  if (std::error_code EC = sys::fs::create_directories(Parent))
    return makeLLMError(LLMErrorCode::Cache, "cannot create cache directory " +
                                                 Parent + ": " + EC.message());
  SmallString<256> Temp;
  int FD = -1;
  if (std::error_code EC =
          sys::fs::createUniqueFile(Path + ".tmp-%%%%%%%%", FD, Temp))
    return makeLLMError(LLMErrorCode::Cache,
                        "cannot write to cache directory " + Parent + ": " +
                            EC.message());
  {
    raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Value;
    OS.close();
    if (OS.has_error()) {
      std::string Msg = OS.error().message();
      OS.clear_error();
      (void)sys::fs::remove(Temp);
      return makeLLMError(LLMErrorCode::Cache,
                          "cannot write cache entry " + Path + ": " + Msg);
    }
  }
  if (std::error_code EC = sys::fs::rename(Temp, Path)) {
    (void)sys::fs::remove(Temp);
    return makeLLMError(LLMErrorCode::Cache, "cannot write cache entry " +
                                                 Path + ": " + EC.message());
  }
  return Error::success();
}

} // namespace llm
} // namespace optiml
