//===- RestructureWarpPerRowTest.cpp - warp-per-row ----------------------===//

#include "Patterns/SideEffects.h"
#include "RestructureTesting.h"
#include "clang/AST/RecursiveASTVisitor.h"

using namespace optiml;
using namespace optiml::restructure_testing;

namespace {

const Transform &warpPerRow() {
  static auto T = createWarpPerRowTransform();
  return *T;
}

TEST(RestructureWarpPerRowTest, SoftmaxThreePasses) {
  Applicability A = prepareOn(warpPerRow(), "warp-softmax", "softmax_rows");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason,
            "one thread per item 'row' (bound 'rows') with 3 inner loops: "
            "softmax_rows/loop0 (max of 'm') softmax_rows/loop1 (sum of 's') "
            "softmax_rows/loop2 (elementwise writes); rewrite: one warp per "
            "item, lanes stride the loops");
  expectRewrite(warpPerRow(), "warp-softmax",
                makeEdit("warp-per-row", "softmax_rows"));
}

TEST(RestructureWarpPerRowTest, CsrRowsEarlyReturnUnsigned) {
  expectRewrite(
      warpPerRow(), "warp-spmv",
      makeEdit("warp-per-row", "csr_mv", {{"block_size", int64_t(128)}}));
}

TEST(RestructureWarpPerRowTest, TemplateHelperIndexPointerOffset) {
  expectRewrite(warpPerRow(), "warp-gemv-template",
                makeEdit("warp-per-row", "gemv_t"));
}

TEST(RestructureWarpPerRowTest, BlockPerRowSeveralAccumulators) {
  expectRewrite(
      warpPerRow(), "warp-layernorm-block",
      makeEdit("warp-per-row", "norm_rows",
               {{"per", std::string("block")}, {"block_size", int64_t(128)}}));
}

TEST(RestructureWarpPerRowTest, NearMisses) {
  const Transform &T = warpPerRow();
  auto E = [](const char *K) { return makeEdit("warp-per-row", K); };
  expectRefusal(T, "warp-refuse", E("prefix"),
                "carries 'acc' from one element to the next");
  expectRefusal(T, "warp-refuse", E("every_other"), "does not step 'j' by one");
  expectRefusal(T, "warp-refuse", E("same_cell"),
                "writes 'y[row]', which does not depend on 'j'");
  expectRefusal(T, "warp-refuse", E("recurrence"),
                "a dependence between iterations");
  expectRefusal(T, "warp-refuse", E("first_negative"), "leaves early");
  expectRefusal(T, "warp-refuse", E("no_guard"), "not a bounds guard");
  expectRefusal(T, "warp-refuse", E("lane_aware"),
                "uses thread or block indices");
  expectRefusal(T, "warp-refuse", E("no_loop"), "no inner 'for' loop");
}

TEST(RestructureWarpPerRowTest, SelectionMaxMin) {
  const Transform &T = warpPerRow();
  auto E = [](const char *K) { return makeEdit("warp-per-row", K); };
  Applicability A = prepareOn(T, "warp-select", "row_max");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("(max of 'hi')"), std::string::npos) << A.Reason;
  A = prepareOn(T, "warp-select", "row_min");
  EXPECT_NE(A.Reason.find("(min of 'lo')"), std::string::npos) << A.Reason;
  A = prepareOn(T, "warp-select", "row_max_t");
  EXPECT_NE(A.Reason.find("(max of 'm')"), std::string::npos) << A.Reason;
  expectRefusal(T, "warp-select", E("pair_max"),
                "in pair_max<Pair> is not fmaxf or fmax on float or double");
  expectRefusal(T, "warp-select", E("max_and_count"), "carries 'hi'");
  expectRefusal(T, "warp-select", E("max_or_zero"), "carries 'hi'");
  expectRefusal(T, "warp-select", E("max_truncated"), "carries 'hi'");
}

// The item index read by its meaning (a template's cast, a 2D grid counted
// row by row) and a bound that is a member of a struct passed by value.
TEST(RestructureWarpPerRowTest, OtherIndexSpellingsAndStructBounds) {
  const Transform &T = warpPerRow();
  auto E = [](const char *K) { return makeEdit("warp-per-row", K); };
  Applicability A = prepareOn(T, "warp-while", "grid_rows");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("(bound 'rows')"), std::string::npos) << A.Reason;
  A = prepareOn(T, "warp-while", "struct_rows");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("(bound 'm.n')"), std::string::npos) << A.Reason;
  expectRefusal(T, "warp-while", E("grid_cols"), "no thread index");
  expectRefusal(T, "warp-while", E("narrow_rows"), "at least 32 bits");
  expectRefusal(T, "warp-while", E("struct_call"),
                "passes 'rows_of(a, n, c)', not a variable of its type");
  expectRefusal(T, "warp-while", E("struct_written"),
                "does more with 'm' than read its members");
  expectRefusal(T, "warp-while", E("short_rows"),
                "launch short_rows/launch0 is not shown to run a thread for "
                "every item below the guard's bound 'n'");
  expectRefusal(T, "warp-while", E("struct_grown"),
                "launch struct_grown/launch0 is not shown to run a thread for "
                "every item below the guard's bound 'm.n'");
}

