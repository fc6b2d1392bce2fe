//===- EditTextTest.cpp - Edit text through the compiler's lexer ----------===//
//
// The checks of edit text (EditText.cpp, checkIntroducedCode): directives
// however spelled, token invariance outside the edit, host and device side,
// and code that runs outside the kernel or grows the stack.
//
//===----------------------------------------------------------------------===//

#include "CatalogTesting.h"
#include "optiml/Edit/Checks.h"
#include "optiml/Edit/Rewriter.h"
#include "clang/AST/ASTContext.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const char *Kernel = "__global__ void k(float *p, int n) {\n"
                     "  int i = threadIdx.x;\n"
                     "  if (i < n) p[i] = 1;\n"
                     "}\n";

std::vector<CheckFailure> rejection(llvm::Error E) {
  std::vector<CheckFailure> F;
  llvm::handleAllErrors(
      std::move(E), [&](const EditRejected &R) { F = R.Failures; },
      [&](const llvm::ErrorInfoBase &EI) {
        F.push_back({"other", "", 0, 0, EI.message()});
      });
  return F;
}

/// The compiler's options for the mock CUDA file.
const clang::LangOptions &langOpts() {
  static Input In(Kernel);
  return In.TU.AST->getASTContext().getLangOpts();
}

/// Replaces the lines of the first function body in \p Code (from the line
/// after its `{` up to its `}`, or past it with \p WithClose) by \p Body;
/// \p Repls gets the replacement.
std::string replaceBody(const std::string &Code, const std::string &Body,
                        clang::tooling::Replacements &Repls,
                        bool WithClose = false) {
  size_t B = Code.find("{\n") + 2, E = Code.find("\n}") + 1 + WithClose;
  EXPECT_FALSE(
      bool(Repls.add(clang::tooling::Replacement(testFile(), B, E - B, Body))));
  return *clang::tooling::applyAllReplacements(Code, Repls);
}

std::vector<CheckFailure> directives(const std::string &Body) {
  std::string Code = std::string("#include \"cuda_mock.h\"\n") + Kernel;
  clang::tooling::Replacements R;
  std::string New = replaceBody(Code, Body, R);
  return checkEditDirectives(langOpts(), New, editedRanges(R));
}

TEST(EditText, LangOptionsAreTheCompilers) {
  EXPECT_TRUE(langOpts().CUDA);
  EXPECT_TRUE(langOpts().Digraphs);
  EXPECT_TRUE(langOpts().CPlusPlus);
}

TEST(EditText, DirectivesAreFoundHoweverSpelled) {
  for (const char *Body :
       {"#define X 1\n", "%:define X 1\n", "%:include \"/etc/passwd\"\n",
        "%:include_next <x.h>\n", "%:undef CHECK\n", "   #   define X\n",
        "/* c */ # define X\n", "# /* c */ define X\n", "#\\\ndefine X\n",
        "%\\\n:define X\n", "#def\\\nine X\n", "#\n", "#if 0\n",
        "#pragma once\n", "#pragma unroll 4 \"x\"\n",
        "#pragma unroll \\\n p[0] = 1;\n", "  _Pragma(\"once\")\n",
        "  _Pra\\\ngma(\"once\")\n"}) {
    auto F = directives(Body);
    ASSERT_FALSE(F.empty()) << Body;
    EXPECT_EQ(F[0].Check, "directive") << Body;
  }
}

TEST(EditText, ValidTextIsNotADirective) {
  for (const char *Body :
       {"  const char *s = R\"(#define X 1\n#include <x>)\";\n",
        "  // #define X 1\n", "  /* %:include \"x\" */\n",
        "  const char *s = \"#include <x> %:define\";\n", "  p<:0:> = 5 % 3;\n",
        "#pragma unroll\n", "#pragma unroll 4\n", "%:pragma unroll (2 * 2)\n",
        "#pragma nounroll\n", "  // comment \\\n  } continued\n"}) {
    EXPECT_TRUE(directives(Body).empty()) << Body;
  }
}

TEST(EditText, DirectiveNameIsTheCompilersSpelling) {
  auto F = directives("%:\\\n  inc\\\nlude \"x\"\n");
  ASSERT_EQ(F.size(), 1u);
  EXPECT_NE(F[0].Message.find("('include')"), std::string::npos)
      << F[0].Message;
}

TEST(EditText, SplicesAreRemoved) {
  EXPECT_EQ(withoutSplices("pri\\\nntf"), "printf");
  EXPECT_EQ(withoutSplices("a\\  \r\nb"), "ab");
  EXPECT_EQ(withoutSplices("a\\b"), "a\\b");
}

