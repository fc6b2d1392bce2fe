//===- EvalTestUtil.h - Fake compilers and programs for Eval tests -*- C++
//-*-===//
//
// CI has no GPU and the tests must not depend on nvcc: a fake nvcc (a shell
// script) "compiles" a .cu by copying it, so a test's "source" is itself the
// program that runs (another shell script) and plays the probe's part.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_UNITTESTS_EVAL_EVALTESTUTIL_H
#define OPTIML_UNITTESTS_EVAL_EVALTESTUTIL_H

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

namespace optiml {
namespace testing {

class TempDir {
public:
  TempDir() { llvm::sys::fs::createUniqueDirectory("optiml-evaltest", Path); }
  ~TempDir() { llvm::sys::fs::remove_directories(Path); }
  std::string file(llvm::StringRef Name) const {
    llvm::SmallString<128> P(Path);
    llvm::sys::path::append(P, Name);
    return std::string(P);
  }
  std::string write(llvm::StringRef Name, llvm::StringRef Text,
                    bool Executable = false) const {
    std::string P = file(Name);
    llvm::SmallString<128> Dir(llvm::sys::path::parent_path(P));
    llvm::sys::fs::create_directories(Dir);
    {
      std::error_code EC;
      llvm::raw_fd_ostream OS(P, EC);
      OS << Text;
    }
    if (Executable)
      llvm::sys::fs::setPermissions(P, llvm::sys::fs::all_read |
                                           llvm::sys::fs::all_exe |
                                           llvm::sys::fs::owner_write);
    return P;
  }
  llvm::SmallString<128> Path;
};

/// A fake nvcc: `--version` prints a version; otherwise it appends a line
/// to \p CountFile, prints ptxas -v lines for a kernel `saxpy`, and copies
/// the source (the last argument) to the -o path, or fails like nvcc when
/// the source contains COMPILE_ERROR.
inline std::string writeFakeNvcc(const TempDir &D, llvm::StringRef CountFile) {
  std::string Script = R"(#!/bin/sh
if [ "$1" = "--version" ]; then echo "fake nvcc 13.0"; exit 0; fi
echo x >> ")" + CountFile.str() +
                       R"("
out=""; src=""; prev=""
for a in "$@"; do
  if [ "$prev" = "-o" ]; then out="$a"; fi
  prev="$a"; src="$a"
done
if grep -q COMPILE_ERROR "$src"; then
  echo "$src(3): error: identifier \"q\" is undefined" >&2
  echo "$src(5): error: expected a \";\"" >&2
  echo "2 errors detected in the compilation of \"$src\"." >&2
  exit 2
fi
echo "ptxas info    : Compiling entry function '_Z5saxpyifPKfPf' for 'sm_90'" >&2
echo "ptxas info    : Function properties for _Z5saxpyifPKfPf" >&2
echo "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" >&2
echo "ptxas info    : Used 10 registers, used 0 barriers" >&2
cp "$src" "$out" && chmod +x "$out"
)";
  return D.write("bin/nvcc", Script, /*Executable=*/true);
}

} // namespace testing
} // namespace optiml

#endif
