//===- RestructurePrivatizeAtomicsTest.cpp - privatize-atomics -----------===//

#include "RestructureTesting.h"
#include "Transforms/Restructure/PrivatizeAtomicsInternal.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"

using namespace optiml;
using namespace optiml::restructure_testing;

namespace {

const Transform &privatize() {
  static auto T = createPrivatizeAtomicsTransform();
  return *T;
}

TEST(RestructurePrivatizeAtomicsTest, ByteHistogramPerBlock) {
  Applicability A = prepareOn(privatize(), "atomics-histogram", "histogram");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason, "1 atomicAdd into 'bins' (256 unsigned int elements, "
                      "bounded by the index); rewrite: a private copy per "
                      "block in shared memory, merged once per block, "
                      "grid-stride loop, grid capped at 1056");
  expectRewrite(privatize(), "atomics-histogram",
                makeEdit("privatize-atomics", "histogram"));
}

TEST(RestructurePrivatizeAtomicsTest, ByteHistogramPerWarp) {
  Applicability A = prepareOn(privatize(), "atomics-histogram", "histogram");
  ASSERT_TRUE(A.Applies);
  expectRewrite(privatize(), "atomics-histogram-warp",
                makeEdit("privatize-atomics", "histogram",
                         {{"copies", std::string("warp")},
                          {"max_blocks", int64_t(528)}}));
}

TEST(RestructurePrivatizeAtomicsTest, GridStrideMaskPointerOffset) {
  // 4-byte keys: no wide-load suggestion (the copies are the gain).
  Applicability A = prepareOn(privatize(), "atomics-buckets", "bucket_sizes");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Suggestions.size(), 2u);
  for (const Edit &S : A.Suggestions)
    EXPECT_FALSE(S.getInt("vector_bytes"));
  expectRewrite(privatize(), "atomics-buckets",
                makeEdit("privatize-atomics", "bucket_sizes"));
}

TEST(RestructurePrivatizeAtomicsTest, GivenBinsGuardTheRest) {
  expectRefusal(privatize(), "atomics-weighted",
                makeEdit("privatize-atomics", "weighted"),
                "the size of 'total' is not known at compile time: the index "
                "'c' is not bounded");
  expectRewrite(
      privatize(), "atomics-weighted",
      makeEdit("privatize-atomics", "weighted", {{"bins", int64_t(32)}}));
}

TEST(RestructurePrivatizeAtomicsTest, NearMisses) {
  const Transform &T = privatize();
  auto E = [](const char *K) { return makeEdit("privatize-atomics", K); };
  expectRefusal(T, "atomics-refuse", E("unknown_bins"),
                "is not known at compile time");
  expectRefusal(T, "atomics-refuse", E("too_large"),
                "need 400000 bytes of shared memory");
  expectRefusal(T, "atomics-refuse", E("uses_old"), "is used");
  expectRefusal(T, "atomics-refuse", E("also_read"),
                "'bins' is also read, written or passed on");
  expectRefusal(T, "atomics-refuse", E("maximum"),
                "atomicMax on 'best' at 21:14 cannot be privatized");
}

} // namespace

namespace {

// Wide loads: three differently written inputs.

TEST(RestructurePrivatizeAtomicsTest, ByteHistogramLaneColumnsSixteenBytes) {
  // prepare() puts 16-byte words and lane columns first for byte input.
  Applicability A = prepareOn(privatize(), "atomics-vector-lane", "histogram");
  ASSERT_TRUE(A.Applies) << A.Reason;
  ASSERT_EQ(A.Suggestions.size(), 3u);
  EXPECT_EQ(A.Suggestions[0].getInt("vector_bytes"), int64_t(16));
  EXPECT_EQ(A.Suggestions[0].getString("copies"), std::string("lane"));
  EXPECT_FALSE(A.Suggestions[1].getInt("vector_bytes"));
  expectRewrite(privatize(), "atomics-vector-lane",
                makeEdit("privatize-atomics", "histogram",
                         {{"copies", std::string("lane")},
                          {"vector_bytes", int64_t(16)}}));
}

TEST(RestructurePrivatizeAtomicsTest, TemplateGridStrideShortsEightBytes) {
  Applicability A =
      prepareOn(privatize(), "atomics-vector-shorts", "sample_hist");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Suggestions[0].getInt("vector_bytes"), int64_t(16));
  expectRewrite(privatize(), "atomics-vector-shorts",
                makeEdit("privatize-atomics", "sample_hist",
                         {{"vector_bytes", int64_t(8)}}));
}

