//===- WrittenCodeTest.cpp - Checks on a model's part of a program --------===//
//
// The model's kernels and launch statements placed in the harness and
// checked on what the compiler resolved. Needs the CUDA SDK's headers
// (skipped without them).
//
//===----------------------------------------------------------------------===//

#include "optiml/Synth/WrittenCode.h"
#include "optiml/Synth/Synthesize.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "gtest/gtest.h"

using namespace llvm;

namespace optiml {
namespace synth {
namespace {

const ParseConfig *sdkConfig() {
  static std::optional<ParseConfig> Config =
      []() -> std::optional<ParseConfig> {
    ToolchainOptions O;
    O.ResourceDir = OPTIML_TEST_RESOURCE_DIR;
    auto T = discoverToolchain(O);
    if (!T) {
      consumeError(T.takeError());
      return std::nullopt;
    }
    if (!sys::fs::exists(T->CudaPath + "/include/cuda_runtime.h"))
      return std::nullopt;
    ParseConfig C;
    C.Tools = *T;
    return C;
  }();
  return Config ? &*Config : nullptr;
}

Spec transposeSpec() {
  auto S = parseSpec(R"js({"class": "transpose",
    "inputs": [{"name": "a", "type": "float", "shape": ["rows", "cols"]}],
    "outputs": [{"name": "b", "type": "float", "shape": ["cols", "rows"]}],
    "sizes": {"rows": 48, "cols": 20},
    "reference": "void reference(const float *a, float *b, int rows, int cols) {}"})js",
                     "t.json", "");
  EXPECT_TRUE(bool(S)) << (S ? "" : toString(S.takeError()));
  return S ? *S : Spec();
}

const char *const GoodKernels = R"(
__global__ void tr(const float *a, float *b, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols)
    b[(size_t)(i % cols) * rows + i / cols] = sqrtf(a[i] * a[i]);
}
)";
const char *const GoodLaunch =
    "  tr<<<(rows * cols + 255) / 256, 256>>>(d_a, d_b, rows, cols);\n";

/// The failures of \p Kernels and \p Launch, one line each.
std::string failures(StringRef Kernels, StringRef Launch) {
  KernelCode C = templateCode(transposeSpec());
  C.Kernels = Kernels.str();
  C.Launch = Launch.str();
  auto F = checkWrittenCode(transposeSpec(), {"t.cu", {}}, C, "/tmp/t.cu",
                            *sdkConfig());
  if (!F)
    return "error: " + toString(F.takeError());
  std::string Out;
  for (const CheckFailure &X : *F)
    Out += X.str() + "\n";
  return Out;
}

#define REQUIRE_SDK()                                                          \
  if (!sdkConfig())                                                            \
  GTEST_SKIP() << "no CUDA SDK headers"

TEST(WrittenCodeTest, PlainKernelAndLaunchPass) {
  REQUIRE_SDK();
  EXPECT_EQ(failures(GoodKernels, GoodLaunch), "");
}

TEST(WrittenCodeTest, RuntimeApiConstexprAndHarnessMacrosPass) {
  REQUIRE_SDK();
  EXPECT_EQ(failures(GoodKernels,
                     "  float *tmp = nullptr;\n"
                     "  OPTIML_CHECK(cudaMalloc(&tmp, sizeof(float) * rows));\n"
                     "  int threads = std::min(256, rows * cols);\n"
                     "  dim3 grid((rows * cols + threads - 1) / threads);\n"
                     "  tr<<<grid, threads>>>(d_a, d_b, rows, cols);\n"
                     "  OPTIML_CHECK(cudaFree(tmp));\n"),
            "");
}

