//===- OptimizeCommand.cpp - clang-optiml optimize ------------------------===//
//
// Options, then the search library: the original is measured, edits are
// searched under verification, the best verified variant is re-checked and
// only then written.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "OptimizePolicy.h"
#include "optiml/Db/Database.h"
#include "optiml/Eval/Builder.h"
#include "optiml/Eval/Runner.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Frontend/CMakeFileApi.h"
#include "optiml/Report/Report.h"
#include "optiml/Search/CatalogPolicy.h"
#include "optiml/Search/EvalAdapter.h"
#include "optiml/Search/EvalCache.h"
#include "optiml/Search/Journal.h"
#include "optiml/Search/Search.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/ASTUnit.h"
#include <set>
#ifdef OPTIML_WITH_LLM
#include "optiml/LLM/ChatClient.h"
#include "optiml/LLM/LLMConfig.h"
#include "optiml/LLM/Secrets.h"
#include "optiml/Search/LLMPolicy.h"
#endif
#include "optiml/Support/FileUtil.h"
#include "optiml/Support/Sort.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/WithColor.h"
#include <chrono>
#include <cmath>
#include <ctime>
#include <future>
#include <map>

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
             "true). --verify-last=false is for an iterative program whose "
             "float noise grows with the iterations until two runs of the "
             "original disagree at the end (an atomicAdd dot product in a "
             "solver loop): only the first --verify-first launches are then "
             "verified"),
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

static std::string fmtDuration(double S) {
  if (S < 0)
    return "?";
  unsigned T = unsigned(std::lround(S));
  if (T >= 3600)
    return formatv("{0}h{1:2}m", T / 3600, (T % 3600) / 60);
  if (T >= 60)
    return formatv("{0}m{1:2}s", T / 60, T % 60);
  return formatv("{0}s", T);
}

/// The policy in use: --policy, or the default it resolved to.
static std::string ResolvedPolicy = "catalog";

static std::string commandLine() {
  std::string S = "clang-optiml optimize " + InputFile;
  for (const std::string &K : Kernels)
    S += " --kernel " + K;
  if (Budget.getNumOccurrences())
    S += " --budget " + std::to_string(Budget);
  if (!TimeLimit.empty())
    S += " --time " + TimeLimit;
  S += " --strategy " + StrategyName + " --policy " + ResolvedPolicy;
  S += " --seed " + std::to_string(Seed);
  return S;
}

static Error checkOptions() {
  if (InputFile.empty() && TargetName.empty())
    return createStringError("no input: optimize FILE.cu, or -p BUILD "
                             "--target NAME for a CMake target");
  if (InPlace && !Output.empty())
    return createStringError("-o and -i are exclusive: write the best "
                             "variant to a new file or over the input, not "
                             "both");
  if (InPlace && !ExportFixes.empty())
    return createStringError("-i and --export-fixes are exclusive: the fixes "
                             "apply to the input as it is");
  if (Resume && RunDirOpt.empty())
    return createStringError("--resume needs --run-dir: the directory of the "
                             "run to continue");
  if (!parseStrategy(StrategyName))
    return createStringError("unknown --strategy '%s' (expected mcts, "
                             "greedy, beam or random)",
                             StrategyName.c_str());
  if (BackupName != "max" && BackupName != "mean")
    return createStringError("unknown --backup '%s' (expected max or mean)",
                             BackupName.c_str());
  if (!PolicyName.empty() && PolicyName != "catalog" && PolicyName != "llm" &&
      PolicyName != "mixed")
    return createStringError("unknown --policy '%s' (expected catalog, llm "
                             "or mixed)",
                             PolicyName.c_str());
#ifndef OPTIML_WITH_LLM
  if (PolicyName == "llm" || PolicyName == "mixed")
    return createStringError(
        "--policy %s: this clang-optiml was built without LLM support "
        "(OPTIML_WITH_LLM=OFF); use --policy catalog",
        PolicyName.c_str());
#endif
  if (LLMProposals < 1 || LLMProposals > 32)
    return createStringError("--llm-proposals must be between 1 and 32");
  if (Budget.getNumOccurrences() && Budget == 0)
    return createStringError("--budget must be at least 1");
  if (VerifyFirst < 1)
    return createStringError("--verify-first must be at least 1: the first "
                             "launch is where outputs are checked from a "
                             "poisoned start");
  if (FinalRounds < 1 || FinalRounds > 100)
    return createStringError("--final-rounds must be between 1 and 100");
  if (Replays == 0)
    return createStringError("--replays must be at least 1: a candidate's "
                             "time is the median of its replays");
  if (!(RunTimeout > 0))
    return createStringError("--timeout must be a positive number of seconds");
  for (const std::string &S : Sources)
    if (!sys::fs::is_regular_file(S))
      return createStringError("--source '%s': no such file", S.c_str());
  if (!WorkDir.empty() && !sys::fs::is_directory(WorkDir))
    return createStringError("--workdir '%s' is not a directory",
                             WorkDir.c_str());
  if (Error E = checkNvccFlags(BuildArgs, "--build-arg"))
    return E;
  if (NoCompile && !DryRun)
    return createStringError("--no-compile only applies to --dry-run");
  if (DryRun && !EvalCacheDir.empty())
    return createStringError("--eval-cache needs a search: --dry-run "
                             "evaluates nothing");
  if (NoDb && !DbFile.empty())
    return createStringError("--db and --no-db are exclusive");
  if (DryRun && !SummaryJSON.empty())
    return createStringError("--summary-json needs a search: --dry-run "
                             "writes no summary");
  return Error::success();
}

