//===- PromptTemplate.cpp - Prompt files with {{placeholders}} ------------===//

#include "optiml/LLM/PromptTemplate.h"
#include "optiml/LLM/LLMError.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace llvm;

namespace optiml {
namespace llm {

static bool isPlaceholderName(StringRef S) {
  return !S.empty() && all_of(S, [](char C) {
    return isAlnum(C) || C == '_' || C == '-' || C == '.';
  });
}

static unsigned lineOf(StringRef Text, size_t Offset) {
  return 1 + Text.take_front(Offset).count('\n');
}

Expected<PromptTemplate> PromptTemplate::parse(StringRef Text, StringRef Name) {
  PromptTemplate T;
  T.Name = Name.str();
  size_t Pos = 0;
  std::string Literal;
  while (Pos < Text.size()) {
    size_t Open = Text.find("{{", Pos);
    if (Open == StringRef::npos) {
      Literal += Text.substr(Pos);
      break;
    }
    Literal += Text.slice(Pos, Open);
    size_t Close = Text.find("}}", Open + 2);
    if (Close == StringRef::npos)
      return makeLLMError(LLMErrorCode::Prompt,
                          Name + ":" + Twine(lineOf(Text, Open)) +
                              ": '{{' without a closing '}}'");
    StringRef Key = Text.slice(Open + 2, Close).trim();
    if (!isPlaceholderName(Key))
      return makeLLMError(LLMErrorCode::Prompt,
                          Name + ":" + Twine(lineOf(Text, Open)) +
                              ": bad placeholder name '" + Key + "'");
    if (!Literal.empty())
      T.Pieces.push_back({false, std::move(Literal)});
    Literal.clear();
    T.Pieces.push_back({true, Key.str()});
    Pos = Close + 2;
  }
  if (!Literal.empty())
    T.Pieces.push_back({false, std::move(Literal)});
  return T;
}

Expected<PromptTemplate> PromptTemplate::load(StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return makeLLMError(LLMErrorCode::Prompt, "cannot read prompt template " +
                                                  Path + ": " +
                                                  Buf.getError().message());
  return parse((*Buf)->getBuffer(), Path);
}

Expected<std::string>
PromptTemplate::render(const StringMap<std::string> &Values) const {
  std::string Out;
  for (const Piece &P : Pieces) {
    if (!P.IsPlaceholder) {
      Out += P.Text;
      continue;
    }
    auto It = Values.find(P.Text);
    if (It == Values.end())
      return makeLLMError(LLMErrorCode::Prompt, "prompt template " + Name +
                                                    " uses {{" + P.Text +
                                                    "}}, which has no value");
    Out += It->second;
  }
  return Out;
}

std::vector<std::string> PromptTemplate::placeholders() const {
  std::vector<std::string> Names;
  for (const Piece &P : Pieces)
    if (P.IsPlaceholder && !is_contained(Names, P.Text))
      Names.push_back(P.Text);
  return Names;
}

Expected<std::string> findPromptDirectory(StringRef Explicit, const char *Argv0,
                                          void *MainAddr) {
  auto IsDir = [](StringRef D) { return sys::fs::is_directory(D); };
  if (!Explicit.empty()) {
    if (IsDir(Explicit))
      return Explicit.str();
    return makeLLMError(LLMErrorCode::Prompt,
                        "prompt directory " + Explicit + " does not exist");
  }
  if (std::optional<std::string> Env =
          sys::Process::GetEnv("OPTIML_PROMPTS_DIR"))
    if (!Env->empty() && IsDir(*Env))
      return *Env;
  std::vector<std::string> Tried;
  if (Argv0 || MainAddr) {
    std::string Exe = sys::fs::getMainExecutable(Argv0 ? Argv0 : "", MainAddr);
    if (!Exe.empty()) {
      SmallString<256> Dir(sys::path::parent_path(Exe));
      sys::path::append(Dir, "..", "share", "clang-optiml", "prompts");
      sys::path::remove_dots(Dir, /*remove_dot_dot=*/true);
      if (IsDir(Dir))
        return std::string(Dir);
      Tried.push_back(std::string(Dir));
    }
  }
#ifdef OPTIML_SOURCE_PROMPTS_DIR
  if (IsDir(OPTIML_SOURCE_PROMPTS_DIR))
    return std::string(OPTIML_SOURCE_PROMPTS_DIR);
  Tried.push_back(OPTIML_SOURCE_PROMPTS_DIR);
#endif
  return makeLLMError(LLMErrorCode::Prompt,
                      "cannot find the prompt templates (looked in " +
                          join(Tried, ", ") +
                          "); set OPTIML_PROMPTS_DIR to the installed "
                          "share/clang-optiml/prompts");
}

Expected<PromptLibrary> PromptLibrary::load(StringRef Dir) {
  PromptLibrary L;
  L.Dir = Dir.str();
  std::error_code EC;
  for (sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC)) {
    StringRef Path = It->path();
    StringRef Ext = sys::path::extension(Path);
    if (Ext != ".md" && Ext != ".txt")
      continue;
    Expected<PromptTemplate> T = PromptTemplate::load(Path);
    if (!T)
      return T.takeError();
    L.Templates.insert({sys::path::stem(Path), std::move(*T)});
  }
  if (EC)
    return makeLLMError(LLMErrorCode::Prompt, "cannot list prompt directory " +
                                                  Dir + ": " + EC.message());
  if (L.Templates.empty())
    return makeLLMError(LLMErrorCode::Prompt,
                        "no prompt templates (*.md, *.txt) in " + Dir);
  return L;
}

Expected<std::string>
PromptLibrary::render(StringRef Name,
                      const StringMap<std::string> &Values) const {
  auto It = Templates.find(Name);
  if (It == Templates.end())
    return makeLLMError(LLMErrorCode::Prompt,
                        "no prompt template '" + Name + "' in " + Dir);
  return It->second.render(Values);
}

bool PromptLibrary::contains(StringRef Name) const {
  return Templates.count(Name);
}

} // namespace llm
} // namespace optiml
