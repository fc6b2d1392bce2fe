//===- Database.h - The database of tuned variants --------------*- C++ -*-===//
//
// One SQLite file per project (docs/db.md) holds the verified variants that
// optimize found, keyed by VariantKey::digest(). A variant is served only on
// an exact key match whose recorded input files still hash the same.
//
// Write-ahead logging, a busy timeout and one IMMEDIATE transaction per
// write make concurrent writers (several optimize runs of one build) safe.
// The schema is versioned with PRAGMA user_version and migrated forward in
// a transaction when a file is opened for writing. A file that is not one
// of ours (not SQLite, another program's database, damaged, or written by a
// newer clang-optiml) is reported by name and never modified.
//
// SQLite's C API lives in Database.cpp alone.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_DB_DATABASE_H
#define OPTIML_DB_DATABASE_H

#include "optiml/Db/Key.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace optiml {
namespace db {

/// One row: a verified variant and what it was verified with.
struct VariantRecord {
  std::string Key; ///< Id.digest(); filled in by record() when empty
  VariantKey Id;
  std::string File;              ///< the original's path when recorded
  std::vector<InputFile> Inputs; ///< what Id.InputsDigest was made from
  std::string Source;            ///< the variant's full text
  std::string Diff;              ///< unified diff from the original
  double Speedup = 1;
  std::string Verification; ///< the verification record, JSON
  /// nvcc flags the variant needs on top of Id.NvccFlags (-maxrregcount=64).
  std::vector<std::string> VariantFlags;
  std::string ToolVersion;
  std::string Date; ///< UTC, 2026-01-31T12:00:00Z; record() fills it when empty
};

/// What record() did.
enum class RecordResult {
  Inserted,
  Replaced,     ///< a slower variant under the same key was replaced
  KeptExisting, ///< the key already holds a variant at least as fast
};

class Database {
public:
  /// The schema version this build writes (and the newest it reads).
  static constexpr unsigned SchemaVersion = 2;

  enum class Mode {
    /// Creates the file (and its directory) when missing, migrates it.
    ReadWrite,
    /// Fails when the file is missing; never writes (an old schema is read
    /// as it is).
    ReadOnly,
  };

  /// Opens \p Path. Errors name the file and say what to do.
  /// \p UpToVersion is for tests: migrate no further than this version.
  static llvm::Expected<std::unique_ptr<Database>>
  open(llvm::StringRef Path, Mode M = Mode::ReadWrite,
       unsigned UpToVersion = SchemaVersion);
  ~Database();

  const std::string &path() const { return Path; }
  /// The file's schema version (PRAGMA user_version).
  unsigned version() const { return Version; }

  /// Stores \p R under its key, in one transaction. A key that already holds
  /// a variant keeps the faster one.
  llvm::Expected<RecordResult> record(VariantRecord R);

  /// The variant for exactly \p K, if there is one and its recorded inputs
  /// still hash the same on disk (otherwise nothing: a stale row is never
  /// served).
  llvm::Expected<std::optional<VariantRecord>> lookup(const VariantKey &K);

  /// Every row, newest first.
  llvm::Expected<std::vector<VariantRecord>> all();

  /// The one row whose key starts with \p Prefix (at least 4 hex digits);
  /// an error when none or several do.
  llvm::Expected<VariantRecord> find(llvm::StringRef Prefix);

  /// Removes these keys in one transaction; returns how many were removed.
  llvm::Expected<unsigned> remove(llvm::ArrayRef<std::string> Keys);

private:
  Database() = default;
  llvm::Error exec(llvm::StringRef SQL);
  llvm::Error failure(llvm::StringRef What) const;
  llvm::Error migrate(unsigned UpTo);
  llvm::Expected<std::vector<VariantRecord>> select(llvm::StringRef Where,
                                                    llvm::StringRef Arg);

  sqlite3 *Handle = nullptr;
  std::string Path;
  unsigned Version = 0;
};

/// Where the database is: \p Explicit (--db) if given; else the "db":
/// {"path": ...} of the project's .clang-optiml.json found from
/// \p ConfigDir upwards (relative to that file's directory); else
/// <BuildDir>/clang-optiml.db with a build directory (-p); else
/// .optiml/clang-optiml.db under \p WorkingDir, beside optimize's run
/// directories. Errors: a config file that does not parse.
llvm::Expected<std::string> databasePath(llvm::StringRef Explicit,
                                         llvm::StringRef ConfigDir,
                                         llvm::StringRef BuildDir,
                                         llvm::StringRef WorkingDir);

} // namespace db
} // namespace optiml

#endif
