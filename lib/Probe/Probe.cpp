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

constexpr unsigned char Poison = 0xff; // NaN for floats, -1 for ints

/// One device buffer reached through a pointer argument.
struct Buffer {
  unsigned Param = 0, Word = 0;
  CUdeviceptr Base = 0;
  size_t Size = 0;
  size_t Offset = 0; ///< of the argument's pointer inside the allocation
  ElementType Type;
  CUdeviceptr Before = 0, After = 0; ///< device copies (pool-owned)
  /// Metrics with restoreWrittenOnly: the program's own launch left this
  /// buffer as it found it, so relaunches need not restore it.
  bool Unchanged = false;
};

enum class Action { None, Verify, StageLast, Time, Profile };

/// A target launch, with everything needed to launch it again.
struct Launch {
  Action What = Action::None;
  std::string Kernel; ///< base name
  const ProbeKernel *Target = nullptr;
  CUcontext Ctx = nullptr;
  CUfunction Function = nullptr; ///< a CUfunction or a CUkernel
  bool IsKernelHandle = false;
  CUstream Stream = nullptr;
  unsigned Grid[3] = {1, 1, 1}, Block[3] = {1, 1, 1}, Shared = 0;
  bool Ex = false;
  CUlaunchConfig ExConfig{};
  std::vector<CUlaunchAttribute> ExAttrs;
  std::vector<uint8_t> ArgBlob;
  std::vector<void *> Args;
  std::vector<Buffer> Buffers;
  /// Metrics: the program's own launch is profiled with kernel replay (no
  /// memory for a copy of the buffers to replay from).
  bool ProfileInPlace = false;
  LaunchRecord Record;
};

/// Device scratch buffers reused across launches (keyed by size).
class Pool {
public:
  CUdeviceptr get(size_t Size, std::string &Error) {
    auto &Free = BySize[Size];
    if (!Free.empty()) {
      CUdeviceptr P = Free.back();
      Free.pop_back();
      return P;
    }
    CUdeviceptr P = 0;
    if (CUresult R = cuMemAlloc(&P, Size)) {
      Error = driverError("cuMemAlloc", R) + " for a " + std::to_string(Size) +
              "-byte snapshot";
      return 0;
    }
    return P;
  }
  void put(size_t Size, CUdeviceptr &P) {
    if (P)
      BySize[Size].push_back(P);
    P = 0;
  }
  /// The context that owned the buffers is going away, and they with it.
  void forget() { BySize.clear(); }

private:
  std::map<size_t, std::vector<CUdeviceptr>> BySize;
};

struct ProbeState {
  std::mutex Mutex;
  ProbeConfig Config;
  bool Configured = false;
  ProbeResult Result;
  std::unique_ptr<SnapshotStore> Store;
  std::map<std::string, unsigned> Launches; ///< per kernel base name
  Pool Scratch;
  /// VerifyLast: per kernel, the latest launch after the first few, kept
  /// on the device until the program ends (only then is it known to be the
  /// last). The reference saves it; a candidate compares it with the
  /// reference's staged last launch, whatever its own ordinal.
  std::map<std::string, std::unique_ptr<Launch>> PendingLast;
  /// Candidate run: kernel -> (its last launch, the reference's last) when
  /// they were compared although their ordinals differ.
  std::map<std::string, std::pair<unsigned, unsigned>> LastMatchedAcross;
  RangeProfiler Profiler;
  bool ProfilerTried = false;
  std::vector<CUevent> Events;
  DeviceKernels Kernels;
  bool CleanL2Failed = false; ///< said once in the errors
  bool Finalized = false;
  bool CountsChecked = false;
  std::map<std::string, std::string> NameCache; ///< mangled -> base
  /// Reference run: (kernel, param, word) that some verified launch wrote.
  std::set<std::tuple<std::string, unsigned, unsigned>> WrittenEver;
};

ProbeState &state() {
  static ProbeState *S = new ProbeState; // never destroyed: used at exit
  return *S;
}

thread_local int InTool = 0;
thread_local int DriverDepth = 0;
thread_local Launch *Current = nullptr;

struct ToolScope {
  ToolScope() { ++InTool; }
  ~ToolScope() { --InTool; }
};

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
// Launch capture
//===-------------------------------------------------------------------===//

CUresult paramInfo(const Launch &L, size_t I, size_t *Off, size_t *Size) {
  return L.IsKernelHandle
             ? cuKernelGetParamInfo(reinterpret_cast<CUkernel>(L.Function), I,
                                    Off, Size)
             : cuFuncGetParamInfo(L.Function, I, Off, Size);
}

