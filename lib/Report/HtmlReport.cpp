//===- HtmlReport.cpp - The self-contained search report ------------------===//

#include "optiml/Report/Report.h"
#include "optiml/Support/Secrets.h"
#include "optiml/Support/Sort.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cmath>

using namespace llvm;

namespace optiml {

static std::string esc(StringRef S) {
  std::string Out;
  Out.reserve(S.size());
  for (char C : S) {
    switch (C) {
    case '&':
      Out += "&amp;";
      break;
    case '<':
      Out += "&lt;";
      break;
    case '>':
      Out += "&gt;";
      break;
    case '"':
      Out += "&quot;";
      break;
    default:
      Out += C;
    }
  }
  return Out;
}

std::vector<std::string> metricChanges(const EvalOutcome &Before,
                                       const EvalOutcome &After, unsigned Max) {
  std::vector<std::pair<double, std::string>> Moves;
  for (const auto &[Name, V0] : Before.Metrics) {
    auto It = After.Metrics.find(Name);
    if (It == After.Metrics.end() || V0 == 0)
      continue;
    double Rel = It->second / V0 - 1;
    if (std::fabs(Rel) < 0.01)
      continue;
    std::string Line;
    raw_string_ostream OS(Line);
    OS << Name << ": " << format("%.3g", V0) << " -> "
       << format("%.3g", It->second) << " (" << (Rel >= 0 ? "+" : "")
       << format("%.0f", Rel * 100) << "%)";
    Moves.push_back({std::fabs(Rel), Line});
  }
  stableSort(Moves,
             [](const auto &L, const auto &R) { return L.first > R.first; });
  std::vector<std::string> Out;
  for (auto &M : Moves) {
    if (Out.size() == Max)
      break;
    Out.push_back(M.second);
  }
  return Out;
}

std::string curveSvg(const SearchResult &R) {
  const double W = 560, H = 220, L = 48, B = 30, T = 12, Rt = 12;
  unsigned N =
      std::max<unsigned>(1, R.Curve.empty() ? 1 : R.Curve.back().first);
  double Top = 1;
  for (auto &P : R.Curve)
    Top = std::max(Top, P.second);
  Top = Top * 1.1;
  auto X = [&](double E) { return L + (W - L - Rt) * E / N; };
  auto Y = [&](double S) { return T + (H - T - B) * (1 - (S - 0) / Top); };
  std::string S;
  raw_string_ostream OS(S);
  OS << formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
                "height=\"{1}\" role=\"img\" aria-label=\"best speedup "
                "against evaluations\">",
                W, H);
  OS << formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" "
                "stroke=\"#888\"/>",
                L, H - B, W - Rt);
  OS << formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" "
                "stroke=\"#888\"/>",
                L, T, H - B);
  // The original's level.
  OS << formatv("<line x1=\"{0}\" y1=\"{1:F1}\" x2=\"{2}\" y2=\"{1:F1}\" "
                "stroke=\"#bbb\" stroke-dasharray=\"4 3\"/>",
                L, Y(1), W - Rt);
  OS << formatv("<text x=\"{0}\" y=\"{1:F1}\" font-size=\"11\" "
                "text-anchor=\"end\">1.00x</text>",
                L - 4, Y(1) + 4);
  OS << formatv("<text x=\"{0}\" y=\"{1:F1}\" font-size=\"11\" "
                "text-anchor=\"end\">{2:F2}x</text>",
                L - 4, Y(Top / 1.1) + 4, Top / 1.1);
  OS << formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"11\" "
                "text-anchor=\"middle\">evaluations (0 to {2})</text>",
                (W + L) / 2, H - 8, N);
  std::string Pts = formatv("{0:F1},{1:F1}", X(0), Y(1)).str();
  double Prev = 1;
  for (auto &P : R.Curve) {
    Pts += formatv(" {0:F1},{1:F1} {0:F1},{2:F1}", X(P.first), Y(Prev),
                   Y(P.second))
               .str();
    Prev = P.second;
  }
  OS << "<polyline fill=\"none\" stroke=\"#1f6feb\" stroke-width=\"2\" "
        "points=\""
     << Pts << "\"/>";
  OS << "</svg>";
  return S;
}