// Online softmax over a max kept by a selection; a sum pass that also
// stashes the exponentials is fused and keeps its stores; look-alikes are
// not.
TEST(RestructureWarpPerRowTest, OnlineSelectionAndStash) {
  const Transform &T = warpPerRow();
  auto Online = [](const char *K) {
    return makeEdit("warp-per-row", K, {{"online", true}});
  };
  Input In = caseInput("warp-online");
  ASSERT_TRUE(In.Ctx);
  auto R = T.apply(*In.Ctx, Online("softmax_select"));
  ASSERT_TRUE(bool(R)) << rejectionReason(R.takeError());
  auto Stash = T.apply(*In.Ctx, Online("softmax_stash"));
  ASSERT_TRUE(bool(Stash)) << rejectionReason(Stash.takeError());
  expectRefusal(T, "warp-online", Online("stash_scaled"),
                "params.online: the pass at 142:5 after the max pass at "
                "139:5 also writes memory, but does not add 'expf(e - mx)'");
  expectRefusal(T, "warp-online", Online("stash_zero_max"),
                "runs over another range than the max pass at 157:5 (a max "
                "pass may start one element later only when 'mx' starts "
                "from that element)");
}

TEST(RestructureWarpPerRowTest, BadParams) {
  expectRefusal(
      warpPerRow(), "warp-softmax",
      makeEdit("warp-per-row", "softmax_rows", {{"block_size", int64_t(100)}}),
      "multiple of 32");
}

std::string paramsOf(const Edit &E) {
  std::string Out;
  for (const auto &[K, V] : E.Params) {
    Out += Out.empty() ? "" : ",";
    Out += K + "=";
    if (const auto *I = std::get_if<int64_t>(&V))
      Out += std::to_string(*I);
    else if (const auto *B = std::get_if<bool>(&V))
      Out += *B ? "true" : "false";
    else if (const auto *S = std::get_if<std::string>(&V))
      Out += *S;
  }
  return Out;
}

std::vector<std::string> suggestions(const Applicability &A) {
  std::vector<std::string> Out;
  for (const Edit &E : A.Suggestions)
    Out.push_back(paramsOf(E));
  return Out;
}

// Row lengths known only at run time (CSR): the stream form with two terms
// per thread per chunk, then one, groups of 8 and of 4 lanes, a full warp
// and the block form; no registers.
TEST(RestructureWarpPerRowTest, SuggestsLanesForUnknownRows) {
  Applicability A = prepareOn(warpPerRow(), "warp-spmv", "csr_mv");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(
      suggestions(A),
      (std::vector<std::string>{
          "block_size=256,lanes=4,per=stream,terms=2",
          "block_size=256,lanes=4,per=stream",
          "block_size=256,lanes=8,per=warp", "block_size=256,lanes=4,per=warp",
          "block_size=256,lanes=32,per=warp", "block_size=256,per=block"}));
}

// per=stream on CSR rows whose bounds come through locals (`int begin =
// row_ptr[r];`) and an unsigned index: 64 rows per block of 256, the
// terms computed by every thread, the row's loop kept for blocks whose
// offsets decrease, one block per 64 rows at the launch.
TEST(RestructureWarpPerRowTest, StreamComputesABlocksTermsTogether) {
  Input In = caseInput("warp-spmv");
  ASSERT_TRUE(In.Ctx);
  std::string Out = applyTo(warpPerRow(), In,
                            makeEdit("warp-per-row", "csr_mv",
                                     {{"per", std::string("stream")},
                                      {"lanes", int64_t(4)},
                                      {"block_size", int64_t(256)}}),
                            hermeticConfig());
  for (const char *Want :
       {"unsigned r = blockIdx.x * 64 + threadIdx.x;",
        "__shared__ int rowOffsets[65];", "__shared__ float rowTerms[256];",
        "rowOffsets[i] = row_ptr[rowBase + i];",
        "rowTerms[threadIdx.x] = val[k] * x[col_idx[k]];",
        "dotStream += rowTerms[j - chunk];",
        "  if (threadIdx.x >= 64)\n    return;\n  if (r >= num_rows)",
        "  if (rowsInOrder) {\n    dot += dotStream;\n  } else {\n"
        "    for (int k = begin; k < end; k++)",
        "csr_mv<<<(n + 63) / 64, 256>>>"})
    EXPECT_NE(Out.find(Want), std::string::npos) << Want << "\n" << Out;
}

