//===- CatalogInternal.h - Transform factories and shared helpers -*- C++
//-*-===//
//
// Private to lib/Edit. Every transform is one .cpp under Transforms/<family>/
// with a factory declared here; Catalog.cpp lists them in a fixed order. The
// helpers below resolve targets and build rejections the same way for every
// transform, so messages read alike.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_CATALOGINTERNAL_H
#define OPTIML_LIB_EDIT_CATALOGINTERNAL_H

#include "optiml/Edit/Transform.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <memory>
#include <optional>

namespace clang {
class ASTContext;
class Expr;
class FunctionDecl;
class ParmVarDecl;
class Stmt;
class SourceManager;
class LangOptions;
} // namespace clang

namespace optiml {

// The catalog, in the order `transforms` lists it (Catalog.cpp).
std::unique_ptr<Transform> createLaunchConfigTransform(); // catalog helper
std::unique_ptr<Transform> createLaunchBoundsTransform();
std::unique_ptr<Transform> createRestrictConstTransform();
std::unique_ptr<Transform> createUnrollTransform();
std::unique_ptr<Transform> createGridStrideTransform(); // catalog helper
std::unique_ptr<Transform> createVectorizeTransform();  // catalog helper
std::unique_ptr<Transform> createReadOnlyCacheTransform();
std::unique_ptr<Transform> createFastMathTransform();
std::unique_ptr<Transform> createHoistTransform();        // catalog helper
std::unique_ptr<Transform> createSharedTilingTransform(); // catalog helper
std::unique_ptr<Transform> createWarpReduceTransform();   // catalog helper
std::unique_ptr<Transform> createCoarsenTransform();      // catalog helper
std::unique_ptr<Transform> createCompileFlagsTransform();
std::unique_ptr<Transform> createSpecializeTransform();
std::unique_ptr<Transform> createReplaceFunctionTransform();
std::unique_ptr<Transform> createAddDeviceFunctionTransform();
// Restructuring transforms (who does what: warps per item, private copies,
// staged tiles).
std::unique_ptr<Transform> createWarpPerRowTransform();
std::unique_ptr<Transform> createPrivatizeAtomicsTransform();
std::unique_ptr<Transform> createAllPairsTilingTransform();
std::unique_ptr<Transform> createTransposeThroughSharedTransform();
std::unique_ptr<Transform> createBlockScanTransform();
std::unique_ptr<Transform> createConstantMemoryTransform();
std::unique_ptr<Transform> createVectorizeStencilTransform();

/// The text of the file \p Ctx edits with each launch of \p K written
/// through a function-like macro that spells its grid or block in the
/// macro's body (LaunchSite::GridInPlace) replaced by what the macro expands
/// to: the body with each parameter replaced by its argument as written.
/// Transforms that rewrite a launch's configuration apply to that text (the
/// edit's checks confirm that it preprocesses to the same tokens). A launch
/// that cannot be written out (a macro that does more than launch, one
/// that stringizes or pastes, an invocation inside another macro) stays as
/// it is. Null, with \p WhyNot, when none was written out. \p Written,
/// when given, says what was done ("the launch macro 'LAUNCH' at 12:5
/// written out as the launch it expands to"); \p Only, when not empty,
/// names the one launch to write out. \p InPlaceToo writes out launch
/// macros whose invocation spells grid and block in place too (for a
/// transform that inserts statements before its launches).
std::optional<std::string>
writeOutLaunchMacros(const EditContext &Ctx, const KernelInfo &K,
                     std::string &WhyNot, std::string *Written = nullptr,
                     llvm::StringRef Only = "", bool InPlaceToo = false);

/// An EditRejected with one failure (Check names the check, e.g. "target",
/// "not-applicable", "params"); Pos locates it in the input when known.
llvm::Error reject(const Edit &E, llvm::StringRef Check,
                   const llvm::Twine &Message, SourcePos Pos = {});

/// The message of the first failure of an EditRejected (any other error's
/// message): the "reason" prepare() reports for an edit that does not apply.
std::string rejectionReason(llvm::Error E);

/// The grid cap of the edits that turn one element per thread into a
/// grid-stride loop (grid-stride, privatize-atomics, warp-reduce
/// grid_stride): 8 blocks per SM of an H200 (132 SMs).
constexpr int64_t DefaultGridCap = 132 * 8;

/// The edit prepare() studies: \p Kind at \p Target, every parameter at its
/// default.
Edit defaultEdit(llvm::StringRef Kind, llvm::StringRef Target);

/// prepare()'s common step: a plan makes the edit applicable; a rejection
/// becomes \p A's reason and the result is empty.
template <typename PlanT>
std::optional<PlanT> planOrReason(Applicability &A,
                                  llvm::Expected<PlanT> Plan) {
  if (!Plan) {
    A.Reason = rejectionReason(Plan.takeError());
    return std::nullopt;
  }
  A.Applies = true;
  return std::move(*Plan);
}

/// A kernel target resolved against the model and the AST.
struct ResolvedKernel {
  const KernelInfo *Info = nullptr;
  /// The definition (the template pattern for templates).
  const clang::FunctionDecl *Decl = nullptr;
};

/// The kernel named \p Name; fails with a "target" rejection naming the
/// kernels that exist.
llvm::Expected<ResolvedKernel>
resolveKernel(const EditContext &Ctx, const Edit &E, llvm::StringRef Name);

/// A loop id: its model entry, its kernel and its statement.
struct ResolvedLoop {
  const LoopInfo *Info = nullptr;
  ResolvedKernel Kernel;
  const clang::Stmt *S = nullptr;
};
llvm::Expected<ResolvedLoop> resolveLoop(const EditContext &Ctx, const Edit &E,
                                         llvm::StringRef Id);

/// A launch-site id and its kernel.
struct ResolvedLaunch {
  const LaunchSite *Info = nullptr;
  ResolvedKernel Kernel;
};
llvm::Expected<ResolvedLaunch> resolveLaunch(const EditContext &Ctx,
                                             const Edit &E, llvm::StringRef Id);

/// The kernel a target id belongs to: "k", "k/loop0.1", "k/launch2" -> "k".
llvm::StringRef kernelOfTarget(llvm::StringRef Target);

/// A replacement of [Begin, End) of the input by \p Text.
clang::tooling::Replacement
replaceSpan(const EditContext &Ctx, const SourceSpan &S, llvm::StringRef Text);
clang::tooling::Replacement insertAt(const EditContext &Ctx, unsigned Offset,
                                     llvm::StringRef Text);

/// Adds \p R to \p Repls; a conflict becomes an "internal" rejection.
llvm::Error addReplacement(clang::tooling::Replacements &Repls,
                           const clang::tooling::Replacement &R, const Edit &E);

/// How a kernel's body uses one pointer parameter.
struct PointerUses {
  /// Why the memory behind the parameter cannot be treated as read-only
  /// inside the kernel ("'x' is written at 12:5", "'x' is passed to 'f'"),
  /// or empty.
  std::string Blocker;
  /// Element reads through it (`p[i]`, `*(p + i)`), in source order.
  std::vector<const clang::Expr *> Loads;
};
PointerUses analyzePointerParam(clang::ASTContext &Ctx,
                                const clang::FunctionDecl *FD,
                                const clang::ParmVarDecl *P);

/// What a lexical scan of one function's new text found.
struct FunctionText {
  std::string Name;      ///< the declared name (last identifier before '(')
  bool IsGlobal = false; ///< mentions __global__
  bool IsDevice = false; ///< mentions __device__
};
/// The screen of such text is scanFunctionText (FunctionText.h).

/// The file offset where a kernel's definition starts, including its
/// `template <...>` header.
unsigned definitionBegin(const EditContext &Ctx, const clang::FunctionDecl *FD);

/// The indentation (spaces/tabs) of the line holding \p Offset.
std::string indentationAt(llvm::StringRef Code, unsigned Offset);

} // namespace optiml

#endif
