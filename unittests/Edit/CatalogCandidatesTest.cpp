//===- CatalogCandidatesTest.cpp - What listCandidates offers ------------===//
//
// listCandidates offers a suggestion only when its rewrite passes the
// checks that new code's tokens get (a suggestion the checks would refuse
// is never offered), and says why when none is left.
//
//===----------------------------------------------------------------------===//

#include "CatalogTesting.h"
#include "optiml/Edit/Transform.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Candidate *candidate(const std::vector<Candidate> &Cs,
                           llvm::StringRef Kind, llvm::StringRef Target) {
  for (const Candidate &C : Cs)
    if (C.T->kind() == Kind && C.Target == Target)
      return &C;
  return nullptr;
}

const char *const TwoMaps =
    R"(extern "C" __device__ int printf(const char *, ...);
__global__ void check(const float *res, const float *want, int n) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < n) {
    float diff = res[idx] - want[idx];
    if (diff > 0.5f || diff < -0.5f)
      printf("%d\n", idx);
  }
}
__global__ void scale(const float *x, float *y, int n) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < n)
    y[idx] = 2.0f * x[idx];
}
void run(const float *r, const float *w, float *y, int n) {
  check<<<(n + 255) / 256, 256>>>(r, w, n);
  scale<<<(n + 255) / 256, 256>>>(r, y, n);
}
)";

TEST(CatalogCandidatesTest, NoSuggestionWhoseCopyAddsAForbiddenCall) {
  Input In(TwoMaps);
  ASSERT_TRUE(In.Ctx);
  const KernelInfo *Check = In.Model.findKernel("check");
  ASSERT_TRUE(Check);
  std::vector<Candidate> Cs = listCandidates(*In.Ctx, *Check);
  const Candidate *V = candidate(Cs, "vectorize", "check");
  ASSERT_TRUE(V);
  EXPECT_FALSE(V->A.Applies);
  EXPECT_TRUE(V->A.Suggestions.empty());
  EXPECT_NE(V->A.Reason.find("the checks would refuse its rewrite: the new "
                             "code calls printf"),
            std::string::npos)
      << V->A.Reason;
  // A transform that does not copy the printf is still offered there.
  const Candidate *R = candidate(Cs, "read-only-cache", "check");
  ASSERT_TRUE(R);
  EXPECT_TRUE(R->A.Applies) << R->A.Reason;
}

TEST(CatalogCandidatesTest, TheSameMapWithoutTheCallKeepsItsSuggestions) {
  Input In(TwoMaps);
  ASSERT_TRUE(In.Ctx);
  const KernelInfo *Scale = In.Model.findKernel("scale");
  ASSERT_TRUE(Scale);
  std::vector<Candidate> Cs = listCandidates(*In.Ctx, *Scale);
  const Candidate *V = candidate(Cs, "vectorize", "scale");
  ASSERT_TRUE(V);
  EXPECT_TRUE(V->A.Applies) << V->A.Reason;
  EXPECT_EQ(V->A.Suggestions.size(), 2u);
}

} // namespace
