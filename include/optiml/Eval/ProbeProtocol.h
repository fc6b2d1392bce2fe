//===- ProbeProtocol.h - What the evaluator and the probe exchange -*- C++
//-*-===//
//
// liboptiml-probe.so is loaded into the unmodified candidate program with
// CUDA_INJECTION64_PATH. The evaluator tells it what to do through a JSON
// file named by $OPTIML_PROBE_CONFIG and reads back a JSON result file. Both
// sides use these types and the (de)serializers in
// lib/Eval/Protocol/ProbeProtocol.cpp, part of the optimlProbeProtocol
// library that the probe and optimlEval both link.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_EVAL_PROBEPROTOCOL_H
#define OPTIML_EVAL_PROBEPROTOCOL_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace optiml {

/// Environment variable naming the probe's config file.
inline constexpr const char *ProbeConfigEnv = "OPTIML_PROBE_CONFIG";

enum class ProbeMode {
  /// Save post-launch snapshots of the verified launches to SnapshotDir.
  Reference,
  /// Compare post-launch buffers with the snapshots in SnapshotDir.
  Candidate,
  /// Replay the target launches with inputs restored; time with events.
  Time,
  /// Range-profiler metrics for the target launches (separate run).
  Metrics,
};

/// A pointer member of the struct a parameter points to (an array of
/// structs in device memory that hold device pointers).
struct ProbePointerField {
  unsigned Offset = 0; ///< bytes from the start of the struct
  std::string Name;    ///< for reports: "c", "inner.c"
  std::string InnerElementType;
  unsigned InnerElementSize = 0;
  bool InnerFloat = false;
};

/// One kernel parameter as the kernel model describes it (for comparison).
struct ProbeParam {
  unsigned Index = 0;
  bool Pointer = false;
  std::string ElementType; ///< "float", "double", "__half", "int", ...
  unsigned ElementSize = 0;
  bool Float = false;
  /// The elements hold device pointers: they are pointers (`float **`,
  /// pointing to Inner* elements), or structs with the pointer members
  /// PointerFields. The probe follows them to the allocations they point
  /// into.
  bool PointerArray = false;
  std::string InnerElementType;
  unsigned InnerElementSize = 0;
  bool InnerFloat = false;
  /// With PointerArray: the elements are structs of ElementSize bytes and
  /// these members are the pointers followed (element K's member F is
  /// followed element K * Fields + F). Empty: the elements are pointers.
  std::vector<ProbePointerField> PointerFields;
};

struct ProbeKernel {
  /// Matched against the demangled name without parameters, e.g.
  /// "saxpy", "ops::scale<float, 256>" (prefix "ops::scale" matches too).
  std::string Name;
  std::vector<ProbeParam> Params;
};

/// For floating-point buffers the probe uses, field by field, the larger of
/// this and the element type's default (defaultTolerance in Compare.h): the
/// config can widen the check, never make it stricter than the type allows.
struct Tolerance {
  double RelTol = 0; ///< |a-b| <= AbsTol + RelTol*|b| for floating point
  double AbsTol = 0;
  /// Also accept |a-b| <= ScaleRelTol * (the largest finite |b| of the
  /// buffer): for edits that reorder a reduction, whose rounding error
  /// scales with the terms summed, not with the (possibly cancelled)
  /// result. 0: off.
  double ScaleRelTol = 0;
  /// NaN in the same place in both is equal; Inf must match sign and place.
  bool NaNEqual = true;
};

