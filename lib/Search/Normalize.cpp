//===- Normalize.cpp - Program keys for the transposition table -----------===//

#include "optiml/Search/Search.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

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

} // namespace optiml
