//===- OptimizeCommand.cpp - clang-optiml optimize ------------------------===//
//
// Options, then the search library: the original is measured, edits are
// searched under verification, the best verified variant is re-checked and
// only then written.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "optiml/Driver/Events.h"
#include "optiml/Driver/Optimize.h"
#include "optiml/Search/Reward.h"
#ifdef OPTIML_WITH_LLM
#include "optiml/LLM/LLMConfig.h"
#endif
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/WithColor.h"
#include <cmath>
#include <memory>

using namespace llvm;

namespace optiml {
namespace tool {

cl::SubCommand OptimizeCommand(
    "optimize",
    "Search for a faster, verified version of the kernels in a CUDA program: "
    "edits are applied as checked rewrites, every candidate is compiled, "
    "verified against the original on the GPU and timed; the best is "
    "re-measured and only then written.\n\n"
    "  clang-optiml optimize saxpy.cu -o saxpy.fast.cu --budget 60\n"
    "  clang-optiml optimize k.cu --kernel transpose -i --time 10m "
    "--report r.html\n"
    "  clang-optiml optimize k.cu --dry-run     (any machine: the first "
    "level of candidate edits)\n"
    "\nExit status: 0 a verified faster variant was found (and written "
    "with -o or -i), 1 error, 2 usage error, 3 nothing verified faster was "
    "found (the input is left alone); --dry-run: 0, or 1 when the original "
    "does not compile\n" OPTIML_ENVIRONMENT_HELP);

static cl::OptionCategory OptimizeCategory("Optimize options");

static cl::opt<std::string> InputFile(cl::Positional, cl::desc("<file.cu>"),
                                      cl::sub(OptimizeCommand),
                                      cl::cat(OptimizeCategory));
static cl::opt<std::string> TargetName(
    "target",
    cl::desc("A CMake executable target of the build directory -p: its "
             "sources, flags and link line come from the build (CMake's file "
             "API; the query is written and cmake re-run once when there is "
             "no reply). Every CUDA source of the target whose kernels are "
             "launched is searched in turn (with FILE.cu, that source alone)"),
    cl::value_desc("name"), cl::sub(OptimizeCommand),
    cl::cat(OptimizeCategory));
static cl::list<std::string>
    Kernels("kernel",
            cl::desc("Kernel to optimize (repeatable; default: every "
                     "launched kernel)"),
            cl::value_desc("name"), cl::sub(OptimizeCommand),
            cl::cat(OptimizeCategory));
static cl::opt<std::string> Output("o", cl::desc("Write the best variant here"),
                                   cl::value_desc("out.cu"),
                                   cl::sub(OptimizeCommand),
                                   cl::cat(OptimizeCategory));
static cl::opt<bool> InPlace("i",
                             cl::desc("Replace the input with the best "
                                      "variant (atomically)"),
                             cl::sub(OptimizeCommand),
                             cl::cat(OptimizeCategory));
static cl::opt<std::string> ExportFixes(
    "export-fixes",
    cl::desc("Also write the best verified variant's change as YAML "
             "replacements for clang-apply-replacements"),
    cl::value_desc("fixes.yaml"), cl::sub(OptimizeCommand),
    cl::cat(OptimizeCategory));
static cl::opt<unsigned>
    Budget("budget",
           cl::desc("Candidate evaluations (default 30, or no limit with "
                    "--time)"),
           cl::value_desc("N"), cl::sub(OptimizeCommand),
           cl::cat(OptimizeCategory));
static cl::opt<std::string>
    TimeLimit("time", cl::desc("Wall-clock limit: 90s, 10m, 1h30m"),
              cl::value_desc("duration"), cl::sub(OptimizeCommand),
              cl::cat(OptimizeCategory));
static cl::opt<std::string>
    PolicyName("policy",
               cl::desc("catalog, llm, or mixed (default: mixed when an LLM "
                        "is configured, else catalog)"),
               cl::sub(OptimizeCommand), cl::cat(OptimizeCategory));
static cl::opt<unsigned> LLMProposals("llm-proposals",
                                      cl::desc("Edits asked of the LLM per "
                                               "expansion (default 4)"),
                                      cl::value_desc("K"), cl::init(4),
                                      cl::sub(OptimizeCommand),
                                      cl::cat(OptimizeCategory));
static cl::opt<bool> LLMRank("llm-rank",
                             cl::desc("Let the LLM rank its proposals; the "
                                      "ranking becomes the prior"),
                             cl::sub(OptimizeCommand),
                             cl::cat(OptimizeCategory));
static cl::opt<std::string> StrategyName(
    "strategy",
    cl::desc("mcts (default: explores beyond the first improving "
             "edit), greedy (follows the best state: fewer "
             "evaluations when the first suggestion is right), "
             "beam (the 3 best of each depth), random (a baseline); "
             "docs/optimize.md compares them"),
    cl::init("mcts"), cl::sub(OptimizeCommand), cl::cat(OptimizeCategory));
static cl::opt<std::string>
    BackupName("backup", cl::desc("MCTS backup: max (default) or mean"),
               cl::init("max"), cl::sub(OptimizeCommand),
               cl::cat(OptimizeCategory));
static cl::opt<std::string>
    RewardWeightsSpec("reward-weights",
                      cl::desc("Reward weights, e.g. speedup=1,dram-bytes=0.2,"
                               "bandwidth=0.1,sm-throughput=0.1,occupancy=0.1,"
                               "proxy-cap=0.1,min=-1 (docs/optimize.md)"),
                      cl::value_desc("list"), cl::sub(OptimizeCommand),
                      cl::cat(OptimizeCategory));
static cl::opt<std::string> ReportFile("report",
                                       cl::desc("Write an HTML report here"),
                                       cl::value_desc("report.html"),
                                       cl::sub(OptimizeCommand),
                                       cl::cat(OptimizeCategory));
static cl::opt<std::string>
    RunDirOpt("run-dir",
              cl::desc("Journal, candidates and snapshots (default: "
                       ".optiml/<name>-<time>)"),
              cl::value_desc("dir"), cl::sub(OptimizeCommand),
              cl::cat(OptimizeCategory));
static cl::opt<bool> Resume("resume",
                            cl::desc("Continue the search journaled in "
                                     "--run-dir without re-evaluating "
                                     "anything"),
                            cl::sub(OptimizeCommand),
                            cl::cat(OptimizeCategory));
static cl::opt<bool>
    DryRun("dry-run",
           cl::desc("Show the first level of candidate edits, each applied, "
                    "checked and compiled; needs no GPU"),
           cl::sub(OptimizeCommand), cl::cat(OptimizeCategory));
static cl::opt<bool>
    NoCompile("no-compile",
              cl::desc("With --dry-run: apply and check only, skip nvcc"),
              cl::sub(OptimizeCommand), cl::cat(OptimizeCategory));
static cl::opt<uint64_t> Seed("seed", cl::desc("Random seed (default 1)"),
                              cl::init(1), cl::sub(OptimizeCommand),
                              cl::cat(OptimizeCategory));
static cl::list<std::string> RunArgs(
    "run-arg", cl::desc("An argument for the program itself (repeatable)"),
    cl::value_desc("arg"), cl::sub(OptimizeCommand), cl::cat(OptimizeCategory));
static cl::list<std::string> BuildArgs("build-arg",
                                       cl::desc(OPTIML_BUILD_ARG_HELP),
                                       cl::value_desc("flag"),
                                       cl::sub(OptimizeCommand),
                                       cl::cat(OptimizeCategory));
static cl::list<std::string> Sources("source", cl::desc(OPTIML_SOURCE_HELP),
                                     cl::value_desc("file"),
                                     cl::sub(OptimizeCommand),
                                     cl::cat(OptimizeCategory));
static cl::opt<std::string> WorkDir("workdir", cl::desc(OPTIML_WORKDIR_HELP),
                                    cl::value_desc("dir"),
                                    cl::sub(OptimizeCommand),
                                    cl::cat(OptimizeCategory));
static cl::opt<unsigned> Replays("replays",
                                 cl::desc("Timed replays per candidate "
                                          "(default 20)"),
                                 cl::init(20), cl::sub(OptimizeCommand),
                                 cl::cat(OptimizeCategory));
static cl::opt<unsigned> VerifyFirst(
    "verify-first",
    cl::desc("Launches of each target kernel verified from the start (default "
             "3; the last launch is verified too, see --verify-last). Fewer "
             "make each evaluation of a program with large buffers cheaper"),
    cl::init(3), cl::value_desc("N"), cl::sub(OptimizeCommand),
    cl::cat(OptimizeCategory));
static cl::opt<bool> VerifyLast(
    "verify-last",
    cl::desc("Also verify the last launch of each target kernel (default "
             "true). When two runs of the original disagree only there "
             "(float noise grown over the iterations of a solver loop, such "
             "as an atomicAdd dot product), optimize says so in a note and "
             "verifies the first --verify-first launches alone, as "
             "--verify-last=false does; --verify-last=true refuses such an "
             "original instead. A resumed search verifies as it started"),
    cl::init(true), cl::sub(OptimizeCommand), cl::cat(OptimizeCategory));
static cl::opt<std::string> EvalCacheDir(
    "eval-cache",
    cl::desc("Share evaluations between runs through this directory: a "
             "candidate already measured for the same original, kernels, "
             "run arguments, settings, nvcc and GPU is not run again (it "
             "still counts against --budget; the journal marks it cached)"),
    cl::value_desc("dir"), cl::sub(OptimizeCommand), cl::cat(OptimizeCategory));
static cl::opt<std::string>
    SummaryJSON("summary-json",
                cl::desc("Write the run's outcome as JSON here (settings, "
                         "evaluations, best speedup and when it was found, "
                         "final check)"),
                cl::value_desc("file"), cl::sub(OptimizeCommand),
                cl::cat(OptimizeCategory));
static cl::opt<unsigned> RetimeEvery(
    "retime-every",
    cl::desc("Time the original again after this many candidates (default "
             "8; it is also re-timed whenever a candidate is the fastest "
             "yet; 0: only then)"),
    cl::value_desc("N"), cl::init(8), cl::sub(OptimizeCommand),
    cl::cat(OptimizeCategory));
static cl::opt<unsigned> FinalRounds(
    "final-rounds",
    cl::desc("Interleaved original/candidate timing rounds of the final "
             "check of the best candidate (default 5, each with 100 "
             "replays; at least 1)"),
    cl::value_desc("N"), cl::init(5), cl::sub(OptimizeCommand),
    cl::cat(OptimizeCategory));
static cl::opt<bool> NoSanitize(
    "no-sanitize",
    cl::desc("Skip compute-sanitizer memcheck and racecheck in the final "
             "check (faster; out-of-bounds accesses and races are then "
             "caught only through wrong outputs)"),
    cl::sub(OptimizeCommand), cl::cat(OptimizeCategory));
static cl::opt<std::string> DbFile(
    "db",
    cl::desc("Record the verified best in this database (default: \"db\": "
             "{\"path\": ...} in the project's .clang-optiml.json, else "
             "<build-dir>/clang-optiml.db with -p, else "
             ".optiml/clang-optiml.db; see 'clang-optiml db --help')"),
    cl::value_desc("file"), cl::sub(OptimizeCommand),
    cl::cat(OptimizeCategory));
static cl::opt<bool> NoDb("no-db",
                          cl::desc("Do not record the verified best in the "
                                   "database"),
                          cl::sub(OptimizeCommand), cl::cat(OptimizeCategory));
static cl::opt<std::string> ProgressFormat(
    "progress",
    cl::desc("How progress is told on stderr: text (default; one rewritten "
             "line on a terminal) or json (one JSON object per line: the "
             "events an editor follows, docs/editor.md)"),
    cl::value_desc("text|json"), cl::init("text"), cl::sub(OptimizeCommand),
    cl::cat(OptimizeCategory));
static cl::opt<double> RunTimeout("timeout",
                                  cl::desc("Seconds one program run may take "
                                           "(default 300)"),
                                  cl::init(300), cl::sub(OptimizeCommand),
                                  cl::cat(OptimizeCategory));

/// "90s", "10m", "1h30m", "600" (seconds).
static Expected<double> parseDuration(StringRef S) {
  StringRef Rest = S.trim();
  double Total = 0;
  if (Rest.empty())
    return createStringError("--time: empty duration");
  while (!Rest.empty()) {
    size_t Digits = Rest.find_first_not_of("0123456789.");
    double V;
    if (Digits == 0 || Rest.take_front(Digits).getAsDouble(V))
      return createStringError(
          "--time: cannot read '%s'; write e.g. 90s, 10m or 1h30m",
          S.str().c_str());
    Rest = Rest.drop_front(std::min(Digits, Rest.size()));
    char Unit = Rest.empty() ? 's' : Rest.front();
    Rest = Rest.drop_front(Rest.empty() ? 0 : 1);
    switch (Unit) {
    case 's':
      Total += V;
      break;
    case 'm':
      Total += V * 60;
      break;
    case 'h':
      Total += V * 3600;
      break;
    default:
      return createStringError(
          "--time: unknown unit '%c' in '%s' (use s, m or h)", Unit,
          S.str().c_str());
    }
  }
  if (Total <= 0)
    return createStringError("--time: the duration must be positive");
  return Total;
}

/// What the command line asks, as the session's request (the command
/// line's own parsing: durations and reward weights).
static Expected<OptimizeRequest> requestFromOptions(const CommandContext &Ctx) {
  OptimizeRequest R;
  R.InputFile = InputFile;
  R.Argv0 = Ctx.Argv0;
  R.Analyze = commonAnalyzeOptions(Ctx);
  R.Kernels.assign(Kernels.begin(), Kernels.end());
  R.Output = Output;
  R.InPlace = InPlace;
  R.ExportFixes = ExportFixes;
  R.Report = ReportFile;
  R.SummaryJSON = SummaryJSON;
  R.Policy = PolicyName;
  R.LLMProposals = LLMProposals;
  R.LLMRank = LLMRank;
#ifdef OPTIML_WITH_LLM
  // Read only where a model may be used, as the policy reads it.
  if (PolicyName != "catalog") {
    auto LLM = explicitLLMSettings();
    if (!LLM)
      return LLM.takeError();
    R.LLM = std::make_shared<const llm::LLMSettings>(std::move(*LLM));
  }
#endif
  R.Strategy = StrategyName;
  R.Backup = BackupName;
  if (Budget.getNumOccurrences())
    R.Budget = unsigned(Budget);
  if (!TimeLimit.empty()) {
    auto D = parseDuration(TimeLimit);
    if (!D)
      return make_error<RequestError>(toString(D.takeError()));
    R.TimeLimitSeconds = *D;
    R.TimeText = TimeLimit;
  }
  if (!RewardWeightsSpec.empty())
    if (Error E = parseRewardWeights(RewardWeightsSpec, R.Reward.Weights))
      return make_error<RequestError>(toString(std::move(E)));
  R.Seed = Seed;
  R.RunDir = RunDirOpt;
  R.Resume = Resume;
  R.DryRun = DryRun;
  R.NoCompile = NoCompile;
  R.RunArgs.assign(RunArgs.begin(), RunArgs.end());
  R.BuildArgs.assign(BuildArgs.begin(), BuildArgs.end());
  R.Sources.assign(Sources.begin(), Sources.end());
  R.WorkDir = WorkDir;
  R.TimeoutSeconds = RunTimeout;
  R.Replays = Replays;
  R.VerifyFirst = VerifyFirst;
  R.VerifyLast = VerifyLast;
  R.VerifyLastGiven = VerifyLast.getNumOccurrences() > 0;
  R.EvalCacheDir = EvalCacheDir;
  R.RetimeEvery = RetimeEvery;
  R.FinalRounds = FinalRounds;
  R.NoSanitize = NoSanitize;
  R.DbFile = DbFile;
  R.NoDb = NoDb;
  R.Log = verboseLog();
  return R;
}

namespace {

/// The session on a terminal or in a log: result lines on stdout, the rest
/// on stderr; progress on one rewritten line on a terminal, one line per
/// evaluation and per phase in a log (the final check can take minutes).
class ConsoleObserver : public SessionObserver {
public:
  void message(StringRef Text) override {
    clearLine();
    errs() << Text << "\n";
  }
  void warning(StringRef Text) override {
    clearLine();
    WithColor::warning(errs(), "clang-optiml") << Text << "\n";
  }
  void note(StringRef Text) override {
    clearLine();
    WithColor::note(errs(), "clang-optiml") << Text << "\n";
  }
  void result(StringRef Text) override {
    clearLine();
    outs() << Text;
    outs().flush();
  }
  void searchFailed(Error E) override {
    clearLine();
    reportError(std::move(E));
  }
  void started(const SessionStart &S) override {
    errs() << "clang-optiml: optimizing " << join(S.Kernels, ", ") << " in "
           << S.Input << " (" << S.Strategy << ", " << S.Policy << " policy, "
           << (S.Budget ? std::to_string(S.Budget) + " evaluations"
                        : std::string("no evaluation limit"))
           << (S.Seconds > 0 ? ", " + formatDuration(S.Seconds) : std::string())
           << "); journal: " << S.RunDir << "/journal.jsonl"
           << (S.EvalCacheDir.empty() ? std::string()
                                      : "; evaluation cache: " + S.EvalCacheDir)
           << "\n";
    LastDone = ~0u;
  }
  void progress(const SearchProgress &P) override {
    if (!Tty && P.Done == LastDone && !P.Phase)
      return;
    LastDone = P.Done;
    std::string Line = progressLine(P);
    if (!Tty) {
      errs() << Line << "\n";
      return;
    }
    if (Line.size() > 100)
      Line = Line.substr(0, 97) + "...";
    errs() << "\r\x1b[K" << Line;
    errs().flush();
    Drawn = true;
  }

private:
  void clearLine() {
    if (Drawn)
      errs() << "\r\x1b[K";
    Drawn = false;
  }
  bool Tty = errs().is_displayed();
  bool Drawn = false;
  unsigned LastDone = ~0u;
};

/// The session's events as JSON lines on stderr (--progress=json, the
/// editor's protocol; docs/editor.md), one write per line.
class JsonObserver : public JsonEventWriter {
public:
  JsonObserver() : JsonEventWriter(errs()) {}
  void result(StringRef Text) override {
    JsonEventWriter::result(Text);
    outs() << Text;
    outs().flush();
  }
};

} // namespace

/// The exit status of a session's end.
static int finish(Expected<SessionOutcome> O, JsonEventWriter *Json) {
  if (!O) {
    int Status = ExitError;
    handleAllErrors(
        O.takeError(),
        [&](const RequestError &E) {
          Status = reportUsageError(createStringError(E.message()));
        },
        [&](std::unique_ptr<ErrorInfoBase> E) {
          Status = reportError(Error(std::move(E)));
        });
    return Status;
  }
  if (Json)
    Json->outcome(*O);
  if (O->FailedSearches)
    return ExitError;
  if (DryRun)
    return ExitSuccess;
  return O->Improved ? ExitSuccess : ExitNotAccepted;
}

int runOptimize(const CommandContext &Ctx) {
  if (InputFile.empty() && TargetName.empty())
    return reportUsageError(
        createStringError("no input: optimize FILE.cu, or -p BUILD --target "
                          "NAME for a CMake target"));
  if (ProgressFormat != "text" && ProgressFormat != "json")
    return reportUsageError(
        createStringError("unknown --progress '%s' (expected text or json)",
                          ProgressFormat.c_str()));
  auto R = requestFromOptions(Ctx);
  ConsoleObserver Console;
  JsonObserver Json;
  bool UseJson = ProgressFormat == "json";
  SessionObserver &Obs = UseJson ? static_cast<SessionObserver &>(Json)
                                 : static_cast<SessionObserver &>(Console);
  if (!R)
    return finish(R.takeError(), nullptr);
  if (!TargetName.empty())
    return finish(optimizeTarget(*R, TargetName, Obs),
                  UseJson ? &Json : nullptr);
  return finish(optimizeFile(*R, Obs), UseJson ? &Json : nullptr);
}

} // namespace tool
} // namespace optiml