std::vector<CheckFailure> lexical(const std::string &Code,
                                  const std::string &Body) {
  clang::tooling::Replacements R;
  std::string New = replaceBody(Code, Body, R);
  return checkLexicalInvariance(langOpts(), Code, New, R);
}

TEST(EditText, TextThatReachesPastTheEditIsRefused) {
  std::string Code = std::string("__global__ void k(float *p) {\n"
                                 "  p[0] = 1;\n}\n#define A 1\nint x = A;\n");
  // A comment continued into the code after the edit.
  auto F = lexical(Code, "  p[0] = 2; // \\");
  ASSERT_FALSE(F.empty());
  EXPECT_EQ(F[0].Check, "tokens");
  // An unterminated block comment, string and raw string.
  EXPECT_FALSE(lexical(Code, "  p[0] = 2; /*").empty());
  EXPECT_FALSE(lexical(Code, "  const char *s = R\"(").empty());
  // A comment that swallows the closing brace.
  EXPECT_FALSE(lexical(Code, "  p[0] = 2; // fine").empty());
  // A harmless rewrite.
  EXPECT_TRUE(lexical(Code, "  p[0] = 2; // fine\n").empty());
}

TEST(EditText, TextGluedToItsNeighbourIsRefused) {
  std::string Code = "int f() { return 1; }\n";
  clang::tooling::Replacements R;
  ASSERT_FALSE(bool(R.add(clang::tooling::Replacement(
      testFile(), Code.find("return "), 7, "return"))));
  std::string New = *clang::tooling::applyAllReplacements(Code, R);
  auto F = checkLexicalInvariance(langOpts(), Code, New, R);
  ASSERT_FALSE(F.empty());
  EXPECT_NE(F[0].Message.find("crosses the edge"), std::string::npos);
}

TEST(EditText, EditsThatCutADirectiveAreRefused) {
  std::string Code = "#define A 1\n__global__ void k(float *p) { p[0] = A; }\n";
  clang::tooling::Replacements R;
  ASSERT_FALSE(bool(R.add(clang::tooling::Replacement(testFile(), 8, 3, "B"))));
  std::string New = *clang::tooling::applyAllReplacements(Code, R);
  auto F = checkLexicalInvariance(langOpts(), Code, New, R);
  ASSERT_FALSE(F.empty());
  EXPECT_NE(F[0].Message.find("directive"), std::string::npos);
}

std::vector<CheckFailure> preprocessed(const std::string &Code,
                                       const std::string &Body,
                                       CudaSide Side = CudaSide::Host,
                                       bool WithClose = false) {
  clang::tooling::Replacements R;
  std::string New = replaceBody(Code, Body, R, WithClose);
  return checkPreprocessedInvariance(testFile(), Code, New, R, testConfig(),
                                     Side);
}

TEST(EditText, MacroInvocationAcrossTheEdgeIsRefused) {
  // The edit ends with the name of a function-like macro of the original:
  // the code after it would become the macro's argument.
  std::string Code = "#include \"cuda_mock.h\"\n"
                     "#define DROP(...)\n"
                     "__device__ int f(int v) {\n  return v;\n}\n"
                     "(int);\n";
  auto F = preprocessed(Code, "  return v;\n} DROP", CudaSide::Host,
                        /*WithClose=*/true);
  ASSERT_FALSE(F.empty());
  EXPECT_EQ(F[0].Check, "tokens");
}

TEST(EditText, PragmaThroughAnOriginalMacroIsRefused) {
  std::string Code = "#include \"cuda_mock.h\"\n"
                     "#define P(x) _Pragma(#x)\n"
                     "__global__ void k(float *p) {\n  p[0] = 1;\n}\n";
  auto F = preprocessed(Code, "  P(GCC poison cudaFree)\n  p[0] = 1;");
  ASSERT_FALSE(F.empty());
  EXPECT_EQ(F[0].Check, "directive");
}

/// The preprocessed check for \p Code with the first \p Old at or after
/// \p After replaced by \p New.
std::vector<CheckFailure> rewritten(const std::string &Code,
                                    const std::string &After,
                                    const std::string &Old,
                                    const std::string &New,
                                    CudaSide Side = CudaSide::Host) {
  size_t At = Code.find(Old, Code.find(After));
  EXPECT_NE(At, std::string::npos) << Old;
  clang::tooling::Replacements R;
  EXPECT_FALSE(bool(
      R.add(clang::tooling::Replacement(testFile(), At, Old.size(), New))));
  std::string Out = *clang::tooling::applyAllReplacements(Code, R);
  return checkPreprocessedInvariance(testFile(), Code, Out, R, testConfig(),
                                     Side);
}

