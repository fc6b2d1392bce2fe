//===- TemplatesInternal.h - Per-class kernels ------------------*- C++ -*-===//
#ifndef OPTIML_LIB_SYNTH_TEMPLATESINTERNAL_H
#define OPTIML_LIB_SYNTH_TEMPLATESINTERNAL_H

#include "optiml/Synth/Spec.h"
#include "optiml/Synth/Templates.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace optiml {
namespace synth {


/// A dimension as C++: its name, or the fixed number.
std::string dimRef(const Dim &D);

/// \p Expr with each identifier that names an input replaced by
/// `name[<Index>]` (not after `.` or `->`, not inside a number).
std::string indexInputs(llvm::StringRef Expr, const Spec &S,
                        llvm::StringRef Index);

/// The offsets a stencil expression reads: each `<input>(di, dj)`, or
/// `<input>(dz, dy, dx)` for stencil3d (integer literals). Errors name the
/// field "expr".
llvm::Error stencilOffsets(const Spec &S,
                           std::vector<std::vector<int>> *Offsets);

/// \p S's stencil expression with its neighbour reads turned into indexed
/// reads of the input over the dimensions \p Dims ([rows, cols], 3D
/// [depth, rows, cols]): `<input>[(row + di) * cols + (col + dj)]`.
std::string stencilExpr(const Spec &S, llvm::ArrayRef<std::string> Dims);

/// The largest offset a stencil's expression reads (its border's width).
int stencilRadius(const Spec &S);

/// The stencil expression used when the spec gives none: the mean of the
/// four (3D: six) neighbours of the cell.
std::string defaultStencilExpr(const Spec &S);

} // namespace synth
} // namespace optiml

#endif
