//===- EditJSON.cpp - The JSON boundary of edits --------------------------===//
//
// nlohmann/json stays in this file: every exception it throws is caught here
// and turned into an llvm::Error naming the offending field.
//
//===----------------------------------------------------------------------===//

#include "optiml/Edit/EditJSON.h"
#include "optiml/Edit/Transform.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

using namespace llvm;
using json = nlohmann::ordered_json;

namespace optiml {

//===-- Edit.h out-of-line members ----------------------------------------===//

ParamSpec ParamSpec::integer(std::string Name, std::string Description,
                             int64_t Min, int64_t Max,
                             std::optional<int64_t> Default) {
  ParamSpec S;
  S.ParamType = Int;
  S.Name = std::move(Name);
  S.Description = std::move(Description);
  S.Min = Min;
  S.Max = Max;
  if (Default)
    S.Default = ParamValue(*Default);
  return S;
}

ParamSpec ParamSpec::boolean(std::string Name, std::string Description,
                             std::optional<bool> Default) {
  ParamSpec S;
  S.ParamType = Bool;
  S.Name = std::move(Name);
  S.Description = std::move(Description);
  if (Default)
    S.Default = ParamValue(*Default);
  return S;
}

ParamSpec ParamSpec::string(std::string Name, std::string Description,
                            std::vector<std::string> Choices,
                            std::optional<std::string> Default) {
  ParamSpec S;
  S.ParamType = String;
  S.Name = std::move(Name);
  S.Description = std::move(Description);
  S.Choices = std::move(Choices);
  if (Default)
    S.Default = ParamValue(std::move(*Default));
  return S;
}

ParamSpec ParamSpec::stringList(std::string Name, std::string Description,
                                std::vector<std::string> Choices) {
  ParamSpec S = string(std::move(Name), std::move(Description),
                       std::move(Choices), std::nullopt);
  S.ParamType = StringList;
  return S;
}

template <class T>
static std::optional<T> getParam(const Edit &E, StringRef Name) {
  auto It = E.Params.find(Name.str());
  if (It == E.Params.end())
    return std::nullopt;
  if (const T *V = std::get_if<T>(&It->second))
    return *V;
  return std::nullopt;
}

std::optional<int64_t> Edit::getInt(StringRef Name) const {
  return getParam<int64_t>(*this, Name);
}
std::optional<double> Edit::getNumber(StringRef Name) const {
  if (auto I = getParam<int64_t>(*this, Name))
    return double(*I);
  return getParam<double>(*this, Name);
}
std::optional<bool> Edit::getBool(StringRef Name) const {
  return getParam<bool>(*this, Name);
}
std::optional<std::string> Edit::getString(StringRef Name) const {
  return getParam<std::string>(*this, Name);
}
std::optional<std::vector<std::string>> Edit::getStrings(StringRef Name) const {
  return getParam<std::vector<std::string>>(*this, Name);
}

std::string CheckFailure::str() const {
  std::string S;
  raw_string_ostream OS(S);
  if (!File.empty()) {
    OS << File;
    if (Line)
      OS << ":" << Line << ":" << Column;
    OS << ": ";
  } else if (Line) {
    OS << "line " << Line << ":" << Column << ": ";
  }
  OS << "[" << Check << "] " << Message;
  return S;
}

char EditRejected::ID;

std::string EditRejected::message() const {
  std::string S = (ListIndex ? "edits[" + std::to_string(*ListIndex) + "] "
                             : std::string()) +
                  Kind + " " + Target + " rejected";
  if (Failures.empty())
    return S;
  return S + ": " + Failures.front().str();
}

void EditRejected::log(raw_ostream &OS) const {
  if (ListIndex)
    OS << "edits[" << *ListIndex << "] ";
  OS << Kind << " " << Target << " rejected";
  for (const CheckFailure &F : Failures)
    OS << "\n  " << F.str();
}

//===-- Parsing -----------------------------------------------------------===//

static Error fieldError(const Twine &Where, const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Where + ": " + Msg);
}

