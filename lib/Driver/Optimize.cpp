//===- Optimize.cpp - The optimize session --------------------------------===//
//
// The session's steps in the order a user sees them: the request checked,
// the GPU asked for, the program analysed, outputs refused early, the
// database opened, the evaluator and the search set up, the search run, its
// summary told, and only then the verified best written and recorded in the
// variant database (docs/db.md).
//
//===----------------------------------------------------------------------===//

#include "optiml/Driver/Optimize.h"
#include "SessionPolicy.h"
#include "optiml/Db/Database.h"
#include "optiml/Db/Key.h"
#include "optiml/Driver/Program.h"
#include "optiml/Eval/Builder.h"
#include "optiml/Eval/Runner.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Frontend/CMakeFileApi.h"
#include "optiml/Frontend/CudaToolchain.h"
#include "optiml/Frontend/Parse.h"
#include "optiml/Report/Report.h"
#include "optiml/Search/EvalAdapter.h"
#include "optiml/Search/EvalCache.h"
#include "optiml/Search/Journal.h"
#include "optiml/Support/FileUtil.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/ASTUnit.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <ctime>
#include <map>
#include <set>

using namespace llvm;

namespace optiml {

char RequestError::ID = 0;
SessionObserver::~SessionObserver() = default;

static Error requestError(const Twine &Message) {
  return make_error<RequestError>(Message.str());
}

Error checkRequest(const OptimizeRequest &R) {
  if (R.InPlace && !R.Output.empty())
    return requestError("-o and -i are exclusive: write the best variant to "
                        "a new file or over the input, not both");
  if (R.InPlace && !R.ExportFixes.empty())
    return requestError("-i and --export-fixes are exclusive: the fixes "
                        "apply to the input as it is");
  if (R.Resume && R.RunDir.empty())
    return requestError("--resume needs --run-dir: the directory of the run "
                        "to continue");
  if (!parseStrategy(R.Strategy))
    return requestError("unknown --strategy '" + R.Strategy +
                        "' (expected mcts, greedy, beam or random)");
  if (R.Backup != "max" && R.Backup != "mean")
    return requestError("unknown --backup '" + R.Backup +
                        "' (expected max or mean)");
  if (!R.Policy.empty() && R.Policy != "catalog" && R.Policy != "llm" &&
      R.Policy != "mixed")
    return requestError("unknown --policy '" + R.Policy +
                        "' (expected catalog, llm or mixed)");
  if (!policyAvailable(R.Policy))
    return requestError("--policy " + R.Policy +
                        ": this clang-optiml was built without LLM support "
                        "(OPTIML_WITH_LLM=OFF); use --policy catalog");
  if (R.LLMProposals < 1 || R.LLMProposals > 32)
    return requestError("--llm-proposals must be between 1 and 32");
  if (R.Budget && *R.Budget == 0)
    return requestError("--budget must be at least 1");
  if (R.VerifyFirst < 1)
    return requestError("--verify-first must be at least 1: the first launch "
                        "is where outputs are checked from a poisoned start");
  if (R.FinalRounds < 1 || R.FinalRounds > 100)
    return requestError("--final-rounds must be between 1 and 100");
  if (R.Replays == 0)
    return requestError("--replays must be at least 1: a candidate's time is "
                        "the median of its replays");
  if (!(R.TimeoutSeconds > 0))
    return requestError("--timeout must be a positive number of seconds");
  for (const std::string &S : R.Sources)
    if (!sys::fs::is_regular_file(S))
      return requestError("--source '" + S + "': no such file");
  if (!R.WorkDir.empty() && !sys::fs::is_directory(R.WorkDir))
    return requestError("--workdir '" + R.WorkDir + "' is not a directory");
  if (Error E = checkNvccFlags(R.BuildArgs, "--build-arg"))
    return requestError(toString(std::move(E)));
  if (R.NoCompile && !R.DryRun)
    return requestError("--no-compile only applies to --dry-run");
  if (R.DryRun && !R.EvalCacheDir.empty())
    return requestError("--eval-cache needs a search: --dry-run evaluates "
                        "nothing");
  if (R.NoDb && !R.DbFile.empty())
    return requestError("--db and --no-db are exclusive");
  if (R.DryRun && !R.SummaryJSON.empty())
    return requestError("--summary-json needs a search: --dry-run writes no "
                        "summary");
  return Error::success();
}

namespace {

/// What optimize records of its verified best.
struct VariantToRecord {
  const ParsedTU *TU = nullptr; ///< the original's parse: the files it read
  llvm::StringRef File;
  /// The main file's text as read (before the parse's normalization).
  llvm::StringRef Original;
  std::vector<std::string> Kernels;
  const GpuInfo *Gpu = nullptr;
  llvm::StringRef NvccVersion;
  std::vector<std::string> NvccFlags;
  llvm::StringRef Source, Diff;
  double Speedup = 1;
  llvm::StringRef Verification; ///< JSON
  std::vector<std::string> VariantFlags;
};

/// The database optimize records in (--db, the project's config, -p's
/// build directory or .optiml/; docs/db.md), opened for writing. Errors
/// name the file.
Expected<std::unique_ptr<db::Database>>
openVariantDatabase(StringRef Explicit, StringRef SourcePath,
                    StringRef BuildDir) {
  auto Path = db::databasePath(Explicit, sys::path::parent_path(SourcePath),
                               BuildDir, "");
  if (!Path)
    return Path.takeError();
  auto DB = db::Database::open(*Path);
  if (!DB)
    return createStringError(toString(DB.takeError()) +
                             " (--no-db optimizes without recording)");
  return DB;
}

/// Records \p V under its key and says so on \p Obs (a result line); a
/// failure is a warning (the variant is written all the same).
void recordVariant(db::Database &DB, const VariantToRecord &V,
                   SessionObserver &Obs) {
  db::VariantRecord R;
  R.Inputs =
      db::translationUnitInputs(V.TU->AST->getSourceManager(), V.Original);
  R.Id.InputsDigest = db::inputsDigest(R.Inputs);
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
    Obs.warning("the variant was not recorded: " + toString(Done.takeError()));
    return;
  }
  std::string Key = R.Key.substr(0, 12);
  std::string Where = " (" + DB.path() + ")\n";
  switch (*Done) {
  case db::RecordResult::Inserted:
    Obs.result("recorded in the database: " + Key + Where);
    break;
  case db::RecordResult::Replaced:
    Obs.result("recorded in the database: " + Key +
               ", replacing a slower variant" + Where);
    break;
  case db::RecordResult::KeptExisting:
    Obs.result("the database keeps the variant already recorded under " + Key +
               ", at least as fast" + Where);
    break;
  }
}

/// The evaluations the search may make: --budget, else none with a time
/// limit, else 30.
unsigned budgetOf(const OptimizeRequest &R) {
  return R.Budget ? *R.Budget : R.TimeLimitSeconds > 0 ? 0u : 30u;
}

/// The report's "how it was run" line.
std::string commandLine(const OptimizeRequest &R, StringRef Policy) {
  std::string S = "clang-optiml optimize " + R.InputFile;
  for (const std::string &K : R.Kernels)
    S += " --kernel " + K;
  if (R.Budget)
    S += " --budget " + std::to_string(*R.Budget);
  if (!R.TimeText.empty())
    S += " --time " + R.TimeText;
  S += " --strategy " + R.Strategy + " --policy " + Policy.str();
  S += " --seed " + std::to_string(R.Seed);
  return S;
}

/// The kernels to optimize: the request's names (checked), else every
/// launched one.
Expected<std::vector<std::string>> targetNames(const OptimizeRequest &R,
                                               const KernelModel &M) {
  std::vector<std::string> Names;
  const char *In = R.InputFile.c_str();
  if (M.Kernels.empty())
    return createStringError("'%s' has no CUDA kernels (__global__ "
                             "functions) to optimize",
                             In);
  for (const std::string &K : R.Kernels) {
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
                               K.c_str(), In, join(All, ", ").c_str());
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
                             In);
  return Names;
}