const char *LaunchMacros =
    "#include \"cuda_mock.h\"\n"
    "#define C0 0.4f\n"
    "#define ID(x) x\n"
    "#define STR(x) #x\n"
    "#define TWICE(x) ((x) + (x))\n"
    "#define LAUNCH(k, grid, block, ...) k<<<(grid), (block)>>>(__VA_ARGS__)\n"
    "__global__ void k(float c, const char *s, float *p) { p[0] = c; }\n"
    "void run(dim3 g, const char *s, float *p) {\n"
    "  LAUNCH(k, g, 64, C0, s, p); // one\n"
    "  LAUNCH(k, g, 64, TWICE(C0), STR(g), p); // two\n"
    "  LAUNCH(k, ID(g), 64, C0, s, p); // three\n"
    "}\n";

TEST(EditText, MacroArgumentBesideAnotherMacroIsRewritten) {
  // The tokens of 'C0', 'TWICE(C0)' and 'STR(g)' are placed at those
  // invocations, inside the launch macro's arguments: an edit of the grid
  // leaves them outside it, the same at the shifted offsets.
  for (CudaSide S : {CudaSide::Host, CudaSide::Device}) {
    EXPECT_TRUE(rewritten(LaunchMacros, "LAUNCH(k, g, 64, C0", "g",
                          "dim3(2, g.y, g.z)", S)
                    .empty());
    EXPECT_TRUE(
        rewritten(LaunchMacros, "LAUNCH(k, g, 64, TWICE", "64", "128", S)
            .empty());
    // A whole invocation replaced.
    EXPECT_TRUE(rewritten(LaunchMacros, "LAUNCH(k, g, 64, C0", "C0", "0.5f", S)
                    .empty());
  }
}

TEST(EditText, RewriteInsideANestedMacroIsRefused) {
  // The argument of a macro used in the launch macro's arguments: 'g' of
  // 'ID(g)' (expanded as written, still through a macro), 'C0' of
  // 'TWICE(C0)', 'g' of 'STR(g)' (stringized): the edit reaches inside an
  // invocation whose tokens are placed at the whole of it.
  for (auto [After, Old] : {std::pair<const char *, const char *>{"ID(g)", "g"},
                            {"TWICE(C0)", "C0"},
                            {"STR(g)", "g"}}) {
    auto F = rewritten(LaunchMacros, After, Old, "h");
    ASSERT_FALSE(F.empty()) << After;
    EXPECT_EQ(F[0].Check, "tokens") << After;
    EXPECT_NE(F[0].Message.find("crosses the edge"), std::string::npos)
        << F[0].Message;
  }
  // The nested macro's name: its expansion is gone.
  auto Name = rewritten(LaunchMacros, "TWICE(C0)", "TWICE", "h");
  ASSERT_FALSE(Name.empty());
  EXPECT_EQ(Name[0].Check, "tokens");
  // The body of a macro the launch passes: what it expands to there changes.
  for (CudaSide S : {CudaSide::Host, CudaSide::Device}) {
    auto F = rewritten(LaunchMacros, "#define C0", "0.4f", "0.5f", S);
    ASSERT_FALSE(F.empty());
    EXPECT_EQ(F[0].Check, "tokens");
    EXPECT_NE(F[0].Message.find("preprocesses differently"), std::string::npos)
        << F[0].Message;
  }
}

TEST(EditText, SameTokensOutsideOnBothSides) {
  std::string Code = "#include \"cuda_mock.h\"\n"
                     "__global__ void k(float *p) {\n  p[0] = 1;\n}\n"
                     "int line() { return __LINE__; }\n";
  // More lines shift __LINE__ after the edit: allowed.
  for (CudaSide S : {CudaSide::Host, CudaSide::Device})
    EXPECT_TRUE(preprocessed(Code, "  p[0] = 1;\n\n\n  p[1] = 2;", S).empty());
}