// A kernel under __launch_bounds__(128): every suggestion launches 128
// threads, and a larger block is refused (its launches would fail).
TEST(RestructureWarpPerRowTest, BlocksStayWithinLaunchBounds) {
  const char *Src = R"(#include "cuda_mock.h"
__global__ void __launch_bounds__(128)
csr(int n, const int *p, const float *v, float *y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    float sum = 0.f;
    for (int k = p[r]; k < p[r + 1]; ++k)
      sum += v[k];
    y[r] = sum;
  }
}
int main() {
  int n = 1000;
  int *p = 0;
  float *v = 0;
  csr<<<(n + 127) / 128, 128>>>(n, p, v, v);
}
)";
  Input In(Src, "bounds.cu", hermeticConfig());
  ASSERT_TRUE(In.Ctx);
  Applicability A = warpPerRow().prepare(*In.Ctx, "csr");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(
      suggestions(A),
      (std::vector<std::string>{
          "block_size=128,lanes=4,per=stream,terms=2",
          "block_size=128,lanes=4,per=stream",
          "block_size=128,lanes=8,per=warp", "block_size=128,lanes=4,per=warp",
          "block_size=128,lanes=32,per=warp", "block_size=128,per=block"}));
  auto R = warpPerRow().apply(
      *In.Ctx, makeEdit("warp-per-row", "csr", {{"block_size", int64_t(256)}}));
  ASSERT_FALSE(bool(R));
  EXPECT_NE(rejectionReason(R.takeError())
                .find("params.block_size 256 exceeds the kernel's "
                      "__launch_bounds__(128)"),
            std::string::npos);
}

// per=stream refuses what another thread could not compute for the row,
// or a chunked sum could not reproduce.
TEST(RestructureWarpPerRowTest, StreamRefusesWhatIsNotACsrSum) {
  const char *Src = R"(#include "cuda_mock.h"
__global__ void scaled(int n, const int *p, const float *v, const float *s,
                       float *y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    const float w = s[r];
    float sum = 0.f;
    for (int k = p[r]; k < p[r + 1]; ++k)
      sum += v[k] * w;
    y[r] = sum;
  }
}
__global__ void started(int n, const int *p, const float *v, float *y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    float sum = 1.f;
    for (int k = p[r]; k < p[r + 1]; ++k)
      sum += v[k];
    y[r] = sum;
  }
}
__global__ void inclusive(int n, const int *p, const float *v, float *y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    float sum = 0.f;
    for (int k = p[r]; k <= p[r + 1]; ++k)
      sum += v[k];
    y[r] = sum;
  }
}
__global__ void maxed(int n, const int *p, const float *v, float *y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    float m = 0.f;
    for (int k = p[r]; k < p[r + 1]; ++k)
      m = fmaxf(m, v[k]);
    y[r] = m;
  }
}
int main() {
  int n = 1000;
  int *p = 0;
  float *v = 0, *y = 0;
  scaled<<<(n + 255) / 256, 256>>>(n, p, v, v, y);
  started<<<(n + 255) / 256, 256>>>(n, p, v, y);
  inclusive<<<(n + 255) / 256, 256>>>(n, p, v, y);
  maxed<<<(n + 255) / 256, 256>>>(n, p, v, y);
}
)";
  Input In(Src, "stream.cu", hermeticConfig());
  ASSERT_TRUE(In.Ctx);
  auto Refusal = [&](const char *Kernel) {
    auto R =
        warpPerRow().apply(*In.Ctx, makeEdit("warp-per-row", Kernel,
                                             {{"per", std::string("stream")}}));
    if (R)
      return std::string("rewritten");
    return rejectionReason(R.takeError());
  };
  EXPECT_NE(Refusal("scaled").find("reads 'w', which the kernel writes or "
                                   "each thread holds"),
            std::string::npos)
      << Refusal("scaled");
  EXPECT_NE(Refusal("started").find("'sum' is not declared as zero"),
            std::string::npos)
      << Refusal("started");
  EXPECT_NE(Refusal("inclusive")
                .find("does not run from off[r] to below "
                      "off[r + 1]"),
            std::string::npos)
      << Refusal("inclusive");
  EXPECT_NE(Refusal("maxed").find("does not only sum one accumulator"),
            std::string::npos)
      << Refusal("maxed");
}

