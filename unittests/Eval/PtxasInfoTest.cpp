#include "optiml/Eval/PtxasInfo.h"
#include "gtest/gtest.h"

using namespace optiml;

namespace {

// Captured from nvcc 13.0 -O3 -arch=sm_90 -Xptxas -v.
const char *Cuda13Log = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_ZN3ops5scaleIfLi256EEEvPT_i' for 'sm_90'
ptxas info    : Function properties for _ZN3ops5scaleIfLi256EEEvPT_i
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 3.174 ms
ptxas info    : Compiling entry function '_Z5spillPf' for 'sm_90'
ptxas info    : Function properties for _Z5spillPf
    256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 256 bytes cumulative stack size
ptxas info    : Compile time = 32.758 ms
ptxas info    : Compiling entry function '_Z5saxpyifPKfPf' for 'sm_90'
ptxas info    : Function properties for _Z5saxpyifPKfPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 1.875 ms
)";

// The older format (cmem printed), with a device function and spills.
const char *OlderLog = R"(ptxas info    : 0 bytes gmem
ptxas info    : Function properties for _Z6helperf
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Compiling entry function '_Z4heavPfS_' for 'sm_80'
ptxas info    : Function properties for _Z4heavPfS_
    48 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads
ptxas info    : Used 255 registers, 368 bytes cmem[0], 8192 bytes smem
ptxas info    : Compiling entry function '_Z4heavPfS_' for 'sm_90'
ptxas info    : Function properties for _Z4heavPfS_
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 128 registers, 368 bytes cmem[0], 8192 bytes smem
)";

TEST(PtxasInfoTest, ParsesCuda13Output) {
  auto Rs = parsePtxasInfo(Cuda13Log);
  ASSERT_EQ(Rs.size(), 3u);
  EXPECT_EQ(Rs[0].Name, "ops::scale<float, 256>");
  EXPECT_EQ(Rs[0].Arch, "sm_90");
  EXPECT_EQ(Rs[0].Registers, 10u);
  EXPECT_EQ(Rs[0].Barriers, 1u);
  EXPECT_EQ(Rs[0].SharedBytes, 1024u);
  EXPECT_EQ(Rs[1].Name, "spill");
  EXPECT_EQ(Rs[1].StackBytes, 256u);
  EXPECT_EQ(Rs[1].Registers, 32u);
  EXPECT_FALSE(Rs[1].spills());
  EXPECT_EQ(Rs[2].Name, "saxpy");
  EXPECT_EQ(Rs[2].Mangled, "_Z5saxpyifPKfPf");
  EXPECT_EQ(Rs[2].SharedBytes, 0u);
}

TEST(PtxasInfoTest, ParsesSpillsCmemAndSeveralArchs) {
  auto Rs = parsePtxasInfo(OlderLog);
  ASSERT_EQ(Rs.size(), 2u); // the device function is not an entry
  EXPECT_EQ(Rs[0].Arch, "sm_80");
  EXPECT_EQ(Rs[0].Registers, 255u);
  EXPECT_EQ(Rs[0].SpillStoreBytes, 40u);
  EXPECT_EQ(Rs[0].SpillLoadBytes, 36u);
  EXPECT_TRUE(Rs[0].spills());
  EXPECT_EQ(Rs[0].ConstBytes, 368u);
  EXPECT_EQ(Rs[0].SharedBytes, 8192u);
  EXPECT_EQ(Rs[1].Arch, "sm_90");
  EXPECT_EQ(Rs[1].Registers, 128u);
  EXPECT_FALSE(Rs[1].spills());
  EXPECT_EQ(findResources(Rs, "heav", "sm_90").size(), 1u);
  EXPECT_EQ(findResources(Rs, "heav").size(), 2u);
}

TEST(PtxasInfoTest, FindsTemplatesAndQualifiedNames) {
  auto Rs = parsePtxasInfo(Cuda13Log);
  EXPECT_EQ(findResources(Rs, "ops::scale").size(), 1u);
  EXPECT_EQ(findResources(Rs, "scale").size(), 1u);
  EXPECT_EQ(findResources(Rs, "ops::scale<float, 256>").size(), 1u);
  EXPECT_EQ(findResources(Rs, "sca").size(), 0u);
  EXPECT_EQ(findResources(Rs, "saxpy").size(), 1u);
  EXPECT_EQ(findResources(Rs, "other::saxpy").size(), 0u);
}

TEST(PtxasInfoTest, NamesWithoutParams) {
  EXPECT_EQ(kernelNameWithoutParams("_Z5saxpyifPKfPf"), "saxpy");
  EXPECT_EQ(kernelNameWithoutParams("ns::k<(int)3>(float*)"), "ns::k<(int)3>");
  EXPECT_EQ(kernelNameWithoutParams("plain"), "plain");
  EXPECT_EQ(kernelNameWithoutParams("_Zgarbage"), "_Zgarbage");
}

TEST(PtxasInfoTest, EmptyAndGarbageInput) {
  EXPECT_TRUE(parsePtxasInfo("").empty());
  EXPECT_TRUE(parsePtxasInfo("Used 12 registers\nnonsense").empty());
}

TEST(PtxasInfoTest, SummarizesFirstErrors) {
  const char *Log =
      R"(bad.cu(1): error: this declaration has no storage class or type specifier
  bad
  ^

bad.cu(2): warning #1835-D: attribute "__global__" does not apply here

bad.cu(2): error: expected a ";"
bad.cu(9): error: third
bad.cu(10): error: fourth
4 errors detected in the compilation of "bad.cu".
)";
  EXPECT_EQ(summarizeCompileErrors(Log),
            "bad.cu(1): error: this declaration has no storage class or type "
            "specifier\nbad.cu(2): error: expected a \";\"\nbad.cu(9): error: "
            "third\n");
  EXPECT_EQ(
      summarizeCompileErrors("x.o: undefined reference to `f'\n"
                             "collect2: error: ld returned 1 exit status\n",
                             1),
      "x.o: undefined reference to `f'\n");
  EXPECT_EQ(summarizeCompileErrors("a\nb\nc\nd\n", 2), "c\nd\n");
}

} // namespace
