//===- Runner.h - Run a built program on a GPU, probed or sanitized -*- C++
//-*-===//
//
// One run of a candidate program: in its own process group with a time
// limit (support/Process), on one GPU (CUDA_VISIBLE_DEVICES), with the
// CUPTI probe injected (CUDA_INJECTION64_PATH + OPTIML_PROBE_CONFIG), or
// under compute-sanitizer restricted to the target kernels.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_EVAL_RUNNER_H
#define OPTIML_EVAL_RUNNER_H

#include "optiml/Eval/ProbeProtocol.h"
#include "optiml/Support/Process.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace optiml {

struct GpuInfo {
  unsigned Index = 0;
  std::string Name;
  std::string Arch; ///< sm_90
  uint64_t MemoryMiB = 0;
};

struct GpuQuery {
  std::vector<GpuInfo> Gpus;
  /// Why there are none ("nvidia-smi not found", its error...).
  std::string Problem;
};

/// Asks nvidia-smi which GPUs are present (honours CUDA_VISIBLE_DEVICES
/// when it lists plain indices).
GpuQuery queryGpus(double TimeoutSeconds = 30);
/// Parses `nvidia-smi --query-gpu=index,name,compute_cap,memory.total
/// --format=csv,noheader,nounits` output.
std::vector<GpuInfo> parseNvidiaSmi(llvm::StringRef Csv);

struct RunnerOptions {
  /// liboptiml-probe.so; required for probed runs.
  std::string ProbeLibrary;
  /// The CUDA installation: its lib64 and extras/CUPTI/lib64 go on
  /// LD_LIBRARY_PATH (the probe needs libcupti).
  std::string CudaPath = "/usr/local/cuda";
  /// The program's own arguments.
  std::vector<std::string> ProgramArgs;
  /// The program's working directory; empty: a private temporary one.
  std::string ProgramWorkDir;
  double TimeoutSeconds = 300;
  size_t OutputLimit = 1 << 20;
  /// compute-sanitizer; empty: not available.
  std::string ComputeSanitizer;
};

struct ProgramRun {
  std::string Label; ///< "reference", "self-check", "candidate", "time", ...
  std::optional<unsigned> Device;
  ProcessResult Process;
  std::optional<ProbeResult> Probe;
  /// Why Probe is missing (the program died first, unreadable result...).
  std::string ProbeProblem;
  std::string ConfigPath, ResultPath;
};

/// The probe's own complaint in a program's stderr when it could not read
/// its configuration or write its result (a failure of the tool, not of the
/// program); empty when there is none.
std::string probeMachineryFailure(llvm::StringRef Stderr);

/// Runs \p Binary with the probe in \p Config's mode; the config and result
/// files go to \p RunDir as <Label>.config.json / <Label>.result.json.
/// Errors only when the run cannot be set up.
llvm::Expected<ProgramRun>
runWithProbe(llvm::StringRef Binary, ProbeConfig Config, llvm::StringRef RunDir,
             llvm::StringRef Label, std::optional<unsigned> Device,
             const RunnerOptions &Opts);

/// Runs \p Binary without instrumentation.
llvm::Expected<ProgramRun> runPlain(llvm::StringRef Binary,
                                    llvm::StringRef Label,
                                    std::optional<unsigned> Device,
                                    const RunnerOptions &Opts);

struct SanitizerReport {
  std::string Tool; ///< memcheck, racecheck
  bool Ran = false;
  std::optional<unsigned> Errors; ///< from the ERROR SUMMARY line
  std::string FirstError;         ///< first reported problem, one line
  std::string Problem;            ///< why it did not run or finish
  ProcessResult Process;

  bool clean() const { return Ran && Errors && *Errors == 0; }
};

/// The sanitizer's verdict from its output (testable without a GPU).
SanitizerReport parseSanitizerOutput(llvm::StringRef Tool,
                                     llvm::StringRef Output);

/// Runs compute-sanitizer --tool \p Tool restricted to \p Kernels
/// (--kernel-name kns=<unqualified name>).
llvm::Expected<SanitizerReport>
runSanitizer(llvm::StringRef Tool, llvm::StringRef Binary,
             llvm::ArrayRef<std::string> Kernels,
             std::optional<unsigned> Device, const RunnerOptions &Opts);

/// Finds compute-sanitizer in <cuda>/bin, <cuda>/compute-sanitizer, PATH.
std::string findComputeSanitizer(llvm::StringRef CudaPath);

/// The program's arguments as it would see them run from \p Cwd: an
/// argument that is a relative path naming an existing file or directory
/// under \p Cwd becomes absolute, since the program runs in a private
/// directory. Numbers and options ("-n", "--in=x") are left alone. One note
/// per changed argument goes to \p Notes when given.
std::vector<std::string>
resolveProgramArgs(llvm::ArrayRef<std::string> Args, llvm::StringRef Cwd,
                   std::vector<std::string> *Notes = nullptr);

/// The arguments that look like relative paths ("data/in.dat", "in.dat")
/// yet name nothing under \p Cwd: what to point at when the program fails.
std::vector<std::string> missingPathArgs(llvm::ArrayRef<std::string> Args,
                                         llvm::StringRef Cwd);

/// One candidate at a time per GPU: acquire() blocks until a device is free.
class DevicePool {
public:
  explicit DevicePool(std::vector<unsigned> Devices);
  unsigned acquire();
  void release(unsigned D);
  size_t size() const { return Devices.size(); }

private:
  std::vector<unsigned> Devices;
  std::vector<bool> Busy;
  std::mutex Mu;
  std::condition_variable CV;
};

} // namespace optiml

#endif