/// The kernels to optimize: --kernel names (checked), else every launched one.
static Expected<std::vector<std::string>> targetNames(const KernelModel &M) {
  std::vector<std::string> Names;
  if (M.Kernels.empty())
    return createStringError("'%s' has no CUDA kernels (__global__ "
                             "functions) to optimize",
                             InputFile.c_str());
  for (const std::string &K : Kernels) {
    const KernelInfo *Found = M.findKernel(K);
    if (!Found)
      for (const KernelInfo &KI : M.Kernels)
        if (KI.Name == K)
          Found = &KI;
    if (!Found) {
      std::vector<std::string> All;
      for (const KernelInfo &KI : M.Kernels)
        All.push_back(KI.QualifiedName);
      return createStringError("no kernel named '%s' in '%s' (kernels: %s)",
                               K.c_str(), InputFile.c_str(),
                               join(All, ", ").c_str());
    }
    Names.push_back(Found->QualifiedName);
  }
  if (Names.empty())
    for (const KernelInfo &KI : M.Kernels)
      if (!KI.Launches.empty())
        Names.push_back(KI.QualifiedName);
  if (Names.empty())
    return createStringError("no kernel in '%s' is launched in that file, so "
                             "none can be measured; name one with --kernel",
                             InputFile.c_str());
  return Names;
}

/// One search rewrites one file: the one that defines the target kernels,
/// the input or a user file it includes (a header, an included .cu). Points
/// \p A there (its path, its text, a parse of it inside the input) and
/// returns the user files from the input down to the one that includes it
/// (empty when the kernels are the input's own).
static Expected<std::vector<std::string>>
focusOnDefiningFile(Analysis &A, ArrayRef<std::string> Targets) {
  std::string Input = translationUnitFile(A.Path, ParseConfig());
  std::map<std::string, std::vector<std::string>> ByFile;
  for (const std::string &T : Targets)
    if (const KernelInfo *K = A.Model.findKernel(T))
      ByFile[K->File.empty() ? Input : K->File].push_back(T);
  if (ByFile.size() > 1) {
    std::string Where;
    for (const auto &[File, Names] : ByFile)
      Where += (Where.empty() ? "" : "; ") + sys::path::filename(File).str() +
               ": " + join(Names, ", ");
    return createStringError(
        "the kernels to optimize are defined in several files (%s); a "
        "search rewrites one file: choose its kernels with --kernel",
        Where.c_str());
  }
  if (ByFile.empty() || ByFile.begin()->first == Input)
    return std::vector<std::string>();
  std::string File = ByFile.begin()->first;
  const clang::SourceManager &SM = A.TU.AST->getSourceManager();
  clang::FileID F = findFileID(SM, File);
  if (F.isInvalid())
    return createStringError("cannot find '%s' in the parse of '%s'",
                             File.c_str(), Input.c_str());
  std::vector<std::string> Chain = includeChain(SM, F);
  A.Code = SM.getBufferData(F).str();
  A.Config.MainFile = Input;
  A.Path = File;
  return Chain;
}

