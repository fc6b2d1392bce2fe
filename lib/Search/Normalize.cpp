//===- Normalize.cpp - Program keys for the transposition table -----------===//

#include "optiml/Search/Search.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"
#include <algorithm>

using namespace llvm;

namespace optiml {

static bool isIdentChar(char C) { return isAlnum(C) || C == '_' || C == '$'; }

std::string normalizeSource(StringRef S) {
  std::string Out;
  Out.reserve(S.size());
  bool PendingSpace = false;
  bool InDirective = false; // inside a preprocessor line
  bool AtLineStart = true;
  auto Emit = [&](char C) {
    if (PendingSpace && !Out.empty() && Out.back() != '\n' &&
        isIdentChar(Out.back()) && isIdentChar(C))
      Out.push_back(' ');
    // Keep "a - -b", "a + +b" and "x / *p" apart from "--", "++", "/*".
    else if (PendingSpace && !Out.empty() && ispunct(Out.back()) &&
             ispunct(C) && Out.back() != '\n' &&
             StringRef("+-&|<>=/*.:").contains(C) &&
             StringRef("+-&|<>=/*.:").contains(Out.back()))
      Out.push_back(' ');
    PendingSpace = false;
    Out.push_back(C);
  };
  for (size_t I = 0, E = S.size(); I < E;) {
    char C = S[I];
    // Comments become whitespace.
    if (C == '/' && I + 1 < E && S[I + 1] == '/') {
      while (I < E && S[I] != '\n')
        ++I;
      PendingSpace = true;
      continue;
    }
    if (C == '/' && I + 1 < E && S[I + 1] == '*') {
      size_t End = S.find("*/", I + 2);
      I = End == StringRef::npos ? E : End + 2;
      PendingSpace = true;
      continue;
    }
    // String and character literals are kept verbatim.
    if (C == '"' || C == '\'') {
      size_t J = I + 1;
      while (J < E && S[J] != C && S[J] != '\n') {
        if (S[J] == '\\')
          ++J;
        ++J;
      }
      J = std::min(J + 1, E);
      for (size_t K = I; K < J; ++K)
        Emit(S[K]), PendingSpace = false;
      I = J;
      AtLineStart = false;
      continue;
    }
    if (C == '\\' && I + 1 < E && S[I + 1] == '\n') { // line continuation
      I += 2;
      PendingSpace = true;
      continue;
    }
    if (C == '\n') {
      if (InDirective) {
        Out.push_back('\n');
        PendingSpace = false;
        InDirective = false;
      } else {
        PendingSpace = true;
      }
      AtLineStart = true;
      ++I;
      continue;
    }
    if (isSpace(C)) {
      PendingSpace = true;
      ++I;
      continue;
    }
    if (C == '#' && AtLineStart) {
      InDirective = true;
      if (!Out.empty() && Out.back() != '\n')
        Out.push_back('\n');
      PendingSpace = false;
    }
    AtLineStart = false;
    Emit(C);
    ++I;
  }
  return Out;
}

/// Whether the quote at \p I of \p S is a digit separator (1'000'000): it
/// follows a word that starts with a digit.
static bool isDigitSeparator(StringRef S, size_t I) {
  size_t B = I;
  while (B > 0 && isIdentChar(S[B - 1]))
    --B;
  return B < I && isDigit(S[B]);
}

/// Whether the text at \p I of \p S is a raw string literal's start (R",
/// u8R", LR", uR", UR").
static bool startsRawString(StringRef S, size_t I) {
  if (S[I] != '"' || I == 0 || S[I - 1] != 'R')
    return false;
  size_t B = I - 1;
  while (B > 0 && isIdentChar(S[B - 1]))
    --B;
  return is_contained({"R", "u8R", "LR", "uR", "UR"}, S.slice(B, I));
}

enum class Literal { None, Skipped, Raw };

/// At \p I of the normalized text \p S: a string or character literal
/// (\p I moves past it), a raw string literal (which the normalizer does
/// not read: a quote inside one would misplace every literal after it), or
/// neither.
static Literal skipLiteral(StringRef S, size_t &I) {
  char Q = S[I];
  if (startsRawString(S, I))
    return Literal::Raw;
  if (Q != '"' && (Q != '\'' || isDigitSeparator(S, I)))
    return Literal::None;
  size_t J = I + 1;
  while (J < S.size() && S[J] != Q && S[J] != '\n') {
    if (S[J] == '\\')
      ++J;
    ++J;
  }
  I = std::min(J + 1, S.size());
  return Literal::Skipped;
}

/// Where the __global__ definition whose keyword ends at \p From of the
/// normalized text \p S ends (past its body's closing brace); \p From when
/// it is a declaration, or its signature or body holds a directive (it
/// stays: a directive could change the host's code); none when its braces
/// do not balance or it holds a raw string.
static std::optional<size_t> kernelEnd(StringRef S, size_t From) {
  unsigned Parens = 0, Braces = 0;
  for (size_t I = From; I < S.size();) {
    Literal L = skipLiteral(S, I);
    if (L == Literal::Raw)
      return std::nullopt;
    if (L == Literal::Skipped)
      continue;
    char C = S[I++];
    if (C == '\n')
      return From;
    if (C == '(' || C == '[')
      ++Parens;
    else if ((C == ')' || C == ']') && Parens)
      --Parens;
    else if (Braces == 0 && Parens == 0 && (C == ';' || C == '}'))
      return From; // a declaration (or no definition at all)
    else if (C == '{' && Parens == 0)
      ++Braces;
    else if (C == '}' && Parens == 0 && --Braces == 0)
      return I;
  }
  return std::nullopt;
}

std::optional<std::string> hostProgramText(StringRef Source) {
  std::string N = normalizeSource(Source);
  StringRef S = N;
  std::string Out;
  size_t Copied = 0;
  for (size_t I = 0; I < S.size();) {
    // A directive is one line of the normalized text: kept whole.
    if (S[I] == '#' && (I == 0 || S[I - 1] == '\n')) {
      size_t End = S.find('\n', I);
      I = End == StringRef::npos ? S.size() : End + 1;
      continue;
    }
    Literal L = skipLiteral(S, I);
    if (L == Literal::Raw)
      return std::nullopt;
    if (L == Literal::Skipped)
      continue;
    if (!isIdentChar(S[I]) || (I > 0 && isIdentChar(S[I - 1]))) {
      ++I;
      continue;
    }
    size_t WordEnd = I;
    while (WordEnd < S.size() && isIdentChar(S[WordEnd]))
      ++WordEnd;
    if (S.slice(I, WordEnd) != "__global__") {
      I = WordEnd;
      continue;
    }
    std::optional<size_t> End = kernelEnd(S, WordEnd);
    if (!End)
      return std::nullopt;
    if (*End != WordEnd) {
      Out += S.slice(Copied, I);
      Copied = *End;
    }
    I = *End;
  }
  Out += S.drop_front(Copied);
  return Out;
}

std::string sourceKey(StringRef Source, ArrayRef<std::string> Flags) {
  SHA256 H;
  H.update(normalizeSource(Source));
  for (const std::string &F : Flags) {
    H.update(StringRef("\0", 1));
    H.update(F);
  }
  auto Digest = H.final();
  return toHex(ArrayRef<uint8_t>(Digest.data(), 8), /*LowerCase=*/true);
}

std::string compiledCodeKey(StringRef DeviceCode, StringRef HostText,
                            ArrayRef<std::string> Flags) {
  SHA256 H;
  auto Add = [&](StringRef S) {
    H.update(S);
    H.update(StringRef("\0", 1));
  };
  Add("clang-optiml-code-v1");
  Add(DeviceCode);
  Add(HostText);
  for (const std::string &F : Flags)
    Add(F);
  auto Digest = H.final();
  return toHex(ArrayRef<uint8_t>(Digest.data(), 8), /*LowerCase=*/true);
}

} // namespace optiml
