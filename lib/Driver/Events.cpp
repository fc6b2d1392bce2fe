//===- Events.cpp - A session's events as JSON lines ----------------------===//

#include "optiml/Driver/Events.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>
#include <nlohmann/json.hpp>

using namespace llvm;
using json = nlohmann::json;
/// Written in the order of the fields, "event" first.
using ordered = nlohmann::ordered_json;

namespace optiml {

namespace {

void writeLine(raw_ostream &OS, const ordered &J) {
  // One string, one write: the line is never split between writers.
  std::string Line =
      J.dump(-1, ' ', false, ordered::error_handler_t::replace) + "\n";
  OS << Line;
  OS.flush();
}

std::string str(const json &J, const char *Key) {
  auto It = J.find(Key);
  return It != J.end() && It->is_string() ? It->get<std::string>() : "";
}

double num(const json &J, const char *Key, double Default) {
  auto It = J.find(Key);
  return It != J.end() && It->is_number() ? It->get<double>() : Default;
}

bool flag(const json &J, const char *Key) {
  auto It = J.find(Key);
  return It != J.end() && It->is_boolean() && It->get<bool>();
}

std::vector<std::string> strings(const json &J, const char *Key) {
  std::vector<std::string> Out;
  auto It = J.find(Key);
  if (It == J.end() || !It->is_array())
    return Out;
  for (const json &E : *It)
    if (E.is_string())
      Out.push_back(E.get<std::string>());
  return Out;
}

unsigned count(const json &J, const char *Key) {
  double V = num(J, Key, 0);
  return V >= 0 && V < 4e9 ? unsigned(V) : 0u;
}

} // namespace

std::string formatDuration(double S) {
  if (S < 0)
    return "?";
  unsigned T = unsigned(std::lround(S));
  if (T >= 3600)
    return formatv("{0}h{1:2}m", T / 3600, (T % 3600) / 60);
  if (T >= 60)
    return formatv("{0}m{1:2}s", T / 60, T % 60);
  return formatv("{0}s", T);
}

std::string progressLine(const SearchProgress &P) {
  return formatv("[{0}/{1}] best {2:F2}x  eta {3}  {4}", P.Done,
                 P.Budget ? std::to_string(P.Budget) : std::string("-"),
                 P.BestSpeedup, formatDuration(P.EtaSeconds), P.Current)
      .str();
}

void JsonEventWriter::text(StringRef Kind, StringRef Text) {
  writeLine(OS, {{"event", Kind.str()}, {"text", Text.str()}});
}
void JsonEventWriter::message(StringRef Text) { text("message", Text); }
void JsonEventWriter::warning(StringRef Text) { text("warning", Text); }
void JsonEventWriter::note(StringRef Text) { text("note", Text); }
void JsonEventWriter::result(StringRef Text) { text("result", Text); }
void JsonEventWriter::searchFailed(Error E) {
  text("error", toString(std::move(E)));
}

void JsonEventWriter::started(const SessionStart &S) {
  writeLine(OS, {{"event", "started"},
                 {"input", S.Input},
                 {"file", S.File},
                 {"kernels", S.Kernels},
                 {"strategy", S.Strategy},
                 {"policy", S.Policy},
                 {"budget", S.Budget},
                 {"seconds", S.Seconds},
                 {"run_dir", S.RunDir},
                 {"eval_cache", S.EvalCacheDir}});
}

void JsonEventWriter::progress(const SearchProgress &P) {
  writeLine(OS, {{"event", "progress"},
                 {"done", P.Done},
                 {"budget", P.Budget},
                 {"best", P.BestSpeedup},
                 {"current", P.Current},
                 {"elapsed", P.ElapsedSeconds},
                 {"eta", P.EtaSeconds},
                 {"phase", P.Phase},
                 {"same_code_skipped", P.SameCodeSkipped}});
}

void JsonEventWriter::outcome(const SessionOutcome &O) {
  writeLine(OS, {{"event", "outcome"},
                 {"improved", O.Improved},
                 {"speedup", O.Speedup},
                 {"conclusion", O.Conclusion},
                 {"stop_reason", O.StopReason},
                 {"file", O.File},
                 {"included", O.Included},
                 {"run_dir", O.RunDir},
                 {"best", O.BestPath},
                 {"written", O.Written},
                 {"report", O.Report},
                 {"extra_flags", O.ExtraFlags},
                 {"failed_searches", O.FailedSearches}});
}

std::optional<SessionEvent> parseSessionEvent(StringRef Line) {
  Line = Line.trim();
  if (!Line.starts_with("{"))
    return std::nullopt;
  json J = json::parse(Line.begin(), Line.end(), nullptr,
                       /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_object())
    return std::nullopt;
  SessionEvent E;
  E.Kind = str(J, "event");
  if (E.Kind.empty())
    return std::nullopt;
  E.Text = str(J, "text");
  if (E.Kind == "started") {
    E.Start.Input = str(J, "input");
    E.Start.File = str(J, "file");
    E.Start.Kernels = strings(J, "kernels");
    E.Start.Strategy = str(J, "strategy");
    E.Start.Policy = str(J, "policy");
    E.Start.Budget = count(J, "budget");
    E.Start.Seconds = num(J, "seconds", 0);
    E.Start.RunDir = str(J, "run_dir");
    E.Start.EvalCacheDir = str(J, "eval_cache");
  } else if (E.Kind == "progress") {
    E.Progress.Done = count(J, "done");
    E.Progress.Budget = count(J, "budget");
    E.Progress.BestSpeedup = num(J, "best", 1);
    E.Progress.Current = str(J, "current");
    E.Progress.ElapsedSeconds = num(J, "elapsed", 0);
    E.Progress.EtaSeconds = num(J, "eta", -1);
    E.Progress.Phase = flag(J, "phase");
    E.Progress.SameCodeSkipped = count(J, "same_code_skipped");
  } else if (E.Kind == "outcome") {
    SessionOutcome &O = E.Outcome;
    O.Improved = flag(J, "improved");
    O.Speedup = num(J, "speedup", 1);
    O.Conclusion = str(J, "conclusion");
    O.StopReason = str(J, "stop_reason");
    O.File = str(J, "file");
    O.Included = flag(J, "included");
    O.RunDir = str(J, "run_dir");
    O.BestPath = str(J, "best");
    O.Written = str(J, "written");
    O.Report = str(J, "report");
    O.ExtraFlags = strings(J, "extra_flags");
    O.FailedSearches = count(J, "failed_searches");
  }
  return E;
}

} // namespace optiml
