//===- SideEffects.h - What an expression may change -------------*- C++
//-*-===//
//
// Private to lib/Edit. Several rewrites move or skip code: a declaration
// before an all-pairs loop is skipped by threads outside the bounds, a loop
// condition is hoisted, an accumulator's initializer is evaluated once per
// tile. clang's Expr::HasSideEffects counts every call to a function it
// cannot see into as a side effect, so `float4 me = make_float4(...)` or
// `float r = sqrtf(x)` was refused for their spelling. This analysis looks
// at what the code does:
//  - assignments, increments, new/delete, throw, volatile accesses: effects;
//  - a call is free of effects when its callee is marked const or pure, is
//    a builtin the compiler knows to be const or pure, or is defined where
//    we can read it and its body changes nothing but its own locals (and
//    calls only such functions); the depth of that is bounded;
//  - a `__device__` function declared without a body in a system header
//    that takes only arithmetic or vector values and returns one (the
//    toolkit's math library, e.g. libdevice's __nv_rsqrtf) is a pure
//    function of its arguments: device code has no errno and such a
//    function has nothing else it could change. One with no parameters or
//    a void result (clock(), __nanosleep) is not.
// Warp collectives (__shfl_sync and the like) are defined over builtins the
// compiler does not mark const, so they count as effects: skipping them in
// some threads would change what the others receive.
// Where a write lands, for rewrites that share one thread's work among
// several (warp-per-row): a local array is each thread's own, a local
// pointer may point at one only when the function lets a local's address
// escape, and pointers into one array are followed to it.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_PATTERNS_SIDEEFFECTS_H
#define OPTIML_LIB_EDIT_PATTERNS_SIDEEFFECTS_H

namespace clang {
class ASTContext;
class CallExpr;
class Expr;
class FunctionDecl;
class Stmt;
class ValueDecl;
} // namespace clang

namespace optiml {

/// Whether evaluating \p E may change anything outside it (memory, other
/// threads' view, hidden state), as described above.
bool mayHaveSideEffects(const clang::Expr *E, const clang::ASTContext &AST);

/// Whether a call to \p FD changes nothing but the callee's own locals.
bool isPureFunction(const clang::FunctionDecl *FD,
                    const clang::ASTContext &AST);

/// The expression an index helper's call returns: the callee's definition
/// (put in \p FD) is `return <expr>;` alone and changes nothing
/// (`__device__ size_t idx(int x, int y, int w) { return (size_t)y * w + x;
/// }`); null otherwise (operators and member functions included).
const clang::Expr *indexHelperReturn(const clang::CallExpr *C,
                                     const clang::ASTContext &AST,
                                     const clang::FunctionDecl *&FD);

/// Which of the CUDA builtin variables readsOrWritesMemory() takes for
/// values. With one set, the others count as reads; with none, they are
/// walked like any expression (their reads are calls).
struct BuiltinRules {
  bool ThreadCoords = false; ///< threadIdx, blockDim
  bool BlockCoords = false;  ///< blockIdx, gridDim
};

/// Whether \p S reads memory (subscripts, `*`, members), writes anything,
/// takes an address, or calls a function. With \p AST, calls to pure
/// functions (index helpers, math) are computations; without it every call
/// counts. \p Builtins names the builtin variables that count as values.
bool readsOrWritesMemory(const clang::Stmt *S, const clang::ASTContext *AST,
                         BuiltinRules Builtins = {});

/// Where a write through a variable lands, seen from the threads that now
/// share work a single thread did: memory they all see, storage each thread
/// holds privately (a local array: every thread has its own copy), or
/// either.
enum class WriteStorage { Shared, Private, Unknown };

/// Whether \p S lets the address of one of the function's own locals
/// escape: `&v`, `&a[i]`, a local array decaying other than to be indexed,
/// a reference bound to a local. A local pointer may then point at storage
/// private to each thread.
bool localAddressEscapes(const clang::Stmt *S);

/// The storage written through \p D, the base of an element write: a local
/// array (not `__shared__`, not static) is private; a local pointer is
/// unknown when \p Escapes (localAddressEscapes() of the function), a local
/// reference always; parameters, globals and other pointers are memory the
/// threads share.
WriteStorage writeStorage(const clang::ValueDecl *D, bool Escapes);

/// The variable the pointer \p D points into: \p D itself, or for a local
/// pointer initialized from `q + e`, `e + q`, `q - e`, `&q[e]` or `q` and
/// never written in \p Body, the variable q points into; null for a local
/// pointer it cannot follow (assigned, or without an initializer).
const clang::ValueDecl *pointerRoot(const clang::ValueDecl *D,
                                    const clang::Stmt *Body);

} // namespace optiml

#endif
