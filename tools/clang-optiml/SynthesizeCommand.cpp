//===- SynthesizeCommand.cpp - clang-optiml synthesize --------------------===//
//
// From a spec (and a request in words) to a verified CUDA program: the
// template library writes it, nvcc builds it, it runs at the spec's sizes
// with several seeds and at edge sizes, each run checking itself against the
// spec's reference; then, unless --no-optimize, `optimize` searches for a
// faster version of it.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "optiml/Eval/Builder.h"
#include "optiml/Eval/Evaluator.h"
#include "optiml/Eval/Runner.h"
#include "optiml/Frontend/CudaToolchain.h"
#include "optiml/Search/EvalAdapter.h"
#include "optiml/Support/FileUtil.h"
#include "optiml/Synth/Spec.h"
#include "optiml/Synth/Synthesize.h"
#include "optiml/Synth/Templates.h"
#include "optiml/Synth/WrittenCode.h"
#ifdef OPTIML_WITH_LLM
#include "optiml/LLM/ChatClient.h"
#include "optiml/LLM/PromptTemplate.h"
#include "optiml/Synth/Thoughts.h"
#endif
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

using namespace llvm;
using namespace optiml::synth;

namespace optiml {
namespace tool {

cl::SubCommand SynthesizeCommand(
    "synthesize",
    "Write a complete, verified CUDA program from a spec and a request in "
    "words, then optimize it (docs/synthesize.md).\n\n"
    "  clang-optiml synthesize --spec softmax.yaml \"row-wise softmax over an "
    "8192 x 1024 float matrix\"\n"
    "  clang-optiml synthesize --spec gemm.json -o gemm.cu --no-optimize\n"
    "  clang-optiml synthesize --spec gemm.json --dry-run    (print the "
    "program; nothing is built)\n"
    "  clang-optiml synthesize --spec gemm.json --no-verify  (no GPU here: "
    "written, marked unverified)\n"
    "\nA spec (JSON, or YAML with the same fields):\n\n"
    "  class: softmax                # optional: else inferred from the "
    "request\n"
    "  inputs:\n"
    "    - {name: x, type: float, shape: [rows, cols]}\n"
    "  outputs:\n"
    "    - {name: y, type: float, shape: [rows, cols]}\n"
    "  sizes: {rows: 8192, cols: 1024}\n"
    "  tolerance: 1e-5               # |got - want| <= tol + tol * |want|\n"
    "  reference: |                  # inputs, outputs, then sizes in "
    "'sizes' order\n"
    "    void reference(const float *x, float *y, int rows, int cols) {\n"
    "      for (int r = 0; r < rows; ++r) {\n"
    "        const float *in = x + (size_t)r * cols;\n"
    "        double m = in[0], s = 0;\n"
    "        for (int c = 0; c < cols; ++c) m = std::max(m, (double)in[c]);\n"
    "        for (int c = 0; c < cols; ++c) s += std::exp(in[c] - m);\n"
    "        for (int c = 0; c < cols; ++c)\n"
    "          y[(size_t)r * cols + c] = (float)(std::exp(in[c] - m) / s);\n"
    "      }\n"
    "    }\n"
    "\nClasses: map, reduce, row-reduce, softmax, matvec, gemm, stencil2d, "
    "stencil3d, histogram, gather, scan, transpose (docs/synthesize.md lists "
    "what "
    "each "
    "expects).\n"
    "\nThe program takes its sizes and seed on its command line "
    "(./softmax rows=333 cols=7 seed=2) and checks its outputs against the "
    "reference. It is verified at the spec's sizes with 3 seeds and at edge "
    "sizes (1, odd sizes) on the GPU; without a GPU, --no-verify writes it "
    "marked unverified. The output (default: the spec's name with .cu) is "
    "written only when complete, and never over the spec.\n"
    "\nWith an LLM configured (--llm-model, or .clang-optiml.json beside "
    "the spec; docs/llm.md), the model proposes --thoughts strategies and "
    "writes one program's GPU part per strategy (its kernels and launch "
    "statements, checked before nvcc sees them); every candidate is "
    "verified alike, a failed one is given the reason once, and the "
    "fastest verified program is kept. --no-llm leaves the model out.\n"
    "\nExit status: 0 written (and verified), 1 error (a bad spec, a "
    "program that does not compile, no GPU), 2 usage error, 3 the program "
    "failed its verification (nothing written)\n");

static cl::OptionCategory SynthCategory("synthesize options");

static cl::list<std::string> RequestWords(cl::Positional,
                                          cl::desc("[request words...]"),
                                          cl::sub(SynthesizeCommand),
                                          cl::cat(SynthCategory));

static cl::opt<std::string>
    SpecFile("spec",
             cl::desc("The spec: inputs, outputs, sizes, reference, "
                      "tolerance (.json, or .yaml/.yml)"),
             cl::value_desc("file"), cl::sub(SynthesizeCommand),
             cl::cat(SynthCategory));

static cl::opt<std::string>
    Output("o",
           cl::desc("Write the program here ('-' prints it; default: the "
                    "spec's name with .cu, beside it)"),
           cl::value_desc("file.cu"), cl::sub(SynthesizeCommand),
           cl::cat(SynthCategory));

static cl::opt<bool>
    DryRun("dry-run",
           cl::desc("Print the program without building, running or "
                    "writing anything"),
           cl::sub(SynthesizeCommand), cl::cat(SynthCategory));

static cl::opt<bool> NoVerify(
    "no-verify",
    cl::desc("Do not run the program (no GPU needed): it is still compiled "
             "when nvcc is found, then written with an UNVERIFIED header "
             "comment, and not optimized"),
    cl::sub(SynthesizeCommand), cl::cat(SynthCategory));

static cl::opt<bool>
    NoOptimize("no-optimize",
               cl::desc("Stop once the program is written and verified"),
               cl::sub(SynthesizeCommand), cl::cat(SynthCategory));

static cl::opt<bool> Json("json",
                          cl::desc("Print the result as JSON: class, "
                                   "program, verification runs, optimize's "
                                   "summary"),
                          cl::sub(SynthesizeCommand), cl::cat(SynthCategory));

static cl::opt<unsigned>
    Seeds("seeds", cl::desc("Seeds to verify at the spec's sizes (default 3)"),
          cl::init(3), cl::value_desc("N"), cl::sub(SynthesizeCommand),
          cl::cat(SynthCategory));

static cl::opt<double>
    Timeout("timeout", cl::desc("Wall-time limit per program run, seconds"),
            cl::init(600), cl::value_desc("s"), cl::sub(SynthesizeCommand),
            cl::cat(SynthCategory));

static cl::opt<unsigned>
    Gpu("gpu", cl::desc("The GPU to verify on (nvidia-smi index)"),
        cl::value_desc("index"), cl::sub(SynthesizeCommand),
        cl::cat(SynthCategory));

static cl::opt<std::string>
    CacheDir("cache-dir",
             cl::desc("Build cache (default: ~/.cache/clang-optiml/builds)"),
             cl::value_desc("dir"), cl::sub(SynthesizeCommand),
             cl::cat(SynthCategory));

static cl::opt<std::string> OptimizedOutput(
    "optimized-output",
    cl::desc("Where optimize writes a faster verified variant (default: "
             "the program's name with .opt.cu)"),
    cl::value_desc("file.cu"), cl::sub(SynthesizeCommand),
    cl::cat(SynthCategory));

static cl::opt<std::string> ReportFile("report",
                                       cl::desc("optimize's HTML report"),
                                       cl::value_desc("report.html"),
                                       cl::sub(SynthesizeCommand),
                                       cl::cat(SynthCategory));

static cl::opt<std::string> RunDir("run-dir",
                                   cl::desc("optimize's run directory"),
                                   cl::value_desc("dir"),
                                   cl::sub(SynthesizeCommand),
                                   cl::cat(SynthCategory));

static cl::list<std::string>
    OptimizeArgs("optimize-arg",
                 cl::desc("An option for optimize (repeatable), e.g. "
                          "--optimize-arg=--budget=10"),
                 cl::value_desc("arg"), cl::sub(SynthesizeCommand),
                 cl::cat(SynthCategory));

static cl::opt<unsigned> Thoughts(
    "thoughts",
    cl::desc("With an LLM configured: strategies asked of it (1 to 16), one "
             "program each, competing with the template's (default 3)"),
    cl::init(3), cl::value_desc("K"), cl::sub(SynthesizeCommand),
    cl::cat(SynthCategory));

static cl::opt<bool>
    NoLLM("no-llm",
          cl::desc("Do not ask the configured LLM: the template's program "
                   "alone"),
          cl::sub(SynthesizeCommand), cl::cat(SynthCategory));

static Error usage(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), "%s", Msg.str().c_str());
}

