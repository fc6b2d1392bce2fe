//===- Compare.cpp - Element-wise comparison of kernel buffers ------------===//
//
// Part of optimlProbeProtocol, which optimlEval and liboptiml-probe.so both
// link: the standard library and LLVM's ADT headers only.
//
//===----------------------------------------------------------------------===//

#include "optiml/Eval/Compare.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace optiml {

namespace {

llvm::StringRef stripQualifiers(llvm::StringRef S) {
  S = S.trim();
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (llvm::StringRef Q :
         {"const ", "volatile ", "__restrict__ ", "struct ", "std::", "::"}) {
      if (S.consume_front(Q)) {
        S = S.ltrim();
        Changed = true;
      }
    }
    for (llvm::StringRef Q : {" const", " volatile", "*", "&"}) {
      if (S.consume_back(Q)) {
        S = S.rtrim();
        Changed = true;
      }
    }
  }
  return S;
}

/// The scalar a type name is built from, and its size; nullopt if unknown.
std::optional<ElementType> scalarOf(llvm::StringRef Name) {
  using K = ElementKind;
  struct Entry {
    llvm::StringRef Prefix;
    ElementKind Kind;
    unsigned Size;
  };
  // Longest prefixes first: "unsigned long long" before "unsigned long".
  static const Entry Table[] = {
      {"__nv_bfloat16", K::BFloat16, 2},
      {"nv_bfloat16", K::BFloat16, 2},
      {"__nv_bfloat162", K::BFloat16, 2},
      {"__bf16", K::BFloat16, 2},
      {"bfloat16", K::BFloat16, 2},
      {"__half", K::Half, 2},
      {"half", K::Half, 2},
      {"_Float16", K::Half, 2},
      {"double", K::Double, 8},
      {"float", K::Float, 4},
      {"bool", K::Bool, 1},
      {"unsigned long long", K::UInt, 8},
      {"unsigned long", K::UInt, 8},
      {"unsigned short", K::UInt, 2},
      {"unsigned char", K::UInt, 1},
      {"unsigned int", K::UInt, 4},
      {"unsigned", K::UInt, 4},
      {"signed char", K::SInt, 1},
      {"long long", K::SInt, 8},
      {"long", K::SInt, 8},
      {"short", K::SInt, 2},
      {"char", K::SInt, 1},
      {"int", K::SInt, 4},
      {"size_t", K::UInt, 8},
      {"ptrdiff_t", K::SInt, 8},
      {"uint8_t", K::UInt, 1},
      {"uint16_t", K::UInt, 2},
      {"uint32_t", K::UInt, 4},
      {"uint64_t", K::UInt, 8},
      {"int8_t", K::SInt, 1},
      {"int16_t", K::SInt, 2},
      {"int32_t", K::SInt, 4},
      {"int64_t", K::SInt, 8},
      {"uchar", K::UInt, 1},
      {"ushort", K::UInt, 2},
      {"uint", K::UInt, 4},
      {"ulong", K::UInt, 8},
      {"ulonglong", K::UInt, 8},
      {"longlong", K::SInt, 8},
  };
  const Entry *Best = nullptr;
  for (const Entry &E : Table) {
    if (!Name.starts_with(E.Prefix))
      continue;
    llvm::StringRef Rest = Name.drop_front(E.Prefix.size());
    // Exact, or a CUDA vector type (float4, __half2, uint2, ...).
    if (!Rest.empty() &&
        !llvm::all_of(Rest, [](char C) { return C >= '0' && C <= '9'; }))
      continue;
    if (!Best || E.Prefix.size() > Best->Prefix.size())
      Best = &E;
  }
  if (!Best)
    return std::nullopt;
  return ElementType{Best->Kind, Best->Size};
}

