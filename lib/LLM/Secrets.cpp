//===- Secrets.cpp - Redaction and scrubbed environments ------------------===//

#include "optiml/LLM/Secrets.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Regex.h"

extern char **environ;

using namespace llvm;

namespace optiml {
namespace llm {

static constexpr StringLiteral Mask = "[REDACTED]";

void Redactor::addSecret(StringRef Secret) {
  Secret = Secret.trim();
  if (Secret.size() < 4)
    return;
  if (!is_contained(Secrets, Secret))
    Secrets.push_back(Secret.str());
}

static std::string replaceAll(StringRef Text, StringRef Needle,
                              StringRef With) {
  std::string Out;
  while (true) {
    size_t Pos = Text.find(Needle);
    if (Pos == StringRef::npos)
      break;
    Out += Text.take_front(Pos);
    Out += With;
    Text = Text.drop_front(Pos + Needle.size());
  }
  Out += Text;
  return Out;
}

std::string Redactor::redact(StringRef Text) const {
  std::string Out = Text.str();
  // Longest first, so a secret containing another is masked whole.
  std::vector<StringRef> Sorted(Secrets.begin(), Secrets.end());
  llvm::sort(Sorted,
             [](StringRef A, StringRef B) { return A.size() > B.size(); });
  for (StringRef S : Sorted)
    Out = replaceAll(Out, S, Mask);
  // Key-shaped strings we were not told about (a server echoing another
  // key, a key in a config value): OpenAI "sk-...", Anthropic
  // "sk-ant-...", bearer tokens and x-api-key headers.
  static const char *Patterns[] = {
      "sk-[A-Za-z0-9_-]{8,}",
      "([Bb]earer )[A-Za-z0-9._~+/=-]{8,}",
      "([Xx]-[Aa]pi-[Kk]ey: *)[^ \r\n\"[]+",
  };
  for (const char *P : Patterns) {
    Regex R(P);
    std::string Prev;
    // Regex::sub replaces one match; loop until nothing changes. Each
    // replacement removes a match, so this terminates.
    for (unsigned I = 0; I < 64 && Prev != Out; ++I) {
      Prev = Out;
      SmallVector<StringRef, 2> Groups;
      if (!R.match(Out, &Groups))
        break;
      std::string Repl = Groups.size() > 1 && !Groups[1].empty()
                             ? "\\1" + Mask.str()
                             : Mask.str();
      Out = R.sub(Repl, Out);
    }
  }
  return Out;
}

bool isSecretVariable(StringRef Name) {
  static const char *Exact[] = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY",
                                "ANTHROPIC_AUTH_TOKEN", "OPENAI_ORG_ID"};
  for (const char *E : Exact)
    if (Name == E)
      return true;
  return Name.ends_with("_API_KEY") || Name.ends_with("_AUTH_TOKEN") ||
         Name.ends_with("_ACCESS_TOKEN") || Name.ends_with("_SECRET_KEY");
}

std::vector<std::string> environmentWithoutSecrets(ArrayRef<std::string> Env) {
  std::vector<std::string> Out;
  for (const std::string &Entry : Env) {
    StringRef Name = StringRef(Entry).split('=').first;
    if (!isSecretVariable(Name))
      Out.push_back(Entry);
  }
  return Out;
}

std::vector<std::string> currentEnvironmentWithoutSecrets() {
  std::vector<std::string> Env;
  for (char **E = environ; E && *E; ++E)
    Env.emplace_back(*E);
  return environmentWithoutSecrets(Env);
}

} // namespace llm
} // namespace optiml