/// One search rewrites one file: the one that defines the target kernels,
/// the input or a user file it includes (a header, an included .cu). Points
/// \p A there (its path, its text, a parse of it inside the input) and
/// returns the user files from the input down to the one that includes it
/// (empty when the kernels are the input's own).
Expected<std::vector<std::string>>
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

Expected<std::unique_ptr<Builder>>
makeBuilder(const OptimizeRequest &R, const Toolchain &Tools,
            const GpuQuery *Gpu, ArrayRef<std::string> IncludedFrom) {
  const AnalyzeOptions &AO = R.Analyze;
  BuildOptions BO;
  BO.IncludedFrom = IncludedFrom;
  BO.CudaPath = Tools.CudaPath;
  BO.GpuArch = Gpu && !Gpu->Gpus.empty()   ? Gpu->Gpus.front().Arch
               : !AO.Tools.GpuArch.empty() ? AO.Tools.GpuArch
                                           : std::string("sm_90");
  if (Error E = setProgramBuildFlags(BO, AO, R.InputFile, R.BuildArgs, R.Log))
    return std::move(E);
  BO.LinkFlags = R.LinkFlags;
  auto Srcs = programSources(R.Sources);
  if (!Srcs)
    return Srcs.takeError();
  BO.ExtraSources = std::move(*Srcs);
  auto B = Builder::create(BO);
  if (B)
    noteBuilder(**B, R.Log);
  return B;
}

