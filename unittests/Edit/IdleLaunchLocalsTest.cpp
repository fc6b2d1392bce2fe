//===- IdleLaunchLocalsTest.cpp - locals a rewritten launch leaves unused -===//

#include "CatalogTesting.h"
#include "Transforms/TransformSupport.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const char *Program = R"(__global__ void k(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 0.f;
}
dim3 make_block();
void run(float *p, int n) {
  int calls = 0;
  int b = ++calls;
  dim3 block(b);
  dim3 grid((n + 31) / 32);
  k<<<grid, block>>>(p, n);
  dim3 b2 = make_block();
  k<<<grid, b2>>>(p, n);
}
)";

/// The program with the launches' configurations replaced by \p New1 and
/// \p New2, and what idleLaunchLocals() then removes, as the lines it
/// removes.
std::vector<std::string> removed(const std::string &New1,
                                 const std::string &New2) {
  Input In(Program);
  if (!In.Ctx)
    return {"error: no input"};
  clang::tooling::Replacements Repls;
  size_t At = 0;
  for (const auto &[Old, New] :
       {std::pair<std::string, std::string>("grid, block", New1),
        std::pair<std::string, std::string>("grid, b2", New2)}) {
    At = In.Code.find(Old, At);
    EXPECT_NE(At, std::string::npos) << Old;
    llvm::cantFail(Repls.add(clang::tooling::Replacement(
        In.FileName, unsigned(At), unsigned(Old.size()), New)));
  }
  std::vector<std::string> Out;
  for (const auto &R : idleLaunchLocals(*In.Ctx, "k", Repls))
    Out.push_back(In.Code.substr(R.getOffset(), R.getLength()));
  return Out;
}

/// The replacement of \p In's configuration `blocks, threads` by \p New.
clang::tooling::Replacements configReplaced(const Input &In,
                                            const std::string &New) {
  const std::string Old = "blocks, threads";
  size_t At = In.Code.find(Old);
  EXPECT_NE(At, std::string::npos);
  clang::tooling::Replacements Repls;
  llvm::cantFail(Repls.add(clang::tooling::Replacement(
      In.FileName, unsigned(At), unsigned(Old.size()), New)));
  return Repls;
}

TEST(IdleLaunchLocalsTest, RemovesWhatOnlyTheOldConfigurationsRead) {
  // grid and block go; b goes once block has (its initializer is
  // ++calls: it stays); b2's initializer is a call: it stays.
  EXPECT_EQ(removed("dim3(1), dim3(32)", "dim3(1), dim3(64)"),
            (std::vector<std::string>{"  dim3 grid((n + 31) / 32);\n",
                                      "  dim3 block(b);\n"}));
}

TEST(IdleLaunchLocalsTest, KeepsALocalStillReadOrNamedByTheNewText) {
  // The second launch still reads grid: only block goes.
  EXPECT_EQ(removed("dim3(1), dim3(32)", "grid, dim3(64)"),
            (std::vector<std::string>{"  dim3 block(b);\n"}));
  // The new text names block: nothing goes but grid, which the second
  // launch's new text no longer reads.
  EXPECT_EQ(removed("dim3(1), block", "dim3(2), b2"),
            (std::vector<std::string>{"  dim3 grid((n + 31) / 32);\n"}));
}

TEST(IdleLaunchLocalsTest, RemovesOneDeclaratorOfSeveral) {
  // The suite's `int threads = 256, blocks = ...;` after warp-per-row
  // wrote its launch anew, threads still read by another call.
  Input In(R"(__global__ void k(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 0.f;
}
void other(int);
void run(float *p, int n) {
  int threads = 256, blocks = (n + threads - 1) / threads;
  k<<<blocks, threads>>>(p, n);
  other(threads);
}
)");
  ASSERT_TRUE(In.Ctx);
  clang::tooling::Replacements Repls =
      configReplaced(In, "dim3((n + 255) / 256), dim3(256)");
  for (const auto &R : idleLaunchLocals(*In.Ctx, "k", Repls))
    llvm::cantFail(Repls.add(R));
  auto Out = clang::tooling::applyAllReplacements(In.Code, Repls);
  ASSERT_TRUE(bool(Out));
  EXPECT_NE(Out->find("  int threads = 256;\n"
                      "  k<<<dim3((n + 255) / 256), dim3(256)>>>(p, n);\n"),
            std::string::npos)
      << *Out;
}

TEST(IdleLaunchLocalsTest, ANameInTheNewTextsCommentsIsNoUse) {
  // A rewrite whose new text says "threads" in a comment and a string
  // still leaves `threads` unread: both declarators go.
  Input In(R"(__global__ void k(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 0.f;
}
void run(float *p, int n) {
  int threads = 256, blocks = (n + threads - 1) / threads;
  k<<<blocks, threads>>>(p, n);
}
)");
  ASSERT_TRUE(In.Ctx);
  clang::tooling::Replacements Repls =
      configReplaced(In, "/* 64 threads per block */ (n + 63) / 64, 64");
  std::vector<std::string> Gone;
  for (const auto &R : idleLaunchLocals(*In.Ctx, "k", Repls))
    Gone.push_back(In.Code.substr(R.getOffset(), R.getLength()));
  EXPECT_EQ(Gone, (std::vector<std::string>{
                      "  int threads = 256, blocks = (n + threads - 1) / "
                      "threads;\n"}));
  EXPECT_FALSE(namesIdentifier("// threads\n\"threads\" 'x'", "threads"));
  EXPECT_TRUE(namesIdentifier("f(threads);", "threads"));
  EXPECT_FALSE(namesIdentifier("threadsPerBlock + nthreads", "threads"));
}

} // namespace