// per=stream in kernel templates: the types the pattern leaves open are
// checked in every instantiation (integer offsets, terms of the sum's own
// type) and written as the pattern names them; a counting while loop and
// a 2D grid of blocks are taken as for per=warp.
TEST(RestructureWarpPerRowTest, StreamChecksTemplatesInTheirInstantiations) {
  const char *Src = R"(#include "cuda_mock.h"
template <typename V, typename I>
__global__ void walk(I n, const I *p, const V *v, V *y) {
  const I r = (I)((blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x);
  if (r < n) {
    V dot = V(0);
    I k = p[r];
    while (k < p[r + 1]) {
      dot += v[k];
      ++k;
    }
    y[r] = dot;
  }
}
template <typename I>
__global__ void floaty(int n, const I *p, const float *v, float *y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    float sum = 0.f;
    for (int k = p[r]; k < p[r + 1]; ++k)
      sum += v[k];
    y[r] = sum;
  }
}
template <typename V>
__global__ void unused(int n, const int *p, const V *v, V *y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    V sum = 0;
    for (int k = p[r]; k < p[r + 1]; ++k)
      sum += v[k];
    y[r] = sum;
  }
}
int main() {
  int n = 1000;
  int *p = 0;
  float *q = 0, *v = 0, *y = 0;
  dim3 grid(2, 2);
  walk<float, int><<<grid, 256>>>(n, p, v, y);
  floaty<float><<<(n + 255) / 256, 256>>>(n, q, v, y);
}
)";
  Input In(Src, "stream-template.cu", hermeticConfig());
  ASSERT_TRUE(In.Ctx);
  auto Apply = [&](const char *Kernel) {
    return warpPerRow().apply(
        *In.Ctx,
        makeEdit("warp-per-row", Kernel, {{"per", std::string("stream")}}));
  };
  std::string Out =
      applyTo(warpPerRow(), In,
              makeEdit("warp-per-row", "walk",
                       {{"per", std::string("stream")}, {"lanes", int64_t(4)}}),
              hermeticConfig());
  for (const char *Part :
       {"__shared__ I rowOffsets[65];", "__shared__ V rowTerms[256];",
        "const I k = chunk + (I)threadIdx.x;",
        "  if (rowsInOrder) {\n      dot += dotStream;\n    } else {\n"
        "      while (k < p[r + 1]) {",
        "walk<float, int><<<(n + 63) / 64, 256>>>"})
    EXPECT_NE(Out.find(Part), std::string::npos) << Part << "\n" << Out;
  auto Refusal = [&](const char *Kernel) {
    auto X = Apply(Kernel);
    return X ? std::string("rewritten") : rejectionReason(X.takeError());
  };
  EXPECT_NE(Refusal("floaty").find(
                "the row offsets are not integers in floaty<float>"),
            std::string::npos)
      << Refusal("floaty");
  EXPECT_NE(Refusal("unused").find("never instantiated here"),
            std::string::npos)
      << Refusal("unused");
}

// A constexpr length of 12: 16 lanes first; one pass, so no registers.
TEST(RestructureWarpPerRowTest, SuggestsLanesFromConstexprLength) {
  Applicability A = prepareOn(warpPerRow(), "warp-rows-known", "short_rows");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("rows of at most 12 elements"), std::string::npos)
      << A.Reason;
  EXPECT_EQ(suggestions(A),
            (std::vector<std::string>{"block_size=256,lanes=16,per=warp",
                                      "block_size=128,per=block"}));
}

// The largest instantiation (4096): the block form first, 256 threads of
// 16 registers; the warp form would need 128 per lane, so it loads.
TEST(RestructureWarpPerRowTest, SuggestsBlockWithRegistersForLongRows) {
  Applicability A = prepareOn(warpPerRow(), "warp-rows-known", "long_rows");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("rows of at most 4096 elements"), std::string::npos)
      << A.Reason;
  EXPECT_EQ(suggestions(A),
            (std::vector<std::string>{"block_size=256,per=block,registers=true",
                                      "block_size=256,lanes=32,per=warp"}));
}

// A launch constant (300): a full warp with 10 registers per lane first.
TEST(RestructureWarpPerRowTest, SuggestsRegistersFromLaunchConstant) {
  Applicability A = prepareOn(warpPerRow(), "warp-rows-known", "mid_rows");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(suggestions(A),
            (std::vector<std::string>{
                "block_size=256,lanes=32,per=warp,registers=true",
                "block_size=128,per=block,registers=true"}));
  expectRewrite(warpPerRow(), "warp-rows-known",
                makeEdit("warp-per-row", "mid_rows", {{"registers", true}}));
}

// A softmax whose row length is known only at run time: no registers, but
// every suggestion fuses the max and sum passes.
TEST(RestructureWarpPerRowTest, SuggestsOnlineSoftmaxWithoutRegisters) {
  Applicability A = prepareOn(warpPerRow(), "warp-softmax", "softmax_rows");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(suggestions(A), (std::vector<std::string>{
                                "block_size=256,lanes=32,online=true,per=warp",
                                "block_size=256,lanes=8,online=true,per=warp",
                                "block_size=256,online=true,per=block"}));
}

TEST(RestructureWarpPerRowTest, RegistersAndLanesRefusals) {
  const Transform &T = warpPerRow();
  expectRefusal(T, "warp-softmax",
                makeEdit("warp-per-row", "softmax_rows", {{"registers", true}}),
                "params.registers: the row length must be fixed at compile "
                "time: the loop at 10:5 runs to the parameter 'cols', and "
                "softmax_rows/launch0 passes 'cols', which is not a "
                "compile-time constant");
  expectRefusal(T, "warp-rows-known",
                makeEdit("warp-per-row", "long_rows", {{"registers", true}}),
                "rows of up to 4096 elements need 128 values per lane with 32 "
                "lanes per row (at most 64)");
  expectRefusal(T, "warp-rows-known",
                makeEdit("warp-per-row", "short_rows", {{"registers", true}}),
                "no array is read at the loop's element");
  expectRefusal(T, "warp-spmv",
                makeEdit("warp-per-row", "csr_mv", {{"lanes", int64_t(2)}}),
                "params.lanes must be 4, 8, 16 or 32");
  expectRefusal(
      T, "warp-spmv",
      makeEdit("warp-per-row", "csr_mv",
               {{"lanes", int64_t(8)}, {"per", std::string("block")}}),
      "params.lanes applies to the warp form only");
}

