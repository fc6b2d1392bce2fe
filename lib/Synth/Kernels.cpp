//===- Kernels.cpp - The kernels of each class ----------------------------===//
//
// Written the way the catalog recognizes them (docs/transforms/): one thread
// per element or output (`idx`, or `row`/`col` from the y and x thread
// indices) behind a bounds guard; a row loop per thread for row-wise work
// (warp-per-row); a plain accumulator loop for products (shared-tiling); a
// shared-memory tree per block and one atomic per block for reductions
// (warp-reduce); a global atomic per element for histograms
// (privatize-atomics); a block scan with the blocks' totals scanned
// recursively for scans (as the suite's naive scan). The optimizer makes
// them fast; here they are plain.
//
//===----------------------------------------------------------------------===//

#include "SpecInternal.h"
#include "TemplatesInternal.h"
#include "optiml/Synth/Templates.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>
#include <cstdlib>

using namespace llvm;

namespace optiml {
namespace synth {

//===--------------------------------------------------------------------===//
// Pieces shared by the classes
//===--------------------------------------------------------------------===//

namespace {
/// The identity and combination of a reduction op over type T.
struct Reduction {
  std::string Identity; ///< the start value
  std::string Combine;  ///< statement combining `Acc` with `Value`
  std::string Atomic;   ///< atomic update of `*Addr` with `Value`
  std::string Helpers;  ///< device functions the atomic needs
};
} // namespace

std::string typeName(const Tensor &T) { return elementTypeName(T.Type).str(); }

/// The name of the element-count parameter of a kernel over \p Count
/// elements: the dimension's own name when it is one, else `n`, unless the
/// spec has another `n`.
static std::string countParam(const Spec &S, StringRef Count) {
  // One named dimension: the kernel takes it by its name.
  if (any_of(S.Sizes, [&](auto &P) { return P.first == Count; }))
    return Count.str();
  bool Taken = S.findTensor("n") ||
               any_of(S.Sizes, [](auto &P) { return P.first == "n"; });
  return Taken ? "optiml_n" : "n";
}

/// The product of \p T's dimensions as an int expression ("rows * cols").
std::string countExpr(const Tensor &T) {
  if (T.Shape.empty())
    return "1";
  std::string E;
  for (const Dim &D : T.Shape)
    E += (E.empty() ? "" : " * ") + dimRef(D);
  return E;
}

static Reduction reduction(StringRef Op, ElementType Type, StringRef Acc,
                           StringRef Value) {
  StringRef T = elementTypeName(Type);
  bool F = Type == ElementType::Float, D = Type == ElementType::Double;
  Reduction R;
  if (Op.empty() || Op == "sum" || Op == "mean") {
    R.Identity = "(" + T.str() + ")0";
    R.Combine = (Acc + " += " + Value + ";").str();
    R.Atomic = "atomicAdd(${Addr}, ${Value});";
    return R;
  }
  bool Max = Op == "max";
  StringRef Fn = F   ? (Max ? "fmaxf" : "fminf")
                 : D ? (Max ? "fmax" : "fmin")
                     : (Max ? "max" : "min");
  R.Identity = Type == ElementType::Int ? (Max ? "INT_MIN" : "INT_MAX")
                                        : (Max ? "-INFINITY" : "INFINITY");
  R.Combine = (Acc + " = " + Fn + "(" + Acc + ", " + Value + ");").str();
  if (Type == ElementType::Int) {
    R.Atomic =
        Max ? "atomicMax(${Addr}, ${Value});" : "atomicMin(${Addr}, ${Value});";
    return R;
  }
  // No atomic max or min for floating point: a compare-and-swap loop on
  // the value's bits, which stops as soon as the stored value wins.
  StringRef Name = Max ? "optimlAtomicMax" : "optimlAtomicMin";
  StringRef Cmp = Max ? "<" : ">";
  R.Atomic = (Name + "(${Addr}, ${Value});").str();
  R.Helpers = fillTemplate(
      F ? R"(// atomic ${Op} for float: compare-and-swap on the value's bits.
__device__ void ${Name}(float *address, float value) {
  int *bits = (int *)address;
  int old = *bits;
  while (__int_as_float(old) ${Cmp} value) {
    int assumed = old;
    old = atomicCAS(bits, assumed, __float_as_int(value));
    if (old == assumed)
      break;
  }
}

)"
        : R"(// atomic ${Op} for double: compare-and-swap on the value's bits.
__device__ void ${Name}(double *address, double value) {
  unsigned long long *bits = (unsigned long long *)address;
  unsigned long long old = *bits;
  while (__longlong_as_double((long long)old) ${Cmp} value) {
    unsigned long long assumed = old;
    old = atomicCAS(bits, assumed,
                    (unsigned long long)__double_as_longlong(value));
    if (old == assumed)
      break;
  }
}

)",
      {{"Op", Op.str()}, {"Name", Name.str()}, {"Cmp", Cmp.str()}});
  return R;
}

