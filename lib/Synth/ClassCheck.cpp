//===- ClassCheck.cpp - What each class expects of a spec -----------------===//
//
// The spec's parser checks what any spec must hold; here, what a class
// needs: how many inputs and outputs, their shapes (by dimension, so that
// one binary runs at any sizes), their element types, expr and op.
//
//===----------------------------------------------------------------------===//

#include "SpecInternal.h"
#include "TemplatesInternal.h"
#include "optiml/Synth/Templates.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace optiml {
namespace synth {

std::string dimRef(const Dim &D) {
  return D.isNamed() ? D.Name : std::to_string(D.Value);
}

static std::string shapeText(const Tensor &T) {
  std::string S = "[";
  for (size_t I = 0; I < T.Shape.size(); ++I)
    S += (I ? ", " : "") + dimRef(T.Shape[I]);
  return S + "]";
}

std::string describeClass(ProgramClass C) {
  switch (C) {
  case ProgramClass::Map:
    return "map: out[i] = expr over the inputs' elements; inputs and the "
           "one output of one shape (any rank)";
  case ProgramClass::Reduce:
    return "reduce: one value (shape [] or [1]) from every element of the "
           "inputs (one shape), op sum|max|min of expr (default: the "
           "input)";
  case ProgramClass::RowReduce:
    return "row-reduce: input(s) [rows, cols] -> output [rows], op "
           "sum|max|min|mean of expr along each row";
  case ProgramClass::Softmax:
    return "softmax: input [rows, cols] -> output [rows, cols], each row "
           "exp(x - max) / sum (float or double)";
  case ProgramClass::MatVec:
    return "matvec: inputs A [m, n], x [n] -> output y [m] = A x";
  case ProgramClass::Gemm:
    return "gemm: inputs A [m, k], B [k, n] -> output C [m, n] = A B";
  case ProgramClass::Stencil2D:
    return "stencil2d: input [rows, cols] -> output [rows, cols]; expr over "
           "neighbours, in(-1, 0) is one row up (default: the mean of the "
           "four neighbours); border cells keep the input's value";
  case ProgramClass::Stencil3D:
    return "stencil3d: input [depth, rows, cols] -> output [depth, rows, "
           "cols]; expr over neighbours, in(-1, 0, 0) is one layer down "
           "(default: the mean of the six neighbours); border cells keep "
           "the input's value";
  case ProgramClass::Histogram:
    return "histogram: int input [n] with values in [0, bins) -> int "
           "output [bins] of counts (a fixed number of bins, e.g. [256], "
           "lets the optimizer privatize them)";
  case ProgramClass::Gather:
    return "gather: inputs src [n] and int index [m] with values in [0, n) "
           "-> output [m] = src[index[i]]";
  case ProgramClass::Scan:
    return "scan: input [n] -> output [n], the inclusive prefix sums "
           "(out[i] = in[0] + ... + in[i])";
  case ProgramClass::Transpose:
    return "transpose: input [rows, cols] -> output [cols, rows]";
  }
  llvm_unreachable("unknown class");
}

Tolerance effectiveTolerance(const Spec &S) {
  if (S.Tol)
    return *S.Tol;
  bool AnyFloat = any_of(
      S.Outputs, [](const Tensor &T) { return T.Type == ElementType::Float; });
  double T = AnyFloat ? 1e-4 : 1e-10;
  return {T, T};
}

std::string kernelName(const Spec &S) {
  if (!S.Name.empty())
    return S.Name;
  std::string N = className(S.Class).str();
  std::replace(N.begin(), N.end(), '-', '_');
  if (S.findTensor(N) || any_of(S.Sizes, [&](auto &P) { return P.first == N; }))
    N += "_kernel";
  return N;
}

namespace {

/// Checks one spec against its class's expectations; the first problem
/// stops it.
class ClassChecker {
public:
  explicit ClassChecker(const Spec &S) : S(S), Cls(className(S.Class)) {}