// Where a write lands for lanes sharing an item: a local array is each
// thread's own; a local pointer may point at one only when the kernel
// takes a local's address (`&v`, an array decaying other than to be
// indexed, a reference bound to a local).
TEST(RestructureWarpPerRowTest, StorageOfWrites) {
  Input In(R"(#include "cuda_mock.h"
__global__ void indexed(float *y) {
  float t[4];
  float *row = y + 4;
  t[0] = 1.f;
  row[1] = t[0];
}
__global__ void decays(float *y) {
  float t[4];
  float *p = t;
  p[0] = y[0];
}
__global__ void address(float *y) {
  float v = 0.f;
  float *p = &v;
  *p = y[0];
}
__global__ void bound(float *y) {
  float t[4][4];
  float &e = t[1][2];
  e = y[0];
}
__global__ void member(float2 *y) {
  float2 a[2];
  a[1].x = y[0].x;
}
)",
           casePath("storage"), hermeticConfig());
  ASSERT_TRUE(In.Ctx);
  std::map<std::string, const clang::VarDecl *> V;
  std::map<std::string, const clang::FunctionDecl *> F;
  struct Finder : clang::RecursiveASTVisitor<Finder> {
    std::map<std::string, const clang::VarDecl *> &V;
    std::map<std::string, const clang::FunctionDecl *> &F;
    bool VisitVarDecl(clang::VarDecl *D) {
      V[D->getNameAsString()] = D;
      return true;
    }
    bool VisitFunctionDecl(clang::FunctionDecl *D) {
      if (D->hasBody())
        F[D->getNameAsString()] = D;
      return true;
    }
  } Find{{}, V, F};
  Find.TraverseDecl(const_cast<clang::TranslationUnitDecl *>(
      In.TU.AST->getASTContext().getTranslationUnitDecl()));
  auto Escapes = [&](const char *K) {
    return localAddressEscapes(F.at(K)->getBody());
  };
  // Indexing a local array keeps its address; taking it, decaying it into
  // a pointer or binding a reference to it lets it escape.
  EXPECT_FALSE(Escapes("indexed"));
  EXPECT_TRUE(Escapes("decays"));
  EXPECT_TRUE(Escapes("address"));
  EXPECT_TRUE(Escapes("bound"));
  EXPECT_FALSE(Escapes("member"));
  // Local arrays are private; parameters shared; a local pointer shared
  // unless a local's address escapes; a local reference unknown.
  EXPECT_EQ(writeStorage(V.at("t"), false), WriteStorage::Private);
  EXPECT_EQ(writeStorage(V.at("a"), false), WriteStorage::Private);
  EXPECT_EQ(writeStorage(V.at("y"), true), WriteStorage::Shared);
  EXPECT_EQ(writeStorage(V.at("row"), false), WriteStorage::Shared);
  EXPECT_EQ(writeStorage(V.at("p"), true), WriteStorage::Unknown);
  EXPECT_EQ(writeStorage(V.at("e"), false), WriteStorage::Unknown);
  EXPECT_EQ(writeStorage(nullptr, true), WriteStorage::Shared);
}

// Look-alikes refused with their reasons; a table each thread fills before
// the loop and a loop after `#pragma unroll` are taken.
TEST(RestructureWarpPerRowTest, LookAlikes) {
  const Transform &T = warpPerRow();
  auto E = [](const char *K) { return makeEdit("warp-per-row", K); };
  expectRefusal(T, "warp-lookalikes", E("scan_back"),
                "reads 'row[j - 1]' and writes 'row[j]'");
  expectRefusal(T, "warp-lookalikes", E("scan_alias"),
                "reads 'prev[j]', which may be the same array through "
                "another pointer");
  expectRefusal(T, "warp-lookalikes", E("decay"), "carries 'acc'");
  expectRefusal(T, "warp-lookalikes", E("until_negative"), "leaves early");
  expectRefusal(T, "warp-lookalikes", E("tid_rows"), "no thread index");
  expectRefusal(T, "warp-lookalikes", E("atomic_rows"),
                "updates memory atomically at 57:7");
  expectRefusal(T, "warp-lookalikes", E("local_row"),
                "an array each thread holds privately");
  expectRefusal(T, "warp-lookalikes", E("local_ptr"),
                "which may point at a thread's own locals");
  expectRefusal(T, "warp-lookalikes", E("mixed_write"), "writes both 'w[0]'");
  expectRefusal(T, "warp-lookalikes", E("unrolled_bias"),
                "'#pragma unroll' stands before the loop at 109:5");
  expectRefusal(T, "warp-lookalikes", E("arrow_rows"),
                "writes 'o->sum' through a pointer member");
  expectRefusal(T, "warp-lookalikes", E("last_pair"),
                "writes 'out[r]', which does not depend on 'j'");
  expectRefusal(T, "warp-lookalikes", E("lambda_sum"),
                "which captures by reference: what it reads and writes is not "
                "in the loop's statements");
  Applicability A = prepareOn(T, "warp-lookalikes", "table_rows");
  EXPECT_TRUE(A.Applies) << A.Reason;
  // A float2 kept member by member is two sums; its look-alikes are not.
  A = prepareOn(T, "warp-lookalikes", "vec_acc");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("(sum of 'acc.x', sum of 'acc.y')"),
            std::string::npos)
      << A.Reason;
  expectRefusal(T, "warp-lookalikes", E("sum_and_max"),
                "keeps its member 'x' as both a sum and a max (at 164:7)");
  expectRefusal(T, "warp-lookalikes", E("whole_acc"),
                "also writes it whole at 175:7");
  expectRefusal(T, "warp-lookalikes", E("acc_by_address"),
                "the call at 191:7 takes a pointer or reference");
  expectRefusal(T, "warp-lookalikes", E("acc_alias"),
                "'&acc' at 200:23 takes its address");
  expectRefusal(T, "warp-lookalikes", E("pointer_member"),
                "has the member 'src' of type 'const float *'");
}

