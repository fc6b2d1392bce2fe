//===- Edit.h - The edit vocabulary shared by every policy -----*- C++ -*-===//
//
// An edit is {"kind", "target", "params"}: a catalog transformation (or a
// generic function rewrite) aimed at a stable id from the kernel model. The
// JSON boundary (EditJSON.cpp) turns documents into these typed values and
// back; nothing else in the library sees JSON.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_EDIT_EDIT_H
#define OPTIML_EDIT_EDIT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace optiml {

/// A parameter value: integers, numbers, booleans, strings, string lists.
using ParamValue =
    std::variant<int64_t, double, bool, std::string, std::vector<std::string>>;

struct Edit {
  std::string Kind;   ///< "unroll", "launch-config", "replace-function", ...
  std::string Target; ///< kernel name, loop id or launch-site id
  std::map<std::string, ParamValue> Params;

  std::optional<int64_t> getInt(llvm::StringRef Name) const;
  std::optional<double> getNumber(llvm::StringRef Name) const;
  std::optional<bool> getBool(llvm::StringRef Name) const;
  std::optional<std::string> getString(llvm::StringRef Name) const;
  std::optional<std::vector<std::string>>
  getStrings(llvm::StringRef Name) const;
};

/// What an edit's target names.
enum class TargetKind { Kernel, Loop, Launch };

/// One parameter a transform accepts (for validation, the JSON Schema, the
/// `transforms` listing and the LLM prompt).
struct ParamSpec {
  enum Type { Int, Number, Bool, String, StringList } ParamType = Int;
  std::string Name;
  std::string Description;
  bool Required = false;
  std::optional<int64_t> Min, Max;  ///< Int range, inclusive
  std::vector<std::string> Choices; ///< String: allowed values if any
  std::optional<ParamValue> Default;

  /// The usual shapes, so that a transform's params() reads as a table.
  static ParamSpec integer(std::string Name, std::string Description,
                           int64_t Min, int64_t Max,
                           std::optional<int64_t> Default = std::nullopt);
  static ParamSpec boolean(std::string Name, std::string Description,
                           std::optional<bool> Default = std::nullopt);
  static ParamSpec string(std::string Name, std::string Description,
                          std::vector<std::string> Choices = {},
                          std::optional<std::string> Default = std::nullopt);
  static ParamSpec stringList(std::string Name, std::string Description,
                              std::vector<std::string> Choices = {});
  /// This spec, marked required.
  ParamSpec required() const {
    ParamSpec S = *this;
    S.Required = true;
    return S;
  }
};

/// A failed check, as data: the search journals it and the LLM reads it.
struct CheckFailure {
  std::string Check; ///< "type-checks", "signature", "scope", "macro", ...
  std::string File;
  unsigned Line = 0, Column = 0;
  std::string Message;
  std::string str() const;
};

/// The edit could not be applied (or failed a check). message() is one line
/// naming the first failure; Failures has them all.
class EditRejected : public llvm::ErrorInfo<EditRejected> {
public:
  static char ID;
  EditRejected(std::string Kind, std::string Target,
               std::vector<CheckFailure> Failures)
      : Kind(std::move(Kind)), Target(std::move(Target)),
        Failures(std::move(Failures)) {}
  std::string message() const override;
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  std::string Kind, Target;
  std::vector<CheckFailure> Failures;
  /// The edit's position when it was one of a list.
  std::optional<unsigned> ListIndex;
};

/// A successfully applied and checked edit.
struct AppliedEdit {
  Edit Applied;
  /// The file the edit rewrote (absolute): the one given, or the user file
  /// it includes that defines the edit's target. NewCode is its new text.
  std::string File;
  std::string NewCode;
  std::string Diff;    ///< unified diff against the input
  std::string Summary; ///< one line, e.g. "unroll saxpy/loop0 by 4"
  /// May change floating-point results (fast math, reassociation): the
  /// verifier widens its tolerances only for these.
  bool ChangesPrecision = false;
  /// Extra nvcc flags this edit asks for (compile-flags).
  std::vector<std::string> ExtraNvccFlags;
};

} // namespace optiml

#endif
