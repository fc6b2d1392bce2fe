//===- KernelModelOutput.h - Print the kernel model ------------*- C++ -*-===//
#ifndef OPTIML_FRONTEND_KERNELMODELOUTPUT_H
#define OPTIML_FRONTEND_KERNELMODELOUTPUT_H

#include "optiml/Frontend/KernelModel.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

namespace optiml {

/// The model as JSON (the contract of `analyze --json`, docs/analyze.md).
std::string kernelModelToJSON(const KernelModel &M, int Indent = 2);

/// A readable summary for a terminal. \p Color adds ANSI colors.
void printKernelSummary(llvm::raw_ostream &OS, const KernelModel &M,
                        bool Color = false);

} // namespace optiml

#endif
