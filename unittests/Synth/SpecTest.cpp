//===- SpecTest.cpp - Reading synthesis specs, and their errors -----------===//

#include "optiml/Synth/Spec.h"
#include "optiml/Synth/Templates.h"
#include "gtest/gtest.h"

using namespace llvm;

namespace optiml {
namespace synth {
namespace {

const char *const SoftmaxJson = R"js({
  "class": "softmax",
  "inputs": [{"name": "x", "type": "float", "shape": ["rows", "cols"]}],
  "outputs": [{"name": "y", "type": "float", "shape": ["rows", "cols"]}],
  "sizes": {"rows": 8192, "cols": 1024},
  "reference": "void reference(const float *x, float *y, int rows, int cols) {}",
  "tolerance": 1e-5
})js";

const char *const SoftmaxYaml = R"js(class: softmax
inputs:
  - {name: x, type: float, shape: [rows, cols]}
outputs:
  - name: y
    type: float
    shape: [rows, cols]
sizes:
  rows: 8192
  cols: 1024
reference: |
  void reference(const float *x, float *y, int rows, int cols) {}
tolerance: 1e-5
)js";

/// The error message of parsing \p Text as \p Path, or "" if it parsed.
std::string errorOf(StringRef Text, StringRef Path = "spec.json",
                    StringRef Request = "") {
  auto S = parseSpec(Text, Path, Request);
  if (S)
    return "";
  return toString(S.takeError());
}

/// The error of parsing and then checking the class, or "".
std::string classErrorOf(StringRef Text, StringRef Path = "spec.json") {
  auto S = parseSpec(Text, Path, "");
  if (!S)
    return "parse: " + toString(S.takeError());
  if (Error E = checkClass(*S))
    return toString(std::move(E));
  return "";
}

/// SoftmaxJson with \p From replaced by \p To (once).
std::string edited(StringRef From, StringRef To, StringRef Base = SoftmaxJson) {
  std::string S = Base.str();
  size_t At = S.find(From.str());
  EXPECT_NE(At, std::string::npos) << From.str();
  if (At != std::string::npos)
    S.replace(At, From.size(), To.str());
  return S;
}

TEST(SpecTest, ReadsJson) {
  auto S = parseSpec(SoftmaxJson, "spec.json", "");
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_EQ(S->Class, ProgramClass::Softmax);
  EXPECT_FALSE(S->ClassInferred);
  ASSERT_EQ(S->Inputs.size(), 1u);
  EXPECT_EQ(S->Inputs[0].Name, "x");
  EXPECT_EQ(S->Inputs[0].Type, ElementType::Float);
  ASSERT_EQ(S->Inputs[0].Shape.size(), 2u);
  EXPECT_EQ(S->Inputs[0].Shape[1].Name, "cols");
  ASSERT_EQ(S->Sizes.size(), 2u);
  // The spec's order: the reference's trailing parameters.
  EXPECT_EQ(S->Sizes[0], (std::pair<std::string, int64_t>("rows", 8192)));
  EXPECT_EQ(S->Sizes[1], (std::pair<std::string, int64_t>("cols", 1024)));
  ASSERT_TRUE(S->Tol.has_value());
  EXPECT_DOUBLE_EQ(S->Tol->Abs, 1e-5);
  EXPECT_DOUBLE_EQ(S->Tol->Rel, 1e-5);
  EXPECT_FALSE(bool(checkClass(*S)));
}

TEST(SpecTest, YamlReadsAsTheSameStructure) {
  auto J = parseSpec(SoftmaxJson, "spec.json", "");
  auto Y = parseSpec(SoftmaxYaml, "spec.yaml", "");
  ASSERT_TRUE(bool(J)) << toString(J.takeError());
  ASSERT_TRUE(bool(Y)) << toString(Y.takeError());
  EXPECT_EQ(Y->Class, J->Class);
  EXPECT_EQ(Y->Sizes, J->Sizes);
  EXPECT_EQ(Y->Outputs[0].Name, "y");
  EXPECT_EQ(Y->Outputs[0].Shape.size(), 2u);
  EXPECT_EQ(StringRef(Y->Reference).trim(), StringRef(J->Reference).trim());
  EXPECT_DOUBLE_EQ(Y->Tol->Rel, J->Tol->Rel);
}

