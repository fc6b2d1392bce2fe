//===- Spec.cpp - Reading and validating a synthesis spec -----------------===//
//
// nlohmann/json stays here, at the boundary: the document (JSON, or YAML
// converted by SpecYAML.cpp) is walked once, field by field, into a typed
// Spec; every failure becomes an Error naming the field, and no exception
// leaves this file.
//
//===----------------------------------------------------------------------===//

#include "optiml/Synth/Spec.h"
#include "SpecInternal.h"
#include "optiml/Support/FileUtil.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include <cmath>
#include <limits>

using namespace llvm;
using json = nlohmann::ordered_json;

namespace optiml {
namespace synth {

StringRef elementTypeName(ElementType T) {
  switch (T) {
  case ElementType::Float:
    return "float";
  case ElementType::Double:
    return "double";
  case ElementType::Int:
    return "int";
  }
  llvm_unreachable("unknown element type");
}

bool isFloating(ElementType T) { return T != ElementType::Int; }

const Tensor *Spec::findTensor(StringRef N) const {
  for (const auto *List : {&Inputs, &Outputs})
    for (const Tensor &T : *List)
      if (T.Name == N)
        return &T;
  return nullptr;
}

int64_t Spec::sizeOf(const Dim &D) const {
  if (!D.isNamed())
    return D.Value;
  for (const auto &[Name, Value] : Sizes)
    if (Name == D.Name)
      return Value;
  return 0;
}

std::string referenceParameters(const Spec &S) {
  std::string Sig;
  auto Add = [&](const Twine &P) {
    Sig += (Sig.empty() ? "" : ", ") + P.str();
  };
  for (const Tensor &T : S.Inputs)
    Add("const " + elementTypeName(T.Type) + " *" + T.Name);
  for (const Tensor &T : S.Outputs)
    Add(elementTypeName(T.Type) + " *" + T.Name);
  for (const auto &Size : S.Sizes)
    Add("int " + Size.first);
  return Sig;
}

Error specError(StringRef Path, StringRef Field, const Twine &Message) {
  std::string Text = Path.str() + ": ";
  if (!Field.empty())
    Text += Field.str() + ": ";
  Text += Message.str();
  return createStringError(inconvertibleErrorCode(), "%s", Text.c_str());
}

bool isUsableName(StringRef Name, std::string &Why) {
  static const Regex Identifier("^[A-Za-z_][A-Za-z0-9_]*$");
  if (!Identifier.match(Name)) {
    Why = "is not a C identifier (letters, digits and '_', not starting "
          "with a digit)";
    return false;
  }
  // C++ keywords and types, CUDA's built-in variables, and the names the
  // generated program and its kernels use for their own locals.
  static const StringSet<> Reserved = {
      "alignas",   "alignof",   "asm",       "auto",     "bool",
      "break",     "case",      "catch",     "char",     "class",
      "const",     "constexpr", "continue",  "default",  "delete",
      "do",        "double",    "else",      "enum",     "explicit",
      "extern",    "false",     "float",     "for",      "friend",
      "goto",      "if",        "inline",    "int",      "long",
      "mutable",   "namespace", "new",       "noexcept", "nullptr",
      "operator",  "private",   "protected", "public",   "register",
      "return",    "short",     "signed",    "sizeof",   "static",
      "struct",    "switch",    "template",  "this",     "throw",
      "true",      "try",       "typedef",   "typename", "union",
      "unsigned",  "using",     "virtual",   "void",     "volatile",
      "while",     "size_t",    "std",       "main",     "threadIdx",
      "blockIdx",  "blockDim",  "gridDim",   "warpSize", "dim3",
      "reference", "seed",      "check",     "argc",     "argv",
      "i",         "idx",       "row",       "col",      "acc",
      "mx",        "tid",       "stride",    "partial",  "tile",
      "p",         "j",         "bin",       "init",     "runOnDevice",
      "ok",        "abs_tol",   "rel_tol",   "block",    "grid",
      "blocks",    "threads",   "expf",      "exp",      "fmaxf",
      "fminf",     "fmax",      "fmin",      "max",      "min",
      "abs",       "fabs",      "sqrt",      "sqrtf"};
  if (Reserved.contains(Name)) {
    Why = "is a name the generated program uses itself";
    return false;
  }
  for (StringRef Prefix : {"optiml", "d_", "h_", "ref_", "cuda", "__"})
    if (Name.starts_with(Prefix)) {
      Why = ("starts with '" + Prefix +
             "', which the generated program "
             "reserves")
                .str();
      return false;
    }
  return true;
}

//===--------------------------------------------------------------------===//
// Classes and their words
//===--------------------------------------------------------------------===//

namespace {
struct ClassWords {
  ProgramClass Class;
  StringRef Name;
  /// More specific classes win over less specific ones named in the same
  /// request ("row-wise softmax" is softmax, not a row reduction; "sum of
  /// each row" a row reduction, not a full one).
  unsigned Tier;
  std::vector<StringRef> Words;
};
} // namespace

static const std::vector<ClassWords> &classWords() {
  static const std::vector<ClassWords> Table = {
      {ProgramClass::Map,
       "map",
       3,
       {"elementwise", "element-wise", "each element", "every element", "map",
        "saxpy", "axpy", "scale", "add two", "per element"}},
      {ProgramClass::Reduce,
       "reduce",
       2,
       {"reduction", "reduce", "sum of", "total", "dot product", "maximum",
        "minimum", "norm"}},
      {ProgramClass::RowReduce,
       "row-reduce",
       1,
       {"row-wise", "rowwise", "per row", "each row", "every row", "row sum",
        "row max", "row mean", "row-sum", "row-max"}},
      {ProgramClass::Softmax, "softmax", 0, {"softmax", "soft-max"}},
      {ProgramClass::MatVec,
       "matvec",
       0,
       {"matrix-vector", "matrix vector", "gemv", "matvec", "mat-vec"}},
      {ProgramClass::Gemm,
       "gemm",
       0,
       {"gemm", "matmul", "matrix multiply", "matrix multiplication",
        "matrix product", "matrix-matrix", "sgemm", "dgemm"}},
      {ProgramClass::Stencil2D,
       "stencil2d",
       1,
       {"stencil", "jacobi", "laplacian", "blur", "5-point", "five-point"}},
      {ProgramClass::Stencil3D,
       "stencil3d",
       0,
       {"3d stencil", "3-d stencil", "stencil3d", "7-point", "seven-point",
        "3d jacobi", "3d laplacian", "3d grid", "volume"}},
      {ProgramClass::Histogram,
       "histogram",
       0,
       {"histogram", "bin count", "count occurrences"}},
      {ProgramClass::Transpose, "transpose", 0, {"transpose"}},
      {ProgramClass::Scan,
       "scan",
       0,
       {"scan", "prefix sum", "prefix-sum", "cumulative sum", "cumsum",
        "running total"}},
      {ProgramClass::Gather,
       "gather",
       0,
       {"gather", "indexed read", "lookup", "permute", "permutation"}},
  };
  return Table;
}

ArrayRef<ProgramClass> allClasses() {
  static const ProgramClass All[] = {
      ProgramClass::Map,       ProgramClass::Reduce,
      ProgramClass::RowReduce, ProgramClass::Softmax,
      ProgramClass::MatVec,    ProgramClass::Gemm,
      ProgramClass::Stencil2D, ProgramClass::Stencil3D,
      ProgramClass::Histogram, ProgramClass::Gather,
      ProgramClass::Scan,      ProgramClass::Transpose};
  return All;
}

StringRef className(ProgramClass C) {
  for (const ClassWords &W : classWords())
    if (W.Class == C)
      return W.Name;
  llvm_unreachable("unknown class");
}

std::optional<ProgramClass> parseClassName(StringRef Name) {
  for (const ClassWords &W : classWords())
    if (W.Name == Name)
      return W.Class;
  return std::nullopt;
}

/// Whether \p Words appears in \p Text at word boundaries.
static bool containsWords(StringRef Text, StringRef Words) {
  for (size_t Pos = Text.find(Words); Pos != StringRef::npos;
       Pos = Text.find(Words, Pos + 1)) {
    bool StartOk = Pos == 0 || !isAlnum(Text[Pos - 1]);
    size_t End = Pos + Words.size();
    // A plural or a verb's -s/-es/-ed still names the class ("transposes").
    while (End < Text.size() && End < Pos + Words.size() + 2 &&
           (Text[End] == 's' || Text[End] == 'e' || Text[End] == 'd'))
      ++End;
    bool EndOk = End >= Text.size() || !isAlnum(Text[End]);
    if (StartOk && EndOk)
      return true;
  }
  return false;
}

static std::string classList() {
  std::string L;
  for (ProgramClass C : allClasses())
    L += (L.empty() ? "" : ", ") + className(C).str();
  return L;
}

Expected<ProgramClass> inferClass(StringRef Request) {
  std::string Text = Request.lower();
  std::optional<unsigned> BestTier;
  std::vector<const ClassWords *> Found;
  for (const ClassWords &W : classWords()) {
    if (!any_of(W.Words,
                [&](StringRef Word) { return containsWords(Text, Word); }))
      continue;
    if (BestTier && W.Tier > *BestTier)
      continue;
    if (!BestTier || W.Tier < *BestTier)
      Found.clear();
    BestTier = W.Tier;
    Found.push_back(&W);
  }
  if (Found.empty())
    return createStringError(
        inconvertibleErrorCode(),
        "cannot tell from the request which kind of program it asks for; "
        "set \"class\" in the spec to one of: %s",
        classList().c_str());
  if (Found.size() > 1) {
    std::string Names;
    for (const ClassWords *W : Found)
      Names += (Names.empty() ? "'" : " and '") + W->Name.str() + "'";
    return createStringError(inconvertibleErrorCode(),
                             "the request names more than one kind of "
                             "program (%s); set \"class\" in the spec to the "
                             "one meant",
                             Names.c_str());
  }
  return Found.front()->Class;
}

//===--------------------------------------------------------------------===//
// Validation
//===--------------------------------------------------------------------===//

namespace {

/// Walks the document; the first problem stops it.
class Reader {
public:
  explicit Reader(StringRef Path) : Path(Path) {}