static const char *typeName(const json &J) {
  switch (J.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::object:
    return "an object";
  case json::value_t::array:
    return "an array";
  case json::value_t::string:
    return "a string";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
    return "an integer";
  case json::value_t::number_float:
    return "a number";
  default:
    return "an unsupported value";
  }
}

static const char *specTypeName(ParamSpec::Type T) {
  switch (T) {
  case ParamSpec::Int:
    return "an integer";
  case ParamSpec::Number:
    return "a number";
  case ParamSpec::Bool:
    return "a boolean";
  case ParamSpec::String:
    return "a string";
  case ParamSpec::StringList:
    return "a list of strings";
  }
  return "?";
}

static std::string kindList() {
  std::vector<std::string> Kinds;
  for (const auto &T : allTransforms())
    Kinds.push_back(T->kind().str());
  return join(Kinds, ", ");
}

static const ParamSpec *findSpec(const std::vector<ParamSpec> &Specs,
                                 StringRef Name) {
  for (const ParamSpec &S : Specs)
    if (S.Name == Name)
      return &S;
  return nullptr;
}

/// A JSON value as the ParamValue \p S asks for.
static Expected<ParamValue> toParamValue(const json &V, const ParamSpec &S,
                                         const Twine &Where) {
  auto Mistyped = [&]() {
    return fieldError(Where, Twine("expected ") + specTypeName(S.ParamType) +
                                 ", got " + typeName(V));
  };
  switch (S.ParamType) {
  case ParamSpec::Int:
    if (V.is_number_unsigned()) {
      uint64_t U = V.get<uint64_t>();
      if (U > uint64_t(INT64_MAX))
        return fieldError(Where, "integer out of range");
      return ParamValue(int64_t(U));
    }
    if (V.is_number_integer())
      return ParamValue(V.get<int64_t>());
    return Mistyped();
  case ParamSpec::Number:
    if (V.is_number_integer() || V.is_number_unsigned())
      return ParamValue(V.get<double>());
    if (V.is_number_float())
      return ParamValue(V.get<double>());
    return Mistyped();
  case ParamSpec::Bool:
    if (!V.is_boolean())
      return Mistyped();
    return ParamValue(V.get<bool>());
  case ParamSpec::String:
    if (!V.is_string())
      return Mistyped();
    return ParamValue(V.get<std::string>());
  case ParamSpec::StringList: {
    if (!V.is_array())
      return Mistyped();
    std::vector<std::string> L;
    for (size_t I = 0; I < V.size(); ++I) {
      if (!V[I].is_string())
        return fieldError(Where + "[" + Twine(I) + "]",
                          Twine("expected a string, got ") + typeName(V[I]));
      L.push_back(V[I].get<std::string>());
    }
    return ParamValue(std::move(L));
  }
  }
  return Mistyped();
}

static Expected<Edit> editFromJSON(const json &J, const std::string &Where) {
  if (!J.is_object())
    return fieldError(Where, Twine("expected an edit object {\"kind\", "
                                   "\"target\", \"params\"}, got ") +
                                 typeName(J));
  for (auto It = J.begin(); It != J.end(); ++It)
    if (It.key() != "kind" && It.key() != "target" && It.key() != "params")
      return fieldError(Where, "unknown field '" + It.key() +
                                   "' (an edit has kind, target, params)");
  Edit E;
  auto K = J.find("kind");
  if (K == J.end())
    return fieldError(Where,
                      "missing field 'kind' (one of: " + kindList() + ")");
  if (!K->is_string())
    return fieldError(Where + ".kind",
                      Twine("expected a string, got ") + typeName(*K));
  E.Kind = K->get<std::string>();
  const Transform *T = findTransform(E.Kind);
  if (!T)
    return fieldError(Where + ".kind", "unknown edit kind '" + E.Kind +
                                           "' (one of: " + kindList() + ")");
  auto Tg = J.find("target");
  if (Tg == J.end())
    return fieldError(Where, "missing field 'target' (a kernel name, loop id "
                             "or launch-site id from 'clang-optiml analyze')");
  if (!Tg->is_string())
    return fieldError(Where + ".target",
                      Twine("expected a string, got ") + typeName(*Tg));
  E.Target = Tg->get<std::string>();
  if (StringRef(E.Target).trim().empty())
    return fieldError(Where + ".target", "is empty");

  std::vector<ParamSpec> Specs = T->params();
  auto P = J.find("params");
  if (P != J.end() && !P->is_null()) {
    if (!P->is_object())
      return fieldError(Where + ".params",
                        Twine("expected an object, got ") + typeName(*P));
    for (auto It = P->begin(); It != P->end(); ++It) {
      std::string PWhere = Where + ".params." + It.key();
      const ParamSpec *S = findSpec(Specs, It.key());
      if (!S) {
        std::vector<std::string> Names;
        for (const ParamSpec &PS : Specs)
          Names.push_back(PS.Name);
        return fieldError(PWhere, "unknown parameter for '" + E.Kind + "' (" +
                                      (Names.empty()
                                           ? std::string("it takes none")
                                           : "it takes: " + join(Names, ", ")) +
                                      ")");
      }
      auto V = toParamValue(It.value(), *S, PWhere);
      if (!V)
        return V.takeError();
      E.Params[It.key()] = std::move(*V);
    }
  }
  if (Error Err = validateParams(E, *T, Where))
    return std::move(Err);
  return E;
}