TEST(SpecTest, YamlQuotedNumbersStayStrings) {
  // A quoted "8192" is a string: the size must be a number.
  EXPECT_EQ(
      errorOf(edited("rows: 8192", "rows: \"8192\"", SoftmaxYaml), "spec.yaml"),
      "spec.yaml: sizes.rows: must be a positive integer");
}

TEST(SpecTest, MalformedDocuments) {
  EXPECT_EQ(errorOf("{\"class\": ", "spec.json")
                .rfind("spec.json: not valid JSON at byte", 0),
            0u);
  EXPECT_EQ(errorOf("[1, 2]"),
            "spec.json: a spec is an object with the fields inputs, outputs, "
            "sizes and reference (docs/synthesize.md)");
  std::string Y = errorOf("a: [1, 2\nb: {", "s.yml");
  EXPECT_EQ(Y.rfind("s.yml: not valid YAML: line ", 0), 0u) << Y;
  EXPECT_EQ(errorOf("a: 1\n---\nb: 2\n", "s.yaml"),
            "s.yaml: not a spec: more than one YAML document ('---'); a spec "
            "is one");
}

TEST(SpecTest, FuzzerFindings) {
  // A number too large for a double: nlohmann/json throws out_of_range.
  EXPECT_EQ(
      errorOf("{\"sizes\": 1e99999}").rfind("spec.json: not valid JSON: ", 0),
      0u);
  // A complex YAML key ('?') whose node points at no buffer.
  std::string Y = errorOf("# One [\n    ?   \"m\xb6,*(pe: float, shaxe  "
                          "\"\xff\tn:'a",
                          "s.yaml");
  EXPECT_EQ(Y.rfind("s.yaml: ", 0), 0u) << Y;
}

TEST(SpecTest, UnknownFields) {
  EXPECT_EQ(errorOf(edited("\"tolerance\"", "\"tolerence\"")),
            "spec.json: tolerence: unknown field (the fields are class, "
            "request, name, inputs, outputs, sizes, reference, expr, op, "
            "tolerance and seed)");
  EXPECT_EQ(errorOf(edited("\"type\": \"float\", \"shape\": [\"rows\", "
                           "\"cols\"]}],\n  \"outputs\"",
                           "\"type\": \"float\", \"shap\": 1}],\n  "
                           "\"outputs\"")),
            "spec.json: inputs[0].shap: unknown field (name, type, shape, "
            "range)");
}

TEST(SpecTest, ShapeNamesADimensionWithoutSize) {
  EXPECT_EQ(errorOf(edited("\"sizes\": {\"rows\": 8192, \"cols\": 1024}",
                           "\"sizes\": {\"rows\": 8192}")),
            "spec.json: inputs[0].shape: dimension 'cols' has no size in "
            "'sizes'");
}

TEST(SpecTest, OutputShapeNamesADimensionWithoutSize) {
  EXPECT_EQ(
      errorOf(edited("\"name\": \"y\", \"type\": \"float\", \"shape\": "
                     "[\"rows\", \"cols\"]",
                     "\"name\": \"y\", \"type\": \"float\", \"shape\": "
                     "[\"rows\", \"colz\"]")),
      "spec.json: outputs[0].shape: dimension 'colz' has no size in 'sizes'");
}

TEST(SpecTest, UnusedSize) {
  EXPECT_EQ(errorOf(edited("\"cols\": 1024}", "\"cols\": 1024, \"k\": 3}")),
            "spec.json: sizes.k: no input or output has the dimension 'k'");
}

TEST(SpecTest, BadSizes) {
  EXPECT_EQ(errorOf(edited("\"rows\": 8192,", "\"rows\": 0,")),
            "spec.json: sizes.rows: must be a positive integer");
  EXPECT_EQ(errorOf(edited("\"rows\": 8192,", "\"rows\": 1.5,")),
            "spec.json: sizes.rows: must be a positive integer");
  EXPECT_EQ(errorOf(edited("\"rows\": 8192,", "\"rows\": 4294967296,")),
            "spec.json: sizes.rows: is larger than the programs' int sizes "
            "allow");
  EXPECT_EQ(errorOf(edited("\"sizes\": {\"rows\": 8192, \"cols\": 1024},", "")),
            "spec.json: sizes: missing: give the size of every named "
            "dimension, e.g. {\"rows\": 8192, \"cols\": 1024}");
}

