//===- Runner.cpp - Program runs: probed, plain, sanitized ----------------===//

#include "optiml/Eval/Runner.h"
#include "optiml/Eval/PtxasInfo.h"
#include "optiml/Support/FileUtil.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Regex.h"

using namespace llvm;

namespace optiml {

//===----------------------------------------------------------------------===//
// GPUs
//===----------------------------------------------------------------------===//

std::vector<GpuInfo> parseNvidiaSmi(StringRef Csv) {
  std::vector<GpuInfo> Out;
  SmallVector<StringRef, 8> Lines;
  Csv.split(Lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef L : Lines) {
    SmallVector<StringRef, 4> F;
    L.split(F, ',');
    if (F.size() < 3)
      continue;
    GpuInfo G;
    if (F[0].trim().getAsInteger(10, G.Index))
      continue;
    G.Name = F[1].trim().str();
    auto [Major, Minor] = F[2].trim().split('.');
    unsigned Ma = 0, Mi = 0;
    if (Major.getAsInteger(10, Ma) || Minor.getAsInteger(10, Mi))
      continue;
    G.Arch = "sm_" + std::to_string(Ma) + std::to_string(Mi);
    if (F.size() > 3)
      F[3].trim().getAsInteger(10, G.MemoryMiB);
    Out.push_back(std::move(G));
  }
  return Out;
}

GpuQuery queryGpus(double TimeoutSeconds) {
  GpuQuery Q;
  std::string Smi = findProgram("nvidia-smi");
  if (Smi.empty()) {
    Q.Problem = "nvidia-smi not found (no NVIDIA driver on this machine)";
    return Q;
  }
  ProcessOptions O;
  O.Args = {Smi, "--query-gpu=index,name,compute_cap,memory.total",
            "--format=csv,noheader,nounits"};
  O.TimeoutSeconds = TimeoutSeconds;
  auto R = runProcess(O);
  if (!R) {
    Q.Problem = toString(R.takeError());
    return Q;
  }
  if (!R->succeeded()) {
    Q.Problem = "nvidia-smi " + R->describe() + ": " +
                StringRef(lastLines(R->Stdout + R->Stderr, 2)).trim().str();
    return Q;
  }
  Q.Gpus = parseNvidiaSmi(R->Stdout);
  // Respect a CUDA_VISIBLE_DEVICES made of plain indices.
  if (auto Vis = sys::Process::GetEnv("CUDA_VISIBLE_DEVICES")) {
    SmallVector<StringRef, 8> Ids;
    StringRef(*Vis).split(Ids, ',', -1, /*KeepEmpty=*/false);
    std::vector<GpuInfo> Kept;
    bool AllNumeric = true;
    for (StringRef Id : Ids) {
      unsigned I;
      if (Id.trim().getAsInteger(10, I)) {
        AllNumeric = false;
        break;
      }
      for (const GpuInfo &G : Q.Gpus)
        if (G.Index == I)
          Kept.push_back(G);
    }
    if (AllNumeric) {
      Q.Gpus = std::move(Kept);
      if (Q.Gpus.empty()) {
        Q.Problem = "CUDA_VISIBLE_DEVICES='" + *Vis + "' names no GPU present";
        return Q;
      }
    }
  }
  if (Q.Gpus.empty())
    Q.Problem = "nvidia-smi lists no usable GPU";
  return Q;
}

//===----------------------------------------------------------------------===//
// Runs
//===----------------------------------------------------------------------===//

static void addDeviceEnv(std::map<std::string, std::string> &Env,
                         std::optional<unsigned> Device) {
  if (!Device)
    return;
  Env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"; // nvidia-smi's numbering
  Env["CUDA_VISIBLE_DEVICES"] = std::to_string(*Device);
}

static SmallString<256> absolute(StringRef Path) {
  SmallString<256> P(Path);
  if (!P.empty())
    (void)sys::fs::make_absolute(P);
  return P;
}

std::string probeMachineryFailure(StringRef Stderr) {
  // What the probe prints when it cannot read its configuration ("...: the
  // program runs unobserved") or cannot write its result ("cannot write").
  SmallVector<StringRef, 16> Lines;
  Stderr.split(Lines, '\n');
  for (StringRef L : Lines) {
    L = L.trim();
    if (!L.consume_front("optiml-probe: "))
      continue;
    if (L.ends_with(": the program runs unobserved") ||
        L.starts_with("cannot write "))
      return ("optiml-probe: " + L).str();
  }
  return "";
}

static ProcessOptions programOptions(StringRef Binary,
                                     const RunnerOptions &Opts) {
  ProcessOptions PO;
  PO.Args = {std::string(absolute(Binary))};
  PO.Args.insert(PO.Args.end(), Opts.ProgramArgs.begin(),
                 Opts.ProgramArgs.end());
  PO.WorkDir = Opts.ProgramWorkDir;
  PO.TimeoutSeconds = Opts.TimeoutSeconds;
  PO.OutputLimit = Opts.OutputLimit;
  return PO;
}

Expected<ProgramRun> runPlain(StringRef Binary, StringRef Label,
                              std::optional<unsigned> Device,
                              const RunnerOptions &Opts) {
  ProcessOptions PO = programOptions(Binary, Opts);
  addDeviceEnv(PO.Env, Device);
  PO.UnsetEnv = {"CUDA_INJECTION64_PATH", ProbeConfigEnv};
  auto P = runProcess(PO);
  if (!P)
    return P.takeError();
  ProgramRun R;
  R.Label = Label.str();
  R.Device = Device;
  R.Process = std::move(*P);
  return R;
}

Expected<ProgramRun> runWithProbe(StringRef Binary, ProbeConfig Config,
                                  StringRef RunDir, StringRef Label,
                                  std::optional<unsigned> Device,
                                  const RunnerOptions &Opts) {
  if (Opts.ProbeLibrary.empty() || !sys::fs::exists(Opts.ProbeLibrary))
    return createStringError(
        inconvertibleErrorCode(),
        "the CUPTI probe (liboptiml-probe.so) was not found%s%s; build the "
        "optiml-probe target or pass --probe",
        Opts.ProbeLibrary.empty() ? "" : " at ", Opts.ProbeLibrary.c_str());
  ProgramRun R;
  R.Label = Label.str();
  R.Device = Device;
  // The program runs in a private directory (or the user's --workdir): every
  // path the probe is given must be absolute.
  SmallString<256> ConfigPath = absolute(RunDir), ResultPath = ConfigPath;
  sys::path::append(ConfigPath, Label + ".config.json");
  sys::path::append(ResultPath, Label + ".result.json");
  R.ConfigPath = std::string(ConfigPath);
  R.ResultPath = std::string(ResultPath);
  Config.ResultPath = R.ResultPath;
  if (!Config.SnapshotDir.empty())
    Config.SnapshotDir = std::string(absolute(Config.SnapshotDir));
  (void)sys::fs::remove(ResultPath);
  if (Error E = writeFileAtomically(ConfigPath, writeProbeConfig(Config)))
    return createStringError(inconvertibleErrorCode(),
                             "internal error: the tool could not write the "
                             "probe's configuration: %s",
                             toString(std::move(E)).c_str());

  ProcessOptions PO = programOptions(Binary, Opts);
  PO.Env[ProbeConfigEnv] = R.ConfigPath;
  PO.Env["CUDA_INJECTION64_PATH"] = std::string(absolute(Opts.ProbeLibrary));
  std::string LibPath =
      Opts.CudaPath + "/lib64:" + Opts.CudaPath + "/extras/CUPTI/lib64";
  if (auto Old = sys::Process::GetEnv("LD_LIBRARY_PATH"); Old && !Old->empty())
    LibPath += ":" + *Old;
  PO.Env["LD_LIBRARY_PATH"] = LibPath;
  addDeviceEnv(PO.Env, Device);
  auto P = runProcess(PO);
  if (!P)
    return P.takeError();
  R.Process = std::move(*P);

  if (!sys::fs::exists(ResultPath)) {
    // The probe could not read its configuration or write its result: the
    // tool's own machinery failed, not the program.
    // Only a complaint about this run's own files counts, not a line alike
    // that the program prints about something else.
    std::string Why = probeMachineryFailure(R.Process.Stderr);
    if (!Why.empty() && (StringRef(Why).contains(R.ConfigPath) ||
                         StringRef(Why).contains(R.ResultPath)))
      return createStringError(
          inconvertibleErrorCode(),
          "internal error: the tool could not observe the %s run of '%s' "
          "(%s); this is not a fault of the program",
          Label.str().c_str(), Binary.str().c_str(), Why.c_str());
    // Every report of it says how the program ended beside it.
    R.ProbeProblem = "the probe wrote no result";
    return R;
  }
  auto Text = readFile(ResultPath);
  if (!Text) {
    R.ProbeProblem = toString(Text.takeError());
    return R;
  }
  auto Res = readProbeResult(*Text);
  if (!Res) {
    R.ProbeProblem = "unreadable probe result '" + R.ResultPath +
                     "': " + toString(Res.takeError());
    return R;
  }
  R.Probe = std::move(*Res);
  return R;
}

//===----------------------------------------------------------------------===//
// compute-sanitizer
//===----------------------------------------------------------------------===//

/// Whether a program argument can be a relative path: not empty, not an
/// option, not a number, not absolute. Sets \p Full to it under \p Cwd.
static bool relativePathArg(StringRef A, StringRef Cwd,
                            SmallVectorImpl<char> &Full) {
  double Ignored;
  if (A.empty() || A.front() == '-' || !A.getAsDouble(Ignored) ||
      sys::path::is_absolute(A))
    return false;
  Full.assign(Cwd.begin(), Cwd.end());
  sys::path::append(Full, A);
  return true;
}

std::vector<std::string> resolveProgramArgs(ArrayRef<std::string> Args,
                                            StringRef Cwd,
                                            std::vector<std::string> *Notes) {
  std::vector<std::string> Out;
  for (const std::string &A : Args) {
    SmallString<256> Full;
    if (!relativePathArg(A, Cwd, Full) || !sys::fs::exists(Full)) {
      Out.push_back(A);
      continue;
    }
    sys::path::remove_dots(Full, /*remove_dot_dot=*/true);
    if (Notes)
      Notes->push_back("program argument '" + A + "' passed as '" +
                       std::string(Full) +
                       "' (the program runs in a private directory)");
    Out.push_back(std::string(Full));
  }
  return Out;
}

std::vector<std::string> missingPathArgs(ArrayRef<std::string> Args,
                                         StringRef Cwd) {
  std::vector<std::string> Out;
  for (const std::string &A : Args) {
    StringRef Name = sys::path::filename(A);
    bool PathLike =
        StringRef(A).contains('/') ||
        (Name.contains('.') && !Name.ends_with(".") && !Name.starts_with("."));
    SmallString<256> Full;
    if (PathLike && relativePathArg(A, Cwd, Full) && !sys::fs::exists(Full))
      Out.push_back(A);
  }
  return Out;
}

std::string findComputeSanitizer(StringRef CudaPath) {
  return findProgram(
      "compute-sanitizer",
      {(CudaPath + "/bin").str(), (CudaPath + "/compute-sanitizer").str()});
}

SanitizerReport parseSanitizerOutput(StringRef Tool, StringRef Output) {
  SanitizerReport S;
  S.Tool = Tool.str();
  static const Regex Summary("ERROR SUMMARY: ([0-9]+) error");
  // racecheck prints only "RACECHECK SUMMARY: N hazards displayed (E
  // errors, W warnings)" in CUDA 13.
  static const Regex RaceSummary("RACECHECK SUMMARY: .*\\(([0-9]+) error");
  SmallVector<StringRef, 2> M;
  SmallVector<StringRef, 64> Lines;
  Output.split(Lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef L : Lines) {
    if (Summary.match(L, &M)) {
      unsigned N = 0;
      M[1].getAsInteger(10, N);
      S.Errors = N;
      continue;
    }
    if (RaceSummary.match(L, &M)) {
      unsigned N = 0;
      M[1].getAsInteger(10, N);
      // An ERROR SUMMARY line, when present, has the last word.
      if (!S.Errors)
        S.Errors = N;
      continue;
    }
    if (!S.FirstError.empty() || !L.starts_with("========= "))
      continue;
    StringRef Body = L.drop_front(10).trim();
    // Skip banners, stack frames, blank continuations and summaries.
    if (Body.empty() || Body.starts_with("COMPUTE-SANITIZER") ||
        Body.starts_with("at ") || Body.starts_with("by ") ||
        Body.starts_with("Host Frame") || Body.starts_with("Saved host") ||
        Body.starts_with("RACECHECK SUMMARY") ||
        Body.starts_with("LEAK SUMMARY") ||
        Body.starts_with("Target application returned"))
      continue;
    S.FirstError = Body.str();
  }
  S.Ran = S.Errors.has_value();
  return S;
}

static std::string unqualifiedBase(StringRef Kernel) {
  StringRef Base = Kernel.take_until([](char C) { return C == '<'; });
  size_t Colon = Base.rfind("::");
  if (Colon != StringRef::npos)
    Base = Base.drop_front(Colon + 2);
  return Base.trim().str();
}

Expected<SanitizerReport> runSanitizer(StringRef Tool, StringRef Binary,
                                       ArrayRef<std::string> Kernels,
                                       std::optional<unsigned> Device,
                                       const RunnerOptions &Opts) {
  if (Opts.ComputeSanitizer.empty()) {
    SanitizerReport S;
    S.Tool = Tool.str();
    S.Problem = "compute-sanitizer not found";
    return S;
  }
  ProcessOptions PO = programOptions(Binary, Opts);
  std::vector<std::string> Args = {Opts.ComputeSanitizer, "--tool", Tool.str(),
                                   "--print-limit", "10"};
  for (const std::string &K : Kernels) {
    Args.push_back("--kernel-name");
    Args.push_back("kns=" + unqualifiedBase(K));
  }
  if (Tool == "racecheck") {
    Args.push_back("--racecheck-report");
    Args.push_back("hazard");
  }
  Args.insert(Args.end(), PO.Args.begin(), PO.Args.end());
  PO.Args = std::move(Args);
  // The sanitizer slows kernels down by an order of magnitude or more.
  PO.TimeoutSeconds = Opts.TimeoutSeconds > 0 ? Opts.TimeoutSeconds * 10 : 0;
  PO.UnsetEnv = {"CUDA_INJECTION64_PATH", ProbeConfigEnv};
  addDeviceEnv(PO.Env, Device);
  auto P = runProcess(PO);
  if (!P)
    return P.takeError();
  SanitizerReport S = parseSanitizerOutput(Tool, P->Stdout + "\n" + P->Stderr);
  if (P->TimedOut)
    S.Problem = "compute-sanitizer " + P->describe();
  else if (!S.Ran)
    S.Problem = "compute-sanitizer " + P->describe() + " without a summary: " +
                StringRef(lastLines(P->Stdout + P->Stderr, 2)).trim().str();
  S.Process = std::move(*P);
  return S;
}

//===----------------------------------------------------------------------===//
// DevicePool
//===----------------------------------------------------------------------===//

DevicePool::DevicePool(std::vector<unsigned> Devs)
    : Devices(std::move(Devs)), Busy(Devices.size(), false) {}

unsigned DevicePool::acquire() {
  std::unique_lock<std::mutex> L(Mu);
  while (true) {
    for (size_t I = 0; I < Devices.size(); ++I)
      if (!Busy[I]) {
        Busy[I] = true;
        return Devices[I];
      }
    CV.wait(L);
  }
}

void DevicePool::release(unsigned D) {
  {
    std::lock_guard<std::mutex> L(Mu);
    for (size_t I = 0; I < Devices.size(); ++I)
      if (Devices[I] == D)
        Busy[I] = false;
  }
  CV.notify_one();
}

} // namespace optiml
