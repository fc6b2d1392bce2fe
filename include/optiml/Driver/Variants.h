//===- Variants.h - Recording verified variants -----------------*- C++ -*-===//
//
// The variant database a session records its verified best in (docs/db.md):
// which one, opened for writing, and what is recorded under which key.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_DRIVER_VARIANTS_H
#define OPTIML_DRIVER_VARIANTS_H

#include "optiml/Driver/Optimize.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <string>
#include <vector>

namespace optiml {
struct GpuInfo;
struct ParsedTU;
namespace db {
class Database;
} // namespace db

/// The database optimize records in (--db, the project's config, -p's
/// build directory or .optiml/; docs/db.md), opened for writing. Errors
/// name the file.
llvm::Expected<std::unique_ptr<db::Database>>
openVariantDatabase(llvm::StringRef Explicit, llvm::StringRef SourcePath,
                    llvm::StringRef BuildDir);

/// What optimize records of its verified best.
struct VariantToRecord {
  const ParsedTU *TU = nullptr; ///< the original's parse: the files it read
  llvm::StringRef File;
  /// The main file's text as read (before the parse's normalization).
  llvm::StringRef Original;
  std::vector<std::string> Kernels;
  const GpuInfo *Gpu = nullptr;
  llvm::StringRef NvccVersion;
  std::vector<std::string> NvccFlags;
  llvm::StringRef Source, Diff;
  double Speedup = 1;
  llvm::StringRef Verification; ///< JSON
  std::vector<std::string> VariantFlags;
};

/// Records \p V under its key and says so on \p Obs (a result line); a
/// failure is a warning (the variant is written all the same).
void recordVariant(db::Database &DB, const VariantToRecord &V,
                   SessionObserver &Obs);

} // namespace optiml

#endif