/// The run directory: --run-dir, else .optiml/<stem>-<time> (absolute: the
/// probe, nvcc and the sanitizer each run in a private directory).
std::string runDirectory(const OptimizeRequest &R) {
  std::string RunDir = absolutePath(R.RunDir);
  if (!RunDir.empty())
    return RunDir;
  std::time_t Now = std::time(nullptr);
  char Stamp[32];
  std::strftime(Stamp, sizeof(Stamp), "%Y%m%d-%H%M%S", std::localtime(&Now));
  return absolutePath(
      (Twine(".optiml/") + sys::path::stem(R.InputFile) + "-" + Stamp).str());
}

/// What the session has found out before the search: the analysis, the
/// kernels, where the result goes, the GPU and the builder.
struct Prepared {
  std::optional<GpuQuery> Gpu;
  std::optional<Analysis> A;
  std::vector<std::string> Targets;
  std::string Input;     ///< the main file, absolute
  std::string InputCode; ///< its text (the database's key)
  std::vector<std::string> IncludedFrom;
  std::string Dest;
  std::unique_ptr<PolicySetup> Policy;
};

Error prepare(const OptimizeRequest &R, SessionObserver &Obs, Prepared &P) {
  if (!sys::fs::exists(R.InputFile))
    return createStringError("cannot open '%s': No such file or directory",
                             R.InputFile.c_str());
  // Say it before doing any work: measuring needs a GPU.
  if (!R.DryRun) {
    P.Gpu = queryGpus();
    if (P.Gpu->Gpus.empty())
      return createStringError(
          "a CUDA GPU is needed to optimize '%s' (%s); run with --dry-run to "
          "see the candidate edits on this machine",
          R.InputFile.c_str(),
          P.Gpu->Problem.empty() ? "no GPU found" : P.Gpu->Problem.c_str());
  }
  AnalyzeOptions AO = R.Analyze;
  AO.ListsInputs = true; // the variant database's key
  auto A = analyzeFile(R.InputFile, AO);
  if (!A)
    return A.takeError();
  P.A.emplace(std::move(*A));
  // Before the kernels' launches are looked for: a file of kernels alone
  // launches none of them. (A file without kernels is told just that.)
  if (!P.A->Model.Kernels.empty())
    if (Error E = requireProgram(R.InputFile, *P.A, R.Sources))
      return E;
  auto Targets = targetNames(R, P.A->Model);
  if (!Targets)
    return Targets.takeError();
  P.Targets = std::move(*Targets);
  P.Input = P.A->Path;
  // The main file's text, for the database's key (A->Code becomes the
  // defining file's below).
  P.InputCode = P.A->Code;
  auto IncludedFrom = focusOnDefiningFile(*P.A, P.Targets);
  if (!IncludedFrom)
    return IncludedFrom.takeError();
  P.IncludedFrom = std::move(*IncludedFrom);
  if (!P.IncludedFrom.empty())
    Obs.message("clang-optiml: " + join(P.Targets, ", ") + " defined in " +
                P.A->Path + ", which " + R.InputFile +
                " includes: the search rewrites that file");
  // Where -o puts the result, refused now rather than after the search.
  P.Dest = R.InPlace ? P.A->Path : R.Output;
  if (!R.Output.empty()) {
    auto D = outputPathFor(R.Output, P.Input, P.A->Path);
    if (!D)
      return requestError(toString(D.takeError()));
    P.Dest = std::move(*D);
  }
  auto Setup = makePolicy(*P.A, R, P.Gpu, Obs);
  if (!Setup)
    return Setup.takeError();
  P.Policy = std::move(*Setup);
  return Error::success();
}