void kernelAttributes(Launch &L) {
  auto Get = [&](CUfunction_attribute A) -> unsigned {
    int V = 0;
    CUresult R;
    if (L.IsKernelHandle) {
      CUdevice Dev = 0;
      cuCtxGetDevice(&Dev);
      R = cuKernelGetAttribute(&V, A, reinterpret_cast<CUkernel>(L.Function),
                               Dev);
    } else {
      R = cuFuncGetAttribute(&V, A, L.Function);
    }
    return R == CUDA_SUCCESS && V > 0 ? static_cast<unsigned>(V) : 0;
  };
  L.Record.Registers = Get(CU_FUNC_ATTRIBUTE_NUM_REGS);
  L.Record.StaticShared = Get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  L.Record.LocalBytes = Get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
}

/// Copies the argument values and finds the device buffers they point to.
bool captureArguments(Launch &L, void **KernelParams, void **Extra,
                      std::string &Error) {
  size_t Off = 0, Size = 0;
  CUresult R = paramInfo(L, 0, &Off, &Size);
  if (R == CUDA_ERROR_INVALID_HANDLE && !L.IsKernelHandle) {
    // Launches through the runtime pass a CUkernel.
    L.IsKernelHandle = true;
    R = paramInfo(L, 0, &Off, &Size);
  }
  std::vector<std::pair<size_t, size_t>> Params;
  for (size_t I = 0; R == CUDA_SUCCESS && I < 4096; ++I) {
    R = paramInfo(L, I, &Off, &Size);
    if (R == CUDA_SUCCESS)
      Params.push_back({Off, Size});
  }
  if (R != CUDA_SUCCESS && R != CUDA_ERROR_INVALID_VALUE) {
    Error = driverError("cuKernelGetParamInfo", R);
    return false;
  }
  size_t Total = 0;
  for (auto [O, S] : Params)
    Total = std::max(Total, O + S);
  L.ArgBlob.assign(Total + 8, 0);

  const uint8_t *ExtraBuffer = nullptr;
  size_t ExtraSize = 0;
  if (!KernelParams && Extra) {
    for (unsigned K = 0; Extra[K] != CU_LAUNCH_PARAM_END && K < 32; K += 2) {
      if (Extra[K] == CU_LAUNCH_PARAM_BUFFER_POINTER)
        ExtraBuffer = static_cast<const uint8_t *>(Extra[K + 1]);
      else if (Extra[K] == CU_LAUNCH_PARAM_BUFFER_SIZE)
        ExtraSize = *static_cast<size_t *>(Extra[K + 1]);
    }
  }
  for (size_t I = 0; I < Params.size(); ++I) {
    auto [O, S] = Params[I];
    if (KernelParams)
      std::memcpy(L.ArgBlob.data() + O, KernelParams[I], S);
    else if (ExtraBuffer && O + S <= ExtraSize)
      std::memcpy(L.ArgBlob.data() + O, ExtraBuffer + O, S);
    else if (S) {
      Error = "cannot read the launch's arguments";
      return false;
    }
  }
  for (auto [O, S] : Params)
    L.Args.push_back(L.ArgBlob.data() + O);

  // Every aligned 8-byte word may be a device pointer (plain pointer
  // parameters, and structs that hold pointers).
  for (unsigned I = 0; I < Params.size(); ++I) {
    auto [O, S] = Params[I];
    for (size_t W = 0; W + 8 <= S; W += 8) {
      if ((O + W) % 8)
        continue;
      uint64_t V;
      std::memcpy(&V, L.ArgBlob.data() + O + W, 8);
      if (!V)
        continue;
      unsigned Type = 0;
      if (cuPointerGetAttribute(&Type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                static_cast<CUdeviceptr>(V)) != CUDA_SUCCESS ||
          Type != CU_MEMORYTYPE_DEVICE)
        continue;
      CUdeviceptr Base = 0;
      size_t Extent = 0;
      if (cuMemGetAddressRange(&Base, &Extent, static_cast<CUdeviceptr>(V)) !=
          CUDA_SUCCESS)
        continue;
      bool Seen = std::any_of(L.Buffers.begin(), L.Buffers.end(),
                              [&](const Buffer &B) { return B.Base == Base; });
      if (Seen)
        continue;
      Buffer B;
      B.Param = I;
      B.Word = static_cast<unsigned>(W / 8);
      B.Base = Base;
      B.Size = Extent;
      B.Offset = static_cast<CUdeviceptr>(V) - Base;
      if (L.Target && W == 0)
        for (const ProbeParam &P : L.Target->Params)
          if (P.Index == I)
            B.Type = elementTypeFor(P);
      L.Buffers.push_back(B);
    }
  }
  return true;
}

