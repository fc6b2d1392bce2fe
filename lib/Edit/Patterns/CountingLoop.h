//===- CountingLoop.h - Loops that count by one -----------------*- C++ -*-===//
//
// Private to lib/Edit. Several rewrites need the loops whose variable
// counts by one between bounds: the K loop of a product, a stencil's offset
// loops, the indices an array is read at. They all read this one
// recognizer:
//
//   for (T v = START; v < BOUND; ++v)      up: <, <=, or BOUND > v, >=;
//   for (T v = START; v >= BOUND; --v)     down: >, >=, or BOUND < v, <=;
//
// with v++ / ++v / v += 1 up and v-- / --v / v -= 1 down, v declared alone
// in the init. A loop whose body writes v counts by something else; only
// constantRange() checks that, as the other facts are about the header.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_PATTERNS_COUNTINGLOOP_H
#define OPTIML_LIB_EDIT_PATTERNS_COUNTINGLOOP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace clang {
class ASTContext;
class DeclStmt;
class Expr;
class ForStmt;
class Stmt;
class VarDecl;
class WhileStmt;
} // namespace clang

namespace optiml {

/// A loop's header, as recognized above.
struct CountingLoop {
  const clang::VarDecl *Var = nullptr;
  const clang::Expr *Start = nullptr; ///< v's initializer
  const clang::Expr *Bound = nullptr; ///< the other side of the condition
  int Step = 0;                       ///< +1 counting up, -1 down
  bool Inclusive = false;             ///< the bound is v's last value
};

/// The counting loop \p L is, or nothing.
std::optional<CountingLoop> countingLoop(const clang::ForStmt *L,
                                         const clang::ASTContext &AST);

/// A `while` loop that counts the same way:
///
///   T v = START; while (v < BOUND) { ...; ++v; }
///
/// v declared alone by \p Before, the statement just before the loop (an
/// integer, or in a template a type that depends on its parameters, which
/// the caller checks in the instantiations); the
/// body a block whose last statement steps v by one (as a for's increment)
/// and whose other statements never write v and never `continue` or
/// `break` (which would skip or leave the step).
struct CountingWhile : CountingLoop {
  const clang::DeclStmt *Decl = nullptr; ///< `T v = START;`
  const clang::Expr *Inc = nullptr;      ///< the step, `++v`
};

/// The counting while loop \p W is, given the statement before it; else
/// nothing, with why not in \p WhyNot ("its body writes the counter ...").
std::optional<CountingWhile> countingWhile(const clang::WhileStmt *W,
                                           const clang::Stmt *Before,
                                           const clang::ASTContext &AST,
                                           std::string *WhyNot = nullptr);

/// The same, with the counter declared by any of \p Earlier, the
/// statements before the loop in its block (nearest last), provided none
/// of the statements after its declaration names it (`int k = off[r];
/// const int end = off[r + 1]; float s = 0; while (k < end) {...; ++k;}`).
std::optional<CountingWhile>
countingWhile(const clang::WhileStmt *W,
              llvm::ArrayRef<const clang::Stmt *> Earlier,
              const clang::ASTContext &AST, std::string *WhyNot = nullptr);

/// The values v takes, [first, last] in increasing order, when START and
/// BOUND are integer constants, the loop runs at least once and its body
/// never writes v.
std::optional<std::pair<int64_t, int64_t>>
constantRange(const clang::ForStmt *L, const clang::ASTContext &AST);

/// constantRange() of every loop in \p S (nested ones included) that has
/// one, by its variable; with \p UpOnly, of those counting up only.
llvm::DenseMap<const clang::VarDecl *, std::pair<int64_t, int64_t>>
constantLoopRanges(const clang::Stmt *S, const clang::ASTContext &AST,
                   bool UpOnly = false);

} // namespace optiml

#endif