TEST(SpecTest, UnknownElementTypes) {
  EXPECT_EQ(errorOf(edited("\"type\": \"float\"", "\"type\": \"complex\"")),
            "spec.json: inputs[0].type: unknown element type 'complex' "
            "(float, double or int)");
  EXPECT_EQ(errorOf(edited("\"type\": \"float\"", "\"type\": \"half\"")),
            "spec.json: inputs[0].type: unknown element type 'half' (16-bit "
            "types are not supported yet; use float, double or int)");
  auto S = parseSpec(edited("\"type\": \"float\"", "\"type\": \"f64\""),
                     "spec.json", "");
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_EQ(S->Inputs[0].Type, ElementType::Double);
}

TEST(SpecTest, BadNames) {
  EXPECT_EQ(errorOf(edited("\"name\": \"x\"", "\"name\": \"2x\"")),
            "spec.json: inputs[0].name: '2x' is not a C identifier (letters, "
            "digits and '_', not starting with a digit)");
  EXPECT_EQ(errorOf(edited("\"name\": \"x\"", "\"name\": \"float\"")),
            "spec.json: inputs[0].name: 'float' is a name the generated "
            "program uses itself");
  EXPECT_EQ(errorOf(edited("\"name\": \"x\"", "\"name\": \"d_x\"")),
            "spec.json: inputs[0].name: 'd_x' starts with 'd_', which the "
            "generated program reserves");
  EXPECT_EQ(errorOf(edited("\"name\": \"y\"", "\"name\": \"x\"")),
            "spec.json: outputs[0].name: 'x' names two inputs or outputs");
  EXPECT_EQ(errorOf(edited("\"name\": \"y\"", "\"name\": \"rows\"")),
            "spec.json: outputs[0].name: 'rows' is also the name of a "
            "dimension");
}

TEST(SpecTest, MissingOrBadReference) {
  std::string NoRef = edited(
      ",\n  \"reference\": \"void reference(const float *x, float *y, int "
      "rows, int cols) {}\"",
      "");
  EXPECT_EQ(errorOf(NoRef),
            "spec.json: reference: missing: the generated program checks "
            "itself against it; give a C++ function void reference(const "
            "float *x, float *y, int rows, int cols)");
  EXPECT_EQ(errorOf(edited("void reference(", "void ref(")),
            "spec.json: reference: defines no function named 'reference'; "
            "the program calls void reference(const float *x, float *y, int "
            "rows, int cols)");
  EXPECT_EQ(
      errorOf(edited("void reference(", "#include <x>\\nvoid reference(")),
      "spec.json: reference: may hold no preprocessor directive (the "
      "program already includes <cmath>, <algorithm>, <vector> and "
      "<cstdint>)");
}

TEST(SpecTest, Tolerances) {
  auto S = parseSpec(edited("\"tolerance\": 1e-5",
                            "\"tolerance\": {\"abs\": 0.5, \"rel\": 0.25}"),
                     "spec.json", "");
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_DOUBLE_EQ(S->Tol->Abs, 0.5);
  EXPECT_DOUBLE_EQ(S->Tol->Rel, 0.25);
  EXPECT_EQ(errorOf(edited("\"tolerance\": 1e-5", "\"tolerance\": -1")),
            "spec.json: tolerance: must be a non-negative number");
  EXPECT_EQ(errorOf(edited("\"tolerance\": 1e-5",
                           "\"tolerance\": {\"absolute\": 1}")),
            "spec.json: tolerance.absolute: unknown field (abs, rel)");
  // The default: 1e-4 for float outputs.
  auto D = parseSpec(edited(",\n  \"tolerance\": 1e-5", ""), "spec.json", "");
  ASSERT_TRUE(bool(D)) << toString(D.takeError());
  EXPECT_DOUBLE_EQ(effectiveTolerance(*D).Rel, 1e-4);
}

