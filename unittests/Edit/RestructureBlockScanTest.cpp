//===- RestructureBlockScanTest.cpp - block-scan --------------------------===//
//
// The inputs are the lit tests' own programs: test/edit/block-scan-styles.cu
// (ten scans written in different styles, parsed with the CUDA SDK) and
// test/edit/block-scan-not.cu (look-alikes, hermetic).
//
//===----------------------------------------------------------------------===//

#include "RestructureTesting.h"
#include <regex>

using namespace optiml;
using namespace optiml::restructure_testing;

namespace {

const Transform &blockScan() {
  static auto T = createBlockScanTransform();
  return *T;
}

std::string stylesPath() {
  return sourceDir() + "/test/edit/block-scan-styles.cu";
}
std::string lookAlikesPath() {
  return sourceDir() + "/test/edit/block-scan-not.cu";
}

bool haveSdk() {
  return llvm::sys::fs::exists(sdkConfig().Tools.CudaPath +
                               "/include/cuda_runtime.h");
}

TEST(RestructureBlockScanTest, EveryStyleIsRecognized) {
  if (!haveSdk())
    GTEST_SKIP() << "no CUDA SDK";
  Input In(stylesPath(), sdkConfig());
  ASSERT_TRUE(In.Ctx);
  const std::pair<const char *, const char *> Want[] = {
      {"dbuf", "'buf' over 'off' (10 barrier steps at blocks of 1024, "
               "double-buffered)"},
      {"temp", "'s' over 'off' (8 barrier steps at blocks of 256)"},
      {"ternary", "'b' over 'd' (7 barrier steps at blocks of 128, "
                  "double-buffered)"},
      {"xor_flip", "'buf' over 'o' (9 barrier steps at blocks of 512, "
                   "double-buffered)"},
      {"not_flip", "'w' over 'k' (8 barrier steps at blocks of 256, "
                   "double-buffered)"},
      {"ns::rows", "'sh' over 'off' (8 barrier steps at blocks of 256)"},
      {"local_dim3", "'acc' over 'stride' (6 barrier steps at blocks of 64)"},
      {"exclusive", "'tmp' over 'off' (8 barrier steps at blocks of 256)"},
      {"swapped", "'ping' over 'd' (8 barrier steps at blocks of 256, "
                  "pointers 'src' and 'dst' swapped)"},
      {"halves", "'smem' over 'offset' (8 barrier steps at blocks of 256, "
                 "double-buffered in two halves)"}};
  for (const auto &[Kernel, Why] : Want) {
    Applicability A = blockScan().prepare(*In.Ctx, Kernel);
    EXPECT_TRUE(A.Applies) << Kernel << ": " << A.Reason;
    EXPECT_EQ(A.Reason, std::string("prefix sum of ") + Why +
                            "; rewrite: shuffle scans in each warp and one "
                            "exchange of the warps' totals");
    // Items 4 where every launch's block is a multiple of 128.
    ASSERT_EQ(A.Suggestions.size(),
              std::string(Kernel) == "local_dim3" ? 1u : 2u)
        << Kernel;
    EXPECT_EQ(A.Suggestions[0].Kind, "block-scan");
    EXPECT_FALSE(A.Suggestions[0].getInt("items").has_value());
    if (A.Suggestions.size() == 2)
      EXPECT_EQ(A.Suggestions[1].getInt("items"), int64_t(4)) << Kernel;
  }
}

TEST(RestructureBlockScanTest, ItemsRunEachOriginalThreadsCode) {
  if (!haveSdk())
    GTEST_SKIP() << "no CUDA SDK";
  std::string Out =
      applyToFile(blockScan(), stylesPath(),
                  makeEdit("block-scan", "exclusive", {{"items", int64_t(4)}}),
                  sdkConfig());
  ASSERT_EQ(Out.find("error: "), std::string::npos) << Out;
  // The code after the scan returns: each element's run is a lambda.
  EXPECT_NE(Out.find("    [&]() {\n"
                     "      int tid = vt;\n"
                     "      int i = blockIdx.x * 256 + tid;\n"
                     "      if (i >= n)\n"
                     "        return;\n"),
            std::string::npos)
      << Out;
  // Each thread's own 4 consecutive elements.
  EXPECT_NE(Out.find("const unsigned vt = threadIdx.x * 4 + j;"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("exclusive<<<(n + 255) / 256, 256 / 4>>>"),
            std::string::npos)
      << Out;
  std::string Refused =
      applyToFile(blockScan(), stylesPath(),
                  makeEdit("block-scan", "local_dim3", {{"items", int64_t(4)}}),
                  sdkConfig());
  EXPECT_NE(Refused.find("uses blocks of 64 threads; 4 elements a thread "
                         "need a multiple of 128"),
            std::string::npos)
      << Refused;
  std::string Odd = applyToFile(
      blockScan(), stylesPath(),
      makeEdit("block-scan", "dbuf", {{"items", int64_t(3)}}), sdkConfig());
  EXPECT_NE(Odd.find("items must be 1, 2, 4 or 8"), std::string::npos) << Odd;
}

TEST(RestructureBlockScanTest, RewriteKeepsTheStoreAndTheCodeAfter) {
  if (!haveSdk())
    GTEST_SKIP() << "no CUDA SDK";
  std::string Out = applyToFile(blockScan(), stylesPath(),
                                makeEdit("block-scan", "dbuf"), sdkConfig());
  ASSERT_EQ(Out.find("error: "), std::string::npos) << Out;
  // The file's comments mention the rewrite's names, so fresh names get a
  // number (scan_v1); the numbers are dropped before comparing. The suite's
  // scan is compared byte for byte in RestructureBenchTest.
  size_t Begin = Out.find("__global__ void dbuf(");
  size_t End = Out.find("\n}\n", Begin);
  ASSERT_NE(End, std::string::npos);
  std::string Dbuf =
      std::regex_replace(Out.substr(Begin, End + 3 - Begin),
                         std::regex("\\b(scan_[a-z_]*[a-z])[0-9]+\\b"), "$1");
  const char *Want = R"(__global__ void dbuf(const int *in, int *out, int n) {
  __shared__ int buf[2][BS];
  int tid = threadIdx.x;
  int i = blockIdx.x * BS + tid;
  int cur = 0;
  {
    int scan_v = i < n ? in[i] : 0;
    const unsigned scan_lane = threadIdx.x % 32, scan_warp = threadIdx.x / 32;
    for (unsigned scan_d = 1; scan_d < 32; scan_d <<= 1) {
      int scan_y = __shfl_up_sync(0xffffffffu, scan_v, scan_d);
      if (scan_lane >= scan_d)
        scan_v += scan_y;
    }
    __shared__ int scan_warp_sums[32];
    if (scan_lane == 31)
      scan_warp_sums[scan_warp] = scan_v;
    __syncthreads();
    if (scan_warp == 0) {
      int scan_s = scan_lane < blockDim.x / 32 ? scan_warp_sums[scan_lane] : static_cast<int>(0);
      for (unsigned scan_d = 1; scan_d < 32; scan_d <<= 1) {
        int scan_y = __shfl_up_sync(0xffffffffu, scan_s, scan_d);
        if (scan_lane >= scan_d)
          scan_s += scan_y;
      }
      scan_warp_sums[scan_lane] = scan_s;
    }
    __syncthreads();
    if (scan_warp > 0)
      scan_v += scan_warp_sums[scan_warp - 1];
    buf[cur][tid] = scan_v;
  }
  __syncthreads();
  if (i < n)
    out[i] = buf[cur][tid];
}
)";
  EXPECT_EQ(Dbuf, Want);
  EXPECT_EQ(Dbuf.find("off"), std::string::npos) << Dbuf;
  // Only dbuf changed: the other kernels keep their loops.
  EXPECT_NE(Out.find("for (int o = 1; o < 512; o = 2 * o)"), std::string::npos);
}

