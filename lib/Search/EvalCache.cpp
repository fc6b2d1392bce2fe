//===- EvalCache.cpp - Evaluations shared between search runs -------------===//

#include "optiml/Search/EvalCache.h"
#include "JSONInternal.h"
#include "optiml/Search/Search.h"
#include "optiml/Support/FileUtil.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"

using namespace llvm;
using json = nlohmann::json;

namespace optiml {

/// Bumped when an entry's meaning changes: old entries are then not found.
static constexpr const char *CacheVersion = "optiml-eval-cache/1";

Expected<EvalCache> EvalCache::open(StringRef Dir, std::string Context) {
  if (Dir.empty())
    return createStringError("--eval-cache: empty directory name");
  if (sys::fs::exists(Dir) && !sys::fs::is_directory(Dir))
    return createStringError("--eval-cache: '%s' is not a directory",
                             Dir.str().c_str());
  if (std::error_code EC = sys::fs::create_directories(Dir))
    return createStringError(EC, "--eval-cache: cannot create '%s': %s",
                             Dir.str().c_str(), EC.message().c_str());
  return EvalCache(Dir.str(), std::move(Context));
}

static std::string hashKey(StringRef Context, StringRef Kind,
                           const CandidateSpec &C) {
  SHA256 H;
  H.update(CacheVersion);
  H.update("\n");
  H.update(Context);
  H.update("\n--\n");
  H.update(Kind);
  H.update("\n");
  H.update(normalizeSource(C.Source));
  H.update("\n--\n");
  for (const std::string &F : C.ExtraNvccFlags) {
    H.update(F);
    H.update(StringRef("\0", 1));
  }
  H.update(C.ChangesPrecision ? "precision" : "exact");
  return toHex(H.final(), /*LowerCase=*/true).substr(0, 32);
}

static std::string remeasureKind(const RemeasureOptions &O) {
  return formatv("remeasure rounds={0} replays={1} sanitize={2}", O.Rounds,
                 O.Replays, O.Sanitize)
      .str();
}

std::string EvalCache::key(const CandidateSpec &C) const {
  return hashKey(Context, "evaluate", C);
}

std::string EvalCache::key(const CandidateSpec &C,
                           const RemeasureOptions &O) const {
  return hashKey(Context, remeasureKind(O), C);
}

std::string EvalCache::path(StringRef Key) const {
  SmallString<256> P(Dir);
  sys::path::append(P, Key + ".json");
  return std::string(P);
}

/// The entry's document when it exists, parses and has our context.
static std::optional<json> readEntry(StringRef Path, StringRef Context,
                                     StringRef Kind) {
  if (!sys::fs::exists(Path))
    return std::nullopt;
  auto Text = readFile(Path);
  if (!Text) {
    consumeError(Text.takeError());
    return std::nullopt;
  }
  try {
    json J = json::parse(*Text);
    if (J.at("version").get<std::string>() != CacheVersion ||
        J.at("context").get<std::string>() != Context ||
        J.at("kind").get<std::string>() != Kind)
      return std::nullopt;
    return J;
  } catch (const json::exception &) {
    return std::nullopt; // a damaged entry is a miss; it is rewritten
  }
}

std::optional<EvalOutcome> EvalCache::lookup(const CandidateSpec &C) const {
  auto J = readEntry(path(key(C)), Context, "evaluate");
  if (!J)
    return std::nullopt;
  try {
    EvalOutcome O = outcomeFromJ(J->at("outcome"));
    O.Cached = true;
    return O;
  } catch (const json::exception &) {
    return std::nullopt;
  }
}

std::optional<Remeasurement>
EvalCache::lookup(const CandidateSpec &C, const RemeasureOptions &RO) const {
  std::string Kind = remeasureKind(RO);
  auto J = readEntry(path(key(C, RO)), Context, Kind);
  if (!J)
    return std::nullopt;
  try {
    Remeasurement R = remeasurementFromJ(J->at("remeasurement"));
    R.Cached = true;
    return R;
  } catch (const json::exception &) {
    return std::nullopt;
  }
}

static Error writeEntry(StringRef Path, json J) {
  return writeFileAtomically(
      Path, J.dump(1, ' ', false, json::error_handler_t::replace) + "\n");
}

Error EvalCache::store(const CandidateSpec &C, const EvalOutcome &O) const {
  EvalOutcome Stored = O;
  Stored.Cached = false;
  json J = {{"version", CacheVersion},
            {"context", Context},
            {"kind", "evaluate"},
            {"source_key", sourceKey(C.Source, C.ExtraNvccFlags)},
            {"outcome", outcomeToJ(Stored)}};
  return writeEntry(path(key(C)), std::move(J));
}

Error EvalCache::store(const CandidateSpec &C, const RemeasureOptions &RO,
                       const Remeasurement &R) const {
  json J = {{"version", CacheVersion},
            {"context", Context},
            {"kind", remeasureKind(RO)},
            {"source_key", sourceKey(C.Source, C.ExtraNvccFlags)},
            {"remeasurement", remeasurementToJ(R)}};
  return writeEntry(path(key(C, RO)), std::move(J));
}

//===----------------------------------------------------------------------===//
// CachingEvaluator
//===----------------------------------------------------------------------===//

Expected<EvalOutcome>
CachingEvaluator::evaluateOriginal(const CandidateSpec &Original) {
  // Never cached: every run measures its own baseline.
  return Inner.evaluateOriginal(Original);
}

Expected<EvalOutcome> CachingEvaluator::evaluate(const CandidateSpec &C) {
  if (auto O = Cache.lookup(C)) {
    ++Hits;
    return std::move(*O);
  }
  ++Misses;
  auto O = Inner.evaluate(C);
  if (!O)
    return O.takeError();
  if (Error E = Cache.store(C, *O))
    StoreErrors.push_back(toString(std::move(E)));
  return O;
}

Expected<Remeasurement>
CachingEvaluator::remeasure(const CandidateSpec &C,
                            const RemeasureOptions &Opts) {
  if (auto R = Cache.lookup(C, Opts)) {
    ++Hits;
    return std::move(*R);
  }
  ++Misses;
  auto R = Inner.remeasure(C, Opts);
  if (!R)
    return R.takeError();
  if (Error E = Cache.store(C, Opts, *R))
    StoreErrors.push_back(toString(std::move(E)));
  return R;
}

void CachingEvaluator::prefetch(ArrayRef<CandidateSpec> Next) {
  // Cached candidates need no build.
  std::vector<CandidateSpec> Todo;
  for (const CandidateSpec &C : Next)
    if (!sys::fs::exists(Cache.dir() + "/" + Cache.key(C) + ".json"))
      Todo.push_back(C);
  if (!Todo.empty())
    Inner.prefetch(Todo);
}

std::string CachingEvaluator::describe() const {
  return Inner.describe() + ", evaluation cache " + Cache.dir();
}

} // namespace optiml