/// --target: the target's link line (libraries), for every build.
static std::vector<std::string> TargetLinkFlags;

static Expected<std::unique_ptr<Builder>>
makeBuilder(const AnalyzeOptions &AO, const Toolchain &Tools,
            const GpuQuery *Gpu, ArrayRef<std::string> IncludedFrom) {
  BuildOptions BO;
  BO.IncludedFrom = IncludedFrom;
  BO.CudaPath = Tools.CudaPath;
  BO.GpuArch = Gpu && !Gpu->Gpus.empty()   ? Gpu->Gpus.front().Arch
               : !AO.Tools.GpuArch.empty() ? AO.Tools.GpuArch
                                           : std::string("sm_90");
  if (Error E = setProgramBuildFlags(BO, AO, InputFile, BuildArgs))
    return std::move(E);
  BO.LinkFlags = TargetLinkFlags;
  auto Srcs = programSources(Sources);
  if (!Srcs)
    return Srcs.takeError();
  BO.ExtraSources = std::move(*Srcs);
  auto B = Builder::create(BO);
  if (B)
    noteBuilder(**B);
  return B;
}

// Why long: the command's steps in the order a user sees them (options,
// GPU, analysis, outputs refused early, database, evaluator, search,
// summary, writes); each step reports its own error and returns. The
// session library API (issue: drivers in libraries) is where it splits.
static int optimizeFile(const CommandContext &Ctx) {
  if (Error E = checkOptions())
    return reportUsageError(std::move(E));
  double Seconds = 0;
  if (!TimeLimit.empty()) {
    auto D = parseDuration(TimeLimit);
    if (!D)
      return reportUsageError(D.takeError());
    Seconds = *D;
  }
  RewardOptions RO;
  if (!RewardWeightsSpec.empty())
    if (Error E = parseRewardWeights(RewardWeightsSpec, RO.Weights))
      return reportUsageError(std::move(E));
  if (!sys::fs::exists(InputFile))
    return reportError(createStringError(
        "cannot open '%s': No such file or directory", InputFile.c_str()));

  // Say it before doing any work: measuring needs a GPU.
  std::optional<GpuQuery> Gpu;
  if (!DryRun) {
    Gpu = queryGpus();
    if (Gpu->Gpus.empty())
      return reportError(createStringError(
          "a CUDA GPU is needed to optimize '%s' (%s); run with --dry-run to "
          "see the candidate edits on this machine",
          InputFile.c_str(),
          Gpu->Problem.empty() ? "no GPU found" : Gpu->Problem.c_str()));
  }

  AnalyzeOptions AO = commonAnalyzeOptions(Ctx);
  AO.ListsInputs = true; // the variant database's key
  auto A = analyzeFile(InputFile, AO);
  if (!A)
    return reportError(A.takeError());
  // Before the kernels' launches are looked for: a file of kernels alone
  // launches none of them. (A file without kernels is told just that.)
  if (!A->Model.Kernels.empty())
    if (Error E = requireProgram(InputFile, *A, Sources))
      return reportError(std::move(E));
  auto Targets = targetNames(A->Model);
  if (!Targets)
    return reportError(Targets.takeError());
  std::string Input = A->Path;
  // The main file's text, for the database's key (A->Code becomes the
  // defining file's below).
  std::string InputCode = A->Code;
  auto IncludedFrom = focusOnDefiningFile(*A, *Targets);
  if (!IncludedFrom)
    return reportError(IncludedFrom.takeError());
  bool Included = !IncludedFrom->empty();
  if (Included)
    errs() << "clang-optiml: " << join(*Targets, ", ") << " defined in "
           << A->Path << ", which " << InputFile
           << " includes: the search rewrites that file\n";
  // Where -o puts the result, refused now rather than after the search.
  std::string Dest = InPlace ? A->Path : Output.getValue();
  if (!Output.empty()) {
    auto D = outputPathFor(Output, Input, A->Path);
    if (!D)
      return reportUsageError(D.takeError());
    Dest = std::move(*D);
  }
  auto Setup = makePolicy(*A, Ctx, Gpu, {PolicyName, LLMProposals, LLMRank});
  if (!Setup)
    return reportError(Setup.takeError());
  ResolvedPolicy = (*Setup)->Name;
  if (DryRun)
    return runDry(*A, *Targets, InputFile, NoCompile, **Setup, [&] {
      auto Tools = discoverToolchain(AO.Tools);
      return Tools ? makeBuilder(AO, *Tools, nullptr, *IncludedFrom)
                   : Expected<std::unique_ptr<Builder>>(Tools.takeError());
    });

  auto Tools = discoverToolchain(AO.Tools);
  if (!Tools)
    return reportError(Tools.takeError());
  auto B = makeBuilder(AO, *Tools, &*Gpu, *IncludedFrom);
  if (!B)
    return reportError(B.takeError());

  // Absolute from here on: the probe, nvcc and the sanitizer each run in a
  // private directory, where `.optiml/...` would name nothing.
  std::string RunDir = absolutePath(RunDirOpt);
  if (RunDir.empty()) {
    std::time_t Now = std::time(nullptr);
    char Stamp[32];
    std::strftime(Stamp, sizeof(Stamp), "%Y%m%d-%H%M%S", std::localtime(&Now));
    RunDir = absolutePath(
        (Twine(".optiml/") + sys::path::stem(InputFile) + "-" + Stamp).str());
  }
  std::string EvalCache = absolutePath(EvalCacheDir);

  // Refused now rather than after the search: a read-only file for -i, a
  // directory, a directory we cannot write in.
  for (const std::string &Out :
       {Dest, ReportFile.getValue(), SummaryJSON.getValue(),
        ExportFixes.getValue()})
    if (!Out.empty())
      if (Error E = checkOutputFile(Out))
        return reportError(std::move(E));
  // An existing database is opened now: a damaged one is reported before
  // the search, not after it. A missing one is created only when there is
  // a variant to record.
  std::unique_ptr<db::Database> Db;
  std::string DbPath;
  if (!NoDb) {
    auto P = db::databasePath(DbFile, sys::path::parent_path(A->Path),
                              AO.BuildDir, "");
    if (!P)
      return reportError(P.takeError());
    DbPath = *P;
    if (sys::fs::exists(DbPath)) {
      auto D = openVariantDatabase(DbFile, A->Path, AO.BuildDir);
      if (!D)
        return reportError(D.takeError());
      Db = std::move(*D);
    }
  }

  GpuEvaluatorOptions GO;
  GO.OriginalPath = A->Path;
  GO.Model = &A->Model;
  GO.Eval.Kernels = *Targets;
  GO.Eval.Replays = Replays;
  GO.Eval.VerifyFirst = VerifyFirst;
  GO.Eval.VerifyLast = VerifyLast;
  applyMetricsEnvironment(GO.Eval);
  GO.Eval.Gpus = *Gpu;
  GO.Eval.RunDir = RunDir + "/eval";
  GO.Eval.KeepRunDir = true;
  GO.Eval.Runner.ProbeLibrary = findProbeLibrary(Ctx.Argv0, "");
  GO.Eval.Runner.CudaPath = Tools->CudaPath;
  if (Error E = setProgramRun(GO.Eval.Runner, RunArgs, WorkDir))
    return reportError(std::move(E));
  GO.Eval.Runner.TimeoutSeconds = RunTimeout;
  GO.Eval.Runner.ComputeSanitizer = findComputeSanitizer(Tools->CudaPath);
  GO.RetimeEvery = RetimeEvery;
  if (verbose())
    GO.Eval.Log = &errs();
  GpuEvaluator Gpu0(**B, GO);
  std::unique_ptr<CachingEvaluator> Caching;
  if (!EvalCacheDir.empty()) {
    auto Cache = EvalCache::open(EvalCache, Gpu0.cacheContext());
    if (!Cache)
      return reportError(Cache.takeError());
    Caching = std::make_unique<CachingEvaluator>(Gpu0, std::move(*Cache));
  }
  CandidateEvaluator &Eval =
      Caching ? static_cast<CandidateEvaluator &>(*Caching) : Gpu0;

  SearchOptions SO;
  SO.FileName = A->Path;
  SO.Kernels = *Targets;
  SO.Strat = *parseStrategy(StrategyName);
  SO.Backup = BackupName == "mean" ? BackupMode::Mean : BackupMode::Max;
  SO.Budget = Budget.getNumOccurrences() ? unsigned(Budget)
              : Seconds > 0              ? 0u
                                         : 30u;
  SO.TimeLimitSeconds = Seconds;
  SO.Seed = Seed;
  SO.Reward = RO;
  SO.RunDir = RunDir;
  SO.Resume = Resume;
  SO.OnWarning = [](StringRef M) {
    WithColor::warning(errs(), "clang-optiml") << M << "\n";
  };
  SO.OnNote = [](StringRef M) {
    WithColor::note(errs(), "clang-optiml") << M << "\n";
  };
  SO.Final.Sanitize = !NoSanitize && !GO.Eval.Runner.ComputeSanitizer.empty();
  SO.Final.Rounds = FinalRounds;

  bool Tty = errs().is_displayed();
  errs() << "clang-optiml: optimizing " << join(*Targets, ", ") << " in "
         << InputFile << " (" << StrategyName << ", " << ResolvedPolicy
         << " policy, "
         << (SO.Budget ? std::to_string(SO.Budget) + " evaluations"
                       : std::string("no evaluation limit"))
         << (Seconds > 0 ? ", " + fmtDuration(Seconds) : std::string())
         << "); journal: " << RunDir << "/journal.jsonl"
         << (EvalCacheDir.empty() ? std::string()
                                  : "; evaluation cache: " + EvalCacheDir)
         << "\n";
  // On a terminal one line, rewritten; in a log, one line per evaluation
  // and per phase (the final check can take minutes).
  unsigned LastDone = ~0u;
  SO.OnProgress = [&](const SearchProgress &P) {
    if (!Tty && P.Done == LastDone && !P.Phase)
      return;
    LastDone = P.Done;
    std::string Line =
        formatv("[{0}/{1}] best {2:F2}x  eta {3}  {4}", P.Done,
                P.Budget ? std::to_string(P.Budget) : std::string("-"),
                P.BestSpeedup, fmtDuration(P.EtaSeconds), P.Current)
            .str();
    if (!Tty) {
      errs() << Line << "\n";
      return;
    }
    if (Line.size() > 100)
      Line = Line.substr(0, 97) + "...";
    errs() << "\r\x1b[K" << Line;
    errs().flush();
  };

  PolicySetup &PS = **Setup;
  SO.ShouldStop = [&PS] { return !PS.stopReason().empty(); };
  auto R = runSearch(A->Code, SO, PS.policy(), PS.applier(), Eval);
  if (Tty)
    errs() << "\r\x1b[K";
  if (!R) {
    std::string Why = toString(R.takeError());
    if (StringRef(Why).contains("own evaluation (nondeterministic") &&
        VerifyLast)
      Why += " (if only its last launch disagrees, float noise grown over "
             "many iterations, --verify-last=false verifies the first "
             "launches alone)";
    return reportError(createStringError(Why));
  }
  if (R->StopReason == "stopped" && !PS.stopReason().empty())
    R->StopReason = PS.stopReason();

  ReportInfo Info{InputFile, commandLine(), StrategyName, ResolvedPolicy,
                  Eval.describe()};
  printSummary(outs(), *R, Info);
  outs() << formatv("original: {0} reference run(s), timed {1} time(s) in "
                    "this run\n",
                    Gpu0.referenceRuns(), Gpu0.originalTimings());
  if (Caching) {
    outs() << formatv("evaluation cache: {0} of {1} evaluation(s) served "
                      "from {2}",
                      R->EvaluationsCached, R->Evaluations, EvalCacheDir);
    if (R->Final && R->Final->Cached)
      outs() << " (and the final check)";
    outs() << "\n";
    for (const std::string &E : Caching->storeErrors())
      WithColor::warning(errs(), "clang-optiml")
          << "evaluation cache: " << E << "\n";
  }
  JournalHeader H;
  H.File = A->Path;
  H.Kernels = *Targets;
  H.Strategy = StrategyName;
  H.Policy = ResolvedPolicy;
  H.Seed = Seed;
  H.Budget = SO.Budget;
  if (!SummaryJSON.empty()) {
    if (Error E = writeFileAtomically(absolutePath(SummaryJSON),
                                      summaryToJSON(*R, H, Eval.describe())))
      return reportError(std::move(E));
  }
  if (!ReportFile.empty()) {
    if (Error E = writeFileAtomically(absolutePath(ReportFile),
                                      renderHtmlReport(*R, Info)))
      return reportError(std::move(E));
    outs() << "report: " << ReportFile << "\n";
  }
  // Nothing verified faster: the input is left alone, and the status says
  // so (summary, report and journal are written all the same).
  if (!R->Improved)
    return ExitNotAccepted;

  // Kept in the run directory whatever else happens.
  if (Error E = writeFileAtomically(RunDir + "/best.cu", R->FinalSource))
    return reportError(std::move(E));
  // Outside a git project, a diff of an included file keeps the library's
  // name for it, relative to the input's directory.
  bool Rename = !Included || sys::fs::exists(projectRoot(Input) + "/.git");
  if (Error E = writeFileAtomically(
          RunDir + "/best.diff",
          Rename ? projectRelativeDiff(R->FinalDiff, A->Path) : R->FinalDiff))
    return reportError(std::move(E));
  if (!ExportFixes.empty()) {
    if (Error E = exportFixes(ExportFixes, A->Path, A->Code, R->FinalSource,
                              "the best verified variant found by "
                              "clang-optiml optimize"))
      return reportError(std::move(E));
    outs() << "fixes: " << ExportFixes << "\n";
  }
  if (!Dest.empty()) {
    if (Error E = writeFileAtomically(absolutePath(Dest), R->FinalSource))
      return reportError(std::move(E));
    outs() << "wrote " << Dest << "\n";
  } else {
    outs() << "best variant" << (Included ? " of " + A->Path : std::string())
           << ": " << RunDir << "/best.cu ("
           << (Included ? "pass -o DIR or -i to write it"
                        : "pass -o FILE or -i to write it")
           << ")\n";
  }
  if (!R->FinalFlags.empty())
    outs() << "note: the best variant is built with extra nvcc flags: "
           << join(R->FinalFlags, " ") << "\n";
  if (!NoDb && !Db && R->FinalSpeedup > 1) {
    auto D = openVariantDatabase(DbFile, A->Path, AO.BuildDir);
    if (D)
      Db = std::move(*D);
    else
      WithColor::warning(errs(), "clang-optiml")
          << "the variant was not recorded: " << toString(D.takeError())
          << "\n";
  }
  if (Db && R->FinalSpeedup > 1) {
    // The run's summary is the verification record: the final check's
    // timings, sanitizer verdict and the evaluator that measured them.
    std::string Record = summaryToJSON(*R, H, Eval.describe());
    std::string Diff = projectRelativeDiff(R->FinalDiff, A->Path);
    VariantToRecord V;
    V.TU = &A->TU;
    V.File = A->Path;
    V.Original = InputCode;
    V.Kernels = *Targets;
    V.Gpu = &Gpu->Gpus.front();
    V.NvccVersion = (*B)->nvccVersion();
    V.NvccFlags = (*B)->flags().vec();
    V.Source = R->FinalSource;
    V.Diff = Diff;
    V.Speedup = R->FinalSpeedup;
    V.Verification = Record;
    V.VariantFlags = R->FinalFlags;
    recordVariant(*Db, V);
  }
  return 0;
}

} // namespace tool
} // namespace optiml

