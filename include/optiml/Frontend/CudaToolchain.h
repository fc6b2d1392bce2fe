//===- CudaToolchain.h - Where CUDA and clang's headers are ----*- C++ -*-===//
//
// Finds the CUDA installation, the GPU architecture, and clang's resource
// directory, and turns them into the clang arguments every parse needs.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_FRONTEND_CUDATOOLCHAIN_H
#define OPTIML_FRONTEND_CUDATOOLCHAIN_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace optiml {

/// Which side of a CUDA compilation to parse. Host parses see kernel bodies
/// too (clang checks them on both sides), so the kernel model uses Host;
/// edit checks parse both.
enum class CudaSide { Host, Device };

struct ToolchainOptions {
  std::string CudaPath;    ///< --cuda-path; empty: $CUDA_PATH, /usr/local/cuda
  std::string GpuArch;     ///< --cuda-gpu-arch; empty: sm_90
  std::string ResourceDir; ///< -resource-dir; empty: found from the binary
  std::string Argv0;       ///< to find ../lib/clang/<major> beside the tool
};

struct Toolchain {
  std::string CudaPath;
  std::string GpuArch;
  std::string ResourceDir;
  /// "13.0" as read from the SDK (version.json or cuda.h); empty if unknown.
  std::string CudaVersion;
  /// Newest CUDA this clang fully understands, e.g. "12.9"; set only when the
  /// SDK is newer, i.e. when clang parses it as that version.
  std::string ClangTreatsAs;
  /// Where the CUDA path came from ("--cuda-path", "$CUDA_PATH", "default").
  std::string CudaPathOrigin;

  /// Arguments common to every CUDA parse of one side.
  std::vector<std::string> clangArgs(CudaSide Side) const;
};

/// Resolves the toolchain. Fails with a clear message if the CUDA path was
/// named explicitly and does not exist, or no resource directory is found.
llvm::Expected<Toolchain> discoverToolchain(const ToolchainOptions &Opts);

/// True if \p Arch looks like sm_NN / sm_NNa.
bool isValidGpuArch(llvm::StringRef Arch);

} // namespace optiml

#endif
