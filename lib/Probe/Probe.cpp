//===- Probe.cpp - CUPTI injection library: verify, time, profile ---------===//
//
// Loaded into the unmodified program with CUDA_INJECTION64_PATH; the CUDA
// driver calls InitializeInjection at cuInit. The probe watches the driver's
// launch calls (cuLaunchKernel[Ex], which the runtime's cudaLaunchKernel and
// <<<>>> call underneath; there the function handle is a CUkernel) and, for
// the target kernels named in $OPTIML_PROBE_CONFIG:
//
//  reference  snapshots every buffer the pointer arguments reach before and
//             after the verified launches, saves the post-launch contents,
//             which buffers changed, and which were pure outputs (relaunched
//             with that buffer poisoned, the result is the same);
//  candidate  compares the same launches with those snapshots, flags writes
//             the reference did not make, and relaunches with the pure
//             outputs poisoned to catch kernels that are right only because
//             the output already held the answer;
//  time       replays the launch with its inputs restored, timed with events
//             (no activity tracing), then restores the outputs;
//  metrics    range profiler: the launch replayed once per pass from its
//             pre-launch state, L2 cleaned before each pass.
//
// Everything runs inside the launch callbacks with driver calls only; the
// tool's own calls re-enter the callbacks and are ignored through a
// thread-local guard. Captured streams are skipped.
//
//===----------------------------------------------------------------------===//

#include "ProbeInternal.h"
#include "ProbeLaunch.h"
#include "optiml/Eval/Compare.h"

#include <cuda.h>
#include <cupti.h>

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