Expected<std::vector<Edit>> parseEdits(StringRef Text) {
  try {
    json J = json::parse(Text.begin(), Text.end());
    std::vector<Edit> Edits;
    if (J.is_array()) {
      if (J.empty())
        return fieldError("edits", "the list is empty");
      for (size_t I = 0; I < J.size(); ++I) {
        auto E = editFromJSON(J[I], "edits[" + std::to_string(I) + "]");
        if (!E)
          return E.takeError();
        Edits.push_back(std::move(*E));
      }
      return Edits;
    }
    auto E = editFromJSON(J, "edit");
    if (!E)
      return E.takeError();
    Edits.push_back(std::move(*E));
    return Edits;
  } catch (const json::exception &Ex) {
    std::string Msg = Ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    size_t Close = Msg.find("] ");
    if (Close != std::string::npos)
      Msg = Msg.substr(Close + 2);
    return createStringError(inconvertibleErrorCode(),
                             "edit is not valid JSON: " + Msg);
  } catch (const std::exception &Ex) {
    return createStringError(inconvertibleErrorCode(),
                             Twine("edit could not be read: ") + Ex.what());
  }
}

Expected<Edit> parseEdit(StringRef Text) {
  auto Edits = parseEdits(Text);
  if (!Edits)
    return Edits.takeError();
  if (Edits->size() != 1)
    return fieldError("edits",
                      "expected exactly one edit, got " + Twine(Edits->size()));
  return std::move(Edits->front());
}

static bool sameType(const ParamValue &V, ParamSpec::Type T) {
  switch (T) {
  case ParamSpec::Int:
    return std::holds_alternative<int64_t>(V);
  case ParamSpec::Number:
    return std::holds_alternative<double>(V) ||
           std::holds_alternative<int64_t>(V);
  case ParamSpec::Bool:
    return std::holds_alternative<bool>(V);
  case ParamSpec::String:
    return std::holds_alternative<std::string>(V);
  case ParamSpec::StringList:
    return std::holds_alternative<std::vector<std::string>>(V);
  }
  return false;
}