/// The element a reduction or map reads at \p Index: the expr with the
/// inputs indexed, or the single input itself.
static std::string element(const Spec &S, StringRef Index) {
  if (S.Expr.empty())
    return (S.Inputs[0].Name + "[" + Index + "]").str();
  return indexInputs(S.Expr, S, Index);
}

static std::string inputNames(const Spec &S) {
  std::string N;
  for (const Tensor &T : S.Inputs)
    N += (N.empty() ? "" : ", ") + T.Name + " " + [&] {
      std::string Sh = "[";
      for (size_t I = 0; I < T.Shape.size(); ++I)
        Sh += (I ? ", " : "") + dimRef(T.Shape[I]);
      return Sh + "]";
    }();
  return N;
}

//===--------------------------------------------------------------------===//
// The classes
//===--------------------------------------------------------------------===//

static KernelCode mapCode(const Spec &S) {
  const Tensor &Out = S.Outputs[0];
  std::string N = countParam(S, countExpr(Out));
  KernelParams P;
  P.add("int " + N, countExpr(Out));
  for (const Tensor &T : S.Inputs)
    P.input(T);
  P.output(Out);
  std::string Expr = S.Expr.empty() ? S.Inputs[0].Name : S.Expr;
  KernelCode C;
  C.Title = "elementwise " + Out.Name + " = " + Expr + " over " + inputNames(S);
  C.Kernels = fillTemplate(R"(// One thread per element.
__global__ void ${K}(${Params}) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < ${N})
    ${Out}[idx] = ${Elem};
}
)",
                           {{"K", kernelName(S)},
                            {"N", N},
                            {"Params", P.Decl},
                            {"Out", Out.Name},
                            {"Elem", element(S, "idx")}});
  C.Launch = fillTemplate(
      R"(  int threads = 256, blocks = (${N} + threads - 1) / threads;
  ${K}<<<blocks, threads>>>(${Args});
)",
      {{"N", countExpr(Out)}, {"K", kernelName(S)}, {"Args", P.Args}});
  return C;
}

static KernelCode reduceCode(const Spec &S) {
  const Tensor &Out = S.Outputs[0];
  std::string T = typeName(Out);
  StringRef Op = S.Op.empty() ? "sum" : StringRef(S.Op);
  Reduction R =
      reduction(Op, Out.Type, "partial[tid]", "partial[tid + stride]");
  std::string N = countParam(S, countExpr(S.Inputs[0]));
  KernelParams P;
  P.add("int " + N, countExpr(S.Inputs[0]));
  for (const Tensor &In : S.Inputs)
    P.input(In);
  P.output(Out);
  KernelCode C;
  C.Title = Op.str() + " of " + (S.Expr.empty() ? S.Inputs[0].Name : S.Expr) +
            " over " + inputNames(S) + " into " + Out.Name;
  C.Kernels =
      R.Helpers +
      fillTemplate(
          R"(// Each block combines its 256 elements as a tree in shared memory; one
// atomic per block combines the blocks.
__global__ void ${K}(${Params}) {
  __shared__ ${T} partial[256];
  int tid = threadIdx.x;
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  partial[tid] = idx < ${N} ? (${T})(${Elem}) : ${Identity};
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride)
      ${Combine}
    __syncthreads();
  }
  if (tid == 0)
    ${Atomic}
}
)",
          {{"K", kernelName(S)},
           {"N", N},
           {"Params", P.Decl},
           {"T", T},
           {"Elem", element(S, "idx")},
           {"Identity", R.Identity},
           {"Combine", R.Combine},
           {"Atomic", fillTemplate(R.Atomic, {{"Addr", Out.Name},
                                              {"Value", "partial[0]"}})}});
  C.Launch = fillTemplate(
      R"(  // The result starts at the op's identity; every block combines into it.
  ${T} init = ${Identity};
  OPTIML_CHECK(cudaMemcpy(d_${Out}, &init, sizeof(${T}), cudaMemcpyHostToDevice));
  int threads = 256, blocks = (${N} + threads - 1) / threads;
  ${K}<<<blocks, threads>>>(${Args});
)",
      {{"T", T},
       {"Identity", R.Identity},
       {"Out", Out.Name},
       {"N", countExpr(S.Inputs[0])},
       {"K", kernelName(S)},
       {"Args", P.Args}});
  return C;
}