/// The evaluator's options for the request (the original, the kernels, the
/// run of the program, the probe and the sanitizer).
Expected<GpuEvaluatorOptions> evaluatorOptions(const OptimizeRequest &R,
                                               const Prepared &P,
                                               const Toolchain &Tools,
                                               StringRef RunDir) {
  GpuEvaluatorOptions GO;
  GO.OriginalPath = P.A->Path;
  GO.Model = &P.A->Model;
  GO.Eval.Kernels = P.Targets;
  GO.Eval.Replays = R.Replays;
  GO.Eval.VerifyFirst = R.VerifyFirst;
  GO.Eval.VerifyLast = R.VerifyLast;
  // Left at its default, --verify-last gives way to an original whose own
  // runs disagree only at the last launch (resumeVerification may undo it).
  GO.DropNoisyLast = R.VerifyLast && !R.VerifyLastGiven;
  applyMetricsEnvironment(GO.Eval);
  GO.Eval.Gpus = *P.Gpu;
  GO.Eval.RunDir = (RunDir + "/eval").str();
  GO.Eval.KeepRunDir = true;
  GO.Eval.Runner.ProbeLibrary = findProbeLibrary(R.Argv0, "");
  GO.Eval.Runner.CudaPath = Tools.CudaPath;
  if (Error E = setProgramRun(GO.Eval.Runner, R.RunArgs, R.WorkDir, R.Log))
    return std::move(E);
  GO.Eval.Runner.TimeoutSeconds = R.TimeoutSeconds;
  GO.Eval.Runner.ComputeSanitizer = findComputeSanitizer(Tools.CudaPath);
  GO.RetimeEvery = R.RetimeEvery;
  GO.Eval.Log = R.Log;
  return GO;
}

/// A resumed search verifies the launches its journal says: one that left
/// the last launch unverified (dropped, or --verify-last=false) goes on so,
/// one that verified it never drops it now. An explicit --verify-last=true
/// against a journal without the last launch is refused.
Error resumeVerification(const OptimizeRequest &R, StringRef RunDir,
                         GpuEvaluatorOptions &GO, SessionObserver &Obs) {
  if (!R.Resume)
    return Error::success();
  auto JC = readJournal(RunDir);
  if (!JC) {
    consumeError(JC.takeError()); // the search says what is wrong with it
    return Error::success();
  }
  // No header yet: the search starts afresh, as a new one would.
  if (!JC->Header)
    return Error::success();
  GO.DropNoisyLast = false;
  const JournalHeader &H = *JC->Header;
  if (H.VerifyLast)
    return Error::success();
  std::string Why =
      H.VerifyLastDropped.empty()
          ? std::string("--verify-last=false")
          : "the last launch dropped when it started: " + H.VerifyLastDropped;
  if (R.VerifyLastGiven && R.VerifyLast)
    return createStringError(
        "%s:%u: cannot resume: the journal's search verifies the first "
        "launches of each target alone (%s), this run asks for "
        "--verify-last=true; resume without it, or choose another --run-dir",
        JC->Path.c_str(), JC->HeaderLine, Why.c_str());
  GO.Eval.VerifyLast = false;
  GO.LastDropped = H.VerifyLastDropped;
  if (!R.VerifyLastGiven)
    Obs.note(formatv("the resumed search verifies as it started: the first "
                     "{0} launch(es) of each target, not the last ({1})",
                     GO.Eval.VerifyFirst, Why)
                 .str());
  return Error::success();
}

