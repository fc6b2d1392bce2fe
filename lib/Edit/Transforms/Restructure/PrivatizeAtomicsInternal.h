//===- PrivatizeAtomicsInternal.h - privatize-atomics' plan -----*- C++ -*-===//
//
// Private to the privatize-atomics transform: the plan its analysis fills
// (PrivatizeAtomics.cpp, the input loop in PrivatizeAtomicsInput.cpp) and the
// rewrite carries out (PrivatizeAtomicsRewrite.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_PRIVATIZEATOMICSINTERNAL_H
#define OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_PRIVATIZEATOMICSINTERNAL_H

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "clang/AST/Expr.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace optiml {
namespace privatizeatomics {

/// Shared memory a block may use without opting in (bytes).
constexpr int64_t SharedLimit = 48 * 1024;

/// One atomic on an element of the array: `atomicAdd(&a[i], v)`,
/// `atomicAdd(a + i, v)` or `atomicAdd(a, v)`, where `a` is a pointer
/// parameter or `s.a`, the pointer member of a struct passed by value.
struct AtomicUse {
  const clang::CallExpr *Call = nullptr;
  const clang::DeclRefExpr *BaseRef = nullptr; ///< the parameter
  const clang::Expr *Base = nullptr;           ///< BaseRef, or `s.a`
  const clang::FieldDecl *Field = nullptr;     ///< `a` in `s.a`
  const clang::Expr *Index = nullptr;          ///< null: element 0
  std::optional<int64_t> Range;                ///< proven exclusive upper bound
};

enum class Copies { Block, Warp, Lane };

/// A load `p[i]` of the loop's input at the loop variable.
struct InputLoad {
  const clang::ArraySubscriptExpr *Access = nullptr;
  const clang::ParmVarDecl *Array = nullptr;
};

/// The grid-stride loop over the input, `for (T i = <linear index>; i < n;
/// i += blockDim.x * gridDim.x) body`, written so or made so from one item
/// per thread.
struct InputLoop {
  const clang::VarDecl *Index = nullptr;
  const clang::Expr *Bound = nullptr;
  const clang::ForStmt *For = nullptr; ///< null: from the ThreadItem
  std::vector<InputLoad> Loads;
  std::vector<const clang::ParmVarDecl *> Arrays; ///< the loaded pointers
  int64_t ElemBytes = 0;
};

struct Plan {
  ResolvedKernel Kernel;
  const clang::ParmVarDecl *Array = nullptr;
  const clang::FieldDecl *Field = nullptr; ///< the array is `Array.Field`
  std::string ArrayText;                   ///< "a" or "s.a"
  std::string ElemType; ///< as the pattern spells it (`Count` in a template)
  /// `if (c) return;` at the top of the body, every statement after it
  /// only updating the array: those become `if (!(c)) { ... }` so that
  /// every thread reaches the merge.
  const clang::IfStmt *EarlyReturn = nullptr;
  std::vector<AtomicUse> Uses;
  int64_t Bins = 0;
  bool Guarded = false; ///< some index is not proven below Bins
  Copies Layout = Copies::Block;
  int64_t BlockSize = 256;
  int64_t MaxBlocks = DefaultGridCap;
  bool SetBlock = false;         ///< launches get BlockSize threads
  int64_t VectorBytes = 1;       ///< bytes per load in the grid-stride loop
  std::optional<ThreadItem> Map; ///< converted to a grid-stride loop
  std::optional<InputLoop> Loop; ///< when VectorBytes > 1
  bool CapGrid = false;
  std::string Description;
};

/// An exclusive upper bound of a non-negative integer expression in kernel
/// (or helper) \p K: an unsigned char or bool, a constant mask, a modulus,
/// a shift or quotient of a bounded value, +, *, <<, | and ^ of bounded
/// values, `?:`, a min of non-negative values or a max with one
/// (`min(max(b, 0), 63)`: CUDA's or the standard library's integer min and
/// max), a local never written after its initializer, a cast or a pure
/// `__device__` helper `return <expr>;` whose type holds the range.
/// Nothing when the value may be negative or is not bounded so.
std::optional<int64_t> indexRange(const clang::Expr *E,
                                  const clang::ASTContext &AST,
                                  const clang::FunctionDecl *K,
                                  unsigned Depth = 0);

class PrivatizeAtomics : public PlannedTransform<Plan> {
public:
  llvm::StringRef kind() const override { return "privatize-atomics"; }
  llvm::StringRef description() const override {
    return "per-block, per-warp or per-lane shared-memory copies of a small "
           "array updated by atomics, merged once per block; grid-stride "
           "loop, optionally with 4- to 16-byte input loads";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec::string(
            "array", "the pointer parameter the atomics update (needed when "
                     "several are)"),
        ParamSpec::integer(
            "bins",
            "number of elements to privatize when the index range "
            "cannot be proven; other indices use the global atomic",
            1, 12288),
        ParamSpec::string("copies",
                          "one private copy per block, one per warp (less "
                          "contention, more shared memory), or one column per "
                          "lane ([bins][32]: no bank conflicts, 32 copies)",
                          {"block", "warp", "lane"}, "block"),
        ParamSpec::integer("block_size",
                           "threads per block at every launch; copies=warp "
                           "sizes its copies by it and sets 256 when it is not "
                           "given, the other layouts keep the launches' blocks",
                           32, 1024),
        ParamSpec::integer("max_blocks", "grid cap for the grid-stride loop", 1,
                           1 << 20, DefaultGridCap),
        ParamSpec::integer(
            "vector_bytes",
            "bytes each thread loads per iteration of the "
            "grid-stride loop: 1 (one element), 4, 8 or 16 (one "
            "word, the body run on each element; scalar tail and "
            "unaligned fallback)",
            1, 16, 1)};
  }
  bool changesPrecision(const Edit &) const override {
    // Floating-point atomics are summed in another order.
    return true;
  }