/// Where the program goes: -o, else the spec's stem with .cu beside it.
static std::string outputPath() {
  if (!Output.empty())
    return Output == "-" ? "-" : absolutePath(Output);
  SmallString<256> P(absolutePath(SpecFile));
  sys::path::replace_extension(P, ".cu");
  return std::string(P);
}

/// Whether two paths name one file (the spec is never written).
static bool sameFile(StringRef A, StringRef B) {
  sys::fs::UniqueID IA, IB;
  if (sys::fs::getUniqueID(A, IA) || sys::fs::getUniqueID(B, IB))
    return absolutePath(A) == absolutePath(B);
  return IA == IB;
}

/// The header lines saying how the program was checked.
static std::vector<std::string> statusLines(const Verification *V,
                                            const GpuInfo *G, bool Compiled) {
  if (!V)
    return {"UNVERIFIED: written with --no-verify; it was " +
                std::string(Compiled ? "compiled with nvcc but " : "") +
                "never run. Run it",
            "on a GPU (it checks itself and exits 0 on a match) or "
            "synthesize it there."};
  std::vector<std::string> L;
  L.push_back("Verified on " +
              (G ? G->Name + " (" + G->Arch + ")" : std::string("the GPU")) +
              ": every run below matched the reference.");
  for (const VerifyRun &R : V->Runs)
    L.push_back("  " + join(R.Case.args(), " ") + "  (" + R.Case.Label + ")");
  return L;
}

