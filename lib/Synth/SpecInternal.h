//===- SpecInternal.h - The spec's documents, before validation -*- C++ -*-===//
#ifndef OPTIML_LIB_SYNTH_SPECINTERNAL_H
#define OPTIML_LIB_SYNTH_SPECINTERNAL_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>

namespace optiml {
namespace synth {

/// A YAML document read with LLVM's YAML parser into the JSON structure the
/// validator reads: mappings become objects (keys in order), sequences
/// arrays, plain scalars numbers, booleans or null where they read as one,
/// and strings otherwise; quoted and block scalars are always strings.
/// Errors name \p Path with the parser's line and column.
llvm::Expected<nlohmann::ordered_json> yamlToJson(llvm::StringRef Text,
                                                  llvm::StringRef Path);

/// An error "<Path>: <Field>: <Message>" (no field: "<Path>: <Message>").
llvm::Error specError(llvm::StringRef Path, llvm::StringRef Field,
                      const llvm::Twine &Message);

/// Whether \p Name is a C identifier the generated program may use for a
/// tensor or a dimension: not a C++ keyword, not a name the program itself
/// uses, not starting with the prefixes it reserves.
bool isUsableName(llvm::StringRef Name, std::string &Why);

} // namespace synth
} // namespace optiml

#endif