// Pointer swap: the store into the first array and every read through the
// pointer the loop left at the result are kept; with the loop gone that
// pointer still names the first array, which now holds the scan. The other
// pointer and the array it started at are no longer declared.
TEST(RestructureBlockScanTest, PointerSwapKeepsTheReadsThroughSrc) {
  if (!haveSdk())
    GTEST_SKIP() << "no CUDA SDK";
  std::string Out = applyToFile(blockScan(), stylesPath(),
                                makeEdit("block-scan", "swapped"), sdkConfig());
  ASSERT_EQ(Out.find("error: "), std::string::npos) << Out;
  size_t Begin = Out.find("__global__ void swapped(");
  size_t End = Out.find("\n}\n", Begin);
  ASSERT_NE(End, std::string::npos);
  std::string K =
      std::regex_replace(Out.substr(Begin, End + 3 - Begin),
                         std::regex("\\b(scan_[a-z_]*[a-z])[0-9]+\\b"), "$1");
  // `dst` and `pong`, which only the loop named, go with it.
  EXPECT_NE(K.find("  __shared__ float ping[B];\n  float *src = ping;\n  const "
                   "int t = threadIdx.x;\n  {\n    float scan_v = "
                   "in[blockIdx.x * B + t];\n"),
            std::string::npos)
      << K;
  EXPECT_NE(K.find("    ping[t] = scan_v;\n  }\n  __syncthreads();\n  "
                   "out[blockIdx.x * B + t] = src[t];\n  if (t == 0)\n    "
                   "last[blockIdx.x] = src[B - 1];\n}\n"),
            std::string::npos)
      << K;
  EXPECT_EQ(K.find("tmp"), std::string::npos) << K;
  EXPECT_EQ(K.find("for (int d"), std::string::npos) << K;
}