static nlohmann::ordered_json runsJson(const Verification *V) {
  auto Runs = nlohmann::ordered_json::array();
  if (!V)
    return Runs;
  for (const VerifyRun &R : V->Runs)
    Runs.push_back({{"label", R.Case.Label},
                    {"args", R.Case.args()},
                    {"passed", R.Passed},
                    {"verdict", R.Verdict},
                    {"output", R.Output},
                    {"seconds", R.Seconds}});
  return Runs;
}

namespace {

/// A candidate and what became of it.
struct Judged {
  Candidate C;
  /// verified (ran and passed), compiled (built, not run), written (not
  /// built: no nvcc), no-program, refused, does-not-compile,
  /// failed-verification.
  std::string Status;
  /// One line: why it failed.
  std::string Reason;
  /// All of it, in the checks', nvcc's or the verifier's words: what the
  /// model is told.
  std::string Feedback;
  std::optional<Verification> V;
  /// Its kernels' time at the spec's sizes (median of the replays, summed
  /// over kernels), when timed.
  std::optional<double> Ms;
  /// Half the interquartile range of its replays, percent of Ms.
  double NoisePct = 0;
  std::string TimeProblem;

  bool passed() const {
    return Status == "verified" || Status == "compiled" || Status == "written";
  }
  std::string label() const {
    if (C.Origin == "template")
      return "template " + className(Class).str() +
             (C.Thought.empty() ? "" : " (" + C.Thought + ")");
    return "llm '" + C.Strategy + "'" + (C.Repaired ? " (repaired)" : "");
  }
  ProgramClass Class = ProgramClass::Map;
  /// nvcc's errors, as it printed them.
  std::string BuildErrors;
};

/// The line of \p Source numbered \p Line, trimmed.
std::string lineText(StringRef Source, unsigned Line) {
  SmallVector<StringRef, 0> Lines;
  Source.split(Lines, '\n');
  return Line && Line <= Lines.size() ? Lines[Line - 1].trim().str() : "";
}

/// Judges candidates alike: the model's part checked, the program built,
/// then run at every verification case.
struct Judge {
  const Spec *S = nullptr;
  ProgramOptions PO;
  Builder *B = nullptr;
  std::string BuildPath;
  ParseConfig Parse;
  VerifyOptions VO;
  const GpuInfo *G = nullptr;
  bool CanRun = false;
  bool Quiet = false;

