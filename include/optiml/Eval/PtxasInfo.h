//===- PtxasInfo.h - Per-kernel resources from `ptxas -v` ------*- C++ -*-===//
//
// nvcc -Xptxas -v prints, per entry function and architecture, registers,
// stack, spills and shared memory. These are the "does it compile, and at
// what cost" facts of a candidate.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_EVAL_PTXASINFO_H
#define OPTIML_EVAL_PTXASINFO_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <string>
#include <vector>

namespace optiml {

struct KernelResources {
  std::string Mangled; ///< as ptxas names it, e.g. _Z5saxpyifPKfPf
  std::string Name; ///< demangled, without parameters: "ops::scale<float, 256>"
  std::string Arch; ///< sm_90
  unsigned Registers = 0;
  unsigned Barriers = 0;
  uint64_t StackBytes = 0;
  uint64_t SpillStoreBytes = 0;
  uint64_t SpillLoadBytes = 0;
  uint64_t SharedBytes = 0; ///< static shared memory (smem)
  uint64_t ConstBytes = 0;  ///< cmem[0] when printed (older CUDA)

  bool spills() const { return SpillStoreBytes || SpillLoadBytes; }
};

/// Parses the `ptxas info` lines in \p Log (nvcc's stderr with -Xptxas -v);
/// other lines are ignored. One entry per (kernel, architecture).
std::vector<KernelResources> parsePtxasInfo(llvm::StringRef Log);

/// "sax::py<float>(int, float*)" -> "sax::py<float>"; a mangled name is
/// demangled first. Names that are neither are returned as given.
std::string kernelNameWithoutParams(llvm::StringRef Name);

/// The resources of \p Kernel for \p Arch (any when empty): the same name,
/// the template it instantiates ("ops::scale" finds "ops::scale<float, 256>"),
/// or, for an unqualified name, the last component. Several for templates.
std::vector<const KernelResources *>
findResources(llvm::ArrayRef<KernelResources> All, llvm::StringRef Kernel,
              llvm::StringRef Arch = "");

/// The first few error lines of a compiler log (nvcc, cudafe, ptxas, the
/// host compiler, the linker), for a one-glance summary. Falls back to the
/// log's last lines when nothing looks like an error.
std::string summarizeCompileErrors(llvm::StringRef Log, unsigned MaxLines = 3);

} // namespace optiml

#endif