TEST(SpecTest, InputRanges) {
  auto S = parseSpec(edited("\"shape\": [\"rows\", \"cols\"]}],\n  "
                            "\"outputs\"",
                            "\"shape\": [\"rows\", \"cols\"], \"range\": "
                            "[-2, 2]}],\n  \"outputs\""),
                     "spec.json", "");
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  ASSERT_TRUE(S->Inputs[0].Range.has_value());
  EXPECT_EQ(S->Inputs[0].Range->first, -2);
  EXPECT_EQ(errorOf(edited("\"shape\": [\"rows\", \"cols\"]}],\n  "
                           "\"outputs\"",
                           "\"shape\": [\"rows\", \"cols\"], \"range\": "
                           "[2, 2]}],\n  \"outputs\"")),
            "spec.json: inputs[0].range: must be [lo, hi] with lo < hi "
            "(values are drawn from [lo, hi))");
}

TEST(SpecTest, ClassFromTheRequest) {
  std::string NoClass = edited("\"class\": \"softmax\",", "");
  auto S = parseSpec(NoClass, "spec.json",
                     "row-wise softmax over an 8192 x 1024 float matrix");
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_EQ(S->Class, ProgramClass::Softmax);
  EXPECT_TRUE(S->ClassInferred);
  EXPECT_EQ(errorOf(NoClass),
            "spec.json: class: missing, and there is no request to infer it "
            "from: set \"class\" (one of: map, reduce, row-reduce, softmax, "
            "matvec, gemm, stencil2d, stencil3d, histogram, gather, scan, "
            "transpose) or "
            "give the request in words");
  EXPECT_EQ(errorOf(NoClass, "spec.json", "make it fast"),
            "spec.json: cannot tell from the request which kind of program "
            "it asks for; set \"class\" in the spec to one of: map, reduce, "
            "row-reduce, softmax, matvec, gemm, stencil2d, stencil3d, "
            "histogram, gather, scan, transpose");
  EXPECT_EQ(errorOf(NoClass, "spec.json", "transpose A, then a gemm"),
            "spec.json: the request names more than one kind of program "
            "('gemm' and 'transpose'); set \"class\" in the spec to the one "
            "meant");
  EXPECT_EQ(errorOf(edited("\"softmax\"", "\"softmaxx\"")),
            "spec.json: class: unknown class 'softmaxx' (one of: map, "
            "reduce, row-reduce, softmax, matvec, gemm, stencil2d, "
            "stencil3d, histogram, gather, scan, transpose)");
}

TEST(SpecTest, InferClassPrefersTheMoreSpecific) {
  auto C = [](StringRef R) {
    auto PC = inferClass(R);
    return PC ? className(*PC).str() : "error: " + toString(PC.takeError());
  };
  EXPECT_EQ(C("row-wise softmax over an 8192 x 1024 float matrix"), "softmax");
  EXPECT_EQ(C("the sum of each row of a matrix"), "row-reduce");
  EXPECT_EQ(C("sum of a vector of 2^24 floats"), "reduce");
  EXPECT_EQ(C("SGEMM, 4096 cubed"), "gemm");
  EXPECT_EQ(C("y = A x, a matrix-vector product"), "matvec");
  EXPECT_EQ(C("5-point Jacobi stencil"), "stencil2d");
  EXPECT_EQ(C("a 7-point stencil over a 3D grid"), "stencil3d");
  EXPECT_EQ(C("histogram of bytes"), "histogram");
  EXPECT_EQ(C("transposes a matrix"), "transpose");
  EXPECT_EQ(C("gather rows of a table by index"), "gather");
  EXPECT_EQ(C("the prefix sum of 2^24 ints"), "scan");
  EXPECT_EQ(C("elementwise saxpy"), "map");
}

TEST(SpecTest, DamagedDocumentsAreErrorsNotCrashes) {
  // Every prefix of a valid document, and every one with a byte changed to
  // a character that matters to the formats, parses to a spec or an error
  // (nlohmann/json would abort on a mistyped field if one were read
  // unchecked).
  const char Changes[] = {'"',  '{', '[', ':', ',', '1', '-',
                          '\n', '&', '*', '!', '|', '#'};
  for (StringRef Base : {StringRef(SoftmaxJson), StringRef(SoftmaxYaml)}) {
    StringRef Path = Base.starts_with("{") ? "s.json" : "s.yaml";
    for (size_t N = 0; N <= Base.size(); ++N) {
      auto S = parseSpec(Base.take_front(N), Path, "");
      if (S) {
        if (Error E = checkClass(*S))
          consumeError(std::move(E));
        else
          EXPECT_FALSE(generateProgram(*S, {"p.cu", {}}).empty());
      } else {
        EXPECT_EQ(toString(S.takeError()).rfind(Path.str() + ": ", 0), 0u);
      }
    }
    for (size_t I = 0; I < Base.size(); I += 3)
      for (char C : Changes) {
        std::string T = Base.str();
        T[I] = C;
        auto S = parseSpec(T, Path, "softmax");
        if (S) {
          if (Error E = checkClass(*S))
            consumeError(std::move(E));
          else
            generateProgram(*S, {"p.cu", {}});
        } else {
          consumeError(S.takeError());
        }
      }
  }
}

