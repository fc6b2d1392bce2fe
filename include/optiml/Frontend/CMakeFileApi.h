//===- CMakeFileApi.h - A CMake target as a program to build ---*- C++ -*-===//
//
// `optimize -p build --target app` takes a program from CMake itself: the
// target's sources and link line, read from CMake's file API
// (codemodel-v2 in <build>/.cmake/api/v1). The query file is written for the
// user and cmake re-run once when there is no reply yet.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_FRONTEND_CMAKEFILEAPI_H
#define OPTIML_FRONTEND_CMAKEFILEAPI_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace optiml {

struct CMakeSource {
  std::string Path;     ///< absolute
  std::string Language; ///< CUDA, CXX, C...
};

struct CMakeTarget {
  std::string Name;
  std::string Type; ///< EXECUTABLE, STATIC_LIBRARY...
  std::string BuildDir;
  /// The compiled sources, in the target's order (headers listed in the
  /// target are left out).
  std::vector<CMakeSource> Sources;
  /// The link line's libraries and library paths as nvcc flags: libraries
  /// built by the project as absolute paths, -l and -L as written (paths
  /// made absolute against the build directory), -Wl,... as -Xlinker.
  std::vector<std::string> LinkFlags;
  /// What was left out of the link line, and why (for -v).
  std::vector<std::string> Notes;
};

/// Reads \p Target from the file API reply under \p BuildDir. Without a
/// reply, writes the codemodel-v2 query and, when \p Reconfigure, runs
/// `cmake <BuildDir>` once (the cmake the build directory was configured
/// with). Errors name what is missing: not a CMake build directory, no
/// such target (listing the executables there are).
llvm::Expected<CMakeTarget> readCMakeTarget(llvm::StringRef BuildDir,
                                            llvm::StringRef Target,
                                            bool Reconfigure = true);

/// The link line's fragments (the reply's link.commandFragments with role
/// "libraries" or "libraryPath") as nvcc flags; for tests.
std::vector<std::string> linkFragmentsForNvcc(llvm::ArrayRef<std::string> Words,
                                              llvm::StringRef BuildDir,
                                              std::vector<std::string> &Notes);

} // namespace optiml

#endif
