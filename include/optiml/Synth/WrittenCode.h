//===- WrittenCode.h - Checks on a model's part of a program ----*- C++ -*-===//
//
// A model writes only the GPU's part of a synthesized program: device code
// (kernels, device helpers, __constant__ data) and the statements that
// launch it. The rest (inputs drawn from the seed, the reference, the check,
// main) is the harness, which the model never sees as editable text. The
// model's two texts are untrusted: they are placed into the harness as
// insertions and pass the checks an edit's text passes (Checks.h: no
// directive but a loop hint, no asm, printf, heap, constructor attributes,
// host-only calls from device code, clang's errors), plus what host code
// written by a model may do, decided on what the compiler resolved:
//
// - call or name only functions declared by the CUDA toolkit's headers (the
//   runtime API, dim3), constexpr functions, compiler builtins that are not
//   library functions, kernels, and functions the model itself defines
//   (whose bodies are checked alike); no call through a pointer;
// - name only the variables it declares, the device buffers and the sizes:
//   not the host arrays, the seed or anything else of the harness;
// - declare only new entities (no redeclaration, specialization, reopened
//   namespace, extern "C" or asm label), and define every function it
//   calls from host code.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_SYNTH_WRITTENCODE_H
#define OPTIML_SYNTH_WRITTENCODE_H

#include "optiml/Edit/Edit.h"
#include "optiml/Frontend/Parse.h"
#include "optiml/Synth/Spec.h"
#include "optiml/Synth/Templates.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace optiml {
namespace synth {

/// The longest text a model may write for one part (bytes).
inline constexpr size_t MaxWrittenPart = 64 * 1024;

/// \p Code (a model's kernels and launch statements) placed in \p S's
/// program, checked. \p FileName names the program for the parse and in
/// the failures (their lines are the program's). Empty: it passed. Errors
/// only when clang cannot run at all.
llvm::Expected<std::vector<CheckFailure>>
checkWrittenCode(const Spec &S, const ProgramOptions &Opts,
                 const KernelCode &Code, llvm::StringRef FileName,
                 const ParseConfig &Config);

/// The names a model's launch statements may use besides its own: the
/// device buffers (d_<name>) and the sizes, in the spec's order.
std::vector<std::string> launchNames(const Spec &S);

} // namespace synth
} // namespace optiml

#endif