  Error check() {
    if (!S.Name.empty() &&
        (S.findTensor(S.Name) ||
         any_of(S.Sizes, [&](auto &P) { return P.first == S.Name; })))
      return fail("name",
                  "'" + S.Name + "' is also an input, output or dimension");
    switch (S.Class) {
    case ProgramClass::Map:
      return checkMap();
    case ProgramClass::Reduce:
      return checkReduce();
    case ProgramClass::RowReduce:
      return checkRowReduce();
    case ProgramClass::Softmax:
      if (Error E = counts(1, 1))
        return E;
      if (Error E = rank("inputs[0]", S.Inputs[0], 2, "[rows, cols]"))
        return E;
      if (Error E = floating())
        return E;
      if (Error E = sameType())
        return E;
      return sameShape("outputs[0]", S.Outputs[0], S.Inputs[0], "inputs[0]");
    case ProgramClass::MatVec:
      if (Error E = counts(2, 1))
        return E;
      if (Error E = floating())
        return E;
      if (Error E = sameType())
        return E;
      if (Error E = rank("inputs[0]", S.Inputs[0], 2, "A [m, n]"))
        return E;
      if (Error E = rank("inputs[1]", S.Inputs[1], 1, "x [n]"))
        return E;
      if (Error E = rank("outputs[0]", S.Outputs[0], 1, "y [m]"))
        return E;
      if (Error E = sameDim("inputs[1]", 0, "inputs[0]", 1,
                            "y = A x multiplies A [m, n] by x [n]"))
        return E;
      return sameDim("outputs[0]", 0, "inputs[0]", 0,
                     "y = A x gives y [m] for A [m, n]");
    case ProgramClass::Gemm:
      if (Error E = counts(2, 1))
        return E;
      if (Error E = floating())
        return E;
      if (Error E = sameType())
        return E;
      if (Error E = rank("inputs[0]", S.Inputs[0], 2, "A [m, k]"))
        return E;
      if (Error E = rank("inputs[1]", S.Inputs[1], 2, "B [k, n]"))
        return E;
      if (Error E = rank("outputs[0]", S.Outputs[0], 2, "C [m, n]"))
        return E;
      if (Error E = sameDim("inputs[1]", 0, "inputs[0]", 1,
                            "a gemm multiplies A [m, k] by B [k, n]"))
        return E;
      if (Error E = sameDim("outputs[0]", 0, "inputs[0]", 0,
                            "C = A B is [m, n] for A [m, k]"))
        return E;
      return sameDim("outputs[0]", 1, "inputs[1]", 1,
                     "C = A B is [m, n] for B [k, n]");
    case ProgramClass::Stencil2D:
      return checkStencil(2);
    case ProgramClass::Stencil3D:
      return checkStencil(3);
    case ProgramClass::Histogram:
      if (Error E = counts(1, 1))
        return E;
      if (S.Inputs[0].Type != ElementType::Int)
        return fail("inputs[0].type", "a histogram counts int values");
      if (S.Outputs[0].Type != ElementType::Int)
        return fail("outputs[0].type", "a histogram's counts are int");
      if (Error E = rank("inputs[0]", S.Inputs[0], 1, "[n]"))
        return E;
      if (Error E = rank("outputs[0]", S.Outputs[0], 1, "[bins]"))
        return E;
      if (S.Inputs[0].Range)
        return fail("inputs[0].range",
                    "a histogram's values are drawn from [0, bins), the "
                    "output's size; leave range out");
      return noExprOrOp();
    case ProgramClass::Scan:
      if (Error E = counts(1, 1))
        return E;
      if (Error E = sameType())
        return E;
      if (Error E = rank("inputs[0]", S.Inputs[0], 1, "[n]"))
        return E;
      if (Error E =
              sameShape("outputs[0]", S.Outputs[0], S.Inputs[0], "inputs[0]"))
        return E;
      return noExprOrOp();
    case ProgramClass::Gather:
      if (Error E = counts(2, 1))
        return E;
      if (Error E = rank("inputs[0]", S.Inputs[0], 1, "src [n]"))
        return E;
      if (Error E = rank("inputs[1]", S.Inputs[1], 1, "index [m]"))
        return E;
      if (Error E = rank("outputs[0]", S.Outputs[0], 1, "[m]"))
        return E;
      if (S.Inputs[1].Type != ElementType::Int)
        return fail("inputs[1].type", "a gather's index is int");
      if (S.Inputs[1].Range)
        return fail("inputs[1].range",
                    "a gather's indices are drawn from [0, n), the source's "
                    "size; leave range out");
      if (S.Outputs[0].Type != S.Inputs[0].Type)
        return fail("outputs[0].type", "is " +
                                           elementTypeName(S.Outputs[0].Type) +
                                           " but the source is " +
                                           elementTypeName(S.Inputs[0].Type));
      if (Error E = sameDim("outputs[0]", 0, "inputs[1]", 0,
                            "a gather writes one value per index"))
        return E;
      return noExprOrOp();
    case ProgramClass::Transpose: {
      if (Error E = counts(1, 1))
        return E;
      if (Error E = sameType())
        return E;
      if (Error E = rank("inputs[0]", S.Inputs[0], 2, "[rows, cols]"))
        return E;
      if (Error E = rank("outputs[0]", S.Outputs[0], 2, "[cols, rows]"))
        return E;
      if (Error E = sameDim("outputs[0]", 0, "inputs[0]", 1,
                            "a transpose of [rows, cols] is [cols, rows]"))
        return E;
      if (Error E = sameDim("outputs[0]", 1, "inputs[0]", 0,
                            "a transpose of [rows, cols] is [cols, rows]"))
        return E;
      return noExprOrOp();
    }
    }
    llvm_unreachable("unknown class");
  }

private:
  Error fail(StringRef Field, const Twine &Msg) {
    return specError(S.Path, Field, Msg);
  }