/// The error of a search that could not start, with a hint where the
/// original disagrees with itself.
std::string searchFailure(std::string Why, const CandidateEvaluator &Eval) {
  if (!StringRef(Why).contains("own evaluation (nondeterministic"))
    return Why;
  VerificationScope VS = Eval.verification();
  if (!VS.Dropped.empty())
    return Why + " (its last launch was already left unverified: its first "
                 "launches disagree too)";
  if (VS.LastLaunch)
    Why += " (if only its last launch disagrees, float noise grown over "
           "many iterations, --verify-last=false verifies the first "
           "launches alone)";
  return Why;
}

SearchOptions searchOptions(const OptimizeRequest &R, const Prepared &P,
                            StringRef RunDir, SessionObserver &Obs) {
  SearchOptions SO;
  SO.FileName = P.A->Path;
  SO.Kernels = P.Targets;
  SO.Strat = *parseStrategy(R.Strategy);
  SO.Backup = R.Backup == "mean" ? BackupMode::Mean : BackupMode::Max;
  SO.Budget = budgetOf(R);
  SO.TimeLimitSeconds = R.TimeLimitSeconds;
  SO.Seed = R.Seed;
  SO.Reward = R.Reward;
  SO.RunDir = RunDir.str();
  SO.Resume = R.Resume;
  SO.OnWarning = [&Obs](StringRef M) { Obs.warning(M); };
  SO.OnNote = [&Obs](StringRef M) { Obs.note(M); };
  SO.OnProgress = [&Obs](const SearchProgress &Pr) { Obs.progress(Pr); };
  PolicySetup *PS = P.Policy.get();
  SO.ShouldStop = [PS, &Obs] {
    return !PS->stopReason().empty() || Obs.shouldStop();
  };
  SO.Final.Rounds = R.FinalRounds;
  return SO;
}