TEST(EditText, SameTokensForAMacroWrittenOut) {
  std::string Code = "#include \"cuda_mock.h\"\n"
                     "#define LAUNCH(k, n, ...) k<<<((n) + 255) / 256, "
                     "256>>>(__VA_ARGS__)\n"
                     "#define SIDE __CUDA_ARCH__\n"
                     "__global__ void k(float *p, int n) { p[0] = n; }\n"
                     "void run(float *p, int n) { LAUNCH(k, n, p, n); }\n";
  std::string Out = Code;
  Out.replace(Out.find("LAUNCH(k, n, p, n)"), 18,
              "k<<<((n) + 255) / 256, 256>>>(p, n)");
  for (CudaSide S : {CudaSide::Host, CudaSide::Device})
    EXPECT_TRUE(
        checkSameTokens(testFile(), Code, Out, testConfig(), S).empty());
  // One token more (a parenthesis the macro does not write) is a difference.
  std::string Paren = Code;
  Paren.replace(Paren.find("LAUNCH(k, n, p, n)"), 18,
                "k<<<(((n) + 255) / 256), 256>>>(p, n)");
  auto F =
      checkSameTokens(testFile(), Code, Paren, testConfig(), CudaSide::Host);
  ASSERT_EQ(F.size(), 1u);
  EXPECT_EQ(F[0].Check, "tokens");
  EXPECT_NE(F[0].Message.find("same tokens"), std::string::npos);
  // So is another file's text or a token that differs only on one side.
  std::string Side = Code;
  Side.replace(Side.find("p[0] = n;"), 9, "p[0] = n + 0;");
  EXPECT_FALSE(
      checkSameTokens(testFile(), Code, Side, testConfig(), CudaSide::Device)
          .empty());
}

std::vector<CheckFailure> introduced(const std::string &Helper) {
  std::string Code = std::string("#include \"cuda_mock.h\"\n") + Kernel;
  Edit E{"add-device-function", "k", {{"code", Helper}}};
  auto R = applyEdit(testFile(), Code, testConfig(), E);
  if (R)
    return {};
  return rejection(R.takeError());
}

TEST(EditText, CodeOutsideTheKernelIsRefused) {
  for (const char *Helper :
       {"__attribute__((constructor)) __host__ __device__ void b() {}",
        "[[gnu::constructor]] __host__ __device__ void b() {}",
        "__attribute__((__destructor__)) __host__ __device__ void b() {}",
        "__attribute__((section(\".init_array\"))) __device__ void b() {}"}) {
    auto F = introduced(Helper);
    ASSERT_FALSE(F.empty()) << Helper;
    EXPECT_EQ(F[0].Check, "forbidden") << Helper;
    EXPECT_NE(F[0].Message.find("attribute"), std::string::npos)
        << F[0].Message;
  }
}

TEST(EditText, UnboundedStackIsRefused) {
  for (const char *Helper :
       {"__device__ void b(int n) { char *t = (char *)__builtin_alloca(n); "
        "t[0] = 0; }",
        "__device__ void b(int n) { char *t = (char *)__builtin_al\\\nloca(n); "
        "t[0] = 0; }",
        "__device__ int b(int n) { return n ? b(n - 1) : 0; }"}) {
    auto F = introduced(Helper);
    ASSERT_FALSE(F.empty()) << Helper;
    EXPECT_EQ(F[0].Check, "forbidden") << Helper << ": " << F[0].Message;
  }
}

TEST(EditText, ADigraphDefineDoesNotReachMain) {
  // The finding: a %:define in a rewrite that redefines what main calls.
  std::string Code = std::string("#include \"cuda_mock.h\"\n") + Kernel +
                     "int main() { cudaDeviceSynchronize(); return 0; }\n";
  Edit E{
      "replace-function",
      "k",
      {{"code", std::string("__global__ void k(float *p, int n) {\n"
                            "%:define cudaDeviceSynchronize() 0\n"
                            "  if (threadIdx.x < n) p[threadIdx.x] = 1;\n}")}}};
  auto R = applyEdit(testFile(), Code, testConfig(), E);
  ASSERT_FALSE(bool(R));
  auto F = rejection(R.takeError());
  ASSERT_FALSE(F.empty());
  EXPECT_EQ(F[0].Check, "code");
  EXPECT_NE(F[0].Message.find("'#define'"), std::string::npos) << F[0].Message;
}

TEST(EditText, IncludedFilesAreNeverQuoted) {
  // A file whose content would show in a diagnostic if it were included.
  llvm::SmallString<128> Path;
  ASSERT_FALSE(bool(llvm::sys::fs::createTemporaryFile("secret", "txt", Path)));
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    OS << "root:SECRET-CONTENT:0:0\n";
  }
  std::string Code = std::string("#include \"cuda_mock.h\"\n") + Kernel;
  for (std::string Dir : {"#include", "%:include", "%:\\\ninclude", "#embed"}) {
    Edit E{"add-device-function",
           "k",
           {{"code", "__device__ int b() {\n" + Dir + " \"" +
                         std::string(Path) + "\"\n  return 0;\n}"}}};
    auto R = applyEdit(testFile(), Code, testConfig(), E);
    ASSERT_FALSE(bool(R)) << Dir;
    for (const CheckFailure &F : rejection(R.takeError()))
      EXPECT_EQ(F.str().find("SECRET-CONTENT"), std::string::npos) << F.str();
  }
  llvm::sys::fs::remove(Path);
}

} // namespace
