//===- TextTemplate.h - ${Name} templates for generated code ----*- C++ -*-===//
//
// Generated code (synthesized programs, catalog rewrites) is written as a
// raw-string template with ${Name} placeholders, filled in one pass.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_SUPPORT_TEXTTEMPLATE_H
#define OPTIML_SUPPORT_TEXTTEMPLATE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <string>
#include <utility>

namespace optiml {

/// Replaces each ${Name} in \p Template by its value (one pass: values are
/// not expanded again). A placeholder without a value is a bug of ours.
std::string
fillTemplate(llvm::StringRef Template,
             llvm::ArrayRef<std::pair<llvm::StringRef, std::string>> Values);

} // namespace optiml

#endif
