//===- EditJSON.h - Edits as JSON: parse, validate, print, schema -*- C++
//-*-===//
//
// The one place that reads and writes edit documents. Parsing is strict:
// unknown kinds, unknown or missing fields, mistyped or out-of-range
// parameters are errors naming the field ("edits[1].params.factor: ...").
// Nothing here parses CUDA, so it is cheap enough to fuzz.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_EDIT_EDITJSON_H
#define OPTIML_EDIT_EDITJSON_H

#include "optiml/Edit/Edit.h"
#include "optiml/Edit/Transform.h"
#include "optiml/Frontend/KernelModel.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace optiml {

/// One edit object, or an array of them (applied in order). Validates the
/// shape, the kind and the parameters, not the target.
llvm::Expected<std::vector<Edit>> parseEdits(llvm::StringRef JSON);
/// Exactly one edit object.
llvm::Expected<Edit> parseEdit(llvm::StringRef JSON);

/// Checks \p E's parameters against \p T's ParamSpecs: required ones
/// present, no unknown ones, types, ranges and choices. \p Where prefixes
/// messages ("edits[2]"). Fills in defaults.
llvm::Error validateParams(Edit &E, const Transform &T,
                           llvm::StringRef Where = "edit");

/// Checks that \p E's target exists in \p M and is of the kind the transform
/// expects (kernel, loop id, launch-site id).
llvm::Error validateTarget(const Edit &E, const KernelModel &M,
                           llvm::StringRef Where = "edit");

/// Compact JSON of one edit / a list, as parseEdits reads it.
std::string editToJSON(const Edit &E);
std::string editsToJSON(llvm::ArrayRef<Edit> Edits);

/// {"applied": true, "summary", "changes_precision", "nvcc_flags", "diff"}.
std::string appliedEditToJSON(const AppliedEdit &A);
/// {"applied": false, "kind", "target", "failures": [{check, file, line,
/// column, message}]}.
std::string rejectionToJSON(const EditRejected &R);

/// What `transforms --json` prints: per kernel, the applicable edits (kind,
/// target, reason, parameters, suggested edits) and, when
/// \p WithInapplicable, the others with the reason they do not apply.
struct KernelCandidates {
  std::string Kernel;
  std::vector<Candidate> Candidates;
};
std::string candidatesToJSON(llvm::StringRef File,
                             llvm::ArrayRef<KernelCandidates> Kernels,
                             bool WithInapplicable);

/// One line describing a parameter: "factor (integer 2..1024, optional)".
std::string describeParam(const ParamSpec &P);

/// The JSON Schema (draft 2020-12) of an edit or a list of edits, generated
/// from every transform's ParamSpecs. docs/edit.schema.json is its output.
std::string editJSONSchema();

} // namespace optiml

#endif