static KernelCode rowReduceCode(const Spec &S) {
  const Tensor &In = S.Inputs[0], &Out = S.Outputs[0];
  std::string Rows = dimRef(In.Shape[0]), Cols = dimRef(In.Shape[1]);
  std::string T = typeName(Out);
  StringRef Op = S.Op.empty() ? "sum" : StringRef(S.Op);
  std::string Index = "(size_t)row * " + Cols + " + j";
  Reduction R = reduction(Op, Out.Type, "acc", element(S, Index));
  KernelParams P;
  P.dims(S, In.Shape);
  for (const Tensor &I : S.Inputs)
    P.input(I);
  P.output(Out);
  KernelCode C;
  C.Title = "row-wise " + Op.str() + " of " +
            (S.Expr.empty() ? In.Name : S.Expr) + " over " + inputNames(S) +
            " into " + Out.Name + " [" + Rows + "]";
  C.Kernels =
      fillTemplate(R"(// One thread per row, looping over the row's columns.
__global__ void ${K}(${Params}) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < ${Rows}) {
    ${T} acc = ${Identity};
    for (int j = 0; j < ${Cols}; ++j)
      ${Combine}
    ${Out}[row] = acc${Mean};
  }
}
)",
                   {{"K", kernelName(S)},
                    {"Params", P.Decl},
                    {"Rows", Rows},
                    {"Cols", Cols},
                    {"T", T},
                    {"Identity", R.Identity},
                    {"Combine", R.Combine},
                    {"Out", Out.Name},
                    {"Mean", Op == "mean" ? " / " + Cols : ""}});
  C.Launch = fillTemplate(
      R"(  int threads = 256, blocks = (${Rows} + threads - 1) / threads;
  ${K}<<<blocks, threads>>>(${Args});
)",
      {{"Rows", Rows}, {"K", kernelName(S)}, {"Args", P.Args}});
  return C;
}

static KernelCode softmaxCode(const Spec &S) {
  const Tensor &In = S.Inputs[0], &Out = S.Outputs[0];
  std::string Rows = dimRef(In.Shape[0]), Cols = dimRef(In.Shape[1]);
  bool F = In.Type == ElementType::Float;
  KernelParams P;
  P.dims(S, In.Shape);
  P.input(In);
  P.output(Out);
  KernelCode C;
  C.Title = "row-wise softmax of " + In.Name + " [" + Rows + ", " + Cols +
            "] into " + Out.Name;
  C.Kernels = fillTemplate(
      R"(// One thread per row, three passes over it: the maximum, the sum of
// exponentials, the normalised values.
__global__ void ${K}(${Params}) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < ${Rows}) {
    ${T} mx = -INFINITY;
    for (int j = 0; j < ${Cols}; ++j)
      mx = ${Max}(mx, ${In}[(size_t)row * ${Cols} + j]);
    ${T} acc = 0;
    for (int j = 0; j < ${Cols}; ++j)
      acc += ${Exp}(${In}[(size_t)row * ${Cols} + j] - mx);
    for (int j = 0; j < ${Cols}; ++j)
      ${Out}[(size_t)row * ${Cols} + j] = ${Exp}(${In}[(size_t)row * ${Cols} + j] - mx) / acc;
  }
}
)",
      {{"K", kernelName(S)},
       {"Params", P.Decl},
       {"Rows", Rows},
       {"Cols", Cols},
       {"T", typeName(In)},
       {"Max", F ? "fmaxf" : "fmax"},
       {"Exp", F ? "expf" : "exp"},
       {"In", In.Name},
       {"Out", Out.Name}});
  C.Launch = fillTemplate(
      R"(  int threads = 256, blocks = (${Rows} + threads - 1) / threads;
  ${K}<<<blocks, threads>>>(${Args});
)",
      {{"Rows", Rows}, {"K", kernelName(S)}, {"Args", P.Args}});
  return C;
}

