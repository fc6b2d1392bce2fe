//===- CompareTest.cpp - Buffer comparison
//---------------------------------===//

#include "optiml/Eval/Compare.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace optiml;

namespace {

template <typename T> std::vector<uint8_t> bytesOf(const std::vector<T> &V) {
  std::vector<uint8_t> B(V.size() * sizeof(T));
  std::memcpy(B.data(), V.data(), B.size());
  return B;
}

const ElementType Float{ElementKind::Float, 4};
const ElementType Double{ElementKind::Double, 8};
const ElementType Int{ElementKind::SInt, 4};

TEST(ElementTypeTest, FromModelNames) {
  EXPECT_EQ(elementTypeFor("float", 4, true).Kind, ElementKind::Float);
  EXPECT_EQ(elementTypeFor("const float", 4, true).Kind, ElementKind::Float);
  EXPECT_EQ(elementTypeFor("double", 8, true).Kind, ElementKind::Double);
  EXPECT_EQ(elementTypeFor("__half", 2, true).Kind, ElementKind::Half);
  EXPECT_EQ(elementTypeFor("__nv_bfloat16", 2, true).Kind,
            ElementKind::BFloat16);
  EXPECT_EQ(elementTypeFor("int", 4, false).Kind, ElementKind::SInt);
  EXPECT_EQ(elementTypeFor("unsigned int", 4, false).Kind, ElementKind::UInt);
  EXPECT_EQ(elementTypeFor("unsigned long long", 8, false).Size, 8u);
  EXPECT_EQ(elementTypeFor("bool", 1, false).Kind, ElementKind::Bool);
  // Vector types compare lane by lane.
  ElementType F4 = elementTypeFor("float4", 16, true);
  EXPECT_EQ(F4.Kind, ElementKind::Float);
  EXPECT_EQ(F4.Size, 4u);
  EXPECT_EQ(elementTypeFor("__half2", 4, true).Kind, ElementKind::Half);
  // Unknown or inconsistent: exact bytes.
  EXPECT_EQ(elementTypeFor("Particle", 24, false).Kind, ElementKind::Bytes);
  EXPECT_EQ(elementTypeFor("float", 4, false).Kind, ElementKind::Bytes);
  EXPECT_EQ(elementTypeFor("float", 3, true).Kind, ElementKind::Bytes);
  EXPECT_EQ(elementTypeFor("integer", 4, false).Kind, ElementKind::Bytes);
}

TEST(ElementTypeTest, ArraysOfDevicePointers) {
  ProbeParam P;
  P.Pointer = true;
  P.ElementType = "float *";
  P.ElementSize = 8;
  // The array itself holds addresses: compared as bytes (canonical ones).
  EXPECT_EQ(elementTypeFor(P).Kind, ElementKind::Bytes);
  // Without the inner element, what its elements reach is bytes too.
  EXPECT_EQ(elementTypeFor(P, 1).Kind, ElementKind::Bytes);
  P.PointerArray = true;
  P.InnerElementType = "float";
  P.InnerElementSize = 4;
  P.InnerFloat = true;
  EXPECT_EQ(elementTypeFor(P, 0).Kind, ElementKind::Pointer);
  EXPECT_EQ(elementTypeFor(P, 0).Size, 8u);
  EXPECT_EQ(elementTypeFor(P, 1).Kind, ElementKind::Float);
  EXPECT_EQ(elementTypeFor(P, 7).Size, 4u);
  P.InnerElementType = "double";
  P.InnerElementSize = 8;
  EXPECT_EQ(elementTypeFor(P, 3).Kind, ElementKind::Double);
}

TEST(ElementTypeForTest, StructsOfDevicePointers) {
  // struct Mats { const float *a; int n; double *d; }: 24 bytes, two
  // pointer members; followed pointer K * 2 + F is element K's member F.
  ProbeParam P;
  P.Pointer = true;
  P.ElementType = "Mats";
  P.ElementSize = 24;
  P.PointerArray = true;
  P.PointerFields.push_back({0, "a", "float", 4, true});
  P.PointerFields.push_back({16, "d", "double", 8, true});
  // The structs themselves: bytes (their pointers made canonical), not
  // the pointer kind of an array of pointers.
  EXPECT_EQ(elementTypeFor(P, 0).Kind, ElementKind::Bytes);
  EXPECT_EQ(elementTypeFor(P, 1).Kind, ElementKind::Float);
  EXPECT_EQ(elementTypeFor(P, 2).Kind, ElementKind::Double);
  EXPECT_EQ(elementTypeFor(P, 5).Kind, ElementKind::Float);
  EXPECT_EQ(elementTypeFor(P, 6).Kind, ElementKind::Double);
}

TEST(AllocationIndexTest, FindsTheAllocationThatHoldsAnAddress) {
  AllocationIndex Index;
  EXPECT_FALSE(Index.find(0x1000));
  // Added out of order, as an array's elements reach them.
  EXPECT_TRUE(Index.add(0x8000, 0x4000, 7));
  EXPECT_TRUE(Index.add(0x1000, 0x100, 2));
  // The same allocation again (another element pointing into it) is refused
  // and keeps its first id and size.
  EXPECT_FALSE(Index.add(0x8000, 0x10, 9));
  EXPECT_FALSE(Index.find(0xfff));
  EXPECT_EQ(Index.find(0x1000), std::make_pair(size_t(2), uint64_t(0)));
  EXPECT_EQ(Index.find(0x10ff), std::make_pair(size_t(2), uint64_t(0xff)));
  // One past the end, and the gap between the two, belong to neither.
  EXPECT_FALSE(Index.find(0x1100));
  EXPECT_FALSE(Index.find(0x7fff));
  EXPECT_EQ(Index.find(0x8400), std::make_pair(size_t(7), uint64_t(0x400)));
  EXPECT_EQ(Index.find(0xbfff), std::make_pair(size_t(7), uint64_t(0x3fff)));
  EXPECT_FALSE(Index.find(0xc000));
  EXPECT_FALSE(Index.find(~uint64_t(0)));
}

TEST(CanonicalPointersTest, AddressesBecomeBufferAndOffset) {
  // Two runs: the same layout of pointers at other addresses.
  auto Run = [](uint64_t A, uint64_t B) {
    std::vector<AllocationRange> Ranges = {
        {0x7f0000001000, 0x100}, {A, 0x4000}, {B, 0x4000}};
    // An array of 4 pointers: into A at 0 and 0x1000, into B at 0x200, and
    // one to memory no range holds (left as it is).
    std::vector<uint64_t> Words = {A, A + 0x1000, B + 0x200, 0x1234};
    std::vector<uint8_t> Data = bytesOf(Words);
    canonicalPointers(Data, 0, Ranges);
    return Data;
  };
  std::vector<uint8_t> First = Run(0x7f0000200000, 0x7f0000100000);
  std::vector<uint8_t> Second = Run(0x7f0000600000, 0x7f0000400000);
  EXPECT_EQ(First, Second);
  uint64_t W[4];
  std::memcpy(W, First.data(), 32);
  EXPECT_EQ(W[0], (uint64_t(0xC7) << 56) | (uint64_t(1) << 40));
  EXPECT_EQ(W[1], (uint64_t(0xC7) << 56) | (uint64_t(1) << 40) | 0x1000);
  EXPECT_EQ(W[2], (uint64_t(0xC7) << 56) | (uint64_t(2) << 40) | 0x200);
  EXPECT_EQ(W[3], 0x1234u);
  // A pointer to another place, or to the other buffer, differs.
  std::vector<AllocationRange> Ranges = {{0x1000, 0x100}, {0x2000, 0x100}};
  std::vector<uint64_t> Here = {0x1010}, There = {0x1018}, Other = {0x2010};
  std::vector<uint8_t> H = bytesOf(Here), T = bytesOf(There),
                       O = bytesOf(Other);
  canonicalPointers(H, 0, Ranges);
  canonicalPointers(T, 0, Ranges);
  canonicalPointers(O, 0, Ranges);
  EXPECT_NE(H, T);
  EXPECT_NE(H, O);
  // One past a buffer's end is not inside it.
  std::vector<uint64_t> End = {0x1100};
  std::vector<uint8_t> E = bytesOf(End);
  canonicalPointers(E, 0, Ranges);
  EXPECT_EQ(E, bytesOf(End));
}

TEST(CanonicalPointersTest, DifferencesNamePointersAndBuffers) {
  std::vector<AllocationRange> Ranges = {{0x1000, 0x100}, {0x8000, 0x4000}};
  std::vector<uint64_t> Want = {0x1000, 0x8000, 0x8400},
                        Got = {0x1000, 0x8800, 0x8400};
  std::vector<uint8_t> W = bytesOf(Want), G = bytesOf(Got);
  canonicalPointers(W, 0, Ranges);
  canonicalPointers(G, 0, Ranges);
  const ElementType Pointer{ElementKind::Pointer, 8};
  CompareResult R = compareBuffers(W, G, Pointer, Tolerance());
  EXPECT_EQ(R.Mismatches, 1u);
  EXPECT_EQ(*R.FirstDiffIndex, 1u);
  EXPECT_EQ(R.Expected, "buffer 1 + 0 bytes");
  EXPECT_EQ(R.Actual, "buffer 1 + 2048 bytes");
  // An address no buffer holds is shown as it is.
  std::vector<uint8_t> Raw = bytesOf(std::vector<uint64_t>{0xdead0});
  EXPECT_EQ(formatElement(Raw, 0, Pointer), "0xdead0");
}

TEST(CanonicalPointersTest, WordsAlignedWithTheArray) {
  // The array starts 4 bytes into its buffer: words are read from there.
  std::vector<AllocationRange> Ranges = {{0x5000, 0x100}};
  std::vector<uint8_t> Data(4 + 16, 0);
  uint64_t P = 0x5010;
  std::memcpy(Data.data() + 4, &P, 8);
  std::memcpy(Data.data() + 12, &P, 8);
  canonicalPointers(Data, 4, Ranges);
  uint64_t W;
  std::memcpy(&W, Data.data() + 12, 8);
  EXPECT_EQ(W, (uint64_t(0xC7) << 56) | 0x10);
  EXPECT_EQ(Data[0], 0);
}

TEST(CompareTest, EqualFloatBuffers) {
  std::vector<float> A = {1, 2, 3, -0.0f};
  std::vector<float> B = {1, 2, 3, 0.0f};
  CompareResult R = compareBuffers(bytesOf(A), bytesOf(B), Float,
                                   defaultTolerance(ElementKind::Float));
  EXPECT_TRUE(R.equal());
  EXPECT_EQ(R.Elements, 4u);
  EXPECT_FALSE(R.FirstDiffIndex);
}

TEST(CompareTest, FloatWithinAndBeyondTolerance) {
  Tolerance T;
  T.RelTol = 1e-5;
  T.AbsTol = 1e-6;
  std::vector<float> E = {1.0f, 100.0f, 0.0f, 5.0f};
  std::vector<float> A = {1.000005f, 100.0009f, 5e-7f, 5.1f};
  CompareResult R = compareBuffers(bytesOf(E), bytesOf(A), Float, T);
  EXPECT_EQ(R.Mismatches, 1u);
  ASSERT_TRUE(R.FirstDiffIndex);
  EXPECT_EQ(*R.FirstDiffIndex, 3u);
  EXPECT_EQ(R.Expected, "5");
  EXPECT_EQ(R.Actual, "5.0999999");
  EXPECT_NEAR(R.MaxAbsErr, 0.1, 1e-6);
  EXPECT_NEAR(R.MaxRelErr, 0.02, 1e-6);
}

TEST(CompareTest, ScaleToleranceAcceptsCancellationNotWrongValues) {
  // A reordered sum whose result cancelled to -0.015 while its terms (and
  // other results) are O(1000): its rounding error is small next to the
  // buffer's scale, not next to the result.
  std::vector<float> E = {1000.0f, -0.0151401134f, 250.0f, INFINITY};
  std::vector<float> A = {1000.0001f, -0.0151662827f, 250.0f, INFINITY};
  Tolerance T;
  T.RelTol = 1e-4;
  T.AbsTol = 1e-5;
  CompareResult Strict = compareBuffers(bytesOf(E), bytesOf(A), Float, T);
  EXPECT_EQ(Strict.Mismatches, 1u);
  EXPECT_EQ(*Strict.FirstDiffIndex, 1u);
  T.ScaleRelTol = 1e-4;
  EXPECT_TRUE(compareBuffers(bytesOf(E), bytesOf(A), Float, T).equal());
  // The infinity does not set the scale: AbsTol becomes 1e-4 * 1000.
  Tolerance Folded = scaledTolerance(bytesOf(E), Float, T);
  EXPECT_DOUBLE_EQ(Folded.AbsTol, 0.1);
  EXPECT_EQ(Folded.ScaleRelTol, 0);
  // A wrong value is still wrong at that scale.
  std::vector<float> Wrong = {1000.0f, 0.5f, 250.0f, INFINITY};
  CompareResult R = compareBuffers(bytesOf(E), bytesOf(Wrong), Float, T);
  EXPECT_EQ(R.Mismatches, 1u);
  EXPECT_EQ(*R.FirstDiffIndex, 1u);
  // Integers stay exact.
  Tolerance IntTol = scaledTolerance(bytesOf(std::vector<int>{5, 1000}),
                                     ElementType{ElementKind::SInt, 4}, T);
  EXPECT_DOUBLE_EQ(IntTol.AbsTol, T.AbsTol);
}

TEST(CompareTest, ZeroToleranceIsBitExactForFloats) {
  std::vector<float> E = {1.0f};
  std::vector<float> A = {std::nextafter(1.0f, 2.0f)};
  EXPECT_FALSE(
      compareBuffers(bytesOf(E), bytesOf(A), Float, Tolerance{}).equal());
}

TEST(CompareTest, NaNRules) {
  float NaN = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> E = {NaN, 1.0f};
  std::vector<float> Same = {-NaN, 1.0f};
  std::vector<float> NumberForNaN = {0.0f, 1.0f};
  std::vector<float> NaNForNumber = {NaN, NaN};
  Tolerance T = defaultTolerance(ElementKind::Float);
  EXPECT_TRUE(compareBuffers(bytesOf(E), bytesOf(Same), Float, T).equal());
  EXPECT_EQ(
      compareBuffers(bytesOf(E), bytesOf(NumberForNaN), Float, T).Mismatches,
      1u);
  CompareResult R = compareBuffers(bytesOf(E), bytesOf(NaNForNumber), Float, T);
  EXPECT_EQ(R.Mismatches, 1u);
  EXPECT_EQ(*R.FirstDiffIndex, 1u);
  EXPECT_EQ(R.Actual, "nan");
  // NaN-poisoned disagreements do not blow up the error maxima.
  EXPECT_EQ(R.MaxAbsErr, 0);
  T.NaNEqual = false;
  EXPECT_EQ(compareBuffers(bytesOf(E), bytesOf(Same), Float, T).Mismatches, 1u);
}

TEST(CompareTest, InfinityMustMatchSign) {
  double Inf = std::numeric_limits<double>::infinity();
  std::vector<double> E = {Inf, -Inf, 1e308};
  std::vector<double> A = {Inf, Inf, Inf};
  Tolerance Wide;
  Wide.RelTol = 10;
  Wide.AbsTol = 1e300;
  CompareResult R = compareBuffers(bytesOf(E), bytesOf(A), Double, Wide);
  EXPECT_EQ(R.Mismatches, 2u);
  EXPECT_EQ(*R.FirstDiffIndex, 1u);
  EXPECT_EQ(R.Expected, "-inf");
}

TEST(CompareTest, IntegersExactWithFirstDifference) {
  std::vector<int> E = {1, 2, 3, 4, 5};
  std::vector<int> A = {1, 2, 3, -4, 6};
  Tolerance Wide;
  Wide.RelTol = 1;
  Wide.AbsTol = 100;
  CompareResult R = compareBuffers(bytesOf(E), bytesOf(A), Int, Wide);
  EXPECT_EQ(R.Mismatches, 2u);
  EXPECT_EQ(*R.FirstDiffIndex, 3u);
  EXPECT_EQ(R.Expected, "4");
  EXPECT_EQ(R.Actual, "-4");
  EXPECT_EQ(R.MaxAbsErr, 8);
}

TEST(CompareTest, LargeIntegerBufferFindsLateDifference) {
  std::vector<uint32_t> E(1 << 20, 7), A = E;
  A[(1 << 20) - 1] = 8;
  CompareResult R = compareBuffers(bytesOf(E), bytesOf(A),
                                   ElementType{ElementKind::UInt, 4}, {});
  EXPECT_EQ(R.Mismatches, 1u);
  EXPECT_EQ(*R.FirstDiffIndex, (1u << 20) - 1);
}

TEST(CompareTest, HalfAndBFloat16) {
  // 1.0 = 0x3c00 in half, 0x3f80 in bf16; 1.0009765625 = 0x3c01 (1 ulp).
  std::vector<uint16_t> E = {0x3c00, 0x7c00, 0x0001};
  std::vector<uint16_t> A = {0x3c01, 0x7c00, 0x0001};
  ElementType Half{ElementKind::Half, 2};
  EXPECT_TRUE(compareBuffers(bytesOf(E), bytesOf(A), Half,
                             defaultTolerance(ElementKind::Half))
                  .equal());
  std::vector<uint16_t> Far = {0x4000, 0x7c00, 0x0001}; // 2.0
  CompareResult R = compareBuffers(bytesOf(E), bytesOf(Far), Half,
                                   defaultTolerance(ElementKind::Half));
  EXPECT_EQ(R.Mismatches, 1u);
  EXPECT_EQ(R.Expected, "1");
  EXPECT_EQ(R.Actual, "2");
  EXPECT_EQ(formatElement(bytesOf(E), 1, Half), "inf");
  EXPECT_EQ(formatElement(bytesOf(E), 2, Half), "5.96046448e-08");

  ElementType BF{ElementKind::BFloat16, 2};
  std::vector<uint16_t> BE = {0x3f80}, BA = {0x3f81}, BFar = {0x4000};
  Tolerance BT = defaultTolerance(ElementKind::BFloat16);
  EXPECT_TRUE(compareBuffers(bytesOf(BE), bytesOf(BA), BF, BT).equal());
  EXPECT_FALSE(compareBuffers(bytesOf(BE), bytesOf(BFar), BF, BT).equal());
}

TEST(CompareTest, SizeMismatchAndTrailingBytes) {
  std::vector<uint8_t> E = {1, 2, 3, 4, 5, 6};
  std::vector<uint8_t> A = {1, 2, 3, 4, 5, 7};
  CompareResult R = compareBuffers(E, A, Float, Tolerance{});
  EXPECT_FALSE(R.SizeMismatch);
  EXPECT_EQ(R.Elements, 1u);
  EXPECT_EQ(R.Mismatches, 1u);
  EXPECT_EQ(*R.FirstDiffIndex, 1u);

  std::vector<uint8_t> Short = {1, 2, 3, 4};
  R = compareBuffers(E, Short, Float, Tolerance{});
  EXPECT_TRUE(R.SizeMismatch);
  EXPECT_FALSE(R.equal());
}

TEST(CompareTest, BufferChanged) {
  std::vector<uint8_t> A(1000, 0), B = A;
  EXPECT_FALSE(bufferChanged(A, B));
  B[999] = 1;
  EXPECT_TRUE(bufferChanged(A, B));
  EXPECT_TRUE(bufferChanged(A, llvm::ArrayRef<uint8_t>(A).drop_back()));
}

TEST(ToleranceTest, EffectiveToleranceOnlyWidens) {
  Tolerance Tight; // zeros
  Tolerance E = effectiveTolerance(ElementKind::Float, Tight);
  EXPECT_EQ(E.RelTol, defaultTolerance(ElementKind::Float).RelTol);
  Tolerance Wide;
  Wide.RelTol = 1e-3;
  E = effectiveTolerance(ElementKind::Float, Wide);
  EXPECT_EQ(E.RelTol, 1e-3);
  EXPECT_EQ(E.AbsTol, defaultTolerance(ElementKind::Float).AbsTol);
  EXPECT_EQ(defaultTolerance(ElementKind::SInt).RelTol, 0);
}

TEST(CalibrationTest, WidensForReorderingNoise) {
  Tolerance Base = defaultTolerance(ElementKind::Float);
  CompareResult Noise;
  Noise.MaxAbsErr = 1e-5;
  Noise.MaxRelErr = 3e-5;
  Calibration C = calibrate(Float, Base, Noise);
  EXPECT_FALSE(C.Nondeterministic);
  EXPECT_DOUBLE_EQ(C.Tol.RelTol, 1.2e-4);
  EXPECT_DOUBLE_EQ(C.Tol.AbsTol, 4e-5);
  // No noise: the base stays.
  C = calibrate(Float, Base, CompareResult{});
  EXPECT_EQ(C.Tol.RelTol, Base.RelTol);
}

TEST(CalibrationTest, NondeterministicBeyondCeiling) {
  // Two elements moved further than the ceiling allows.
  CompareResult Noise;
  Noise.Mismatches = 2;
  Noise.FirstDiffIndex = 5;
  Noise.MaxAbsErr = 0.5;
  Noise.MaxRelErr = 0.25;
  Calibration C = calibrate(Float, defaultTolerance(ElementKind::Float), Noise);
  EXPECT_TRUE(C.Nondeterministic);
  EXPECT_NE(C.Reason.find("beyond float reordering noise"), std::string::npos);

  CompareResult IntNoise;
  IntNoise.Mismatches = 3;
  IntNoise.FirstDiffIndex = 17;
  C = calibrate(Int, Tolerance{}, IntNoise);
  EXPECT_TRUE(C.Nondeterministic);
  EXPECT_NE(C.Reason.find("first at 17"), std::string::npos);
}

TEST(CalibrationTest, MaximaOfDifferentElementsAreNotJudgedTogether) {
  // The suite's cg on the H200: no element beyond the ceiling, but the
  // largest absolute difference (1.17e-4, on a large value) and the largest
  // relative one (29x, on a value near zero) exceed the ceiling's two parts
  // separately. Deterministic, with the tolerance widened up to the ceiling
  // and no further.
  CompareResult Noise;
  Noise.MaxAbsErr = 1.17e-4;
  Noise.MaxRelErr = 29;
  Tolerance Base = defaultTolerance(ElementKind::Float);
  Calibration C = calibrate(Float, Base, Noise);
  EXPECT_FALSE(C.Nondeterministic) << C.Reason;
  Tolerance Ceiling = noiseCeiling(ElementKind::Float);
  EXPECT_DOUBLE_EQ(C.Tol.AbsTol, Ceiling.AbsTol);
  EXPECT_DOUBLE_EQ(C.Tol.RelTol, Ceiling.RelTol);
  // A value of 1.0 off by 1% still fails under the widened tolerance.
  EXPECT_LT(C.Tol.AbsTol + C.Tol.RelTol * 1.0, 0.01);
}

TEST(CalibrationTest, NoiseNearZeroWidensRelativeToTheBuffersScale) {
  // A CG program's second product Ap: the dot products before it summed
  // through atomics in another order, so p moved by about 1e-5 and Ap by
  // 1.6e-4 where its terms (O(1)) cancel to 5e-5. Per element that is past
  // the ceiling (abs 1e-4); next to the buffer's largest value (4) it is
  // noise.
  std::vector<float> E(64, 1.0f), A(64, 1.0f);
  E[3] = 4.0f;
  A[3] = 4.0f;
  E[17] = 5.0e-5f;
  A[17] = 2.1e-4f;
  E[40] = -2.5f;
  A[40] = -2.50003f;
  Tolerance Ceiling = noiseCeiling(ElementKind::Float);
  EXPECT_DOUBLE_EQ(Ceiling.ScaleRelTol, Ceiling.RelTol);
  EXPECT_EQ(noiseCeiling(ElementKind::SInt).ScaleRelTol, 0);
  Tolerance PerElement = Ceiling;
  PerElement.ScaleRelTol = 0;
  CompareResult Strict =
      compareBuffers(bytesOf(E), bytesOf(A), Float, PerElement);
  EXPECT_EQ(Strict.Mismatches, 1u);
  EXPECT_EQ(Strict.Scale, 0);
  CompareResult Noise = compareBuffers(bytesOf(E), bytesOf(A), Float, Ceiling);
  ASSERT_TRUE(Noise.equal());
  EXPECT_DOUBLE_EQ(Noise.Scale, 4.0);

  Calibration C = calibrate(Float, defaultTolerance(ElementKind::Float), Noise);
  ASSERT_FALSE(C.Nondeterministic) << C.Reason;
  EXPECT_DOUBLE_EQ(C.Tol.AbsTol, Ceiling.AbsTol);
  EXPECT_NEAR(C.Tol.ScaleRelTol, 4 * Noise.MaxAbsErr / 4.0, 1e-9);
  // A candidate as noisy as the original passes; one off by 0.01 at the
  // element near zero does not.
  EXPECT_TRUE(compareBuffers(bytesOf(E), bytesOf(A), Float, C.Tol).equal());
  std::vector<float> Wrong = A;
  Wrong[17] = 0.01f;
  CompareResult R = compareBuffers(bytesOf(E), bytesOf(Wrong), Float, C.Tol);
  EXPECT_EQ(R.Mismatches, 1u);
  EXPECT_EQ(*R.FirstDiffIndex, 17u);

  // Beyond the scaled ceiling (0.1% of the largest value), still
  // nondeterministic.
  std::vector<float> Far = A;
  Far[17] = 0.01f;
  CompareResult FarNoise =
      compareBuffers(bytesOf(E), bytesOf(Far), Float, Ceiling);
  EXPECT_EQ(FarNoise.Mismatches, 1u);
  EXPECT_TRUE(calibrate(Float, defaultTolerance(ElementKind::Float), FarNoise)
                  .Nondeterministic);
  // Noise the absolute part holds leaves the scale alone.
  Noise.MaxAbsErr = 1e-6;
  EXPECT_EQ(calibrate(Float, defaultTolerance(ElementKind::Float), Noise)
                .Tol.ScaleRelTol,
            0);
}

} // namespace
