//===- IncludedFileTest.cpp - Edits of kernels in included files ----------===//
//
// A kernel defined in a user file that the main file includes (a header, an
// included .cu) is modeled with its file, and an edit of it rewrites that
// file alone, with every check applied to it.
//
//===----------------------------------------------------------------------===//

#include "CatalogTesting.h"
#include "optiml/Edit/Checks.h"
#include "optiml/Edit/Rewriter.h"
#include "optiml/Frontend/ASTUtil.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const char *MainText = "#include \"cuda_mock.h\"\n"
                       "#define N 4\n"
                       "#include \"k.cuh\"\n"
                       "__global__ void m(float *p) {\n"
                       "  for (int i = 0; i < 4; ++i)\n"
                       "    p[i] = 0;\n"
                       "}\n"
                       "int main() {\n"
                       "  float *p = 0;\n"
                       "  k<<<1, N>>>(p);\n"
                       "  m<<<1, N>>>(p);\n"
                       "  return N;\n"
                       "}\n";
const char *KernelText = "__global__ void k(float *p) {\n"
                         "  for (int i = 0; i < 4; ++i)\n"
                         "    p[i] = N;\n"
                         "}\n";

class IncludedFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("optiml-included", Dir));
    Main = write("main.cu", MainText);
    Kernel = write("k.cuh", KernelText);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }
  std::string write(llvm::StringRef Name, llvm::StringRef Text) {
    llvm::SmallString<256> P(Dir);
    llvm::sys::path::append(P, Name);
    std::error_code EC;
    llvm::raw_fd_ostream OS(P, EC);
    OS << Text;
    return std::string(P);
  }
  ParseConfig included() const {
    ParseConfig C = testConfig();
    C.MainFile = Main;
    return C;
  }
  llvm::SmallString<256> Dir;
  std::string Main, Kernel;
};

std::vector<CheckFailure> rejection(llvm::Error E) {
  std::vector<CheckFailure> F;
  llvm::handleAllErrors(
      std::move(E), [&](const EditRejected &R) { F = R.Failures; },
      [&](const llvm::ErrorInfoBase &EI) {
        F.push_back({"other", "", 0, 0, EI.message()});
      });
  return F;
}

TEST_F(IncludedFileTest, ModelNamesTheDefiningFile) {
  auto TU = parseCuda(MainText, Main, testConfig(), CudaSide::Host);
  ASSERT_TRUE(bool(TU)) << llvm::toString(TU.takeError());
  KernelModel M = buildKernelModel(TU->AST->getASTContext());
  const KernelInfo *K = M.findKernel("k");
  ASSERT_NE(K, nullptr);
  EXPECT_EQ(K->File, Kernel);
  EXPECT_EQ(K->Range.Begin.Line, 1u);
  ASSERT_EQ(K->Launches.size(), 1u);
  EXPECT_EQ(K->Launches[0].File, Main);
  EXPECT_EQ(M.findKernel("m")->File, Main);
  // The chain of includers, and the mock header (-I) is the user's too,
  // while clang's own headers are not.
  const clang::SourceManager &SM = TU->AST->getSourceManager();
  clang::FileID F = findFileID(SM, Kernel);
  ASSERT_TRUE(F.isValid());
  EXPECT_TRUE(isUserFile(SM, F));
  EXPECT_EQ(includeChain(SM, F), std::vector<std::string>{Main});
  // The edit's view: the file's kernels, with the launches written in it.
  KernelModel V = modelForFile(M, Kernel);
  ASSERT_EQ(V.Kernels.size(), 1u);
  EXPECT_TRUE(V.Kernels[0].Launches.empty());
}

TEST_F(IncludedFileTest, ParsingAnIncludedFileSeesItsNewText) {
  std::string Broken = std::string(KernelText) + "int broken = nope;\n";
  auto TU = parseCuda(Broken, Kernel, included(), CudaSide::Host);
  ASSERT_TRUE(bool(TU)) << llvm::toString(TU.takeError());
  ASSERT_EQ(TU->errorCount(), 1u);
  EXPECT_EQ(TU->Diags[0].File, Kernel);
  EXPECT_EQ(TU->Diags[0].Line, 5u);
}