  Error counts(size_t Inputs, size_t Outputs) {
    if (S.Inputs.size() != Inputs)
      return fail("inputs", "a " + Cls + " has " + Twine(Inputs) + " input" +
                                (Inputs == 1 ? "" : "s") + ", not " +
                                Twine(S.Inputs.size()) + " (" +
                                describeClass(S.Class) + ")");
    if (S.Outputs.size() != Outputs)
      return fail("outputs", "a " + Cls + " has " + Twine(Outputs) + " output" +
                                 (Outputs == 1 ? "" : "s") + ", not " +
                                 Twine(S.Outputs.size()) + " (" +
                                 describeClass(S.Class) + ")");
    return Error::success();
  }

  Error rank(StringRef Field, const Tensor &T, size_t Rank,
             StringRef Expected) {
    if (T.Shape.size() == Rank)
      return Error::success();
    return fail((Field + ".shape").str(), "'" + T.Name + "' is " +
                                              shapeText(T) + "; a " + Cls +
                                              " expects " + Expected);
  }

  Error floating() {
    for (const auto *List : {&S.Inputs, &S.Outputs})
      for (size_t I = 0; I < List->size(); ++I)
        if (!isFloating((*List)[I].Type))
          return fail(((List == &S.Inputs ? "inputs[" : "outputs[") + Twine(I) +
                       "].type")
                          .str(),
                      "a " + Cls + " is written for float or double");
    return Error::success();
  }

  /// Every tensor of the first input's element type.
  Error sameType() {
    ElementType T = S.Inputs[0].Type;
    for (const auto *List : {&S.Inputs, &S.Outputs})
      for (size_t I = 0; I < List->size(); ++I)
        if ((*List)[I].Type != T)
          return fail(((List == &S.Inputs ? "inputs[" : "outputs[") + Twine(I) +
                       "].type")
                          .str(),
                      "is " + elementTypeName((*List)[I].Type) +
                          " but inputs[0] is " + elementTypeName(T) + "; a " +
                          Cls + " uses one element type");
    return Error::success();
  }

  Error sameShape(StringRef Field, const Tensor &T, const Tensor &Like,
                  StringRef LikeField) {
    bool Same = T.Shape.size() == Like.Shape.size();
    for (size_t I = 0; Same && I < T.Shape.size(); ++I)
      Same = T.Shape[I].sameAs(Like.Shape[I]);
    if (Same)
      return Error::success();
    return fail(
        (Field + ".shape").str(),
        "'" + T.Name + "' is " + shapeText(T) + " but " + LikeField + " ('" +
            Like.Name + "') is " + shapeText(Like) + "; a " + Cls + "'s " +
            (LikeField.starts_with("inputs") && Field.starts_with("inputs")
                 ? "inputs have"
                 : "input and output have") +
            " one shape");
  }

  /// Field's shape[I] must be the same dimension as Other's shape[J].
  Error sameDim(StringRef Field, size_t I, StringRef Other, size_t J,
                StringRef Why) {
    const Tensor &A = tensor(Field), &B = tensor(Other);
    if (A.Shape[I].sameAs(B.Shape[J]))
      return Error::success();
    return fail((Field + ".shape[" + Twine(I) + "]").str(),
                "'" + dimRef(A.Shape[I]) + "' must be the dimension '" +
                    dimRef(B.Shape[J]) + "' of " + Other + ".shape[" +
                    Twine(J) + "]: " + Why);
  }

  const Tensor &tensor(StringRef Field) {
    unsigned I = Field.back() == ']' ? Field[Field.size() - 2] - '0' : 0;
    return Field.starts_with("inputs") ? S.Inputs[I] : S.Outputs[I];
  }

