//===- Thoughts.cpp - The mixture of thoughts: a model's programs ---------===//

#include "optiml/Synth/Thoughts.h"
#include "optiml/Synth/WrittenCode.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>
#include <set>

using namespace llvm;

namespace optiml {
namespace synth {

using json = nlohmann::json;

static Error replyError(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), "%s", Msg.str().c_str());
}

/// One line, control characters out, at most \p Max bytes.
static std::string oneLine(StringRef Text, size_t Max) {
  std::string Out;
  for (char C : Text.trim()) {
    if (Out.size() >= Max)
      break;
    unsigned char U = static_cast<unsigned char>(C);
    Out += (U < 0x20 || U == 0x7f) ? ' ' : C;
  }
  return Out;
}

static std::string shapeText(const Tensor &T) {
  std::string Out = "[";
  for (size_t I = 0; I < T.Shape.size(); ++I)
    Out += (I ? ", " : "") + (T.Shape[I].isNamed()
                                  ? T.Shape[I].Name
                                  : std::to_string(T.Shape[I].Value));
  return Out + "]";
}

std::string describeSpecForModel(const Spec &S) {
  std::string Out;
  raw_string_ostream OS(Out);
  OS << "Request: " << (S.Request.empty() ? "(none)" : S.Request) << "\n"
     << "Class: " << className(S.Class) << " (" << describeClass(S.Class)
     << ")\n";
  for (const Tensor &T : S.Inputs)
    OS << "Input  " << T.Name << ": " << elementTypeName(T.Type) << " "
       << (T.Shape.empty() ? "scalar" : shapeText(T)) << "\n";
  for (const Tensor &T : S.Outputs)
    OS << "Output " << T.Name << ": " << elementTypeName(T.Type) << " "
       << (T.Shape.empty() ? "scalar" : shapeText(T)) << "\n";
  OS << "Sizes:";
  for (const auto &[Name, Value] : S.Sizes)
    OS << " " << Name << "=" << Value;
  OS << " (the program is also checked at other sizes: every size 1, odd "
        "sizes)\n";
  if (!S.Expr.empty())
    OS << "Expression: " << S.Expr << "\n";
  if (!S.Op.empty())
    OS << "Operation: " << S.Op << "\n";
  Tolerance Tol = effectiveTolerance(S);
  OS << "Tolerance: |got - want| <= " << Tol.Abs << " + " << Tol.Rel
     << " * |want| for floating-point outputs; integers exactly\n"
     << "Reference (runs on the host; the outputs must match it):\n"
     << S.Reference << (StringRef(S.Reference).ends_with("\n") ? "" : "\n");
  return Out;
}

static StringRef thoughtsSchema() {
  return R"({
  "type": "object",
  "properties": {
    "strategies": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "name": {"type": "string"},
          "idea": {"type": "string"}
        },
        "required": ["name", "idea"],
        "additionalProperties": false
      }
    }
  },
  "required": ["strategies"],
  "additionalProperties": false
})";
}

static StringRef programSchema() {
  return R"({
  "type": "object",
  "properties": {
    "kernels": {"type": "string"},
    "launch": {"type": "string"},
    "notes": {"type": "string"}
  },
  "required": ["kernels", "launch", "notes"],
  "additionalProperties": false
})";
}

Expected<std::vector<Thought>> parseThoughts(StringRef JSON, unsigned Max) {
  json J = json::parse(JSON.begin(), JSON.end(), nullptr, false);
  if (J.is_discarded() || !J.is_object() || !J.contains("strategies") ||
      !J["strategies"].is_array())
    return replyError("the strategies reply is not {\"strategies\": [...]}");
  std::vector<Thought> Out;
  std::set<std::string> Seen;
  for (const json &E : J["strategies"]) {
    if (Out.size() == Max)
      break;
    if (!E.is_object() || !E.contains("name") || !E["name"].is_string() ||
        !E.contains("idea") || !E["idea"].is_string())
      continue;
    Thought T{oneLine(E["name"].get<std::string>(), 80),
              oneLine(E["idea"].get<std::string>(), 1000)};
    if (T.Name.empty() || !Seen.insert(StringRef(T.Name).lower()).second)
      continue;
    Out.push_back(std::move(T));
  }
  if (Out.empty())
    return replyError("the strategies reply names no strategy");
  return Out;
}

Expected<KernelCode> parseProgramReply(StringRef JSON, const Spec &S,
                                       const Thought &T) {
  json J = json::parse(JSON.begin(), JSON.end(), nullptr, false);
  if (J.is_discarded() || !J.is_object())
    return replyError("the program reply is not a JSON object");
  for (const char *Field : {"kernels", "launch"})
    if (!J.contains(Field) || !J[Field].is_string())
      return replyError(Twine("the program reply has no string '") + Field +
                        "'");
  KernelCode C = templateCode(S); // the title and the inputs' ranges
  C.Title = C.Title + " (" + T.Name + ")";
  C.Kernels = J["kernels"].get<std::string>();
  C.Launch = J["launch"].get<std::string>();
  if (!StringRef(C.Kernels).ends_with("\n"))
    C.Kernels += "\n";
  if (!StringRef(C.Launch).ends_with("\n"))
    C.Launch += "\n";
  return C;
}

namespace {

class ThoughtsProposer : public Proposer {
public:
  ThoughtsProposer(llm::ChatClient &Client, llm::PromptLibrary Prompts,
                   ThoughtsOptions Opts)
      : Client(Client), Prompts(std::move(Prompts)), Opts(std::move(Opts)) {}

  StringRef name() const override { return "llm"; }