  Expected<Judged> judge(const Candidate &C) const {
    Judged R;
    R.C = C;
    R.Class = S->Class;
    if (!C.Problem.empty()) {
      R.Status = "no-program";
      R.Reason = R.Feedback = C.Problem;
      return R;
    }
    if (C.Written) {
      auto F = checkWrittenCode(*S, PO, *C.Written, BuildPath, Parse);
      if (!F)
        return F.takeError();
      if (!F->empty()) {
        // clang's errors alone: the program does not compile.
        bool Errors = all_of(
            *F, [](const CheckFailure &X) { return X.Check == "type-checks"; });
        R.Status = Errors ? "does-not-compile" : "refused";
        R.Reason = (Errors ? "does not compile: " : "refused by the checks: ") +
                   F->front().str();
        R.Feedback = "The checks refused it (lines are the whole "
                     "program's):\n";
        for (const CheckFailure &X : *F) {
          R.Feedback += "- " + X.str();
          std::string L = lineText(C.Source, X.Line);
          if (!L.empty())
            R.Feedback += "\n  at: " + L;
          R.Feedback += "\n";
        }
        return R;
      }
    }
    if (!B) {
      R.Status = "written";
      return R;
    }
    if (!CanRun) {
      BuildRequest Req;
      Req.SourcePath = BuildPath;
      Req.Source = C.Source;
      auto BR = B->build(Req);
      if (!BR)
        return BR.takeError();
      if (!BR->Succeeded)
        return notCompiled(std::move(R), BR->ErrorSummary);
      R.Status = "compiled";
      return R;
    }
    if (!Quiet)
      errs() << "clang-optiml: verifying "
             << (C.Origin == "template" ? C.Strategy : R.label()) << " on "
             << G->Name << "\n";
    auto X = verifyProgram(*B, BuildPath, C.Source, *S, VO);
    if (!X)
      return X.takeError();
    R.V = std::move(*X);
    if (!R.V->Built) {
      // Copied first: R is moved into the call.
      std::string Errors = R.V->BuildErrors;
      return notCompiled(std::move(R), Errors);
    }
    if (!R.V->passed()) {
      R.Status = "failed-verification";
      R.Feedback = explainFailure(*R.V);
      R.Reason = StringRef(R.Feedback).split('\n').first.str();
      return R;
    }
    R.Status = "verified";
    return R;
  }