// Accumulators of a vector type or a small struct, member by member: each
// written member is reset in lanes other than the first unless it starts
// from its operation's identity, and combined on its own; a member the
// loop never writes is left alone.
TEST(RestructureWarpPerRowTest, StructAccumulatorsMemberByMember) {
  const Transform &T = warpPerRow();
  Input In(R"(#include "cuda_mock.h"
struct Acc3 { float p; int n; double keep; };
__global__ void mixed(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    Acc3 a = {1.f, 2, 5.0};
    for (int j = 0; j < cols; ++j) {
      a.p *= x[r * cols + j];
      a.n = a.n + (x[r * cols + j] > 0.f);
    }
    y[r] = a.p + a.n + a.keep;
  }
}
__global__ void assigned(const float2 *m, float2 *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float2 acc;
    acc.x = 0.f;
    acc.y = 0.f;
    for (int j = 0; j < cols; ++j) {
      acc.x = acc.x - m[r * cols + j].x;
      acc.y = fminf(m[r * cols + j].y, acc.y);
    }
    out[r] = acc;
  }
}
__global__ void cross(const float2 *m, float2 *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float2 acc = {0.f, 0.f};
    for (int j = 0; j < cols; ++j) {
      acc.x += m[r * cols + j].x;
      acc.y += acc.x;
    }
    out[r] = acc;
  }
}
__global__ void captured(const float2 *m, float2 *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float2 acc = {0.f, 0.f};
    auto bump = [&](float v) { acc.y += v; };
    for (int j = 0; j < cols; ++j) {
      acc.x += m[r * cols + j].x;
      bump(m[r * cols + j].y);
    }
    out[r] = acc;
  }
}
struct Narrow { float s; short c; };
__global__ void narrow(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    Narrow t = {0.f, 0};
    for (int j = 0; j < cols; ++j)
      t.s += x[r * cols + j];
    y[r] = t.s;
  }
}
struct Pair { float a, b; };
__device__ Pair make_Pair(float a, float b) { return {b + 1.f, a}; }
__global__ void own_make(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    Pair p = make_Pair(0.f, 0.f);
    for (int j = 0; j < cols; ++j)
      p.a += x[r * cols + j];
    y[r] = p.a;
  }
}
void run(const float *x, float *y, const float2 *m, float2 *o, int n, int c) {
  own_make<<<(n + 127) / 128, 128>>>(x, y, n, c);
  mixed<<<(n + 127) / 128, 128>>>(x, y, n, c);
  assigned<<<(n + 127) / 128, 128>>>(m, o, n, c);
  cross<<<(n + 127) / 128, 128>>>(m, o, n, c);
  captured<<<(n + 127) / 128, 128>>>(m, o, n, c);
  narrow<<<(n + 127) / 128, 128>>>(x, y, n, c);
}
)",
           casePath("struct-acc"), hermeticConfig());
  ASSERT_TRUE(In.Ctx);
  auto Refusal = [&](const char *K) {
    auto R = T.apply(*In.Ctx, makeEdit("warp-per-row", K));
    return R ? std::string("rewritten") : rejectionReason(R.takeError());
  };
  Applicability A = T.prepare(*In.Ctx, "mixed");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("(product of 'a.p', sum of 'a.n')"),
            std::string::npos)
      << A.Reason;
  // a.p starts from 1 (no reset); a.n from 2 (reset); a.keep is not
  // combined.
  std::string Out =
      applyTo(T, In, makeEdit("warp-per-row", "mixed"), hermeticConfig());
  EXPECT_EQ(Out.find("a.p = 1;"), std::string::npos) << Out;
  EXPECT_NE(Out.find("    if (lane != 0) a.n = 0;\n"
                     "    for (int j = lane; j < cols; j += 32) {"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("      a.p *= __shfl_xor_sync(0xffffffffu, a.p, offset);\n"
                     "      a.n += __shfl_xor_sync(0xffffffffu, a.n, offset);\n"
                     "    }\n"),
            std::string::npos)
      << Out;
  EXPECT_EQ(Out.find("a.keep, offset"), std::string::npos) << Out;
  // Members set one by one before the loop are reset (sums) or kept
  // (minima); in the block form each is staged through its own array.
  Out = applyTo(
      T, In,
      makeEdit("warp-per-row", "assigned",
               {{"per", std::string("block")}, {"block_size", int64_t(64)}}),
      hermeticConfig());
  EXPECT_NE(Out.find("    if (lane != 0) acc.x = 0;\n"
                     "    for (int j = lane; j < cols; j += 64) {"),
            std::string::npos)
      << Out;
  EXPECT_EQ(Out.find("acc.y = 0;\n    for"), std::string::npos) << Out;
  EXPECT_NE(Out.find("__shared__ float acc_x_warps[2];"), std::string::npos)
      << Out;
  EXPECT_NE(Out.find("for (int w = 1; w < 2; ++w) acc.y = fminf(acc.y, "
                     "acc_y_warps[w]);"),
            std::string::npos)
      << Out;
  // Only CUDA's own make_<type> is read as its arguments in order.
  Out = applyTo(T, In, makeEdit("warp-per-row", "own_make"), hermeticConfig());
  EXPECT_NE(Out.find("if (lane != 0) p.a = 0;"), std::string::npos) << Out;
  EXPECT_NE(Refusal("cross").find("the statement at 33:7 reads or writes it "
                                  "in a way that is not a member's sum"),
            std::string::npos)
      << Refusal("cross");
  // A lambda capturing it by reference, called in the loop: refused as
  // every such call is, whatever it captures.
  EXPECT_NE(Refusal("captured")
                .find("calls the lambda at 45:7, which captures by "
                      "reference"),
            std::string::npos)
      << Refusal("captured");
  EXPECT_NE(Refusal("narrow").find("has the member 'c' of type 'short'"),
            std::string::npos)
      << Refusal("narrow");
}

