//===- CodeKeyTest.cpp - Compiled-code keys from real nvcc builds ---------===//
//
// GpuEvaluator::codeKey builds with the real nvcc and reads the device code
// with cuobjdump (no GPU needed); skipped where either is missing.
//
//===----------------------------------------------------------------------===//

#include "optiml/Eval/DeviceCode.h"
#include "optiml/Search/EvalAdapter.h"
#include "optiml/Support/FileUtil.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

using namespace llvm;
using namespace optiml;

namespace {

const char *Nvcc = "/usr/local/cuda/bin/nvcc";

const char *Original = R"(#include <cstdio>
#include <cuda_runtime.h>
__global__ void scale(int n, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 2.0f * __ldg(&x[i]);
}
int main() {
  const int n = 1 << 20;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  scale<<<(n + 255) / 256, 256>>>(n, x, y);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
)";

std::string replaced(StringRef S, StringRef From, StringRef To) {
  std::string Out = S.str();
  size_t P = Out.find(From.str());
  EXPECT_NE(P, std::string::npos) << From.str();
  if (P != std::string::npos)
    Out.replace(P, From.size(), To.str());
  return Out;
}

/// A builder (its cache) and an evaluator in a folder of their own, the
/// original program written there.
struct Folder {
  SmallString<128> Dir;
  std::unique_ptr<Builder> B;
  std::unique_ptr<GpuEvaluator> G;
  Folder() {
    EXPECT_FALSE(sys::fs::createUniqueDirectory("optiml-codekey", Dir));
    SmallString<128> Src(Dir);
    sys::path::append(Src, "scale.cu");
    EXPECT_FALSE(bool(writeFileAtomically(Src, Original)));
    BuildOptions BO;
    BO.Nvcc = Nvcc;
    BO.CacheDir = (Dir + "/cache").str();
    // Line tables name the source file: the build's folder is in the dump.
    BO.ExtraFlags = {"-lineinfo"};
    auto Made = Builder::create(BO);
    if (!Made) {
      ADD_FAILURE() << toString(Made.takeError());
      return;
    }
    B = std::move(*Made);
    GpuEvaluatorOptions GO;
    GO.OriginalPath = std::string(Src);
    G = std::make_unique<GpuEvaluator>(*B, GO);
  }
  ~Folder() {
    G.reset();
    (void)sys::fs::remove_directories(Dir);
  }
  std::optional<std::string> key(StringRef Source,
                                 std::vector<std::string> Flags = {}) {
    return G->codeKey(CandidateSpec{Source.str(), std::move(Flags), false});
  }
};

class CodeKeyTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!sys::fs::can_execute(Nvcc))
      GTEST_SKIP() << "no nvcc at " << Nvcc;
    if (findCuobjdump(Nvcc).empty())
      GTEST_SKIP() << "no cuobjdump beside nvcc or in PATH";
  }
};

TEST_F(CodeKeyTest, NoOpEditsInOtherFoldersGetTheOriginalsKey) {
  Folder A, B;
  ASSERT_TRUE(A.G && B.G);
  auto Orig = A.key(Original);
  ASSERT_TRUE(Orig);
  // __restrict__ on a pointer read only through __ldg, and a redundant
  // local: other sources, the same machine code, built elsewhere.
  auto Restrict = B.key(
      replaced(Original, "const float *x", "const float *__restrict__ x"));
  auto Local = B.key(replaced(Original, "y[i] = 2.0f * __ldg(&x[i]);",
                              "{ float two = 2.0f; y[i] = two * "
                              "__ldg(&x[i]); }"));
  // Launch bounds the launch keeps within, the register count unchanged.
  auto Bounds = B.key(replaced(Original, "__global__ void scale",
                               "__global__ void __launch_bounds__(512) scale"));
  EXPECT_EQ(Restrict, Orig);
  EXPECT_EQ(Local, Orig);
  EXPECT_EQ(Bounds, Orig);
  // A candidate's text built like the original's file gets its key too.
  EXPECT_EQ(B.key(Original), Orig);
}

TEST_F(CodeKeyTest, RealChangesGetOtherKeys) {
  Folder A;
  ASSERT_TRUE(A.G);
  auto Orig = A.key(Original);
  ASSERT_TRUE(Orig);
  auto Constant = A.key(replaced(Original, "2.0f *", "3.0f *"));
  auto Launch = A.key(replaced(Original, "(n + 255) / 256, 256>>>",
                               "(n + 127) / 128, "
                               "128>>>"));
  auto Flags = A.key(Original, {"-use_fast_math"});
  ASSERT_TRUE(Constant && Launch && Flags);
  EXPECT_NE(*Constant, *Orig);
  EXPECT_NE(*Launch, *Orig);
  EXPECT_NE(*Flags, *Orig);
  // Another string in a kernel: the same instructions, other device data
  // (the source text outside kernels is the same too).
  std::string Print = replaced(Original, "y[i] = 2.0f * __ldg(&x[i]);",
                               "y[i] = 2.0f * __ldg(&x[i]);\n  if (i == 0)\n"
                               "    printf(\"first %f\\n\", y[0]);");
  auto Lower = A.key(Print);
  auto Upper = A.key(replaced(Print, "first", "FIRST"));
  ASSERT_TRUE(Lower && Upper);
  EXPECT_NE(*Lower, *Upper);
  // What does not build has no key (it is evaluated, and fails there).
  EXPECT_FALSE(A.key(replaced(Original, "2.0f *", "2.0f * undeclared *")));
}

TEST_F(CodeKeyTest, TheKeysBuildIsTheEvaluationsBuild) {
  Folder A;
  ASSERT_TRUE(A.G);
  std::string Src = replaced(Original, "2.0f *", "4.0f *");
  ASSERT_TRUE(A.key(Src));
  unsigned Compiled = A.B->compilations();
  EXPECT_EQ(Compiled, 1u);
  // evaluate() asks the builder for the same request: a cache hit.
  BuildRequest R;
  R.SourcePath = (A.Dir + "/scale.cu").str();
  R.Source = Src;
  auto Built = A.B->build(R);
  ASSERT_TRUE(bool(Built)) << toString(Built.takeError());
  EXPECT_TRUE(Built->CacheHit);
  EXPECT_EQ(A.B->compilations(), Compiled);
  // A prefetched candidate is not built again for its key.
  std::string Other = replaced(Original, "2.0f *", "5.0f *");
  A.G->prefetch({CandidateSpec{Other, {}, false}});
  ASSERT_TRUE(A.key(Other));
  EXPECT_EQ(A.B->compilations(), Compiled + 1);
}

} // namespace
