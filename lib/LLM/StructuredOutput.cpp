//===- StructuredOutput.cpp - Extracting and validating JSON --------------===//

#include "optiml/LLM/StructuredOutput.h"
#include "JsonInternal.h"
#include "optiml/LLM/LLMError.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"

#include <cmath>

using namespace llvm;
namespace optiml {
namespace llm {

using json = nlohmann::json;

bool isUTF8(StringRef Text) {
  const UTF8 *Begin = reinterpret_cast<const UTF8 *>(Text.data());
  return isLegalUTF8String(&Begin, Begin + Text.size());
}

std::string fixUTF8(StringRef Text) {
  // Lenient conversion turns each ill-formed sequence into U+FFFD; one code
  // point per byte, four bytes per code point suffice.
  std::vector<UTF32> CodePoints(Text.size());
  const UTF8 *In = reinterpret_cast<const UTF8 *>(Text.data());
  UTF32 *Out32 = CodePoints.data();
  ConvertUTF8toUTF32(&In, In + Text.size(), &Out32, Out32 + CodePoints.size(),
                     lenientConversion);
  CodePoints.resize(Out32 - CodePoints.data());
  std::string Fixed(4 * CodePoints.size(), '\0');
  char *Out8 = Fixed.data();
  for (UTF32 C : CodePoints)
    ConvertCodePointToUTF8(C, Out8);
  Fixed.resize(Out8 - Fixed.data());
  return Fixed;
}

std::string excerpt(StringRef Text, size_t N) {
  std::string Out;
  for (char C : Text.take_front(N))
    Out += (C == '\n' || C == '\r' || C == '\t') ? ' ' : C;
  if (Text.size() > N)
    Out += "...";
  // An excerpt cut inside a multibyte sequence is fixed up rather than
  // passed on as invalid UTF-8.
  if (!isUTF8(Out))
    Out = fixUTF8(Out);
  return Out;
}

std::string dumpJSON(const json &J) {
  return J.dump(-1, ' ', false, json::error_handler_t::replace);
}

Error diagnoseBadJSON(StringRef Text, StringRef What) {
  if (!isUTF8(Text))
    return makeLLMError(LLMErrorCode::NotUTF8, What + " is not valid UTF-8");
  try {
    (void)json::parse(Text.begin(), Text.end());
    return Error::success();
  } catch (const json::parse_error &E) {
    // nlohmann reports the byte where parsing stopped; at the very end of
    // the input, the document was cut off rather than malformed.
    size_t Trimmed = Text.rtrim().size();
    if (E.byte >= Trimmed)
      return makeLLMError(LLMErrorCode::Truncated,
                          What + " is truncated JSON (ends after " +
                              Twine(Trimmed) + " bytes: '..." +
                              excerpt(Text.take_back(40)) + "')");
    return makeLLMError(LLMErrorCode::BadResponse,
                        What + " is not valid JSON: " + E.what());
  } catch (const json::exception &E) {
    return makeLLMError(LLMErrorCode::BadResponse,
                        What + " is not valid JSON: " + E.what());
  }
}

Expected<json> parseJSON(StringRef Text, StringRef What) {
  if (!isUTF8(Text))
    return makeLLMError(LLMErrorCode::NotUTF8, What + " is not valid UTF-8");
  json J = json::parse(Text.begin(), Text.end(), nullptr,
                       /*allow_exceptions=*/false);
  if (!J.is_discarded())
    return J;
  if (Error E = diagnoseBadJSON(Text, What))
    return std::move(E);
  return makeLLMError(LLMErrorCode::BadResponse, What + " is not valid JSON");
}

/// The end (one past the closing bracket) of the JSON value starting at
/// Text[Start], by bracket matching that skips strings; npos when the text
/// ends first.
static size_t matchBrackets(StringRef Text, size_t Start) {
  SmallVector<char, 16> Stack;
  bool InString = false;
  for (size_t I = Start; I < Text.size(); ++I) {
    char C = Text[I];
    if (InString) {
      if (C == '\\')
        ++I;
      else if (C == '"')
        InString = false;
      continue;
    }
    switch (C) {
    case '"':
      InString = true;
      break;
    case '{':
    case '[':
      Stack.push_back(C == '{' ? '}' : ']');
      break;
    case '}':
    case ']':
      if (Stack.empty() || Stack.back() != C)
        return I + 1; // Mismatched: let the parser say what is wrong.
      Stack.pop_back();
      if (Stack.empty())
        return I + 1;
      break;
    default:
      break;
    }
  }
  return StringRef::npos;
}

static std::optional<json> tryParseStructured(StringRef Text) {
  json J = json::parse(Text.begin(), Text.end(), nullptr,
                       /*allow_exceptions=*/false);
  if (J.is_object() || J.is_array())
    return J;
  return std::nullopt;
}

/// The contents of the markdown fences in Text, in order.
static SmallVector<StringRef, 4> fencedBlocks(StringRef Text) {
  SmallVector<StringRef, 4> Blocks;
  while (true) {
    size_t Open = Text.find("```");
    if (Open == StringRef::npos)
      break;
    StringRef Rest = Text.drop_front(Open + 3);
    // Skip the info string ("json", "JSON", "jsonc") to the end of line.
    size_t EOL = Rest.find('\n');
    if (EOL == StringRef::npos)
      break;
    Rest = Rest.drop_front(EOL + 1);
    size_t Close = Rest.find("```");
    if (Close == StringRef::npos) {
      Blocks.push_back(Rest); // An unclosed fence: maybe truncated.
      break;
    }
    Blocks.push_back(Rest.take_front(Close));
    Text = Rest.drop_front(Close + 3);
  }
  return Blocks;
}

Expected<std::string> extractJSON(StringRef Text) {
  if (!isUTF8(Text))
    return makeLLMError(LLMErrorCode::NotUTF8,
                        "the model's reply is not valid UTF-8");
  StringRef Trimmed = Text.trim();
  if (Trimmed.empty())
    return makeLLMError(LLMErrorCode::NoJSON, "the model's reply is empty");
  if (std::optional<json> J = tryParseStructured(Trimmed))
    return dumpJSON(*J);
  for (StringRef Block : fencedBlocks(Text))
    if (std::optional<json> J = tryParseStructured(Block.trim()))
      return dumpJSON(*J);

  // JSON embedded in prose: try each opening bracket in turn.
  std::optional<size_t> UnclosedAt;
  unsigned Tries = 0;
  for (size_t I = Trimmed.find_first_of("{[");
       I != StringRef::npos && Tries < 64;
       I = Trimmed.find_first_of("{[", I + 1), ++Tries) {
    size_t End = matchBrackets(Trimmed, I);
    if (End == StringRef::npos) {
      if (!UnclosedAt)
        UnclosedAt = I;
      // The first unclosed bracket encloses everything after it.
      break;
    }
    if (std::optional<json> J = tryParseStructured(Trimmed.slice(I, End)))
      return dumpJSON(*J);
  }
  if (UnclosedAt)
    return makeLLMError(LLMErrorCode::Truncated,
                        "the JSON in the model's reply is truncated (a '" +
                            Twine(Trimmed[*UnclosedAt]) + "' at offset " +
                            Twine(*UnclosedAt) +
                            " is never closed; the reply ends with '..." +
                            excerpt(Trimmed.take_back(40)) +
                            "'); raise max_output_tokens if the model ran "
                            "out of tokens");
  return makeLLMError(LLMErrorCode::NoJSON,
                      "no JSON object found in the model's reply ('" +
                          excerpt(Trimmed, 80) + "')");
}

//===----------------------------------------------------------------------===//
// JSON Schema subset
//===----------------------------------------------------------------------===//

namespace {
class SchemaChecker {
public:
  Error check(const json &Doc, const json &Schema, const std::string &Path) {
    if (Schema.is_boolean()) {
      if (Schema.get<bool>())
        return Error::success();
      return fail(Path, "is not allowed here");
    }
    if (!Schema.is_object())
      return Error::success();

    if (auto It = Schema.find("type"); It != Schema.end()) {
      bool Match = false;
      if (It->is_string())
        Match = hasType(Doc, It->get<std::string>());
      else if (It->is_array())
        for (const json &T : *It)
          if (T.is_string() && hasType(Doc, T.get<std::string>()))
            Match = true;
      if (!Match)
        return fail(Path,
                    "should be " + typeText(*It) + ", found " + typeOf(Doc));
    }
    if (auto It = Schema.find("enum"); It != Schema.end() && It->is_array()) {
      bool Found = false;
      for (const json &V : *It)
        if (V == Doc)
          Found = true;
      if (!Found)
        return fail(Path, "should be one of " + dumpJSON(*It) + ", found " +
                              excerpt(dumpJSON(Doc), 60));
    }
    if (auto It = Schema.find("const"); It != Schema.end() && *It != Doc)
      return fail(Path, "should be " + dumpJSON(*It));

    if (Doc.is_string()) {
      size_t Len = Doc.get_ref<const std::string &>().size();
      if (auto N = number(Schema, "minLength"); N && Len < *N)
        return fail(Path, "is shorter than " + std::to_string(size_t(*N)) +
                              " characters");
      if (auto N = number(Schema, "maxLength"); N && Len > *N)
        return fail(Path, "is longer than " + std::to_string(size_t(*N)) +
                              " characters");
    }
    if (Doc.is_number()) {
      double V = Doc.get<double>();
      if (auto N = number(Schema, "minimum"); N && V < *N)
        return fail(Path,
                    "is below the minimum " + dumpJSON(Schema["minimum"]));
      if (auto N = number(Schema, "maximum"); N && V > *N)
        return fail(Path,
                    "is above the maximum " + dumpJSON(Schema["maximum"]));
    }
    if (Doc.is_array()) {
      if (auto N = number(Schema, "minItems"); N && Doc.size() < *N)
        return fail(Path, "has " + std::to_string(Doc.size()) +
                              " items, fewer than " +
                              std::to_string(size_t(*N)));
      if (auto N = number(Schema, "maxItems"); N && Doc.size() > *N)
        return fail(Path, "has " + std::to_string(Doc.size()) +
                              " items, more than " +
                              std::to_string(size_t(*N)));
      if (auto It = Schema.find("items"); It != Schema.end())
        for (size_t I = 0; I < Doc.size(); ++I)
          if (Error E =
                  check(Doc[I], *It, Path + "[" + std::to_string(I) + "]"))
            return E;
    }
    if (Doc.is_object()) {
      if (auto It = Schema.find("required");
          It != Schema.end() && It->is_array())
        for (const json &R : *It)
          if (R.is_string() && !Doc.contains(R.get<std::string>()))
            return fail(Path, "lacks the required field \"" +
                                  R.get<std::string>() + "\"");
      const json *Props = nullptr;
      if (auto It = Schema.find("properties");
          It != Schema.end() && It->is_object())
        Props = &*It;
      auto Additional = Schema.find("additionalProperties");
      for (auto &[Key, Value] : Doc.items()) {
        std::string Sub = Path + "." + Key;
        if (Props && Props->contains(Key)) {
          if (Error E = check(Value, (*Props)[Key], Sub))
            return E;
          continue;
        }
        if (Additional == Schema.end())
          continue;
        if (Additional->is_boolean() && !Additional->get<bool>())
          return fail(Path, "has an unexpected field \"" + Key + "\"");
        if (Error E = check(Value, *Additional, Sub))
          return E;
      }
    }
    return Error::success();
  }

private:
  static std::optional<double> number(const json &Schema, const char *Key) {
    auto It = Schema.find(Key);
    if (It == Schema.end() || !It->is_number())
      return std::nullopt;
    return It->get<double>();
  }
  static bool hasType(const json &Doc, const std::string &T) {
    if (T == "object")
      return Doc.is_object();
    if (T == "array")
      return Doc.is_array();
    if (T == "string")
      return Doc.is_string();
    if (T == "boolean")
      return Doc.is_boolean();
    if (T == "null")
      return Doc.is_null();
    if (T == "number")
      return Doc.is_number();
    if (T == "integer") {
      if (Doc.is_number_integer())
        return true;
      if (Doc.is_number_float()) {
        double V = Doc.get<double>();
        return std::isfinite(V) && V == std::floor(V);
      }
    }
    return false;
  }
  static std::string typeOf(const json &Doc) {
    if (Doc.is_number_integer())
      return "an integer";
    if (Doc.is_number())
      return "a number";
    if (Doc.is_object())
      return "an object";
    if (Doc.is_array())
      return "an array";
    if (Doc.is_string())
      return "a string";
    if (Doc.is_boolean())
      return "a boolean";
    return "null";
  }
  static std::string typeText(const json &T) {
    if (T.is_string())
      return T.get<std::string>();
    std::string Out;
    for (const json &X : T)
      if (X.is_string())
        Out += (Out.empty() ? "" : " or ") + X.get<std::string>();
    return Out;
  }
  static Error fail(const std::string &Path, const Twine &What) {
    return makeLLMError(LLMErrorCode::SchemaMismatch, Path + " " + What);
  }
};
} // namespace

Error validateSchema(const json &Doc, const json &Schema) {
  try {
    return SchemaChecker().check(Doc, Schema, "$");
  } catch (const json::exception &E) {
    return makeLLMError(LLMErrorCode::SchemaMismatch,
                        Twine("could not check the reply against the "
                              "schema: ") +
                            E.what());
  }
}

Error validateJSONSchema(StringRef Document, StringRef Schema) {
  Expected<json> S = parseJSON(Schema, "the JSON schema");
  if (!S)
    return S.takeError();
  Expected<json> D = parseJSON(Document, "the JSON document");
  if (!D)
    return D.takeError();
  return validateSchema(*D, *S);
}

} // namespace llm
} // namespace optiml