  static Judged notCompiled(Judged R, StringRef Errors) {
    R.Status = "does-not-compile";
    R.BuildErrors = Errors.str();
    R.Feedback = "nvcc's errors:\n" + Errors.str();
    StringRef First = Errors.trim().split('\n').first;
    R.Reason = "does not compile: " + First.str();
    return R;
  }
};

/// Times every verified candidate at the spec's sizes as optimize times its
/// candidates (the probe's replays, timed with events).
void timeCandidates(const CommandContext &Ctx, const Judge &J,
                    const GpuQuery &Gpus, std::vector<Judged> &All) {
  for (Judged &X : All) {
    if (X.Status != "verified")
      continue;
    auto M = modelSource(X.C.Source, J.BuildPath, J.Parse);
    if (!M) {
      X.TimeProblem = toString(M.takeError());
      continue;
    }
    EvalInput In;
    In.CandidatePath = J.BuildPath;
    In.CandidateSource = X.C.Source;
    In.Model = &*M;
    EvalOptions EO;
    EO.Metrics = false;
    EO.Sanitize = false;
    EO.Devices = {J.G->Index};
    EO.Gpus = Gpus;
    EO.Runner.ProbeLibrary = findProbeLibrary(Ctx.Argv0, "");
    EO.Runner.CudaPath = J.VO.Runner.CudaPath;
    EO.Runner.TimeoutSeconds = J.VO.Runner.TimeoutSeconds;
    if (Error E = setProgramRun(EO.Runner, {"check=0"}, "", verboseLog())) {
      X.TimeProblem = toString(std::move(E));
      continue;
    }
    auto R = evaluate(In, *J.B, EO);
    if (!R) {
      X.TimeProblem = toString(R.takeError());
      continue;
    }
    Timing T = timingFromReport(*R);
    if (T.Available) {
      X.Ms = T.MedianMs;
      X.NoisePct = T.NoisePct;
    } else
      X.TimeProblem =
          R->Verify.Detail.empty() ? "no kernel was timed" : R->Verify.Detail;
    if (!J.Quiet)
      errs() << "clang-optiml: timed " << X.label() << ": "
             << (X.Ms ? formatv("{0:f4} ms", *X.Ms).str()
                      : "not timed (" + X.TimeProblem + ")")
             << "\n";
  }
}

/// The fastest timed candidate that passed, else the first that passed. A
/// later candidate (the template comes first) wins only when it is faster
/// beyond the noise of both timings (and by 2% at least): ties go to the
/// earlier.
const Judged *choose(const std::vector<Judged> &All) {
  const Judged *Best = nullptr;
  for (const Judged &X : All) {
    if (!X.passed() || !X.Ms)
      continue;
    double Margin =
        Best ? std::max(0.02, (X.NoisePct + Best->NoisePct) / 100) : 0;
    if (!Best || *X.Ms < *Best->Ms * (1 - Margin))
      Best = &X;
  }
  if (Best)
    return Best;
  for (const Judged &X : All)
    if (X.passed())
      return &X;
  return nullptr;
}

void printCandidates(raw_ostream &OS, const std::vector<Judged> &All,
                     const Judged *Kept) {
  if (All.size() < 2)
    return;
  OS << "clang-optiml: " << All.size() << " candidates:\n";
  for (size_t I = 0; I < All.size(); ++I) {
    const Judged &X = All[I];
    OS << "  [" << I + 1 << "] " << X.label() << ": ";
    if (X.passed())
      OS << X.Status
         << (X.Ms ? formatv(", {0:f4} ms", *X.Ms).str() : std::string());
    else
      OS << (X.Status == "no-program" ? "no program: " : "") << X.Reason;
    OS << (&X == Kept ? "  <- kept" : "") << "\n";
  }
}

nlohmann::ordered_json candidatesJson(const std::vector<Judged> &All,
                                      const Judged *Kept) {
  auto A = nlohmann::ordered_json::array();
  for (const Judged &X : All) {
    nlohmann::ordered_json O = {
        {"origin", X.C.Origin},   {"strategy", X.C.Strategy},
        {"thought", X.C.Thought}, {"repaired", X.C.Repaired},
        {"status", X.Status},     {"reason", X.Reason},
        {"feedback", X.Feedback}, {"kept", &X == Kept}};
    O["time_ms"] =
        X.Ms ? nlohmann::ordered_json(*X.Ms) : nlohmann::ordered_json(nullptr);
    if (!X.TimeProblem.empty())
      O["time_problem"] = X.TimeProblem;
    O["program"] = X.C.Source;
    A.push_back(std::move(O));
  }
  return A;
}

#ifdef OPTIML_WITH_LLM
/// The mixture of thoughts: the model's strategies and programs, each
/// judged, each failure given back once. Returns an exit status when the
/// command must stop, else 0.
int askModel(const CommandContext &Ctx, const Judge &J, LLMSetup &Setup,
             std::vector<Judged> &All) {
  if (!J.Quiet)
    errs() << "clang-optiml: mixture of thoughts: " << Setup.Description
           << "\n";
  auto Dir = llm::findPromptDirectory("", Ctx.Argv0,
                                      reinterpret_cast<void *>(&askModel));
  if (!Dir)
    return reportError(Dir.takeError());
  auto Prompts = llm::PromptLibrary::load(*Dir);
  if (!Prompts)
    return reportError(Prompts.takeError());
  ThoughtsOptions TO;
  TO.Thoughts = Thoughts;
  if (J.G)
    TO.GPUDescription = J.G->Name + " (" + J.G->Arch + ")";
  if (!J.Quiet)
    TO.Log = [](StringRef L) { errs() << "clang-optiml: llm: " << L << "\n"; };
  auto P = createThoughtsProposer(*Setup.Client, std::move(*Prompts), TO);
  auto Cs = P->propose(*J.S, J.PO);
  if (!Cs) {
    WithColor::warning(errs(), "clang-optiml")
        << "the model gave no strategies (" << toString(Cs.takeError())
        << "); the template's program stands alone\n";
    return 0;
  }
  for (const Candidate &C : *Cs) {
    auto R = J.judge(C);
    if (!R)
      return reportError(R.takeError());
    bool Failed = !R->passed();
    std::string Feedback = R->Feedback;
    All.push_back(std::move(*R));
    if (!Failed)
      continue;
    auto Fix = P->repair(*J.S, J.PO, C, Feedback);
    if (!Fix) {
      WithColor::warning(errs(), "clang-optiml")
          << "no repair of '" << C.Strategy
          << "': " << toString(Fix.takeError()) << "\n";
      continue;
    }
    if (!*Fix)
      continue;
    auto R2 = J.judge(**Fix);
    if (!R2)
      return reportError(R2.takeError());
    All.push_back(std::move(*R2));
  }
  return 0;
}
#endif

} // namespace

