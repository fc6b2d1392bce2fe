//===- NvccCompat.cpp - What nvcc accepts and clang does not -------------===//

#include "optiml/Frontend/NvccCompat.h"
#include "clang/Basic/LangOptions.h"
#include "clang/Basic/TokenKinds.h"
#include "clang/Lex/Lexer.h"
#include <vector>

using namespace llvm;

namespace optiml {

StringRef nvccCompatHeaderPath() { return "/__clang_optiml__/nvcc_compat.h"; }

StringRef nvccCompatHeaderText() {
  // What nvcc's crt/common_functions.h and crt/math_functions.hpp declare
  // for every CUDA file and clang's wrappers do not. Parsed, never built:
  // the bodies only have to type-check.
  return R"cuda(/* clang-optiml: nvcc's implicit declarations, for the parse. */
#ifdef __CLANG_CUDA_RUNTIME_WRAPPER_H__
#ifndef __CLANG_OPTIML_NVCC_COMPAT_H
#define __CLANG_OPTIML_NVCC_COMPAT_H
#include <string.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <assert.h>

/* Host-side min and max (nvcc: static inline __host__ __device__). */
#define __OPTIML_MINMAX(T1, T2, R)                                           \
  static inline __host__ R max(const T1 a, const T2 b) {                     \
    return (R)a > (R)b ? (R)a : (R)b;                                        \
  }                                                                          \
  static inline __host__ R min(const T1 a, const T2 b) {                     \
    return (R)a < (R)b ? (R)a : (R)b;                                        \
  }
__OPTIML_MINMAX(int, int, int)
__OPTIML_MINMAX(unsigned int, unsigned int, unsigned int)
__OPTIML_MINMAX(int, unsigned int, unsigned int)
__OPTIML_MINMAX(unsigned int, int, unsigned int)
__OPTIML_MINMAX(long, long, long)
__OPTIML_MINMAX(unsigned long, unsigned long, unsigned long)
__OPTIML_MINMAX(long, unsigned long, unsigned long)
__OPTIML_MINMAX(unsigned long, long, unsigned long)
__OPTIML_MINMAX(long long, long long, long long)
__OPTIML_MINMAX(unsigned long long, unsigned long long, unsigned long long)
__OPTIML_MINMAX(long long, unsigned long long, unsigned long long)
__OPTIML_MINMAX(unsigned long long, long long, unsigned long long)
__OPTIML_MINMAX(float, float, float)
__OPTIML_MINMAX(double, double, double)
__OPTIML_MINMAX(float, double, double)
__OPTIML_MINMAX(double, float, double)
#undef __OPTIML_MINMAX

/* Cache-hinted stores clang's wrappers lack (they have __stwt only). */
template <typename __T> struct __optiml_same { typedef __T type; };
template <typename __T>
static __device__ inline void __stcs(__T *__p,
                                     typename __optiml_same<__T>::type __v) {
  *__p = __v;
}
template <typename __T>
static __device__ inline void __stcg(__T *__p,
                                     typename __optiml_same<__T>::type __v) {
  *__p = __v;
}
template <typename __T>
static __device__ inline void __stwb(__T *__p,
                                     typename __optiml_same<__T>::type __v) {
  *__p = __v;
}
#endif
#endif
)cuda";
}

std::string normalizeLaunchChevrons(StringRef Code) {
  std::string Out = Code.str();
  if (Code.find("<<") == StringRef::npos)
    return Out;
  clang::LangOptions LO;
  LO.CPlusPlus = LO.CPlusPlus11 = LO.CPlusPlus14 = LO.CPlusPlus17 = true;
  LO.CUDA = true; // `<<<` and `>>>` are single tokens
  // The raw lexer wants a buffer that ends in a NUL: the copy has one.
  const char *Begin = Out.c_str();
  clang::Lexer L(clang::SourceLocation::getFromRawEncoding(1), LO, Begin, Begin,
                 Begin + Out.size());
  struct Tok {
    clang::tok::TokenKind Kind;
    unsigned Offset;
    StringRef Text;
  };
  std::vector<Tok> Toks;
  clang::Token T;
  while (true) {
    L.LexFromRawLexer(T);
    if (T.is(clang::tok::eof))
      break;
    unsigned Off = T.getLocation().getRawEncoding() - 1;
    Toks.push_back({T.getKind(), Off, Code.substr(Off, T.getLength())});
  }
  // `a <<` `<` moves the second `<` next to the first two and the space
  // after them: "<< <" (4 bytes) becomes "<<< " (4 bytes).
  auto Join = [&](const Tok &A, const Tok &B, char C) {
    std::string Between = Code.slice(A.Offset + 2, B.Offset).str();
    Out.replace(A.Offset, B.Offset + 1 - A.Offset, std::string(3, C) + Between);
  };
  for (size_t I = 0; I + 1 < Toks.size(); ++I) {
    if (Toks[I].Kind != clang::tok::lessless ||
        Toks[I + 1].Kind != clang::tok::less)
      continue;
    // `operator<< <T>(...)` names a template specialization: not a launch.
    if (I > 0 && Toks[I - 1].Kind == clang::tok::raw_identifier &&
        Toks[I - 1].Text == "operator")
      continue;
    // The launch's closing `>> >` (or `>>>`) at the same nesting depth.
    int Depth = 0;
    size_t J = I + 2;
    for (; J < Toks.size(); ++J) {
      clang::tok::TokenKind K = Toks[J].Kind;
      if (K == clang::tok::l_paren || K == clang::tok::l_square ||
          K == clang::tok::l_brace)
        ++Depth;
      else if (K == clang::tok::r_paren || K == clang::tok::r_square ||
               K == clang::tok::r_brace) {
        if (--Depth < 0)
          break;
      } else if (Depth == 0 && (K == clang::tok::semi ||
                                K == clang::tok::greatergreatergreater))
        break;
      else if (Depth == 0 && K == clang::tok::greatergreater &&
               J + 1 < Toks.size() && Toks[J + 1].Kind == clang::tok::greater)
        break;
    }
    if (J >= Toks.size() || Depth < 0 || Toks[J].Kind == clang::tok::semi)
      continue; // not a launch configuration
    Join(Toks[I], Toks[I + 1], '<');
    if (Toks[J].Kind == clang::tok::greatergreater)
      Join(Toks[J], Toks[J + 1], '>');
    I = J;
  }
  return Out;
}

} // namespace optiml
