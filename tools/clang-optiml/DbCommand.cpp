//===- DbCommand.cpp - clang-optiml db ------------------------------------===//
//
// The project's database of tuned variants (docs/db.md): list, show,
// export and prune its rows; and the recording of optimize's verified best.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "optiml/Db/Database.h"
#include "optiml/Eval/Runner.h"
#include "optiml/Support/FileUtil.h"
#include "clang/Frontend/ASTUnit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include <ctime>

using namespace llvm;
using namespace optiml::db;

namespace optiml {
namespace tool {

cl::SubCommand DbCommand(
    "db",
    "The project's database of tuned variants: optimize records each "
    "verified faster variant there, keyed by the content of every file its "
    "translation unit reads, the kernels, the GPU, nvcc's version and flags; "
    "a variant is served only on an exact key match.\n\n"
    "  clang-optiml db list [--json]           every variant: key, speedup, "
    "GPU, date, kernels, file\n"
    "  clang-optiml db show KEY [--json]       one variant in full, with its "
    "diff\n"
    "  clang-optiml db export KEY -o FILE      write the variant's source "
    "(-o -: to stdout)\n"
    "  clang-optiml db prune --stale           remove variants whose files "
    "have changed since\n"
    "  clang-optiml db prune --older-than 30   remove variants recorded more "
    "than 30 days ago\n"
    "  clang-optiml db prune --all             remove every variant\n\n"
    "KEY is the start of a key (at least 4 hex digits) as 'db list' shows "
    "it. The database is --db FILE, else \"db\": {\"path\": ...} in the "
    "project's .clang-optiml.json, else <build-dir>/clang-optiml.db with "
    "-p, else .optiml/clang-optiml.db in the current directory (docs/db.md).\n"
    "\nExit status: 0 success, 1 error (no such key, a damaged database), 2 "
    "usage error\n");

static cl::OptionCategory DbCategory("db options");

static cl::list<std::string> Words(cl::Positional,
                                   cl::desc("list | show KEY | export KEY | "
                                            "prune"),
                                   cl::sub(DbCommand), cl::cat(DbCategory));
static cl::opt<std::string> DbFile("db",
                                   cl::desc("The database file (default: see "
                                            "above)"),
                                   cl::value_desc("file"), cl::sub(DbCommand),
                                   cl::cat(DbCategory));
static cl::opt<bool> Json("json", cl::desc("list, show: print JSON"),
                          cl::sub(DbCommand), cl::cat(DbCategory));
static cl::opt<std::string> Output("o",
                                   cl::desc("export: write the variant here "
                                            "(- for stdout)"),
                                   cl::value_desc("file"), cl::sub(DbCommand),
                                   cl::cat(DbCategory));
static cl::opt<unsigned>
    OlderThan("older-than",
              cl::desc("prune: variants recorded more than this many days ago"),
              cl::value_desc("days"), cl::sub(DbCommand), cl::cat(DbCategory));
static cl::opt<bool> Stale("stale",
                           cl::desc("prune: variants a file of whose "
                                    "translation unit is missing or has "
                                    "changed (their key can never match "
                                    "again)"),
                           cl::sub(DbCommand), cl::cat(DbCategory));
static cl::opt<bool> All("all", cl::desc("prune: every variant"),
                         cl::sub(DbCommand), cl::cat(DbCategory));

/// Staleness of many rows, each file hashed once.
class StaleCheck {
public:
  std::string reason(const VariantRecord &R) {
    if (R.Inputs.empty())
      return "no input files were recorded";
    for (const InputFile &F : R.Inputs) {
      if (F.Virtual)
        continue;
      auto It = Hashes.find(F.Path);
      if (It == Hashes.end()) {
        auto Text = readFile(F.Path);
        std::string H;
        if (Text)
          H = hashContent(*Text);
        else
          consumeError(Text.takeError());
        It = Hashes.try_emplace(F.Path, H).first;
      }
      if (It->second.empty())
        return "'" + F.Path + "' cannot be read";
      if (It->second != F.Hash)
        return "'" + F.Path + "' has changed";
    }
    return "";
  }

private:
  StringMap<std::string> Hashes;
};

static std::string kernelsOf(const VariantRecord &R) {
  return join(R.Id.Kernels, ", ");
}

/// The last line of `nvcc --version` ("Build cuda_13.0.r13.0/...") says
/// less than the one before it ("Cuda compilation tools, release 13.0,
/// V13.0.88"): that one.
static std::string nvccRelease(StringRef Version) {
  SmallVector<StringRef, 8> Lines;
  Version.split(Lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef L : Lines)
    if (L.contains("release"))
      return L.trim().str();
  return Lines.empty() ? "" : Lines.back().trim().str();
}

static Expected<std::string> dbPath(const CommandContext &Ctx) {
  return databasePath(DbFile, ".", commonAnalyzeOptions(Ctx).BuildDir, "");
}

static json::Object summaryJSON(const VariantRecord &R, StringRef Stale) {
  json::Array Kernels;
  for (const std::string &K : R.Id.Kernels)
    Kernels.push_back(K);
  return json::Object{{"key", R.Key},         {"kernels", std::move(Kernels)},
                      {"file", R.File},       {"gpu", R.Id.GpuName},
                      {"arch", R.Id.GpuArch}, {"speedup", R.Speedup},
                      {"date", R.Date},       {"stale", !Stale.empty()},
                      {"stale_reason", Stale}};
}

static int list(Database *DB, StringRef Path) {
  std::vector<VariantRecord> Rows;
  if (DB) {
    auto R = DB->all();
    if (!R)
      return reportError(R.takeError());
    Rows = std::move(*R);
  }
  StaleCheck Check;
  if (Json) {
    json::Array A;
    for (const VariantRecord &R : Rows)
      A.push_back(summaryJSON(R, Check.reason(R)));
    outs() << formatv("{0:2}", json::Value(std::move(A))) << "\n";
    return ExitSuccess;
  }
  if (Rows.empty()) {
    outs() << "no variants recorded in " << Path
           << (DB ? "" : " (there is no database yet)") << "\n";
    return ExitSuccess;
  }
  outs() << formatv("{0,-12}  {1,-7}  {2,-24}  {3,-20}  {4}\n", "KEY",
                    "SPEEDUP", "GPU", "DATE", "KERNELS  FILE");
  unsigned NumStale = 0;
  for (const VariantRecord &R : Rows) {
    std::string Why = Check.reason(R);
    NumStale += !Why.empty();
    outs() << formatv("{0,-12}  {1,-7}  {2,-24}  {3,-20}  {4}  {5}{6}\n",
                      R.Key.substr(0, 12), formatv("{0:F2}x", R.Speedup),
                      R.Id.GpuName + " " + R.Id.GpuArch, R.Date, kernelsOf(R),
                      R.File, Why.empty() ? "" : "  (stale)");
  }
  outs() << Rows.size() << " variant" << (Rows.size() == 1 ? "" : "s") << " in "
         << Path;
  if (NumStale)
    outs() << "; " << NumStale << " stale (a file changed since: never "
           << "served; 'db prune --stale' removes them)";
  outs() << "\n";
  return ExitSuccess;
}

static int show(Database &DB, StringRef Prefix) {
  auto R = DB.find(Prefix);
  if (!R)
    return reportError(R.takeError());
  StaleCheck Check;
  std::string Why = Check.reason(*R);
  if (Json) {
    json::Object O = summaryJSON(*R, Why);
    json::Array Flags, VFlags, Inputs;
    for (const std::string &F : R->Id.NvccFlags)
      Flags.push_back(F);
    for (const std::string &F : R->VariantFlags)
      VFlags.push_back(F);
    for (const InputFile &F : R->Inputs)
      Inputs.push_back(json::Object{{"path", F.Path},
                                    {"hash", F.Hash},
                                    {"main", F.Main},
                                    {"virtual", F.Virtual}});
    O["inputs_digest"] = R->Id.InputsDigest;
    O["nvcc_version"] = R->Id.NvccVersion;
    O["nvcc_flags"] = std::move(Flags);
    O["variant_flags"] = std::move(VFlags);
    O["tool_version"] = R->ToolVersion;
    O["inputs"] = std::move(Inputs);
    auto V = json::parse(R->Verification);
    if (V) {
      O["verification"] = std::move(*V);
    } else {
      consumeError(V.takeError());
      O["verification"] = R->Verification;
    }
    O["diff"] = R->Diff;
    O["source"] = R->Source;
    outs() << formatv("{0:2}", json::Value(std::move(O))) << "\n";
    return ExitSuccess;
  }
  size_t Included = R->Inputs.size() - (R->Inputs.empty() ? 0 : 1);
  outs() << "key:           " << R->Key << "\n"
         << "file:          " << R->File << "\n"
         << "kernels:       " << kernelsOf(*R) << "\n"
         << "speedup:       " << formatv("{0:F2}x", R->Speedup) << "\n"
         << "gpu:           " << R->Id.GpuName << " (" << R->Id.GpuArch << ")\n"
         << "nvcc:          " << nvccRelease(R->Id.NvccVersion) << "\n"
         << "nvcc flags:    " << join(R->Id.NvccFlags, " ") << "\n";
  if (!R->VariantFlags.empty())
    outs() << "variant flags: " << join(R->VariantFlags, " ") << "\n";
  outs() << "recorded:      " << R->Date << " by clang-optiml "
         << R->ToolVersion << "\n"
         << "inputs:        the main file and " << Included << " file"
         << (Included == 1 ? "" : "s") << " it includes; "
         << (Why.empty() ? "unchanged since"
                         : "stale: " + Why + " (never served)")
         << "\n";
  outs() << "verification:\n";
  auto V = json::parse(R->Verification);
  if (V) {
    std::string Text = formatv("{0:2}", *V).str();
    SmallVector<StringRef, 32> Lines;
    StringRef(Text).split(Lines, '\n');
    for (StringRef L : Lines)
      outs() << "  " << L << "\n";
  } else {
    consumeError(V.takeError());
    outs() << "  " << R->Verification << "\n";
  }
  outs() << "diff:\n" << R->Diff;
  if (!StringRef(R->Diff).ends_with("\n"))
    outs() << "\n";
  return ExitSuccess;
}

static int exportVariant(Database &DB, StringRef Prefix) {
  auto R = DB.find(Prefix);
  if (!R)
    return reportError(R.takeError());
  if (Output == "-") {
    outs() << R->Source;
    return ExitSuccess;
  }
  std::string Dest = absolutePath(Output);
  if (Error E = checkOutputFile(Dest))
    return reportError(std::move(E));
  if (Error E = writeFileAtomically(Dest, R->Source))
    return reportError(std::move(E));
  outs() << "wrote " << Output << " (variant " << R->Key.substr(0, 12) << " of "
         << R->File << ", " << formatv("{0:F2}x", R->Speedup) << ")\n";
  if (!R->VariantFlags.empty())
    outs() << "note: build it with the extra nvcc flags "
           << join(R->VariantFlags, " ") << "\n";
  return ExitSuccess;
}

/// Seconds since the epoch of "2026-01-31T12:00:00Z"; 0 if it is not one.
static std::time_t parseDate(StringRef D) {
  std::tm TM = {};
  if (!strptime(D.str().c_str(), "%Y-%m-%dT%H:%M:%SZ", &TM))
    return 0;
  return timegm(&TM);
}

static int prune(Database &DB) {
  auto Rows = DB.all();
  if (!Rows)
    return reportError(Rows.takeError());
  std::time_t Now = std::time(nullptr);
  StaleCheck Check;
  std::vector<std::string> Keys;
  std::vector<std::string> Lines;
  for (const VariantRecord &R : *Rows) {
    std::string Why;
    if (All) {
      Why = "--all";
    } else {
      if (OlderThan.getNumOccurrences()) {
        std::time_t T = parseDate(R.Date);
        if (T && Now - T > std::time_t(OlderThan) * 86400)
          Why = "recorded " + R.Date;
      }
      if (Why.empty() && Stale) {
        std::string S = Check.reason(R);
        if (!S.empty())
          Why = "stale: " + S;
      }
    }
    if (Why.empty())
      continue;
    Keys.push_back(R.Key);
    Lines.push_back(R.Key.substr(0, 12) + "  " + kernelsOf(R) + "  " + R.File +
                    "  (" + Why + ")");
  }
  auto N = DB.remove(Keys);
  if (!N)
    return reportError(N.takeError());
  for (const std::string &L : Lines)
    outs() << "removed " << L << "\n";
  outs() << "removed " << *N << " of " << Rows->size() << " variant"
         << (Rows->size() == 1 ? "" : "s") << " from " << DB.path() << "\n";
  return ExitSuccess;
}

int runDb(const CommandContext &Ctx) {
  if (Words.empty())
    return reportUsageError(createStringError(
        "db needs an action: list, show KEY, export KEY -o FILE or prune "
        "(see 'clang-optiml db --help')"));
  StringRef Action = Words.front();
  size_t Wanted = Action == "show" || Action == "export" ? 2 : 1;
  if (Action != "list" && Action != "show" && Action != "export" &&
      Action != "prune")
    return reportUsageError(createStringError(
        "unknown db action '%s' (expected list, show, export or prune)",
        Words.front().c_str()));
  if (Words.size() != Wanted)
    return reportUsageError(createStringError(
        Wanted == 2 ? "db %s needs one KEY (the start of a key 'db list' "
                      "shows)"
                    : "db %s takes no other argument",
        Words.front().c_str()));
  if (Json && Action != "list" && Action != "show")
    return reportUsageError(createStringError("--json applies to db list and "
                                              "db show"));
  if (!Output.empty() && Action != "export")
    return reportUsageError(createStringError("-o applies to db export"));
  if (Output.empty() && Action == "export")
    return reportUsageError(
        createStringError("db export needs -o FILE (or -o - for stdout)"));
  bool PruneOpts = OlderThan.getNumOccurrences() || Stale || All;
  if (PruneOpts && Action != "prune")
    return reportUsageError(
        createStringError("--older-than, --stale and --all apply to db prune"));
  if (Action == "prune" && !PruneOpts)
    return reportUsageError(createStringError(
        "db prune needs --stale, --older-than DAYS or --all: which variants "
        "to remove"));
  if (Action == "prune" && All && (Stale || OlderThan.getNumOccurrences()))
    return reportUsageError(createStringError(
        "--all removes every variant; it takes no --stale or --older-than"));

  auto Path = dbPath(Ctx);
  if (!Path)
    return reportError(Path.takeError());
  if (Action == "list" && !sys::fs::exists(*Path))
    return list(nullptr, *Path);
  // Reading never creates or migrates the file; pruning writes it, but
  // never creates one.
  bool Writes = Action == "prune";
  if (Writes && !sys::fs::exists(*Path))
    return reportError(createStringError(
        "no database at '%s' (--db names another file)", Path->c_str()));
  auto DB = Database::open(*Path, Writes ? Database::Mode::ReadWrite
                                         : Database::Mode::ReadOnly);
  if (!DB)
    return reportError(DB.takeError());
  if (Action == "list")
    return list(DB->get(), *Path);
  if (Action == "show")
    return show(**DB, Words[1]);
  if (Action == "export")
    return exportVariant(**DB, Words[1]);
  return prune(**DB);
}

Expected<std::unique_ptr<Database>> openVariantDatabase(StringRef Explicit,
                                                        StringRef SourcePath,
                                                        StringRef BuildDir) {
  auto Path =
      databasePath(Explicit, sys::path::parent_path(SourcePath), BuildDir, "");
  if (!Path)
    return Path.takeError();
  auto DB = Database::open(*Path);
  if (!DB)
    return createStringError(toString(DB.takeError()) +
                             " (--no-db optimizes without recording)");
  return DB;
}

void recordVariant(Database &DB, const VariantToRecord &V) {
  VariantRecord R;
  R.Inputs = translationUnitInputs(V.TU->AST->getSourceManager(), V.Original);
  R.Id.InputsDigest = inputsDigest(R.Inputs);
  R.Id.Kernels = V.Kernels;
  R.Id.GpuName = V.Gpu->Name;
  R.Id.GpuArch = V.Gpu->Arch;
  R.Id.NvccVersion = V.NvccVersion.str();
  R.Id.NvccFlags = V.NvccFlags;
  R.File = V.File.str();
  R.Source = V.Source.str();
  R.Diff = V.Diff.str();
  R.Speedup = V.Speedup;
  R.Verification = V.Verification.str();
  R.VariantFlags = V.VariantFlags;
  R.ToolVersion = CLANG_OPTIML_VERSION;
  R.Key = R.Id.digest();
  auto Done = DB.record(R);
  if (!Done) {
    WithColor::warning(errs(), "clang-optiml")
        << "the variant was not recorded: " << toString(Done.takeError())
        << "\n";
    return;
  }
  std::string Key = R.Key.substr(0, 12);
  switch (*Done) {
  case RecordResult::Inserted:
    outs() << "recorded in the database: " << Key << " (" << DB.path() << ")\n";
    break;
  case RecordResult::Replaced:
    outs() << "recorded in the database: " << Key
           << ", replacing a slower variant (" << DB.path() << ")\n";
    break;
  case RecordResult::KeptExisting:
    outs() << "the database keeps the variant already recorded under " << Key
           << ", at least as fast (" << DB.path() << ")\n";
    break;
  }
}

} // namespace tool
} // namespace optiml