  Error read(const json &Doc, StringRef Request, Spec &S) {
    if (!Doc.is_object())
      return fail("", "a spec is an object with the fields inputs, outputs, "
                      "sizes and reference (docs/synthesize.md)");
    static const StringRef Known[] = {
        "class",     "request", "name", "inputs",    "outputs", "sizes",
        "reference", "expr",    "op",   "tolerance", "seed"};
    for (const auto &[Key, Value] : Doc.items())
      if (!is_contained(Known, StringRef(Key)))
        return fail(Key, "unknown field (the fields are class, request, "
                         "name, inputs, outputs, sizes, reference, expr, op, "
                         "tolerance and seed)");
    S.Path = Path.str();

    // Sizes first: the shapes refer to them.
    if (!Doc.contains("sizes"))
      return fail("sizes", "missing: give the size of every named dimension, "
                           "e.g. {\"rows\": 8192, \"cols\": 1024}");
    if (Error E = readSizes(Doc["sizes"], S))
      return E;
    for (StringRef List : {"inputs", "outputs"}) {
      auto &Tensors = List == "inputs" ? S.Inputs : S.Outputs;
      if (!Doc.contains(List.str()))
        return fail(List, "missing: a list of {name, type, shape}");
      const json &Arr = Doc[List.str()];
      if (!Arr.is_array() || Arr.empty())
        return fail(List, "must be a non-empty list of {name, type, shape}");
      for (size_t I = 0; I < Arr.size(); ++I) {
        Tensor T;
        std::string Field = (List + "[" + Twine(I) + "]").str();
        if (Error E = readTensor(Arr[I], Field, List == "inputs", S, T))
          return E;
        if (S.findTensor(T.Name))
          return fail(Field + ".name",
                      "'" + T.Name + "' names two inputs or outputs");
        if (any_of(S.Sizes, [&](auto &P) { return P.first == T.Name; }))
          return fail(Field + ".name",
                      "'" + T.Name + "' is also the name of a dimension");
        Tensors.push_back(std::move(T));
      }
    }
    for (const auto &[Name, Value] : S.Sizes)
      if (!used(S, Name))
        return fail("sizes." + Name,
                    "no input or output has the dimension '" + Name + "'");

    if (!Doc.contains("reference"))
      return fail("reference",
                  "missing: the generated program checks itself against "
                  "it; give a C++ function void reference(" +
                      signature(S) + ")");
    const json &Ref = Doc["reference"];
    if (!Ref.is_string() || trimmed(Ref).empty())
      return fail("reference",
                  "must be the text of a C++ function void reference(" +
                      signature(S) + ")");
    S.Reference = Ref.get<std::string>();
    static const Regex Defines("(^|[^A-Za-z0-9_])reference[ \t\n]*\\(");
    if (!Defines.match(S.Reference))
      return fail("reference",
                  "defines no function named 'reference'; the program calls "
                  "void reference(" +
                      signature(S) + ")");
    if (StringRef(S.Reference).contains("#"))
      return fail("reference", "may hold no preprocessor directive (the "
                               "program already includes <cmath>, "
                               "<algorithm>, <vector> and <cstdint>)");

    for (StringRef Field : {"class", "request", "name", "expr", "op"})
      if (Doc.contains(Field.str()) && !Doc[Field.str()].is_string())
        return fail(Field, "must be a string");
    if (!Request.empty())
      S.Request = Request.str();
    else if (Doc.contains("request"))
      S.Request = Doc["request"].get<std::string>();
    if (Doc.contains("class")) {
      std::string C = Doc["class"].get<std::string>();
      auto PC = parseClassName(C);
      if (!PC)
        return fail("class",
                    "unknown class '" + C + "' (one of: " + classList() + ")");
      S.Class = *PC;
    } else {
      if (S.Request.empty())
        return fail("class", "missing, and there is no request to infer it "
                             "from: set \"class\" (one of: " +
                                 classList() +
                                 ") or give the request in words");
      auto PC = inferClass(S.Request);
      if (!PC)
        return fail("", toString(PC.takeError()));
      S.Class = *PC;
      S.ClassInferred = true;
    }
    if (Doc.contains("name")) {
      S.Name = Doc["name"].get<std::string>();
      std::string Why;
      if (!isUsableName(S.Name, Why))
        return fail("name", "'" + S.Name + "' " + Why);
    }
    if (Doc.contains("expr"))
      S.Expr = Doc["expr"].get<std::string>();
    if (Doc.contains("op"))
      S.Op = Doc["op"].get<std::string>();
    if (Doc.contains("tolerance"))
      if (Error E = readTolerance(Doc["tolerance"], S))
        return E;
    if (Doc.contains("seed")) {
      const json &Seed = Doc["seed"];
      if (!Seed.is_number_integer() || Seed.get<int64_t>() < 0 ||
          Seed.get<int64_t>() > std::numeric_limits<unsigned>::max())
        return fail("seed", "must be a non-negative integer");
      S.Seed = Seed.get<unsigned>();
    }
    return Error::success();
  }

private:
  Error fail(StringRef Field, const Twine &Msg) {
    return specError(Path, Field, Msg);
  }