/// optimize on the written program \p Out, as a child clang-optiml: its
/// options, GPU pool, journal, progress display and database recording all
/// live in its own command (OptimizeCommand.cpp, global cl::opts), and a
/// child keeps one code path and gives its own exit status. Its outcome
/// goes into \p Result["optimize"]; returns synthesize's exit status.
static int optimizeChild(const CommandContext &Ctx, StringRef Out,
                         const AnalyzeOptions &AO,
                         nlohmann::ordered_json &Result) {
  std::string Exe = sys::fs::getMainExecutable(
      Ctx.Argv0, reinterpret_cast<void *>(&runSynthesize));
  SmallString<256> Opt(OptimizedOutput.empty() ? Out.str()
                                               : absolutePath(OptimizedOutput));
  if (OptimizedOutput.empty())
    sys::path::replace_extension(Opt, ".opt.cu");
  std::vector<std::string> Args = {Exe, "optimize", Out.str(), "-o",
                                   std::string(Opt),
                                   // The program was verified against
                                   // its reference; optimize verifies
                                   // candidates against it launch by
                                   // launch, so the host reference need
                                   // not run in every evaluation.
                                   "--run-arg=check=0"};
  // The toolchain synthesize was given, for optimize's parse and builds.
  if (!AO.Tools.CudaPath.empty())
    Args.push_back("--cuda-path=" + AO.Tools.CudaPath);
  if (!AO.Tools.GpuArch.empty())
    Args.push_back("--cuda-gpu-arch=" + AO.Tools.GpuArch);
  if (!ReportFile.empty())
    Args.push_back("--report=" + absolutePath(ReportFile));
  if (!RunDir.empty())
    Args.push_back("--run-dir=" + absolutePath(RunDir));
  SmallString<128> Summary;
  if (Json &&
      !sys::fs::createTemporaryFile("synthesize-optimize", "json", Summary))
    Args.push_back("--summary-json=" + std::string(Summary));
  for (const std::string &A : OptimizeArgs)
    Args.push_back(A);
  std::vector<StringRef> Refs(Args.begin(), Args.end());
  if (!Json)
    errs() << "clang-optiml: optimize " << Out << "\n";
  std::optional<StringRef> Redirects[] = {
      std::nullopt,
      Json ? std::optional<StringRef>("/dev/stderr") : std::nullopt,
      std::nullopt};
  std::string ErrMsg;
  int Child =
      sys::ExecuteAndWait(Exe, Refs, std::nullopt, Redirects, 0, 0, &ErrMsg);
  nlohmann::ordered_json O = {{"exit_status", Child},
                              {"output", std::string(Opt)}};
  if (Child < 0)
    O["error"] = ErrMsg;
  if (Json && !Summary.empty()) {
    auto Text = readFile(Summary);
    if (Text) {
      O["summary"] = nlohmann::ordered_json::parse(*Text, nullptr, false);
      if (O["summary"].is_discarded())
        O["summary"] = nullptr;
    } else {
      consumeError(Text.takeError());
    }
    (void)sys::fs::remove(Summary);
  }
  Result["optimize"] = O;
  if (Child < 0 || Child == ExitError || Child == ExitUsage) {
    if (!Json)
      WithColor::error(errs(), "clang-optiml")
          << "optimize failed ("
          << (Child < 0 ? ErrMsg : "exit status " + std::to_string(Child))
          << "); the verified program is written\n";
    return ExitError;
  }
  if (!Json && Child == ExitNotAccepted)
    errs() << "clang-optiml: optimize found nothing verified faster; the "
              "program is as written\n";
  return ExitSuccess;
}

/// What is wrong with the options, as a usage error; empty when nothing.
static std::string usageProblem() {
  if (SpecFile.empty())
    return "synthesize needs --spec FILE (see 'clang-optiml synthesize "
           "--help' for the format)";
  if (Seeds == 0 || !(Timeout > 0))
    return "--seeds must be at least 1 and --timeout positive";
  if (Thoughts < 1 || Thoughts > 16)
    return "--thoughts must be 1 to 16 (each strategy costs a request, and "
           "a repair request when its program fails)";
  if (DryRun && (NoVerify || !Output.empty()))
    return "--dry-run prints the program and writes nothing; it takes "
           "neither -o nor --no-verify";
  if (Json && (DryRun || Output == "-"))
    return "--json prints the result on stdout, where --dry-run and -o - "
           "print the program; write the program to a file with -o";
  return "";
}

/// Whether the program may be written to \p Out: not over the spec, in a
/// place that can be written, and, without -o, not over a program that
/// synthesize did not write.
static Error checkOutputPlace(StringRef Out) {
  if (sameFile(Out, SpecFile))
    return usage("the program would overwrite the spec '" + SpecFile +
                 "'; name another file with -o");
  if (Error E = checkOutputFile(Out))
    return E;
  if (Output.empty() && sys::fs::exists(Out)) {
    auto Old = readFile(Out);
    if (!Old || !StringRef(*Old).contains(
                    "// Written by clang-optiml synthesize from "))
      return usage("'" + Out +
                   "' exists and was not written by synthesize; it is left "
                   "unchanged (name the program's file with -o)");
  }
  return Error::success();
}

