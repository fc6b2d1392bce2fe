#include "optiml/Search/CatalogPolicy.h"
#include "gtest/gtest.h"

using namespace optiml;

namespace {

KernelInfo transposeLike() {
  KernelInfo K;
  K.QualifiedName = "transpose";
  K.Class = KernelClass::Map;
  MemoryAccess Read, Write;
  Read.Space = Write.Space = AddressSpace::Global;
  Read.IsRead = true;
  Read.Pattern = Coalescing::Unit;
  Write.IsWrite = true;
  Write.Pattern = Coalescing::Strided;
  K.Accesses = {Read, Write};
  return K;
}

TEST(CatalogPriorTest, UncoalescedAccessesFavourStagingThroughShared) {
  KernelInfo K = transposeLike();
  std::string Why;
  double Transpose =
      catalogPrior("transpose-through-shared", K, "memory-bound", -1, &Why);
  EXPECT_NE(Why.find("uncoalesced"), std::string::npos);
  for (const char *Other : {"restrict-const", "read-only-cache", "vectorize",
                            "grid-stride", "unroll", "compile-flags"})
    EXPECT_GT(Transpose, catalogPrior(Other, K, "memory-bound", -1, nullptr))
        << Other;
}

TEST(CatalogPriorTest, RowReductionsFavourWarpPerRow) {
  KernelInfo K;
  K.Class = KernelClass::Reduction;
  double Row = catalogPrior("warp-per-row", K, "memory-bound", -1, nullptr);
  EXPECT_GT(Row,
            catalogPrior("restrict-const", K, "memory-bound", -1, nullptr));
  EXPECT_GT(Row, catalogPrior("unroll", K, "memory-bound", -1, nullptr));
  // Without the evidence, no boost.
  K.Class = KernelClass::Map;
  EXPECT_LT(catalogPrior("warp-per-row", K, "memory-bound", -1, nullptr), Row);
}

TEST(CatalogPriorTest, AtomicsFavourPrivatization) {
  KernelInfo K;
  K.Class = KernelClass::GatherScatter;
  K.Atomics.push_back(CallSite{"atomicAdd", {}, ""});
  EXPECT_GT(catalogPrior("privatize-atomics", K, "latency-bound", 20, nullptr),
            catalogPrior("launch-config", K, "latency-bound", 20, nullptr));
}

} // namespace