  static StringRef trimmed(const json &J) {
    return StringRef(J.get_ref<const std::string &>()).trim();
  }

  Error readSizes(const json &Sizes, Spec &S) {
    if (!Sizes.is_object() || Sizes.empty())
      return fail("sizes", "must map each named dimension to its size, e.g. "
                           "{\"rows\": 8192, \"cols\": 1024}");
    for (const auto &[Name, Value] : Sizes.items()) {
      std::string Field = "sizes." + Name, Why;
      if (!isUsableName(Name, Why))
        return fail(Field, "'" + Name + "' " + Why);
      if (!Value.is_number_integer() || Value.get<int64_t>() < 1)
        return fail(Field, "must be a positive integer");
      if (Value.get<int64_t>() > std::numeric_limits<int>::max())
        return fail(Field, "is larger than the programs' int sizes allow");
      S.Sizes.emplace_back(Name, Value.get<int64_t>());
    }
    return Error::success();
  }

  Error readTensor(const json &J, StringRef Field, bool IsInput, Spec &S,
                   Tensor &T) {
    if (!J.is_object())
      return fail(Field, "must be an object {name, type, shape}");
    for (const auto &[Key, Value] : J.items())
      if (Key != "name" && Key != "type" && Key != "shape" &&
          !(IsInput && Key == "range"))
        return fail((Field + "." + Key).str(),
                    Twine("unknown field (") +
                        (IsInput ? "name, type, shape, range"
                                 : "name, type, "
                                   "shape") +
                        ")");
    if (!J.contains("name") || !J["name"].is_string())
      return fail((Field + ".name").str(), "missing: a name for it");
    T.Name = J["name"].get<std::string>();
    std::string Why;
    if (!isUsableName(T.Name, Why))
      return fail((Field + ".name").str(), "'" + T.Name + "' " + Why);
    if (!J.contains("type") || !J["type"].is_string())
      return fail((Field + ".type").str(),
                  "missing: the element type (float, double or int)");
    std::string Type = J["type"].get<std::string>();
    auto ET = StringSwitch<std::optional<ElementType>>(Type)
                  .Cases({"float", "float32", "f32"}, ElementType::Float)
                  .Cases({"double", "float64", "f64"}, ElementType::Double)
                  .Cases({"int", "int32", "i32"}, ElementType::Int)
                  .Default(std::nullopt);
    if (!ET) {
      bool Half =
          StringRef(Type).contains("half") || StringRef(Type).contains("16");
      return fail((Field + ".type").str(),
                  "unknown element type '" + Type + "'" +
                      (Half ? " (16-bit types are not supported yet; use "
                              "float, double or int)"
                            : " (float, double or int)"));
    }
    T.Type = *ET;
    if (!J.contains("shape"))
      return fail((Field + ".shape").str(),
                  "missing: a list of named dimensions or numbers, e.g. "
                  "[\"rows\", \"cols\"] ([] for a single value)");
    const json &Shape = J["shape"];
    if (!Shape.is_array())
      return fail((Field + ".shape").str(),
                  "must be a list of named dimensions or numbers");
    for (size_t I = 0; I < Shape.size(); ++I) {
      const json &D = Shape[I];
      Dim Dm;
      if (D.is_string()) {
        Dm.Name = D.get<std::string>();
        if (!any_of(S.Sizes, [&](auto &P) { return P.first == Dm.Name; }))
          return fail((Field + ".shape").str(),
                      "dimension '" + Dm.Name + "' has no size in 'sizes'");
      } else if (D.is_number_integer() && D.get<int64_t>() >= 1 &&
                 D.get<int64_t>() <= std::numeric_limits<int>::max()) {
        Dm.Value = D.get<int64_t>();
      } else {
        return fail((Field + ".shape[" + Twine(I) + "]").str(),
                    "must be a dimension's name or a positive integer");
      }
      T.Shape.push_back(std::move(Dm));
    }
    if (IsInput && J.contains("range")) {
      const json &R = J["range"];
      if (!R.is_array() || R.size() != 2 || !R[0].is_number() ||
          !R[1].is_number() || !(R[0].get<double>() < R[1].get<double>()))
        return fail((Field + ".range").str(),
                    "must be [lo, hi] with lo < hi (values are drawn from "
                    "[lo, hi))");
      if (T.Type == ElementType::Int &&
          (!R[0].is_number_integer() || !R[1].is_number_integer()))
        return fail((Field + ".range").str(),
                    "must hold integers for an int input");
      T.Range = {R[0].get<double>(), R[1].get<double>()};
    }
    return Error::success();
  }