/// No candidate passed: what failed, and nothing written (status 3).
static int reportNoneKept(const Spec &S, const std::vector<Judged> &All) {
  const Judged &First = All.front();
  if (Json)
    outs() << nlohmann::ordered_json{{"class", className(S.Class).str()},
                                     {"program", nullptr},
                                     {"verified", false},
                                     {"runs",
                                      runsJson(First.V ? &*First.V : nullptr)},
                                     {"candidates",
                                      candidatesJson(All, nullptr)}}
                  .dump(2)
           << "\n";
  else if (All.size() == 1 && First.V && !First.V->Runs.empty()) {
    const VerifyRun &Bad = First.V->Runs.back();
    outs() << "the program failed its check (" << Bad.Case.Label << ": "
           << join(Bad.Case.args(), " ") << "): " << Bad.Verdict << "\n"
           << Bad.Output << "\nnothing was written\n";
  } else
    outs() << "no candidate program passed its check; nothing was "
              "written\n";
  return ExitNotAccepted;
}

int runSynthesize(const CommandContext &Ctx) {
  std::string Problem = usageProblem();
  if (!Problem.empty())
    return reportUsageError(usage(Problem));
  std::string Request = join(RequestWords, " ");
  auto S = readSpec(SpecFile, Request);
  if (!S)
    return reportError(S.takeError());
  if (Error E = checkClass(*S))
    return reportError(std::move(E));

  std::string Out = DryRun ? "-" : outputPath();
  bool ToStdout = Out == "-";
  if (!ToStdout)
    if (Error E = checkOutputPlace(Out))
      return reportError(std::move(E));
  ProgramOptions PO;
  PO.FileName = ToStdout ? "-" : sys::path::filename(Out).str();
  if (S->ClassInferred && !Json)
    errs() << "clang-optiml: class " << className(S->Class)
           << " (from the request's words; set \"class\" in the spec to "
              "choose another)\n";

  // The template's program comes first: it is the one printed by
  // --dry-run, and when it does not compile the spec's reference is at
  // fault (the harness is shared), so no model is asked.
  std::unique_ptr<Proposer> P = createTemplateProposer();
  PO.Status = {DryRun ? "UNVERIFIED: printed by --dry-run; nothing was built "
                        "or run."
                      : "Status: being verified."};
  auto Cands = P->propose(*S, PO);
  if (!Cands)
    return reportError(Cands.takeError());
  if (Cands->empty())
    return reportError(
        usage("no program was proposed for class " + className(S->Class)));
  if (DryRun) {
    outs() << Cands->front().Source;
    return ExitSuccess;
  }

  // Build it (nvcc runs without a GPU), so a reference that does not
  // compile is reported even with --no-verify.
  AnalyzeOptions AO = commonAnalyzeOptions(Ctx);
  auto Tools = discoverToolchain(AO.Tools);
  if (!Tools)
    return reportError(Tools.takeError());
  GpuQuery Gpus = NoVerify ? GpuQuery() : queryGpus();
  const GpuInfo *G = Gpus.Gpus.empty() ? nullptr : &Gpus.Gpus.front();
  if (G && Gpu.getNumOccurrences()) {
    G = nullptr;
    for (const GpuInfo &I : Gpus.Gpus)
      if (I.Index == Gpu)
        G = &I;
    if (!G)
      return reportUsageError(usage("--gpu " + Twine(unsigned(Gpu)) +
                                    ": nvidia-smi lists no such GPU"));
  }
  BuildOptions BO;
  BO.CudaPath = Tools->CudaPath;
  BO.GpuArch = G                           ? G->Arch
               : !AO.Tools.GpuArch.empty() ? AO.Tools.GpuArch
                                           : std::string("sm_90");
  BO.CacheDir = absolutePath(CacheDir);
  auto B = Builder::create(BO);
  if (!B && !NoVerify)
    return reportError(B.takeError());
  if (!B) {
    WithColor::warning(errs(), "clang-optiml")
        << "not compiled: " << toString(B.takeError()) << "\n";
  } else {
    noteBuilder(**B, verboseLog());
  }
  Judge J;
  J.S = &*S;
  J.PO = PO;
  J.B = B ? B->get() : nullptr;
  J.BuildPath = ToStdout ? absolutePath(kernelName(*S) + ".cu") : Out;
  J.Parse.Tools = *Tools;
  J.VO.Runner.CudaPath = Tools->CudaPath;
  J.VO.Runner.TimeoutSeconds = Timeout;
  J.VO.Seeds = Seeds;
  if (G)
    J.VO.Device = G->Index;
  if (!Json)
    J.VO.Log = &errs();
  J.G = G;
  J.CanRun = !NoVerify && G;
  J.Quiet = Json;

  std::vector<Judged> All;
  {
    auto T0 = J.judge(Cands->front());
    if (!T0)
      return reportError(T0.takeError());
    All.push_back(std::move(*T0));
  }
  {
    const Judged &T = All.front();
    if (T.Status == "does-not-compile")
      errs() << T.BuildErrors;
    if (T.Status == "does-not-compile")
      return reportError(usage(
          "the program for " + SpecFile +
          " does not compile with nvcc; nothing was written. Errors in '" +
          SpecFile +
          " (reference)' are in the spec's reference, which is called as "
          "void reference(" +
          referenceParameters(*S) + ")"));
    if (T.Status == "compiled" && !NoVerify)
      return reportError(usage(
          "a CUDA GPU is needed to verify the program (" +
          (Gpus.Problem.empty() ? std::string("no GPU found") : Gpus.Problem) +
          "); it compiles, nothing was written. --no-verify writes it "
          "marked unverified"));
  }
  // The template's expert versions compete when they can be verified.
  for (size_t I = 1; J.CanRun && I < Cands->size(); ++I) {
    auto T = J.judge((*Cands)[I]);
    if (!T)
      return reportError(T.takeError());
    All.push_back(std::move(*T));
  }
#ifdef OPTIML_WITH_LLM
  if (!NoLLM) {
    auto Setup = configuredLLM(SpecFile);
    if (!Setup)
      return reportError(Setup.takeError());
    if (*Setup) {
      if (!J.CanRun) {
        if (!Json)
          errs() << "clang-optiml: the configured LLM is not asked: its "
                    "programs could not be verified here\n";
      } else if (int RC = askModel(Ctx, J, **Setup, All)) {
        return RC;
      }
    }
  }
#endif
  // Several verified candidates are timed to choose; a lone one only when
  // no optimize follows (optimize measures it first thing), so that the
  // result still says how fast the program is.
  if (J.CanRun && (All.size() > 1 || NoOptimize || ToStdout))
    timeCandidates(Ctx, J, Gpus, All);
  const Judged *KeptJ = choose(All);
  if (!Json)
    printCandidates(errs(), All, KeptJ);

  if (!KeptJ)
    return reportNoneKept(*S, All);
  const Candidate &C = KeptJ->C;
  const std::optional<Verification> &V = KeptJ->V;
  bool Compiled = KeptJ->Status != "written";

  // The text that was verified, with its header saying so.
  std::vector<std::string> Status = statusLines(V ? &*V : nullptr, G, Compiled);
  if (All.size() > 1)
    Status.push_back("Chosen from " + std::to_string(All.size()) +
                     " candidates: " + KeptJ->label() +
                     (KeptJ->Ms ? ", the fastest verified" : ""));
  std::string Final = setProgramStatus(C.Source, Status);
  if (ToStdout) {
    outs() << Final;
  } else if (Error E = writeFileAtomically(Out, Final)) {
    return reportError(std::move(E));
  }
  nlohmann::ordered_json Result = {
      {"class", className(S->Class).str()},
      {"class_inferred", S->ClassInferred},
      {"strategy", C.Strategy},
      {"program", ToStdout ? nlohmann::ordered_json(nullptr)
                           : nlohmann::ordered_json(Out)},
      {"compiled", Compiled},
      {"verified", V.has_value()},
      {"runs", runsJson(V ? &*V : nullptr)},
      {"time_ms", KeptJ->Ms ? nlohmann::ordered_json(*KeptJ->Ms)
                            : nlohmann::ordered_json(nullptr)},
      {"candidates", candidatesJson(All, KeptJ)}};
  if (!Json && !ToStdout)
    outs() << "wrote " << Out << " (" << className(S->Class) << ", "
           << (V ? "verified: " + std::to_string(V->Runs.size()) +
                       " runs passed"
                 : std::string("UNVERIFIED"))
           << (KeptJ->Ms ? formatv("; kernels {0:f4} ms", *KeptJ->Ms).str()
                         : std::string())
           << ")\n";

  int RC = ExitSuccess;
  if (!NoOptimize && !ToStdout && V) {
    RC = optimizeChild(Ctx, Out, AO, Result);
  } else if (!NoOptimize && !Json && !V) {
    errs() << "clang-optiml: not optimized: the program is unverified\n";
  } else if (!NoOptimize && !Json && ToStdout) {
    errs() << "clang-optiml: not optimized: the program was printed, not "
              "written (-o -)\n";
  }
  if (Json)
    outs() << Result.dump(2) << "\n";
  return RC;
}

} // namespace tool
} // namespace optiml