TEST(RestructurePrivatizeAtomicsTest, TemplateLoopThroughOperatorCalls) {
  expectRewrite(
      privatize(), "atomics-vector-operators",
      makeEdit("privatize-atomics", "hist", {{"vector_bytes", int64_t(4)}}));
}

TEST(RestructurePrivatizeAtomicsTest, EarlyReturnTwoInputsGivenBins) {
  // 4-byte inputs: no wide-load suggestion, but the edit applies.
  Applicability A =
      prepareOn(privatize(), "atomics-vector-weighted", "weighted");
  EXPECT_FALSE(A.Applies);
  expectRewrite(privatize(), "atomics-vector-weighted",
                makeEdit("privatize-atomics", "weighted",
                         {{"bins", int64_t(32)},
                          {"copies", std::string("warp")},
                          {"vector_bytes", int64_t(16)}}));
}

TEST(RestructurePrivatizeAtomicsTest, WideLoadNearMisses) {
  const Transform &T = privatize();
  auto E = [](const char *K, int64_t Bytes = 16) {
    return makeEdit("privatize-atomics", K, {{"vector_bytes", Bytes}});
  };
  const char *Case = "atomics-vector-refuse";
  expectRefusal(T, Case, E("strided"),
                "params.vector_bytes 16: the load 'd[2 * i]' is not "
                "unit-stride in 'i'");
  expectRefusal(T, Case, E("index_used"),
                "'i' is used at 9:38 other than as the index of a load p[i]");
  expectRefusal(T, Case, E("pixels"),
                "'px' has element type 'Pixel', which has no vector form");
  expectRefusal(T, Case, E("wide", 4),
                "'key' has 8-byte elements, which do not fill a 4-byte word");
  expectRefusal(T, Case, E("writes"), "'seen' is written in the kernel");
  expectRefusal(T, Case, E("counts"),
                "the loop body updates 'hits', declared outside it");
  expectRefusal(T, Case, E("generic"),
                "the element type of 'd' depends on a template parameter");
  expectRefusal(T, Case, E("sliding"),
                "the loop at 45:3 is not 'for (i = blockIdx.x * blockDim.x + "
                "threadIdx.x; i < n; i += blockDim.x * gridDim.x)'");
  expectRefusal(T, Case, E("strided", 2),
                "params.vector_bytes must be 1, 4, 8 or 16");
  expectRefusal(T, Case,
                makeEdit("privatize-atomics", "strided",
                         {{"copies", std::string("thread")}}),
                "params.copies must be 'block', 'warp' or 'lane'");
  // The unit-stride input also passes with 8-byte elements in 16 bytes.
  Input In = caseInput(Case);
  ASSERT_TRUE(In.Ctx);
  auto R = T.apply(*In.Ctx, E("wide"));
  EXPECT_TRUE(bool(R)) << (R ? "" : rejectionReason(R.takeError()));
}

TEST(RestructurePrivatizeAtomicsTest, LaneColumnsNeedThirtyTwoCopies) {
  // 32 columns of 512 ints are 64 KB.
  expectRefusal(
      privatize(), "atomics-weighted",
      makeEdit("privatize-atomics", "weighted",
               {{"bins", int64_t(512)}, {"copies", std::string("lane")}}),
      "need 65536 bytes of shared memory (512 elements per lane)");
}

} // namespace