/// The search's result told and written: summary, report, best variant,
/// diff, fixes, output and the database's record, in that order.
Expected<SessionOutcome> deliver(const OptimizeRequest &R, Prepared &P,
                                 SearchResult &SR, const Builder &B,
                                 GpuEvaluator &Gpu0, CandidateEvaluator &Eval,
                                 const CachingEvaluator *Caching,
                                 db::Database *Db, StringRef RunDir,
                                 SessionObserver &Obs) {
  Analysis &A = *P.A;
  ReportInfo Info{R.InputFile, commandLine(R, P.Policy->Name), R.Strategy,
                  P.Policy->Name, Eval.describe()};
  std::string Text;
  raw_string_ostream OS(Text);
  printSummary(OS, SR, Info);
  OS << formatv("original: {0} reference run(s), timed {1} time(s) in this "
                "run\n",
                Gpu0.referenceRuns(), Gpu0.originalTimings());
  VerificationScope VS = Eval.verification();
  if (!VS.LastLaunch)
    OS << formatv("verified: the first {0} launch(es) of each target, not the "
                  "last ({1})\n",
                  R.VerifyFirst,
                  VS.Dropped.empty()
                      ? std::string("--verify-last=false")
                      : "dropped: the original's two runs disagree there: " +
                            VS.Dropped);
  if (Caching) {
    OS << formatv("evaluation cache: {0} of {1} evaluation(s) served from {2}",
                  SR.EvaluationsCached, SR.Evaluations, R.EvalCacheDir);
    if (SR.Final && SR.Final->Cached)
      OS << " (and the final check)";
    OS << "\n";
  }
  Obs.result(Text);
  if (Caching)
    for (const std::string &E : Caching->storeErrors())
      Obs.warning("evaluation cache: " + E);

  SessionOutcome O;
  O.Improved = SR.Improved;
  O.Speedup = SR.FinalSpeedup;
  O.Conclusion = SR.Conclusion;
  O.StopReason = SR.StopReason;
  O.File = A.Path;
  O.Included = !P.IncludedFrom.empty();
  O.RunDir = RunDir.str();
  O.ExtraFlags = SR.FinalFlags;

  JournalHeader H;
  H.File = A.Path;
  H.Kernels = P.Targets;
  H.Strategy = R.Strategy;
  H.Policy = P.Policy->Name;
  H.Seed = R.Seed;
  H.Budget = budgetOf(R);
  H.VerifyLast = VS.LastLaunch;
  H.VerifyLastDropped = VS.Dropped;
  if (!R.SummaryJSON.empty())
    if (Error E = writeFileAtomically(absolutePath(R.SummaryJSON),
                                      summaryToJSON(SR, H, Eval.describe())))
      return std::move(E);
  if (!R.Report.empty()) {
    if (Error E = writeFileAtomically(absolutePath(R.Report),
                                      renderHtmlReport(SR, Info)))
      return std::move(E);
    O.Report = absolutePath(R.Report);
    Obs.result("report: " + R.Report + "\n");
  }
  // Nothing verified faster: the input is left alone (summary, report and
  // journal are written all the same).
  if (!SR.Improved)
    return O;

  // Kept in the run directory whatever else happens.
  O.BestPath = (RunDir + "/best.cu").str();
  if (Error E = writeFileAtomically(O.BestPath, SR.FinalSource))
    return std::move(E);
  // Outside a git project, a diff of an included file keeps the library's
  // name for it, relative to the input's directory.
  bool Rename = !O.Included || sys::fs::exists(projectRoot(P.Input) + "/.git");
  if (Error E = writeFileAtomically(
          (RunDir + "/best.diff").str(),
          Rename ? projectRelativeDiff(SR.FinalDiff, A.Path) : SR.FinalDiff))
    return std::move(E);
  if (!R.ExportFixes.empty()) {
    if (Error E = exportFixes(R.ExportFixes, A.Path, A.Code, SR.FinalSource,
                              "the best verified variant found by "
                              "clang-optiml optimize"))
      return std::move(E);
    Obs.result("fixes: " + R.ExportFixes + "\n");
  }
  if (!P.Dest.empty()) {
    if (Error E = writeFileAtomically(absolutePath(P.Dest), SR.FinalSource))
      return std::move(E);
    O.Written = absolutePath(P.Dest);
    Obs.result("wrote " + P.Dest + "\n");
  } else {
    Obs.result("best variant" + (O.Included ? " of " + A.Path : std::string()) +
               ": " + O.BestPath + " (" +
               (O.Included ? "pass -o DIR or -i to write it"
                           : "pass -o FILE or -i to write it") +
               ")\n");
  }
  if (!SR.FinalFlags.empty())
    Obs.result("note: the best variant is built with extra nvcc flags: " +
               join(SR.FinalFlags, " ") + "\n");
  std::unique_ptr<db::Database> Opened;
  if (!R.NoDb && !Db && SR.FinalSpeedup > 1) {
    auto D = openVariantDatabase(R.DbFile, A.Path, R.Analyze.BuildDir);
    if (D) {
      Opened = std::move(*D);
      Db = Opened.get();
    } else {
      Obs.warning("the variant was not recorded: " + toString(D.takeError()));
    }
  }
  if (Db && SR.FinalSpeedup > 1) {
    // The run's summary is the verification record: the final check's
    // timings, sanitizer verdict and the evaluator that measured them.
    VariantToRecord V;
    V.TU = &A.TU;
    V.File = A.Path;
    V.Original = P.InputCode;
    V.Kernels = P.Targets;
    V.Gpu = &P.Gpu->Gpus.front();
    V.NvccVersion = B.nvccVersion();
    V.NvccFlags = B.flags().vec();
    std::string Record = summaryToJSON(SR, H, Eval.describe());
    std::string Diff = projectRelativeDiff(SR.FinalDiff, A.Path);
    V.Source = SR.FinalSource;
    V.Diff = Diff;
    V.Speedup = SR.FinalSpeedup;
    V.Verification = Record;
    V.VariantFlags = SR.FinalFlags;
    recordVariant(*Db, V, Obs);
  }
  return O;
}

} // namespace