CUresult relaunch(const Launch &L) {
  void **Args = const_cast<void **>(L.Args.data());
  if (L.Ex) {
    CUlaunchConfig C = L.ExConfig;
    C.attrs = const_cast<CUlaunchAttribute *>(L.ExAttrs.data());
    C.numAttrs = static_cast<unsigned>(L.ExAttrs.size());
    C.hStream = L.Stream;
    return cuLaunchKernelEx(&C, L.Function, Args, nullptr);
  }
  return cuLaunchKernel(L.Function, L.Grid[0], L.Grid[1], L.Grid[2], L.Block[0],
                        L.Block[1], L.Block[2], L.Shared, L.Stream, Args,
                        nullptr);
}

//===-------------------------------------------------------------------===//
// Device copies
//===-------------------------------------------------------------------===//

bool snapshotTo(Launch &L, CUdeviceptr Buffer::*Slot, std::string &Error) {
  ProbeState &S = state();
  for (Buffer &B : L.Buffers) {
    if (!(B.*Slot))
      B.*Slot = S.Scratch.get(B.Size, Error);
    if (!(B.*Slot) || !ok(cuMemcpyDtoDAsync(B.*Slot, B.Base, B.Size, L.Stream),
                          "cuMemcpyDtoDAsync", Error))
      return false;
  }
  return true;
}

bool restoreFrom(Launch &L, CUdeviceptr Buffer::*Slot, std::string &Error) {
  for (Buffer &B : L.Buffers)
    if (B.*Slot && !B.Unchanged &&
        !ok(cuMemcpyDtoDAsync(B.Base, B.*Slot, B.Size, L.Stream),
            "cuMemcpyDtoDAsync", Error))
      return false;
  return true;
}

void release(Launch &L) {
  ProbeState &S = state();
  for (Buffer &B : L.Buffers) {
    S.Scratch.put(B.Size, B.Before);
    S.Scratch.put(B.Size, B.After);
  }
}

bool toHost(CUdeviceptr P, size_t Size, std::vector<uint8_t> &Out,
            std::string &Error) {
  Out.resize(Size);
  return ok(cuMemcpyDtoH(Out.data(), P, Size), "cuMemcpyDtoH", Error);
}

//===-------------------------------------------------------------------===//
// Verification
//===-------------------------------------------------------------------===//

/// Compares Actual with the expected contents of B, typed after the
/// argument's pointer and exactly before it.
void compareInto(const Buffer &B, const std::vector<uint8_t> &Expected,
                 const std::vector<uint8_t> &Actual, BufferCheck &Check) {
  ProbeState &S = state();
  if (Expected.size() != Actual.size()) {
    Check.Status = "size-mismatch";
    Check.Detail = "the allocation holds " + std::to_string(Actual.size()) +
                   " bytes, the reference's " + std::to_string(Expected.size());
    return;
  }
  size_t Off = std::min(B.Offset, Actual.size());
  llvm::ArrayRef<uint8_t> E(Expected), A(Actual);
  CompareResult R =
      compareBuffers(E.drop_front(Off), A.drop_front(Off), B.Type,
                     effectiveTolerance(B.Type.Kind, S.Config.Tol));
  Check.Mismatches = R.Mismatches;
  Check.FirstDiffIndex = R.FirstDiffIndex;
  Check.Expected = R.Expected;
  Check.Actual = R.Actual;
  Check.MaxAbsErr = R.MaxAbsErr;
  Check.MaxRelErr = R.MaxRelErr;
  if (Off && bufferChanged(E.take_front(Off), A.take_front(Off))) {
    ++Check.Mismatches;
    Check.Detail = "bytes before the argument's pointer differ";
  }
  if (Check.Mismatches)
    Check.Status = "mismatch";
}

/// Relaunches from the pre-launch state with Victim poisoned.
bool poisonedRelaunch(Launch &L, size_t Victim, std::string &Error) {
  Buffer &V = L.Buffers[Victim];
  return restoreFrom(L, &Buffer::Before, Error) &&
         ok(cuMemsetD8Async(V.Base, Poison, V.Size, L.Stream),
            "cuMemsetD8Async", Error) &&
         ok(relaunch(L), "relaunch", Error) &&
         ok(cuStreamSynchronize(L.Stream), "cuStreamSynchronize", Error);
}