struct ProbeConfig {
  ProbeMode Mode = ProbeMode::Reference;
  std::vector<ProbeKernel> Kernels;
  /// Which launches of each target kernel are verified (0-based): the first
  /// VerifyFirst, plus the last one if VerifyLast.
  unsigned VerifyFirst = 3;
  bool VerifyLast = true;
  std::string SnapshotDir;
  Tolerance Tol;
  /// Time mode: replays per timed launch; which launches are timed (the
  /// first TimeLaunches launches of each target kernel).
  unsigned Replays = 20;
  unsigned TimeLaunches = 1;
  /// Time mode: make L2 clean and cold (no line of the program's buffers,
  /// no dirty line) before each replay.
  bool FlushL2 = false;
  std::vector<std::string> Metrics;
  /// Metrics mode: clean L2 before each profiled pass. Off leaves L2 as the
  /// program (and the probe's restores) left it: only for measuring what
  /// the clean changes.
  bool CleanL2 = true;
  /// Metrics mode: the range profiler torn down and set up anew (host
  /// object, config image, range-profiler object) for every profiled launch
  /// after the first, rather than one profiler reconfigured per launch.
  /// A reused profiler counted about half the DRAM bytes a later launch
  /// wrote (docs/benchmarks.md); eval turns this on (EvalOptions), the raw
  /// config keeps the old behaviour for comparison.
  bool FreshProfiler = false;
  /// Metrics mode: before each profiled pass restore only the buffers the
  /// program's own launch changed (the others already hold the pre-launch
  /// state), rather than every buffer. A diagnostic: on the H200 it did not
  /// change the DRAM counts of the kernels measured (docs/benchmarks.md).
  bool RestoreWrittenOnly = false;
  /// Metrics mode: CUPTI's kernel replay of the program's own launch (the
  /// driver saves and restores memory between passes; L2 cleaned before
  /// the first pass only), as when there is no memory for the probe's
  /// copies, rather than the probe's replays from its copy. A diagnostic:
  /// ncu replays kernels the same way.
  bool KernelReplay = false;
  /// Metrics mode, the probe's replays: this many unprofiled launches from
  /// the pre-launch state before the first pass, so that the GPU's clocks
  /// have come up after the host-side profiler setup. A diagnostic: on the
  /// H200 it changed neither a 15-us kernel's duration nor any DRAM count
  /// (docs/benchmarks.md, session 7), so eval does not use it.
  unsigned WarmUpLaunches = 0;
  /// Metrics mode, the probe's replays: clean L2 inside each pass, after
  /// the profiler's start, and profile a user range around the relaunch
  /// alone (rather than clean, then start, with a range per launch). A
  /// diagnostic: the DRAM bytes then exclude the write-backs of what the
  /// profiler's start leaves dirty in L2 (about 2.5 MB on the H200, which
  /// ncu's counts include), but a user range adds about 12 us to the
  /// time (docs/benchmarks.md, session 7), so eval does not use it.
  bool CleanInPass = false;
  /// Candidate mode: also time the first TimeLaunches launches (Replays
  /// each, as Time mode does) once they have verified, in the same run.
  bool TimeVerified = false;
  /// Candidate mode: copy the buffers to the host and compare there rather
  /// than on the GPU (which is also the fallback when the device cannot).
  bool CompareOnHost = false;
  /// Where the probe writes its ProbeResult.
  std::string ResultPath;
};

/// Result of comparing one buffer after one launch.
struct BufferCheck {
  unsigned Param = 0;
  /// 8-byte word of the parameter holding the pointer (0 for a plain
  /// pointer parameter; a struct parameter can hold several).
  unsigned Word = 0;
  /// 0: the allocation the argument points into. K + 1: an allocation the
  /// argument's array of device pointers reaches, first through its
  /// element K (ProbeParam::PointerArray); for an array of structs, K is
  /// the struct's index times PointerFields.size() plus the member's.
  unsigned Element = 0;
  uint64_t Bytes = 0;
  /// "ok", "mismatch", "size-mismatch", "missing-snapshot", or
  /// "stale-output": the buffer is right only when it already held the
  /// answer (relaunched from the same state with this buffer poisoned, the
  /// result differs from the reference's poisoned run).
  std::string Status = "ok";
  /// This launch changed the buffer (reference and candidate runs).
  bool Written = false;
  /// Reference: the launch was also run from a poisoned start of this
  /// buffer and that result saved. Candidate: that check was made.
  bool PoisonChecked = false;
  /// The parameter's buffer changed though the reference wrote it in none
  /// of the kernel's verified launches (input mutation or a stray write).
  bool UnexpectedWrite = false;
  uint64_t Mismatches = 0;
  std::optional<uint64_t> FirstDiffIndex; ///< element index
  std::string Expected, Actual;           ///< values at the first difference
  double MaxAbsErr = 0, MaxRelErr = 0;
  /// Largest finite |expected| when the tolerance scaled with it
  /// (Tolerance::ScaleRelTol > 0); 0 otherwise.
  double Scale = 0;
  /// Why a check could not be made, or more about a failed one.
  std::string Detail;
};

