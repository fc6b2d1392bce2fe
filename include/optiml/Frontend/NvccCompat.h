//===- NvccCompat.h - What nvcc accepts and clang does not ------*- C++ -*-===//
//
// Programs are written for nvcc, and we parse them with clang. Where nvcc
// accepts what clang's CUDA mode does not, two things close the gap for the
// parse alone (nvcc still builds the program as the user wrote it):
//
// - a header clang reads before the file (-include, from memory): what
//   nvcc's own headers give every file implicitly, such as host-side
//   min/max, <time.h>, and intrinsics missing from clang's CUDA wrappers;
// - launches spelled with spaces inside the chevrons, `k<< <g, b>> >(...)`,
//   rewritten to `k<<<g, b>>> (...)` in the text clang reads, byte for byte
//   the same length, so every offset, line and column stays the user's.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_FRONTEND_NVCCCOMPAT_H
#define OPTIML_FRONTEND_NVCCCOMPAT_H

#include "llvm/ADT/StringRef.h"
#include <string>

namespace optiml {

/// Where the compatibility header lives (in memory only; no such file
/// exists on disk). Toolchain::clangArgs() names it with -include.
llvm::StringRef nvccCompatHeaderPath();
/// Its text. It applies only under clang's CUDA runtime wrapper (real CUDA
/// headers), so mock-header parses (-nocudainc) are unchanged.
llvm::StringRef nvccCompatHeaderText();

/// \p Code with launches spelled `<< <` ... `>> >` respelled `<<< ` ...
/// `>>> `, the same length. Everything else, comments and strings included,
/// is left as it is. Returns \p Code unchanged when it has none.
std::string normalizeLaunchChevrons(llvm::StringRef Code);

} // namespace optiml

#endif
