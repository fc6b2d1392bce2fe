//===- RestructureConstantMemoryTest.cpp - constant-memory ----------------===//
//
// The inputs are the lit tests' own programs: test/edit/
// constant-memory-styles.cu (four kernels, parsed with the CUDA SDK) and
// test/edit/constant-memory-not.cu (look-alikes, hermetic).
//
//===----------------------------------------------------------------------===//

#include "RestructureTesting.h"

using namespace optiml;
using namespace optiml::restructure_testing;

namespace {

const Transform &constantMemory() {
  static auto T = createConstantMemoryTransform();
  return *T;
}

bool haveSdk() {
  return llvm::sys::fs::exists(sdkConfig().Tools.CudaPath +
                               "/include/cuda_runtime.h");
}

TEST(RestructureConstantMemoryTest, RangesThroughLoopsGuardsAndLocals) {
  if (!haveSdk())
    GTEST_SKIP() << "no CUDA SDK";
  Input In(sourceDir() + "/test/edit/constant-memory-styles.cu", sdkConfig());
  ASSERT_TRUE(In.Ctx);
  // [0, N): a 7x7 filter with macro bounds, -R..R shifted by R, a loop
  // counting down, a local index, and `k = i - 1` behind `if (k >= 0)`.
  const std::pair<const char *, const char *> Want[] = {
      {"conv", "'filt' is read at 1 place(s), at indices the same for every "
               "thread within [0, 49)"},
      {"row9", "'taps' is read at 1 place(s), at indices the same for every "
               "thread within [0, 9)"},
      {"poly", "'coef' is read at 1 place(s), at indices the same for every "
               "thread within [0, 6)"},
      {"img::blur5", "'wts' is read at 1 place(s), at indices the same for "
                     "every thread within [0, 25); 'lut' is read at 1 "
                     "place(s), at indices the same for every thread within "
                     "[0, 3)"},
      {"tmpl::smooth", "'taps' is read at 1 place(s), at indices the same "
                       "for every thread within [0, 25)"},
      {"rowptr", "'k3' is read at 1 place(s), at indices the same for every "
                 "thread within [0, 9)"}};
  for (const auto &[Kernel, Why] : Want) {
    Applicability A = constantMemory().prepare(*In.Ctx, Kernel);
    EXPECT_TRUE(A.Applies) << Kernel << ": " << A.Reason;
    EXPECT_EQ(A.Reason, std::string(Why) +
                            ": constant memory serves each warp's read at "
                            "once");
  }
}

TEST(RestructureConstantMemoryTest, CopiesBeforeTheLaunchInItsStream) {
  if (!haveSdk())
    GTEST_SKIP() << "no CUDA SDK";
  Edit E = makeEdit("constant-memory", "row9");
  E.Params["param"] = std::string("taps");
  std::string Out = applyToFile(
      constantMemory(), sourceDir() + "/test/edit/constant-memory-styles.cu", E,
      sdkConfig());
  ASSERT_EQ(Out.find("error: "), std::string::npos) << Out;
  // The file's comments name optiml_c_taps, so the array is numbered.
  EXPECT_NE(Out.find("__constant__ float optiml_c_taps1[9];\n\n"
                     "__global__ void row9("),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("acc += optiml_c_taps1[t + R] * src[j];"),
            std::string::npos);
  EXPECT_NE(Out.find("    cudaMemcpyToSymbolAsync(optiml_c_taps1, dtaps, 9 * "
                     "sizeof(float), 0, cudaMemcpyDefault, stream);\n"
                     "    row9<<<"),
            std::string::npos)
      << Out;
}

TEST(RestructureConstantMemoryTest, LookAlikesAreRefused) {
  Input In(sourceDir() + "/test/edit/constant-memory-not.cu", hermeticConfig());
  ASSERT_TRUE(In.Ctx);
  const std::pair<const char *, const char *> Want[] = {
      {"per_thread", "the index 'threadIdx.x % 16'"},
      {"written", "'c' is written"},
      {"runtime", "the index 'i'"},
      {"big", "read at up to 8192 elements"},
      {"negative", "may be negative"},
      {"unbraced", "is not a statement of its own"},
      {"twice", "has side effects"},
      {"pointer", "its name is used other than in a <<<...>>> launch"},
      {"templ", "read at up to 8192 elements; constant memory takes at most "
                "16384 bytes here in templ<8192>"},
      {"through_written", "'w', a pointer into 'c', is written through"},
      {"stepped", "'c' is bound to 'p' at"}};
  for (const auto &[Kernel, Why] : Want) {
    Applicability A = constantMemory().prepare(*In.Ctx, Kernel);
    EXPECT_FALSE(A.Applies) << Kernel;
    EXPECT_TRUE(A.Suggestions.empty()) << Kernel;
    EXPECT_NE(A.Reason.find(Why), std::string::npos)
        << Kernel << ": " << A.Reason;
  }
}

} // namespace
