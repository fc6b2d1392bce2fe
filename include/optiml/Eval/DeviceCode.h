//===- DeviceCode.h - The device code of a built program --------*- C++ -*-===//
//
// What the GPU runs of a program, as cuobjdump prints it from the
// executable nvcc made: every kernel's machine code, its resources, and the
// device data sections (constant banks, initialized globals), with what
// names the build rather than the code left out (the source's name or
// path, ptxas's command line, section offsets that move with them). Two
// builds of programs whose kernels compile alike give the same text,
// whatever folders they were built in.
//
// cuobjdump is the one program run here.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_EVAL_DEVICECODE_H
#define OPTIML_EVAL_DEVICECODE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>

namespace optiml {

/// cuobjdump beside \p NvccPath, else in PATH; empty when there is none.
std::string findCuobjdump(llvm::StringRef NvccPath);

/// \p Dump (the output of `cuobjdump -elf`) without what differs between
/// two builds of the same code: the fatbin's `identifier` (the source's
/// name) and `ptxasOptions`, the section tables (offsets), notes (tool
/// command lines), debug sections (file names, line tables), attribute
/// ordinals, and the launch-bound attributes that do not change the code
/// (EIATTR_MAX_THREADS, EIATTR_MAXREG_COUNT: with the same register count
/// and instructions, a kernel runs the same at every launch the program
/// makes; the register count itself, EIATTR_REGCOUNT, stays).
std::string normalizeDeviceDump(llvm::StringRef Dump);

/// Runs `cuobjdump -elf` on \p Binary and returns its normalized output
/// (normalizeDeviceDump). An error when cuobjdump cannot run, fails, times
/// out, its output is cut, or the program holds no device code.
llvm::Expected<std::string> deviceCode(llvm::StringRef Cuobjdump,
                                       llvm::StringRef Binary,
                                       double TimeoutSeconds = 120);

} // namespace optiml

#endif // OPTIML_EVAL_DEVICECODE_H