//===--------------------------------------------------------------------===//
// What each class expects
//===--------------------------------------------------------------------===//

const char *const GemmJson = R"js({
  "class": "gemm",
  "inputs": [{"name": "A", "type": "float", "shape": ["m", "k"]},
             {"name": "B", "type": "float", "shape": ["k", "n"]}],
  "outputs": [{"name": "C", "type": "float", "shape": ["m", "n"]}],
  "sizes": {"m": 512, "n": 256, "k": 128},
  "reference": "void reference(const float *A, const float *B, float *C, int m, int n, int k) {}"
})js";

TEST(ClassCheckTest, GemmShapes) {
  EXPECT_EQ(classErrorOf(GemmJson), "");
  EXPECT_EQ(classErrorOf(edited("[\"k\", \"n\"]", "[\"n\", \"k\"]", GemmJson)),
            "spec.json: inputs[1].shape[0]: 'n' must be the dimension 'k' of "
            "inputs[0].shape[1]: a gemm multiplies A [m, k] by B [k, n]");
  EXPECT_EQ(classErrorOf(edited("[\"m\", \"n\"]", "[\"n\", \"m\"]", GemmJson)),
            "spec.json: outputs[0].shape[0]: 'n' must be the dimension 'm' of "
            "inputs[0].shape[0]: C = A B is [m, n] for A [m, k]");
  EXPECT_EQ(classErrorOf(edited("[\"m\", \"k\"]", "[\"m\"]", GemmJson)),
            "spec.json: inputs[0].shape: 'A' is [m]; a gemm expects A [m, k]");
  EXPECT_EQ(classErrorOf(edited("\"shape\": [\"m\", \"n\"]",
                                "\"shape\": [\"m\", \"n\", \"k\"]", GemmJson)),
            "spec.json: outputs[0].shape: 'C' is [m, n, k]; a gemm expects C "
            "[m, n]");
  EXPECT_EQ(
      classErrorOf(edited("\"name\": \"C\", \"type\": \"float\"",
                          "\"name\": \"C\", \"type\": \"double\"", GemmJson)),
      "spec.json: outputs[0].type: is double but inputs[0] is float; a gemm "
      "uses one element type");
  EXPECT_EQ(
      classErrorOf(edited("\"name\": \"C\", \"type\": \"float\"",
                          "\"name\": \"C\", \"type\": \"int\"", GemmJson)),
      "spec.json: outputs[0].type: a gemm is written for float or double");
}

TEST(ClassCheckTest, Counts) {
  EXPECT_EQ(classErrorOf(edited("\"class\": \"gemm\"",
                                "\"class\": "
                                "\"transpose\"",
                                GemmJson)),
            "spec.json: inputs: a transpose has 1 input, not 2 (transpose: "
            "input [rows, cols] -> output [cols, rows])");
}

TEST(ClassCheckTest, SoftmaxShapeMismatch) {
  EXPECT_EQ(
      classErrorOf(edited("\"name\": \"y\", \"type\": \"float\", \"shape\": "
                          "[\"rows\", \"cols\"]",
                          "\"name\": \"y\", \"type\": \"float\", \"shape\": "
                          "[\"cols\", \"rows\"]")),
      "spec.json: outputs[0].shape: 'y' is [cols, rows] but inputs[0] ('x') "
      "is [rows, cols]; a softmax's input and output have one shape");
}