  Error readTolerance(const json &J, Spec &S) {
    auto Valid = [](const json &V) {
      return V.is_number() && V.get<double>() >= 0 &&
             std::isfinite(V.get<double>());
    };
    Tolerance T;
    if (J.is_number()) {
      if (!Valid(J))
        return fail("tolerance", "must be a non-negative number");
      T.Abs = T.Rel = J.get<double>();
    } else if (J.is_object()) {
      for (const auto &[Key, Value] : J.items()) {
        if (Key != "abs" && Key != "rel")
          return fail("tolerance." + Key, "unknown field (abs, rel)");
        if (!Valid(Value))
          return fail("tolerance." + Key, "must be a non-negative number");
        (Key == "abs" ? T.Abs : T.Rel) = Value.get<double>();
      }
    } else {
      return fail("tolerance", "must be a number (absolute and relative) or "
                               "{\"abs\": A, \"rel\": R}");
    }
    S.Tol = T;
    return Error::success();
  }

  static bool used(const Spec &S, StringRef Name) {
    for (const auto *List : {&S.Inputs, &S.Outputs})
      for (const Tensor &T : *List)
        for (const Dim &D : T.Shape)
          if (D.Name == Name)
            return true;
    return false;
  }

  static std::string signature(const Spec &S) {
    if (S.Inputs.empty() && S.Outputs.empty())
      return "inputs..., outputs..., sizes...";
    return referenceParameters(S);
  }