static KernelCode matVecCode(const Spec &S) {
  const Tensor &A = S.Inputs[0], &X = S.Inputs[1], &Y = S.Outputs[0];
  std::string M = dimRef(A.Shape[0]), N = dimRef(A.Shape[1]);
  KernelParams P;
  P.dims(S, A.Shape);
  P.input(A);
  P.input(X);
  P.output(Y);
  KernelCode C;
  C.Title = "matrix-vector product " + Y.Name + " = " + A.Name + " " + X.Name +
            " (" + A.Name + " [" + M + ", " + N + "])";
  C.Kernels = fillTemplate(
      R"(// One thread per output element: the dot product of a row with the vector.
__global__ void ${K}(${Params}) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < ${M}) {
    ${T} acc = 0;
    for (int j = 0; j < ${N}; ++j)
      acc += ${A}[(size_t)row * ${N} + j] * ${X}[j];
    ${Y}[row] = acc;
  }
}
)",
      {{"K", kernelName(S)},
       {"Params", P.Decl},
       {"M", M},
       {"N", N},
       {"T", typeName(Y)},
       {"A", A.Name},
       {"X", X.Name},
       {"Y", Y.Name}});
  C.Launch = fillTemplate(
      R"(  int threads = 256, blocks = (${M} + threads - 1) / threads;
  ${K}<<<blocks, threads>>>(${Args});
)",
      {{"M", M}, {"K", kernelName(S)}, {"Args", P.Args}});
  return C;
}

GemmShape gemmShape(const Spec &S) {
  const Tensor &A = S.Inputs[0], &B = S.Inputs[1], &Out = S.Outputs[0];
  GemmShape G;
  G.M = dimRef(A.Shape[0]);
  G.K = dimRef(A.Shape[1]);
  G.N = dimRef(B.Shape[1]);
  G.P.dims(S, {A.Shape[0], A.Shape[1], B.Shape[1]});
  G.P.input(A);
  G.P.input(B);
  G.P.output(Out);
  G.Title = "matrix product " + Out.Name + " = " + A.Name + " " + B.Name +
            " ([" + G.M + ", " + G.K + "] x [" + G.K + ", " + G.N + "])";
  return G;
}

static KernelCode gemmCode(const Spec &S) {
  const Tensor &A = S.Inputs[0], &B = S.Inputs[1], &Out = S.Outputs[0];
  GemmShape G = gemmShape(S);
  const std::string &M = G.M, &K = G.K, &N = G.N;
  const KernelParams &P = G.P;
  KernelCode C;
  C.Title = G.Title;
  C.Kernels = fillTemplate(
      R"(// One thread per output element: row from y, column from x.
__global__ void ${Kern}(${Params}) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < ${M} && col < ${N}) {
    ${T} acc = 0;
    for (int p = 0; p < ${K}; ++p)
      acc += ${A}[(size_t)row * ${K} + p] * ${B}[(size_t)p * ${N} + col];
    ${C}[(size_t)row * ${N} + col] = acc;
  }
}
)",
      {{"Kern", kernelName(S)},
       {"Params", P.Decl},
       {"M", M},
       {"N", N},
       {"K", K},
       {"T", typeName(Out)},
       {"A", A.Name},
       {"B", B.Name},
       {"C", Out.Name}});
  C.Launch = fillTemplate(
      R"(  dim3 threads(16, 16), blocks((${N} + 15) / 16, (${M} + 15) / 16);
  ${Kern}<<<blocks, threads>>>(${Args});
)",
      {{"N", N}, {"M", M}, {"Kern", kernelName(S)}, {"Args", P.Args}});
  return C;
}