float halfToFloat(uint16_t H) {
  uint32_t Sign = uint32_t(H >> 15) << 31;
  uint32_t Exp = (H >> 10) & 0x1f;
  uint32_t Mant = H & 0x3ff;
  uint32_t Bits;
  if (Exp == 0x1f) {
    Bits = Sign | 0x7f800000u | (Mant << 13);
  } else if (Exp != 0) {
    Bits = Sign | ((Exp + 112) << 23) | (Mant << 13);
  } else if (Mant == 0) {
    Bits = Sign;
  } else {
    // Subnormal: value = Mant * 2^-24.
    float V = std::ldexp(static_cast<float>(Mant), -24);
    return Sign ? -V : V;
  }
  float F;
  std::memcpy(&F, &Bits, 4);
  return F;
}

template <typename T> T load(const uint8_t *P) {
  T V;
  std::memcpy(&V, P, sizeof(T));
  return V;
}

double floatAt(const uint8_t *P, ElementKind K) {
  switch (K) {
  case ElementKind::Half:
    return halfToFloat(load<uint16_t>(P));
  case ElementKind::BFloat16: {
    uint32_t Bits = uint32_t(load<uint16_t>(P)) << 16;
    float F;
    std::memcpy(&F, &Bits, 4);
    return F;
  }
  case ElementKind::Float:
    return load<float>(P);
  case ElementKind::Double:
    return load<double>(P);
  default:
    return 0;
  }
}

double intAt(const uint8_t *P, ElementType T) {
  if (T.Kind == ElementKind::SInt)
    return T.Size == 1   ? load<int8_t>(P)
           : T.Size == 2 ? load<int16_t>(P)
           : T.Size == 4 ? load<int32_t>(P)
                         : static_cast<double>(load<int64_t>(P));
  return T.Size == 1   ? load<uint8_t>(P)
         : T.Size == 2 ? load<uint16_t>(P)
         : T.Size == 4 ? load<uint32_t>(P)
                       : static_cast<double>(load<uint64_t>(P));
}

std::string formatDouble(double V) {
  if (std::isnan(V))
    return "nan";
  if (std::isinf(V))
    return V > 0 ? "inf" : "-inf";
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "%.9g", V);
  return Buf;
}

/// Compares one floating-point pair; updates the error maxima.
bool floatsAgree(double E, double A, const Tolerance &Tol, double &MaxAbs,
                 double &MaxRel) {
  bool ENaN = std::isnan(E), ANaN = std::isnan(A);
  if (ENaN || ANaN)
    return ENaN && ANaN && Tol.NaNEqual;
  if (std::isinf(E) || std::isinf(A))
    return E == A;
  double Abs = std::fabs(A - E);
  MaxAbs = std::max(MaxAbs, Abs);
  if (E != 0)
    MaxRel = std::max(MaxRel, Abs / std::fabs(E));
  return Abs <= Tol.AbsTol + Tol.RelTol * std::fabs(E);
}

} // namespace

bool AllocationIndex::add(uint64_t Base, uint64_t Size, size_t Id) {
  return ByBase.try_emplace(Base, Size, Id).second;
}

std::optional<std::pair<size_t, uint64_t>>
AllocationIndex::find(uint64_t V) const {
  auto It = ByBase.upper_bound(V);
  if (It == ByBase.begin())
    return std::nullopt;
  --It;
  uint64_t Off = V - It->first;
  if (Off >= It->second.first)
    return std::nullopt;
  return std::make_pair(It->second.second, Off);
}

void canonicalPointers(std::vector<uint8_t> &Data, size_t Align,
                       llvm::ArrayRef<AllocationRange> Ranges) {
  constexpr uint64_t Tag = uint64_t(0xC7) << 56;
  constexpr uint64_t OffsetLimit = uint64_t(1) << 40;
  AllocationIndex Index;
  for (size_t J = 0; J < Ranges.size() && J < 0x10000; ++J)
    Index.add(Ranges[J].Base, Ranges[J].Size, J);
  for (size_t At = Align % 8; At + 8 <= Data.size(); At += 8) {
    uint64_t V;
    std::memcpy(&V, Data.data() + At, 8);
    auto Found = Index.find(V);
    if (!Found || Found->second >= OffsetLimit)
      continue;
    uint64_t C = Tag | (uint64_t(Found->first) << 40) | Found->second;
    std::memcpy(Data.data() + At, &C, 8);
  }
}

