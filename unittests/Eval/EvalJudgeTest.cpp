#include "EvaluatorInternal.h"
#include "optiml/Eval/ProbeProtocol.h"
#include "optiml/Frontend/KernelModel.h"
#include "gtest/gtest.h"

using namespace optiml;

namespace {

BufferCheck check(unsigned Param, unsigned Word, unsigned Element) {
  BufferCheck B;
  B.Param = Param;
  B.Word = Word;
  B.Element = Element;
  return B;
}

} // namespace

TEST(EvalJudgeTest, BuffersAreNamedByHowTheyWereReached) {
  // k(float *out, Pair p, const float *const *a, const Mats *m), where
  // struct Mats { const float *a, *b; float *c; }.
  KernelModel M;
  KernelInfo KI;
  KI.Name = KI.QualifiedName = "k";
  for (const char *Name : {"out", "p", "a", "m"}) {
    ParamInfo P;
    P.Index = static_cast<unsigned>(KI.Params.size());
    P.Name = Name;
    KI.Params.push_back(P);
  }
  M.Kernels.push_back(KI);
  ProbeKernel K;
  K.Name = "k";
  ProbeParam Out, Pair, Array, Structs;
  Out.Index = 0;
  Out.Pointer = true;
  Out.ElementType = "float";
  Pair.Index = 1;
  Pair.ElementType = "Pair";
  Array.Index = 2;
  Array.Pointer = Array.PointerArray = true;
  Array.ElementType = "const float *";
  Structs.Index = 3;
  Structs.Pointer = Structs.PointerArray = true;
  Structs.ElementType = "Mats";
  Structs.ElementSize = 24;
  Structs.PointerFields = {{0, "a", "float", 4, true},
                           {8, "b", "float", 4, true},
                           {16, "c", "float", 4, true}};
  K.Params = {Out, Pair, Array, Structs};

  EXPECT_EQ(bufferName(&M, &K, check(0, 0, 0)), "'out' (parameter 0, float)");
  EXPECT_EQ(bufferName(&M, &K, check(1, 1, 0)),
            "'p' (parameter 1, Pair) word 1");
  EXPECT_EQ(bufferName(&M, &K, check(2, 0, 4)),
            "'a' (parameter 2, const float *), the buffer its element 3 "
            "points into");
  // Followed pointer 3 * 3 + 2 (+ 1): struct 3's member 'c'.
  EXPECT_EQ(bufferName(&M, &K, check(3, 0, 12)),
            "'m' (parameter 3, Mats), the buffer its element 3's 'c' points "
            "into");
  EXPECT_EQ(bufferName(&M, &K, check(3, 0, 1)),
            "'m' (parameter 3, Mats), the buffer its element 0's 'a' points "
            "into");
  // Without the model, the parameter by number.
  EXPECT_EQ(bufferName(nullptr, &K, check(3, 0, 0)), "parameter 3, Mats");
}