static KernelCode stencilCode(const Spec &S) {
  const Tensor &In = S.Inputs[0], &Out = S.Outputs[0];
  std::string Rows = dimRef(In.Shape[0]), Cols = dimRef(In.Shape[1]);
  int R = stencilRadius(S);
  KernelParams P;
  P.dims(S, In.Shape);
  P.input(In);
  P.output(Out);
  KernelCode C;
  C.Title = "2D stencil " + Out.Name + " = " +
            (S.Expr.empty() ? defaultStencilExpr(S) : S.Expr) + " over " +
            In.Name + " [" + Rows + ", " + Cols + "]";
  C.Kernels = fillTemplate(
      R"(// One thread per interior cell; the border of width ${R} keeps the input's
// values (copied before the launch).
__global__ void ${K}(${Params}) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= ${R} && row < ${Rows} - ${R} && col >= ${R} && col < ${Cols} - ${R})
    ${Out}[row * ${Cols} + col] = ${Expr};
}
)",
      {{"R", std::to_string(R)},
       {"K", kernelName(S)},
       {"Params", P.Decl},
       {"Rows", Rows},
       {"Cols", Cols},
       {"Out", Out.Name},
       {"Expr", stencilExpr(S, {Rows, Cols})}});
  C.Launch = fillTemplate(
      R"(  OPTIML_CHECK(cudaMemcpy(d_${Out}, d_${In}, sizeof(${T}) * ${Rows} * ${Cols}, cudaMemcpyDeviceToDevice));
  dim3 threads(16, 16), blocks((${Cols} + 15) / 16, (${Rows} + 15) / 16);
  ${K}<<<blocks, threads>>>(${Args});
)",
      {{"Out", Out.Name},
       {"In", In.Name},
       {"T", typeName(In)},
       {"Rows", Rows},
       {"Cols", Cols},
       {"K", kernelName(S)},
       {"Args", P.Args}});
  return C;
}

static KernelCode stencil3DCode(const Spec &S) {
  const Tensor &In = S.Inputs[0], &Out = S.Outputs[0];
  std::string Depth = dimRef(In.Shape[0]), Rows = dimRef(In.Shape[1]),
              Cols = dimRef(In.Shape[2]);
  int R = stencilRadius(S);
  KernelParams P;
  P.dims(S, In.Shape);
  P.input(In);
  P.output(Out);
  KernelCode C;
  C.Title = "3D stencil " + Out.Name + " = " +
            (S.Expr.empty() ? defaultStencilExpr(S) : S.Expr) + " over " +
            In.Name + " [" + Depth + ", " + Rows + ", " + Cols + "]";
  C.Kernels = fillTemplate(
      R"(// One thread per interior cell (x: column, y: row, z: layer); the border
// of width ${R} keeps the input's values (copied before the launch).
__global__ void ${K}(${Params}) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int layer = blockIdx.z * blockDim.z + threadIdx.z;
  if (layer >= ${R} && layer < ${Depth} - ${R} && row >= ${R} && row < ${Rows} - ${R} &&
      col >= ${R} && col < ${Cols} - ${R})
    ${Out}[((size_t)layer * ${Rows} + row) * ${Cols} + col] = ${Expr};
}
)",
      {{"R", std::to_string(R)},
       {"K", kernelName(S)},
       {"Params", P.Decl},
       {"Depth", Depth},
       {"Rows", Rows},
       {"Cols", Cols},
       {"Out", Out.Name},
       {"Expr", stencilExpr(S, {Depth, Rows, Cols})}});
  C.Launch = fillTemplate(
      R"(  OPTIML_CHECK(cudaMemcpy(d_${Out}, d_${In}, sizeof(${T}) * ${Depth} * ${Rows} * ${Cols}, cudaMemcpyDeviceToDevice));
  dim3 threads(32, 4, 4), blocks((${Cols} + 31) / 32, (${Rows} + 3) / 4, (${Depth} + 3) / 4);
  ${K}<<<blocks, threads>>>(${Args});
)",
      {{"Out", Out.Name},
       {"In", In.Name},
       {"T", typeName(In)},
       {"Depth", Depth},
       {"Rows", Rows},
       {"Cols", Cols},
       {"K", kernelName(S)},
       {"Args", P.Args}});
  return C;
}

