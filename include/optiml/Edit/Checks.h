//===- Checks.h - The checks every rewritten file passes -------*- C++ -*-===//
//
// Each check compares the input with the rewritten text (or their ASTs) and
// returns failures as data. The Rewriter runs them all; they are public so
// the search and tests can run one alone.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_EDIT_CHECKS_H
#define OPTIML_EDIT_CHECKS_H

#include "optiml/Edit/Edit.h"
#include "optiml/Frontend/Parse.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/ArrayRef.h"
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class FunctionDecl;
} // namespace clang

namespace optiml {

/// What the checks allow beyond the defaults.
struct CheckOptions {
  bool AllowPrintf = false; ///< printf/puts in device code
  bool AllowMalloc = false; ///< malloc/free/new in device code
  bool AllowAsm = false;    ///< inline PTX
  /// Headers an edit may add with #include, beyond defaultIncludeAllowList().
  std::vector<std::string> ExtraIncludes;
};

/// <cuda_fp16.h>, <cuda_bf16.h>, <cooperative_groups.h>, ...
llvm::ArrayRef<std::string> defaultIncludeAllowList();

/// A half-open byte range of the input.
struct ByteRange {
  unsigned Begin = 0, End = 0;
  std::string What; ///< "kernel 'saxpy'", "launch configuration of ..."
};

/// Replacements that rewrite text inside a macro expansion of the input
/// (\p Old is its AST). A replacement that contains a whole expansion is fine.
std::vector<CheckFailure>
checkMacroExpansions(clang::ASTContext &Old,
                     const clang::tooling::Replacements &Repls);

/// Replacements that reach outside every \p Allowed range (an insertion may
/// sit on a range's boundary).
std::vector<CheckFailure> checkScope(clang::ASTContext &Old,
                                     llvm::StringRef OldCode,
                                     const clang::tooling::Replacements &Repls,
                                     llvm::ArrayRef<ByteRange> Allowed);

/// Forbidden constructs the replacements' text introduces (printf, malloc,
/// asm, kernel launches from device code), counted against the text they
/// replace, and #includes outside the allow-list. Works on any text, even
/// text that does not parse.
std::vector<CheckFailure>
checkIntroducedTokens(llvm::StringRef OldCode, llvm::StringRef NewCode,
                      const clang::tooling::Replacements &Repls,
                      const CheckOptions &Opts);

/// Device code in \p New that calls host-only functions or launches kernels
/// (dynamic parallelism) where \p Old did not.
std::vector<CheckFailure> checkDeviceCode(clang::ASTContext &Old,
                                          clang::ASTContext &New,
                                          const CheckOptions &Opts);

/// clang's errors in \p TU (at most \p Max), as "type-checks" failures; the
/// message says which side ("device", "host") when \p Side is set.
std::vector<CheckFailure> checkCompiles(const ParsedTU &TU,
                                        llvm::StringRef Side,
                                        unsigned Max = 5);

/// The function \p Name keeps its name, kind (kernel or not), template
/// parameters and parameter types (qualifiers added to pointees and
/// __restrict__ aside) and, for kernels, its launched instantiations.
std::vector<CheckFailure> checkSignature(clang::ASTContext &Old,
                                         clang::ASTContext &New,
                                         llvm::StringRef Name);

/// The definition of the main-file function named \p Name (qualified; the
/// pattern for templates), kernel or not; null if none.
const clang::FunctionDecl *findFunctionDefinition(clang::ASTContext &Ctx,
                                                  llvm::StringRef Name);

/// Top-level declarations of the main file that \p New adds or removes.
/// Added `__device__` functions are accepted when \p AllowHelpers.
std::vector<CheckFailure> checkDeclarations(clang::ASTContext &Old,
                                            clang::ASTContext &New,
                                            bool AllowHelpers);

} // namespace optiml

#endif