/// Relaunches from the pre-launch state with Victim poisoned and reads the
/// victim back. A kernel that skips work when its output already holds the
/// answer, or works only the first time, leaves poison where the reference
/// wrote values.
bool poisonedRun(Launch &L, size_t Victim, std::vector<uint8_t> &Out,
                 std::string &Error) {
  Buffer &V = L.Buffers[Victim];
  return poisonedRelaunch(L, Victim, Error) &&
         toHost(V.Base, V.Size, Out, Error);
}

/// Puts the program's state back as its own launch left it.
bool restoreHost(Launch &L, const std::vector<std::vector<uint8_t>> &After,
                 std::string &Error) {
  for (size_t I = 0; I < L.Buffers.size(); ++I)
    if (!ok(cuMemcpyHtoD(L.Buffers[I].Base, After[I].data(), After[I].size()),
            "cuMemcpyHtoD", Error))
      return false;
  return true;
}

void verifyReference(Launch &L, std::string &Error) {
  ProbeState &S = state();
  size_t N = L.Buffers.size();
  std::vector<std::vector<uint8_t>> Before(N), After(N);
  for (size_t I = 0; I < N; ++I)
    if (!toHost(L.Buffers[I].Before, L.Buffers[I].Size, Before[I], Error) ||
        !toHost(L.Buffers[I].Base, L.Buffers[I].Size, After[I], Error))
      return;
  std::vector<BufferCheck> Checks(N);
  for (size_t I = 0; I < N; ++I) {
    Checks[I].Param = L.Buffers[I].Param;
    Checks[I].Word = L.Buffers[I].Word;
    Checks[I].Bytes = L.Buffers[I].Size;
    Checks[I].Written = bufferChanged(Before[I], After[I]);
  }
  // Outputs also get a run from a poisoned start (first launches only: the
  // staged last launch can no longer be relaunched at exit). A launch that
  // recomputes what the buffer already holds changes nothing, so "output"
  // means written by this or an earlier verified launch of the kernel.
  std::vector<std::vector<uint8_t>> Poisoned(N);
  for (size_t I = 0; I < N; ++I)
    if (Checks[I].Written)
      S.WrittenEver.insert({L.Kernel, Checks[I].Param, Checks[I].Word});
  if (L.What == Action::Verify) {
    for (size_t I = 0; I < N; ++I) {
      if (!S.WrittenEver.count({L.Kernel, Checks[I].Param, Checks[I].Word}))
        continue;
      std::string PoisonError;
      if (!poisonedRun(L, I, Poisoned[I], PoisonError)) {
        Poisoned[I].clear();
        error(L.Kernel + " launch " + std::to_string(L.Record.Ordinal) +
              ": poisoned relaunch failed: " + PoisonError);
      }
    }
    if (!restoreHost(L, After, Error))
      return;
  }
  for (size_t I = 0; I < N; ++I) {
    SnapshotEntry E;
    E.Kernel = L.Kernel;
    E.Ordinal = L.Record.Ordinal;
    E.Param = Checks[I].Param;
    E.Word = Checks[I].Word;
    E.Offset = L.Buffers[I].Offset;
    E.Written = Checks[I].Written;
    Checks[I].PoisonChecked = !Poisoned[I].empty();
    std::string SaveError;
    if (!S.Store->save(E, After[I],
                       Poisoned[I].empty() ? nullptr : &Poisoned[I], SaveError))
      error(SaveError);
  }
  L.Record.Buffers = std::move(Checks);
  L.Record.Verified = true;
}

//===-------------------------------------------------------------------===//
// Comparison on the GPU
//===-------------------------------------------------------------------===//

/// bufferChanged on the device: 8-byte words, then the bytes after them.
/// Returns "" or why the device cannot tell.
std::string changedOnDevice(const Buffer &B, CUstream Stream, bool &Changed) {
  ProbeState &S = state();
  DeviceKernels::Comparison Words, Tail;
  uint64_t N = B.Size / 8;
  std::string Why =
      S.Kernels.compare(B.Before, B.Base, N, {ElementKind::UInt, 8},
                        Tolerance(), Stream, Words);
  if (Why.empty() && B.Size % 8)
    Why = S.Kernels.compare(B.Before + N * 8, B.Base + N * 8, B.Size % 8,
                            ElementType(), Tolerance(), Stream, Tail);
  Changed = Words.Mismatches || Tail.Mismatches;
  return Why;
}