static std::string speedText(const SearchNode &N) {
  switch (N.Status) {
  case NodeStatus::Original:
    return formatv("{0:F4} ms (baseline)", N.Outcome.Time.MedianMs);
  case NodeStatus::Evaluated:
    return formatv("{0:F2}x, {1}{2}", N.Reward.Speed.Raw,
                   toString(N.Reward.Speed.Cmp),
                   N.Remeasured ? ", re-measured" : "");
  case NodeStatus::Failed:
    return "failed: " + N.Reward.Why;
  case NodeStatus::Rejected:
    return "rejected by the checks: " + N.RejectReason;
  case NodeStatus::Duplicate:
    return (N.SameCode ? "same compiled code as node "
                       : "same program as node ") +
           std::to_string(N.DuplicateOf);
  }
  return "";
}

static void renderTree(raw_ostream &OS, const SearchResult &R, unsigned Id,
                       const std::vector<bool> &OnBest) {
  const SearchNode &N = R.Nodes[Id];
  OS << "<li class=\"" << toString(N.Status) << (OnBest[Id] ? " best" : "")
     << "\"><span class=\"n\">#" << N.Id << "</span> <b>" << esc(N.Summary)
     << "</b> <span class=\"v\">" << esc(speedText(N)) << "</span>";
  if (N.Evaluation)
    OS << formatv(" <span class=\"r\">reward {0:F3}</span>", N.Reward.Total);
  if (!N.Rationale.empty())
    OS << "<div class=\"why\">" << esc(N.Rationale) << "</div>";
  if (N.Status == NodeStatus::Failed && !N.Outcome.CompileLog.empty() &&
      !N.Outcome.Compiled)
    OS << "<details><summary>compile log</summary><pre>"
       << esc(N.Outcome.CompileLog) << "</pre></details>";
  if (!N.Diff.empty() && N.Status != NodeStatus::Original)
    OS << "<details><summary>diff</summary><pre>" << esc(N.Diff)
       << "</pre></details>";
  if (!N.Children.empty()) {
    OS << "<ul>";
    for (unsigned C : N.Children)
      renderTree(OS, R, C, OnBest);
    OS << "</ul>";
  }
  OS << "</li>\n";
}

static void renderDiff(raw_ostream &OS, StringRef Diff) {
  OS << "<pre class=\"diff\">";
  SmallVector<StringRef, 64> Lines;
  Diff.split(Lines, '\n');
  for (StringRef L : Lines) {
    const char *Cls = L.starts_with("+++") || L.starts_with("---") ? "h"
                      : L.starts_with("+")                         ? "add"
                      : L.starts_with("-")                         ? "del"
                      : L.starts_with("@@")                        ? "h"
                                                                   : "";
    OS << "<span class=\"" << Cls << "\">" << esc(L) << "</span>\n";
  }
  OS << "</pre>";
}