namespace {

// The range of the bins: clamps, helpers, arithmetic, narrowing.

/// indexRange() of the initializer of each local of kernel `k` in \p Code.
std::map<std::string, std::optional<int64_t>>
localRanges(const std::string &Code) {
  std::map<std::string, std::optional<int64_t>> Out;
  Input In(Code, caseDir() + "/ranges.cu", hermeticConfig());
  if (!In.Ctx)
    return Out;
  clang::ASTContext &AST = In.TU.AST->getASTContext();
  const clang::FunctionDecl *K = findKernelDecl(AST, "k");
  if (!K || !K->getBody()) {
    ADD_FAILURE() << "no kernel k";
    return Out;
  }
  for (const clang::Stmt *S :
       llvm::cast<clang::CompoundStmt>(K->getBody())->body())
    if (const auto *DS = llvm::dyn_cast<clang::DeclStmt>(S))
      for (const clang::Decl *D : DS->decls())
        if (const auto *V = llvm::dyn_cast<clang::VarDecl>(D))
          Out[V->getName().str()] =
              privatizeatomics::indexRange(V->getInit(), AST, K);
  return Out;
}

TEST(RestructurePrivatizeAtomicsTest, IndexRangeClampsHelpersArithmetic) {
  auto R = localRanges(R"(#include "cuda_mock.h"
__device__ int tenth(unsigned char x) { return x % 10; }
__device__ int any(int x, int m) { return x % m; }
__device__ int counted;
__device__ int noisy(unsigned char x) { counted++; return x & 7; }
__device__ signed char narrow(int x) { return x & 255; }
__global__ void k(const float *v, const int *key, const unsigned char *c,
                  int m) {
  int clamp = min(max((int)v[0], 0), 63);
  int clamp_rev = max(0, min(key[0], 31));
  int high_only = min((int)v[0], 63);
  int low_only = max(key[0], 0);
  int runtime_top = max(min(key[0], m), 0);
  int cell = (c[0] >> 4) * 16 + (c[1] & 15);
  int shifted = (c[0] << 2) | 3;
  int mixed = c[0] ^ (key[0] & 1023);
  int too_big = (key[0] & 0xFFFF) * (key[1] & 0xFFFF);
  signed char small = c[0] & 255;
  int via_small = small;
  int cast_small = (signed char)(key[0] & 255);
  int cast_wide = (short)(key[0] & 255);
  int helper = tenth(c[0]);
  int helper_any = any(key[0], m);
  int helper_noisy = noisy(c[0]);
  int helper_narrow = narrow(key[0]);
  int modulus = key[0] % m;
}
)");
  std::map<std::string, std::optional<int64_t>> Want = {
      {"clamp", 64},
      {"clamp_rev", 32},
      {"high_only", std::nullopt},   // may be negative
      {"low_only", std::nullopt},    // not bounded above
      {"runtime_top", std::nullopt}, // m is not a constant
      {"cell", 256},                 // 15 * 16 + 15 + 1
      {"shifted", 1024},             // (255 << 2) + 3 + 1
      {"mixed", 1279},               // a ^ b <= a + b
      {"too_big", std::nullopt},     // past 2^31: an int could wrap
      {"small", 256},                // its initializer; but signed char
      {"via_small", std::nullopt},   // does not hold 255
      {"cast_small", std::nullopt},
      {"cast_wide", 256},
      {"helper", 10},
      {"helper_any", std::nullopt},
      {"helper_noisy", std::nullopt}, // not pure
      {"helper_narrow", std::nullopt},
      {"modulus", std::nullopt},
  };
  for (const auto &[Name, Range] : Want) {
    ASSERT_TRUE(R.count(Name)) << Name;
    EXPECT_EQ(R[Name], Range) << Name;
  }
}

TEST(RestructurePrivatizeAtomicsTest, TemplateBinsPerInstantiation) {
  Applicability A = prepareOn(privatize(), "atomics-template-bins", "tbins");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("(100 unsigned int elements, bounded by the index)"),
            std::string::npos)
      << A.Reason;
  expectRewrite(privatize(), "atomics-template-bins",
                makeEdit("privatize-atomics", "tbins"));
  expectRefusal(privatize(), "atomics-template-bins",
                makeEdit("privatize-atomics", "tnever"),
                "the kernel template is never instantiated in this file");
}

TEST(RestructurePrivatizeAtomicsTest, LaneColumnsIndexEndsInConstantMacro) {
  expectRewrite(privatize(), "atomics-macro-lane",
                makeEdit("privatize-atomics", "classes",
                         {{"copies", std::string("lane")}}));
}

TEST(RestructurePrivatizeAtomicsTest, ClampedCellsAndAliasedInput) {
  const Transform &T = privatize();
  for (const char *K : {"grid2d", "helper2d", "scaled"}) {
    Applicability A = prepareOn(T, "atomics-clamps", K);
    EXPECT_TRUE(A.Applies) << K << ": " << A.Reason;
  }
  EXPECT_NE(prepareOn(T, "atomics-clamps", "grid2d")
                .Reason.find("(64 unsigned int elements"),
            std::string::npos);
  EXPECT_NE(prepareOn(T, "atomics-clamps", "helper2d")
                .Reason.find("(16 unsigned int elements"),
            std::string::npos);
  expectRefusal(T, "atomics-clamps", makeEdit("privatize-atomics", "inout"),
                "'data' points to elements that are not const and is used at "
                "23:21; it may point into 'bins'");
  // A store would be overtaken by the merge.
  expectRefusal(T, "atomics-clamps", makeEdit("privatize-atomics", "stores"),
                "'copy' points to elements that are not const and is used at "
                "28:5; it may point into 'bins'");
}

} // namespace