/// compareInto on the device: Ref holds Expected (kept on the host to print
/// values), Actual the candidate's buffer. Only the counts, the first
/// index, the error maxima and two values come back. Check is changed only
/// on success; otherwise returns why the device could not compare.
std::string compareOnDevice(const Buffer &B, const std::vector<uint8_t> &Expected,
                            CUdeviceptr Ref, CUdeviceptr Actual,
                            CUstream Stream, BufferCheck &Check) {
  ProbeState &S = state();
  size_t Off = std::min<size_t>(B.Offset, B.Size);
  ElementType T = B.Type;
  unsigned Size = std::max(1u, T.Size);
  uint64_t N = (B.Size - Off) / Size;
  DeviceKernels::Comparison Typed, Prefix;
  // The scale comes from the expected values, which the host holds.
  Tolerance Tol = scaledTolerance(
      llvm::ArrayRef<uint8_t>(Expected)
          .drop_front(std::min(Off, Expected.size()))
          .take_front(N * Size),
      T,
      effectiveTolerance(T.Kind, S.Config.Tol));
  std::string Why =
      S.Kernels.compare(Ref + Off, Actual + Off, N, T, Tol, Stream, Typed);
  if (Why.empty() && Off)
    Why = S.Kernels.compare(Ref, Actual, Off, ElementType(), Tolerance(),
                            Stream, Prefix);
  // A tail shorter than one element compares exactly, as on the host.
  size_t TailAt = Off + N * Size, Tail = B.Size - TailAt;
  std::vector<uint8_t> TailBytes(Tail), At(Size);
  if (Why.empty() && Tail)
    if (CUresult R = cuMemcpyDtoH(TailBytes.data(), Actual + TailAt, Tail))
      Why = driverError("cuMemcpyDtoH", R);
  if (Why.empty() && Typed.FirstDiff)
    if (CUresult R = cuMemcpyDtoH(At.data(),
                                  Actual + Off + *Typed.FirstDiff * Size, Size))
      Why = driverError("cuMemcpyDtoH", R);
  if (!Why.empty())
    return Why;

  BufferCheck C = Check;
  C.Mismatches = Typed.Mismatches;
  C.MaxAbsErr = Typed.MaxAbsErr;
  C.MaxRelErr = Typed.MaxRelErr;
  if (Typed.FirstDiff) {
    C.FirstDiffIndex = *Typed.FirstDiff;
    C.Expected = formatElement(llvm::ArrayRef<uint8_t>(Expected).drop_front(Off),
                               *Typed.FirstDiff, T);
    C.Actual = formatElement(At, 0, T);
  }
  if (Tail && std::memcmp(Expected.data() + TailAt, TailBytes.data(), Tail)) {
    ++C.Mismatches;
    if (!C.FirstDiffIndex) {
      C.FirstDiffIndex = N;
      C.Expected = "(trailing bytes)";
      C.Actual = "(trailing bytes differ)";
    }
  }
  if (Prefix.Mismatches) {
    ++C.Mismatches;
    C.Detail = "bytes before the argument's pointer differ";
  }
  if (C.Mismatches)
    C.Status = "mismatch";
  Check = C;
  return "";
}

/// Uploads Expected once and compares it with Actual on the device. False
/// when the device cannot (no room, another size, misaligned, no kernels):
/// the caller then compares on the host.
bool compareUploaded(const Buffer &B, const std::vector<uint8_t> &Expected,
                     CUdeviceptr Actual, CUstream Stream, BufferCheck &Check) {
  ProbeState &S = state();
  if (Expected.size() != B.Size)
    return false;
  std::string Error;
  CUdeviceptr Ref = S.Scratch.get(B.Size, Error);
  if (!Ref)
    return false;
  bool Done = cuMemcpyHtoD(Ref, Expected.data(), B.Size) == CUDA_SUCCESS &&
              compareOnDevice(B, Expected, Ref, Actual, Stream, Check).empty();
  S.Scratch.put(B.Size, Ref);
  return Done;
}

