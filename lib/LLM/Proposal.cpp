//===- Proposal.cpp - Parsing the model's proposals -----------------------===//

#include "optiml/LLM/Proposal.h"
#include "JsonInternal.h"
#include "optiml/LLM/LLMError.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace optiml {
namespace llm {

using json = nlohmann::json;

bool kindCarriesCode(StringRef Kind) {
  return Kind == "replace-function" || Kind == "add-device-function";
}

StringRef proposalReplySchema() {
  return R"({
  "type": "object",
  "properties": {
    "proposals": {
      "type": "array",
      "minItems": 1,
      "items": {
        "type": "object",
        "properties": {
          "kind": {"type": "string", "description": "a catalog transform, replace-function or add-device-function"},
          "target": {"type": "string", "description": "a stable id from the kernel model: kernel name, loop id or launch-site id"},
          "params": {"type": "object", "description": "the transform's parameters; {} for replace-function"},
          "code": {"type": "string", "description": "the complete new function definition, for replace-function and add-device-function only"},
          "rationale": {"type": "string", "description": "one or two sentences: which bottleneck this addresses and why it should help"}
        },
        "required": ["kind", "target", "rationale"],
        "additionalProperties": false
      }
    }
  },
  "required": ["proposals"],
  "additionalProperties": false
})";
}

StringRef proposalEnvelopeSchema() {
  return R"({
  "type": "object",
  "properties": {"proposals": {"type": "array", "items": {}}},
  "required": ["proposals"]
})";
}

std::string Proposal::toEditJSON() const {
  json Edit = json::object();
  Edit["kind"] = Kind;
  Edit["target"] = Target;
  try {
    Edit["params"] = json::parse(ParamsJSON.empty() ? "{}" : ParamsJSON);
  } catch (const json::exception &) {
    Edit["params"] = json::object();
  }
  if (!Code.empty())
    Edit["code"] = Code;
  return dumpJSON(Edit);
}

std::string Proposal::summary() const {
  std::string S = Kind + " @ " + Target;
  if (!ParamsJSON.empty() && ParamsJSON != "{}")
    S += " " + ParamsJSON;
  if (!Code.empty())
    S += " (" + std::to_string(StringRef(Code).count('\n') + 1) +
         " lines of code)";
  return S;
}

/// Strips one markdown fence around the whole code, which models add even
/// inside JSON strings.
static std::string unfence(StringRef Code) {
  StringRef T = Code.trim();
  if (!T.starts_with("```"))
    return Code.str();
  size_t EOL = T.find('\n');
  if (EOL == StringRef::npos)
    return Code.str();
  StringRef Body = T.drop_front(EOL + 1);
  StringRef Trimmed = Body.rtrim();
  if (!Trimmed.ends_with("```"))
    return Code.str();
  return Trimmed.drop_back(3).rtrim().str() + "\n";
}

/// Checks that code looks like whole C++ definitions: brackets balance
/// outside strings, character literals and comments. Catches the usual
/// ways model output goes wrong (cut off, stray prose, leftover fences)
/// before the much slower parse.
static Error checkCodeShape(StringRef Code) {
  if (Code.contains("```"))
    return makeLLMError(LLMErrorCode::SchemaMismatch,
                        "code still contains a markdown fence");
  SmallVector<char, 32> Stack;
  bool SawBrace = false;
  for (size_t I = 0; I < Code.size(); ++I) {
    char C = Code[I];
    if (C == '/' && I + 1 < Code.size() && Code[I + 1] == '/') {
      size_t EOL = Code.find('\n', I);
      I = EOL == StringRef::npos ? Code.size() : EOL;
      continue;
    }
    if (C == '/' && I + 1 < Code.size() && Code[I + 1] == '*') {
      size_t End = Code.find("*/", I + 2);
      if (End == StringRef::npos)
        return makeLLMError(LLMErrorCode::SchemaMismatch,
                            "code has an unterminated comment");
      I = End + 1;
      continue;
    }
    if (C == '"' || C == '\'') {
      size_t J = I + 1;
      while (J < Code.size() && Code[J] != C && Code[J] != '\n')
        J += Code[J] == '\\' ? 2 : 1;
      if (J >= Code.size() || Code[J] != C)
        return makeLLMError(LLMErrorCode::SchemaMismatch,
                            "code has an unterminated literal");
      I = J;
      continue;
    }
    if (C == '{' || C == '(' || C == '[') {
      SawBrace |= C == '{';
      Stack.push_back(C == '{' ? '}' : C == '(' ? ')' : ']');
    } else if (C == '}' || C == ')' || C == ']') {
      if (Stack.empty() || Stack.back() != C)
        return makeLLMError(LLMErrorCode::SchemaMismatch,
                            "code has an unmatched '" + Twine(C) +
                                "' on line " +
                                Twine(Code.take_front(I).count('\n') + 1));
      Stack.pop_back();
    }
  }
  if (!Stack.empty())
    return makeLLMError(LLMErrorCode::SchemaMismatch,
                        "code has " + Twine(Stack.size()) +
                            " unclosed bracket(s) (cut off?)");
  if (!SawBrace)
    return makeLLMError(LLMErrorCode::SchemaMismatch,
                        "code has no function body");
  return Error::success();
}

