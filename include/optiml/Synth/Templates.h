//===- Templates.h - Whole CUDA programs written from a spec ----*- C++ -*-===//
//
// The template library: for each program class, the kernel(s) written in the
// straightforward style the catalog optimizes well (one thread per output or
// per row, a plain loop over the reduced dimension, a shared-memory tree per
// block), inside a program shared by every class:
//
// - inputs drawn from a seed with the program's own generator (xorshift),
//   so that any run can be repeated;
// - a `main` that takes the sizes and the seed from its command line
//   (`rows=333 cols=7 seed=2`, defaults from the spec), so one binary is
//   checked at several sizes and seeds, and `check=0` to skip the check;
// - the spec's reference, called on the host, and a check of every output
//   element with the spec's tolerance, printing one verdict line
//   ("optiml-synth: PASS ...") and exiting 0 (match), 1 (mismatch) or 2
//   (a CUDA error or a bad argument).
//
// Compiled with -DOPTIML_SYNTH_TEST_OUTPUTS=0 (or =1) the program uses no
// GPU: its outputs come from the reference itself (=1: one element made
// wrong), which lets the tests exercise the generator, the reference and
// the check on a machine without one.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SYNTH_TEMPLATES_H
#define OPTIML_SYNTH_TEMPLATES_H

#include "optiml/Support/TextTemplate.h"
#include "optiml/Synth/Spec.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace optiml {
namespace synth {

/// What the class of \p S expects of its inputs, outputs and fields
/// (counts, shapes, element types, expr, op). Errors name the field:
/// "spec.json: inputs[1].shape[0]: 'k2' must be the dimension 'k' of
/// inputs[0].shape[1]: a gemm multiplies [m, k] by [k, n]".
llvm::Error checkClass(const Spec &S);

/// One line per class for --help and the docs: what it computes and the
/// shapes it expects.
std::string describeClass(ProgramClass C);

/// The tolerance the check uses: the spec's, else 1e-4 (absolute and
/// relative) when an output is float, 1e-10 when all are double.
Tolerance effectiveTolerance(const Spec &S);

/// The name of the program's kernel (the spec's "name", else the class's).
std::string kernelName(const Spec &S);

struct ProgramOptions {
  /// The program's file name, for its header; "-" or empty: printed.
  std::string FileName;
  /// Lines of the header comment that say how the program was checked
  /// ("UNVERIFIED: ..." or the verification runs).
  std::vector<std::string> Status;
};

/// The GPU's part of a program: what a class's template (or a model's
/// strategy) contributes to the program shared by every class.
struct KernelCode {
  /// One line for the header: "row-wise softmax of x [rows, cols] into y".
  std::string Title;
  /// Device helpers and __global__ kernels.
  std::string Kernels;
  /// Statements that launch them, inside runOnDevice: the device buffers
  /// are `d_<name>` (outputs already zeroed), the dimensions are ints named
  /// as in the spec.
  std::string Launch;
  /// Inputs whose generated values need a range other than the tensor's
  /// (name, lo expression, hi expression): a histogram's values lie in
  /// [0, bins).
  std::vector<std::pair<std::string, std::pair<std::string, std::string>>>
      Ranges;
};

/// The template's code for \p S's class (checkClass has passed).
KernelCode templateCode(const Spec &S);

/// The whole .cu program for \p S (checkClass must have passed). The
/// reference is declared before main and defined at the end of the file,
/// after a #line naming the spec's field, so that nvcc reports its errors
/// as "<spec> (reference)" and every other line keeps its number.
std::string generateProgram(const Spec &S, const ProgramOptions &Opts);
/// The same program around other kernels and launches (a model's).
std::string generateProgram(const Spec &S, const ProgramOptions &Opts,
                            const KernelCode &Code);

/// Where the parts of a KernelCode lie in its program: the program
/// generated with empty Kernels and Launch (the harness alone), and the
/// offsets in it where each is inserted.
struct ProgramLayout {
  std::string Skeleton;
  unsigned KernelsAt = 0, LaunchAt = 0;
};
ProgramLayout programLayout(const Spec &S, const ProgramOptions &Opts,
                            const KernelCode &Code);

/// \p Source with its header's status lines replaced by \p Status (a
/// program without a template's header gets them as comments on top).
std::string setProgramStatus(llvm::StringRef Source,
                             llvm::ArrayRef<std::string> Status);

using optiml::fillTemplate;

} // namespace synth
} // namespace optiml

#endif
