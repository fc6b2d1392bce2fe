//===- SpecYAML.cpp - A YAML spec read into the JSON structure ------------===//
//
// One validator reads both formats: YAML is parsed with LLVM's own parser
// (llvm/Support/YAMLParser.h) and converted node by node.
//
//===----------------------------------------------------------------------===//

#include "SpecInternal.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using json = nlohmann::ordered_json;

namespace optiml {
namespace synth {

namespace {

class Converter {
public:
  Converter(SourceMgr &SM, StringRef Path) : SM(SM), Path(Path) {}

  /// The node as JSON; on a node we cannot convert, Problem is set.
  json convert(yaml::Node *N) {
    if (!N || !Problem.empty())
      return nullptr;
    if (auto *M = dyn_cast<yaml::MappingNode>(N)) {
      json Obj = json::object();
      for (yaml::KeyValueNode &KV : *M) {
        auto *Key = dyn_cast_or_null<yaml::ScalarNode>(KV.getKey());
        if (!Key) {
          fail(KV.getKey(), "a mapping key must be a plain name");
          return nullptr;
        }
        SmallString<32> Storage;
        std::string K = Key->getValue(Storage).str();
        if (Obj.contains(K)) {
          fail(Key, "field '" + K + "' is given twice");
          return nullptr;
        }
        Obj[K] = convert(KV.getValue());
      }
      return Obj;
    }
    if (auto *S = dyn_cast<yaml::SequenceNode>(N)) {
      json Arr = json::array();
      for (yaml::Node &Item : *S)
        Arr.push_back(convert(&Item));
      return Arr;
    }
    if (auto *B = dyn_cast<yaml::BlockScalarNode>(N))
      return B->getValue().str();
    if (auto *S = dyn_cast<yaml::ScalarNode>(N))
      return scalar(*S);
    if (isa<yaml::NullNode>(N))
      return nullptr;
    fail(N, "anchors, aliases and tags are not part of the spec format");
    return nullptr;
  }

  std::string Problem;

private:
  json scalar(yaml::ScalarNode &S) {
    SmallString<32> Storage;
    StringRef V = S.getValue(Storage);
    StringRef Raw = S.getRawValue();
    if (Raw.starts_with("'") || Raw.starts_with("\""))
      return V.str();
    if (V == "true" || V == "True")
      return true;
    if (V == "false" || V == "False")
      return false;
    if (V == "null" || V == "~" || V.empty())
      return nullptr;
    int64_t I;
    if (!V.getAsInteger(10, I))
      return I;
    double D;
    // getAsDouble reads "inf" and "nan" too; a spec means a word by them.
    if (!V.empty() &&
        (isDigit(V.front()) || V.front() == '-' || V.front() == '+' ||
         V.front() == '.') &&
        !V.getAsDouble(D))
      return D;
    return V.str();
  }

  void fail(yaml::Node *N, const Twine &Msg) {
    if (!Problem.empty())
      return;
    // A node the parser made up (an empty key, a null) may point at no
    // buffer: then the message goes without its place.
    SMLoc Start = N ? N->getSourceRange().Start : SMLoc();
    if (!Start.isValid() || !SM.FindBufferContainingLoc(Start)) {
      Problem = Msg.str();
      return;
    }
    auto LC = SM.getLineAndColumn(Start);
    Problem = (Twine("line ") + Twine(LC.first) + ", column " +
               Twine(LC.second) + ": " + Msg)
                  .str();
  }

  SourceMgr &SM;
  StringRef Path;
};

} // namespace

Expected<json> yamlToJson(StringRef Text, StringRef Path) {
  SourceMgr SM;
  std::string Diag;
  // The parser reports through the source manager: keep its first message
  // (it names line and column) instead of printing it.
  SM.setDiagHandler(
      [](const SMDiagnostic &D, void *Ctx) {
        auto &Out = *static_cast<std::string *>(Ctx);
        if (Out.empty())
          Out = (Twine("line ") + Twine(D.getLineNo()) + ", column " +
                 Twine(D.getColumnNo() + 1) + ": " + D.getMessage())
                    .str();
      },
      &Diag);
  yaml::Stream Stream(Text, SM);
  Converter C(SM, Path);
  json Result = nullptr;
  unsigned Documents = 0;
  for (yaml::Document &Doc : Stream) {
    if (++Documents > 1) {
      C.Problem = "more than one YAML document ('---'); a spec is one";
      break;
    }
    Result = C.convert(Doc.getRoot());
    if (!Diag.empty())
      break;
  }
  if (!Diag.empty() || Stream.failed())
    return specError(Path, "",
                     "not valid YAML: " +
                         (Diag.empty() ? std::string("a syntax error") : Diag));
  if (!C.Problem.empty())
    return specError(Path, "", "not a spec: " + C.Problem);
  return Result;
}

} // namespace synth
} // namespace optiml
