//===- Database.cpp - The database of tuned variants on SQLite ------------===//
//
// The only file that speaks SQLite's C API.
//
//===----------------------------------------------------------------------===//

#include "optiml/Db/Database.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <thread>

using namespace llvm;
using json = nlohmann::json;

namespace optiml {
namespace db {

/// PRAGMA application_id of our files: "OPTM".
static constexpr int ApplicationId = 0x4F50544D;
/// How long a writer waits for another one's transaction.
static constexpr int BusyTimeoutMs = 60000;

/// The schema, one step per version: step I takes a file from version I to
/// I + 1. Never edit a step that has shipped; add one.
static const char *const Migrations[] = {
    // v1: one row per key.
    "CREATE TABLE variants ("
    "  key TEXT PRIMARY KEY NOT NULL,"
    "  inputs_digest TEXT NOT NULL,"
    "  kernels TEXT NOT NULL," // JSON array of qualified names
    "  gpu_name TEXT NOT NULL,"
    "  gpu_arch TEXT NOT NULL,"
    "  nvcc_version TEXT NOT NULL,"
    "  nvcc_flags TEXT NOT NULL," // JSON array
    "  file TEXT NOT NULL,"
    "  inputs TEXT NOT NULL," // JSON array of {path, hash, main}
    "  source TEXT NOT NULL,"
    "  diff TEXT NOT NULL,"
    "  speedup REAL NOT NULL,"
    "  verification TEXT NOT NULL," // JSON
    "  tool_version TEXT NOT NULL,"
    "  created TEXT NOT NULL" // UTC, ISO 8601
    ");",
    // v2: the variant's own nvcc flags (a launcher must build it with them),
    // and lookups by translation unit.
    "ALTER TABLE variants ADD COLUMN variant_flags TEXT NOT NULL "
    "DEFAULT '[]';"
    "CREATE INDEX variants_by_inputs ON variants(inputs_digest);",
};
static_assert(std::size(Migrations) == Database::SchemaVersion,
              "one migration step per schema version");

namespace {
/// A prepared statement, finalized on every path.
class Statement {
public:
  Statement(sqlite3 *H, StringRef SQL) {
    RC = sqlite3_prepare_v2(H, SQL.data(), int(SQL.size()), &S, nullptr);
  }
  ~Statement() { sqlite3_finalize(S); }
  bool ok() const { return RC == SQLITE_OK; }
  void bind(int I, StringRef V) {
    sqlite3_bind_text(S, I, V.data(), int(V.size()), SQLITE_TRANSIENT);
  }
  void bind(int I, double V) { sqlite3_bind_double(S, I, V); }
  /// SQLITE_ROW, SQLITE_DONE or an error.
  int step() { return RC = sqlite3_step(S); }
  std::string text(int I) const {
    const unsigned char *T = sqlite3_column_text(S, I);
    return T ? std::string(reinterpret_cast<const char *>(T),
                           sqlite3_column_bytes(S, I))
             : std::string();
  }
  double real(int I) const { return sqlite3_column_double(S, I); }
  int64_t integer(int I) const { return sqlite3_column_int64(S, I); }
  int rc() const { return RC; }

private:
  sqlite3_stmt *S = nullptr;
  int RC = SQLITE_OK;
};
} // namespace

static std::string nowUTC() {
  std::time_t T = std::time(nullptr);
  std::tm TM;
  gmtime_r(&T, &TM);
  char Buf[32];
  std::strftime(Buf, sizeof(Buf), "%Y-%m-%dT%H:%M:%SZ", &TM);
  return Buf;
}

static std::string toJSON(ArrayRef<std::string> L) {
  return json(std::vector<std::string>(L.begin(), L.end())).dump();
}

static std::string toJSON(ArrayRef<InputFile> Inputs) {
  json A = json::array();
  for (const InputFile &F : Inputs) {
    json O = {{"path", F.Path}, {"hash", F.Hash}, {"main", F.Main}};
    if (F.Virtual)
      O["virtual"] = true;
    A.push_back(std::move(O));
  }
  return A.dump(-1, ' ', false, json::error_handler_t::replace);
}

Error Database::failure(StringRef What) const {
  int Code = Handle ? sqlite3_errcode(Handle) : SQLITE_ERROR;
  std::string Msg = Handle ? sqlite3_errmsg(Handle) : "cannot open";
  if (Code == SQLITE_NOTADB)
    return createStringError(
        "'%s' is not a clang-optiml database (it is not an SQLite file); it "
        "was left as it is: move it away, or name another file with --db",
        Path.c_str());
  if (Code == SQLITE_CORRUPT)
    return createStringError(
        "the database '%s' is damaged (%s); it was left as it is: move it "
        "away (a new one is then started), or name another file with --db",
        Path.c_str(), Msg.c_str());
  return createStringError("database '%s': %s: %s", Path.c_str(),
                           What.str().c_str(), Msg.c_str());
}

Error Database::exec(StringRef SQL) {
  char *Err = nullptr;
  if (sqlite3_exec(Handle, SQL.str().c_str(), nullptr, nullptr, &Err) ==
      SQLITE_OK)
    return Error::success();
  sqlite3_free(Err);
  return failure(SQL.take_until([](char C) { return C == ' '; }).lower());
}

Database::~Database() { sqlite3_close_v2(Handle); }

Expected<std::unique_ptr<Database>> Database::open(StringRef P, Mode M,
                                                   unsigned UpToVersion) {
  std::unique_ptr<Database> D(new Database);
  D->Path = P.str();
  bool Writing = M == Mode::ReadWrite;
  if (!Writing && !sys::fs::exists(P))
    return createStringError(
        "no database at '%s' (optimize records its verified variants there; "
        "--db names another file)",
        D->Path.c_str());
  if (sys::fs::is_directory(P))
    return createStringError("database '%s' is a directory, not a file",
                             D->Path.c_str());
  if (Writing) {
    StringRef Dir = sys::path::parent_path(P);
    if (!Dir.empty())
      if (std::error_code EC = sys::fs::create_directories(Dir))
        return createStringError(EC, "cannot create '%s' for the database: %s",
                                 Dir.str().c_str(), EC.message().c_str());
  }
  int Flags = Writing ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                      : SQLITE_OPEN_READONLY;
  if (sqlite3_open_v2(D->Path.c_str(), &D->Handle, Flags, nullptr) != SQLITE_OK)
    return D->failure("cannot open");
  sqlite3_extended_result_codes(D->Handle, 0);
  sqlite3_busy_timeout(D->Handle, BusyTimeoutMs);

  // Whose file is it? Reading the header is what tells a non-SQLite file.
  auto Pragma = [&](StringRef SQL) -> Expected<int64_t> {
    Statement S(D->Handle, SQL);
    if (!S.ok() || S.step() != SQLITE_ROW)
      return D->failure("cannot read it");
    return S.integer(0);
  };
  auto Tables = Pragma("SELECT count(*) FROM sqlite_schema");
  if (!Tables)
    return Tables.takeError();
  auto AppId = Pragma("PRAGMA application_id");
  if (!AppId)
    return AppId.takeError();
  auto Version = Pragma("PRAGMA user_version");
  if (!Version)
    return Version.takeError();
  if ((*AppId != 0 && *AppId != ApplicationId) || (*AppId == 0 && *Tables > 0))
    return createStringError(
        "'%s' is an SQLite database of another program, not a clang-optiml "
        "database; it was left as it is: name another file with --db",
        D->Path.c_str());
  if (*Version > SchemaVersion)
    return createStringError(
        "the database '%s' has schema version %d, written by a newer "
        "clang-optiml (this one reads up to version %u); it was left as it "
        "is: use the newer clang-optiml, or name another file with --db",
        D->Path.c_str(), int(*Version), SchemaVersion);
  D->Version = unsigned(*Version);
  if (!Writing)
    return std::move(D);

  // Persistent in the file; a no-op once set. Switching needs the file to
  // itself, which SQLite does not wait for: retry while another connection
  // is in the middle of its first write.
  auto Deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(BusyTimeoutMs);
  for (;;) {
    Statement S(D->Handle, "PRAGMA journal_mode=WAL");
    int RC = S.ok() ? S.step() : SQLITE_ERROR;
    if (RC == SQLITE_ROW) {
      if (StringRef(S.text(0)) != "wal")
        return createStringError(
            "database '%s': cannot turn on write-ahead logging (the file "
            "system may not support it: %s)",
            D->Path.c_str(), S.text(0).c_str());
      break;
    }
    if (RC != SQLITE_BUSY && RC != SQLITE_LOCKED)
      return D->failure("cannot turn on write-ahead logging");
    if (std::chrono::steady_clock::now() > Deadline)
      return D->failure("another process holds it");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (Error E = D->exec("PRAGMA synchronous=NORMAL"))
    return std::move(E);
  if (D->Version < UpToVersion)
    if (Error E = D->migrate(UpToVersion))
      return std::move(E);
  return std::move(D);
}

Error Database::migrate(unsigned UpTo) {
  if (Error E = exec("BEGIN IMMEDIATE"))
    return E;
  // Another process may have migrated it since it was opened.
  auto Rollback = [&](Error E) {
    consumeError(exec("ROLLBACK"));
    return E;
  };
  unsigned Now;
  {
    Statement S(Handle, "PRAGMA user_version");
    if (!S.ok() || S.step() != SQLITE_ROW)
      return Rollback(failure("cannot read its version"));
    Now = unsigned(S.integer(0));
  }
  for (unsigned V = Now; V < UpTo; ++V)
    if (Error E = exec(Migrations[V]))
      return Rollback(createStringError(
          "database '%s': migrating it from schema version %u to %u failed "
          "(it was left at version %u): %s",
          Path.c_str(), V, V + 1, Now, toString(std::move(E)).c_str()));
  if (Now < UpTo) {
    if (Error E = exec(formatv("PRAGMA application_id={0};"
                               "PRAGMA user_version={1}",
                               ApplicationId, UpTo)
                           .str()))
      return Rollback(std::move(E));
  }
  if (Error E = exec("COMMIT"))
    return Rollback(std::move(E));
  Version = std::max(Now, UpTo);
  return Error::success();
}

Expected<RecordResult> Database::record(VariantRecord R) {
  if (Version < 1)
    return createStringError("database '%s' has no schema yet", Path.c_str());
  if (R.Key.empty())
    R.Key = R.Id.digest();
  if (R.Date.empty())
    R.Date = nowUTC();
  if (Error E = exec("BEGIN IMMEDIATE"))
    return std::move(E);
  auto Rollback = [&](Error E) {
    consumeError(exec("ROLLBACK"));
    return E;
  };
  RecordResult Result = RecordResult::Inserted;
  {
    Statement S(Handle, "SELECT speedup FROM variants WHERE key = ?1");
    if (!S.ok())
      return Rollback(failure("cannot read"));
    S.bind(1, R.Key);
    int RC = S.step();
    if (RC == SQLITE_ROW) {
      if (S.real(0) >= R.Speedup) {
        if (Error E = exec("COMMIT"))
          return Rollback(std::move(E));
        return RecordResult::KeptExisting;
      }
      Result = RecordResult::Replaced;
    } else if (RC != SQLITE_DONE) {
      return Rollback(failure("cannot read"));
    }
  }
  bool HasVariantFlags = Version >= 2;
  std::string SQL =
      "INSERT OR REPLACE INTO variants (key, inputs_digest, kernels, "
      "gpu_name, gpu_arch, nvcc_version, nvcc_flags, file, inputs, source, "
      "diff, speedup, verification, tool_version, created";
  SQL += HasVariantFlags ? ", variant_flags) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                           "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
                         : ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                           "?10, ?11, ?12, ?13, ?14, ?15)";
  Statement S(Handle, SQL);
  if (!S.ok())
    return Rollback(failure("cannot write"));
  S.bind(1, R.Key);
  S.bind(2, R.Id.InputsDigest);
  std::string Kernels = toJSON(R.Id.Kernels), Flags = toJSON(R.Id.NvccFlags),
              Inputs = toJSON(R.Inputs), VFlags = toJSON(R.VariantFlags);
  S.bind(3, Kernels);
  S.bind(4, R.Id.GpuName);
  S.bind(5, R.Id.GpuArch);
  S.bind(6, R.Id.NvccVersion);
  S.bind(7, Flags);
  S.bind(8, R.File);
  S.bind(9, Inputs);
  S.bind(10, R.Source);
  S.bind(11, R.Diff);
  S.bind(12, R.Speedup);
  S.bind(13, R.Verification);
  S.bind(14, R.ToolVersion);
  S.bind(15, R.Date);
  if (HasVariantFlags)
    S.bind(16, VFlags);
  if (S.step() != SQLITE_DONE)
    return Rollback(failure("cannot write"));
  if (Error E = exec("COMMIT"))
    return Rollback(std::move(E));
  return Result;
}

/// A JSON column read back; a value that does not parse is an error naming
/// the row (the file was edited by hand or damaged).
template <typename T>
static Expected<T> column(const std::string &Text, StringRef Column,
                          StringRef Key, StringRef Path) {
  try {
    return json::parse(Text).get<T>();
  } catch (const json::exception &E) {
    return createStringError("database '%s': row %s: column %s does not "
                             "parse: %s",
                             Path.str().c_str(), Key.str().c_str(),
                             Column.str().c_str(), E.what());
  }
}

static Expected<std::vector<InputFile>>
inputsColumn(const std::string &Text, StringRef Key, StringRef Path) {
  std::vector<InputFile> Files;
  try {
    for (const json &F : json::parse(Text)) {
      InputFile I;
      I.Path = F.at("path").get<std::string>();
      I.Hash = F.at("hash").get<std::string>();
      I.Main = F.at("main").get<bool>();
      I.Virtual = F.value("virtual", false);
      Files.push_back(std::move(I));
    }
  } catch (const json::exception &E) {
    return createStringError("database '%s': row %s: column inputs does not "
                             "parse: %s",
                             Path.str().c_str(), Key.str().c_str(), E.what());
  }
  return Files;
}

Expected<std::vector<VariantRecord>> Database::select(StringRef Where,
                                                      StringRef Arg) {
  std::vector<VariantRecord> Rows;
  if (Version < 1)
    return Rows;
  std::string SQL =
      "SELECT key, inputs_digest, kernels, gpu_name, gpu_arch, "
      "nvcc_version, nvcc_flags, file, inputs, source, diff, speedup, "
      "verification, tool_version, created, ";
  // A version 1 file opened read-only is read as it is.
  SQL += Version >= 2 ? "variant_flags" : "'[]'";
  SQL += " FROM variants " + Where.str() + " ORDER BY created DESC, key";
  Statement S(Handle, SQL);
  if (!S.ok())
    return failure("cannot read");
  if (!Arg.empty())
    S.bind(1, Arg);
  int RC;
  while ((RC = S.step()) == SQLITE_ROW) {
    VariantRecord R;
    R.Key = S.text(0);
    R.Id.InputsDigest = S.text(1);
    auto K =
        column<std::vector<std::string>>(S.text(2), "kernels", R.Key, Path);
    if (!K)
      return K.takeError();
    R.Id.Kernels = std::move(*K);
    R.Id.GpuName = S.text(3);
    R.Id.GpuArch = S.text(4);
    R.Id.NvccVersion = S.text(5);
    auto F =
        column<std::vector<std::string>>(S.text(6), "nvcc_flags", R.Key, Path);
    if (!F)
      return F.takeError();
    R.Id.NvccFlags = std::move(*F);
    R.File = S.text(7);
    auto In = inputsColumn(S.text(8), R.Key, Path);
    if (!In)
      return In.takeError();
    R.Inputs = std::move(*In);
    R.Source = S.text(9);
    R.Diff = S.text(10);
    R.Speedup = S.real(11);
    R.Verification = S.text(12);
    R.ToolVersion = S.text(13);
    R.Date = S.text(14);
    auto VF = column<std::vector<std::string>>(S.text(15), "variant_flags",
                                               R.Key, Path);
    if (!VF)
      return VF.takeError();
    R.VariantFlags = std::move(*VF);
    Rows.push_back(std::move(R));
  }
  if (RC != SQLITE_DONE)
    return failure("cannot read");
  return Rows;
}

Expected<std::optional<VariantRecord>> Database::lookup(const VariantKey &K) {
  auto Rows = select("WHERE key = ?1", K.digest());
  if (!Rows)
    return Rows.takeError();
  for (VariantRecord &R : *Rows) {
    // The digest matched; the parts must too, and the files on disk must
    // still be what was measured.
    std::vector<std::string> A = R.Id.Kernels, B = K.Kernels;
    std::sort(A.begin(), A.end());
    std::sort(B.begin(), B.end());
    if (R.Id.InputsDigest != K.InputsDigest || A != B ||
        R.Id.GpuName != K.GpuName || R.Id.GpuArch != K.GpuArch ||
        R.Id.NvccVersion != K.NvccVersion || R.Id.NvccFlags != K.NvccFlags)
      continue;
    if (!staleReason(R.Inputs).empty())
      continue;
    return std::optional<VariantRecord>(std::move(R));
  }
  return std::optional<VariantRecord>();
}

Expected<std::vector<VariantRecord>> Database::all() { return select("", ""); }

Expected<VariantRecord> Database::find(StringRef Prefix) {
  std::string P = Prefix.lower();
  if (P.size() < 4 || P.size() > 64 ||
      P.find_first_not_of("0123456789abcdef") != std::string::npos)
    return createStringError("'%s' is not a key prefix: give at least 4 of "
                             "the hexadecimal digits 'db list' shows",
                             Prefix.str().c_str());
  auto Rows = select("WHERE substr(key, 1, length(?1)) = ?1", P);
  if (!Rows)
    return Rows.takeError();
  if (Rows->empty())
    return createStringError("no variant in '%s' has a key starting with "
                             "'%s' (see 'clang-optiml db list')",
                             Path.c_str(), P.c_str());
  if (Rows->size() > 1) {
    std::vector<std::string> Keys;
    for (const VariantRecord &R : *Rows)
      Keys.push_back(R.Key.substr(0, 12));
    return createStringError("key prefix '%s' is ambiguous in '%s': %s; give "
                             "more digits",
                             P.c_str(), Path.c_str(), join(Keys, ", ").c_str());
  }
  return std::move(Rows->front());
}

Expected<unsigned> Database::remove(ArrayRef<std::string> Keys) {
  if (Keys.empty() || Version < 1)
    return 0u;
  if (Error E = exec("BEGIN IMMEDIATE"))
    return std::move(E);
  unsigned Removed = 0;
  for (const std::string &K : Keys) {
    Statement S(Handle, "DELETE FROM variants WHERE key = ?1");
    if (!S.ok()) {
      Error E = failure("cannot remove");
      consumeError(exec("ROLLBACK"));
      return std::move(E);
    }
    S.bind(1, K);
    if (S.step() != SQLITE_DONE) {
      Error E = failure("cannot remove");
      consumeError(exec("ROLLBACK"));
      return std::move(E);
    }
    Removed += sqlite3_changes(Handle);
  }
  if (Error E = exec("COMMIT")) {
    consumeError(exec("ROLLBACK"));
    return std::move(E);
  }
  return Removed;
}

} // namespace db
} // namespace optiml