// Two halves of one array: the store into the half `pout` names before
// the loop is kept; with the loop gone `pout` still names that half when
// the code after it reads `smem[pout * len + thid]`.
TEST(RestructureBlockScanTest, HalvesKeepTheStoreIntoTheFirstHalf) {
  if (!haveSdk())
    GTEST_SKIP() << "no CUDA SDK";
  std::string Out = applyToFile(blockScan(), stylesPath(),
                                makeEdit("block-scan", "halves"), sdkConfig());
  ASSERT_EQ(Out.find("error: "), std::string::npos) << Out;
  size_t Begin = Out.find("__global__ void halves(");
  size_t End = Out.find("\n}\n", Begin);
  ASSERT_NE(End, std::string::npos);
  std::string K =
      std::regex_replace(Out.substr(Begin, End + 3 - Begin),
                         std::regex("\\b(scan_[a-z_]*[a-z])[0-9]+\\b"), "$1");
  // `pin`, read by the loop only, is no longer declared.
  EXPECT_NE(K.find("  int pout = 0;\n  {\n    int scan_v = gid < n ? "
                   "in[gid] : 0;\n"),
            std::string::npos)
      << K;
  EXPECT_EQ(K.find("pin"), std::string::npos) << K;
  EXPECT_NE(K.find("    smem[pout * len + thid] = scan_v;\n  }\n  "
                   "__syncthreads();\n  if (gid < n)\n    out[gid] = "
                   "smem[pout * len + thid];\n}\n"),
            std::string::npos)
      << K;
  EXPECT_EQ(K.find("offset"), std::string::npos) << K;
}

// GPU Gems 3's `pin` goes with the loop in whichever declarator it is,
// and stays where something the rewrite keeps reads it.
TEST(RestructureBlockScanTest, HalvesDropPinOnlyWhereNothingElseReadsIt) {
  auto Kernel = [](const char *Name, const char *Decl, const char *Before,
                   const char *Value) {
    return std::string("__global__ void ") + Name + R"((int *data) {
  extern __shared__ int temp[];
  const int thid = threadIdx.x;
  const int len = blockDim.x;
  )" + Decl +
           "\n  " + Before + "temp[pout * len + thid] = " + Value + R"(;
  __syncthreads();
  for (int offset = 1; offset < len; offset *= 2) {
    pout = 1 - pout;
    pin = 1 - pout;
    if (thid >= offset)
      temp[pout * len + thid] =
          temp[pin * len + thid] + temp[pin * len + thid - offset];
    else
      temp[pout * len + thid] = temp[pin * len + thid];
    __syncthreads();
  }
  data[thid] = temp[pout * len + thid];
}
)";
  };
  std::string Code =
      "#include \"cuda_mock.h\"\n" +
      Kernel("first", "int pin = 1, pout = 0;", "", "data[thid]") +
      Kernel("alone", "int pout = 0;\n  int pin = 1;", "", "data[thid]") +
      Kernel("middle", "int pout = 0, pin = 1, k = 2;", "", "data[thid] * k") +
      Kernel("before", "int pout = 0, pin = 1;", "data[len + thid] = pin;\n  ",
             "data[thid]") +
      Kernel("stored", "int pout = 0, pin = 1;", "", "data[thid] + pin") +
      "int main() {\n  int *d = nullptr;\n"
      "  first<<<1, 256, 2 * 256 * sizeof(int)>>>(d);\n"
      "  alone<<<1, 256, 2 * 256 * sizeof(int)>>>(d);\n"
      "  middle<<<1, 256, 2 * 256 * sizeof(int)>>>(d);\n"
      "  before<<<1, 256, 2 * 256 * sizeof(int)>>>(d);\n"
      "  stored<<<1, 256, 2 * 256 * sizeof(int)>>>(d);\n}\n";
  // The mock header has no shuffles: the text only, not parsed again.
  auto Rewritten = [&](const char *Name) -> std::string {
    Input In(Code, "pin.cu", hermeticConfig());
    auto R = blockScan().apply(*In.Ctx, makeEdit("block-scan", Name));
    if (!R)
      return "error: " + llvm::toString(R.takeError());
    auto Applied = clang::tooling::applyAllReplacements(In.Code, *R);
    if (!Applied)
      return "error: " + llvm::toString(Applied.takeError());
    std::string Out = *Applied;
    size_t Begin = Out.find(std::string("void ") + Name + "(");
    return Begin == std::string::npos
               ? Out
               : Out.substr(Begin, Out.find("\n}\n", Begin) - Begin);
  };
  std::string K = Rewritten("first");
  EXPECT_NE(K.find("len = blockDim.x;\n  int pout = 0;\n  {\n"),
            std::string::npos)
      << K;
  EXPECT_EQ(K.find("pin"), std::string::npos) << K;
  K = Rewritten("alone");
  EXPECT_NE(K.find("len = blockDim.x;\n  int pout = 0;\n  {\n"),
            std::string::npos)
      << K;
  EXPECT_EQ(K.find("pin"), std::string::npos) << K;
  K = Rewritten("middle");
  EXPECT_NE(K.find("  int pout = 0, k = 2;\n  {\n"), std::string::npos) << K;
  EXPECT_EQ(K.find("pin"), std::string::npos) << K;
  // Read before the store, or by the stored value: kept.
  K = Rewritten("before");
  EXPECT_NE(K.find("  int pout = 0, pin = 1;\n  data[len + thid] = pin;\n"),
            std::string::npos)
      << K;
  K = Rewritten("stored");
  EXPECT_NE(K.find("  int pout = 0, pin = 1;\n  {\n"), std::string::npos) << K;
  EXPECT_NE(K.find("= data[thid] + pin;"), std::string::npos) << K;
}

