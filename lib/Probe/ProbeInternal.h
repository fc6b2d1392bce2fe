//===- ProbeInternal.h - Pieces of liboptiml-probe.so ------------*- C++
//-*-===//
//
// The probe runs inside someone else's CUDA program. It talks to the GPU
// only through the driver API (the program's runtime may be linked
// statically and unreachable), never lets an exception or an abort out, and
// records every problem in ProbeResult::Errors.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_PROBE_PROBEINTERNAL_H
#define OPTIML_LIB_PROBE_PROBEINTERNAL_H

#include "optiml/Eval/Compare.h"
#include "optiml/Eval/ProbeProtocol.h"

#include <cuda.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace optiml {
namespace probe {

/// "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2)".
std::string driverError(const char *What, CUresult R);

/// What the reference run saved about one buffer of one launch.
struct SnapshotEntry {
  std::string Kernel; ///< kernelBaseName
  unsigned Ordinal = 0;
  unsigned Param = 0, Word = 0;
  unsigned Element = 0; ///< BufferCheck::Element
  uint64_t Bytes = 0;
  uint64_t Offset = 0; ///< of the parameter's pointer in the allocation
  bool Written = false;
  /// A poisoned-start run of the launch was saved for this buffer.
  bool PoisonChecked = false;
  std::string File; ///< relative to the snapshot directory
};

/// The reference run's snapshot directory: raw post-launch buffer contents,
/// one file per launch and buffer, and manifest.jsonl describing them (one
/// JSON object per line, appended as the run goes so a crash keeps what was
/// saved).
class SnapshotStore {
public:
  explicit SnapshotStore(std::string Dir) : Dir(std::move(Dir)) {}

  /// Creates the directory and truncates the manifest (reference run).
  bool create(std::string &Error);
  /// Reads the manifest (candidate and time runs).
  bool load(std::string &Error);

  /// Saves the post-launch contents, and Poisoned (the buffer after the
  /// launch ran from a poisoned start) when not null.
  bool save(SnapshotEntry E, const std::vector<uint8_t> &Data,
            const std::vector<uint8_t> *Poisoned, std::string &Error);
  bool read(const SnapshotEntry &E, std::vector<uint8_t> &Data,
            std::string &Error) const;
  bool readPoisoned(const SnapshotEntry &E, std::vector<uint8_t> &Data,
                    std::string &Error) const;
  /// Records how often the reference launched a kernel (at exit).
  void saveLaunchCount(const std::string &Kernel, unsigned Count);

  const SnapshotEntry *find(const std::string &Kernel, unsigned Ordinal,
                            unsigned Param, unsigned Word,
                            unsigned Element) const;
  /// The buffers the reference saved for one launch (empty: not verified).
  std::vector<const SnapshotEntry *> launch(const std::string &Kernel,
                                            unsigned Ordinal) const;
  /// Whether the reference had any launch of Kernel at Ordinal on record.
  bool hasLaunch(const std::string &Kernel, unsigned Ordinal) const {
    return !launch(Kernel, Ordinal).empty();
  }
  /// Whether any launch of Kernel on record wrote this argument's buffer.
  bool everWritten(const std::string &Kernel, unsigned Param, unsigned Word,
                   unsigned Element) const;
  /// -1 when the reference did not record a count for Kernel.
  long launchCount(const std::string &Kernel) const;

private:
  bool appendLine(const std::string &Line, std::string &Error);

  std::string Dir;
  std::map<std::tuple<std::string, unsigned, unsigned, unsigned, unsigned>,
           SnapshotEntry>
      Entries;
  std::map<std::string, long> Counts;
};

/// CUPTI's range profiler for one launch at a time (AutoRange: a range is
/// one kernel launch between startPass() and endPass()).
class RangeProfiler {
public:
  enum class Replay {
    /// The caller launches once per pass, restoring the inputs between.
    User,
    /// The driver replays the launch inside it, once per pass.
    Kernel,
  };
  /// Sets up the host and device side for Metrics on Ctx. Returns "" or
  /// why profiling is unavailable; Rejected gets the metric names the
  /// chip does not know (they are dropped, the rest are collected).
  std::string setUp(CUcontext Ctx, const std::vector<std::string> &Metrics,
                    std::vector<std::string> &Rejected);
  /// A fresh session for one launch. Fresh: when a launch was profiled
  /// before, the profiler is first torn down and set up anew (host object,
  /// config image and range-profiler object).
  /// UserRange (user replay only): the range is what lies between
  /// pushRange() and popRange() inside a pass rather than each launch, so
  /// work queued in the pass before pushRange() (the L2 clean) is not
  /// counted.
  std::string begin(Replay Mode, bool Fresh = false, bool UserRange = false);
  std::string startPass();
  std::string pushRange();
  std::string popRange();
  /// AllPassesDone: every pass the metrics need has been collected.
  std::string endPass(bool &AllPassesDone);
  /// Decodes and evaluates the launch's range.
  std::string finish(std::map<std::string, double> &Values);
  void tearDown();
  bool ready() const { return Ready; }
  size_t passes() const { return Passes; }

private:
  std::string enable();
  bool Ready = false;
  bool Used = false;        ///< the current object has had a session
  bool Initialized = false; ///< cuptiProfilerInitialize has been called
  size_t Passes = 0;
  struct State;
  State *S = nullptr;
};

/// The probe's own kernels (ProbeKernels.cu, embedded as a fatbin), loaded
/// into the program's context at first use.
class DeviceKernels {
public:
  /// Loads the kernels once; "" or why they cannot be used.
  std::string load();
  /// Queues on Stream a read of a zero-filled scratch buffer four times the
  /// size of L2 (twice left measurable dirty lines behind on the H200,
  /// bench/eval/l2clean): afterwards L2 holds only clean lines of that
  /// buffer, so the dirty lines of earlier work are written back now, not
  /// during the next launch, and nothing of the program's buffers is
  /// cached. Returns "" or why L2 cannot be cleaned (then nothing is
  /// queued).
  std::string cleanL2(CUstream Stream);

  struct Comparison {
    uint64_t Mismatches = 0;
    std::optional<uint64_t> FirstDiff;
    double MaxAbsErr = 0, MaxRelErr = 0;
  };
  /// Compares N scalars of T at Expected and Actual (both aligned to
  /// T.Size, which is 1, 2, 4 or 8) as compareBuffers does, on Stream, and
  /// waits for the answer. Returns "" or why the device cannot compare.
  std::string compare(CUdeviceptr Expected, CUdeviceptr Actual, uint64_t N,
                      ElementType T, const Tolerance &Tol, CUstream Stream,
                      Comparison &Out);
  /// The context is going away, and the module and buffers with it.
  void forget() { *this = DeviceKernels(); }

private:
  std::string loadModule();
  bool sameContext() const;

  bool Tried = false;
  std::string LoadError;
  CUcontext Ctx = nullptr;
  CUmodule Module = nullptr;
  CUfunction Touch = nullptr, Compare = nullptr;
  CUdeviceptr Result = 0; ///< an OptimlCompareResult
  CUdeviceptr Scratch = 0;
  size_t L2Bytes = 0, ScratchBytes = 0;
  unsigned Blocks = 0;
};

} // namespace probe
} // namespace optiml

#endif // OPTIML_LIB_PROBE_PROBEINTERNAL_H