// Why long: the session's steps in the order a user sees them (prepared,
// dry run, builder, outputs refused early, database, evaluator, search,
// delivery); each step returns its own error.
Expected<SessionOutcome> optimizeFile(const OptimizeRequest &R,
                                      SessionObserver &Obs) {
  if (Error E = checkRequest(R))
    return std::move(E);
  Prepared P;
  if (Error E = prepare(R, Obs, P))
    return std::move(E);
  Analysis &A = *P.A;
  if (R.DryRun) {
    if (Error E =
            dryRun(A, P.Targets, R.InputFile, R.NoCompile, *P.Policy, Obs, [&] {
              auto Tools = discoverToolchain(R.Analyze.Tools);
              return Tools ? makeBuilder(R, *Tools, nullptr, P.IncludedFrom)
                           : Expected<std::unique_ptr<Builder>>(
                                 Tools.takeError());
            }))
      return std::move(E);
    SessionOutcome O;
    O.File = A.Path;
    return O;
  }

  auto Tools = discoverToolchain(R.Analyze.Tools);
  if (!Tools)
    return Tools.takeError();
  auto B = makeBuilder(R, *Tools, &*P.Gpu, P.IncludedFrom);
  if (!B)
    return B.takeError();
  std::string RunDir = runDirectory(R);
  // Refused now rather than after the search: a read-only file for -i, a
  // directory, a directory we cannot write in.
  for (const std::string &Out :
       {P.Dest, R.Report, R.SummaryJSON, R.ExportFixes})
    if (!Out.empty())
      if (Error E = checkOutputFile(Out))
        return std::move(E);
  // An existing database is opened now: a damaged one is reported before
  // the search, not after it. A missing one is created only when there is
  // a variant to record.
  std::unique_ptr<db::Database> Db;
  if (!R.NoDb) {
    auto DbPath = db::databasePath(R.DbFile, sys::path::parent_path(A.Path),
                                   R.Analyze.BuildDir, "");
    if (!DbPath)
      return DbPath.takeError();
    if (sys::fs::exists(*DbPath)) {
      auto D = openVariantDatabase(R.DbFile, A.Path, R.Analyze.BuildDir);
      if (!D)
        return D.takeError();
      Db = std::move(*D);
    }
  }

  auto GO = evaluatorOptions(R, P, *Tools, RunDir);
  if (!GO)
    return GO.takeError();
  if (Error E = resumeVerification(R, RunDir, *GO, Obs))
    return std::move(E);
  // Measuring the original may drop the last launch from verification: the
  // note is told, and the cache keys later entries by the new settings.
  std::unique_ptr<CachingEvaluator> Caching;
  const GpuEvaluator *Judge = nullptr;
  GO->OnDropLast = [&Obs, &Caching, &Judge](StringRef Note) {
    Obs.note(Note);
    if (Caching && Judge)
      Caching->setContext(Judge->cacheContext());
  };
  GpuEvaluator Gpu0(**B, *GO);
  Judge = &Gpu0;
  std::string EvalCache = absolutePath(R.EvalCacheDir);
  if (!R.EvalCacheDir.empty()) {
    auto Cache = EvalCache::open(EvalCache, Gpu0.cacheContext());
    if (!Cache)
      return Cache.takeError();
    Caching = std::make_unique<CachingEvaluator>(Gpu0, std::move(*Cache));
  }
  CandidateEvaluator &Eval =
      Caching ? static_cast<CandidateEvaluator &>(*Caching) : Gpu0;

  SearchOptions SO = searchOptions(R, P, RunDir, Obs);
  SO.Final.Sanitize =
      !R.NoSanitize && !GO->Eval.Runner.ComputeSanitizer.empty();
  SessionStart Start{R.InputFile,        A.Path,         P.Targets,
                     R.Strategy,         P.Policy->Name, SO.Budget,
                     R.TimeLimitSeconds, RunDir,         R.EvalCacheDir};
  Obs.started(Start);
  PolicySetup &PS = *P.Policy;
  auto SR = runSearch(A.Code, SO, PS.policy(), PS.applier(), Eval);
  if (!SR)
    return createStringError(searchFailure(toString(SR.takeError()), Eval));
  if (SR->StopReason == "stopped" && !PS.stopReason().empty())
    SR->StopReason = PS.stopReason();
  return deliver(R, P, *SR, **B, Gpu0, Eval, Caching.get(), Db.get(), RunDir,
                 Obs);
}