namespace optiml {
namespace probe {

std::string driverError(const char *What, CUresult R) {
  const char *Name = nullptr;
  cuGetErrorName(R, &Name);
  return std::string(What) + ": " + (Name ? Name : "CUDA error") + " (" +
         std::to_string(static_cast<int>(R)) + ")";
}

namespace {

const std::vector<std::string> DefaultMetrics = {
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
};

} // namespace

ProbeState &state() {
  static ProbeState *S = new ProbeState; // never destroyed: used at exit
  return *S;
}

namespace {

thread_local int InTool = 0;
thread_local int DriverDepth = 0;
thread_local Launch *Current = nullptr;

struct ToolScope {
  ToolScope() { ++InTool; }
  ~ToolScope() { --InTool; }
};

} // namespace

void error(const std::string &Message) {
  ProbeState &S = state();
  std::fprintf(stderr, "optiml-probe: %s\n", Message.c_str());
  if (S.Result.Errors.size() < 100)
    S.Result.Errors.push_back(Message);
}

bool ok(CUresult R, const char *What, std::string &Error) {
  if (R == CUDA_SUCCESS)
    return true;
  if (Error.empty())
    Error = driverError(What, R);
  return false;
}

namespace {

std::string demangledBase(const char *Mangled) {
  ProbeState &S = state();
  auto It = S.NameCache.find(Mangled);
  if (It != S.NameCache.end())
    return It->second;
  int Status = 0;
  char *D = abi::__cxa_demangle(Mangled, nullptr, nullptr, &Status);
  std::string Base = kernelBaseName(Status == 0 && D ? D : Mangled);
  std::free(D);
  S.NameCache[Mangled] = Base;
  return Base;
}

const ProbeKernel *findTarget(const std::string &Base) {
  for (const ProbeKernel &K : state().Config.Kernels)
    if (kernelNameMatches(K.Name, Base))
      return &K;
  return nullptr;
}

//===-------------------------------------------------------------------===//
// Callbacks
//===-------------------------------------------------------------------===//

/// Candidate run: the reference's staged last launch of Kernel, if any.
std::optional<unsigned> referenceLast(const std::string &Kernel) {
  ProbeState &S = state();
  if (!S.Store)
    return std::nullopt;
  long Count = S.Store->launchCount(Kernel);
  bool Saved =
      Count > 0 && S.Store->hasLaunch(Kernel, static_cast<unsigned>(Count - 1));
  return stagedLastOrdinal(Count, S.Config.VerifyFirst, S.Config.VerifyLast,
                           Saved);
}

Action actionFor(const std::string &Kernel, unsigned Ordinal) {
  ProbeState &S = state();
  const ProbeConfig &C = S.Config;
  switch (C.Mode) {
  case ProbeMode::Reference:
    if (Ordinal < C.VerifyFirst)
      return Action::Verify;
    return C.VerifyLast ? Action::StageLast : Action::None;
  case ProbeMode::Candidate: {
    if (!S.Store)
      return Action::None;
    switch (candidateAction(Ordinal, S.Store->hasLaunch(Kernel, Ordinal),
                            referenceLast(Kernel), C.VerifyFirst)) {
    case CandidateAction::Verify:
      return Action::Verify;
    case CandidateAction::StageLast:
      return Action::StageLast;
    case CandidateAction::None:
      // A launch to time that is not verified is timed alone.
      return C.TimeVerified && Ordinal < C.TimeLaunches ? Action::Time
                                                        : Action::None;
    }
    return Action::None;
  }
  case ProbeMode::Time:
    return Ordinal < C.TimeLaunches ? Action::Time : Action::None;
  case ProbeMode::Metrics:
    return Ordinal < C.TimeLaunches ? Action::Profile : Action::None;
  }
  return Action::None;
}

void onLaunchEnter(CUpti_CallbackId Id, const CUpti_CallbackData *Data) {
  ProbeState &S = state();
  auto L = std::make_unique<Launch>();
  void **KernelParams = nullptr, **Extra = nullptr;
  bool PerThread = Id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
                   Id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz;
  if (Id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ||
      Id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz) {
    auto *P =
        static_cast<const cuLaunchKernelEx_params *>(Data->functionParams);
    const CUlaunchConfig *C = P->config;
    L->Function = P->f;
    KernelParams = P->kernelParams;
    Extra = P->extra;
    L->Grid[0] = C->gridDimX, L->Grid[1] = C->gridDimY,
    L->Grid[2] = C->gridDimZ;
    L->Block[0] = C->blockDimX, L->Block[1] = C->blockDimY,
    L->Block[2] = C->blockDimZ;
    L->Shared = C->sharedMemBytes;
    L->Stream = C->hStream;
    L->Ex = true;
    L->ExConfig = *C;
    L->ExAttrs.assign(C->attrs, C->attrs + C->numAttrs);
  } else {
    auto *P = static_cast<const cuLaunchKernel_params *>(Data->functionParams);
    L->Function = P->f;
    KernelParams = P->kernelParams;
    Extra = P->extra;
    L->Grid[0] = P->gridDimX, L->Grid[1] = P->gridDimY,
    L->Grid[2] = P->gridDimZ;
    L->Block[0] = P->blockDimX, L->Block[1] = P->blockDimY,
    L->Block[2] = P->blockDimZ;
    L->Shared = P->sharedMemBytes;
    L->Stream = P->hStream;
  }
  if (PerThread && !L->Stream)
    L->Stream = CU_STREAM_PER_THREAD;

  const char *Name = Data->symbolName;
  if (!Name || !*Name) {
    if (cuFuncGetName(&Name, L->Function) != CUDA_SUCCESS &&
        cuKernelGetName(&Name, reinterpret_cast<CUkernel>(L->Function)) !=
            CUDA_SUCCESS)
      return;
  }
  std::lock_guard<std::mutex> Lock(S.Mutex);
  L->Kernel = demangledBase(Name);
  L->Target = findTarget(L->Kernel);
  if (!L->Target)
    return;
  unsigned Ordinal = S.Launches[L->Kernel]++;
  L->What = actionFor(L->Kernel, Ordinal);
  if (L->What == Action::None)
    return;
  L->Ctx = Data->context;
  LaunchRecord &Rec = L->Record;
  Rec.Kernel = L->Kernel;
  Rec.Ordinal = Ordinal;
  std::copy(L->Grid, L->Grid + 3, Rec.Grid);
  std::copy(L->Block, L->Block + 3, Rec.Block);
  Rec.DynamicShared = L->Shared;

  CUstreamCaptureStatus Capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (cuStreamIsCapturing(L->Stream, &Capture) == CUDA_SUCCESS &&
      Capture != CU_STREAM_CAPTURE_STATUS_NONE) {
    error(L->Kernel + " launch " + std::to_string(Ordinal) +
          " is being captured into a graph: not instrumented");
    return;
  }
  std::string Error;
  if (!captureArguments(*L, KernelParams, Extra, Error)) {
    error(L->Kernel + " launch " + std::to_string(Ordinal) + ": " + Error);
    return;
  }
  kernelAttributes(*L);

  switch (L->What) {
  case Action::Verify:
  case Action::Time:
    // Finish whatever else is in flight so the copy is what the launch sees.
    if (ok(cuCtxSynchronize(), "cuCtxSynchronize", Error))
      snapshotTo(*L, &Buffer::Before, Error);
    break;
  case Action::StageLast:
    snapshotTo(*L, &Buffer::Before, Error);
    break;
  case Action::Profile:
    if (!S.ProfilerTried) {
      S.ProfilerTried = true;
      std::vector<std::string> Rejected;
      const std::vector<std::string> &Metrics =
          S.Config.Metrics.empty() ? DefaultMetrics : S.Config.Metrics;
      std::string Why = S.Profiler.setUp(L->Ctx, Metrics, Rejected);
      for (const std::string &M : Rejected)
        error("metric '" + M + "' is not known to this GPU: dropped");
      if (!Why.empty()) {
        S.Result.MetricsUnavailable = Why;
        S.Profiler.tearDown();
      } else {
        S.Result.ProfilerPasses = static_cast<unsigned>(S.Profiler.passes());
      }
    }
    if (!S.Profiler.ready())
      return;
    if (S.Config.KernelReplay) {
      profileInPlace(*L, Error);
      if (!L->ProfileInPlace && Error.empty())
        return;
      break;
    }
    // The passes replay the launch from this copy (profileLaunch).
    if (ok(cuCtxSynchronize(), "cuCtxSynchronize", Error)) {
      std::string CopyError;
      if (!snapshotTo(*L, &Buffer::Before, CopyError)) {
        error(L->Kernel + " launch " + std::to_string(Ordinal) + ": " +
              CopyError + ": profiled with kernel replay, " + DirtyL2);
        release(*L);
        profileInPlace(*L, Error);
        if (!L->ProfileInPlace && Error.empty())
          return;
      }
    }
    break;
  case Action::None:
    break;
  }
  if (!Error.empty()) {
    error(L->Kernel + " launch " + std::to_string(Ordinal) + ": " + Error);
    release(*L);
    return;
  }
  Current = L.release();
}

void finishStaged(Launch &L) {
  ProbeState &S = state();
  std::string Error;
  // The program may have destroyed the launch's stream by now.
  L.Stream = nullptr;
  if (ok(cuCtxSynchronize(), "cuCtxSynchronize", Error)) {
    // After holds the post-launch state; the verifiers read Base.
    for (Buffer &B : L.Buffers)
      std::swap(B.Base, B.After);
    if (S.Config.Mode == ProbeMode::Candidate) {
      // The record names the reference launch it was compared with, which
      // is what the evaluator matches.
      std::optional<unsigned> RefLast = referenceLast(L.Kernel);
      if (RefLast && *RefLast != L.Record.Ordinal)
        S.LastMatchedAcross[L.Kernel] = {L.Record.Ordinal, *RefLast};
      if (RefLast) {
        L.Record.Ordinal = *RefLast;
        verifyCandidate(L, Error, /*CanRelaunch=*/false);
      }
    } else {
      verifyReference(L, Error);
    }
    for (Buffer &B : L.Buffers)
      std::swap(B.Base, B.After);
  }
  if (!Error.empty())
    error(L.Kernel + " launch " + std::to_string(L.Record.Ordinal) + ": " +
          Error);
  state().Result.Launches.push_back(L.Record);
  release(L);
}

void onLaunchExit(const CUpti_CallbackData *Data) {
  std::unique_ptr<Launch> L(Current);
  Current = nullptr;
  ProbeState &S = state();
  std::lock_guard<std::mutex> Lock(S.Mutex);
  CUresult Returned = *static_cast<const CUresult *>(Data->functionReturnValue);
  std::string Error;
  if (Returned != CUDA_SUCCESS) {
    Error = driverError("the launch itself failed", Returned);
    if (L->What == Action::Profile && L->ProfileInPlace) {
      bool Done = false;
      S.Profiler.endPass(Done);
    }
  } else {
    switch (L->What) {
    case Action::Verify:
      if (ok(cuCtxSynchronize(), "cuCtxSynchronize after the launch", Error)) {
        if (S.Config.Mode == ProbeMode::Reference) {
          verifyReference(*L, Error);
        } else {
          verifyCandidate(*L, Error, /*CanRelaunch=*/true);
          // Timed only when right: a wrong candidate's time is not used.
          const std::vector<BufferCheck> &B = L->Record.Buffers;
          if (S.Config.TimeVerified &&
              L->Record.Ordinal < S.Config.TimeLaunches && Error.empty() &&
              L->Record.Verified &&
              std::all_of(
                  B.begin(), B.end(),
                  [](const BufferCheck &C) { return C.Status == "ok"; }))
            timeLaunch(*L, Error);
        }
      }
      break;
    case Action::StageLast:
      // Stream-ordered copy of the result; read back only at exit.
      if (snapshotTo(*L, &Buffer::After, Error)) {
        std::unique_ptr<Launch> &Slot = S.PendingLast[L->Kernel];
        if (Slot)
          release(*Slot);
        Slot = std::move(L);
        return;
      }
      break;
    case Action::Time:
      if (ok(cuCtxSynchronize(), "cuCtxSynchronize after the launch", Error))
        timeLaunch(*L, Error);
      break;
    case Action::Profile: {
      bool Synced =
          ok(cuCtxSynchronize(), "cuCtxSynchronize after the launch", Error);
      if (L->ProfileInPlace)
        finishInPlace(*L); // stops the profiler, synchronized or not
      else if (Synced)
        profileLaunch(*L, Error);
      break;
    }
    case Action::None:
      break;
    }
  }
  if (!Error.empty())
    error(L->Kernel + " launch " + std::to_string(L->Record.Ordinal) + ": " +
          Error);
  S.Result.Launches.push_back(L->Record);
  release(*L);
}

void writeResult() {
  ProbeState &S = state();
  std::string Path = S.Config.ResultPath;
  std::string Tmp = Path + ".tmp";
  std::FILE *F = std::fopen(Tmp.c_str(), "w");
  if (!F) {
    std::fprintf(stderr, "optiml-probe: cannot write %s\n", Tmp.c_str());
    return;
  }
  std::string Text = writeProbeResult(S.Result);
  bool Ok = std::fwrite(Text.data(), 1, Text.size(), F) == Text.size();
  Ok &= std::fclose(F) == 0;
  if (!Ok || std::rename(Tmp.c_str(), Path.c_str()) != 0)
    std::fprintf(stderr, "optiml-probe: cannot write %s\n", Path.c_str());
}

/// Called at context teardown and at exit; writes what is known so far.
void finalize(bool AtExit) {
  ProbeState &S = state();
  std::lock_guard<std::mutex> Lock(S.Mutex);
  if (S.Finalized)
    return;
  ToolScope Guard;
  for (auto &[Kernel, Staged] : S.PendingLast)
    if (Staged)
      finishStaged(*Staged);
  S.PendingLast.clear();
  bool CheckCounts = !S.CountsChecked;
  S.CountsChecked = true;
  if (CheckCounts && S.Config.Mode == ProbeMode::Reference && S.Store) {
    for (const ProbeKernel &K : S.Config.Kernels) {
      bool Any = false;
      for (const auto &[Name, Count] : S.Launches)
        if (kernelNameMatches(K.Name, Name)) {
          S.Store->saveLaunchCount(Name, Count);
          Any = true;
        }
      if (!Any)
        error("target kernel '" + K.Name + "' was never launched");
    }
  }
  if (CheckCounts && S.Config.Mode == ProbeMode::Candidate && S.Store) {
    for (const ProbeKernel &K : S.Config.Kernels) {
      bool Any = false;
      for (const auto &[Name, Count] : S.Launches) {
        if (!kernelNameMatches(K.Name, Name))
          continue;
        Any = true;
        long Expected = S.Store->launchCount(Name);
        if (Expected < 0 || Expected == static_cast<long>(Count))
          continue;
        std::string Message = "kernel " + Name + " was launched " +
                              std::to_string(Count) +
                              " times, the reference launched it " +
                              std::to_string(Expected) + " times";
        auto Across = S.LastMatchedAcross.find(Name);
        if (Across != S.LastMatchedAcross.end())
          Message += " (its last launch, " +
                     std::to_string(Across->second.first) +
                     ", was compared with the reference's last, " +
                     std::to_string(Across->second.second) + ")";
        error(Message);
      }
      if (!Any)
        error("target kernel '" + K.Name + "' was never launched");
    }
  }
  if (S.Profiler.ready())
    S.Profiler.tearDown();
  if (!AtExit) {
    S.Scratch.forget();
    S.Events.clear();
    S.Kernels.forget();
  }
  writeResult();
  // At context teardown more may follow (a new context); exit is final.
  S.Finalized = AtExit;
}

void atExit() {
  try {
    finalize(/*AtExit=*/true);
  } catch (const std::exception &E) {
    std::fprintf(stderr, "optiml-probe: %s\n", E.what());
  }
}

void dispatch(CUpti_CallbackDomain Domain, CUpti_CallbackId Id,
              const void *Data) {
  if (Domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (Id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
      finalize(/*AtExit=*/false);
    return;
  }
  if (Domain != CUPTI_CB_DOMAIN_DRIVER_API)
    return;
  auto *CD = static_cast<const CUpti_CallbackData *>(Data);
  ToolScope Guard;
  if (CD->callbackSite == CUPTI_API_ENTER) {
    // The runtime's launch may nest driver launches: only the outermost.
    if (DriverDepth++ == 0)
      onLaunchEnter(Id, CD);
    return;
  }
  if (--DriverDepth == 0 && Current)
    onLaunchExit(CD);
}

void CUPTIAPI callback(void *, CUpti_CallbackDomain Domain, CUpti_CallbackId Id,
                       const void *Data) {
  if (InTool)
    return;
  // Nothing may escape into the program: a failure is recorded instead.
  try {
    dispatch(Domain, Id, Data);
  } catch (const std::exception &E) {
    error(std::string("internal error: ") + E.what());
  } catch (...) {
    error("internal error");
  }
}

bool readConfig(std::string &Error) {
  ProbeState &S = state();
  const char *Path = std::getenv(ProbeConfigEnv);
  if (!Path || !*Path) {
    Error = std::string(ProbeConfigEnv) + " is not set";
    return false;
  }
  std::ifstream In(Path);
  if (!In) {
    Error = std::string("cannot read ") + Path;
    return false;
  }
  std::stringstream Text;
  Text << In.rdbuf();
  llvm::Expected<ProbeConfig> C = readProbeConfig(Text.str());
  if (!C) {
    Error = Path + (": " + llvm::toString(C.takeError()));
    return false;
  }
  S.Config = std::move(*C);
  S.Result.Mode = S.Config.Mode;
  return true;
}

bool initialize() {
  ProbeState &S = state();
  std::string Error;
  if (!readConfig(Error)) {
    std::fprintf(stderr, "optiml-probe: %s: the program runs unobserved\n",
                 Error.c_str());
    return false;
  }
  S.Configured = true;
  std::atexit(atExit);
  if (!S.Config.SnapshotDir.empty()) {
    S.Store = std::make_unique<SnapshotStore>(S.Config.SnapshotDir);
    bool Ok = S.Config.Mode == ProbeMode::Reference ? S.Store->create(Error)
                                                    : S.Store->load(Error);
    if (!Ok) {
      error(Error);
      S.Store.reset();
      if (S.Config.Mode == ProbeMode::Reference ||
          S.Config.Mode == ProbeMode::Candidate)
        return true; // the result file says why nothing was verified
    }
  }
  CUpti_SubscriberHandle Subscriber;
  if (CUptiResult R = cuptiSubscribe(&Subscriber, callback, nullptr)) {
    const char *Text = nullptr;
    cuptiGetResultString(R, &Text);
    error(std::string("cuptiSubscribe: ") + (Text ? Text : "failed") +
          " (is another CUPTI tool attached?)");
    return true;
  }
  const CUpti_CallbackId Launches[] = {
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
  };
  for (CUpti_CallbackId Id : Launches)
    if (cuptiEnableCallback(1, Subscriber, CUPTI_CB_DOMAIN_DRIVER_API, Id))
      error("cannot enable the driver launch callback " + std::to_string(Id));
  if (cuptiEnableCallback(1, Subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                          CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING))
    error("cannot enable the context-destroy callback");
  return true;
}

} // namespace
} // namespace probe
} // namespace optiml

/// Entry point the CUDA driver calls when CUDA_INJECTION64_PATH names us.
extern "C" __attribute__((visibility("default"))) int
InitializeInjection(void) {
  try {
    optiml::probe::initialize();
  } catch (const std::exception &E) {
    std::fprintf(stderr, "optiml-probe: %s\n", E.what());
  }
  return 1;
}
