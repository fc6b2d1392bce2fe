//===- DeviceKernels.cpp - The probe's own kernels ------------------------===//
//
// The kernels are compiled from ProbeKernels.cu at build time and embedded
// as a fatbin; they are loaded with cuModuleLoadData into the program's
// context (the driver API only: the program's runtime may be static).
//
//===----------------------------------------------------------------------===//

#include "ProbeInternal.h"

#include <cstring>

namespace optiml {
namespace probe {

#ifdef OPTIML_PROBE_KERNELS
#include "ProbeKernelsFatbin.inc"
#endif

namespace {

constexpr unsigned Threads = 256;
/// Without the device's L2 size: four times the largest L2 of the GPUs the
/// project targets (the H200's 60 MB).
constexpr size_t FallbackScratchBytes = 256ull << 20;

/// OptimlCompareResult in ProbeKernels.cu.
struct CompareResultBits {
  unsigned long long Mismatches, FirstDiff, MaxAbsBits, MaxRelBits;
};

// optiml_compare takes ElementKind's values as numbers.
static_assert(static_cast<unsigned>(ElementKind::Bytes) == 0 &&
                  static_cast<unsigned>(ElementKind::Bool) == 1 &&
                  static_cast<unsigned>(ElementKind::SInt) == 2 &&
                  static_cast<unsigned>(ElementKind::UInt) == 3 &&
                  static_cast<unsigned>(ElementKind::Half) == 4 &&
                  static_cast<unsigned>(ElementKind::BFloat16) == 5 &&
                  static_cast<unsigned>(ElementKind::Float) == 6 &&
                  static_cast<unsigned>(ElementKind::Double) == 7,
              "ProbeKernels.cu numbers the element kinds the same way");

} // namespace

std::string DeviceKernels::loadModule() {
#ifndef OPTIML_PROBE_KERNELS
  return "the probe was built without nvcc, so it has no device kernels";
#else
  if (CUresult R = cuCtxGetCurrent(&Ctx); R != CUDA_SUCCESS || !Ctx)
    return driverError("cuCtxGetCurrent", R);
  if (CUresult R = cuModuleLoadData(&Module, ProbeKernelsFatbin))
    return driverError("cuModuleLoadData (the probe's kernels)", R);
  if (CUresult R = cuModuleGetFunction(&Touch, Module, "optiml_l2_touch"))
    return driverError("cuModuleGetFunction(optiml_l2_touch)", R);
  if (CUresult R = cuModuleGetFunction(&Compare, Module, "optiml_compare"))
    return driverError("cuModuleGetFunction(optiml_compare)", R);
  CUdevice Dev = 0;
  if (CUresult R = cuCtxGetDevice(&Dev))
    return driverError("cuCtxGetDevice", R);
  int L2 = 0, SMs = 0;
  cuDeviceGetAttribute(&L2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, Dev);
  cuDeviceGetAttribute(&SMs, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, Dev);
  L2Bytes = L2 > 0 ? static_cast<size_t>(L2) : 0;
  Blocks = 8 * static_cast<unsigned>(SMs > 0 ? SMs : 16);
  if (CUresult R = cuMemAlloc(&Result, sizeof(CompareResultBits)))
    return driverError("cuMemAlloc", R) + " for the comparison result";
  return "";
#endif
}

std::string DeviceKernels::load() {
  if (!Tried) {
    Tried = true;
    LoadError = loadModule();
  }
  if (!LoadError.empty())
    return LoadError;
  return sameContext()
             ? ""
             : "the launch runs in another context than the probe's kernels";
}

bool DeviceKernels::sameContext() const {
  CUcontext Current = nullptr;
  return cuCtxGetCurrent(&Current) == CUDA_SUCCESS && Current == Ctx;
}

std::string DeviceKernels::cleanL2(CUstream Stream) {
  if (std::string Why = load(); !Why.empty())
    return Why;
  if (!Scratch) {
    size_t Bytes = L2Bytes ? 4 * L2Bytes : FallbackScratchBytes;
    Bytes = (Bytes + 4095) & ~size_t(4095);
    if (CUresult R = cuMemAlloc(&Scratch, Bytes)) {
      Scratch = 0;
      return driverError("cuMemAlloc", R) + " for " +
             std::to_string(Bytes >> 20) + " MiB of L2-cleaning scratch";
    }
    // Zeros make the touch kernel's one store unreachable.
    if (CUresult R = cuMemsetD8Async(Scratch, 0, Bytes, Stream))
      return driverError("cuMemsetD8Async", R);
    ScratchBytes = Bytes;
  }
  unsigned long long Words = ScratchBytes / 16;
  CUdeviceptr Sink = Scratch;
  void *Args[] = {&Scratch, &Words, &Sink};
  if (CUresult R = cuLaunchKernel(Touch, Blocks, 1, 1, Threads, 1, 1, 0, Stream,
                                  Args, nullptr))
    return driverError("cuLaunchKernel(optiml_l2_touch)", R);
  return "";
}

std::string DeviceKernels::compare(CUdeviceptr Expected, CUdeviceptr Actual,
                                   uint64_t N, ElementType T,
                                   const Tolerance &Tol, CUstream Stream,
                                   Comparison &Out) {
  if (std::string Why = load(); !Why.empty())
    return Why;
  unsigned Size = T.Size;
  if (Size != 1 && Size != 2 && Size != 4 && Size != 8)
    return "elements of " + std::to_string(Size) + " bytes";
  if (Expected % Size || Actual % Size)
    return "the buffer is not aligned to its element size";
  Out = Comparison();
  if (N == 0)
    return "";
  CompareResultBits Bits{0, ~0ull, 0, 0};
  if (CUresult R = cuMemcpyHtoDAsync(Result, &Bits, sizeof(Bits), Stream))
    return driverError("cuMemcpyHtoDAsync", R);
  unsigned long long Count = N;
  unsigned Kind = static_cast<unsigned>(T.Kind);
  double RelTol = Tol.RelTol, AbsTol = Tol.AbsTol;
  int NaNEqual = Tol.NaNEqual ? 1 : 0;
  void *Args[] = {&Expected, &Actual, &Count,    &Kind,  &Size,
                  &RelTol,   &AbsTol, &NaNEqual, &Result};
  if (CUresult R = cuLaunchKernel(Compare, Blocks, 1, 1, Threads, 1, 1, 0,
                                  Stream, Args, nullptr))
    return driverError("cuLaunchKernel(optiml_compare)", R);
  if (CUresult R = cuMemcpyDtoHAsync(&Bits, Result, sizeof(Bits), Stream))
    return driverError("cuMemcpyDtoHAsync", R);
  if (CUresult R = cuStreamSynchronize(Stream))
    return driverError("cuStreamSynchronize", R);
  Out.Mismatches = Bits.Mismatches;
  if (Bits.FirstDiff != ~0ull)
    Out.FirstDiff = Bits.FirstDiff;
  std::memcpy(&Out.MaxAbsErr, &Bits.MaxAbsBits, sizeof(double));
  std::memcpy(&Out.MaxRelErr, &Bits.MaxRelBits, sizeof(double));
  return "";
}

} // namespace probe
} // namespace optiml