/// Compares the launch's buffers with the reference's snapshots, on the GPU
/// unless the config asks for the host (a buffer the device cannot compare
/// is copied back and compared on the host). CanRelaunch: the launch can be
/// replayed from a poisoned start (not a staged launch, read at exit).
void verifyCandidate(Launch &L, std::string &Error, bool CanRelaunch) {
  ProbeState &S = state();
  size_t N = L.Buffers.size();
  bool Device = !S.Config.CompareOnHost && S.Kernels.load().empty();
  bool AllOnDevice = Device;
  // Host copies of the buffers after the launch, made only when needed.
  std::vector<std::vector<uint8_t>> After(N), Expected(N);
  auto HostAfter = [&](size_t I) {
    return !After[I].empty() ||
           toHost(L.Buffers[I].Base, L.Buffers[I].Size, After[I], Error);
  };
  std::vector<BufferCheck> Checks(N);
  std::vector<const SnapshotEntry *> Refs(N, nullptr);
  for (size_t I = 0; I < N; ++I) {
    const Buffer &B = L.Buffers[I];
    BufferCheck &C = Checks[I];
    C.Param = B.Param;
    C.Word = B.Word;
    C.Bytes = B.Size;
    if (!Device || !changedOnDevice(B, L.Stream, C.Written).empty()) {
      std::vector<uint8_t> Before;
      if (!toHost(B.Before, B.Size, Before, Error) || !HostAfter(I))
        return;
      C.Written = bufferChanged(Before, After[I]);
      AllOnDevice = false;
    }
    Refs[I] = S.Store->find(L.Kernel, L.Record.Ordinal, B.Param, B.Word);
    if (!Refs[I]) {
      C.Status = "missing-snapshot";
      C.Detail = "the reference saved no buffer for this argument";
      continue;
    }
    C.UnexpectedWrite =
        C.Written && !S.Store->everWritten(L.Kernel, B.Param, B.Word);
    std::string ReadError;
    if (!S.Store->read(*Refs[I], Expected[I], ReadError)) {
      C.Status = "missing-snapshot";
      C.Detail = ReadError;
      continue;
    }
    if (Device && compareUploaded(B, Expected[I], B.Base, L.Stream, C))
      continue;
    if (!HostAfter(I))
      return;
    compareInto(B, Expected[I], After[I], C);
    AllOnDevice = false;
  }
  // The reference saved buffers this launch does not reach.
  for (const SnapshotEntry *E : S.Store->launch(L.Kernel, L.Record.Ordinal)) {
    bool Reached = std::any_of(Refs.begin(), Refs.end(),
                               [&](const SnapshotEntry *R) { return R == E; });
    if (Reached)
      continue;
    BufferCheck C;
    C.Param = E->Param;
    C.Word = E->Word;
    C.Bytes = E->Bytes;
    C.Status = "missing-snapshot";
    C.Detail = "the argument does not point to device memory in this run";
    Checks.push_back(C);
  }
  // From the reference's poisoned start, the candidate must give what the
  // reference gave. Only worth asking when everything else agrees.
  bool AllOk =
      std::all_of(Checks.begin(), Checks.end(),
                  [](const BufferCheck &C) { return C.Status == "ok"; });
  bool Poisons =
      CanRelaunch && AllOk &&
      std::any_of(Refs.begin(), Refs.end(),
                  [](const SnapshotEntry *R) { return R && R->PoisonChecked; });
  // What the program's own launch left, to put back after the relaunches:
  // a device copy when there is room, else host copies.
  bool AfterOnDevice = false;
  if (Poisons) {
    std::string CopyError;
    AfterOnDevice = Device && snapshotTo(L, &Buffer::After, CopyError);
    for (size_t I = 0; !AfterOnDevice && I < N; ++I)
      if (!HostAfter(I))
        return;
  }
  bool Relaunched = false;
  for (size_t I = 0; Poisons && I < N; ++I) {
    if (!Refs[I] || !Refs[I]->PoisonChecked)
      continue;
    const Buffer &B = L.Buffers[I];
    std::vector<uint8_t> Want, Got;
    std::string PoisonError;
    BufferCheck Poisoned;
    bool Read = S.Store->readPoisoned(*Refs[I], Want, PoisonError);
    // Even a failed relaunch may have changed the buffers: restore below.
    Relaunched |= Read;
    bool Compared = Read && poisonedRelaunch(L, I, PoisonError);
    if (Compared &&
        !(Device && compareUploaded(B, Want, B.Base, L.Stream, Poisoned))) {
      AllOnDevice = false;
      Compared = toHost(B.Base, B.Size, Got, PoisonError);
      if (Compared)
        compareInto(B, Want, Got, Poisoned);
    }
    if (!Compared) {
      error(L.Kernel + " launch " + std::to_string(L.Record.Ordinal) +
            ": poisoned relaunch failed: " + PoisonError);
      continue;
    }
    Checks[I].PoisonChecked = true;
    if (Poisoned.Status != "ok") {
      Checks[I].Status = "stale-output";
      Checks[I].Mismatches = Poisoned.Mismatches;
      Checks[I].FirstDiffIndex = Poisoned.FirstDiffIndex;
      Checks[I].Expected = Poisoned.Expected;
      Checks[I].Actual = Poisoned.Actual;
      Checks[I].Detail =
          "relaunched with this buffer poisoned, the result differs from the "
          "reference's: the kernel relies on what the buffer held before";
    }
  }
  if (Relaunched) {
    bool Restored = AfterOnDevice
                        ? restoreFrom(L, &Buffer::After, Error) &&
                              ok(cuStreamSynchronize(L.Stream),
                                 "cuStreamSynchronize", Error)
                        : restoreHost(L, After, Error);
    if (!Restored)
      return;
  }
  L.Record.Buffers = std::move(Checks);
  L.Record.Verified = true;
  L.Record.ComparedOn = AllOnDevice ? "device" : "host";
}

