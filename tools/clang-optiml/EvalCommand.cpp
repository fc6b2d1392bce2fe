//===- EvalCommand.cpp - clang-optiml eval --------------------------------===//

#include "Commands.h"
#include "optiml/Eval/Evaluator.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace optiml {
namespace tool {

cl::SubCommand EvalCommand(
    "eval",
    "Build a CUDA program (a .cu file with its main; its other source "
    "files with --source), run it on the GPU, verify its target kernels launch "
    "by "
    "launch against the original (or against itself), time them and "
    "profile them (docs/eval.md).\n\n"
    "  clang-optiml eval saxpy.cu\n"
    "  clang-optiml eval candidate.cu --against saxpy.cu --kernel saxpy\n"
    "  clang-optiml eval solver.cu -p build --run-arg input.dat "
    "--json\n"
    "  clang-optiml eval gemm.cu --build-arg=-lcublas "
    "--no-sanitize\n"
    "\nExit status: 0 the candidate passed (verified, deterministic, "
    "sanitizers clean where run), 1 error (does not compile, no GPU, the "
    "tool failed), 2 usage error, 3 it ran but did not "
    "pass\n" OPTIML_ENVIRONMENT_HELP);

static cl::OptionCategory EvalCategory("eval options");

static cl::opt<std::string> InputFile(cl::Positional, cl::Required,
                                      cl::desc("<file.cu>"),
                                      cl::sub(EvalCommand),
                                      cl::cat(EvalCategory));

static cl::list<std::string>
    Kernels("kernel",
            cl::desc("Target kernel (qualified name; repeatable). Default: "
                     "every kernel the file launches"),
            cl::value_desc("name"), cl::sub(EvalCommand),
            cl::cat(EvalCategory));

static cl::opt<std::string>
    Against("against",
            cl::desc("The original program; without it the file is checked "
                     "against itself (determinism) and profiled"),
            cl::value_desc("original.cu"), cl::sub(EvalCommand),
            cl::cat(EvalCategory));

static cl::opt<bool> Json("json", cl::desc("Print the report as JSON"),
                          cl::sub(EvalCommand), cl::cat(EvalCategory));

static cl::list<std::string>
    RunArgs("run-arg",
            cl::desc("An argument for the program itself (repeatable, in "
                     "order)"),
            cl::value_desc("arg"), cl::sub(EvalCommand), cl::cat(EvalCategory));
static cl::list<std::string> BuildArgs("build-arg",
                                       cl::desc(OPTIML_BUILD_ARG_HELP),
                                       cl::value_desc("flag"),
                                       cl::sub(EvalCommand),
                                       cl::cat(EvalCategory));
static cl::list<std::string> Sources("source", cl::desc(OPTIML_SOURCE_HELP),
                                     cl::value_desc("file"),
                                     cl::sub(EvalCommand),
                                     cl::cat(EvalCategory));
static cl::opt<std::string> WorkDir("workdir", cl::desc(OPTIML_WORKDIR_HELP),
                                    cl::value_desc("dir"), cl::sub(EvalCommand),
                                    cl::cat(EvalCategory));

static cl::list<std::string> NvccArgs(
    "nvcc-arg",
    cl::desc("An extra nvcc flag for the candidate alone (repeatable), "
             "e.g. --nvcc-arg=-maxrregcount=64"),
    cl::value_desc("flag"), cl::sub(EvalCommand), cl::cat(EvalCategory));

static cl::opt<double>
    Timeout("timeout",
            cl::desc("Wall-time limit per program run, seconds (the "
                     "sanitizers get 10x)"),
            cl::init(300), cl::value_desc("s"), cl::sub(EvalCommand),
            cl::cat(EvalCategory));

static cl::opt<unsigned>
    Replays("replays", cl::desc("Timed replays per launch (default 20)"),
            cl::init(20), cl::sub(EvalCommand), cl::cat(EvalCategory));

static cl::opt<unsigned>
    VerifyFirst("verify-first",
                cl::desc("Verify the first N launches of each target (and "
                         "the last, see --verify-last)"),
                cl::init(3), cl::value_desc("N"), cl::sub(EvalCommand),
                cl::cat(EvalCategory));

static cl::opt<bool> VerifyLast(
    "verify-last",
    cl::desc("Also verify the last launch of each target (default true; "
             "false for an iterative program whose float noise grows until "
             "its own runs disagree at the end)"),
    cl::init(true), cl::sub(EvalCommand), cl::cat(EvalCategory));

static cl::opt<bool> NoMetrics("no-metrics",
                               cl::desc("Skip the hardware-metrics run"),
                               cl::sub(EvalCommand), cl::cat(EvalCategory));

static cl::opt<bool>
    NoSanitize("no-sanitize",
               cl::desc("Skip compute-sanitizer memcheck and racecheck"),
               cl::sub(EvalCommand), cl::cat(EvalCategory));

static cl::opt<bool>
    PrecisionChanging("precision-changing",
                      cl::desc("The candidate may change float results "
                               "(widens tolerances 10x)"),
                      cl::sub(EvalCommand), cl::cat(EvalCategory));

static cl::opt<bool> FlushL2("flush-l2",
                             cl::desc("Flush L2 between timed replays"),
                             cl::sub(EvalCommand), cl::cat(EvalCategory));

static cl::opt<std::string>
    Probe("probe",
          cl::desc("liboptiml-probe.so (default: $OPTIML_PROBE, then "
                   "../lib beside the tool)"),
          cl::value_desc("path"), cl::sub(EvalCommand), cl::cat(EvalCategory));

static cl::opt<std::string>
    RunDir("run-dir",
           cl::desc("Keep configs, results and snapshots here (default: a "
                    "temporary directory, removed)"),
           cl::value_desc("dir"), cl::sub(EvalCommand), cl::cat(EvalCategory));

static cl::opt<std::string>
    CacheDir("cache-dir",
             cl::desc("Build cache (default: ~/.cache/clang-optiml/builds)"),
             cl::value_desc("dir"), cl::sub(EvalCommand),
             cl::cat(EvalCategory));

static cl::opt<bool> NoCache("no-cache", cl::desc("Always recompile"),
                             cl::sub(EvalCommand), cl::cat(EvalCategory));

static cl::list<unsigned>
    Gpus("gpu",
         cl::desc("GPU to use (nvidia-smi index; repeatable). Default: all; "
                  "independent runs use several GPUs in parallel"),
         cl::value_desc("index"), cl::sub(EvalCommand), cl::cat(EvalCategory));

static Error checkInput(StringRef Path, bool IsOriginal) {
  if (sys::fs::is_regular_file(Path))
    return Error::success();
  if (sys::fs::is_directory(Path))
    return createStringError(inconvertibleErrorCode(),
                             "cannot evaluate%s '%s': it is a directory, not "
                             "a CUDA source file",
                             IsOriginal ? " the original (--against)" : "",
                             Path.str().c_str());
  if (IsOriginal)
    return createStringError(inconvertibleErrorCode(),
                             "cannot evaluate: the original (--against) '%s' "
                             "does not exist",
                             Path.str().c_str());
  return createStringError(inconvertibleErrorCode(),
                           "cannot evaluate the program '%s': no such file",
                           Path.str().c_str());
}

/// Option values that cannot make sense, refused before anything runs.
static Error checkOptions() {
  if (Replays == 0)
    return createStringError(inconvertibleErrorCode(),
                             "--replays must be at least 1: the time is the "
                             "median of the replays");
  if (!(Timeout > 0))
    return createStringError(inconvertibleErrorCode(),
                             "--timeout must be a positive number of seconds");
  if (Error E = checkNvccFlags(BuildArgs, "--build-arg"))
    return E;
  if (Error E = checkNvccFlags(NvccArgs, "--nvcc-arg"))
    return E;
  return Error::success();
}

int runEval(const CommandContext &Ctx) {
  if (Error E = checkOptions())
    return reportUsageError(std::move(E));
  if (Error E = checkInput(InputFile, false))
    return reportError(std::move(E));
  if (!Against.empty())
    if (Error E = checkInput(Against, true))
      return reportError(std::move(E));

  AnalyzeOptions AO = commonAnalyzeOptions(Ctx);
  auto Tools = discoverToolchain(AO.Tools);
  if (!Tools)
    return reportError(Tools.takeError());

  // nvcc flags: the compile database's, untranslated, or defaults for the
  // GPU present (else --cuda-gpu-arch, else sm_90).
  GpuQuery Gpu = queryGpus();
  BuildOptions BO;
  BO.CudaPath = Tools->CudaPath;
  BO.GpuArch = !Gpu.Gpus.empty()           ? Gpu.Gpus.front().Arch
               : !AO.Tools.GpuArch.empty() ? AO.Tools.GpuArch
                                           : std::string("sm_90");
  BO.CacheDir = absolutePath(CacheDir);
  BO.UseCache = !NoCache;
  auto Srcs = programSources(Sources);
  if (!Srcs)
    return reportError(Srcs.takeError());
  BO.ExtraSources = std::move(*Srcs);
  // The original's flags are the program's (a candidate has no entry).
  if (Error E = setProgramBuildFlags(
          BO, AO, Against.empty() ? StringRef(InputFile) : StringRef(Against),
          BuildArgs, verboseLog()))
    return reportError(std::move(E));
  auto B = Builder::create(BO);
  if (!B)
    return reportError(B.takeError());
  noteBuilder(**B, verboseLog());

  auto A = analyzeFile(InputFile, AO);
  if (!A) {
    // Say what nvcc says about a file clang cannot parse: that is the
    // compiler the program is built with.
    Error E = A.takeError();
    if (E.isA<CompileError>()) {
      BuildRequest Req;
      Req.SourcePath = InputFile;
      Req.ExtraFlags = NvccArgs;
      auto R = (*B)->build(Req);
      if (R && !R->Succeeded) {
        consumeError(std::move(E));
        outs() << InputFile << ": does not compile\n" << R->ErrorSummary;
        return reportError(
            createStringError(inconvertibleErrorCode(),
                              "'%s' does not compile with nvcc; fix it first",
                              InputFile.c_str()));
      }
      if (!R)
        consumeError(R.takeError());
    }
    return reportError(std::move(E));
  }
  if (Error E = requireProgram(InputFile, *A, Sources))
    return reportError(std::move(E));

  EvalInput In;
  In.CandidatePath = A->Path;
  In.CandidateFlags = NvccArgs;
  // Absolute: it is compared with the prepared reference's path and handed
  // to nvcc, which runs elsewhere.
  In.OriginalPath = absolutePath(Against);
  In.Model = &A->Model;

  EvalOptions EO;
  EO.Kernels = Kernels;
  EO.VerifyFirst = VerifyFirst;
  EO.VerifyLast = VerifyLast;
  EO.Replays = Replays;
  EO.FlushL2 = FlushL2;
  EO.Metrics = !NoMetrics;
  applyMetricsEnvironment(EO);
  EO.Sanitize = !NoSanitize;
  EO.PrecisionChanging = PrecisionChanging;
  // The probe reads its configuration from here while the program runs in
  // a private directory: a relative path would name nothing there.
  EO.RunDir = absolutePath(RunDir);
  EO.KeepRunDir = !RunDir.empty();
  EO.Devices.assign(Gpus.begin(), Gpus.end());
  EO.Gpus = Gpu;
  EO.Runner.ProbeLibrary = findProbeLibrary(Ctx.Argv0, Probe);
  EO.Runner.CudaPath = Tools->CudaPath;
  if (Error E = setProgramRun(EO.Runner, RunArgs, WorkDir, verboseLog()))
    return reportError(std::move(E));
  EO.Runner.TimeoutSeconds = Timeout;
  EO.Runner.ComputeSanitizer = findComputeSanitizer(Tools->CudaPath);
  if (verbose())
    EO.Log = &errs();

  auto R = evaluate(In, **B, EO);
  if (!R)
    return reportError(R.takeError());
  if (Json)
    outs() << reportToJSON(*R) << "\n";
  else
    printReport(outs(), *R);
  outs().flush();

  if (!R->Candidate.Succeeded)
    return reportError(createStringError(
        inconvertibleErrorCode(),
        "'%s' does not compile with nvcc; fix it first (flags it needs to "
        "build at all, such as -lcublas, go with --build-arg)",
        R->Candidate.Path.c_str()));
  if (R->Original && !R->Original->Succeeded)
    return reportError(createStringError(
        inconvertibleErrorCode(),
        "the original '%s' does not compile with nvcc (flags it needs to "
        "build at all, such as -lcublas, go with --build-arg; --nvcc-arg is "
        "for the candidate alone)",
        R->Original->Path.c_str()));
  // A program that failed at once may not have found its input: the
  // likely cause when an argument names a file that is not here.
  if (R->GpuAvailable && WorkDir.empty() && R->Verify.ReferenceFailed) {
    SmallString<256> Cwd;
    if (!sys::fs::current_path(Cwd))
      for (const std::string &A : missingPathArgs(RunArgs, Cwd))
        WithColor::note(errs(), "clang-optiml")
            << "--run-arg '" << A << "' names no file in " << Cwd
            << "; the program runs in a private directory, where only "
               "existing files are passed (as absolute paths); see --workdir\n";
  }
  if (!R->GpuAvailable)
    return reportError(createStringError(
        inconvertibleErrorCode(),
        "a CUDA GPU is needed to run, verify and time '%s' (%s); it was "
        "built, nothing was run",
        InputFile.c_str(), R->GpuProblem.c_str()));
  // Ran to the end: a candidate that is not verified is a verdict, not an
  // error.
  return R->passed() ? ExitSuccess : ExitNotAccepted;
}

} // namespace tool
} // namespace optiml