static KernelCode histogramCode(const Spec &S) {
  const Tensor &In = S.Inputs[0], &Out = S.Outputs[0];
  std::string N = countExpr(In), Bins = dimRef(Out.Shape[0]),
              Count = countParam(S, N);
  KernelParams P;
  P.add("int " + Count, N);
  P.dims(S, Out.Shape);
  P.input(In);
  P.output(Out);
  KernelCode C;
  C.Title = "histogram of " + In.Name + " [" + N + "] into " + Out.Name + " [" +
            Bins + "]";
  // With a fixed number of bins the index is also taken modulo it: a no-op
  // after the guard, which proves the bins' count to the catalog
  // (privatize-atomics needs it at compile time).
  bool Fixed = !Out.Shape[0].isNamed();
  C.Kernels =
      fillTemplate(R"(// One thread per value: an atomic increment of its bin.
__global__ void ${K}(${Params}) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < ${Count}) {
    unsigned bin = (unsigned)${In}[idx];
    if (bin < ${Limit})
      atomicAdd(&${Out}[${Index}], 1);
  }
}
)",
                   {{"K", kernelName(S)},
                    {"Count", Count},
                    {"Params", P.Decl},
                    {"In", In.Name},
                    {"Bins", Bins},
                    {"Limit", Fixed ? Bins + "u" : "(unsigned)" + Bins},
                    {"Index", Fixed ? "bin % " + Bins + "u" : "bin"},
                    {"Out", Out.Name}});
  C.Launch = fillTemplate(
      R"(  int threads = 256, blocks = (${N} + threads - 1) / threads;
  ${K}<<<blocks, threads>>>(${Args});
)",
      {{"N", N}, {"K", kernelName(S)}, {"Args", P.Args}});
  C.Ranges.push_back({In.Name, {"0", Bins}});
  return C;
}

static KernelCode gatherCode(const Spec &S) {
  const Tensor &Src = S.Inputs[0], &Index = S.Inputs[1], &Out = S.Outputs[0];
  std::string N = dimRef(Src.Shape[0]), M = countExpr(Out),
              Count = countParam(S, M);
  KernelParams P;
  P.add("int " + Count, M);
  for (const Tensor &T : S.Inputs)
    P.input(T);
  P.output(Out);
  KernelCode C;
  C.Title = "gather " + Out.Name + "[i] = " + Src.Name + "[" + Index.Name +
            "[i]] (" + Src.Name + " [" + N + "], " + Index.Name + " [" + M +
            "])";
  C.Kernels =
      fillTemplate(R"(// One thread per output element: a read at its index.
__global__ void ${K}(${Params}) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < ${Count})
    ${Out}[idx] = ${Src}[${Index}[idx]];
}
)",
                   {{"K", kernelName(S)},
                    {"Params", P.Decl},
                    {"Count", Count},
                    {"Out", Out.Name},
                    {"Src", Src.Name},
                    {"Index", Index.Name}});
  C.Launch = fillTemplate(
      R"(  int threads = 256, blocks = (${M} + threads - 1) / threads;
  ${K}<<<blocks, threads>>>(${Args});
)",
      {{"M", M}, {"K", kernelName(S)}, {"Args", P.Args}});
  C.Ranges.push_back({Index.Name, {"0", N}});
  return C;
}