struct LaunchRecord {
  std::string Kernel;   ///< demangled name
  unsigned Ordinal = 0; ///< n-th launch of this kernel in the program
  unsigned Grid[3] = {1, 1, 1};
  unsigned Block[3] = {1, 1, 1};
  unsigned DynamicShared = 0;
  /// From the driver's function attributes (ptxas facts as loaded).
  unsigned Registers = 0, StaticShared = 0, LocalBytes = 0;
  bool Verified = false; ///< this launch was snapshotted / compared
  /// Candidate mode: "device" when every buffer was compared on the GPU,
  /// "host" when some or all were copied back and compared there.
  std::string ComparedOn;
  std::vector<BufferCheck> Buffers;
  std::vector<double> TimesMs;           ///< Time mode: one per replay
  std::map<std::string, double> Metrics; ///< Metrics mode
  /// Metrics mode: how the profiler's passes were run. "user": the probe
  /// replayed the launch once per pass from the pre-launch state, cleaning
  /// L2 before each; "kernel": CUPTI replayed it inside the launch (used
  /// when there is no memory for a copy of the buffers), L2 cleaned only
  /// before the first pass.
  std::string Replay;
  /// Metrics mode: L2 held no dirty lines at the start of every profiled
  /// pass (the DRAM bytes written are the launch's own).
  bool L2Cleaned = false;
  /// Metrics mode, user replay: how many times the probe launched it for
  /// the profiler's passes (ProbeResult::ProfilerPasses says how many the
  /// metrics need).
  unsigned Passes = 0;
};

struct ProbeResult {
  ProbeMode Mode = ProbeMode::Reference;
  std::vector<LaunchRecord> Launches;
  /// Problems the probe hit (CUPTI unavailable, snapshot write failed...).
  std::vector<std::string> Errors;
  /// Metrics could not be collected (with the reason), timing still valid.
  std::string MetricsUnavailable;
  /// Metrics mode: passes the range profiler said its metrics need (0: not
  /// set up).
  unsigned ProfilerPasses = 0;
};

const char *toString(ProbeMode M);
std::string writeProbeConfig(const ProbeConfig &C);
llvm::Expected<ProbeConfig> readProbeConfig(llvm::StringRef JSONText);
std::string writeProbeResult(const ProbeResult &R);
llvm::Expected<ProbeResult> readProbeResult(llvm::StringRef JSONText);

/// Which of the reference's launches of a kernel was its staged last one:
/// RefLaunches-1 when the reference verified its last launch (VerifyLast)
/// and that launch came after the first VerifyFirst, else none.
/// HasSnapshotAtLast: the reference saved buffers for launch RefLaunches-1.
std::optional<unsigned> stagedLastOrdinal(long RefLaunches,
                                          unsigned VerifyFirst, bool VerifyLast,
                                          bool HasSnapshotAtLast);

/// What a candidate run does with the Ordinal-th launch of a kernel.
enum class CandidateAction {
  None,
  /// Compare right after the launch with the reference's launch Ordinal.
  Verify,
  /// Keep the launch on the device; the kernel's last kept launch is
  /// compared at exit with the reference's staged last launch.
  StageLast,
};
/// The first launches are matched by ordinal; the last by being last. A
/// program whose launch count depends on its own timing (a benchmark loop
/// sized from a warm-up) launches a kernel a different number of times
/// under the probe's per-launch copies than without them, so the
/// candidate's launch RefLast is then some other launch of the kernel.
/// HasSnapshot: the reference saved buffers for launch Ordinal.
CandidateAction candidateAction(unsigned Ordinal, bool HasSnapshot,
                                std::optional<unsigned> RefLast,
                                unsigned VerifyFirst);

/// The kernel name ProbeKernel::Name is matched against: a demangled name
/// without return type and parameter list ("void ns::k<int>(int*)" gives
/// "ns::k<int>").
std::string kernelBaseName(llvm::StringRef Demangled);
/// Pattern equals BaseName, or names the template BaseName instantiates.
bool kernelNameMatches(llvm::StringRef Pattern, llvm::StringRef BaseName);

} // namespace optiml

#endif