Error validateParams(Edit &E, const Transform &T, StringRef Where) {
  std::vector<ParamSpec> Specs = T.params();
  for (const auto &[Name, V] : E.Params) {
    const ParamSpec *S = findSpec(Specs, Name);
    std::string PWhere = (Where + ".params." + Name).str();
    if (!S)
      return fieldError(PWhere, "unknown parameter for '" + E.Kind + "'");
    if (!sameType(V, S->ParamType))
      return fieldError(PWhere,
                        Twine("expected ") + specTypeName(S->ParamType));
    if (const int64_t *I = std::get_if<int64_t>(&V)) {
      if ((S->Min && *I < *S->Min) || (S->Max && *I > *S->Max)) {
        std::string Range = S->Min && S->Max
                                ? "between " + std::to_string(*S->Min) +
                                      " and " + std::to_string(*S->Max)
                            : S->Min ? "at least " + std::to_string(*S->Min)
                                     : "at most " + std::to_string(*S->Max);
        return fieldError(PWhere, std::to_string(*I) + " is out of range (" +
                                      Range + ")");
      }
    }
    auto CheckChoice = [&](const std::string &Str) -> Error {
      if (S->Choices.empty() || is_contained(S->Choices, Str))
        return Error::success();
      return fieldError(
          PWhere, "'" + Str + "' is not one of: " + join(S->Choices, ", "));
    };
    if (const std::string *Str = std::get_if<std::string>(&V))
      if (Error Err = CheckChoice(*Str))
        return Err;
    if (const auto *L = std::get_if<std::vector<std::string>>(&V))
      for (const std::string &Str : *L)
        if (Error Err = CheckChoice(Str))
          return Err;
  }
  for (const ParamSpec &S : Specs) {
    if (E.Params.count(S.Name))
      continue;
    if (S.Required)
      return fieldError(Where + ".params", "missing required parameter '" +
                                               S.Name + "' (" + S.Description +
                                               ")");
    if (S.Default)
      E.Params[S.Name] = *S.Default;
  }
  return Error::success();
}

static const char *targetKindName(TargetKind K) {
  switch (K) {
  case TargetKind::Kernel:
    return "a kernel name";
  case TargetKind::Loop:
    return "a loop id (<kernel>/loop<N>)";
  case TargetKind::Launch:
    return "a launch-site id (<kernel>/launch<N>)";
  }
  return "?";
}

Error validateTarget(const Edit &E, const KernelModel &M, StringRef Where) {
  const Transform *T = findTransform(E.Kind);
  if (!T)
    return fieldError(Where + ".kind", "unknown edit kind '" + E.Kind + "'");
  std::string TWhere = (Where + ".target").str();
  auto Known = [&](auto Pred) {
    std::vector<std::string> Ids;
    for (const KernelInfo &K : M.Kernels)
      Pred(K, Ids);
    if (Ids.size() > 12) {
      Ids.resize(12);
      Ids.push_back("...");
    }
    return Ids.empty() ? std::string("none in this file") : join(Ids, ", ");
  };
  switch (T->targetKind()) {
  case TargetKind::Kernel:
    if (M.findKernel(E.Target))
      return Error::success();
    return fieldError(
        TWhere, "no kernel named '" + E.Target + "' (" + E.Kind + " targets " +
                    targetKindName(T->targetKind()) +
                    "; kernels: " + Known([](const KernelInfo &K, auto &Ids) {
                      Ids.push_back(K.QualifiedName);
                    }) +
                    ")");
  case TargetKind::Loop:
    if (M.findLoop(E.Target))
      return Error::success();
    return fieldError(
        TWhere, "no loop '" + E.Target + "' (" + E.Kind + " targets " +
                    targetKindName(T->targetKind()) +
                    "; loops: " + Known([](const KernelInfo &K, auto &Ids) {
                      for (const LoopInfo &L : K.Loops)
                        Ids.push_back(L.Id);
                    }) +
                    ")");
  case TargetKind::Launch:
    if (M.findLaunch(E.Target))
      return Error::success();
    return fieldError(
        TWhere, "no launch site '" + E.Target + "' (" + E.Kind + " targets " +
                    targetKindName(T->targetKind()) + "; launch sites: " +
                    Known([](const KernelInfo &K, auto &Ids) {
                      for (const LaunchSite &L : K.Launches)
                        Ids.push_back(L.Id);
                    }) +
                    ")");
  }
  return Error::success();
}

//===-- Printing ----------------------------------------------------------===//

static json paramToJSON(const ParamValue &V) {
  if (auto *I = std::get_if<int64_t>(&V))
    return *I;
  if (auto *D = std::get_if<double>(&V))
    return *D;
  if (auto *B = std::get_if<bool>(&V))
    return *B;
  if (auto *S = std::get_if<std::string>(&V))
    return *S;
  return std::get<std::vector<std::string>>(V);
}