std::string renderHtmlReport(const SearchResult &R, const ReportInfo &Info) {
  std::string S;
  raw_string_ostream OS(S);
  std::vector<bool> OnBest(R.Nodes.size(), false);
  std::vector<unsigned> Path;
  if (!R.Nodes.empty())
    Path = R.bestPath();
  for (unsigned Id : Path)
    OnBest[Id] = true;

  unsigned Failed = 0, Rejected = 0, Dups = 0;
  for (const SearchNode &N : R.Nodes) {
    Failed += N.Status == NodeStatus::Failed;
    Rejected += N.Status == NodeStatus::Rejected;
    Dups += N.Status == NodeStatus::Duplicate;
  }

  OS << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
     << "<title>clang-optiml: " << esc(Info.File) << "</title><style>\n"
     << "body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;"
        "color:#222}\n"
     << "pre{background:#f6f8fa;padding:.6em;overflow:auto;font-size:12px}\n"
     << ".diff .add{color:#1a7f37}.diff .del{color:#cf222e}.diff "
        ".h{color:#6e7781}\n"
     << "li{margin:.2em 0}.n{color:#888}.why{color:#555;font-size:90%}\n"
     << "li.failed>b,li.rejected>b{color:#cf222e}li.duplicate>b{color:#888}\n"
     << "li.best>b{color:#1a7f37}.r{color:#888;font-size:90%}\n"
     << "table{border-collapse:collapse}td,th{border:1px solid "
        "#ddd;padding:.3em .6em;text-align:left}\n"
     << "</style></head><body>\n";
  OS << "<h1>clang-optiml optimize: " << esc(Info.File) << "</h1>\n";
  OS << "<p><b>" << esc(R.Conclusion) << "</b></p>\n";
  OS << "<table>";
  OS << "<tr><th>command</th><td><code>" << esc(Info.Command)
     << "</code></td></tr>";
  OS << "<tr><th>strategy / policy</th><td>" << esc(Info.Strategy) << " / "
     << esc(Info.Policy) << "</td></tr>";
  OS << "<tr><th>evaluator</th><td>" << esc(Info.Evaluator) << "</td></tr>";
  OS << formatv("<tr><th>nodes</th><td>{0} evaluations ({1} failed), {2} "
                "rejected by the checks, {3} duplicates; stopped: {4}; "
                "{5:F1} s</td></tr>",
                R.Evaluations, Failed, Rejected, Dups, esc(R.StopReason),
                R.Seconds);
  if (R.Final)
    OS << formatv(
        "<tr><th>final check</th><td>original {0:F4} ms &plusmn; "
        "{1:F1}%, candidate {2:F4} ms &plusmn; {3:F1}% ({4} + {5} "
        "replays, interleaved); sanitizer: {6}</td></tr>",
        R.Final->Original.MedianMs, R.Final->Original.NoisePct,
        R.Final->Candidate.MedianMs, R.Final->Candidate.NoisePct,
        R.Final->Original.Replays, R.Final->Candidate.Replays,
        esc(R.Final->SanitizerRan
                ? (R.Final->SanitizerClean ? "clean" : R.Final->SanitizerDetail)
                : "not run (" + R.Final->SanitizerDetail + ")"));
  OS << "</table>\n";

  OS << "<h2>Best speedup against evaluations</h2>\n" << curveSvg(R) << "\n";

  if (R.Improved && Path.size() > 1) {
    OS << "<h2>Accepted steps and why they helped</h2>\n<ol>\n";
    for (size_t I = 1; I < Path.size(); ++I) {
      const SearchNode &N = R.Nodes[Path[I]];
      const SearchNode &P = R.Nodes[Path[I - 1]];
      OS << "<li><b>" << esc(N.Summary) << "</b>: "
         << formatv("{0:F2}x over the original", N.Reward.Speed.Raw);
      if (!N.Outcome.Verdict.empty())
        OS << "; " << esc(N.Outcome.Verdict);
      if (!N.Reward.Evidence.empty())
        OS << "<div>bottleneck proxy (" << esc(N.Reward.Bound)
           << "): " << esc(N.Reward.Evidence) << "</div>";
      auto Moves = metricChanges(P.Outcome, N.Outcome);
      if (Moves.empty())
        OS << "<div class=\"why\">no profiler metrics moved by more than "
              "1% (or none were collected)</div>";
      else {
        OS << "<ul>";
        for (const std::string &M : Moves)
          OS << "<li><code>" << esc(M) << "</code></li>";
        OS << "</ul>";
      }
      OS << "</li>\n";
    }
    OS << "</ol>\n";
  }

  if (!R.FinalDiff.empty()) {
    OS << "<h2>Final diff</h2>\n";
    renderDiff(OS, R.FinalDiff);
  }

  OS << "<h2>Search tree</h2>\n<ul class=\"tree\">\n";
  if (!R.Nodes.empty())
    renderTree(OS, R, 0, OnBest);
  OS << "</ul>\n</body></html>\n";
  // Rationales and reasons quote model replies; the report may be shared.
  return redactSecrets(S);
}

void printSummary(raw_ostream &OS, const SearchResult &R,
                  const ReportInfo &Info) {
  unsigned Failed = 0, Rejected = 0;
  for (const SearchNode &N : R.Nodes) {
    Failed += N.Status == NodeStatus::Failed;
    Rejected += N.Status == NodeStatus::Rejected;
  }
  OS << Info.File << ": " << R.Conclusion << "\n";
  OS << formatv("  {0} evaluations ({1} failed, {2} edits rejected by the "
                "checks), {3}; {4:F1} s\n",
                R.Evaluations, Failed, Rejected, R.StopReason, R.Seconds);
  if (!R.Improved)
    return;
  auto Path = R.bestPath();
  for (size_t I = 1; I < Path.size(); ++I) {
    const SearchNode &N = R.Nodes[Path[I]];
    OS << formatv("  step {0}: {1} ({2:F2}x)", I, N.Summary,
                  N.Reward.Speed.Raw);
    if (!N.Reward.Evidence.empty())
      OS << "; " << N.Reward.Evidence;
    OS << "\n";
  }
  if (R.Final)
    OS << formatv("  final check: {0:F4} ms -> {1:F4} ms, sanitizer {2}\n",
                  R.Final->Original.MedianMs, R.Final->Candidate.MedianMs,
                  R.Final->SanitizerRan
                      ? (R.Final->SanitizerClean ? "clean" : "NOT clean")
                      : "not run");
}

} // namespace optiml