// Struct and vector members kept as a max or min written as a comparison,
// and their look-alikes.
const char SelectMembers[] = R"(#include "cuda_mock.h"
struct MM { float lo, hi; };
struct IM { int lo, hi; };
__global__ void range(const float *m, MM *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    MM a = {1e30f, -1e30f};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      if (v < a.lo) a.lo = v;
      if (v > a.hi) { a.hi = v; }
    }
    out[r] = a;
  }
}
__global__ void vec(const float4 *m, float4 *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float4 a = {0.f, -1e30f, 1e30f, 0.f};
    for (int c = 0; c < cols; ++c) {
      a.x += m[r * cols + c].x;
      a.y = m[r * cols + c].y >= a.y ? m[r * cols + c].y : a.y;
      if (a.z > m[r * cols + c].z) a.z = m[r * cols + c].z;
    }
    out[r] = a;
  }
}
__global__ void kept_int(const int *m, IM *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    IM a = {1000, -1000};
    for (int c = 0; c < cols; ++c) {
      a.hi = a.hi > m[r * cols + c] ? a.hi : m[r * cols + c];
      a.lo = m[r * cols + c] > a.lo ? a.lo : m[r * cols + c];
    }
    out[r] = a;
  }
}
__global__ void kept_float(const float *m, MM *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    MM a = {1e30f, -1e30f};
    for (int c = 0; c < cols; ++c)
      a.hi = a.hi > m[r * cols + c] ? a.hi : m[r * cols + c];
    out[r] = a;
  }
}
__global__ void kept_scalar(const float *m, float *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float hi = -1e30f;
    for (int c = 0; c < cols; ++c)
      hi = hi > m[r * cols + c] ? hi : m[r * cols + c];
    out[r] = hi;
  }
}
__global__ void other_value(const float *m, const float *q, MM *out, int rows,
                   int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    MM a = {0.f, -1e30f};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      if (v > a.hi) a.hi = q[c];
    }
    out[r] = a;
  }
}
__global__ void other_member(const float *m, const float *q, MM *out, int rows,
                   int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    MM a = {0.f, -1e30f};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      if (v > a.lo) a.hi = v;
    }
    out[r] = a;
  }
}
__global__ void sum_and_cmp(const float *m, const float *q, MM *out, int rows,
                   int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    MM a = {0.f, -1e30f};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      if (v > a.hi) a.hi = v;
      a.hi += v;
    }
    out[r] = a;
  }
}
__global__ void with_else(const float *m, const float *q, MM *out, int rows,
                   int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    MM a = {0.f, -1e30f};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      if (v > a.hi) a.hi = v; else a.lo = v;
    }
    out[r] = a;
  }
}
__global__ void two_stmts(const float *m, const float *q, MM *out, int rows,
                   int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    MM a = {0.f, -1e30f};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      if (v > a.hi) { a.hi = v; a.lo = v; }
    }
    out[r] = a;
  }
}
__global__ void fmax_and_cmp(const float *m, const float *q, MM *out, int rows,
                   int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    MM a = {0.f, -1e30f};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      if (v > a.hi) a.hi = v;
      a.hi = fmaxf(a.hi, v);
    }
    out[r] = a;
  }
}
void run(const float *x, const int *xi, float *y, const float4 *m4, float4 *o4,
         MM *o, IM *oi, int n, int c) {
  range<<<(n + 127) / 128, 128>>>(x, o, n, c);
  vec<<<(n + 127) / 128, 128>>>(m4, o4, n, c);
  kept_int<<<(n + 127) / 128, 128>>>(xi, oi, n, c);
  kept_float<<<(n + 127) / 128, 128>>>(x, o, n, c);
  kept_scalar<<<(n + 127) / 128, 128>>>(x, y, n, c);
  other_value<<<(n + 127) / 128, 128>>>(x, x, o, n, c);
  other_member<<<(n + 127) / 128, 128>>>(x, x, o, n, c);
  sum_and_cmp<<<(n + 127) / 128, 128>>>(x, x, o, n, c);
  with_else<<<(n + 127) / 128, 128>>>(x, x, o, n, c);
  two_stmts<<<(n + 127) / 128, 128>>>(x, x, o, n, c);
  fmax_and_cmp<<<(n + 127) / 128, 128>>>(x, x, o, n, c);
}
)";

