//===- DatabaseTest.cpp - The database of tuned variants ------------------===//

#include "optiml/Db/Database.h"
#include "DbTestUtil.h"
#include "optiml/Support/FileUtil.h"
#include "gtest/gtest.h"
#include <sqlite3.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace llvm;

namespace optiml {
namespace db {
namespace {

/// A record for \p File (written to disk), kernel \p Kernel.
VariantRecord makeRecord(const TempDir &D, StringRef Name, StringRef Kernel,
                         double Speedup = 1.5) {
  std::string File = D.path(Name);
  std::string Text = ("__global__ void " + Kernel + "() {}\n").str();
  if (!sys::fs::exists(File))
    writeText(File, Text);
  VariantRecord R;
  R.Inputs = {{File, hashContent(*readFile(File)), true}};
  R.Id.InputsDigest = inputsDigest(R.Inputs);
  R.Id.Kernels = {Kernel.str()};
  R.Id.GpuName = "NVIDIA H200";
  R.Id.GpuArch = "sm_90";
  R.Id.NvccVersion = "release 13.0";
  R.Id.NvccFlags = {"-O3"};
  R.File = File;
  R.Source = Text + "// faster\n";
  R.Diff = "--- a\n+++ b\n";
  R.Speedup = Speedup;
  R.Verification = "{\"final\": {\"verified\": true}}";
  R.ToolVersion = "0.1.0";
  return R;
}

std::unique_ptr<Database>
openOrFail(StringRef Path, Database::Mode M = Database::Mode::ReadWrite,
           unsigned UpTo = Database::SchemaVersion) {
  auto DB = Database::open(Path, M, UpTo);
  if (!DB) {
    ADD_FAILURE() << toString(DB.takeError());
    return nullptr;
  }
  return std::move(*DB);
}

std::string openError(StringRef Path,
                      Database::Mode M = Database::Mode::ReadWrite) {
  auto DB = Database::open(Path, M);
  if (DB)
    return "";
  return toString(DB.takeError());
}

TEST(DatabaseTest, RecordsAndServesOnExactKey) {
  TempDir D;
  auto DB = openOrFail(D.path("sub/dir/v.db"));
  ASSERT_TRUE(DB);
  EXPECT_EQ(DB->version(), Database::SchemaVersion);
  VariantRecord R = makeRecord(D, "a.cu", "scale");
  R.VariantFlags = {"-maxrregcount=64"};
  auto Res = DB->record(R);
  ASSERT_TRUE(bool(Res)) << toString(Res.takeError());
  EXPECT_EQ(*Res, RecordResult::Inserted);

  auto Got = DB->lookup(R.Id);
  ASSERT_TRUE(bool(Got)) << toString(Got.takeError());
  ASSERT_TRUE(Got->has_value());
  const VariantRecord &G = **Got;
  EXPECT_EQ(G.Key, R.Id.digest());
  EXPECT_EQ(G.Source, R.Source);
  EXPECT_EQ(G.Diff, R.Diff);
  EXPECT_EQ(G.Speedup, 1.5);
  EXPECT_EQ(G.Verification, R.Verification);
  EXPECT_EQ(G.VariantFlags, R.VariantFlags);
  EXPECT_EQ(G.Inputs.size(), 1u);
  EXPECT_EQ(G.Date.size(), 20u) << G.Date;

  // Any other part: nothing.
  for (auto Change : std::vector<std::function<void(VariantKey &)>>{
           [](VariantKey &K) { K.GpuName = "NVIDIA A100"; },
           [](VariantKey &K) { K.GpuArch = "sm_80"; },
           [](VariantKey &K) { K.NvccFlags.push_back("-G"); },
           [](VariantKey &K) { K.NvccVersion = "release 12.9"; },
           [](VariantKey &K) { K.Kernels = {"other"}; }}) {
    VariantKey K = R.Id;
    Change(K);
    auto None = DB->lookup(K);
    ASSERT_TRUE(bool(None));
    EXPECT_FALSE(None->has_value());
  }
}

TEST(DatabaseTest, StaleKeyIsNeverServed) {
  TempDir D;
  auto DB = openOrFail(D.path("v.db"));
  ASSERT_TRUE(DB);
  VariantRecord R = makeRecord(D, "a.cu", "scale");
  ASSERT_TRUE(bool(DB->record(R)));
  // The file changes: its new key has no row, and the old key, asked for
  // directly, is not served either (the recorded inputs no longer hash).
  writeText(R.File, "__global__ void scale() { /* edited */ }\n");
  VariantKey Fresh = R.Id;
  Fresh.InputsDigest =
      inputsDigest({{R.File, hashContent(*readFile(R.File)), true}});
  EXPECT_NE(Fresh.digest(), R.Id.digest());
  auto A = DB->lookup(Fresh);
  ASSERT_TRUE(bool(A));
  EXPECT_FALSE(A->has_value());
  auto B = DB->lookup(R.Id);
  ASSERT_TRUE(bool(B));
  EXPECT_FALSE(B->has_value());
  // Still listed (prune --stale removes it).
  auto All = DB->all();
  ASSERT_TRUE(bool(All));
  ASSERT_EQ(All->size(), 1u);
  EXPECT_NE(staleReason(All->front().Inputs), "");
  // Restored: served again.
  writeText(R.File, "__global__ void scale() {}\n");
  auto C = DB->lookup(R.Id);
  ASSERT_TRUE(bool(C));
  EXPECT_TRUE(C->has_value());
}

TEST(DatabaseTest, KeepsTheFasterVariantOfAKey) {
  TempDir D;
  auto DB = openOrFail(D.path("v.db"));
  ASSERT_TRUE(DB);
  ASSERT_EQ(*DB->record(makeRecord(D, "a.cu", "k", 1.5)),
            RecordResult::Inserted);
  ASSERT_EQ(*DB->record(makeRecord(D, "a.cu", "k", 1.2)),
            RecordResult::KeptExisting);
  EXPECT_EQ((*DB->all())[0].Speedup, 1.5);
  ASSERT_EQ(*DB->record(makeRecord(D, "a.cu", "k", 2.0)),
            RecordResult::Replaced);
  EXPECT_EQ((*DB->all())[0].Speedup, 2.0);
  EXPECT_EQ(DB->all()->size(), 1u);
}

TEST(DatabaseTest, FindsByKeyPrefix) {
  TempDir D;
  auto DB = openOrFail(D.path("v.db"));
  ASSERT_TRUE(DB);
  VariantRecord R = makeRecord(D, "a.cu", "k");
  ASSERT_TRUE(bool(DB->record(R)));
  std::string Key = R.Id.digest();
  auto F = DB->find(StringRef(Key).take_front(6).upper());
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  EXPECT_EQ(F->Key, Key);
  auto Short = DB->find(Key.substr(0, 3));
  ASSERT_FALSE(bool(Short));
  EXPECT_NE(toString(Short.takeError()).find("at least 4"), std::string::npos);
  std::string Other = Key[0] == '0' ? "1111" : "0000";
  auto Missing = DB->find(Other);
  ASSERT_FALSE(bool(Missing));
  EXPECT_NE(toString(Missing.takeError()).find("no variant in"),
            std::string::npos);
  auto N = DB->remove({Key});
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 1u);
  EXPECT_TRUE(DB->all()->empty());
}

TEST(DatabaseTest, MigratesAnOlderSchemaKeepingItsRows) {
  TempDir D;
  std::string Path = D.path("v.db");
  VariantRecord R = makeRecord(D, "a.cu", "scale");
  {
    // A file as the first schema wrote it.
    auto V1 = openOrFail(Path, Database::Mode::ReadWrite, 1);
    ASSERT_TRUE(V1);
    EXPECT_EQ(V1->version(), 1u);
    ASSERT_TRUE(bool(V1->record(R)));
  }
  {
    // Read-only leaves it at version 1 and reads it as it is.
    auto RO = openOrFail(Path, Database::Mode::ReadOnly);
    ASSERT_TRUE(RO);
    EXPECT_EQ(RO->version(), 1u);
    auto All = RO->all();
    ASSERT_TRUE(bool(All)) << toString(All.takeError());
    ASSERT_EQ(All->size(), 1u);
    EXPECT_TRUE(All->front().VariantFlags.empty());
  }
  auto DB = openOrFail(Path);
  ASSERT_TRUE(DB);
  EXPECT_EQ(DB->version(), 2u);
  auto Got = DB->lookup(R.Id);
  ASSERT_TRUE(bool(Got));
  ASSERT_TRUE(Got->has_value());
  EXPECT_EQ((*Got)->Source, R.Source);
  EXPECT_TRUE((*Got)->VariantFlags.empty());
  // The new column is usable.
  VariantRecord R2 = makeRecord(D, "b.cu", "add");
  R2.VariantFlags = {"-maxrregcount=32"};
  ASSERT_TRUE(bool(DB->record(R2)));
  auto Got2 = DB->lookup(R2.Id);
  ASSERT_TRUE(bool(Got2) && Got2->has_value());
  EXPECT_EQ((*Got2)->VariantFlags, R2.VariantFlags);
  // Opening again migrates nothing.
  DB.reset();
  auto Again = openOrFail(Path);
  ASSERT_TRUE(Again);
  EXPECT_EQ(Again->all()->size(), 2u);
}

TEST(DatabaseTest, ConcurrentThreadsLoseNoRow) {
  TempDir D;
  std::string Path = D.path("v.db");
  constexpr unsigned Threads = 8, Each = 25;
  std::vector<std::string> Errors(Threads);
  std::vector<std::thread> Pool;
  for (unsigned T = 0; T < Threads; ++T)
    Pool.emplace_back([&, T] {
      // Each its own connection, opened at the same time as the others (the
      // first ones race to create and migrate the file).
      auto DB = Database::open(Path);
      if (!DB) {
        Errors[T] = toString(DB.takeError());
        return;
      }
      for (unsigned I = 0; I < Each; ++I) {
        std::string K = "k" + std::to_string(T) + "_" + std::to_string(I);
        auto R =
            (*DB)->record(makeRecord(D, "t" + std::to_string(T) + ".cu", K));
        if (!R) {
          Errors[T] = toString(R.takeError());
          return;
        }
      }
    });
  for (std::thread &T : Pool)
    T.join();
  for (const std::string &E : Errors)
    EXPECT_EQ(E, "");
  auto DB = openOrFail(Path);
  ASSERT_TRUE(DB);
  EXPECT_EQ(DB->all()->size(), size_t(Threads * Each));
}

TEST(DatabaseTest, ConcurrentProcessesLoseNoRow) {
  TempDir D;
  std::string Path = D.path("v.db");
  constexpr unsigned Procs = 6, Each = 30;
  for (unsigned P = 0; P < Procs; ++P)
    writeText(D.path("p" + std::to_string(P) + ".cu"),
              "__global__ void k() {}\n");
  std::vector<pid_t> Children;
  for (unsigned P = 0; P < Procs; ++P) {
    pid_t Pid = fork();
    ASSERT_GE(Pid, 0);
    if (Pid == 0) {
      auto DB = Database::open(Path);
      if (!DB) {
        errs() << toString(DB.takeError()) << "\n";
        _exit(2);
      }
      for (unsigned I = 0; I < Each; ++I) {
        auto R = (*DB)->record(
            makeRecord(D, "p" + std::to_string(P) + ".cu",
                       "k" + std::to_string(P) + "_" + std::to_string(I)));
        if (!R) {
          errs() << toString(R.takeError()) << "\n";
          _exit(3);
        }
      }
      _exit(0);
    }
    Children.push_back(Pid);
  }
  for (pid_t Pid : Children) {
    int Status = 0;
    ASSERT_EQ(waitpid(Pid, &Status, 0), Pid);
    EXPECT_TRUE(WIFEXITED(Status) && WEXITSTATUS(Status) == 0) << Status;
  }
  auto DB = openOrFail(Path);
  ASSERT_TRUE(DB);
  EXPECT_EQ(DB->all()->size(), size_t(Procs * Each));
  // Written with write-ahead logging.
  EXPECT_TRUE(sys::fs::exists(Path + "-wal"));
}

TEST(DatabaseTest, NonSQLiteFileIsReportedAndLeftAlone) {
  TempDir D;
  std::string Path = D.path("clang-optiml.db");
  std::string Junk;
  for (int I = 0; I < 200; ++I)
    Junk += "this is not a database\n";
  writeText(Path, Junk);
  for (auto M : {Database::Mode::ReadWrite, Database::Mode::ReadOnly}) {
    std::string E = openError(Path, M);
    EXPECT_EQ(E, "'" + Path +
                     "' is not a clang-optiml database (it is not an SQLite "
                     "file); it was left as it is: move it away, or name "
                     "another file with --db");
    EXPECT_EQ(*readFile(Path), Junk);
  }
  EXPECT_FALSE(sys::fs::exists(Path + "-wal"));
}

TEST(DatabaseTest, DamagedDatabaseIsReportedAndLeftAlone) {
  TempDir D;
  std::string Path = D.path("v.db");
  {
    auto DB = openOrFail(Path);
    ASSERT_TRUE(DB);
    for (int I = 0; I < 40; ++I)
      ASSERT_TRUE(
          bool(DB->record(makeRecord(D, "a.cu", "k" + std::to_string(I)))));
    ASSERT_TRUE(bool(DB->record(makeRecord(D, "a.cu", "k"))));
  }
  // Checkpointed into the main file on close; now garble every page after
  // the first (the header stays valid).
  auto Text = readFile(Path);
  ASSERT_TRUE(bool(Text));
  ASSERT_GT(Text->size(), 8192u);
  std::string Damaged = *Text;
  for (size_t I = 4096; I < Damaged.size(); ++I)
    Damaged[I] = char(0xA5 ^ (I & 0xFF));
  writeText(Path, Damaged);
  auto DB = Database::open(Path, Database::Mode::ReadOnly);
  std::string E;
  if (!DB) {
    E = toString(DB.takeError());
  } else {
    auto All = (*DB)->all();
    ASSERT_FALSE(bool(All));
    E = toString(All.takeError());
  }
  EXPECT_NE(E.find("'" + Path + "'"), std::string::npos) << E;
  EXPECT_NE(E.find("damaged"), std::string::npos) << E;
  EXPECT_EQ(*readFile(Path), Damaged);
}

/// A file made with SQLite's own API.
void makeSQLite(const std::string &Path, const char *SQL) {
  sqlite3 *H = nullptr;
  ASSERT_EQ(sqlite3_open(Path.c_str(), &H), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(H, SQL, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(H);
}

TEST(DatabaseTest, AnotherProgramsDatabaseIsRefused) {
  TempDir D;
  std::string Path = D.path("other.db");
  makeSQLite(Path, "CREATE TABLE accounts (id INTEGER, owner TEXT);");
  auto Before = readFile(Path);
  std::string E = openError(Path);
  EXPECT_EQ(E, "'" + Path +
                   "' is an SQLite database of another program, not a "
                   "clang-optiml database; it was left as it is: name "
                   "another file with --db");
  EXPECT_EQ(*readFile(Path), *Before);
}

TEST(DatabaseTest, NewerSchemaIsRefused) {
  TempDir D;
  std::string Path = D.path("v.db");
  {
    auto DB = openOrFail(Path);
    ASSERT_TRUE(DB);
  }
  makeSQLite(Path, "PRAGMA user_version=99;");
  std::string E = openError(Path);
  EXPECT_NE(E.find("schema version 99, written by a newer clang-optiml"),
            std::string::npos)
      << E;
}

TEST(DatabaseTest, ReadOnlyNeedsAnExistingFile) {
  TempDir D;
  std::string Path = D.path("none.db");
  EXPECT_EQ(openError(Path, Database::Mode::ReadOnly),
            "no database at '" + Path +
                "' (optimize records its verified variants there; --db "
                "names another file)");
  EXPECT_FALSE(sys::fs::exists(Path));
}

TEST(DatabaseTest, PathFromOptionConfigBuildDirOrRunDirectory) {
  TempDir D;
  sys::fs::create_directories(D.path("proj/.git"));
  sys::fs::create_directories(D.path("proj/src"));
  EXPECT_EQ(*databasePath("x/my.db", "", "", ""), [] {
    SmallString<128> P("x/my.db");
    sys::fs::make_absolute(P);
    return std::string(P);
  }());
  EXPECT_EQ(*databasePath("", D.path("proj/src"), D.path("proj/build"), ""),
            D.path("proj/build/clang-optiml.db"));
  EXPECT_EQ(*databasePath("", D.path("proj/src"), "", D.path("proj/src")),
            D.path("proj/src/.optiml/clang-optiml.db"));
  writeText(D.path("proj/.clang-optiml.json"),
            "{\"db\": {\"path\": \"tuned/variants.db\"}}");
  EXPECT_EQ(*databasePath("", D.path("proj/src"), D.path("proj/build"), ""),
            D.path("proj/tuned/variants.db"));
  // --db wins over the config.
  EXPECT_EQ(*databasePath("/abs/v.db", D.path("proj/src"), "", ""),
            "/abs/v.db");
  writeText(D.path("proj/.clang-optiml.json"), "{\"db\": {\"path\": 3}}");
  auto Bad = databasePath("", D.path("proj/src"), "", "");
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(toString(Bad.takeError()).find(D.path("proj/.clang-optiml.json")),
            std::string::npos);
}

} // namespace
} // namespace db
} // namespace optiml
