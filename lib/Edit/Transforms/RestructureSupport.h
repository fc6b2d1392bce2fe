//===- RestructureSupport.h - Shapes the restructuring edits share -*- C++ -*-===//
//
// Private to lib/Edit/Transforms. warp-per-row, privatize-atomics,
// all-pairs-tiling and transpose-through-shared change which thread does
// what; they recognize the same few shapes (one item per thread behind a
// bounds guard, thread-uniform values, the item count a launch passes) and
// rewrite launch sites the same way. This header recognizes them once.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURESUPPORT_H
#define OPTIML_LIB_EDIT_TRANSFORMS_RESTRUCTURESUPPORT_H

#include "optiml/Edit/Transform.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>
#include <vector>

namespace clang {
class CUDAKernelCallExpr;
class DeclStmt;
class Expr;
class FunctionDecl;
class IfStmt;
class SourceRange;
class Stmt;
class ValueDecl;
class VarDecl;
} // namespace clang

namespace optiml {
namespace restructure {

//===--- Text --------------------------------------------------------------===//

/// Offsets [Begin, End) of a piece of the main file.
struct Span {
  unsigned Begin = 0, End = 0;
};

/// The span of \p S; statements that end in `;` (expressions, `return`,
/// declarations) include it. Nothing when any part comes from a macro.
std::optional<Span> stmtSpan(const EditContext &Ctx, const clang::Stmt *S);
/// The span of an expression, without a trailing `;`.
std::optional<Span> exprSpan(const EditContext &Ctx, const clang::Stmt *S);
std::string exprText(const EditContext &Ctx, const clang::Stmt *S);

/// A replacement inside a region that is regenerated as text.
struct TextEdit {
  unsigned Offset = 0; ///< absolute file offset
  unsigned Length = 0;
  std::string Text;
};
/// The text of [Begin, End) of \p Code with \p Edits (inside it, not
/// overlapping; insertions at one offset keep their order) applied.
std::string splice(llvm::StringRef Code, unsigned Begin, unsigned End,
                   std::vector<TextEdit> Edits);
/// \p Text with \p Prefix added at the start of every non-empty line but
/// the first.
std::string indentLines(llvm::StringRef Text, llvm::StringRef Prefix);

/// An identifier starting with \p Base that does not occur in \p Code.
std::string freshName(llvm::StringRef Code, llvm::StringRef Base);
/// Indentation of the line holding \p Offset.
std::string lineIndent(llvm::StringRef Code, unsigned Offset);
/// \p Text in parentheses unless it is an identifier, a literal, or already
/// parenthesized.
std::string paren(llvm::StringRef Text);
/// "L:C" of \p S in the main file.
std::string where(const EditContext &Ctx, const clang::Stmt *S);

//===--- Expressions -------------------------------------------------------===//

/// \p E without parentheses, implicit casts and explicit casts.
const clang::Expr *stripCasts(const clang::Expr *E);
/// The declaration \p E names (through parentheses and casts), or null.
const clang::ValueDecl *declOf(const clang::Expr *E);
bool mentions(const clang::Stmt *S, const clang::ValueDecl *D);
/// threadIdx/blockIdx/blockDim/gridDim anywhere in \p S (or only \p Var).
bool mentionsBuiltin(const clang::Stmt *S, llvm::StringRef Var = "");
/// The dimension D of `blockIdx.D * blockDim.D + threadIdx.D` in any
/// operand order, also through a `__device__` helper whose body is
/// `return <that>;`.
std::optional<char> linearIndexDim(const clang::Expr *E);
/// Whether \p E, in \p Kernel, has the same value in every thread of a
/// block: no thread index, no loads, locals followed to their initializers
/// (locals assigned again are not uniform).
bool isBlockUniform(const clang::Expr *E, const clang::FunctionDecl *Kernel);
/// An integer constant expression's value.
std::optional<int64_t> intValue(const clang::Expr *E,
                                const clang::ASTContext &AST);
/// Variables assigned, incremented or whose address is taken in \p S.
std::vector<const clang::ValueDecl *> writtenDecls(const clang::Stmt *S);
/// Element writes in \p S: the base expression of each `b[i] = ...`,
/// `*p = ...`, `b[i] += ...`, `b[i]++`.
struct MemWrite {
  const clang::Expr *Target = nullptr; ///< the written lvalue
  const clang::Expr *Base = nullptr;   ///< pointer or array being written
  const clang::Expr *Index = nullptr;  ///< null for `*p`
};
std::vector<MemWrite> memoryWrites(const clang::Stmt *S);
/// The first call in \p S to a function that is not a math function, an
/// atomic, or a warp primitive and takes a pointer or reference argument
/// (its writes cannot be followed); null if none.
const clang::Stmt *opaqueCall(const clang::Stmt *S);
/// The first `return`, `break`, `continue` or `goto` in \p S (`break`
/// and `continue` only when they leave \p S), or null.
const clang::Stmt *firstJump(const clang::Stmt *S);

//===--- The one-item-per-thread shape -------------------------------------===//

/// `T i = <linear index in D>;` followed by `if (i < n) body` as the last
/// statement of the kernel, or by `if (i >= n) return;` and the rest.
struct ThreadItem {
  const clang::VarDecl *Index = nullptr;
  const clang::DeclStmt *IndexDecl = nullptr;
  char Dim = 'x';
  const clang::Expr *Bound = nullptr; ///< n
  const clang::IfStmt *Guard = nullptr;
  bool EarlyReturn = false;
  /// Statements before the index declaration (must be uniform
  /// declarations; callers check).
  std::vector<const clang::Stmt *> Before;
  /// The guarded statements.
  std::vector<const clang::Stmt *> Body;
};
std::optional<ThreadItem> matchThreadItem(const clang::FunctionDecl *Kernel,
                                          std::string &WhyNot);

//===--- Launch sites ------------------------------------------------------===//

/// The launch expression a model launch site names, or null.
const clang::CUDAKernelCallExpr *findLaunch(const EditContext &Ctx,
                                            const LaunchSite &L);

/// The text a launch passes for \p Bound (a kernel parameter, or an
/// integer constant written in the kernel); nothing, with \p WhyNot, when
/// the value cannot be named at the launch.
std::optional<std::string> boundAtLaunch(const EditContext &Ctx,
                                         const clang::Expr *Bound,
                                         const LaunchSite &L,
                                         std::string &WhyNot);

/// Every launch of \p K can be rewritten (not in a macro); else the reason.
std::string launchProblem(const KernelInfo &K);

/// Whether the grid of \p L is a plain integer (not a `dim3`).
bool gridIsInteger(const EditContext &Ctx, const LaunchSite &L);

/// The text of a plain integer grid capped at \p Max blocks: a literal
/// becomes min(literal, Max), anything else `G < Max ? G : Max`.
std::string cappedGrid(llvm::StringRef Grid, int64_t Max);

} // namespace restructure
} // namespace optiml

#endif
