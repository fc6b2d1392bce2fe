//===- RewriterTest.cpp - The checks of the checked rewriter --------------===//

#include "optiml/Edit/Rewriter.h"
#include "CatalogTesting.h"
#include "optiml/Edit/Checks.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

std::vector<CheckFailure> rejection(llvm::Error E) {
  std::vector<CheckFailure> F;
  llvm::handleAllErrors(
      std::move(E), [&](const EditRejected &R) { F = R.Failures; },
      [&](const llvm::ErrorInfoBase &EI) {
        F.push_back({"other", "", 0, 0, EI.message()});
      });
  return F;
}

TEST(Checks, RewritingInsideAMacroExpansionIsRefused) {
  Input In("#define SET(p, v) p[0] = v\n"
           "__global__ void k(float *p) { SET(p, 1.0f); }\n");
  ASSERT_TRUE(In.Ctx);
  unsigned Arg = In.Code.find("1.0f);");
  clang::tooling::Replacements R;
  ASSERT_FALSE(
      bool(R.add(clang::tooling::Replacement(In.FileName, Arg, 4, "2.0f"))));
  auto F = checkMacroExpansions(In.TU.AST->getASTContext(), R);
  ASSERT_EQ(F.size(), 1u);
  EXPECT_EQ(F[0].Check, "macro");
  EXPECT_EQ(F[0].Message,
            "the edit rewrites text inside the expansion of macro 'SET'; "
            "macros are never rewritten (expand it by hand first)");
  // Replacing the whole invocation is not a rewrite inside it.
  unsigned Begin = In.Code.find("SET(p, 1");
  clang::tooling::Replacements Whole;
  ASSERT_FALSE(bool(Whole.add(clang::tooling::Replacement(
      In.FileName, Begin, strlen("SET(p, 1.0f)"), "p[0] = 2.0f"))));
  EXPECT_TRUE(checkMacroExpansions(In.TU.AST->getASTContext(), Whole).empty());
}

TEST(Checks, ChangesOutsideTheTargetAreNamed) {
  Input In("__global__ void k(float *p) { p[0] = 1; }\n"
           "int main() { float *p; k<<<1, 1>>>(p); return 0; }\n");
  ASSERT_TRUE(In.Ctx);
  unsigned Ret = In.Code.find("return 0");
  clang::tooling::Replacements R;
  ASSERT_FALSE(
      bool(R.add(clang::tooling::Replacement(In.FileName, Ret + 7, 1, "1"))));
  ByteRange Def{unsigned(In.Code.find("__global__")),
                unsigned(In.Code.find("}\n") + 1), "the definition of 'k'"};
  auto F = checkScope(In.TU.AST->getASTContext(), In.Code, R, {Def});
  ASSERT_EQ(F.size(), 1u);
  EXPECT_EQ(F[0].Message, "the edit changes function 'main', outside what it "
                          "may change (the definition of 'k')");
  EXPECT_EQ(F[0].Line, 3u);
}

TEST(Rewriter, LaunchMacroArgumentsAreRewrittenWhereWritten) {
  std::string Code =
      "#include \"cuda_mock.h\"\n"
      "#define L(k, g, b, ...) k<<<g, b>>>(__VA_ARGS__)\n"
      "#define L2(k, g, b, ...) (k<<<g, b>>>(__VA_ARGS__), k<<<g, 1>>>(0, 0))\n"
      "__global__ void k(float *p, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) p[i] = 1;\n"
      "}\n"
      "void go(float *p, int n) { L(k, (n + 255) / 256, 256, p, n); }\n"
      "void twice(float *p, int n) { L2(k, (n + 255) / 256, 256, p, n); }\n";
  Edit E{"launch-config", "k/launch0", {{"block", int64_t(128)}}};
  auto R = applyEdit(testFile(), Code, testConfig(), E);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  EXPECT_NE(R->NewCode.find("L(k, (n + 127) / 128, 128, p, n);"),
            std::string::npos)
      << R->NewCode;
  // The grid of a macro whose body uses it twice is not rewritten.
  Edit Twice{"launch-config", "k/launch1", {{"block", int64_t(128)}}};
  auto T = applyEdit(testFile(), Code, testConfig(), Twice);
  ASSERT_FALSE(bool(T));
  auto F = rejection(T.takeError());
  ASSERT_EQ(F.size(), 1u);
  EXPECT_NE(F[0].Message.find("k/launch1 is written through a macro whose "
                              "invocation does not spell its grid once"),
            std::string::npos)
      << F[0].Message;
}

