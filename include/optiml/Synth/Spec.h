//===- Spec.h - What a synthesized program must compute ---------*- C++ -*-===//
//
// `clang-optiml synthesize` starts from a request in words and a spec file
// (JSON, or YAML read with LLVM's own parser into the same structure): the
// program's inputs and outputs (names, element types, shapes over named
// dimensions), the sizes of those dimensions, a reference function over host
// arrays that the generated program calls to check itself, and a tolerance.
// The format is in docs/synthesize.md.
//
// Parsing validates everything the spec alone can say (fields, types,
// dimensions, the reference's presence); what a class expects of the shapes
// is checked by the template library (Templates.h). Every error names the
// file and the field: "spec.json: outputs[0].shape: dimension 'cols' has no
// size in 'sizes'".
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SYNTH_SPEC_H
#define OPTIML_SYNTH_SPEC_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace optiml {
namespace synth {

enum class ElementType { Float, Double, Int };

/// "float", "double", "int": the C++ spelling.
llvm::StringRef elementTypeName(ElementType T);
bool isFloating(ElementType T);

/// The kinds of program the template library writes.
enum class ProgramClass {
  Map,       ///< out[i] = f(in1[i], in2[i], ...)
  Reduce,    ///< one value from every element (sum, max, min)
  RowReduce, ///< one value per row of a matrix
  Softmax,   ///< each row of a matrix normalised
  MatVec,    ///< y = A x
  Gemm,      ///< C = A B
  Stencil2D, ///< each interior cell from its neighbourhood
  Stencil3D, ///< the same over a 3D grid
  Histogram, ///< counts of integer values
  Gather,    ///< out[i] = src[index[i]]
  Scan,      ///< inclusive prefix sums
  Transpose, ///< out = in^T
};

/// Every class, in the order --help and the docs list them.
llvm::ArrayRef<ProgramClass> allClasses();
/// The name a spec's "class" uses: "map", "row-reduce", "stencil2d", ...
llvm::StringRef className(ProgramClass C);
std::optional<ProgramClass> parseClassName(llvm::StringRef Name);

/// One entry of a shape: a named dimension (its size in Spec::Sizes) or a
/// fixed number.
struct Dim {
  std::string Name; ///< empty for a fixed number
  int64_t Value = 0;
  bool isNamed() const { return !Name.empty(); }
  /// Same name, or the same fixed number.
  bool sameAs(const Dim &O) const {
    return isNamed() ? Name == O.Name : !O.isNamed() && Value == O.Value;
  }
};

struct Tensor {
  std::string Name;
  ElementType Type = ElementType::Float;
  std::vector<Dim> Shape; ///< empty: a single value
  /// Inputs: the interval the generated values are drawn from, [lo, hi)
  /// (integers: lo..hi-1). Default [0, 1) for floating point, [0, 100) for
  /// integers.
  std::optional<std::pair<double, double>> Range;
};

struct Tolerance {
  double Abs = 0, Rel = 0;
};

struct Spec {
  /// The file as the user named it, for messages.
  std::string Path;
  /// The request in words (the command line's, else the spec's "request").
  std::string Request;
  ProgramClass Class = ProgramClass::Map;
  /// Whether Class came from the request's words rather than "class".
  bool ClassInferred = false;
  /// A name for the program and its kernel (default: the class, as an
  /// identifier).
  std::string Name;
  std::vector<Tensor> Inputs, Outputs;
  /// The named dimensions and their sizes, in the spec's order: the order
  /// of the reference's trailing `int` parameters and of the program's
  /// command-line arguments.
  std::vector<std::pair<std::string, int64_t>> Sizes;
  /// The reference: C++ text defining
  ///   void reference(const T *in..., T *out..., int size...);
  std::string Reference;
  /// Class-specific: map, reduce and row-reduce: an expression over the
  /// inputs' elements (by the inputs' names); stencil2d: an expression over
  /// neighbours, `in(-1, 0)` for the cell one row up.
  std::string Expr;
  /// reduce and row-reduce: sum (default), max, min; row-reduce also mean.
  std::string Op;
  /// Floating-point outputs are checked with |got - want| <= Abs + Rel *
  /// |want|; integers exactly. Default per element type (Templates.h).
  std::optional<Tolerance> Tol;
  /// The program's default input seed.
  unsigned Seed = 1;

  const Tensor *findTensor(llvm::StringRef Name) const;
  /// The size of a named dimension, or the fixed number.
  int64_t sizeOf(const Dim &D) const;
};

/// The reference's parameter list as the program calls it: "const float *x,
/// float *y, int rows, int cols".
std::string referenceParameters(const Spec &S);

/// Parses and validates a spec. \p Path names the file in messages; a name
/// ending in .yaml or .yml is read as YAML, anything else as JSON. \p
/// Request (may be empty) overrides the spec's "request"; the class comes
/// from "class", else from the request's words (inferClass).
llvm::Expected<Spec> parseSpec(llvm::StringRef Text, llvm::StringRef Path,
                               llvm::StringRef Request);

/// Reads \p Path and parses it (parseSpec).
llvm::Expected<Spec> readSpec(llvm::StringRef Path, llvm::StringRef Request);

/// The class a request in words asks for ("row-wise softmax over ..." ->
/// softmax). Errors when no class is named, or two equally specific ones
/// are (the message lists them and says to set "class").
llvm::Expected<ProgramClass> inferClass(llvm::StringRef Request);

} // namespace synth
} // namespace optiml

#endif