TEST(WrittenCodeTest, ShellCommandsAreRefusedHoweverSpelled) {
  REQUIRE_SDK();
  EXPECT_NE(failures(GoodKernels,
                     std::string("  system(\"touch x\");\n") + GoodLaunch)
                .find("host code uses 'system'"),
            std::string::npos);
  // A line splice: the compiler reads `system`.
  EXPECT_NE(failures(GoodKernels,
                     std::string("  sys\\\ntem(\"touch x\");\n") + GoodLaunch)
                .find("host code uses 'system'"),
            std::string::npos);
  // Inside a host function of the model's own, called from the launch.
  EXPECT_NE(
      failures(std::string(GoodKernels) +
                   "static int helper() { return (int)(long)popen(\"ls\", "
                   "\"r\"); }\n",
               std::string("  (void)helper();\n") + GoodLaunch)
          .find("host code uses 'popen'"),
      std::string::npos);
  // A builtin with side effects: the compiler declares it itself.
  EXPECT_NE(
      failures(GoodKernels,
               std::string("  __builtin_printf(\"optiml-synth: PASS\\n\");\n") +
                   GoodLaunch)
          .find("builtin '__builtin_printf', which has side effects"),
      std::string::npos);
  EXPECT_EQ(failures(GoodKernels,
                     std::string("  if (__builtin_expect(rows > 0, 1))\n") +
                         GoodLaunch),
            "");
  // Through a pointer.
  EXPECT_NE(
      failures(GoodKernels, std::string("  auto f = (int (*)(const char *))0;\n"
                                        "  f(\"ls\");\n") +
                                GoodLaunch)
          .find("calls through a pointer"),
      std::string::npos);
}

TEST(WrittenCodeTest, LibraryFunctionsDeclaredAfreshAreRefused) {
  REQUIRE_SDK();
  // A function of libc not included by the harness, declared by the model
  // and called: it would link to libc's.
  std::string F = failures(
      std::string(GoodKernels) + "int execv(const char *, char *const *);\n",
      std::string("  execv(\"/bin/sh\", nullptr);\n") + GoodLaunch);
  EXPECT_NE(F.find("declares without defining it"), std::string::npos) << F;
  F = failures(std::string(GoodKernels) +
                   "extern \"C\" int execl(const char *, ...);\n",
               GoodLaunch);
  EXPECT_NE(F.find("linkage specification"), std::string::npos) << F;
  F = failures(std::string(GoodKernels) +
                   "int run_it(const char *) __asm__(\"system\");\n",
               GoodLaunch);
  EXPECT_NE(F.find("asm"), std::string::npos) << F;
  // A helper declared first and defined later is the model's own.
  EXPECT_EQ(failures(std::string(GoodKernels) +
                         "static int blocks_for(int n);\n"
                         "static int blocks_for(int n) { return (n + 255) / "
                         "256; }\n",
                     "  tr<<<blocks_for(rows * cols), 256>>>(d_a, d_b, rows, "
                     "cols);\n"),
            "");
}

TEST(WrittenCodeTest, HarnessVariablesAreOutOfReach) {
  REQUIRE_SDK();
  // The host arrays: a launch that wrote them could skip the GPU.
  std::string F =
      failures(GoodKernels, std::string("  (void)h_a;\n") + GoodLaunch);
  EXPECT_NE(F.find("names 'h_a' of the harness"), std::string::npos) << F;
  EXPECT_NE(F.find("(d_a, d_b, rows, cols)"), std::string::npos) << F;
}

TEST(WrittenCodeTest, DeclarationsMustBeNew) {
  REQUIRE_SDK();
  // The harness's comparison, specialized to always agree.
  std::string F = failures(
      std::string(GoodKernels) +
          "template <> bool optimlCompare<float>(const char *, const "
          "std::vector<float> &, const std::vector<float> &, double, double) "
          "{ return true; }\n",
      GoodLaunch);
  EXPECT_NE(F.find("specializes"), std::string::npos) << F;
  // libc's fabs given a body.
  F = failures(std::string(GoodKernels) + "double fabs(double) { return 0; }\n",
               GoodLaunch);
  EXPECT_NE(F.find("declares 'fabs', a name already declared outside it"),
            std::string::npos)
      << F;
  F = failures(std::string(GoodKernels) + "namespace std { int x; }\n",
               GoodLaunch);
  EXPECT_NE(F.find("reopens namespace 'std'"), std::string::npos) << F;
}