  Expected<std::vector<Candidate>> propose(const Spec &S,
                                           const ProgramOptions &PO) override {
    StringMap<std::string> V = values(S);
    auto Req = request("synthesize.thoughts", V, "propose_strategies",
                       "Propose distinct strategies for the GPU program.",
                       thoughtsSchema());
    if (!Req)
      return Req.takeError();
    auto Reply = Client.complete(*Req);
    if (!Reply)
      return Reply.takeError();
    auto Ts = parseThoughts(Reply->JSON, std::max(1u, Opts.Thoughts));
    if (!Ts)
      return Ts.takeError();
    log("strategies: " + Twine(Ts->size()) + " received");
    std::vector<Candidate> Out;
    for (const Thought &T : *Ts) {
      StringMap<std::string> TV = V;
      TV["strategy"] = T.Name;
      TV["idea"] = T.Idea;
      Candidate C = candidateFor(T);
      auto PReq = request("synthesize.program", TV, "write_program",
                          "The program's kernels and launch statements.",
                          programSchema());
      if (!PReq)
        return PReq.takeError();
      Requests[T.Name] = *PReq;
      finish(C, Client.complete(*PReq), S, PO, T);
      Out.push_back(std::move(C));
    }
    return Out;
  }

  Expected<std::optional<Candidate>> repair(const Spec &S,
                                            const ProgramOptions &PO,
                                            const Candidate &Failed,
                                            StringRef Feedback) override {
    auto It = Requests.find(Failed.Strategy);
    if (Failed.Origin != "llm" || Failed.Repaired || It == Requests.end())
      return std::nullopt;
    StringMap<std::string> V = values(S);
    V["strategy"] = Failed.Strategy;
    V["idea"] = Failed.Thought;
    V["feedback"] = Feedback.str();
    auto Fix = Prompts.render("synthesize.repair.user", V);
    if (!Fix)
      return Fix.takeError();
    llm::ChatRequest R = It->second;
    // The conversation so far: the program asked for, the program given
    // (or the broken reply), then what went wrong.
    json Given =
        Failed.Written
            ? json{{"kernels", Failed.Written->Kernels},
                   {"launch", Failed.Written->Launch},
                   {"notes", ""}}
            : json{{"kernels", ""}, {"launch", ""}, {"notes", Failed.Problem}};
    R.Messages.push_back({llm::Role::Assistant, Given.dump()});
    R.Messages.push_back({llm::Role::User, std::move(*Fix)});
    Thought T{Failed.Strategy, Failed.Thought};
    Candidate C = candidateFor(T);
    C.Repaired = true;
    finish(C, Client.complete(R), S, PO, T);
    return std::optional<Candidate>(std::move(C));
  }

private:
  StringMap<std::string> values(const Spec &S) const {
    StringMap<std::string> V;
    V["spec"] = describeSpecForModel(S);
    V["thoughts"] = std::to_string(std::max(1u, Opts.Thoughts));
    V["gpu"] = Opts.GPUDescription.empty() ? "(unknown)" : Opts.GPUDescription;
    V["names"] = join(launchNames(S), ", ");
    KernelCode T = templateCode(S);
    V["template_kernels"] = T.Kernels;
    V["template_launch"] = T.Launch;
    return V;
  }

  Expected<llm::ChatRequest> request(StringRef Prompt,
                                     const StringMap<std::string> &V,
                                     StringRef Name, StringRef Description,
                                     StringRef Schema) const {
    auto System = Prompts.render("synthesize.system", V);
    if (!System)
      return System.takeError();
    auto User = Prompts.render((Prompt + ".user").str(), V);
    if (!User)
      return User.takeError();
    llm::ChatRequest R;
    R.System = std::move(*System);
    R.Messages.push_back({llm::Role::User, std::move(*User)});
    llm::OutputSchema O;
    O.Name = Name.str();
    O.Description = Description.str();
    O.SchemaJSON = Schema.str();
    O.Strict = true;
    R.Schema = std::move(O);
    return R;
  }

  static Candidate candidateFor(const Thought &T) {
    Candidate C;
    C.Origin = "llm";
    C.Strategy = T.Name;
    C.Thought = T.Idea;
    return C;
  }

  /// The program of \p Reply in \p C, or the reason there is none.
  void finish(Candidate &C, Expected<llm::ChatResponse> Reply, const Spec &S,
              const ProgramOptions &PO, const Thought &T) {
    if (!Reply) {
      C.Problem = "the model's reply: " + toString(Reply.takeError());
      log("program for '" + T.Name + "': " + C.Problem);
      return;
    }
    auto Code = parseProgramReply(Reply->JSON, S, T);
    if (!Code) {
      C.Problem = toString(Code.takeError());
      log("program for '" + T.Name + "': " + C.Problem);
      return;
    }
    C.Source = generateProgram(S, PO, *Code);
    C.Written = std::move(*Code);
    log("program for '" + T.Name + "'" + (C.Repaired ? " (repaired)" : "") +
        ": received");
  }

  void log(const Twine &Line) const {
    if (Opts.Log)
      Opts.Log(Line.str());
  }

  llm::ChatClient &Client;
  llm::PromptLibrary Prompts;
  ThoughtsOptions Opts;
  /// The request that asked for each strategy's program, for its repair.
  std::map<std::string, llm::ChatRequest> Requests;
};

} // namespace

std::unique_ptr<Proposer> createThoughtsProposer(llm::ChatClient &Client,
                                                 llm::PromptLibrary Prompts,
                                                 ThoughtsOptions Opts) {
  return std::make_unique<ThoughtsProposer>(Client, std::move(Prompts),
                                            std::move(Opts));
}

} // namespace synth
} // namespace optiml
