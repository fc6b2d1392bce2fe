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
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include <ctime>
#include <nlohmann/json.hpp>

using namespace llvm;
using namespace optiml::db;

namespace optiml {
namespace tool {

using json = nlohmann::json;

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

/// \p S quoted as a JSON string. Only '"', '\\' and control characters are
/// escaped (\t, \n and \r by name, the others as \u00XX); each ill-formed
/// UTF-8 sequence (a database column holds any bytes) becomes U+FFFD.
static void printJSONString(raw_ostream &OS, StringRef S) {
  std::string Fixed;
  const UTF8 *Begin = reinterpret_cast<const UTF8 *>(S.data());
  const UTF8 *Rest = Begin;
  if (!isLegalUTF8String(&Rest, Begin + S.size())) {
    std::vector<UTF32> CodePoints(S.size()); // one per byte suffices
    const UTF8 *In = Begin;
    UTF32 *Out32 = CodePoints.data();
    ConvertUTF8toUTF32(&In, Begin + S.size(), &Out32, Out32 + CodePoints.size(),
                       lenientConversion);
    Fixed.resize(4 * size_t(Out32 - CodePoints.data()));
    const UTF32 *In32 = CodePoints.data();
    UTF8 *Out8 = reinterpret_cast<UTF8 *>(Fixed.data());
    ConvertUTF32toUTF8(&In32, Out32, &Out8, Out8 + Fixed.size(),
                       strictConversion);
    Fixed.resize(reinterpret_cast<char *>(Out8) - Fixed.data());
    S = Fixed;
  }
  OS << '"';
  for (unsigned char C : S) {
    if (C == '"' || C == '\\')
      OS << '\\' << C;
    else if (C >= 0x20)
      OS << C;
    else if (C == '\t')
      OS << "\\t";
    else if (C == '\n')
      OS << "\\n";
    else if (C == '\r')
      OS << "\\r";
    else
      OS << "\\u" << format_hex_no_prefix(C, 4);
  }
  OS << '"';
}

/// \p J as db's --json has always printed it (scripts read it): members in
/// key order, two spaces of indentation per level, and floating-point
/// numbers with 17 significant digits, as printf's %.17g writes them (4 for
/// 4.0, 1.1000000000000001 for 1.1). \p Indent is the current level's.
static void printJSON(raw_ostream &OS, const json &J, unsigned Indent = 0) {
  switch (J.type()) {
  case json::value_t::object:
  case json::value_t::array: {
    bool IsObject = J.is_object();
    if (J.empty()) {
      OS << (IsObject ? "{}" : "[]");
      return;
    }
    OS << (IsObject ? '{' : '[');
    bool First = true;
    for (auto It = J.begin(); It != J.end(); ++It) {
      OS << (First ? "\n" : ",\n");
      First = false;
      OS.indent(Indent + 2);
      if (IsObject) {
        printJSONString(OS, It.key());
        OS << ": ";
      }
      printJSON(OS, *It, Indent + 2);
    }
    OS << '\n';
    OS.indent(Indent);
    OS << (IsObject ? '}' : ']');
    return;
  }
  case json::value_t::string:
    printJSONString(OS, J.get_ref<const std::string &>());
    return;
  case json::value_t::boolean:
    OS << (J.get<bool>() ? "true" : "false");
    return;
  case json::value_t::number_integer:
    OS << J.get<int64_t>();
    return;
  case json::value_t::number_unsigned:
    OS << J.get<uint64_t>();
    return;
  case json::value_t::number_float:
    OS << format("%.17g", J.get<double>());
    return;
  case json::value_t::null:
  case json::value_t::binary:
  case json::value_t::discarded:
    OS << "null";
    return;
  }
}

static json summaryJSON(const VariantRecord &R, StringRef Stale) {
  json O = json::object();
  O["key"] = R.Key;
  O["kernels"] = R.Id.Kernels;
  O["file"] = R.File;
  O["gpu"] = R.Id.GpuName;
  O["arch"] = R.Id.GpuArch;
  O["speedup"] = R.Speedup;
  O["date"] = R.Date;
  O["stale"] = !Stale.empty();
  O["stale_reason"] = Stale.str();
  return O;
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
    json A = json::array();
    for (const VariantRecord &R : Rows)
      A.push_back(summaryJSON(R, Check.reason(R)));
    printJSON(outs(), A);
    outs() << "\n";
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
    json O = summaryJSON(*R, Why);
    json Inputs = json::array();
    for (const InputFile &F : R->Inputs) {
      json I = json::object();
      I["path"] = F.Path;
      I["hash"] = F.Hash;
      I["main"] = F.Main;
      I["virtual"] = F.Virtual;
      Inputs.push_back(std::move(I));
    }
    O["inputs_digest"] = R->Id.InputsDigest;
    O["nvcc_version"] = R->Id.NvccVersion;
    O["nvcc_flags"] = R->Id.NvccFlags;
    O["variant_flags"] = R->VariantFlags;
    O["tool_version"] = R->ToolVersion;
    O["inputs"] = std::move(Inputs);
    // Verification is JSON the tool wrote; text that does not parse is
    // shown as a string.
    json V = json::parse(R->Verification, nullptr, /*allow_exceptions=*/false);
    if (V.is_discarded())
      O["verification"] = R->Verification;
    else
      O["verification"] = std::move(V);
    O["diff"] = R->Diff;
    O["source"] = R->Source;
    printJSON(outs(), O);
    outs() << "\n";
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
  json V = json::parse(R->Verification, nullptr, /*allow_exceptions=*/false);
  if (!V.is_discarded()) {
    std::string Text;
    raw_string_ostream OS(Text);
    printJSON(OS, V);
    SmallVector<StringRef, 32> Lines;
    StringRef(Text).split(Lines, '\n');
    for (StringRef L : Lines)
      outs() << "  " << L << "\n";
  } else {
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

} // namespace tool
} // namespace optiml
