//===- TemplatesInternal.h - Per-class kernels ------------------*- C++ -*-===//
#ifndef OPTIML_LIB_SYNTH_TEMPLATESINTERNAL_H
#define OPTIML_LIB_SYNTH_TEMPLATESINTERNAL_H

#include "optiml/Synth/Spec.h"
#include "optiml/Synth/Templates.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace optiml {
namespace synth {

/// The kernel's parameter list and the launch's argument list, built
/// together: the named dimensions first (as ints), then the tensors.
struct KernelParams {
  std::string Decl, Args;

  void dims(const Spec &S, llvm::ArrayRef<Dim> Dims) {
    for (const auto &Size : S.Sizes)
      if (llvm::any_of(Dims,
                       [&](const Dim &D) { return D.Name == Size.first; }))
        add("int " + Size.first, Size.first);
  }
  void input(const Tensor &T) {
    add(("const " + elementTypeName(T.Type) + " *" + T.Name).str(),
        "d_" + T.Name);
  }
  void output(const Tensor &T) {
    add((elementTypeName(T.Type) + " *" + T.Name).str(), "d_" + T.Name);
  }
  void add(const std::string &D, const std::string &A) {
    // A dimension that is also the count parameter is passed once.
    if (llvm::is_contained(Declared, D))
      return;
    Declared.push_back(D);
    Decl += (Decl.empty() ? "" : ", ") + D;
    Args += (Args.empty() ? "" : ", ") + A;
  }
  std::vector<std::string> Declared;
};

/// A GEMM's dimensions as C++ ([M, K] x [K, N]), its parameter list and
/// its title, shared by the plain and the expert template.
struct GemmShape {
  std::string M, K, N, Title;
  KernelParams P;
};
GemmShape gemmShape(const Spec &S);

/// The element type's name ("float").
std::string typeName(const Tensor &T);

/// The product of \p T's dimensions as an int expression ("rows * cols").
std::string countExpr(const Tensor &T);

/// The expert versions of \p S's class (none for most classes): programs
/// written for speed rather than for the catalog, each with a short name
/// ("register-blocked 128x128 tiles"). They compete with the plain template
/// on time (synthesize keeps the fastest verified program).
std::vector<std::pair<std::string, KernelCode>> expertCodes(const Spec &S);

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