  StringRef Path;
};

} // namespace

Expected<Spec> parseSpec(StringRef Text, StringRef Path, StringRef Request) {
  StringRef Ext = sys::path::extension(Path);
  json Doc;
  if (Ext.equals_insensitive(".yaml") || Ext.equals_insensitive(".yml")) {
    auto Y = yamlToJson(Text, Path);
    if (!Y)
      return Y.takeError();
    Doc = std::move(*Y);
  } else {
    try {
      Doc = json::parse(Text.begin(), Text.end());
    } catch (const json::parse_error &E) {
      return specError(Path, "",
                       "not valid JSON at byte " + Twine(E.byte) +
                           " (a .yaml or .yml file is read as YAML)");
    } catch (const json::exception &E) {
      // A number out of range, for one.
      return specError(Path, "", Twine("not valid JSON: ") + E.what());
    }
  }
  Spec S;
  try {
    Reader R(Path);
    if (Error E = R.read(Doc, Request, S))
      return std::move(E);
  } catch (const json::exception &E) {
    // The reader checks every type before it converts; this is a backstop.
    return specError(Path, "", Twine("malformed spec: ") + E.what());
  }
  return S;
}

Expected<Spec> readSpec(StringRef Path, StringRef Request) {
  auto Text = readFile(Path);
  if (!Text)
    return Text.takeError();
  return parseSpec(*Text, Path, Request);
}

} // namespace synth
} // namespace optiml