const char *toString(ElementKind K) {
  switch (K) {
  case ElementKind::Bytes:
    return "bytes";
  case ElementKind::Bool:
    return "bool";
  case ElementKind::SInt:
    return "signed integer";
  case ElementKind::UInt:
    return "unsigned integer";
  case ElementKind::Half:
    return "half";
  case ElementKind::BFloat16:
    return "bfloat16";
  case ElementKind::Float:
    return "float";
  case ElementKind::Double:
    return "double";
  case ElementKind::Pointer:
    return "pointer";
  }
  return "bytes";
}

ElementType elementTypeFor(llvm::StringRef TypeName, unsigned ElementSize,
                           bool IsFloat) {
  std::optional<ElementType> S = scalarOf(stripQualifiers(TypeName));
  if (!S || ElementSize == 0 || ElementSize % S->Size != 0 ||
      S->isFloatingPoint() != IsFloat)
    return ElementType{};
  return *S;
}

ElementType elementTypeFor(const ProbeParam &P) {
  if (!P.Pointer)
    return ElementType{};
  return elementTypeFor(P.ElementType, P.ElementSize, P.Float);
}

ElementType elementTypeFor(const ProbeParam &P, unsigned Element) {
  // An array of structs holding pointers is compared as bytes, the
  // pointers in it as (buffer, offset) pairs.
  if (!Element)
    return P.Pointer && P.PointerArray && P.PointerFields.empty()
               ? ElementType{ElementKind::Pointer, 8}
               : elementTypeFor(P);
  if (!P.Pointer || !P.PointerArray)
    return ElementType{};
  if (!P.PointerFields.empty()) {
    const ProbePointerField &F =
        P.PointerFields[(Element - 1) % P.PointerFields.size()];
    return elementTypeFor(F.InnerElementType, F.InnerElementSize, F.InnerFloat);
  }
  return elementTypeFor(P.InnerElementType, P.InnerElementSize, P.InnerFloat);
}

Tolerance defaultTolerance(ElementKind K) {
  Tolerance T;
  switch (K) {
  case ElementKind::Half:
    T.RelTol = 1e-2;
    T.AbsTol = 1e-3;
    break;
  case ElementKind::BFloat16:
    T.RelTol = 1.6e-2;
    T.AbsTol = 1e-2;
    break;
  case ElementKind::Float:
    // A -fmad=false build differed by at most 1.9e-6 on O(1) values.
    T.RelTol = 1e-5;
    T.AbsTol = 1e-6;
    break;
  case ElementKind::Double:
    T.RelTol = 1e-12;
    T.AbsTol = 1e-14;
    break;
  default:
    break;
  }
  return T;
}

Tolerance effectiveTolerance(ElementKind K, const Tolerance &Requested) {
  Tolerance T = defaultTolerance(K);
  T.RelTol = std::max(T.RelTol, Requested.RelTol);
  T.AbsTol = std::max(T.AbsTol, Requested.AbsTol);
  T.ScaleRelTol = Requested.ScaleRelTol;
  T.NaNEqual = Requested.NaNEqual;
  return T;
}

Tolerance noiseCeiling(ElementKind K) {
  Tolerance T = defaultTolerance(K);
  T.RelTol *= 100;
  T.AbsTol *= 100;
  if (T.RelTol > 0)
    T.ScaleRelTol = T.RelTol;
  return T;
}

Tolerance scaledTolerance(llvm::ArrayRef<uint8_t> Expected, ElementType T,
                          Tolerance Tol, double *LargestOut) {
  if (LargestOut)
    *LargestOut = 0;
  if (!(Tol.ScaleRelTol > 0) || !T.isFloatingPoint())
    return Tol;
  unsigned Size = std::max(1u, T.Size);
  double Largest = 0;
  for (size_t Off = 0; Off + Size <= Expected.size(); Off += Size) {
    double V = std::fabs(floatAt(Expected.data() + Off, T.Kind));
    if (std::isfinite(V))
      Largest = std::max(Largest, V);
  }
  Tol.AbsTol = std::max(Tol.AbsTol, Tol.ScaleRelTol * Largest);
  Tol.ScaleRelTol = 0;
  if (LargestOut)
    *LargestOut = Largest;
  return Tol;
}

