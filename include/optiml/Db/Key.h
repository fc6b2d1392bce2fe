//===- Key.h - What a tuned variant is keyed by -----------------*- C++ -*-===//
//
// A verified variant is only valid for exactly what it was measured with:
// the text its translation unit was compiled from, the kernels searched, the
// GPU, nvcc and nvcc's flags. The key is a BLAKE3 digest of all of them.
//
// The translation unit's text is every file the parse read, as its
// SourceManager saw it: the main file, every included user file and every
// system header (CUDA's, clang's wrappers, the C++ library), each by
// content. Paths are not part of the key (a project moved or checked out
// elsewhere keeps its variants); they are recorded beside it so that a row
// can be checked against the files on disk (stale()).
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_DB_KEY_H
#define OPTIML_DB_KEY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <vector>

namespace clang {
class SourceManager;
}

namespace optiml {
namespace db {

/// One file a translation unit read.
struct InputFile {
  std::string Path; ///< absolute
  std::string Hash; ///< hashContent() of the text the parse saw
  bool Main = false;
  /// Not a file on disk: a header the tool itself supplies to the parse
  /// (its hash is in the key; staleness is not checked on disk).
  bool Virtual = false;
};

/// BLAKE3 of \p Text, as 64 lowercase hex digits.
std::string hashContent(llvm::StringRef Text);

/// Every file \p SM read, the main file first, the rest sorted by path;
/// one that is not on disk (other than the main file) is marked Virtual.
/// Relative names are made absolute against \p Directory (empty: the
/// current directory). \p MainText, when given, is the main file's text as
/// it is on disk (the parse may have read a normalized copy of it).
std::vector<InputFile>
translationUnitInputs(const clang::SourceManager &SM,
                      std::optional<llvm::StringRef> MainText = std::nullopt,
                      llvm::StringRef Directory = "");

/// The digest of a translation unit's text: the main file's hash and the
/// sorted hashes of the others.
std::string inputsDigest(llvm::ArrayRef<InputFile> Inputs);

/// Everything a verdict depends on.
struct VariantKey {
  std::string InputsDigest;           ///< inputsDigest() of the original
  std::vector<std::string> Kernels;   ///< qualified names (order ignored)
  std::string GpuName;                ///< "NVIDIA H200"
  std::string GpuArch;                ///< "sm_90": the compute capability
  std::string NvccVersion;            ///< `nvcc --version`
  std::vector<std::string> NvccFlags; ///< every build's flags, in order

  /// The key: 64 lowercase hex digits.
  std::string digest() const;
};

/// Why the recorded \p Inputs no longer describe the files on disk (the
/// first file that is missing or whose content changed), or empty when
/// every one still hashes the same.
std::string staleReason(llvm::ArrayRef<InputFile> Inputs);

} // namespace db
} // namespace optiml

#endif