TEST(RestructureBlockScanTest, LookAlikesAreRefused) {
  auto E = [](const char *K) { return makeEdit("block-scan", K); };
  const std::pair<const char *, const char *> Cases[] = {
      {"minus", "does not leave own + left in the current buffer"},
      {"racy", "reads a neighbour's element while threads write that buffer"},
      {"tree", "has no loop 'for (off = 1; off < n; off *= 2)'"},
      {"odd_block", "blocks of 100 threads; the shuffles need a multiple "
                    "of 32"},
      {"partial", "the loop scans only the first 128"},
      {"early", "may leave before the scan"},
      {"no_barrier", "has no barrier between one step and the next"},
      {"other_buffer", "'buf[1 - cur][tid]' reads a buffer other than the "
                       "current one"},
      {"shorts", "the scanned elements are 'short'"},
      {"two_away", "does not leave own + left in the current buffer"},
      {"skipped_swap", "the step's condition 'off != 4' is not 'tid >= "
                       "offset'"},
      {"reads_written", "does not leave own + left in the current buffer"},
      {"wrong_final", "'dst' at 230:15 is used after the loop other than to "
                      "read an element through 'src'"},
      {"half_swap", "moves the pointer 'src' but no second one"},
      {"bad_swap", "at the end of a step 'dst' does not name the buffer "
                   "'src' does not"},
      {"named_array", "the step names 'ping' directly"},
      {"alias_before", "'q' at 295:3 points into 'buf'; reads and writes "
                       "through it are not followed"},
      {"alias_addr", "'q' at 317:3 points into 'temp'"},
      {"alias_after", "'buf' at 349:12 is used after the loop other than to "
                      "read an element of the current buffer"},
      {"halves_other", "'temp[pin * len + thid]' reads a part of 'temp' "
                       "other than the current half 'pout * len + i'"},
      {"halves_len", "'temp' is split in halves of 128; a half must be the "
                     "block"},
      {"halves_unflipped", "the half 'pin' is not the current buffer or the "
                           "other one"},
      {"halves_past", "'temp[pout * len + thid + len]' reads another element "
                      "than the thread's own of the current half"}};
  Input In(lookAlikesPath(), hermeticConfig());
  ASSERT_TRUE(In.Ctx);
  for (const auto &[Kernel, Why] : Cases) {
    auto R = blockScan().apply(*In.Ctx, E(Kernel));
    ASSERT_FALSE(bool(R)) << Kernel << " was rewritten";
    std::string Msg = rejectionReason(R.takeError());
    EXPECT_NE(Msg.find(Why), std::string::npos) << Kernel << ": " << Msg;
    Applicability A = blockScan().prepare(*In.Ctx, Kernel);
    EXPECT_FALSE(A.Applies) << Kernel;
    EXPECT_EQ(A.Reason, Msg);
  }
}

} // namespace