TEST_F(IncludedFileTest, AnEditRewritesTheFileThatDefinesTheKernel) {
  auto A = applyEdit(Main, MainText, testConfig(),
                     makeEdit("unroll", "k/loop0", {{"factor", int64_t(2)}}));
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  EXPECT_EQ(A->File, Kernel);
  EXPECT_EQ(A->NewCode, "__global__ void k(float *p) {\n"
                        "  #pragma unroll 2\n"
                        "  for (int i = 0; i < 4; ++i)\n"
                        "    p[i] = N;\n"
                        "}\n");
  EXPECT_EQ(
      llvm::StringRef(A->Diff).take_until([](char C) { return C == '\n'; }),
      "--- a/k.cuh");
  // The main file's kernel is still edited in the main file.
  auto B =
      applyEdit(Main, MainText, testConfig(), makeEdit("unroll", "m/loop0"));
  ASSERT_TRUE(bool(B)) << llvm::toString(B.takeError());
  EXPECT_EQ(B->File, Main);
}

TEST_F(IncludedFileTest, AListRewritesOneFile) {
  std::vector<Edit> Edits = {makeEdit("unroll", "k/loop0"),
                             makeEdit("unroll", "m/loop0")};
  auto A = applyEdits(Main, MainText, testConfig(), Edits);
  auto F = rejection(A.takeError());
  ASSERT_EQ(F.size(), 1u);
  EXPECT_EQ(F[0].Check, "scope");
  EXPECT_NE(F[0].Message.find("is defined in '" + Main + "', not in '" +
                              Kernel + "'"),
            std::string::npos)
      << F[0].Message;
}

TEST_F(IncludedFileTest, ALaunchInAnotherFileIsOutOfReach) {
  auto A = applyEdit(
      Main, MainText, testConfig(),
      makeEdit("launch-config", "k/launch0", {{"block", int64_t(128)}}));
  auto F = rejection(A.takeError());
  ASSERT_FALSE(F.empty());
  EXPECT_EQ(F[0].Check, "scope");
  EXPECT_NE(F[0].Message.find("is written in '" + Main + "'"),
            std::string::npos)
      << F[0].Message;
}

TEST_F(IncludedFileTest, ReplacementsInAnotherFileAreRefused) {
  clang::tooling::Replacements R;
  ASSERT_FALSE(bool(R.add(clang::tooling::Replacement(Main, 0, 0, "int x;"))));
  auto F = checkOneFile(R, Kernel);
  ASSERT_EQ(F.size(), 1u);
  EXPECT_EQ(F[0].Check, "scope");
  EXPECT_TRUE(checkOneFile(R, Main).empty());
  // The same file under another spelling is the same file.
  llvm::SmallString<256> Dotted(Dir);
  llvm::sys::path::append(Dotted, ".", "sub", "..", "main.cu");
  EXPECT_TRUE(checkOneFile(R, Dotted).empty());
}

TEST_F(IncludedFileTest, TokensOfTheOtherFilesMustNotChange) {
  // A directive slipped past the lexical checks would redefine N for the
  // main file after the include: the main file's tokens change.
  clang::tooling::Replacements R;
  ASSERT_FALSE(bool(R.add(
      clang::tooling::Replacement(Kernel, 0, 0, "#undef N\n#define N 8\n"))));
  auto New = clang::tooling::applyAllReplacements(KernelText, R);
  ASSERT_TRUE(bool(New));
  auto F = checkPreprocessedInvariance(Kernel, KernelText, *New, R, included(),
                                       CudaSide::Host);
  ASSERT_FALSE(F.empty());
  EXPECT_NE(F[0].Message.find("another file of the translation unit"),
            std::string::npos)
      << F[0].Message;
  // An edit inside the kernel changes nothing elsewhere.
  clang::tooling::Replacements Inside;
  unsigned At = llvm::StringRef(KernelText).find("p[i] = N") + 7;
  ASSERT_FALSE(
      bool(Inside.add(clang::tooling::Replacement(Kernel, At, 1, "2 * N"))));
  auto New2 = clang::tooling::applyAllReplacements(KernelText, Inside);
  ASSERT_TRUE(bool(New2));
  EXPECT_TRUE(checkPreprocessedInvariance(Kernel, KernelText, *New2, Inside,
                                          included(), CudaSide::Host)
                  .empty());
}

TEST_F(IncludedFileTest, ADirectiveInEditTextIsRefusedBeforeAnythingIsRead) {
  // replace-function text that tries to include the main file.
  Edit E = makeEdit("replace-function", "k",
                    {{"code", std::string("__global__ void k(float *p) {\n"
                                          "#include \"main.cu\"\n"
                                          "}\n")}});
  auto A = applyEdit(Main, MainText, testConfig(), E);
  auto F = rejection(A.takeError());
  ASSERT_FALSE(F.empty());
  // Refused when the edit text is read, before any text is parsed.
  EXPECT_EQ(F[0].Check, "code");
  EXPECT_NE(F[0].Message.find("directive"), std::string::npos) << F[0].Message;
}

} // namespace
