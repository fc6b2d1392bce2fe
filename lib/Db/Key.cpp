//===- Key.cpp - Keys of tuned variants -----------------------------------===//

#include "optiml/Db/Key.h"
#include "optiml/Support/FileUtil.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <algorithm>

using namespace llvm;

namespace optiml {
namespace db {

std::string hashContent(StringRef Text) {
  auto H = BLAKE3::hash(arrayRefFromStringRef(Text));
  return toHex(H, /*LowerCase=*/true);
}

static std::string absolute(StringRef Name, StringRef Directory) {
  SmallString<256> P(Name);
  if (!sys::path::is_absolute(P)) {
    if (Directory.empty())
      (void)sys::fs::make_absolute(P);
    else
      sys::path::make_absolute(Directory, P);
  }
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

std::vector<InputFile> translationUnitInputs(const clang::SourceManager &SM,
                                             std::optional<StringRef> MainText,
                                             StringRef Directory) {
  std::vector<InputFile> Files;
  clang::OptionalFileEntryRef MainFile =
      SM.getFileEntryRefForID(SM.getMainFileID());
  for (auto It = SM.fileinfo_begin(), End = SM.fileinfo_end(); It != End;
       ++It) {
    // A file looked up but never entered was not read.
    std::optional<MemoryBufferRef> Buf = It->second->getBufferIfLoaded();
    if (!Buf)
      continue;
    InputFile F;
    F.Path = absolute(It->first.getName(), Directory);
    F.Main = MainFile && It->first == *MainFile;
    F.Hash = hashContent(F.Main && MainText ? *MainText : Buf->getBuffer());
    F.Virtual = !F.Main && !sys::fs::exists(F.Path);
    Files.push_back(std::move(F));
  }
  std::sort(Files.begin(), Files.end(),
            [](const InputFile &L, const InputFile &R) {
              if (L.Main != R.Main)
                return L.Main;
              return L.Path < R.Path;
            });
  // One entry per path (a file reached through two names is one file).
  Files.erase(std::unique(Files.begin(), Files.end(),
                          [](const InputFile &L, const InputFile &R) {
                            return L.Path == R.Path;
                          }),
              Files.end());
  return Files;
}

/// Length-prefixed, so that no two lists serialize alike.
static void put(raw_ostream &OS, StringRef Field, StringRef Value) {
  OS << Field << "=" << Value.size() << ":" << Value << "\n";
}

std::string inputsDigest(ArrayRef<InputFile> Inputs) {
  std::string Main;
  std::vector<std::string> Others;
  for (const InputFile &F : Inputs)
    (F.Main ? Main : Others.emplace_back()) = F.Hash;
  std::sort(Others.begin(), Others.end());
  std::string S;
  raw_string_ostream OS(S);
  OS << "clang-optiml inputs v1\n";
  put(OS, "main", Main);
  for (const std::string &H : Others)
    put(OS, "file", H);
  return hashContent(S);
}

std::string VariantKey::digest() const {
  std::vector<std::string> Sorted = Kernels;
  std::sort(Sorted.begin(), Sorted.end());
  std::string S;
  raw_string_ostream OS(S);
  OS << "clang-optiml variant key v1\n";
  put(OS, "inputs", InputsDigest);
  for (const std::string &K : Sorted)
    put(OS, "kernel", K);
  put(OS, "gpu", GpuName);
  put(OS, "arch", GpuArch);
  put(OS, "nvcc", NvccVersion);
  for (const std::string &F : NvccFlags)
    put(OS, "flag", F);
  return hashContent(S);
}

std::string staleReason(ArrayRef<InputFile> Inputs) {
  if (Inputs.empty())
    return "no input files were recorded";
  for (const InputFile &F : Inputs) {
    if (F.Virtual)
      continue;
    auto Text = readFile(F.Path);
    if (!Text) {
      consumeError(Text.takeError());
      return "'" + F.Path + "' cannot be read";
    }
    if (hashContent(*Text) != F.Hash)
      return "'" + F.Path + "' has changed";
  }
  return "";
}

} // namespace db
} // namespace optiml
