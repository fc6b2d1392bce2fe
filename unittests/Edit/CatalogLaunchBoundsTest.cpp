#include "CatalogTesting.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &launchBounds() {
  static auto T = createLaunchBoundsTransform();
  return *T;
}

const char *Kernel = "__global__ void k(float *p) { p[threadIdx.x] = 1; }\n"
                     "template <class F> void timed(F f) { f(); }\n";

TEST(CatalogLaunchBoundsTest, BlockSizesThroughLocals) {
  // Each launch's block size is a constant once its locals are followed:
  // the largest is the one offered.
  std::string Src = std::string(Kernel) + R"(void run(float *p, int n) {
  int threads = 2 * 64, blocks = (n + threads - 1) / threads;
  timed([&] { k<<<blocks, threads>>>(p); });
  const int wide = 4;
  dim3 b(threads, wide);
  k<<<1, b>>>(p);
}
)";
  Applicability A = prepareOn(launchBounds(), Src, "k");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("at most 512 threads"), std::string::npos)
      << A.Reason;
  ASSERT_FALSE(A.Suggestions.empty());
  EXPECT_EQ(A.Suggestions.front().getInt("max_threads"), 512);
  // A bound below a launch's block is refused.
  std::string Out =
      applyTo(launchBounds(), Src,
              makeEdit("launch-bounds", "k", {{"max_threads", int64_t(256)}}));
  EXPECT_NE(Out.find("a launch uses 512 threads per block, more than "
                     "max_threads=256"),
            std::string::npos)
      << Out;
}

TEST(CatalogLaunchBoundsTest, LocalsThatChangeAreNotConstants) {
  const char *Bodies[] = {
      "  int t = 64;\n  t *= 2;\n  k<<<1, t>>>(p);\n",
      "  int t = 64;\n  timed([&] { t = 128; k<<<1, t>>>(p); });\n",
      "  int t = n;\n  k<<<1, t>>>(p);\n",
  };
  for (const char *B : Bodies) {
    std::string Src =
        std::string(Kernel) + "void run(float *p, int n) {\n" + B + "}\n";
    Applicability A = prepareOn(launchBounds(), Src, "k");
    EXPECT_FALSE(A.Applies) << B;
    EXPECT_NE(A.Reason.find("is not a constant"), std::string::npos)
        << B << A.Reason;
  }
}

} // namespace
