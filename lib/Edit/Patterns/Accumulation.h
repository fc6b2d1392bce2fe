//===- Accumulation.h - Sums of products, as people write them --*- C++ -*-===//
//
// Private to lib/Edit. A product's inner loop adds x * y to an accumulator;
// the ways it is written that compute the same:
//
//   acc += x * y;   acc = acc + x * y;   acc = x * y + acc;
//   acc = fmaf(x, y, acc);   (fma, fmaf, __fmaf_rn, __fma_rn: fused)
//
// A rewrite that keeps the sum's order keeps the result only when it keeps
// the fused form where it was, so the recognizer says which it was.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_PATTERNS_ACCUMULATION_H
#define OPTIML_LIB_EDIT_PATTERNS_ACCUMULATION_H

#include <optional>
#include <string>

namespace clang {
class Expr;
class FunctionDecl;
class Stmt;
class VarDecl;
} // namespace clang

namespace optiml {

struct ProductUpdate {
  const clang::Expr *X = nullptr, *Y = nullptr; ///< the factors
  /// The fused multiply-add's name as written (`fmaf`); empty for the
  /// others, which compute x * y, then the sum.
  std::string Fma;
};

/// The product \p S adds to \p Acc, or nothing.
std::optional<ProductUpdate> productUpdate(const clang::Stmt *S,
                                           const clang::VarDecl *Acc);

/// `Aarray[blockIdx.x]` (the batched interface's arrays of pointers): a
/// pointer loaded at an address the same for every thread of a block of
/// \p Kernel, from memory the kernel never writes (no store of a pointer or
/// of bytes that could be one, no call that could write it), so every
/// thread loads the same pointer.
bool uniformPointerLoad(const clang::Expr *E,
                        const clang::FunctionDecl *Kernel);

} // namespace optiml

#endif