//===-------------------------------------------------------------------===//
// L2
//===-------------------------------------------------------------------===//

/// Queues an L2 clean on the launch's stream. A failure is reported once,
/// with what it costs (Consequence).
bool cleanL2(Launch &L, const char *Consequence) {
  ProbeState &S = state();
  std::string Why = S.Kernels.cleanL2(L.Stream);
  if (Why.empty())
    return true;
  if (!S.CleanL2Failed)
    error("cannot clean L2 (" + Why + "): " + Consequence);
  S.CleanL2Failed = true;
  return false;
}

//===-------------------------------------------------------------------===//
// Timing
//===-------------------------------------------------------------------===//

void timeLaunch(Launch &L, std::string &Error) {
  ProbeState &S = state();
  unsigned K = S.Config.Replays;
  while (S.Events.size() < 2 * K) {
    CUevent E;
    if (!ok(cuEventCreate(&E, CU_EVENT_DEFAULT), "cuEventCreate", Error))
      return;
    S.Events.push_back(E);
  }
  if (!snapshotTo(L, &Buffer::After, Error))
    return;
  bool Flush = S.Config.FlushL2;
  for (unsigned R = 0; R < K; ++R) {
    if (!restoreFrom(L, &Buffer::Before, Error))
      return;
    // After the restore: its copies leave the inputs in L2, dirty.
    if (Flush && !cleanL2(L, "timed replays are not flushed"))
      Flush = false;
    if (!ok(cuEventRecord(S.Events[2 * R], L.Stream), "cuEventRecord", Error) ||
        !ok(relaunch(L), "relaunch", Error) ||
        !ok(cuEventRecord(S.Events[2 * R + 1], L.Stream), "cuEventRecord",
            Error))
      return;
  }
  if (!ok(cuStreamSynchronize(L.Stream), "cuStreamSynchronize", Error))
    return;
  for (unsigned R = 0; R < K; ++R) {
    float Ms = 0;
    if (!ok(cuEventElapsedTime(&Ms, S.Events[2 * R], S.Events[2 * R + 1]),
            "cuEventElapsedTime", Error))
      return;
    L.Record.TimesMs.push_back(Ms);
  }
  // The program continues from exactly what its own launch produced.
  if (restoreFrom(L, &Buffer::After, Error))
    ok(cuStreamSynchronize(L.Stream), "cuStreamSynchronize", Error);
}

//===-------------------------------------------------------------------===//
// Metrics
//===-------------------------------------------------------------------===//

/// Marks the buffers the program's own launch left as it found them
/// (compared on the device); a buffer that cannot be compared counts as
/// changed.
void markUnchanged(Launch &L) {
  for (Buffer &B : L.Buffers) {
    bool Changed = true;
    B.Unchanged = changedOnDevice(B, L.Stream, Changed).empty() && !Changed;
  }
}

const char *const DirtyL2 =
    "DRAM bytes written may include write-backs of earlier work";