// A member's max or min written as a comparison is matched as a scalar's
// is (matchSelect()) and combined with the same comparison.
TEST(RestructureWarpPerRowTest, StructMembersBySelection) {
  const Transform &T = warpPerRow();
  Input In(SelectMembers, casePath("struct-select"), hermeticConfig());
  ASSERT_TRUE(In.Ctx);
  Applicability A = T.prepare(*In.Ctx, "range");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("(min of 'a.lo', max of 'a.hi')"), std::string::npos)
      << A.Reason;
  // Each member read once from its shuffle, combined with its comparison.
  std::string Out =
      applyTo(T, In, makeEdit("warp-per-row", "range"), hermeticConfig());
  EXPECT_NE(Out.find("      { float a_lo_other = __shfl_xor_sync(0xffffffffu, "
                     "a.lo, offset); a.lo = a_lo_other < a.lo ? a_lo_other : "
                     "a.lo; }\n"
                     "      { float a_hi_other = __shfl_xor_sync(0xffffffffu, "
                     "a.hi, offset); a.hi = a_hi_other > a.hi ? a_hi_other : "
                     "a.hi; }\n"),
            std::string::npos)
      << Out;
  EXPECT_EQ(Out.find("if (lane != 0) a."), std::string::npos) << Out;
  // Beside a sum, per block: the warps' partial values too.
  Out = applyTo(
      T, In,
      makeEdit("warp-per-row", "vec",
               {{"per", std::string("block")}, {"block_size", int64_t(64)}}),
      hermeticConfig());
  EXPECT_NE(Out.find("{ float a_y_other = __shfl_xor_sync(0xffffffffu, a.y, "
                     "offset); a.y = a_y_other >= a.y ? a_y_other : a.y; }"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("for (int w = 1; w < 2; ++w) { float a_z_other = "
                     "a_z_warps[w]; a.z = a.z > a_z_other ? a_z_other : "
                     "a.z; }"),
            std::string::npos)
      << Out;
  // Kept when the comparison holds: exact on integers only.
  Out = applyTo(T, In, makeEdit("warp-per-row", "kept_int"), hermeticConfig());
  EXPECT_NE(Out.find("a.hi = a.hi > a_hi_other ? a.hi : a_hi_other; }"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("a.lo = a_lo_other > a.lo ? a.lo : a_lo_other; }"),
            std::string::npos)
      << Out;
}

// A float member kept when the comparison holds (a NaN element would
// replace it, and the next element the NaN: the order counts), a scalar
// written so, and the look-alikes are refused, each with its reason.
TEST(RestructureWarpPerRowTest, StructMembersBySelectionRefused) {
  const Transform &T = warpPerRow();
  Input In(SelectMembers, casePath("struct-select"), hermeticConfig());
  ASSERT_TRUE(In.Ctx);
  auto Refusal = [&](const char *K) {
    auto R = T.apply(*In.Ctx, makeEdit("warp-per-row", K));
    return R ? std::string("rewritten") : rejectionReason(R.takeError());
  };
  std::string NotMember = "reads or writes it in a way that is not a "
                          "member's sum, product, max or min";
  EXPECT_NE(Refusal("kept_float").find("the statement at 44:7 " + NotMember),
            std::string::npos)
      << Refusal("kept_float");
  EXPECT_NE(Refusal("kept_scalar")
                .find("carries 'hi' from one element to the next in a way "
                      "that is not a sum, product, max or min"),
            std::string::npos)
      << Refusal("kept_scalar");
  for (auto [K, Why] : std::vector<std::pair<const char *, std::string>>{
           {"other_value", "the statement at 64:7 " + NotMember},
           {"other_member", "the statement at 76:7 " + NotMember},
           {"sum_and_cmp",
            "keeps its member 'hi' as both a max and a sum (at 89:7)"},
           {"with_else", "the statement at 101:7 " + NotMember},
           {"two_stmts", "the statement at 113:7 " + NotMember},
           {"fmax_and_cmp", "keeps its member 'hi' as a max in two "
                            "statements (again at 126:7), one a comparison"}})
    EXPECT_NE(Refusal(K).find(Why), std::string::npos)
        << K << ": " << Refusal(K);
}

} // namespace