const char *const MapJson = R"js({
  "class": "map",
  "inputs": [{"name": "x", "type": "float", "shape": ["n"]},
             {"name": "y", "type": "float", "shape": ["n"]}],
  "outputs": [{"name": "z", "type": "float", "shape": ["n"]}],
  "sizes": {"n": 1000},
  "expr": "2.0f * x + y",
  "reference": "void reference(const float *x, const float *y, float *z, int n) {}"
})js";

TEST(ClassCheckTest, MapExpressions) {
  EXPECT_EQ(classErrorOf(MapJson), "");
  EXPECT_EQ(
      classErrorOf(edited(",\n  \"expr\": \"2.0f * x + y\"", "", MapJson)),
      "spec.json: expr: missing: with 2 inputs, say how they combine, "
      "e.g. \"x * y\"");
  EXPECT_EQ(classErrorOf(edited("2.0f * x + y", "x; y", MapJson)),
            "spec.json: expr: must be one C++ expression (no ';', braces, "
            "quotes, '#' or line breaks)");
  EXPECT_EQ(classErrorOf(edited("\"expr\"", "\"op\"", MapJson)),
            "spec.json: op: a map takes no op; its expression is expr");
  EXPECT_EQ(classErrorOf(edited("\"shape\": [\"n\"]}],\n  \"outputs\"",
                                "\"shape\": [7]}],\n  \"outputs\"", MapJson)),
            "spec.json: inputs[1].shape: 'y' is [7] but inputs[0] ('x') is "
            "[n]; a map's inputs have one shape");
}

TEST(ClassCheckTest, ReduceOutputAndOp) {
  std::string Reduce = R"js({"class": "reduce",
    "inputs": [{"name": "x", "type": "float", "shape": ["n"]}],
    "outputs": [{"name": "total", "type": "float", "shape": []}],
    "sizes": {"n": 1000}, "op": "sum",
    "reference": "void reference(const float *x, float *total, int n) {}"})js";
  EXPECT_EQ(classErrorOf(Reduce), "");
  EXPECT_EQ(classErrorOf(edited("\"shape\": []", "\"shape\": [\"n\"]", Reduce)),
            "spec.json: outputs[0].shape: 'total' is [n]; a reduce writes "
            "one value: [] or [1]");
  EXPECT_EQ(classErrorOf(edited("\"sum\"", "\"product\"", Reduce)),
            "spec.json: op: unknown op 'product' for a reduce (sum, max, "
            "min)");
}

TEST(ClassCheckTest, Stencil) {
  std::string Stencil = R"js({"class": "stencil2d",
    "inputs": [{"name": "u", "type": "float", "shape": ["rows", "cols"]}],
    "outputs": [{"name": "v", "type": "float", "shape": ["rows", "cols"]}],
    "sizes": {"rows": 64, "cols": 48},
    "expr": "u(0, 0) - 0.1f * (u(-1, 0) + u(+1, 0))",
    "reference": "void reference(const float *u, float *v, int rows, int cols) {}"})js";
  EXPECT_EQ(classErrorOf(Stencil), "");
  EXPECT_EQ(classErrorOf(edited("u(0, 0)", "u[0]", Stencil)),
            "spec.json: expr: 'u' must be read as u(di, dj) with integer "
            "offsets from -8 to 8, e.g. u(-1, 0) for the cell one row up");
  EXPECT_EQ(classErrorOf(edited("u(-1, 0)", "u(-1, j)", Stencil)),
            "spec.json: expr: 'u' must be read as u(di, dj) with integer "
            "offsets from -8 to 8, e.g. u(-1, 0) for the cell one row up");
}

TEST(ClassCheckTest, Histogram) {
  std::string Hist = R"js({"class": "histogram",
    "inputs": [{"name": "data", "type": "int", "shape": ["n"]}],
    "outputs": [{"name": "counts", "type": "int", "shape": ["bins"]}],
    "sizes": {"n": 100000, "bins": 256},
    "reference": "void reference(const int *data, int *counts, int n, int bins) {}"})js";
  EXPECT_EQ(classErrorOf(Hist), "");
  EXPECT_EQ(
      classErrorOf(edited("\"name\": \"counts\", \"type\": \"int\"",
                          "\"name\": \"counts\", \"type\": \"float\"", Hist)),
      "spec.json: outputs[0].type: a histogram's counts are int");
}

} // namespace
} // namespace synth
} // namespace optiml
