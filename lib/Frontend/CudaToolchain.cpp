//===- CudaToolchain.cpp --------------------------------------------------===//

#include "optiml/Frontend/CudaToolchain.h"
#include "optiml/Frontend/NvccCompat.h"
#include "clang/Basic/Cuda.h"
#include "clang/Basic/Version.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include <cstdlib>

using namespace llvm;

namespace optiml {

#ifndef OPTIML_CLANG_RESOURCE_DIR
#define OPTIML_CLANG_RESOURCE_DIR ""
#endif

bool isValidGpuArch(StringRef Arch) {
  static const Regex Re("^sm_[0-9]{2,3}[af]?$");
  return Re.match(Arch);
}

/// Reads "13.0" from <cuda>/version.json, else from CUDA_VERSION in cuda.h.
static std::string readCudaVersion(StringRef CudaPath) {
  SmallString<256> P(CudaPath);
  sys::path::append(P, "version.json");
  if (auto Buf = MemoryBuffer::getFile(P)) {
    // {"cuda" : {"name" : "CUDA SDK", "version" : "13.0.48"}, ...}
    StringRef Text = (*Buf)->getBuffer();
    size_t Cuda = Text.find("\"cuda\"");
    if (Cuda != StringRef::npos) {
      static const Regex Re("\"version\"[ \t]*:[ \t]*\"([0-9]+)\\.([0-9]+)");
      SmallVector<StringRef, 3> M;
      if (Re.match(Text.substr(Cuda), &M))
        return (M[1] + "." + M[2]).str();
    }
  }
  P = CudaPath;
  sys::path::append(P, "include", "cuda.h");
  if (auto Buf = MemoryBuffer::getFile(P)) {
    static const Regex Re("#define CUDA_VERSION ([0-9]+)");
    SmallVector<StringRef, 2> M;
    unsigned V = 0;
    if (Re.match((*Buf)->getBuffer(), &M) && !M[1].getAsInteger(10, V))
      return std::to_string(V / 1000) + "." + std::to_string(V % 1000 / 10);
  }
  return "";
}

static bool versionGreater(StringRef A, StringRef B) {
  auto Parse = [](StringRef S) {
    auto [Major, Minor] = S.split('.');
    unsigned Ma = 0, Mi = 0;
    Major.getAsInteger(10, Ma);
    Minor.getAsInteger(10, Mi);
    return std::make_pair(Ma, Mi);
  };
  return Parse(A) > Parse(B);
}

static std::string findResourceDir(const ToolchainOptions &Opts) {
  if (!Opts.ResourceDir.empty())
    return Opts.ResourceDir;
  // A relocated install or bundle: <prefix>/bin/clang-optiml with clang's
  // headers in <prefix>/lib/clang/<major>.
  if (!Opts.Argv0.empty()) {
    std::string Exe = sys::fs::getMainExecutable(
        Opts.Argv0.c_str(), reinterpret_cast<void *>(&findResourceDir));
    if (!Exe.empty()) {
      SmallString<256> Dir(sys::path::parent_path(sys::path::parent_path(Exe)));
      sys::path::append(Dir, "lib", "clang", CLANG_VERSION_MAJOR_STRING);
      if (sys::fs::exists(Dir + "/include/__clang_cuda_runtime_wrapper.h"))
        return std::string(Dir);
    }
  }
  return OPTIML_CLANG_RESOURCE_DIR;
}

Expected<Toolchain> discoverToolchain(const ToolchainOptions &Opts) {
  Toolchain T;
  if (!Opts.CudaPath.empty()) {
    T.CudaPath = Opts.CudaPath;
    T.CudaPathOrigin = "--cuda-path";
  } else if (const char *Env = std::getenv("CUDA_PATH"); Env && *Env) {
    T.CudaPath = Env;
    T.CudaPathOrigin = "$CUDA_PATH";
  } else {
    T.CudaPath = "/usr/local/cuda";
    T.CudaPathOrigin = "default";
  }
  if (T.CudaPathOrigin != "default" && !sys::fs::is_directory(T.CudaPath))
    return createStringError(
        inconvertibleErrorCode(),
        "CUDA installation '%s' (from %s) does not exist; point --cuda-path "
        "or $CUDA_PATH at the toolkit's root",
        T.CudaPath.c_str(), T.CudaPathOrigin.c_str());
  // nvcc, the sanitizer and the probed program's LD_LIBRARY_PATH get it;
  // they run in other directories.
  SmallString<256> AbsCuda(T.CudaPath);
  if (!sys::fs::make_absolute(AbsCuda))
    T.CudaPath = std::string(AbsCuda);

  T.GpuArch = Opts.GpuArch.empty() ? "sm_90" : Opts.GpuArch;
  if (!isValidGpuArch(T.GpuArch))
    return createStringError(inconvertibleErrorCode(),
                             "invalid GPU architecture '%s'; expected a name "
                             "like sm_90",
                             T.GpuArch.c_str());

  T.ResourceDir = findResourceDir(Opts);
  if (T.ResourceDir.empty() || !sys::fs::is_directory(T.ResourceDir))
    return createStringError(
        inconvertibleErrorCode(),
        "clang's resource directory '%s' was not found; pass --resource-dir "
        "(e.g. the output of 'clang-22 -print-resource-dir')",
        T.ResourceDir.c_str());

  T.CudaVersion = readCudaVersion(T.CudaPath);
  std::string Newest =
      clang::CudaVersionToString(clang::CudaVersion::PARTIALLY_SUPPORTED);
  if (!T.CudaVersion.empty() && versionGreater(T.CudaVersion, Newest))
    T.ClangTreatsAs = Newest;
  return T;
}

std::vector<std::string> Toolchain::clangArgs(CudaSide Side) const {
  std::vector<std::string> Args = {
      "-x",
      "cuda",
      Side == CudaSide::Host ? "--cuda-host-only" : "--cuda-device-only",
      "--cuda-path=" + CudaPath,
      "--cuda-gpu-arch=" + GpuArch,
      "-resource-dir=" + ResourceDir,
      // Newer SDKs than clang knows are parsed as the newest it knows; we
      // say so once with -v instead of on every parse.
      "-Wno-unknown-cuda-version",
  };
  // CUDA 13 moved CCCL (cub, thrust, cuda/std) to include/cccl; nvcc adds it
  // to the search path, clang does not.
  SmallString<256> Cccl(CudaPath);
  sys::path::append(Cccl, "include", "cccl");
  if (sys::fs::is_directory(Cccl)) {
    Args.push_back("-isystem");
    Args.push_back(std::string(Cccl));
  }
  // What nvcc declares implicitly (NvccCompat.h), from memory.
  Args.push_back("-include");
  Args.push_back(nvccCompatHeaderPath().str());
  return Args;
}

} // namespace optiml
