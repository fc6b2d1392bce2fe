//===- PromptTemplate.h - Prompt files with {{placeholders}} --------------===//
//
// Prompts live as files under prompts/ in the repository, installed to
// <prefix>/share/clang-optiml/prompts. A template is plain text with
// {{name}} placeholders, replaced in one pass (substituted text is never
// re-scanned, so kernel source containing "{{" is safe).
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_LLM_PROMPTTEMPLATE_H
#define OPTIML_LLM_PROMPTTEMPLATE_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace optiml {
namespace llm {

class PromptTemplate {
public:
  /// Checks the placeholder syntax; Name is used in errors.
  static llvm::Expected<PromptTemplate> parse(llvm::StringRef Text,
                                              llvm::StringRef Name);
  static llvm::Expected<PromptTemplate> load(llvm::StringRef Path);

  /// Fails when a placeholder has no value (names the placeholder and the
  /// template); extra values are ignored.
  llvm::Expected<std::string>
  render(const llvm::StringMap<std::string> &Values) const;

  /// The placeholder names, in order of first use.
  std::vector<std::string> placeholders() const;
  const std::string &name() const { return Name; }

private:
  struct Piece {
    bool IsPlaceholder;
    std::string Text;
  };
  std::string Name;
  std::vector<Piece> Pieces;
};

/// The prompt directory: Explicit if given, else $OPTIML_PROMPTS_DIR, else
/// <dir of the executable>/../share/clang-optiml/prompts, else the source
/// tree's prompts/ (for running from a build directory). Argv0 and MainAddr
/// locate the executable as in llvm::sys::fs::getMainExecutable.
llvm::Expected<std::string> findPromptDirectory(llvm::StringRef Explicit,
                                                const char *Argv0,
                                                void *MainAddr);

/// The templates of one directory, loaded once.
class PromptLibrary {
public:
  /// Loads every *.md and *.txt file of Dir; a template is then named by
  /// its file name without the extension ("propose.system").
  static llvm::Expected<PromptLibrary> load(llvm::StringRef Dir);

  llvm::Expected<std::string>
  render(llvm::StringRef Name,
         const llvm::StringMap<std::string> &Values) const;
  bool contains(llvm::StringRef Name) const;
  const std::string &directory() const { return Dir; }

private:
  std::string Dir;
  llvm::StringMap<PromptTemplate> Templates;
};

} // namespace llm
} // namespace optiml

#endif // OPTIML_LLM_PROMPTTEMPLATE_H
