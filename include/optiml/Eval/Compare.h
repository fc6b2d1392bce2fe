//===- Compare.h - Element-wise comparison of kernel buffers -----*- C++
//-*-===//
//
// The verdict on one buffer after one launch: the reference's contents
// against the candidate's, element by element by element type. Used by the
// probe inside the candidate program and by the evaluator on snapshots.
// No CUDA and no LLVM beyond ADT: it is compiled into the probe too.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_EVAL_COMPARE_H
#define OPTIML_EVAL_COMPARE_H

#include "optiml/Eval/ProbeProtocol.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace optiml {

enum class ElementKind {
  Bytes, ///< unknown type: compared byte by byte, exactly
  Bool,
  SInt,
  UInt,
  Half,     ///< IEEE binary16 (__half)
  BFloat16, ///< __nv_bfloat16
  Float,
  Double,
  /// An element of an array of device pointers, compared exactly as
  /// canonicalPointers() writes it: (which buffer, offset). Compared on
  /// the host only.
  Pointer,
};

/// A scalar element kind and its size; vector types (float4, __half2) are
/// compared lane by lane, so indices count scalars.
struct ElementType {
  ElementKind Kind = ElementKind::Bytes;
  unsigned Size = 1; ///< bytes per scalar

  bool isFloatingPoint() const {
    return Kind == ElementKind::Half || Kind == ElementKind::BFloat16 ||
           Kind == ElementKind::Float || Kind == ElementKind::Double;
  }
};

/// The element type of a buffer from the kernel model's description of the
/// pointee ("float", "const __half", "float4", "unsigned int", ...). Unknown
/// or inconsistent descriptions give Bytes, which compares exactly.
ElementType elementTypeFor(llvm::StringRef TypeName, unsigned ElementSize,
                           bool IsFloat);
ElementType elementTypeFor(const ProbeParam &P);
/// The element type of one of P's buffers: Element 0 is the allocation the
/// argument points into; an allocation reached through an array of device
/// pointers (BufferCheck::Element > 0) holds P's inner elements.
ElementType elementTypeFor(const ProbeParam &P, unsigned Element);

/// A device allocation of one launch: [Base, Base + Size).
struct AllocationRange {
  uint64_t Base = 0, Size = 0;
};

/// The allocations of one launch, found by any address inside them.
/// Allocations do not overlap, so the one that starts at or below an
/// address is the only one that can hold it.
class AllocationIndex {
public:
  /// Adds allocation Id = [Base, Base + Size); false (and nothing added)
  /// when an allocation already starts at Base.
  bool add(uint64_t Base, uint64_t Size, size_t Id);
  /// The allocation that holds V, and V's offset in it.
  std::optional<std::pair<size_t, uint64_t>> find(uint64_t V) const;

private:
  /// Base -> (Size, Id).
  std::map<uint64_t, std::pair<uint64_t, size_t>> ByBase;
};

/// Writes each 8-byte word of Data that starts at Align (mod 8) and holds
/// an address inside one of Ranges as the pair (which range, offset in
/// it): 0xC7 in the top byte, the range's index in the next 16 bits, the
/// offset in the low 40. Two runs of a program whose arrays of device
/// pointers point to the same places in the same buffers then save the
/// same bytes, though the addresses differ. Other words are left alone.
void canonicalPointers(std::vector<uint8_t> &Data, size_t Align,
                       llvm::ArrayRef<AllocationRange> Ranges);

const char *toString(ElementKind K);

/// Default tolerance per type: a few units in the last place for the
/// reordering a faithful optimization causes (fma contraction, a different
/// reduction order). Integer and byte kinds compare exactly (zero).
Tolerance defaultTolerance(ElementKind K);

/// Field-wise max of the type's default and the requested tolerance.
Tolerance effectiveTolerance(ElementKind K, const Tolerance &Requested);

/// The widest tolerance calibration may reach for a type; a reference that
/// disagrees with itself beyond it is nondeterministic, not noisy. Besides
/// the per-element bounds, a floating-point element may move by RelTol
/// times the buffer's largest magnitude (ScaleRelTol): a result that
/// cancels to near zero carries the rounding of its large terms, not of
/// itself (Ap after a CG step whose dot products summed in another order).
Tolerance noiseCeiling(ElementKind K);

struct CompareResult {
  uint64_t Elements = 0; ///< scalars compared
  uint64_t Mismatches = 0;
  bool SizeMismatch = false;
  std::optional<uint64_t> FirstDiffIndex; ///< scalar index
  std::string Expected, Actual;           ///< values there, printed
  /// Over finite pairs only; NaN/Inf disagreements are counted as
  /// mismatches and do not enter these.
  double MaxAbsErr = 0, MaxRelErr = 0;
  /// Largest finite |e| of the expected values, when the tolerance scaled
  /// with it (ScaleRelTol > 0); 0 otherwise.
  double Scale = 0;

  bool equal() const { return !SizeMismatch && Mismatches == 0; }
};

/// Compares Actual with Expected as arrays of T.
///
/// Integers, bools and bytes: bit-exact. Floating point: equal when
/// |a - e| <= AbsTol + RelTol * |e| (AbsTol widened by ScaleRelTol, see
/// scaledTolerance); +0 equals -0; an infinity equals only
/// the same infinity; NaN equals NaN (any payload) iff Tol.NaNEqual, and
/// never a number. Bytes past the last whole scalar compare exactly.
/// Different sizes: SizeMismatch, and the common prefix is compared.
CompareResult compareBuffers(llvm::ArrayRef<uint8_t> Expected,
                             llvm::ArrayRef<uint8_t> Actual, ElementType T,
                             const Tolerance &Tol);

/// Tol with ScaleRelTol folded into AbsTol for this expected buffer:
/// AbsTol = max(AbsTol, ScaleRelTol * largest finite |e|) for floating
/// point (compareBuffers does this itself; the GPU comparison calls it).
/// \p Largest, when given, receives that largest |e| (0 when Tol did not
/// scale).
Tolerance scaledTolerance(llvm::ArrayRef<uint8_t> Expected, ElementType T,
                          Tolerance Tol, double *Largest = nullptr);

/// Did the buffer change at all (bitwise)? For the written-buffer and
/// input-mutation checks, where any change counts.
bool bufferChanged(llvm::ArrayRef<uint8_t> Before,
                   llvm::ArrayRef<uint8_t> After);

/// The value of scalar Index of Data as text ("1.5", "-3", "nan", "0x7f").
std::string formatElement(llvm::ArrayRef<uint8_t> Data, uint64_t Index,
                          ElementType T);

/// Noise seen between two runs of the reference on one buffer.
struct Calibration {
  Tolerance Tol;                 ///< widened tolerance for candidates
  bool Nondeterministic = false; ///< the reference disagrees with itself
  std::string Reason;            ///< set when Nondeterministic
};

/// Widens Base so that the reference's own run-to-run noise passes with a
/// margin of Margin times, but never past noiseCeiling; noise beyond the
/// ceiling's AbsTol (within its ScaleRelTol, Noise.Scale known) widens
/// ScaleRelTol rather than AbsTol. Noise compares two
/// reference runs under a tolerance no wider than noiseCeiling (the ceiling
/// itself is the natural choice): any mismatch there, or an integer that
/// moved, makes the buffer nondeterministic.
Calibration calibrate(ElementType T, const Tolerance &Base,
                      const CompareResult &Noise, double Margin = 4.0);

} // namespace optiml

#endif // OPTIML_EVAL_COMPARE_H
