//===- Process.h - Run a child process under limits ------------*- C++ -*-===//
//
// Every external program the optimizer starts (nvcc, a candidate, the
// sanitizer) goes through runProcess: its own process group with a wall-time
// limit (the whole group is killed on timeout), stdin closed, stdout/stderr
// captured with a size cap (the tail is kept), a private temporary directory
// as cwd and TMPDIR, and an environment built from an allow-list
// (isChildEnvAllowed in Secrets.h) plus the variables the caller sets.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SUPPORT_PROCESS_H
#define OPTIML_SUPPORT_PROCESS_H

#include "optiml/Support/Secrets.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace optiml {

struct ProcessOptions {
  /// Args[0] is the program: an absolute path, or a name looked up in PATH.
  std::vector<std::string> Args;
  /// Working directory. Empty: a fresh private temporary directory, also
  /// given as TMPDIR, removed afterwards unless KeepTempDir.
  std::string WorkDir;
  bool KeepTempDir = false;
  /// Set (or override) these variables in the child's environment, whatever
  /// their name, except credentials (isSecretEnvName, captured ones).
  std::map<std::string, std::string> Env;
  /// Removed from the child's environment (besides what the allow-list
  /// leaves out).
  std::vector<std::string> UnsetEnv;
  /// Wall-clock limit in seconds; 0 means none.
  double TimeoutSeconds = 0;
  /// Bytes of each stream kept (the tail); the total size is still counted.
  size_t OutputLimit = 1 << 20;
};

struct ProcessResult {
  /// Exit status when the program exited normally.
  std::optional<int> ExitCode;
  /// Signal that ended the program (0 if none).
  int Signal = 0;
  bool TimedOut = false;
  double WallSeconds = 0;
  /// The last OutputLimit bytes of each stream.
  std::string Stdout, Stderr;
  uint64_t StdoutBytes = 0, StderrBytes = 0;
  /// SHA-256 (hex) of everything written to stdout, truncated or not.
  std::string StdoutHash;
  /// The private directory, when kept (KeepTempDir).
  std::string TempDir;

  bool succeeded() const { return !TimedOut && ExitCode && *ExitCode == 0; }
  bool stdoutTruncated() const { return StdoutBytes > Stdout.size(); }
  bool stderrTruncated() const { return StderrBytes > Stderr.size(); }
  /// "exited with status 0", "killed by signal 11 (SIGSEGV)",
  /// "timed out after 5 s (process group killed)".
  std::string describe() const;
};

/// Runs a process to completion. Errors only when it cannot be started (no
/// such program, no temporary directory); how it ended is in the result.
/// Thread-safe: several processes may run at once from different threads.
llvm::Expected<ProcessResult> runProcess(const ProcessOptions &Opts);

/// The child's environment, as NAME=VALUE strings: the variables of the
/// current environment that isChildEnvAllowed lets through, without \p
/// Unset, with \p Set applied (credentials never).
std::vector<std::string>
childEnvironment(const std::map<std::string, std::string> &Set,
                 llvm::ArrayRef<std::string> Unset = {});

/// Finds \p Name in PATH (or \p ExtraDirs first). Empty if not found.
std::string findProgram(llvm::StringRef Name,
                        llvm::ArrayRef<std::string> ExtraDirs = {});

/// The last \p MaxLines non-empty lines of \p Text.
std::string lastLines(llvm::StringRef Text, unsigned MaxLines);

} // namespace optiml

#endif