  Applicability prepare(const EditContext &Ctx,
                        llvm::StringRef Target) const override {
    Applicability A;
    Edit E;
    auto P = planDefault(Ctx, Target, A, E);
    if (!P)
      return A;
    A.Reason = P->Description;
    Edit W = E;
    W.Params["copies"] = std::string("warp");
    A.Suggestions = {E};
    // Offered only where it passes its own checks (a launch bound, ...).
    if (auto WP = analyze(Ctx, W))
      A.Suggestions.insert(A.Suggestions.begin(), W);
    else
      llvm::consumeError(WP.takeError());
    // Byte and short inputs: 16-byte words, and one column per lane when
    // 32 copies fit, else one copy per warp.
    auto ElemBytes = [&](const Edit &X) -> int64_t {
      auto VP = analyze(Ctx, X);
      if (!VP) {
        consumeError(VP.takeError());
        return 0;
      }
      return VP->Loop->ElemBytes;
    };
    for (const char *Layout : {"lane", "warp"}) {
      Edit V = E;
      V.Params["vector_bytes"] = int64_t(16);
      V.Params["copies"] = std::string(Layout);
      int64_t Bytes = ElemBytes(V);
      if (Bytes == 0)
        continue;
      if (Bytes <= 2)
        A.Suggestions.insert(A.Suggestions.begin(), V);
      break;
    }
    return A;
  }

private:
  llvm::Expected<Plan> analyze(const EditContext &Ctx,
                               const Edit &E) const override;
  llvm::Expected<InputLoop> inputLoop(const EditContext &Ctx, const Edit &E,
                                      const Plan &P) const;
  llvm::Expected<clang::tooling::Replacements>
  rewrite(const EditContext &Ctx, const Edit &E, const Plan &P) const override;
};

} // namespace privatizeatomics
} // namespace optiml

#endif // OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURE_PRIVATIZEATOMICSINTERNAL_H