  Error noExprOrOp() {
    if (!S.Expr.empty())
      return fail("expr", "a " + Cls + " takes no expression");
    if (!S.Op.empty())
      return fail("op", "a " + Cls + " takes no op");
    return Error::success();
  }

  Error checkExpr(bool Required) {
    if (S.Expr.empty()) {
      if (Required)
        return fail("expr", "missing: with " + Twine(S.Inputs.size()) +
                                " inputs, say how they combine, e.g. \"" +
                                S.Inputs[0].Name + " * " + S.Inputs[1].Name +
                                "\"");
      return Error::success();
    }
    for (char C : S.Expr)
      if (C == ';' || C == '{' || C == '}' || C == '#' || C == '\n' ||
          C == '"' || C == '\'' || C == '\\')
        return fail("expr", "must be one C++ expression (no ';', braces, "
                            "quotes, '#' or line breaks)");
    return Error::success();
  }

  Error sameShapes() {
    for (size_t I = 1; I < S.Inputs.size(); ++I)
      if (Error E = sameShape(("inputs[" + Twine(I) + "]").str(), S.Inputs[I],
                              S.Inputs[0], "inputs[0]"))
        return E;
    return Error::success();
  }

  Error checkMap() {
    if (Error E = counts(S.Inputs.size(), 1))
      return E;
    if (S.Outputs[0].Shape.empty())
      return fail("outputs[0].shape", "a map's output has at least one "
                                      "dimension");
    if (Error E = sameShapes())
      return E;
    if (Error E =
            sameShape("outputs[0]", S.Outputs[0], S.Inputs[0], "inputs[0]"))
      return E;
    if (!S.Op.empty())
      return fail("op", "a map takes no op; its expression is expr");
    return checkExpr(S.Inputs.size() > 1);
  }

  Error checkOp(ArrayRef<StringRef> Ops) {
    if (S.Op.empty() || is_contained(Ops, StringRef(S.Op)))
      return Error::success();
    return fail("op", "unknown op '" + S.Op + "' for a " + Cls + " (" +
                          join(Ops, ", ") + ")");
  }

  Error checkReduce() {
    if (Error E = counts(S.Inputs.size(), 1))
      return E;
    if (Error E = sameShapes())
      return E;
    if (S.Inputs[0].Shape.empty())
      return fail("inputs[0].shape", "a reduce's inputs have at least one "
                                     "dimension");
    if (!all_of(S.Outputs[0].Shape,
                [](const Dim &D) { return !D.isNamed() && D.Value == 1; }))
      return fail("outputs[0].shape", "'" + S.Outputs[0].Name + "' is " +
                                          shapeText(S.Outputs[0]) +
                                          "; a reduce writes one value: [] "
                                          "or [1]");
    if (Error E = checkOp({"sum", "max", "min"}))
      return E;
    return checkExpr(S.Inputs.size() > 1);
  }

  Error checkRowReduce() {
    if (Error E = counts(S.Inputs.size(), 1))
      return E;
    if (Error E = rank("inputs[0]", S.Inputs[0], 2, "[rows, cols]"))
      return E;
    if (Error E = sameShapes())
      return E;
    if (Error E = rank("outputs[0]", S.Outputs[0], 1, "[rows]"))
      return E;
    if (Error E = sameDim("outputs[0]", 0, "inputs[0]", 0,
                          "a row-reduce writes one value per row"))
      return E;
    if (Error E = checkOp({"sum", "max", "min", "mean"}))
      return E;
    if (S.Op == "mean" && !isFloating(S.Outputs[0].Type))
      return fail("op", "a mean needs a float or double output");
    return checkExpr(S.Inputs.size() > 1);
  }

  Error checkStencil(size_t Rank) {
    if (Error E = counts(1, 1))
      return E;
    if (Error E = floating())
      return E;
    if (Error E = sameType())
      return E;
    if (Error E = rank("inputs[0]", S.Inputs[0], Rank,
                       Rank == 3 ? "[depth, rows, cols]" : "[rows, cols]"))
      return E;
    if (Error E =
            sameShape("outputs[0]", S.Outputs[0], S.Inputs[0], "inputs[0]"))
      return E;
    if (!S.Op.empty())
      return fail("op", "a " + Cls + " takes no op; its expression is expr");
    if (Error E = checkExpr(false))
      return E;
    std::vector<std::vector<int>> Offsets;
    return stencilOffsets(S, &Offsets);
  }

  const Spec &S;
  std::string Cls;
};

} // namespace

Error checkClass(const Spec &S) { return ClassChecker(S).check(); }

} // namespace synth
} // namespace optiml