TEST(WrittenCodeTest, TextStaysInItsPlace) {
  REQUIRE_SDK();
  // Closing runOnDevice early: the harness's copy-back would land in a
  // function of the model's (and no longer compiles).
  std::string F = failures(GoodKernels, std::string(GoodLaunch) +
                                            "}\nstatic void later() {\n");
  EXPECT_NE(F.find("[type-checks]"), std::string::npos) << F;
  F = failures(std::string("#include <unistd.h>\n") + GoodKernels, GoodLaunch);
  EXPECT_NE(F.find("directive"), std::string::npos) << F;
  F = failures(std::string(GoodKernels) +
                   "__attribute__((constructor)) static void early() {}\n",
               GoodLaunch);
  EXPECT_NE(F.find("constructor"), std::string::npos) << F;
  F = failures(GoodKernels, "");
  EXPECT_NE(F.find("the launch text is empty"), std::string::npos) << F;
  F = failures(std::string(GoodKernels) + std::string(1, '\0'), GoodLaunch);
  EXPECT_NE(F.find("NUL"), std::string::npos) << F;
}

TEST(WrittenCodeTest, DeviceCodeRulesStillApply) {
  REQUIRE_SDK();
  std::string F = failures(
      R"(__global__ void tr(const float *a, float *b, int rows, int cols) {
  printf("%d\n", rows);
}
)",
      GoodLaunch);
  EXPECT_NE(F.find("printf"), std::string::npos) << F;
  F = failures(R"(__global__ void inner(float *b) { b[0] = 1; }
__global__ void tr(const float *a, float *b, int rows, int cols) {
  inner<<<1, 1>>>(b);
}
)",
               GoodLaunch);
  EXPECT_NE(F.find("kernel launch from __device__ or __global__ function"),
            std::string::npos)
      << F;
}

TEST(WrittenCodeTest, CompileErrorsAreReported) {
  REQUIRE_SDK();
  std::string F = failures("__global__ void tr(flaot *b) {}\n", GoodLaunch);
  EXPECT_NE(F.find("[type-checks]"), std::string::npos) << F;
  EXPECT_NE(F.find("flaot"), std::string::npos) << F;
}

TEST(WrittenCodeTest, LayoutPlacesThePartsWhereTheProgramHasThem) {
  Spec S = transposeSpec();
  KernelCode C = templateCode(S);
  C.Kernels = "KERNELS\n";
  C.Launch = "LAUNCH\n";
  ProgramLayout L = programLayout(S, {"t.cu", {}}, C);
  std::string P = generateProgram(S, {"t.cu", {}}, C);
  std::string Rebuilt = L.Skeleton;
  Rebuilt.insert(L.LaunchAt, C.Launch);
  Rebuilt.insert(L.KernelsAt, C.Kernels);
  EXPECT_EQ(Rebuilt, P);
  EXPECT_EQ(P.substr(L.KernelsAt, 8), "KERNELS\n");
  EXPECT_NE(P.find("LAUNCH\n  OPTIML_CHECK(cudaGetLastError());"),
            std::string::npos);
}

TEST(WrittenCodeTest, ExplainFailureNamesThePattern) {
  Spec S = transposeSpec();
  std::vector<VerifyCase> Cases = verificationCases(S, 3);
  auto Runs = [&](unsigned Passing) {
    Verification V;
    V.Built = true;
    for (unsigned I = 0; I <= Passing && I < Cases.size(); ++I) {
      VerifyRun R;
      R.Case = Cases[I];
      R.Passed = I < Passing;
      R.Verdict = R.Passed ? "optiml-synth: PASS" : "optiml-synth: FAIL";
      V.Runs.push_back(R);
    }
    return V;
  };
  EXPECT_TRUE(StringRef(explainFailure(Runs(0)))
                  .starts_with("wrong at spec sizes, seed 1"));
  EXPECT_TRUE(
      StringRef(explainFailure(Runs(1)))
          .starts_with("right at the first seed, wrong at spec sizes, seed 2"));
  EXPECT_TRUE(
      StringRef(explainFailure(Runs(3)))
          .starts_with(
              "right at the spec's sizes, wrong at edge: every size 1"));
  EXPECT_TRUE(
      StringRef(explainFailure(Runs(4)))
          .starts_with("right at the spec's sizes, wrong at edge: odd sizes"))
      << explainFailure(Runs(4));
}

} // namespace
} // namespace synth
} // namespace optiml