static json toJSON(const Edit &E) {
  json J = json::object();
  J["kind"] = E.Kind;
  J["target"] = E.Target;
  json P = json::object();
  for (const auto &[Name, V] : E.Params)
    P[Name] = paramToJSON(V);
  J["params"] = std::move(P);
  return J;
}

// Strings that are not valid UTF-8 are replaced rather than thrown on.
static std::string dump(const json &J, int Indent = -1) {
  return J.dump(Indent, ' ', false, json::error_handler_t::replace);
}

std::string editToJSON(const Edit &E) { return dump(toJSON(E)); }

std::string editsToJSON(ArrayRef<Edit> Edits) {
  json J = json::array();
  for (const Edit &E : Edits)
    J.push_back(toJSON(E));
  return dump(J);
}

std::string appliedEditToJSON(const AppliedEdit &A) {
  json J = json::object();
  J["applied"] = true;
  J["edit"] = toJSON(A.Applied);
  J["summary"] = A.Summary;
  J["changes_precision"] = A.ChangesPrecision;
  J["nvcc_flags"] = A.ExtraNvccFlags;
  J["diff"] = A.Diff;
  return dump(J, 2);
}

std::string rejectionToJSON(const EditRejected &R) {
  json J = json::object();
  J["applied"] = false;
  J["kind"] = R.Kind;
  J["target"] = R.Target;
  if (R.ListIndex)
    J["index"] = *R.ListIndex;
  json F = json::array();
  for (const CheckFailure &C : R.Failures) {
    json O = json::object();
    O["check"] = C.Check;
    if (!C.File.empty())
      O["file"] = C.File;
    if (C.Line) {
      O["line"] = C.Line;
      O["column"] = C.Column;
    }
    O["message"] = C.Message;
    F.push_back(std::move(O));
  }
  J["failures"] = std::move(F);
  return dump(J, 2);
}

std::string describeParam(const ParamSpec &P) {
  std::string S = P.Name + " (";
  switch (P.ParamType) {
  case ParamSpec::Int:
    S += "integer";
    if (P.Min && P.Max)
      S += " " + std::to_string(*P.Min) + ".." + std::to_string(*P.Max);
    else if (P.Min)
      S += " >= " + std::to_string(*P.Min);
    else if (P.Max)
      S += " <= " + std::to_string(*P.Max);
    break;
  case ParamSpec::Number:
    S += "number";
    break;
  case ParamSpec::Bool:
    S += "boolean";
    break;
  case ParamSpec::String:
    S += "string";
    if (!P.Choices.empty())
      S += " " + join(P.Choices, "|");
    break;
  case ParamSpec::StringList:
    S += "list of strings";
    if (!P.Choices.empty())
      S += " from " + join(P.Choices, "|");
    break;
  }
  S += P.Required ? ", required)" : ", optional)";
  return S;
}

std::string candidatesToJSON(StringRef File, ArrayRef<KernelCandidates> Kernels,
                             bool WithInapplicable) {
  json Root = json::object();
  Root["file"] = File.str();
  json Ks = json::array();
  for (const KernelCandidates &K : Kernels) {
    json KJ = json::object();
    KJ["kernel"] = K.Kernel;
    json Yes = json::array(), No = json::array();
    for (const Candidate &C : K.Candidates) {
      json CJ = json::object();
      CJ["kind"] = C.T->kind().str();
      CJ["target"] = C.Target;
      CJ["reason"] = C.A.Reason;
      if (C.A.Applies) {
        CJ["changes_precision"] = C.T->changesPrecision(
            C.A.Suggestions.empty() ? Edit{C.T->kind().str(), C.Target, {}}
                                    : C.A.Suggestions.front());
        json Ps = json::array();
        for (const ParamSpec &P : C.T->params())
          Ps.push_back(describeParam(P));
        CJ["params"] = std::move(Ps);
        json Sug = json::array();
        for (const Edit &E : C.A.Suggestions)
          Sug.push_back(toJSON(E));
        CJ["suggestions"] = std::move(Sug);
        Yes.push_back(std::move(CJ));
      } else if (WithInapplicable) {
        No.push_back(std::move(CJ));
      }
    }
    KJ["applicable"] = std::move(Yes);
    if (WithInapplicable)
      KJ["not_applicable"] = std::move(No);
    Ks.push_back(std::move(KJ));
  }
  Root["kernels"] = std::move(Ks);
  return dump(Root, 2);
}