static KernelCode scanCode(const Spec &S) {
  const Tensor &In = S.Inputs[0], &Out = S.Outputs[0];
  std::string N = countExpr(In), K = kernelName(S);
  KernelCode C;
  C.Title = "inclusive scan (prefix sums) of " + In.Name + " [" + N +
            "] into " + Out.Name;
  C.Kernels = fillTemplate(
      R"(// Each block scans its 256 elements in shared memory (double-buffered
// steps of doubling distance) and writes its total to block_sums.
__global__ void ${K}_block(int n, const ${T} *in, ${T} *out, ${T} *block_sums) {
  __shared__ ${T} buf[2][256];
  int tid = threadIdx.x;
  int idx = blockIdx.x * 256 + tid;
  int cur = 0;
  buf[cur][tid] = idx < n ? in[idx] : (${T})0;
  __syncthreads();
  for (int stride = 1; stride < 256; stride <<= 1) {
    int next = 1 - cur;
    buf[next][tid] = tid >= stride ? buf[cur][tid] + buf[cur][tid - stride] : buf[cur][tid];
    cur = next;
    __syncthreads();
  }
  if (idx < n)
    out[idx] = buf[cur][tid];
  if (tid == 255 && block_sums)
    block_sums[blockIdx.x] = buf[cur][tid];
}

// Adds to each element the scanned total of the blocks before its own.
__global__ void ${K}_add(int n, ${T} *out, const ${T} *scanned_sums) {
  int idx = blockIdx.x * 256 + threadIdx.x;
  if (blockIdx.x > 0 && idx < n)
    out[idx] += scanned_sums[blockIdx.x - 1];
}

// The inclusive scan of n elements: the blocks scan their parts, the
// blocks' totals are scanned the same way, and added back.
static void ${K}(int n, const ${T} *in, ${T} *out) {
  int blocks = (n + 255) / 256;
  if (blocks == 1) {
    ${K}_block<<<1, 256>>>(n, in, out, nullptr);
    return;
  }
  ${T} *sums = nullptr, *scanned = nullptr;
  OPTIML_CHECK(cudaMalloc(&sums, sizeof(${T}) * blocks));
  OPTIML_CHECK(cudaMalloc(&scanned, sizeof(${T}) * blocks));
  ${K}_block<<<blocks, 256>>>(n, in, out, sums);
  ${K}(blocks, sums, scanned);
  ${K}_add<<<blocks, 256>>>(n, out, scanned);
  OPTIML_CHECK(cudaFree(sums));
  OPTIML_CHECK(cudaFree(scanned));
}
)",
      {{"K", K}, {"T", typeName(In)}});
  C.Launch =
      fillTemplate(R"(  ${K}(${N}, d_${In}, d_${Out});
)",
                   {{"K", K}, {"N", N}, {"In", In.Name}, {"Out", Out.Name}});
  return C;
}

static KernelCode transposeCode(const Spec &S) {
  const Tensor &In = S.Inputs[0], &Out = S.Outputs[0];
  std::string Rows = dimRef(In.Shape[0]), Cols = dimRef(In.Shape[1]);
  KernelParams P;
  P.dims(S, In.Shape);
  P.input(In);
  P.output(Out);
  KernelCode C;
  C.Title = "transpose of " + In.Name + " [" + Rows + ", " + Cols + "] into " +
            Out.Name + " [" + Cols + ", " + Rows + "]";
  C.Kernels = fillTemplate(
      R"(// One thread per element: read along a row, write along a column.
__global__ void ${K}(${Params}) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < ${Rows} && col < ${Cols})
    ${Out}[(size_t)col * ${Rows} + row] = ${In}[(size_t)row * ${Cols} + col];
}
)",
      {{"K", kernelName(S)},
       {"Params", P.Decl},
       {"Rows", Rows},
       {"Cols", Cols},
       {"In", In.Name},
       {"Out", Out.Name}});
  C.Launch = fillTemplate(
      R"(  dim3 threads(16, 16), blocks((${Cols} + 15) / 16, (${Rows} + 15) / 16);
  ${K}<<<blocks, threads>>>(${Args});
)",
      {{"Cols", Cols}, {"Rows", Rows}, {"K", kernelName(S)}, {"Args", P.Args}});
  return C;
}

KernelCode templateCode(const Spec &S) {
  switch (S.Class) {
  case ProgramClass::Map:
    return mapCode(S);
  case ProgramClass::Reduce:
    return reduceCode(S);
  case ProgramClass::RowReduce:
    return rowReduceCode(S);
  case ProgramClass::Softmax:
    return softmaxCode(S);
  case ProgramClass::MatVec:
    return matVecCode(S);
  case ProgramClass::Gemm:
    return gemmCode(S);
  case ProgramClass::Stencil2D:
    return stencilCode(S);
  case ProgramClass::Stencil3D:
    return stencil3DCode(S);
  case ProgramClass::Histogram:
    return histogramCode(S);
  case ProgramClass::Gather:
    return gatherCode(S);
  case ProgramClass::Scan:
    return scanCode(S);
  case ProgramClass::Transpose:
    return transposeCode(S);
  }
  llvm_unreachable("unknown class");
}

} // namespace synth
} // namespace optiml
