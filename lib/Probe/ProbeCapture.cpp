//===- ProbeCapture.cpp - Capturing a launch, device copies ---------------===//
//
// A target launch captured so it can run again: its function, shape and
// argument values, the device buffers its pointers reach, and copies of
// those buffers on the device.
//
//===----------------------------------------------------------------------===//

#include "ProbeInternal.h"
#include "ProbeLaunch.h"
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

namespace {

/// The device allocation V points into, as a new buffer of the launch;
/// false for null, host or unknown pointers and allocations already seen
/// (Seen holds the launch's buffers; an address inside one of them costs
/// no driver call).
bool reach(const Launch &L, uint64_t V, Buffer &B, AllocationIndex &Seen) {
  if (!V || Seen.find(V))
    return false;
  unsigned Type = 0;
  if (cuPointerGetAttribute(&Type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                            static_cast<CUdeviceptr>(V)) != CUDA_SUCCESS ||
      Type != CU_MEMORYTYPE_DEVICE)
    return false;
  CUdeviceptr Base = 0;
  size_t Extent = 0;
  if (cuMemGetAddressRange(&Base, &Extent, static_cast<CUdeviceptr>(V)) !=
          CUDA_SUCCESS ||
      !Seen.add(Base, Extent, L.Buffers.size()))
    return false;
  B.Base = B.Home = Base;
  B.Size = Extent;
  B.Offset = static_cast<CUdeviceptr>(V) - Base;
  return true;
}

const ProbeParam *targetParam(const Launch &L, unsigned Index) {
  if (L.Target)
    for (const ProbeParam &P : L.Target->Params)
      if (P.Index == Index)
        return &P;
  return nullptr;
}

/// Pointers of one array that are followed (elements of an array of
/// pointers, members of an array of structs); the rest of a longer array is
/// compared as it is, not followed.
constexpr size_t MaxFollowedPointers = 1 << 16;

/// For each argument that is an array of device pointers (`float **`), or
/// of structs with pointer members (`const Mats *`), the allocations those
/// pointers point into join the launch's buffers: they are saved, compared
/// and restored like the argument's own. The array is read after the work
/// queued before the launch is done.
bool reachThroughArrays(Launch &L, AllocationIndex &Seen, std::string &Error) {
  size_t Direct = L.Buffers.size();
  bool Synced = false;
  for (size_t I = 0; I < Direct; ++I) {
    if (!L.Buffers[I].PointerArray)
      continue;
    const Buffer A = L.Buffers[I];
    const ProbeParam *P = targetParam(L, A.Param);
    // Where the pointers lie: every word of an array of pointers, or the
    // members of each struct.
    size_t Stride = 8;
    std::vector<size_t> Offsets = {0};
    if (P && !P->PointerFields.empty()) {
      Stride = P->ElementSize;
      Offsets.clear();
      for (const ProbePointerField &F : P->PointerFields)
        Offsets.push_back(F.Offset);
    }
    if (!Stride || Offsets.empty())
      continue;
    size_t Count = std::min((A.Size - A.Offset) / Stride,
                            MaxFollowedPointers / Offsets.size());
    if (!Count)
      continue;
    if (!Synced &&
        !ok(cuStreamSynchronize(L.Stream), "cuStreamSynchronize", Error))
      return false;
    Synced = true;
    std::vector<uint8_t> Bytes(Count * Stride);
    if (!ok(cuMemcpyDtoH(Bytes.data(), A.Base + A.Offset, Bytes.size()),
            "cuMemcpyDtoH", Error))
      return false;
    for (size_t K = 0; K < Count; ++K)
      for (size_t F = 0; F < Offsets.size(); ++F) {
        if (Offsets[F] + 8 > Stride)
          continue;
        uint64_t V;
        std::memcpy(&V, Bytes.data() + K * Stride + Offsets[F], 8);
        Buffer B;
        if (!reach(L, V, B, Seen))
          continue;
        B.Param = A.Param;
        B.Word = A.Word;
        B.Element = static_cast<unsigned>(K * Offsets.size() + F + 1);
        if (P)
          B.Type = elementTypeFor(*P, B.Element);
        L.Buffers.push_back(B);
      }
  }
  return true;
}

} // namespace

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

  AllocationIndex Seen;
  // Every aligned 8-byte word may be a device pointer (plain pointer
  // parameters, and structs that hold pointers).
  for (unsigned I = 0; I < Params.size(); ++I) {
    auto [O, S] = Params[I];
    for (size_t W = 0; W + 8 <= S; W += 8) {
      if ((O + W) % 8)
        continue;
      uint64_t V;
      std::memcpy(&V, L.ArgBlob.data() + O + W, 8);
      Buffer B;
      if (!reach(L, V, B, Seen))
        continue;
      B.Param = I;
      B.Word = static_cast<unsigned>(W / 8);
      if (const ProbeParam *P = W == 0 ? targetParam(L, I) : nullptr) {
        B.Type = elementTypeFor(*P, 0);
        B.PointerArray = P->PointerArray;
      }
      L.Buffers.push_back(B);
    }
  }
  return reachThroughArrays(L, Seen, Error);
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

std::vector<uint8_t> canonicalContents(const Launch &L, const Buffer &B,
                                       std::vector<uint8_t> Data) {
  if (!B.PointerArray)
    return Data;
  std::vector<AllocationRange> Ranges;
  for (const Buffer &Other : L.Buffers)
    Ranges.push_back({Other.Home, Other.Size});
  canonicalPointers(Data, B.Offset % 8, Ranges);
  return Data;
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

} // namespace probe
} // namespace optiml