CompareResult compareBuffers(llvm::ArrayRef<uint8_t> Expected,
                             llvm::ArrayRef<uint8_t> Actual, ElementType T,
                             const Tolerance &Requested) {
  CompareResult R;
  Tolerance Tol = scaledTolerance(Expected, T, Requested, &R.Scale);
  R.SizeMismatch = Expected.size() != Actual.size();
  size_t Bytes = std::min(Expected.size(), Actual.size());
  unsigned Size = std::max(1u, T.Size);
  uint64_t N = Bytes / Size;
  R.Elements = N;
  const uint8_t *E = Expected.data(), *A = Actual.data();

  auto noteFirst = [&](uint64_t Index) {
    if (R.FirstDiffIndex)
      return;
    R.FirstDiffIndex = Index;
    R.Expected = formatElement(Expected, Index, T);
    R.Actual = formatElement(Actual, Index, T);
  };

  if (!T.isFloatingPoint()) {
    // Exact kinds: skip equal stretches with memcmp, then count elements.
    const size_t Chunk = 1 << 16;
    for (size_t Off = 0; Off < N * Size; Off += Chunk) {
      size_t Len = std::min(Chunk, N * Size - Off);
      if (std::memcmp(E + Off, A + Off, Len) == 0)
        continue;
      for (size_t I = Off / Size; I < (Off + Len) / Size; ++I) {
        if (std::memcmp(E + I * Size, A + I * Size, Size) == 0)
          continue;
        ++R.Mismatches;
        noteFirst(I);
        if (T.Kind == ElementKind::SInt || T.Kind == ElementKind::UInt) {
          // Integer error sizes help tell an off-by-one from garbage.
          double EV = intAt(E + I * Size, T);
          double AV = intAt(A + I * Size, T);
          double Abs = std::fabs(AV - EV);
          R.MaxAbsErr = std::max(R.MaxAbsErr, Abs);
          if (EV != 0)
            R.MaxRelErr = std::max(R.MaxRelErr, Abs / std::fabs(EV));
        }
      }
    }
  } else {
    for (uint64_t I = 0; I < N; ++I) {
      double EV = floatAt(E + I * Size, T.Kind);
      double AV = floatAt(A + I * Size, T.Kind);
      if (floatsAgree(EV, AV, Tol, R.MaxAbsErr, R.MaxRelErr))
        continue;
      ++R.Mismatches;
      noteFirst(I);
    }
  }

  // A tail shorter than one element compares exactly.
  if (N * Size < Bytes &&
      std::memcmp(E + N * Size, A + N * Size, Bytes - N * Size) != 0) {
    ++R.Mismatches;
    if (!R.FirstDiffIndex) {
      R.FirstDiffIndex = N;
      R.Expected = "(trailing bytes)";
      R.Actual = "(trailing bytes differ)";
    }
  }
  return R;
}

bool bufferChanged(llvm::ArrayRef<uint8_t> Before,
                   llvm::ArrayRef<uint8_t> After) {
  return Before.size() != After.size() ||
         std::memcmp(Before.data(), After.data(), Before.size()) != 0;
}

