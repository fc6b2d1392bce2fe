//===- ProbeLaunch.h - The probe's state and its launches -------*- C++ -*-===//
//
// Private to liboptiml-probe.so: the state the probe keeps inside the
// program and a captured target launch, shared by the callbacks (Probe.cpp),
// the launch capture and device copies (ProbeCapture.cpp), verification
// (ProbeVerify.cpp) and timing and metrics (ProbeMeasure.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_PROBE_PROBELAUNCH_H
#define OPTIML_LIB_PROBE_PROBELAUNCH_H

#include "ProbeInternal.h"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace optiml {
namespace probe {

constexpr unsigned char Poison = 0xff; // NaN for floats, -1 for ints

/// One device buffer reached through a pointer argument.
struct Buffer {
  unsigned Param = 0, Word = 0;
  /// 0, or K + 1 for an allocation first reached through element K of the
  /// argument's array of device pointers (BufferCheck::Element).
  unsigned Element = 0;
  CUdeviceptr Base = 0;
  /// The allocation's address in the program: Base, which the staged last
  /// launch swaps with its copy (finishStaged) while it is verified, is
  /// not always that.
  CUdeviceptr Home = 0;
  size_t Size = 0;
  /// Of the argument's pointer (of element K's) inside the allocation.
  size_t Offset = 0;
  ElementType Type;
  /// The argument is an array of device pointers, or of structs holding
  /// them (ProbeParam::PointerArray): its pointers are saved and compared
  /// as (buffer, offset) pairs (canonicalPointers), since the addresses
  /// differ from one run to the next.
  bool PointerArray = false;
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
  /// Reference run: (kernel, param, word, element) that some verified
  /// launch wrote.
  std::set<std::tuple<std::string, unsigned, unsigned, unsigned>> WrittenEver;
};

ProbeState &state();
/// Reports \p Message on stderr and in the result's errors.
void error(const std::string &Message);
/// Whether \p R is CUDA_SUCCESS; else \p Error says which call failed
/// (the first failure is kept).
bool ok(CUresult R, const char *What, std::string &Error);

// Launch capture and device copies (ProbeCapture.cpp).
void kernelAttributes(Launch &L);
/// Copies the argument values and finds the device buffers they point to.
bool captureArguments(Launch &L, void **KernelParams, void **Extra,
                      std::string &Error);
CUresult relaunch(const Launch &L);
/// What is saved and compared of B: its contents, with the device pointers
/// of an array of them (Buffer::PointerArray) written as (buffer, offset)
/// pairs of this launch (canonicalPointers).
std::vector<uint8_t> canonicalContents(const Launch &L, const Buffer &B,
                                       std::vector<uint8_t> Data);
bool snapshotTo(Launch &L, CUdeviceptr Buffer::*Slot, std::string &Error);
bool restoreFrom(Launch &L, CUdeviceptr Buffer::*Slot, std::string &Error);
void release(Launch &L);
bool toHost(CUdeviceptr P, size_t Size, std::vector<uint8_t> &Out,
            std::string &Error);

// Verification (ProbeVerify.cpp).
void verifyReference(Launch &L, std::string &Error);
/// bufferChanged on the device: 8-byte words, then the bytes after them.
/// Returns "" or why the device cannot tell.
std::string changedOnDevice(const Buffer &B, CUstream Stream, bool &Changed);
/// Compares the launch's buffers with the reference's snapshots, on the GPU
/// unless the config asks for the host. CanRelaunch: the launch can be
/// replayed from a poisoned start (not a staged launch, read at exit).
void verifyCandidate(Launch &L, std::string &Error, bool CanRelaunch);

// Timing and metrics (ProbeMeasure.cpp).
/// What a profile taken without an L2 clean may count.
const char *const DirtyL2 =
    "DRAM bytes written may include write-backs of earlier work";
void timeLaunch(Launch &L, std::string &Error);
/// Profiles the launch by relaunching it from the pre-launch state.
void profileLaunch(Launch &L, std::string &Error);
/// Enter side of a launch profiled with CUPTI's kernel replay.
void profileInPlace(Launch &L, std::string &Error);
/// Exit side of profileInPlace.
void finishInPlace(Launch &L);

} // namespace probe
} // namespace optiml

#endif // OPTIML_LIB_PROBE_PROBELAUNCH_H
