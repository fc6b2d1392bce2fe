//===- RestructureBenchTest.cpp - The restructuring edits on the suite ---===//
//
// Applies one catalog edit to each naive benchmark program the restructuring
// transforms target and compares the result with the recorded
// bench/results/restructure/<name>/optimized.cu (the only other change: the
// BENCH line's variant label). Parses with the real CUDA headers, so it is
// skipped where the SDK is missing.
//
//===----------------------------------------------------------------------===//

#include "RestructureTesting.h"

using namespace optiml;
using namespace optiml::restructure_testing;

namespace {

struct BenchCase {
  const char *Name;
  Edit E;
};

std::vector<BenchCase> benchCases() {
  return {
      // Rows of 4096 floats: a block per row, 16 registers per thread, so
      // the row is read from memory once.
      {"softmax", makeEdit("warp-per-row", "softmax",
                           {{"per", std::string("block")},
                            {"block_size", int64_t(256)},
                            {"registers", true}})},
      {"layernorm", makeEdit("warp-per-row", "layernorm",
                             {{"per", std::string("block")},
                              {"block_size", int64_t(256)},
                              {"registers", true}})},
      // 8 to 24 nonzeros per row: CSR-stream, 64 rows per block of 256
      // threads computing the rows' terms together.
      {"spmv_csr", makeEdit("warp-per-row", "spmv",
                            {{"per", std::string("stream")},
                             {"lanes", int64_t(4)},
                             {"block_size", int64_t(256)}})},
      {"gemv", makeEdit("warp-per-row", "gemv")},
      // One column per lane (no bank conflicts), 16-byte loads; 512
      // threads and 32 KB of copies per block, 4 blocks on each of the
      // H200's 132 SMs: one wave.
      {"histogram", makeEdit("privatize-atomics", "histogram",
                             {{"copies", std::string("lane")},
                              {"vector_bytes", int64_t(16)},
                              {"block_size", int64_t(512)},
                              {"max_blocks", int64_t(528)}})},
      {"transpose", makeEdit("transpose-through-shared", "transpose")},
      // 1024-thread blocks: ten barrier steps become two.
      {"scan", makeEdit("block-scan", "scan_block")},
      // Block-sized products: 8 rows per thread (shared-tiling rows).
      {"batched_gemm_small",
       makeEdit("shared-tiling", "batched_gemm", {{"rows", int64_t(8)}})},
      // A 2D convolution: its filter in constant memory (1.47x on the
      // H200; rows on it ran slower, run 2026-12-03-constant-memory).
      {"conv2d",
       makeEdit("constant-memory", "conv2d", {{"param", std::string("filt")}})},
      // The 3D 7-point stencil: four outputs per thread along x, each input
      // row read as float4s.
      {"stencil3d7", makeEdit("vectorize-stencil", "stencil")},
      {"jacobi2d", makeEdit("vectorize-stencil", "jacobi")},
  };
}

class RestructureBenchTest : public ::testing::TestWithParam<BenchCase> {};

TEST_P(RestructureBenchTest, MatchesRecordedOutput) {
  const BenchCase &C = GetParam();
  if (!llvm::sys::fs::exists(sdkConfig().Tools.CudaPath +
                             "/include/cuda_runtime.h"))
    GTEST_SKIP() << "no CUDA SDK";
  std::string Naive =
      sourceDir() + "/bench/kernels/" + std::string(C.Name) + "/naive.cu";
  static const std::map<std::string, std::unique_ptr<Transform>> Catalog = [] {
    std::map<std::string, std::unique_ptr<Transform>> M;
    for (auto Make :
         {createWarpPerRowTransform, createPrivatizeAtomicsTransform,
          createTransposeThroughSharedTransform, createBlockScanTransform,
          createSharedTilingTransform, createConstantMemoryTransform,
          createVectorizeStencilTransform}) {
      auto T = Make();
      std::string Kind = T->kind().str();
      M[Kind] = std::move(T);
    }
    return M;
  }();
  auto It = Catalog.find(C.E.Kind);
  ASSERT_NE(It, Catalog.end());
  const Transform *T = It->second.get();
  std::string Got = applyToFile(*T, Naive, C.E, sdkConfig());
  ASSERT_EQ(Got.find("error: "), std::string::npos) << Got;
  std::string From = "\"" + std::string(C.Name) + "\", \"naive\"";
  size_t At = Got.find(From);
  ASSERT_NE(At, std::string::npos);
  Got.replace(At, From.size(),
              "\"" + std::string(C.Name) + "\", \"optimized\"");
  std::string Dir =
      sourceDir() + "/bench/results/restructure/" + std::string(C.Name);
  if (getenv("OPTIML_UPDATE_EXPECTED")) {
    llvm::sys::fs::create_directories(Dir);
    std::error_code EC;
    llvm::raw_fd_ostream OS(Dir + "/optimized.cu", EC);
    OS << Got;
  }
  EXPECT_EQ(Got, readFile(Dir + "/optimized.cu"));
}

INSTANTIATE_TEST_SUITE_P(Suite, RestructureBenchTest,
                         ::testing::ValuesIn(benchCases()),
                         [](const ::testing::TestParamInfo<BenchCase> &I) {
                           return std::string(I.param.Name);
                         });

} // namespace