Expected<SessionOutcome> optimizeTarget(const OptimizeRequest &R,
                                        StringRef Target,
                                        SessionObserver &Obs) {
  if (Error E = checkRequest(R))
    return std::move(E);
  if (!R.Sources.empty())
    return requestError("--source and --target are exclusive: the target's "
                        "sources come from the build");
  AnalyzeOptions AO = R.Analyze;
  AO.ListsInputs = true; // the variant database's key
  if (AO.BuildDir.empty())
    return requestError("--target reads a CMake target: name its build "
                        "directory with -p (clang-optiml optimize -p build "
                        "--target " +
                        Target + ")");
  auto T = readCMakeTarget(AO.BuildDir, Target);
  if (!T)
    return T.takeError();
  if (T->Type != "EXECUTABLE")
    return createStringError("target '%s' is a %s; optimize runs a program: "
                             "name the executable that uses it",
                             Target.str().c_str(), T->Type.c_str());
  if (R.Log)
    for (const std::string &N : T->Notes)
      *R.Log << "clang-optiml: target " << T->Name << ": link " << N << "\n";
  std::vector<std::string> Cuda;
  for (const CMakeSource &S : T->Sources)
    if (S.Language == "CUDA")
      Cuda.push_back(S.Path);
  if (!R.InputFile.empty()) {
    std::string Abs = absolutePath(R.InputFile);
    if (!is_contained(Cuda, Abs))
      return createStringError(
          "'%s' is not a CUDA source of target '%s' (its CUDA sources: %s)",
          R.InputFile.c_str(), T->Name.c_str(), join(Cuda, ", ").c_str());
    Cuda = {Abs};
  }
  std::set<std::string> Searched; // "file\0kernel"
  std::vector<std::pair<std::string, std::vector<std::string>>> Plan;
  for (const std::string &File : Cuda) {
    auto A = analyzeFile(File, AO);
    if (!A)
      return A.takeError();
    std::vector<std::string> Names;
    for (const KernelInfo &K : A->Model.Kernels) {
      bool Wanted = R.Kernels.empty()
                        ? !K.Launches.empty()
                        : is_contained(R.Kernels, K.QualifiedName) ||
                              is_contained(R.Kernels, K.Name);
      std::string Id =
          (K.File.empty() ? File : K.File) + '\0' + K.QualifiedName;
      if (Wanted && Searched.insert(Id).second)
        Names.push_back(K.QualifiedName);
    }
    if (!Names.empty())
      Plan.push_back({File, Names});
  }
  if (Plan.empty())
    return createStringError(
        "no launched kernel%s in the CUDA sources of target '%s' (%s)",
        R.Kernels.empty() ? "" : (" named " + join(R.Kernels, ", ")).c_str(),
        T->Name.c_str(), join(Cuda, ", ").c_str());
  SessionOutcome All;
  for (size_t I = 0; I < Plan.size(); ++I) {
    const auto &[File, Names] = Plan[I];
    Obs.result(formatv("clang-optiml: target {0}: {1} ({2} of {3}): {4}\n",
                       T->Name, File, I + 1, Plan.size(), join(Names, ", "))
                   .str());
    OptimizeRequest One = R;
    One.InputFile = File;
    One.LinkFlags = T->LinkFlags;
    One.Sources.clear();
    for (const CMakeSource &S : T->Sources)
      if (S.Path != File)
        One.Sources.push_back(S.Path);
    One.Kernels = Names;
    if (!R.RunDir.empty() && Plan.size() > 1)
      One.RunDir = R.RunDir + "/" + sys::path::stem(File).str();
    auto O = optimizeFile(One, Obs);
    if (!O) {
      ++All.FailedSearches;
      Obs.searchFailed(O.takeError());
    } else if (O->Improved) {
      unsigned Failed = All.FailedSearches;
      All = std::move(*O);
      All.FailedSearches = Failed;
    }
  }
  return All;
}

} // namespace optiml