//===-- Schema ------------------------------------------------------------===//

static json targetSchema(TargetKind K) {
  json S = json::object();
  S["type"] = "string";
  S["minLength"] = 1;
  switch (K) {
  case TargetKind::Kernel:
    S["description"] = "qualified name of a kernel, e.g. \"ns::saxpy\"";
    break;
  case TargetKind::Loop:
    S["description"] = "loop id, e.g. \"saxpy/loop0\" or \"saxpy/loop0.1\"";
    S["pattern"] = "/loop[0-9]+(\\.[0-9]+)*$";
    break;
  case TargetKind::Launch:
    S["description"] = "launch-site id, e.g. \"saxpy/launch0\"";
    S["pattern"] = "/launch[0-9]+$";
    break;
  }
  return S;
}

static json paramSchema(const ParamSpec &P) {
  json S = json::object();
  switch (P.ParamType) {
  case ParamSpec::Int:
    S["type"] = "integer";
    if (P.Min)
      S["minimum"] = *P.Min;
    if (P.Max)
      S["maximum"] = *P.Max;
    break;
  case ParamSpec::Number:
    S["type"] = "number";
    break;
  case ParamSpec::Bool:
    S["type"] = "boolean";
    break;
  case ParamSpec::String:
    S["type"] = "string";
    if (!P.Choices.empty())
      S["enum"] = P.Choices;
    break;
  case ParamSpec::StringList: {
    S["type"] = "array";
    json Items = json::object();
    Items["type"] = "string";
    if (!P.Choices.empty())
      Items["enum"] = P.Choices;
    S["items"] = std::move(Items);
    break;
  }
  }
  S["description"] = P.Description;
  if (P.Default)
    S["default"] = paramToJSON(*P.Default);
  return S;
}

std::string editJSONSchema() {
  json Root = json::object();
  Root["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  Root["$id"] = "https://clang-optiml.dev/schemas/edit.schema.json";
  Root["title"] = "clang-optiml edit";
  Root["description"] =
      "One edit, or a list of edits applied in order. Generated from the "
      "transform catalog by 'clang-optiml transforms --schema'; do not edit.";
  json Defs = json::object();
  json OneOf = json::array();
  for (const auto &T : allTransforms()) {
    json E = json::object();
    E["type"] = "object";
    E["description"] = T->description().str();
    json Props = json::object();
    json Kind = json::object();
    Kind["const"] = T->kind().str();
    Props["kind"] = std::move(Kind);
    Props["target"] = targetSchema(T->targetKind());
    json Params = json::object();
    Params["type"] = "object";
    json PProps = json::object();
    json Required = json::array();
    for (const ParamSpec &P : T->params()) {
      PProps[P.Name] = paramSchema(P);
      if (P.Required)
        Required.push_back(P.Name);
    }
    Params["properties"] = std::move(PProps);
    if (!Required.empty())
      Params["required"] = Required;
    Params["additionalProperties"] = false;
    Props["params"] = std::move(Params);
    E["properties"] = std::move(Props);
    json Req = json::array({"kind", "target"});
    if (!Required.empty())
      Req.push_back("params");
    E["required"] = std::move(Req);
    E["additionalProperties"] = false;
    std::string Name = T->kind().str();
    Defs[Name] = std::move(E);
    json Ref = json::object();
    Ref["$ref"] = "#/$defs/" + Name;
    OneOf.push_back(std::move(Ref));
  }
  json Edit = json::object();
  Edit["oneOf"] = std::move(OneOf);
  Defs["edit"] = std::move(Edit);
  Root["$defs"] = std::move(Defs);
  json Any = json::array();
  json One = json::object();
  One["$ref"] = "#/$defs/edit";
  Any.push_back(One);
  json List = json::object();
  List["type"] = "array";
  List["minItems"] = 1;
  List["items"] = One;
  Any.push_back(std::move(List));
  Root["oneOf"] = std::move(Any);
  return dump(Root, 2) + "\n";
}

} // namespace optiml