/// Runs the profiler's passes as relaunches from the pre-launch state, each
/// after an L2 clean (so the DRAM writes counted are the launch's own, as
/// with ncu's cache control), then puts back what the program's own launch
/// left. CUPTI's kernel replay would restore memory between its passes,
/// leaving dirty lines that the next pass writes back.
void profileLaunch(Launch &L, std::string &Error) {
  ProbeState &S = state();
  if (!snapshotTo(L, &Buffer::After, Error))
    return;
  if (S.Config.RestoreWrittenOnly)
    markUnchanged(L);
  RangeProfiler::Replay Mode = RangeProfiler::Replay::User;
  bool InPass = S.Config.CleanInPass;
  std::string Why = S.Profiler.begin(Mode, S.Config.FreshProfiler, InPass);
  if (!Why.empty()) {
    error(L.Kernel + " launch " + std::to_string(L.Record.Ordinal) +
          ": user replay unavailable (" + Why + "): kernel replay, " +
          DirtyL2);
    Mode = RangeProfiler::Replay::Kernel;
    InPass = false;
    Why = S.Profiler.begin(Mode, S.Config.FreshProfiler);
  }
  L.Record.Replay = Mode == RangeProfiler::Replay::User ? "user" : "kernel";
  // Unprofiled launches first (outside any pass, as the L2 clean is).
  if (Why.empty() && Mode == RangeProfiler::Replay::User)
    for (unsigned W = 0; W < S.Config.WarmUpLaunches; ++W)
      if (!restoreFrom(L, &Buffer::Before, Error) ||
          !ok(relaunch(L), "relaunch (warm-up)", Error))
        break;
  bool Cleaned = true, Done = false;
  // The profiler says when it has every pass; the bound only guards
  // against one that never does.
  size_t MaxPasses = S.Profiler.passes() + 2;
  size_t Pass = 0;
  for (; Why.empty() && !Done && Pass < MaxPasses; ++Pass) {
    if (!restoreFrom(L, &Buffer::Before, Error))
      break;
    // After the restore, whose copies leave dirty lines; waited for, so
    // the pass holds nothing but the launch. CleanInPass: inside the pass,
    // after the profiler's start and before the range (as ncu flushes
    // right before the kernel).
    if (InPass && !(Why = S.Profiler.startPass()).empty())
      break;
    Cleaned &= S.Config.CleanL2 && cleanL2(L, DirtyL2);
    if (!ok(cuCtxSynchronize(), "cuCtxSynchronize", Error)) {
      bool Ignored = false;
      if (InPass) // the pass is open
        S.Profiler.endPass(Ignored);
      break;
    }
    if (!InPass && !(Why = S.Profiler.startPass()).empty())
      break;
    if (InPass && !(Why = S.Profiler.pushRange()).empty()) {
      bool Ignored = false;
      S.Profiler.endPass(Ignored);
      break;
    }
    bool Launched = ok(relaunch(L), "relaunch", Error);
    if (InPass) // Why is empty here: the pass started and the range opened
      Why = S.Profiler.popRange();
    Launched = Launched && ok(cuCtxSynchronize(), "cuCtxSynchronize", Error);
    std::string EndWhy = S.Profiler.endPass(Done);
    if (Why.empty())
      Why = EndWhy;
    if (!Launched)
      break;
    if (Mode == RangeProfiler::Replay::Kernel)
      Done = true; // every pass ran inside the one launch
  }
  L.Record.L2Cleaned = Cleaned && Mode == RangeProfiler::Replay::User;
  L.Record.Passes = Mode == RangeProfiler::Replay::User ? Pass : 0;
  if (Why.empty() && Error.empty())
    Why = Done ? S.Profiler.finish(L.Record.Metrics)
               : "the range profiler did not complete its " +
                     std::to_string(S.Profiler.passes()) + " passes in " +
                     std::to_string(Pass) + " launches";
  if (!Why.empty())
    S.Result.MetricsUnavailable = Why;
  // The program continues from exactly what its own launch produced.
  std::string RestoreError;
  if (restoreFrom(L, &Buffer::After, RestoreError))
    ok(cuCtxSynchronize(), "cuCtxSynchronize", RestoreError);
  for (Buffer &B : L.Buffers)
    B.Unchanged = false;
  if (Error.empty())
    Error = RestoreError;
}

/// Enter side of a launch the profiler cannot replay from a copy (no
/// memory for one): CUPTI's kernel replay profiles the program's own
/// launch, with L2 cleaned before its first pass only.
void profileInPlace(Launch &L, std::string &Error) {
  ProbeState &S = state();
  L.ProfileInPlace = true;
  L.Record.Replay = "kernel";
  if (S.Config.CleanL2)
    cleanL2(L, DirtyL2);
  if (!ok(cuCtxSynchronize(), "cuCtxSynchronize", Error))
    return;
  std::string Why =
      S.Profiler.begin(RangeProfiler::Replay::Kernel, S.Config.FreshProfiler);
  if (Why.empty())
    Why = S.Profiler.startPass();
  if (!Why.empty()) {
    S.Result.MetricsUnavailable = Why;
    L.ProfileInPlace = false; // nothing to stop
  }
}

/// Exit side of profileInPlace.
void finishInPlace(Launch &L) {
  ProbeState &S = state();
  bool Done = false;
  std::string Why = S.Profiler.endPass(Done);
  if (Why.empty())
    Why = S.Profiler.finish(L.Record.Metrics);
  if (!Why.empty())
    S.Result.MetricsUnavailable = Why;
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
              std::all_of(B.begin(), B.end(), [](const BufferCheck &C) {
                return C.Status == "ok";
              }))
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
