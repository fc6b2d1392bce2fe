//===- Transform.h - One catalog transformation ----------------*- C++ -*-===//
//
// A transformation is a small class: a cheap prepare() that says whether and
// why it applies to a target (and which concrete edits it suggests), and an
// apply() that returns the replacements. The checked rewriter (Rewriter.h)
// applies them in memory and re-parses before anything counts.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_EDIT_TRANSFORM_H
#define OPTIML_EDIT_TRANSFORM_H

#include "optiml/Edit/Edit.h"
#include "optiml/Frontend/KernelModel.h"
#include "optiml/Frontend/Parse.h"
#include "clang/Basic/SourceLocation.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/ArrayRef.h"
#include <memory>

namespace clang {
class ASTContext;
} // namespace clang

namespace optiml {

/// Everything a transform may look at. The AST is the host-side parse of
/// the translation unit; Code is the text of the file being edited (the
/// main file, or with Config.MainFile a file it includes), and the
/// replacements are in that file only.
struct EditContext {
  llvm::StringRef FileName; ///< absolute path of the file being edited
  llvm::StringRef Code;
  const KernelModel &Model;
  clang::ASTContext &AST;
  const ParseConfig &Config;

  /// The file being edited, in AST's source manager.
  clang::FileID file() const;
  /// Whether \p Loc (its expansion) is in the file being edited.
  bool inFile(clang::SourceLocation Loc) const;
};

/// The kernel model as an edit of \p FileName sees it: kernels defined in
/// that file, with their launches in that file (a launch written in another
/// file is out of an edit's reach, so transforms that read or rewrite
/// launches see the kernel as not launched there).
KernelModel modelForFile(const KernelModel &M, llvm::StringRef FileName);

/// The answer of prepare().
struct Applicability {
  bool Applies = false;
  /// Why it applies ("loop has a constant trip count of 8"), or exactly why
  /// not ("trip count is not a constant: bound 'n' is a parameter").
  std::string Reason;
  /// Concrete edits worth trying (with parameters), best first.
  std::vector<Edit> Suggestions;
  /// How much more than usual the transform's own analysis expects of its
  /// suggestions here (a search scales its prior by it), and why.
  double PriorScale = 1;
  std::string PriorWhy;
};

class Transform {
public:
  virtual ~Transform() = default;
  virtual llvm::StringRef kind() const = 0;
  /// One line for `transforms --help` and the docs.
  virtual llvm::StringRef description() const = 0;
  virtual TargetKind targetKind() const = 0;
  virtual std::vector<ParamSpec> params() const { return {}; }
  /// Whether this edit may change floating-point results.
  virtual bool changesPrecision(const Edit &E) const { return false; }

  virtual Applicability prepare(const EditContext &Ctx,
                                llvm::StringRef Target) const = 0;
  /// Replacements in Ctx.FileName. Errors are EditRejected with a reason.
  virtual llvm::Expected<clang::tooling::Replacements>
  apply(const EditContext &Ctx, const Edit &E) const = 0;
  /// Extra nvcc flags (only compile-flags uses this).
  virtual std::vector<std::string> nvccFlags(const Edit &E) const { return {}; }
  /// One line for AppliedEdit::Summary (default: kind, target, params).
  virtual std::string summary(const Edit &E) const;
  /// Whether apply() may insert new `__device__` helper functions (right
  /// before the target kernel's definition). Other new declarations are
  /// always rejected.
  virtual bool addsHelpers() const { return false; }
  /// Whether the edit changes the kernel's parameter list; the checks then
  /// require every launch site to type-check with the new signature instead
  /// of an unchanged signature.
  virtual bool changesSignature(const Edit &E) const { return false; }
  /// Whether the rewrite depends on the kernel's launches (their block and
  /// grid shapes or arguments) or rewrites them. An edit rewrites one file,
  /// and sees only the launches written there: a kernel also launched from
  /// another file of the translation unit gets only the transforms that do
  /// not. True unless a transform says otherwise, so that a new one is safe.
  virtual bool readsLaunches() const { return true; }
  /// Whether the rewrite depends on what the kernel's body does (its
  /// reads, writes, loops, calls). The body is read as the host side of
  /// the compile sees it: a body with preprocessor conditionals, which the
  /// device side may resolve otherwise (`#if __CUDA_ARCH__ >= 700`), gets
  /// only the transforms that do not. True unless a transform says
  /// otherwise, so that a new one is safe.
  virtual bool readsBody() const { return true; }
  /// Whether the rewrite inserts a statement just before each launch of the
  /// kernel and a declaration just before the kernel's first declaration
  /// (constant-memory's copy and array): the scope check then allows
  /// insertions there, and nothing else outside the kernel.
  virtual bool insertsAroundLaunches() const { return false; }
};

/// Where \p Kernel is launched in the translation unit outside the file
/// \p Ctx rewrites ("transpose.cu:8"), or empty when it is not.
std::string launchOutsideFile(const EditContext &Ctx, const KernelInfo &Kernel);

/// Why a transform that depends on the kernel's launches must not apply
/// when the kernel's address is taken (a function pointer, cudaLaunchKernel,
/// an occupancy query): a launch through it is not in the model and would
/// be left as it is, however the kernel changed. Empty when it is not taken.
std::string addressTakenReason(const KernelInfo &Kernel,
                               llvm::StringRef EditedFile);

/// Why a transform that reads the kernel's body must not apply when the
/// body (in \p Code, the text of the file that defines it) holds a
/// preprocessor conditional: the parse reads the body as the host side of
/// the compile does, and the device side may see other code. Empty when it
/// holds none.
std::string sideConditionalReason(const KernelInfo &Kernel,
                                  llvm::StringRef Code);

/// One applicable (or, for -v, inapplicable) transform for one target.
struct Candidate {
  const Transform *T = nullptr;
  std::string Target;
  Applicability A;
};

/// prepare() of every catalog transform on every target of \p Kernel (the
/// kernel, its loops, its launch sites), in catalog order. Generic kinds
/// (replace-function, add-device-function) are not listed.
std::vector<Candidate> listCandidates(const EditContext &Ctx,
                                      const KernelInfo &Kernel);

/// Every transform, in a fixed order (Catalog.cpp registers them).
llvm::ArrayRef<std::unique_ptr<Transform>> allTransforms();
const Transform *findTransform(llvm::StringRef Kind);

} // namespace optiml

#endif
