//===- Journal.cpp - The search journal (JSON lines, fsynced) -------------===//
//
// The JSON boundary of the search: nlohmann/json is used only here, its
// exceptions are caught here, and typed nodes go in and out.
//
//===----------------------------------------------------------------------===//

#include "optiml/Search/Journal.h"
#include "JSONInternal.h"
#include "optiml/Support/FileUtil.h"
#include "optiml/Support/Secrets.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

using namespace llvm;
using json = nlohmann::json;

namespace optiml {

static json paramToJSON(const ParamValue &V) {
  if (auto *I = std::get_if<int64_t>(&V))
    return *I;
  if (auto *D = std::get_if<double>(&V))
    return *D;
  if (auto *B = std::get_if<bool>(&V))
    return *B;
  if (auto *S = std::get_if<std::string>(&V))
    return *S;
  return std::get<std::vector<std::string>>(V);
}

static ParamValue paramFromJSON(const json &J) {
  if (J.is_boolean())
    return J.get<bool>();
  if (J.is_number_integer())
    return J.get<int64_t>();
  if (J.is_number())
    return J.get<double>();
  if (J.is_string())
    return J.get<std::string>();
  return J.get<std::vector<std::string>>();
}

static json editToJ(const Edit &E) {
  json P = json::object();
  for (const auto &[K, V] : E.Params)
    P[K] = paramToJSON(V);
  return {{"kind", E.Kind}, {"target", E.Target}, {"params", P}};
}

static Edit editFromJ(const json &J) {
  Edit E;
  E.Kind = J.at("kind").get<std::string>();
  E.Target = J.at("target").get<std::string>();
  if (J.contains("params"))
    for (auto &[K, V] : J.at("params").items())
      E.Params[K] = paramFromJSON(V);
  return E;
}

json timingToJ(const Timing &T) {
  return {{"available", T.Available},
          {"median_ms", T.MedianMs},
          {"noise_pct", T.NoisePct},
          {"replays", T.Replays}};
}

Timing timingFromJ(const json &J) {
  Timing T;
  T.Available = J.at("available").get<bool>();
  T.MedianMs = J.at("median_ms").get<double>();
  T.NoisePct = J.at("noise_pct").get<double>();
  T.Replays = J.at("replays").get<unsigned>();
  return T;
}

json outcomeToJ(const EvalOutcome &O) {
  json J = {{"compiled", O.Compiled},    {"verified", O.Verified},
            {"failure", O.Failure},      {"compile_log", O.CompileLog},
            {"time", timingToJ(O.Time)}, {"metrics", O.Metrics},
            {"bound", O.Bound},          {"verdict", O.Verdict},
            {"notes", O.Notes},          {"seconds", O.Seconds},
            {"cached", O.Cached}};
  J["baseline"] = O.Baseline ? timingToJ(*O.Baseline) : json(nullptr);
  json Stages = json::array();
  for (const auto &[Name, S] : O.Stages)
    Stages.push_back({Name, S});
  J["stages_seconds"] = std::move(Stages);
  return J;
}

EvalOutcome outcomeFromJ(const json &J) {
  EvalOutcome O;
  O.Compiled = J.at("compiled").get<bool>();
  O.Verified = J.at("verified").get<bool>();
  O.Failure = J.at("failure").get<std::string>();
  O.CompileLog = J.at("compile_log").get<std::string>();
  O.Time = timingFromJ(J.at("time"));
  O.Metrics = J.at("metrics").get<std::map<std::string, double>>();
  O.Bound = J.at("bound").get<std::string>();
  O.Verdict = J.at("verdict").get<std::string>();
  O.Notes = J.at("notes").get<std::vector<std::string>>();
  O.Seconds = J.at("seconds").get<double>();
  // Absent from journals written before the evaluation cache.
  if (J.contains("cached"))
    O.Cached = J.at("cached").get<bool>();
  if (J.contains("baseline") && !J.at("baseline").is_null())
    O.Baseline = timingFromJ(J.at("baseline"));
  // Absent from journals written before stage times were recorded.
  if (J.contains("stages_seconds"))
    for (const json &S : J.at("stages_seconds"))
      O.Stages.emplace_back(S.at(0).get<std::string>(), S.at(1).get<double>());
  return O;
}

json remeasurementToJ(const Remeasurement &R) {
  return {{"original", timingToJ(R.Original)},
          {"candidate", timingToJ(R.Candidate)},
          {"verified", R.Verified},
          {"failure", R.Failure},
          {"sanitizer_ran", R.SanitizerRan},
          {"sanitizer_clean", R.SanitizerClean},
          {"sanitizer_detail", R.SanitizerDetail}};
}

Remeasurement remeasurementFromJ(const json &J) {
  Remeasurement R;
  R.Original = timingFromJ(J.at("original"));
  R.Candidate = timingFromJ(J.at("candidate"));
  R.Verified = J.at("verified").get<bool>();
  R.Failure = J.at("failure").get<std::string>();
  R.SanitizerRan = J.at("sanitizer_ran").get<bool>();
  R.SanitizerClean = J.at("sanitizer_clean").get<bool>();
  R.SanitizerDetail = J.at("sanitizer_detail").get<std::string>();
  return R;
}

static json rewardToJ(const RewardBreakdown &R) {
  return {{"total", R.Total},
          {"speed_term", R.SpeedTerm},
          {"proxy_term", R.ProxyTerm},
          {"bound", R.Bound},
          {"evidence", R.Evidence},
          {"raw_speedup", R.Speed.Raw},
          {"counted_speedup", R.Speed.Counted},
          {"comparison", toString(R.Speed.Cmp)},
          {"failed", R.Failed},
          {"expandable", R.Expandable},
          {"why", R.Why}};
}

static RewardBreakdown rewardFromJ(const json &J) {
  RewardBreakdown R;
  R.Total = J.at("total").get<double>();
  R.SpeedTerm = J.at("speed_term").get<double>();
  R.ProxyTerm = J.at("proxy_term").get<double>();
  R.Bound = J.at("bound").get<std::string>();
  R.Evidence = J.at("evidence").get<std::string>();
  R.Speed.Raw = J.at("raw_speedup").get<double>();
  R.Speed.Counted = J.at("counted_speedup").get<double>();
  std::string C = J.at("comparison").get<std::string>();
  R.Speed.Cmp = C == "faster"   ? Comparison::Faster
                : C == "slower" ? Comparison::Slower
                                : Comparison::WithinNoise;
  R.Failed = J.at("failed").get<bool>();
  R.Expandable = J.at("expandable").get<bool>();
  R.Why = J.at("why").get<std::string>();
  return R;
}

static NodeStatus statusFromString(const std::string &S) {
  for (NodeStatus X :
       {NodeStatus::Original, NodeStatus::Evaluated, NodeStatus::Failed,
        NodeStatus::Rejected, NodeStatus::Duplicate})
    if (S == toString(X))
      return X;
  throw json::other_error::create(501, "unknown node status '" + S + "'",
                                  nullptr);
}

std::string nodeToJSON(const SearchNode &N) {
  json Checks = json::array();
  for (const CheckFailure &C : N.Checks)
    Checks.push_back({{"check", C.Check},
                      {"file", C.File},
                      {"line", C.Line},
                      {"column", C.Column},
                      {"message", C.Message}});
  json J = {{"type", "node"},
            {"id", N.Id},
            {"parent", N.Parent},
            {"depth", N.Depth},
            {"status", toString(N.Status)},
            {"edit", N.Step ? editToJ(*N.Step) : json(nullptr)},
            {"prior", N.Prior},
            {"origin", N.Origin},
            {"rationale", N.Rationale},
            {"summary", N.Summary},
            {"key", N.Key},
            {"nvcc_flags", N.Flags},
            {"changes_precision", N.ChangesPrecision},
            {"diff", N.Diff},
            {"checks", Checks},
            {"reject_reason", N.RejectReason},
            {"duplicate_of", N.DuplicateOf},
            {"evaluation", N.Evaluation},
            {"remeasured", N.Remeasured},
            {"first_measured_ms", N.FirstMeasuredMs},
            {"outcome", outcomeToJ(N.Outcome)},
            {"reward", rewardToJ(N.Reward)}};
  // Only when there is one: journals stay as they were for evaluators that
  // give no compiled-code key.
  if (!N.CodeKey.empty())
    J["code_key"] = N.CodeKey;
  if (N.SameCode)
    J["same_code"] = true;
  return J.dump(-1, ' ', false, json::error_handler_t::replace);
}

Expected<SearchNode> nodeFromJSON(StringRef Line) {
  try {
    json J = json::parse(Line.begin(), Line.end());
    SearchNode N;
    N.Id = J.at("id").get<unsigned>();
    N.Parent = J.at("parent").get<int>();
    N.Depth = J.at("depth").get<unsigned>();
    N.Status = statusFromString(J.at("status").get<std::string>());
    if (!J.at("edit").is_null())
      N.Step = editFromJ(J.at("edit"));
    N.Prior = J.at("prior").get<double>();
    N.Origin = J.at("origin").get<std::string>();
    N.Rationale = J.at("rationale").get<std::string>();
    N.Summary = J.at("summary").get<std::string>();
    N.Key = J.at("key").get<std::string>();
    N.Flags = J.at("nvcc_flags").get<std::vector<std::string>>();
    N.ChangesPrecision = J.at("changes_precision").get<bool>();
    N.Diff = J.at("diff").get<std::string>();
    for (const json &C : J.at("checks")) {
      CheckFailure F;
      F.Check = C.at("check").get<std::string>();
      F.File = C.at("file").get<std::string>();
      F.Line = C.at("line").get<unsigned>();
      F.Column = C.at("column").get<unsigned>();
      F.Message = C.at("message").get<std::string>();
      N.Checks.push_back(std::move(F));
    }
    N.RejectReason = J.at("reject_reason").get<std::string>();
    N.DuplicateOf = J.at("duplicate_of").get<int>();
    N.Evaluation = J.at("evaluation").get<unsigned>();
    N.Remeasured = J.at("remeasured").get<bool>();
    N.FirstMeasuredMs = J.at("first_measured_ms").get<double>();
    N.Outcome = outcomeFromJ(J.at("outcome"));
    N.Reward = rewardFromJ(J.at("reward"));
    // Absent from journals written before compiled-code keys.
    N.CodeKey = J.value("code_key", std::string());
    N.SameCode = J.value("same_code", false);
    return N;
  } catch (const json::exception &E) {
    return createStringError("malformed journal node: %s", E.what());
  }
}

JournalWriter::~JournalWriter() {
  if (FD >= 0)
    ::close(FD);
}

Expected<std::unique_ptr<JournalWriter>>
JournalWriter::open(StringRef RunDir, bool Append,
                    std::optional<uint64_t> TruncateTo) {
  if (std::error_code EC = sys::fs::create_directories(RunDir))
    return createStringError(EC, "cannot create run directory '%s': %s",
                             RunDir.str().c_str(), EC.message().c_str());
  std::unique_ptr<JournalWriter> W(new JournalWriter);
  W->RunDir = RunDir.str();
  SmallString<256> P(RunDir);
  sys::path::append(P, "journal.jsonl");
  W->Path = std::string(P);
  if (!Append && sys::fs::exists(P))
    return createStringError(
        "'%s' already holds a search journal; pass --resume to continue it, "
        "or choose another --run-dir",
        RunDir.str().c_str());
  int Flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  W->FD = ::open(W->Path.c_str(), Flags, 0644);
  if (W->FD < 0)
    return createStringError(std::error_code(errno, std::generic_category()),
                             "cannot open journal '%s': %s", W->Path.c_str(),
                             strerror(errno));
  // Drop a partial last line left by a killed run.
  if (Append && TruncateTo)
    if (::ftruncate(W->FD, *TruncateTo) != 0)
      return createStringError(std::error_code(errno, std::generic_category()),
                               "cannot truncate journal '%s': %s",
                               W->Path.c_str(), strerror(errno));
  return std::move(W);
}

Error JournalWriter::writeLine(const std::string &Line) {
  std::string L = Line + "\n";
  const char *P = L.data();
  size_t Left = L.size();
  while (Left) {
    ssize_t N = ::write(FD, P, Left);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return createStringError(std::error_code(errno, std::generic_category()),
                               "cannot write journal '%s': %s", Path.c_str(),
                               strerror(errno));
    P += N;
    Left -= N;
  }
  if (::fsync(FD) != 0)
    return createStringError(std::error_code(errno, std::generic_category()),
                             "cannot sync journal '%s': %s", Path.c_str(),
                             strerror(errno));
  return Error::success();
}

Error JournalWriter::writeHeader(const JournalHeader &H) {
  json J = {{"type", "run"},          {"version", JournalVersion},
            {"file", H.File},         {"original_key", H.OriginalKey},
            {"strategy", H.Strategy}, {"policy", H.Policy},
            {"seed", H.Seed},         {"budget", H.Budget},
            {"kernels", H.Kernels}};
  if (!H.VerifyLast)
    J["verify_last"] = false;
  if (!H.VerifyLastDropped.empty())
    J["verify_last_dropped"] = H.VerifyLastDropped;
  return writeLine(J.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::string nodeSourcePath(StringRef RunDir, unsigned Id) {
  SmallString<256> P(RunDir);
  sys::path::append(P, "sources", formatv("node-{0}.cu", Id).str());
  return P.str().str();
}

Error writeNodeSource(StringRef RunDir, unsigned Id, StringRef Source) {
  std::string P = nodeSourcePath(RunDir, Id);
  StringRef Dir = sys::path::parent_path(P);
  if (std::error_code EC = sys::fs::create_directories(Dir))
    return createStringError(EC, "cannot create '%s': %s", Dir.str().c_str(),
                             EC.message().c_str());
  return writeFileAtomically(P, Source);
}

Error JournalWriter::writeNode(const SearchNode &N) {
  if (!N.Source.empty())
    if (Error E = writeNodeSource(RunDir, N.Id, N.Source))
      return E;
  // Replies are redacted as they arrive; this also masks a key that came
  // another way (a check's message quoting the program's output).
  return writeLine(redactSecrets(nodeToJSON(N)));
}

Error JournalWriter::writeFinal(const SearchResult &R) {
  json J = {{"type", "final"},
            {"evaluations", R.Evaluations},
            {"best", R.Best},
            {"best_speedup", R.BestSpeedup},
            {"improved", R.Improved},
            {"final_speedup", R.FinalSpeedup},
            {"conclusion", R.Conclusion},
            {"stop_reason", R.StopReason},
            {"evaluations_cached", R.EvaluationsCached},
            {"same_code_skipped", R.SameCodeSkipped},
            {"best_evaluation", R.BestEvaluation}};
  if (R.Final) {
    J["final_original"] = timingToJ(R.Final->Original);
    J["final_candidate"] = timingToJ(R.Final->Candidate);
    J["sanitizer_ran"] = R.Final->SanitizerRan;
    J["sanitizer_clean"] = R.Final->SanitizerClean;
    J["sanitizer_detail"] = R.Final->SanitizerDetail;
    J["final_cached"] = R.Final->Cached;
  }
  return writeLine(J.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::string summaryToJSON(const SearchResult &R, const JournalHeader &H,
                          StringRef Evaluator) {
  json Curve = json::array();
  for (const auto &[E, S] : R.Curve)
    Curve.push_back({E, S});
  json Path = json::array();
  if (R.Improved)
    for (unsigned Id : R.bestPath())
      if (Id)
        Path.push_back(R.Nodes[Id].Summary);
  json J = {{"file", H.File},
            {"kernels", H.Kernels},
            {"strategy", H.Strategy},
            {"policy", H.Policy},
            {"seed", H.Seed},
            {"budget", H.Budget},
            {"evaluator", Evaluator.str()},
            {"verify_last", H.VerifyLast},
            {"evaluations", R.Evaluations},
            {"evaluations_this_run", R.EvaluationsThisRun},
            {"evaluations_cached", R.EvaluationsCached},
            {"same_code_skipped", R.SameCodeSkipped},
            {"stop_reason", R.StopReason},
            {"seconds", R.Seconds},
            {"best_speedup_search", R.BestSpeedup},
            {"improved", R.Improved},
            {"best_node", R.Best},
            {"best_evaluation", R.BestEvaluation},
            {"best_path", Path},
            {"final_speedup", R.Improved ? R.FinalSpeedup : 1.0},
            {"final_flags", R.FinalFlags},
            {"conclusion", R.Conclusion},
            {"curve", Curve}};
  if (!H.VerifyLastDropped.empty())
    J["verify_last_dropped"] = H.VerifyLastDropped;
  J["final"] = R.Final ? remeasurementToJ(*R.Final) : json(nullptr);
  if (R.Final)
    J["final"]["cached"] = R.Final->Cached;
  if (!R.Nodes.empty() && R.Nodes[0].Outcome.Time.Available)
    J["original_ms"] = R.Nodes[0].Outcome.Time.MedianMs;
  return J.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

static JournalHeader headerFromJ(const json &J) {
  JournalHeader H;
  H.Version = J.at("version").get<unsigned>();
  H.File = J.at("file").get<std::string>();
  H.OriginalKey = J.at("original_key").get<std::string>();
  H.Strategy = J.at("strategy").get<std::string>();
  H.Policy = J.at("policy").get<std::string>();
  H.Seed = J.at("seed").get<uint64_t>();
  H.Budget = J.at("budget").get<unsigned>();
  H.Kernels = J.at("kernels").get<std::vector<std::string>>();
  H.VerifyLast = J.value("verify_last", true);
  H.VerifyLastDropped = J.value("verify_last_dropped", std::string());
  return H;
}

/// Whether \p N fits after the nodes read so far: ids in order, the tree
/// made only of earlier nodes. Returns what is wrong, or empty.
static std::string checkNode(const SearchNode &N,
                             const std::vector<SearchNode> &Before,
                             const std::vector<unsigned> &LineOf) {
  size_t Next = Before.size();
  if (N.Id < Next)
    return formatv("node id {0} appears twice (first on line {1})", N.Id,
                   LineOf[N.Id])
        .str();
  if (N.Id > Next)
    return formatv("node {0} out of order: expected node {1}", N.Id, Next)
        .str();
  if (N.Id == 0) {
    if (N.Status != NodeStatus::Original || N.Parent != -1)
      return formatv("node 0 must be the original (status \"original\", "
                     "parent -1), found status \"{0}\" and parent {1}",
                     toString(N.Status), N.Parent)
          .str();
    return "";
  }
  if (N.Status == NodeStatus::Original)
    return formatv("node {0} claims to be the original; only node 0 is", N.Id)
        .str();
  if (N.Parent < 0 || unsigned(N.Parent) >= N.Id)
    return formatv("node {0} has parent {1}, which is not an earlier node "
                   "(0 to {2})",
                   N.Id, N.Parent, N.Id - 1)
        .str();
  if (N.Depth != Before[N.Parent].Depth + 1)
    return formatv("node {0} has depth {1}, but its parent {2} has depth {3}",
                   N.Id, N.Depth, N.Parent, Before[N.Parent].Depth)
        .str();
  if (N.Status == NodeStatus::Duplicate &&
      (N.DuplicateOf < 0 || unsigned(N.DuplicateOf) >= N.Id))
    return formatv("node {0} duplicates node {1}, which is not an earlier "
                   "node (0 to {2})",
                   N.Id, N.DuplicateOf, N.Id - 1)
        .str();
  if (N.SameCode && N.Status != NodeStatus::Duplicate)
    return formatv("node {0} is marked \"same_code\" but its status is "
                   "\"{1}\", not \"duplicate\"",
                   N.Id, toString(N.Status))
        .str();
  return "";
}

Expected<JournalContents> readJournal(StringRef RunDir) {
  JournalContents C;
  SmallString<256> P(RunDir);
  sys::path::append(P, "journal.jsonl");
  C.Path = std::string(P);
  if (!sys::fs::exists(P))
    return C;
  C.Found = true;
  auto Text = readFile(P);
  if (!Text)
    return Text.takeError();
  auto Bad = [&](unsigned LineNo, const Twine &Why) {
    return createStringError("%s:%u: %s", P.c_str(), LineNo, Why.str().c_str());
  };
  std::vector<unsigned> LineOf; // line of each node, for messages
  StringRef Rest = *Text;
  unsigned LineNo = 0;
  uint64_t Offset = 0;
  while (!Rest.empty()) {
    size_t NL = Rest.find('\n');
    ++LineNo;
    if (NL == StringRef::npos) { // killed mid-write
      C.DroppedPartialLine = true;
      C.Dropped = formatv("{0}:{1}: dropped an incomplete last line (no "
                          "newline: the run was stopped while writing it)",
                          P, LineNo)
                      .str();
      break;
    }
    StringRef Line = Rest.take_front(NL);
    Rest = Rest.drop_front(NL + 1);
    bool Last = Rest.empty();
    if (Line.trim().empty()) {
      Offset += NL + 1;
      C.ValidBytes = Offset;
      continue;
    }
    json J;
    try {
      J = json::parse(Line.begin(), Line.end());
    } catch (const json::exception &E) {
      // Only the last line can be torn by a crash; anything earlier was
      // complete once and has been damaged since.
      if (Last) {
        C.DroppedPartialLine = true;
        C.Dropped = formatv("{0}:{1}: dropped an unreadable last line (the "
                            "run was stopped while writing it?)",
                            P, LineNo)
                        .str();
        break;
      }
      return Bad(LineNo,
                 Twine("malformed journal line (not JSON): ") + E.what());
    }
    Offset += NL + 1;
    C.ValidBytes = Offset;
    std::string Type;
    try {
      Type = J.at("type").get<std::string>();
      if (Type == "run") {
        if (C.Header || !C.Nodes.empty())
          return Bad(LineNo, C.Header ? formatv("a second header (the first is "
                                                "on line {0})",
                                                C.HeaderLine)
                                            .str()
                                      : std::string("the header comes after "
                                                    "nodes"));
        if (!J.contains("version"))
          return Bad(LineNo, "the header has no version");
        unsigned V = J.at("version").get<unsigned>();
        if (V != JournalVersion)
          return Bad(LineNo, formatv("journal version {0} is not supported "
                                     "(this clang-optiml reads version {1})",
                                     V, JournalVersion)
                                 .str());
        C.Header = headerFromJ(J);
        C.HeaderLine = LineNo;
        continue;
      }
    } catch (const json::exception &E) {
      return Bad(LineNo, Twine("malformed journal line: ") + E.what());
    }
    if (!C.Header)
      return Bad(LineNo,
                 formatv("the journal has no header: its first line is a "
                         "\"{0}\" line, not the run's header (\"run\")",
                         Type)
                     .str());
    if (Type == "final")
      continue; // a finished run, resumed with more budget, goes on after it
    if (Type != "node")
      return Bad(LineNo, formatv("unknown line type \"{0}\"", Type).str());
    auto N = nodeFromJSON(Line);
    if (!N)
      return Bad(LineNo, toString(N.takeError()));
    std::string Wrong = checkNode(*N, C.Nodes, LineOf);
    if (!Wrong.empty())
      return Bad(LineNo, Wrong);
    if (N->Status == NodeStatus::Evaluated || N->Status == NodeStatus::Failed) {
      std::string S = nodeSourcePath(RunDir, N->Id);
      // A journal kept without its sources (they are large): the search
      // rebuilds them from the edits (Searcher::resume).
      if (N->Id > 0 && !sys::fs::exists(S)) {
        C.MissingSources.push_back(N->Id);
      } else {
        auto Src = readFile(S);
        if (!Src)
          return Bad(
              LineNo,
              formatv("node {0}: {1}", N->Id, toString(Src.takeError())).str());
        N->Source = std::move(*Src);
      }
    }
    LineOf.push_back(LineNo);
    C.Nodes.push_back(std::move(*N));
  }
  return C;
}

} // namespace optiml
