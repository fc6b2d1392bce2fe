//===- Expressions.cpp - The spec's expressions in kernel code ------------===//
//
// A spec's `expr` names inputs by their names (map, reductions) or reads
// neighbours as `u(di, dj)` (stencils); these turn them into indexed reads.
// The tokenizer knows just enough C++ for that: identifiers, numbers with
// suffixes and exponents, and single other characters.
//
//===----------------------------------------------------------------------===//

#include "SpecInternal.h"
#include "TemplatesInternal.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>
#include <cstdlib>

using namespace llvm;

namespace optiml {
namespace synth {

namespace {
/// A token of a spec expression, as far as the rewrites need: identifiers,
/// numbers (with suffixes and exponents), and single other characters.
struct Token {
  enum Kind { Identifier, Number, Other } K;
  StringRef Text;
};
} // namespace

static std::vector<Token> tokenize(StringRef E) {
  std::vector<Token> Out;
  size_t I = 0;
  while (I < E.size()) {
    size_t Start = I;
    char C = E[I];
    if (isAlpha(C) || C == '_') {
      while (I < E.size() && (isAlnum(E[I]) || E[I] == '_'))
        ++I;
      Out.push_back({Token::Identifier, E.slice(Start, I)});
    } else if (isDigit(C) ||
               (C == '.' && I + 1 < E.size() && isDigit(E[I + 1]))) {
      while (I < E.size() && (isAlnum(E[I]) || E[I] == '.' || E[I] == '_' ||
                              ((E[I] == '+' || E[I] == '-') &&
                               (E[I - 1] == 'e' || E[I - 1] == 'E'))))
        ++I;
      Out.push_back({Token::Number, E.slice(Start, I)});
    } else {
      Out.push_back({Token::Other, E.slice(Start, I + 1)});
      ++I;
    }
  }
  return Out;
}

static bool isInput(const Spec &S, StringRef Name) {
  return any_of(S.Inputs, [&](const Tensor &T) { return T.Name == Name; });
}

std::string indexInputs(StringRef Expr, const Spec &S, StringRef Index) {
  std::vector<Token> Toks = tokenize(Expr);
  std::string Out;
  for (size_t I = 0; I < Toks.size(); ++I) {
    const Token &T = Toks[I];
    bool Member =
        I > 0 &&
        (Toks[I - 1].Text == "." ||
         (Toks[I - 1].Text == ">" && I > 1 && Toks[I - 2].Text == "-"));
    if (T.K == Token::Identifier && !Member && isInput(S, T.Text))
      Out += (T.Text + "[" + Index + "]").str();
    else
      Out += T.Text;
  }
  return Out;
}

namespace {
/// A neighbour read `<input>(di, dj)` (3D: `<input>(dz, dy, dx)`) found in
/// a stencil expression: the tokens it spans and its offsets.
struct NeighbourRead {
  size_t First, Last; ///< token indices, inclusive
  std::vector<int> Offsets;
};
} // namespace

/// Reads a signed integer literal at Toks[I] (a '-' or '+' may precede it).
static bool readOffset(ArrayRef<Token> Toks, size_t &I, int &Value) {
  bool Negative = false;
  if (I < Toks.size() && (Toks[I].Text == "-" || Toks[I].Text == "+")) {
    Negative = Toks[I].Text == "-";
    ++I;
  }
  while (I < Toks.size() && Toks[I].Text == " ")
    ++I;
  if (I >= Toks.size() || Toks[I].K != Token::Number)
    return false;
  int V;
  if (Toks[I].Text.getAsInteger(10, V) || V > 8)
    return false;
  Value = Negative ? -V : V;
  ++I;
  return true;
}

static unsigned stencilRank(const Spec &S) {
  return S.Class == ProgramClass::Stencil3D ? 3 : 2;
}

static Expected<std::vector<NeighbourRead>> neighbourReads(const Spec &S) {
  std::vector<Token> Toks = tokenize(S.Expr);
  const std::string &In = S.Inputs[0].Name;
  unsigned Rank = stencilRank(S);
  std::vector<NeighbourRead> Reads;
  auto Skip = [&](size_t &I) {
    while (I < Toks.size() && (Toks[I].Text == " " || Toks[I].Text == "\t"))
      ++I;
  };
  for (size_t I = 0; I < Toks.size(); ++I) {
    if (Toks[I].K != Token::Identifier || Toks[I].Text != In)
      continue;
    NeighbourRead R;
    R.First = I;
    size_t J = I + 1;
    Skip(J);
    bool Ok = J < Toks.size() && Toks[J].Text == "(";
    ++J;
    for (unsigned D = 0; Ok && D < Rank; ++D) {
      Skip(J);
      int Off = 0;
      Ok = readOffset(Toks, J, Off);
      R.Offsets.push_back(Off);
      Skip(J);
      Ok = Ok && J < Toks.size() && Toks[J].Text == (D + 1 < Rank ? "," : ")");
      if (D + 1 < Rank)
        ++J;
    }
    if (!Ok)
      return specError(S.Path, "expr",
                       "'" + In + "' must be read as " + In +
                           (Rank == 3 ? "(dz, dy, dx)" : "(di, dj)") +
                           " with integer offsets from -8 to 8, e.g. " + In +
                           (Rank == 3 ? "(0, -1, 0)" : "(-1, 0)") +
                           " for the cell one row up");
    R.Last = J;
    Reads.push_back(std::move(R));
    I = J;
  }
  if (Reads.empty())
    return specError(S.Path, "expr",
                     "reads no neighbour; write e.g. \"" +
                         defaultStencilExpr(S) + "\"");
  return Reads;
}

Error stencilOffsets(const Spec &S, std::vector<std::vector<int>> *Out) {
  if (S.Expr.empty())
    return Error::success();
  auto Reads = neighbourReads(S);
  if (!Reads)
    return Reads.takeError();
  for (const NeighbourRead &R : *Reads)
    Out->push_back(R.Offsets);
  return Error::success();
}

std::string defaultStencilExpr(const Spec &S) {
  const std::string &In = S.Inputs[0].Name;
  bool F = S.Inputs[0].Type == ElementType::Float;
  if (stencilRank(S) == 3)
    return "(" + In + "(-1, 0, 0) + " + In + "(1, 0, 0) + " + In +
           "(0, -1, 0) + " + In + "(0, 1, 0) + " + In + "(0, 0, -1) + " + In +
           "(0, 0, 1)) / " + (F ? "6.0f" : "6.0");
  return std::string(F ? "0.25f" : "0.25") + " * (" + In + "(-1, 0) + " + In +
         "(1, 0) + " + In + "(0, -1) + " + In + "(0, 1))";
}

static std::string offsetText(StringRef Var, int D) {
  if (D == 0)
    return Var.str();
  return (Var + (D < 0 ? " - " : " + ") + Twine(std::abs(D))).str();
}

std::string stencilExpr(const Spec &S, ArrayRef<std::string> Dims) {
  Spec Copy = S;
  if (Copy.Expr.empty())
    Copy.Expr = defaultStencilExpr(S);
  auto Reads = neighbourReads(Copy);
  if (!Reads) {
    // checkClass has accepted the expression.
    consumeError(Reads.takeError());
    return Copy.Expr;
  }
  std::vector<Token> Toks = tokenize(Copy.Expr);
  std::string Out;
  size_t Next = 0;
  for (size_t I = 0; I < Toks.size(); ++I) {
    if (Next < Reads->size() && (*Reads)[Next].First == I) {
      const NeighbourRead &R = (*Reads)[Next++];
      // 2D: u[(row + di) * cols + (col + dj)], as the catalog's stencil
      // pattern reads it; 3D: the layer's offset first, in size_t.
      std::string Index =
          R.Offsets.size() == 3
              ? "((size_t)(" + offsetText("layer", R.Offsets[0]) + ") * " +
                    Dims[1] + " + (" + offsetText("row", R.Offsets[1]) +
                    ")) * " + Dims[2] + " + " + offsetText("col", R.Offsets[2])
              : "(" + offsetText("row", R.Offsets[0]) + ") * " + Dims[1] +
                    " + " + offsetText("col", R.Offsets[1]);
      Out += Copy.Inputs[0].Name + "[" + Index + "]";
      I = R.Last;
      continue;
    }
    Out += Toks[I].Text;
  }
  return Out;
}

int stencilRadius(const Spec &S) {
  Spec Copy = S;
  if (Copy.Expr.empty())
    Copy.Expr = defaultStencilExpr(S);
  std::vector<std::vector<int>> Offsets;
  if (Error E = stencilOffsets(Copy, &Offsets)) {
    consumeError(std::move(E));
    return 1;
  }
  int R = 0;
  for (const std::vector<int> &O : Offsets)
    for (int D : O)
      R = std::max(R, std::abs(D));
  return R;
}

} // namespace synth
} // namespace optiml
