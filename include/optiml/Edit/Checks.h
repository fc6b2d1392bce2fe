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
class LangOptions;
} // namespace clang

namespace optiml {

/// What the checks allow beyond the defaults.
struct CheckOptions {
  bool AllowPrintf = false; ///< printf/puts in device code
  bool AllowMalloc = false; ///< malloc/free/new in device code
  bool AllowAsm = false;    ///< inline PTX
  /// Kernel launches spelled in the text (`<<<`, cudaLaunchKernel): for
  /// text that is host code, a synthesized program's launch statements.
  /// A launch from device code is still refused, on the AST, by
  /// checkDeviceCode.
  bool AllowLaunches = false;
};

/// A half-open byte range of the input.
struct ByteRange {
  unsigned Begin = 0, End = 0;
  std::string What; ///< "kernel 'saxpy'", "launch configuration of ..."
};

/// Replacements in another file than \p FileName (the file that defines the
/// edit's target): an edit rewrites that one file.
std::vector<CheckFailure>
checkOneFile(const clang::tooling::Replacements &Repls,
             llvm::StringRef FileName);

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
/// replace. \p LO are the compiler's options for the file. Works on any
/// text, even text that does not parse.
std::vector<CheckFailure>
checkIntroducedTokens(const clang::LangOptions &LO, llvm::StringRef OldCode,
                      llvm::StringRef NewCode,
                      const clang::tooling::Replacements &Repls,
                      const CheckOptions &Opts);

//===-- Edit text through the compiler's lexer (EditText.cpp)
//--------------===//
//
// Edit text is untrusted. It is lexed in place, inside the whole new file,
// with the language options the compiler uses for that file (digraphs, line
// splices, raw strings, CUDA), so what these checks see is what clang and
// nvcc see, whatever the spelling.

/// \p Text with its line splices (backslash, spaces, newline) removed: the
/// spelling the compiler reads.
std::string withoutSplices(llvm::StringRef Text);

/// Where each replacement's text lies in the code after \p Repls.
std::vector<ByteRange> editedRanges(const clang::tooling::Replacements &Repls);

/// Preprocessing in edit text: every directive (`#`, `%:`, after splices or
/// comments) with a token inside an edited range of \p NewCode, and every
/// `_Pragma` / `__pragma` there. The one directive edit text may hold is a
/// loop hint, `#pragma unroll [N]` or `#pragma nounroll`, whose arguments are
/// only numbers, names, parentheses and arithmetic.
std::vector<CheckFailure> checkEditDirectives(const clang::LangOptions &LO,
                                              llvm::StringRef NewCode,
                                              llvm::ArrayRef<ByteRange> Edited);

/// Lexical invariance: outside the replaced ranges, \p NewCode lexes to the
/// same tokens as \p OldCode (same text at the shifted offsets, and every
/// `#` still starts, or does not start, a directive); no token of the new
/// code straddles an edge of an edit; no directive of the old code is cut by
/// one.
std::vector<CheckFailure>
checkLexicalInvariance(const clang::LangOptions &LO, llvm::StringRef OldCode,
                       llvm::StringRef NewCode,
                       const clang::tooling::Replacements &Repls);

/// Whether \p NewCode, a rewriting of \p OldCode that should change
/// nothing the compiler sees (a launch macro written out as what it expands
/// to), preprocesses for \p Side to the same tokens, kind and spelling, in
/// the same order as \p OldCode, and leaves every other file of the
/// translation unit as it was; one failure at the first difference.
std::vector<CheckFailure> checkSameTokens(llvm::StringRef FileName,
                                          llvm::StringRef OldCode,
                                          llvm::StringRef NewCode,
                                          const ParseConfig &Config,
                                          CudaSide Side);

/// Preprocessed invariance: runs clang's preprocessor over \p OldCode and
/// \p NewCode for \p Side and checks that every token outside the edited
/// ranges expands to the same tokens (kind and spelling) at the shifted
/// place, that no macro invocation spans an edge of an edit, and that no
/// pragma comes from the edit's tokens other than a loop hint.
std::vector<CheckFailure>
checkPreprocessedInvariance(llvm::StringRef FileName, llvm::StringRef OldCode,
                            llvm::StringRef NewCode,
                            const clang::tooling::Replacements &Repls,
                            const ParseConfig &Config, CudaSide Side);

/// Code the edit introduces (declarations and statements inside the text of
/// \p Repls in \p New) that runs outside the kernel or grows the stack without
/// bound: constructor, destructor, cleanup, init_priority, section, alias and
/// ifunc attributes (any spelling: they are Attr kinds), alloca builtins,
/// variable length arrays; and device functions the edit makes recursive
/// (compared with \p Old, skipped when it is null); inline asm and calls to
/// printf or heap functions, found by what they are rather than how they are
/// spelled, unless \p Opts allows them. \p Side names the parse in messages.
std::vector<CheckFailure>
checkIntroducedCode(clang::ASTContext *Old, clang::ASTContext &New,
                    const clang::tooling::Replacements &Repls,
                    const CheckOptions &Opts, llvm::StringRef Side);

/// Device code in \p New that calls host-only functions or launches kernels
/// (dynamic parallelism) where \p Old did not.
std::vector<CheckFailure> checkDeviceCode(clang::ASTContext &Old,
                                          clang::ASTContext &New,
                                          const CheckOptions &Opts);

/// clang's errors in \p TU (at most \p Max), as "type-checks" failures; the
/// message says which side ("device", "host") when \p Side is set.
std::vector<CheckFailure> checkCompiles(const ParsedTU &TU,
                                        llvm::StringRef Side, unsigned Max = 5);

//===-- Both sides of a CUDA file (CheckSides.cpp) ----------------------===//

/// A CUDA text parsed for the host and for the device.
struct BothSides {
  ParsedTU Host, Device;
};

/// Parses \p Code for both sides at once (two clang instances, two
/// threads). Errors only when clang cannot run; compile errors are in the
/// TUs' diagnostics.
llvm::Expected<BothSides> parseBothSides(llvm::StringRef Code,
                                         llvm::StringRef FileName,
                                         const ParseConfig &Config);

/// checkIntroducedCode on both sides' ASTs (code under __CUDA_ARCH__ exists
/// only in the device parse), one report per place; \p Old is the input's
/// host AST (may be null).
std::vector<CheckFailure>
checkIntroducedCodeBothSides(clang::ASTContext *Old, const BothSides &New,
                             const clang::tooling::Replacements &Repls,
                             const CheckOptions &Opts);

/// The device side's errors (checkCompiles) that \p Reported does not
/// already hold at the same place: the same error on both sides is
/// reported once.
std::vector<CheckFailure>
deviceOnlyErrors(const ParsedTU &Device, llvm::ArrayRef<CheckFailure> Reported);

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
/// Added `__device__` functions are accepted when \p AllowHelpers, added
/// `__constant__` variables when \p AllowConstants.
std::vector<CheckFailure> checkDeclarations(clang::ASTContext &Old,
                                            clang::ASTContext &New,
                                            bool AllowHelpers,
                                            bool AllowConstants = false);

} // namespace optiml

#endif
