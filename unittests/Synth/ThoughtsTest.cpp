//===- ThoughtsTest.cpp - The model's strategies and programs -------------===//

#include "optiml/Synth/Thoughts.h"
#include "llvm/ADT/StringExtras.h"
#include "gtest/gtest.h"

using namespace llvm;

namespace optiml {
namespace synth {
namespace {

Spec sumSpec() {
  auto S = parseSpec(R"js({"class": "reduce", "request": "sum of x",
    "inputs": [{"name": "x", "type": "float", "shape": ["n"]}],
    "outputs": [{"name": "s", "type": "float", "shape": []}],
    "sizes": {"n": 1000},
    "reference": "void reference(const float *x, float *s, int n) { *s = 0; }"})js",
                     "sum.json", "");
  EXPECT_TRUE(bool(S)) << (S ? "" : toString(S.takeError()));
  return S ? *S : Spec();
}

TEST(ThoughtsTest, StrategiesAreCleanedDedupedAndCapped) {
  auto T = parseThoughts(R"({"strategies": [
      {"name": "warp shuffles", "idea": "a warp\nper block"},
      {"name": "Warp Shuffles", "idea": "the same again"},
      {"name": "  ", "idea": "no name"},
      {"name": 3, "idea": "not a string"},
      {"name": "tree", "idea": "shared memory tree"},
      {"name": "atomics", "idea": "one atomicAdd per block"}]})",
                         2);
  ASSERT_TRUE(bool(T)) << toString(T.takeError());
  ASSERT_EQ(T->size(), 2u);
  EXPECT_EQ((*T)[0].Name, "warp shuffles");
  EXPECT_EQ((*T)[0].Idea, "a warp per block");
  EXPECT_EQ((*T)[1].Name, "tree");
  auto Long = parseThoughts(R"({"strategies": [{"name": ")" +
                                std::string(500, 'n') + R"(", "idea": "x"}]})",
                            3);
  ASSERT_TRUE(bool(Long));
  EXPECT_EQ(Long->front().Name.size(), 80u);
}

TEST(ThoughtsTest, BrokenStrategyRepliesAreErrors) {
  for (StringRef Bad :
       {"", "not json", "[]", R"({"strategies": 3})", R"({"strategies": []})",
        R"({"strategies": [{"name": ""}]})"}) {
    auto T = parseThoughts(Bad, 3);
    EXPECT_FALSE(bool(T)) << Bad.str();
    if (!T)
      consumeError(T.takeError());
  }
}

TEST(ThoughtsTest, ProgramRepliesBecomeKernelCode) {
  Spec S = sumSpec();
  auto C = parseProgramReply(
      R"({"kernels": "__global__ void k() {}", "launch": "k<<<1, 1>>>();", "notes": ""})",
      S, {"one block", "idea"});
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Kernels, "__global__ void k() {}\n");
  EXPECT_EQ(C->Launch, "k<<<1, 1>>>();\n");
  EXPECT_TRUE(StringRef(C->Title).ends_with(" (one block)")) << C->Title;
  for (StringRef Bad :
       {R"({"kernels": "k"})", R"({"kernels": 1, "launch": ""})", "[1]", "{"}) {
    auto B = parseProgramReply(Bad, S, {"x", "y"});
    EXPECT_FALSE(bool(B)) << Bad.str();
    if (!B)
      consumeError(B.takeError());
  }
}

TEST(ThoughtsTest, TheSpecShownToTheModelHasWhatItNeeds) {
  std::string D = describeSpecForModel(sumSpec());
  EXPECT_NE(D.find("Request: sum of x"), std::string::npos) << D;
  EXPECT_NE(D.find("Input  x: float [n]"), std::string::npos) << D;
  EXPECT_NE(D.find("Output s: float scalar"), std::string::npos) << D;
  EXPECT_NE(D.find("Sizes: n=1000"), std::string::npos) << D;
  EXPECT_NE(D.find("void reference(const float *x, float *s, int n)"),
            std::string::npos)
      << D;
}

} // namespace
} // namespace synth
} // namespace optiml