static bool isKindName(StringRef K) {
  return !K.empty() && isLower(K.front()) &&
         all_of(K, [](char C) { return isLower(C) || isDigit(C) || C == '-'; });
}

/// Reads one proposal; the error says what is wrong with it.
static Expected<Proposal> readProposal(const json &P, std::string &Summary) {
  if (!P.is_object())
    return makeLLMError(LLMErrorCode::SchemaMismatch,
                        "a proposal must be a JSON object");
  static const char *Known[] = {"kind", "target", "params", "code",
                                "rationale"};
  for (auto &[Key, V] : P.items()) {
    (void)V;
    if (!is_contained(Known, Key))
      return makeLLMError(LLMErrorCode::SchemaMismatch,
                          "unexpected field \"" + Key + "\"");
  }
  auto Str = [&](const char *Key, bool Required, std::string &Out) -> Error {
    auto It = P.find(Key);
    if (It == P.end() || It->is_null()) {
      if (Required)
        return makeLLMError(LLMErrorCode::SchemaMismatch,
                            Twine("missing \"") + Key + "\"");
      return Error::success();
    }
    if (!It->is_string())
      return makeLLMError(LLMErrorCode::SchemaMismatch,
                          Twine("\"") + Key + "\" must be a string");
    Out = It->get<std::string>();
    return Error::success();
  };
  Proposal Out;
  std::string Kind, Target;
  if (Error E = Str("kind", true, Kind))
    return std::move(E);
  Summary = Kind;
  if (!isKindName(Kind))
    return makeLLMError(LLMErrorCode::SchemaMismatch,
                        "\"kind\" must be a lowercase edit name like "
                        "\"replace-function\", not '" +
                            excerpt(Kind, 40) + "'");
  if (Error E = Str("target", true, Target))
    return std::move(E);
  Summary += " @ " + Target;
  if (StringRef(Target).trim().empty())
    return makeLLMError(LLMErrorCode::SchemaMismatch, "\"target\" is empty");
  Out.Kind = Kind;
  Out.Target = StringRef(Target).trim().str();
  if (auto It = P.find("params"); It != P.end() && !It->is_null()) {
    if (!It->is_object())
      return makeLLMError(LLMErrorCode::SchemaMismatch,
                          "\"params\" must be an object");
    Out.ParamsJSON = dumpJSON(*It);
  }
  if (Error E = Str("code", false, Out.Code))
    return std::move(E);
  if (Error E = Str("rationale", true, Out.Rationale))
    return std::move(E);
  Out.Rationale = StringRef(Out.Rationale).trim().str();

  if (kindCarriesCode(Out.Kind)) {
    Out.Code = unfence(Out.Code);
    if (StringRef(Out.Code).trim().empty())
      return makeLLMError(LLMErrorCode::SchemaMismatch,
                          Out.Kind + " needs the new function in \"code\"");
    if (Error E = checkCodeShape(Out.Code))
      return std::move(E);
  } else if (!StringRef(Out.Code).trim().empty()) {
    return makeLLMError(LLMErrorCode::SchemaMismatch,
                        "\"code\" is only for replace-function and "
                        "add-device-function, not " +
                            Out.Kind);
  } else {
    Out.Code.clear();
  }
  return Out;
}

Expected<ProposalBatch> parseProposals(StringRef ReplyJSON,
                                       unsigned MaxProposals,
                                       const ProposalValidator &Validator) {
  Expected<json> Doc = parseJSON(ReplyJSON, "the model's proposals");
  if (!Doc)
    return Doc.takeError();
  ProposalBatch Batch;
  std::vector<std::string> Seen;
  try {
    if (Error E =
            validateSchema(*Doc, json::parse(proposalEnvelopeSchema().str())))
      return makeLLMError(LLMErrorCode::SchemaMismatch,
                          "the model's reply is not a proposal list: " +
                              toString(std::move(E)));
    const json &List = (*Doc)["proposals"];
    for (size_t I = 0; I < List.size(); ++I) {
      std::string Summary;
      auto Reject = [&](const Twine &Reason) {
        Batch.Rejected.push_back(
            {static_cast<unsigned>(I), Summary, Reason.str()});
      };
      if (MaxProposals && Batch.Accepted.size() >= MaxProposals) {
        Reject("beyond the " + Twine(MaxProposals) + " proposals asked for");
        continue;
      }
      Expected<Proposal> P = readProposal(List[I], Summary);
      if (!P) {
        Reject(toString(P.takeError()));
        continue;
      }
      Summary = P->summary();
      std::string Edit = P->toEditJSON();
      if (is_contained(Seen, Edit)) {
        Reject("duplicate of an earlier proposal");
        continue;
      }
      if (Validator)
        if (Error E = Validator(*P)) {
          Reject(toString(std::move(E)));
          continue;
        }
      Seen.push_back(std::move(Edit));
      Batch.Accepted.push_back(std::move(*P));
    }
  } catch (const json::exception &E) {
    return makeLLMError(LLMErrorCode::BadResponse,
                        Twine("could not read the proposals: ") + E.what());
  }
  return Batch;
}

} // namespace llm
} // namespace optiml
