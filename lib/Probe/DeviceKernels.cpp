//===- DeviceKernels.cpp - The probe's own kernels ------------------------===//
//
// The kernels are compiled from ProbeKernels.cu at build time and embedded
// as a fatbin; they are loaded with cuModuleLoadData into the program's
// context (the driver API only: the program's runtime may be static).
//
//===----------------------------------------------------------------------===//

#include "ProbeInternal.h"

namespace optiml {
namespace probe {

#ifdef OPTIML_PROBE_KERNELS
#include "ProbeKernelsFatbin.inc"
#endif

namespace {

constexpr unsigned TouchThreads = 256;
/// Without the device's L2 size: four times the largest L2 of the GPUs the
/// project targets (the H200's 60 MB).
constexpr size_t FallbackScratchBytes = 256ull << 20;

} // namespace

std::string DeviceKernels::load(CUstream Stream) {
#ifndef OPTIML_PROBE_KERNELS
  (void)Stream;
  return "the probe was built without nvcc, so it has no device kernels";
#else
  if (CUresult R = cuCtxGetCurrent(&Ctx); R != CUDA_SUCCESS || !Ctx)
    return driverError("cuCtxGetCurrent", R);
  if (CUresult R = cuModuleLoadData(&Module, ProbeKernelsFatbin))
    return driverError("cuModuleLoadData (the probe's kernels)", R);
  if (CUresult R = cuModuleGetFunction(&Touch, Module, "optiml_l2_touch"))
    return driverError("cuModuleGetFunction(optiml_l2_touch)", R);
  CUdevice Dev = 0;
  if (CUresult R = cuCtxGetDevice(&Dev))
    return driverError("cuCtxGetDevice", R);
  int L2 = 0, SMs = 0;
  cuDeviceGetAttribute(&L2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, Dev);
  cuDeviceGetAttribute(&SMs, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, Dev);
  ScratchBytes = L2 > 0 ? 2 * static_cast<size_t>(L2) : FallbackScratchBytes;
  ScratchBytes = (ScratchBytes + 4095) & ~size_t(4095);
  Blocks = 8 * static_cast<unsigned>(SMs > 0 ? SMs : 16);
  if (CUresult R = cuMemAlloc(&Scratch, ScratchBytes)) {
    std::string Why = driverError("cuMemAlloc", R) + " for " +
                      std::to_string(ScratchBytes >> 20) +
                      " MiB of L2-cleaning scratch";
    Scratch = 0;
    ScratchBytes = 0;
    return Why;
  }
  // Zeros make the touch kernel's one store unreachable.
  if (CUresult R = cuMemsetD8Async(Scratch, 0, ScratchBytes, Stream))
    return driverError("cuMemsetD8Async", R);
  return "";
#endif
}

std::string DeviceKernels::cleanL2(CUstream Stream) {
  if (!Tried) {
    Tried = true;
    LoadError = load(Stream);
  }
  if (!LoadError.empty())
    return LoadError;
  CUcontext Current = nullptr;
  if (cuCtxGetCurrent(&Current) != CUDA_SUCCESS || Current != Ctx)
    return "the launch runs in another context than the probe's kernels";
  unsigned long long Words = ScratchBytes / 16;
  CUdeviceptr Sink = Scratch;
  void *Args[] = {&Scratch, &Words, &Sink};
  if (CUresult R = cuLaunchKernel(Touch, Blocks, 1, 1, TouchThreads, 1, 1, 0,
                                  Stream, Args, nullptr))
    return driverError("cuLaunchKernel(optiml_l2_touch)", R);
  return "";
}

} // namespace probe
} // namespace optiml
