#include "optiml/Frontend/KernelModelOutput.h"
#include "gtest/gtest.h"

using namespace optiml;

namespace {

// A file name is any bytes: one that is not UTF-8 comes out with U+FFFD for
// the bad byte, not as an exception that aborts `analyze --json`.
TEST(KernelModelOutputTest, PathThatIsNotUTF8) {
  KernelModel M;
  M.File = "/d/k\xff.cu";
  KernelInfo K;
  K.Name = K.QualifiedName = "scale";
  M.Kernels.push_back(K);
  std::string J = kernelModelToJSON(M, 2);
  EXPECT_NE(J.find("\"file\": \"/d/k\xef\xbf\xbd.cu\""), std::string::npos)
      << J;
}

} // namespace