namespace optiml {
namespace tool {

/// --target: every CUDA source of a CMake target whose kernels are
/// launched, searched in turn as a program of the target's sources and
/// link line. A kernel defined in a header that several sources include is
/// searched once.
static int optimizeTarget(const CommandContext &Ctx) {
  AnalyzeOptions AO = commonAnalyzeOptions(Ctx);
  AO.ListsInputs = true; // the variant database's key
  if (AO.BuildDir.empty())
    return reportUsageError(createStringError(
        "--target reads a CMake target: name its build directory with -p "
        "(clang-optiml optimize -p build --target %s)",
        TargetName.c_str()));
  auto T = readCMakeTarget(AO.BuildDir, TargetName);
  if (!T)
    return reportError(T.takeError());
  if (T->Type != "EXECUTABLE")
    return reportError(createStringError(
        "target '%s' is a %s; optimize runs a program: name the executable "
        "that uses it",
        TargetName.c_str(), T->Type.c_str()));
  if (verbose())
    for (const std::string &N : T->Notes)
      errs() << "clang-optiml: target " << T->Name << ": link " << N << "\n";
  std::vector<std::string> Cuda;
  for (const CMakeSource &S : T->Sources)
    if (S.Language == "CUDA")
      Cuda.push_back(S.Path);
  if (!InputFile.empty()) {
    std::string Abs = absolutePath(InputFile);
    if (!is_contained(Cuda, Abs))
      return reportError(createStringError(
          "'%s' is not a CUDA source of target '%s' (its CUDA sources: %s)",
          InputFile.c_str(), T->Name.c_str(), join(Cuda, ", ").c_str()));
    Cuda = {Abs};
  }
  const std::vector<std::string> WantedKernels(Kernels.begin(), Kernels.end());
  const std::string RunDirBase = RunDirOpt;
  std::set<std::string> Searched; // "file\0kernel"
  std::vector<std::pair<std::string, std::vector<std::string>>> Plan;
  for (const std::string &File : Cuda) {
    auto A = analyzeFile(File, AO);
    if (!A)
      return reportError(A.takeError());
    std::vector<std::string> Names;
    for (const KernelInfo &K : A->Model.Kernels) {
      bool Wanted = WantedKernels.empty()
                        ? !K.Launches.empty()
                        : is_contained(WantedKernels, K.QualifiedName) ||
                              is_contained(WantedKernels, K.Name);
      std::string Id =
          (K.File.empty() ? File : K.File) + '\0' + K.QualifiedName;
      if (Wanted && Searched.insert(Id).second)
        Names.push_back(K.QualifiedName);
    }
    if (!Names.empty())
      Plan.push_back({File, Names});
  }
  if (Plan.empty())
    return reportError(createStringError(
        "no launched kernel%s in the CUDA sources of target '%s' (%s)",
        WantedKernels.empty() ? ""
                              : (" named " + join(WantedKernels, ", ")).c_str(),
        T->Name.c_str(), join(Cuda, ", ").c_str()));
  TargetLinkFlags = T->LinkFlags;
  int Status = ExitNotAccepted;
  bool Failed = false;
  for (size_t I = 0; I < Plan.size(); ++I) {
    const auto &[File, Names] = Plan[I];
    outs() << "clang-optiml: target " << T->Name << ": " << File << " ("
           << (I + 1) << " of " << Plan.size() << "): " << join(Names, ", ")
           << "\n";
    outs().flush();
    InputFile = File;
    Sources.clear();
    for (const CMakeSource &S : T->Sources)
      if (S.Path != File)
        Sources.push_back(S.Path);
    Kernels.clear();
    for (const std::string &N : Names)
      Kernels.push_back(N);
    if (!RunDirBase.empty() && Plan.size() > 1)
      RunDirOpt = RunDirBase + "/" + sys::path::stem(File).str();
    int RC = optimizeFile(Ctx);
    if (RC == ExitSuccess)
      Status = ExitSuccess;
    else if (RC != ExitNotAccepted)
      Failed = true;
  }
  return Failed ? ExitError : Status;
}

int runOptimize(const CommandContext &Ctx) {
  if (!TargetName.empty()) {
    if (Error E = checkOptions())
      return reportUsageError(std::move(E));
    if (!Sources.empty())
      return reportUsageError(createStringError(
          "--source and --target are exclusive: the target's sources come "
          "from the build"));
    return optimizeTarget(Ctx);
  }
  return optimizeFile(Ctx);
}

} // namespace tool
} // namespace optiml