TEST(Rewriter, AddDeviceFunctionRefusesAnExistingName) {
  std::string Code = "#include \"cuda_mock.h\"\n"
                     "__device__ float sq(float v) { return v * v; }\n"
                     "__global__ void k(float *p) { p[0] = sq(p[0]); }\n";
  Edit E{
      "add-device-function",
      "k",
      {{"code", std::string("__device__ float sq(double v) { return v; }")}}};
  auto R = applyEdit(testFile(), Code, testConfig(), E);
  ASSERT_FALSE(bool(R));
  auto F = rejection(R.takeError());
  ASSERT_EQ(F.size(), 1u);
  EXPECT_EQ(F[0].Message,
            "'sq' is already declared in this file; pick a new name");
}

TEST(Rewriter, AppliedEditCarriesDiffSummaryAndPrecision) {
  std::string Code = "#include \"cuda_mock.h\"\n"
                     "__global__ void k(float *p) { p[0] = expf(p[0]); }\n";
  Edit E{"fast-math", "k", {}};
  auto R = applyEdit(testFile(), Code, testConfig(), E);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  EXPECT_TRUE(R->ChangesPrecision);
  EXPECT_EQ(R->Summary, "fast-math k");
  EXPECT_EQ(R->NewCode,
            "#include \"cuda_mock.h\"\n"
            "__global__ void k(float *p) { p[0] = __expf(p[0]); }\n");
  EXPECT_NE(
      R->Diff.find("+__global__ void k(float *p) { p[0] = __expf(p[0]); }"),
      std::string::npos);
}

TEST(Rewriter, ABodyWithConditionalsGetsOnlyWhatDoesNotReadIt) {
  // The host side sees an empty body; the device side writes `out`.
  std::string Code = "#include \"cuda_mock.h\"\n"
                     "__global__ void k(const float *in, float *out) {\n"
                     "  // #if in a comment is no directive\n"
                     "#pragma unroll 1\n"
                     "  for (int i = 0; i < 4; ++i) out[i] = in[i];\n"
                     "  #  ifdef __CUDA_ARCH__\n"
                     "  out[threadIdx.x] = in[0];\n"
                     "#endif\n"
                     "}\n";
  Edit RC{"read-only-cache", "k", {}};
  auto R = applyEdit(testFile(), Code, testConfig(), RC);
  ASSERT_FALSE(bool(R));
  auto F = rejection(R.takeError());
  ASSERT_FALSE(F.empty());
  EXPECT_EQ(F[0].Message,
            "'k': the kernel's body has a preprocessor conditional ('#ifdef' "
            "at line 6): the body is read as the host side of the compile "
            "sees it, the device side may see other code, and this "
            "transform depends on what the body does");
  // compile-flags does not read the body.
  Edit CF{"compile-flags", "k", {{"ptxas_o3", true}}};
  EXPECT_TRUE(bool(applyEdit(testFile(), Code, testConfig(), CF)));
  // Without the conditional (a pragma is no conditional), it applies.
  std::string Plain = Code;
  size_t If = Plain.find("  #  ifdef");
  Plain.erase(If, Plain.find("}\n", If) - If);
  auto P = applyEdit(testFile(), Plain, testConfig(), RC);
  EXPECT_TRUE(bool(P)) << llvm::toString(P.takeError());
}

TEST(Rewriter, NewDeclarationsOutsideTheTargetAreRefused) {
  std::string Code = "#include \"cuda_mock.h\"\n"
                     "__global__ void k(float *p) { p[0] = 1; }\n";
  // A helper is not a __device__ function: refused even via the helper kind.
  Edit E{"add-device-function",
         "k",
         {{"code", std::string("float host_helper(float v) { return v; }")}}};
  auto R = applyEdit(testFile(), Code, testConfig(), E);
  ASSERT_FALSE(bool(R));
  auto F = rejection(R.takeError());
  ASSERT_FALSE(F.empty());
  EXPECT_EQ(F[0].Message, "the helper 'host_helper' is not marked __device__ "
                          "(kernels cannot call it)");
}

TEST(Rewriter, TemplateEditsAreCheckedPerInstantiation) {
  std::string Code =
      "#include \"cuda_mock.h\"\n"
      "template <typename T> __global__ void k(T *p) { p[0] = 1; }\n"
      "struct S { int v; };\n"
      "void run(float *f, S *s) { k<<<1, 1>>>(f); }\n";
  Edit E{"replace-function",
         "k",
         {{"code", std::string("template <typename T> __global__ void k(T *p) "
                               "{ p[0] = p[0] * 2.0f; }")}}};
  auto R = applyEdit(testFile(), Code, testConfig(), E);
  EXPECT_TRUE(bool(R)) << llvm::toString(R.takeError());
  // With an S instantiation, the same body does not compile.
  Code += "void run2(S *s) { k<<<1, 1>>>(s); }\n";
  Code.replace(Code.find("p[0] = 1"), 8, "p[0] = p[0]");
  auto R2 = applyEdit(testFile(), Code, testConfig(), E);
  ASSERT_FALSE(bool(R2));
  auto F = rejection(R2.takeError());
  ASSERT_FALSE(F.empty());
  EXPECT_EQ(F[0].Check, "type-checks");
}

} // namespace
