#include "optiml/Frontend/MainFunction.h"
#include "optiml/Frontend/Parse.h"
#include "clang/Frontend/ASTUnit.h"
#include "gtest/gtest.h"

using namespace optiml;

namespace {

/// Parses \p Body (after the mock header) and asks whether it defines main.
bool mainIn(const std::string &Body) {
  ToolchainOptions TO;
  TO.ResourceDir = OPTIML_TEST_RESOURCE_DIR;
  auto Tools = discoverToolchain(TO);
  EXPECT_TRUE(bool(Tools)) << llvm::toString(Tools.takeError());
  ParseConfig Config;
  Config.Tools = *Tools;
  Config.ExtraArgs = {"-nocudainc", "-nocudalib", "-I" OPTIML_TEST_INPUTS_DIR};
  std::string Code = "#include \"cuda_mock.h\"\n" + Body;
  auto TU = parseCuda(Code, "/tmp/main-test.cu", Config, CudaSide::Host);
  EXPECT_TRUE(bool(TU));
  EXPECT_EQ(TU->errorCount(), 0u);
  return definesMain(TU->AST->getASTContext());
}

TEST(DefinesMainTest, KernelsAloneHaveNoMain) {
  EXPECT_FALSE(mainIn("__global__ void k(float *p) { p[0] = 1; }\n"
                      "void launch(float *p) { k<<<1, 1>>>(p); }\n"));
}

TEST(DefinesMainTest, ADeclarationIsNotADefinition) {
  EXPECT_FALSE(mainIn("int main(int, char **);\n"));
}

TEST(DefinesMainTest, MainInAnyForm) {
  EXPECT_TRUE(mainIn("int main() { return 0; }\n"));
  EXPECT_TRUE(mainIn("int main(int argc, char **argv) { return argc; }\n"));
  EXPECT_TRUE(mainIn("extern \"C\" int main() { return 0; }\n"));
  EXPECT_TRUE(mainIn("int main(int, char **);\n"
                     "int main(int argc, char **) { return argc; }\n"));
}

// Something called main that is not the program's entry point.
TEST(DefinesMainTest, MainElsewhereIsNotMain) {
  EXPECT_FALSE(mainIn("namespace app { int main() { return 0; } }\n"
                      "struct S { int main() { return 0; } };\n"));
}

} // namespace