std::string formatElement(llvm::ArrayRef<uint8_t> Data, uint64_t Index,
                          ElementType T) {
  unsigned Size = std::max(1u, T.Size);
  if ((Index + 1) * Size > Data.size())
    return "(out of range)";
  const uint8_t *P = Data.data() + Index * Size;
  char Buf[64];
  switch (T.Kind) {
  case ElementKind::Half:
  case ElementKind::BFloat16:
  case ElementKind::Float:
  case ElementKind::Double:
    return formatDouble(floatAt(P, T.Kind));
  case ElementKind::Bool:
    return *P == 0   ? "false"
           : *P == 1 ? "true"
                     : "0x" + [&] {
                         std::snprintf(Buf, sizeof(Buf), "%02x", *P);
                         return std::string(Buf);
                       }();
  case ElementKind::SInt: {
    int64_t V = Size == 1   ? load<int8_t>(P)
                : Size == 2 ? load<int16_t>(P)
                : Size == 4 ? load<int32_t>(P)
                            : load<int64_t>(P);
    std::snprintf(Buf, sizeof(Buf), "%" PRId64, V);
    return Buf;
  }
  case ElementKind::UInt: {
    uint64_t V = Size == 1   ? load<uint8_t>(P)
                 : Size == 2 ? load<uint16_t>(P)
                 : Size == 4 ? load<uint32_t>(P)
                             : load<uint64_t>(P);
    std::snprintf(Buf, sizeof(Buf), "%" PRIu64, V);
    return Buf;
  }
  case ElementKind::Pointer: {
    uint64_t V = load<uint64_t>(P);
    if (V >> 56 == 0xC7)
      std::snprintf(Buf, sizeof(Buf), "buffer %u + %" PRIu64 " bytes",
                    unsigned((V >> 40) & 0xffff),
                    V & ((uint64_t(1) << 40) - 1));
    else
      std::snprintf(Buf, sizeof(Buf), "0x%" PRIx64, V);
    return Buf;
  }
  case ElementKind::Bytes:
    break;
  }
  std::snprintf(Buf, sizeof(Buf), "0x%02x", *P);
  return Buf;
}

Calibration calibrate(ElementType T, const Tolerance &Base,
                      const CompareResult &Noise, double Margin) {
  Calibration C;
  C.Tol = Base;
  if (Noise.SizeMismatch) {
    C.Nondeterministic = true;
    C.Reason = "the buffer's size differs between two reference runs";
    return C;
  }
  if (!T.isFloatingPoint()) {
    if (Noise.Mismatches) {
      C.Nondeterministic = true;
      C.Reason = std::to_string(Noise.Mismatches) + " " + toString(T.Kind) +
                 " element(s) differ between two reference runs (first at " +
                 std::to_string(Noise.FirstDiffIndex.value_or(0)) + ")";
    }
    return C;
  }
  // Noise was compared under the ceiling: a mismatch there is an element
  // that moved further than reordering can explain. The largest absolute
  // and relative differences may come from different elements (a large
  // value off by 1e-4, a value near zero off by 30x its size), so they are
  // not judged together.
  if (Noise.Mismatches) {
    C.Nondeterministic = true;
    char Buf[200];
    std::snprintf(Buf, sizeof(Buf),
                  "two reference runs differ in %" PRIu64
                  " element(s) (first at %" PRIu64
                  ", max abs %.3g, max rel %.3g): beyond %s reordering noise",
                  Noise.Mismatches, Noise.FirstDiffIndex.value_or(0),
                  Noise.MaxAbsErr, Noise.MaxRelErr, toString(T.Kind));
    C.Reason = Buf;
    return C;
  }
  // Widened for the noise, never past the ceiling.
  Tolerance Ceiling = noiseCeiling(T.Kind);
  C.Tol.AbsTol =
      std::max(Base.AbsTol, std::min(Margin * Noise.MaxAbsErr, Ceiling.AbsTol));
  C.Tol.RelTol =
      std::max(Base.RelTol, std::min(Margin * Noise.MaxRelErr, Ceiling.RelTol));
  // Noise the absolute ceiling cannot hold passed under the scaled one: it
  // is widened relative to the buffer's largest magnitude.
  if (Margin * Noise.MaxAbsErr > C.Tol.AbsTol && Noise.Scale > 0)
    C.Tol.ScaleRelTol = std::max(
        Base.ScaleRelTol,
        std::min(Margin * Noise.MaxAbsErr / Noise.Scale, Ceiling.ScaleRelTol));
  return C;
}

} // namespace optiml
