//===- Location.cpp - Where a project's database is -----------------------===//

#include "optiml/Db/Database.h"
#include "optiml/Support/FileUtil.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <nlohmann/json.hpp>

using namespace llvm;
using json = nlohmann::json;

namespace optiml {
namespace db {

/// .clang-optiml.json in \p Dir or a parent, up to the project root (the
/// nearest directory holding .git or .hg), the way the LLM settings are
/// found (docs/llm.md); outside a repository only \p Dir itself.
static std::string findConfig(StringRef Dir) {
  SmallString<256> D(Dir);
  (void)sys::fs::make_absolute(D);
  sys::path::remove_dots(D, /*remove_dot_dot=*/true);
  std::vector<std::string> Dirs;
  bool Root = false;
  for (StringRef P = D; !P.empty(); P = sys::path::parent_path(P)) {
    Dirs.push_back(P.str());
    SmallString<256> Git(P), Hg(P);
    sys::path::append(Git, ".git");
    sys::path::append(Hg, ".hg");
    if (sys::fs::exists(Git) || sys::fs::exists(Hg)) {
      Root = true;
      break;
    }
  }
  if (!Root)
    Dirs.resize(std::min<size_t>(Dirs.size(), 1));
  for (const std::string &C : Dirs) {
    SmallString<256> F(C);
    sys::path::append(F, ".clang-optiml.json");
    if (sys::fs::is_regular_file(F))
      return std::string(F);
  }
  return "";
}

Expected<std::string> databasePath(StringRef Explicit, StringRef ConfigDir,
                                   StringRef BuildDir, StringRef WorkingDir) {
  auto Absolute = [](StringRef P, StringRef Base) {
    SmallString<256> A(P);
    if (!sys::path::is_absolute(A)) {
      if (Base.empty())
        (void)sys::fs::make_absolute(A);
      else
        sys::path::make_absolute(Base, A);
    }
    sys::path::remove_dots(A, /*remove_dot_dot=*/false);
    return std::string(A);
  };
  if (!Explicit.empty())
    return Absolute(Explicit, "");
  if (!ConfigDir.empty()) {
    std::string Config = findConfig(ConfigDir);
    if (!Config.empty()) {
      auto Text = readFile(Config);
      if (!Text)
        return Text.takeError();
      try {
        json J = json::parse(*Text);
        auto It = J.find("db");
        if (It != J.end()) {
          std::string P = It->at("path").get<std::string>();
          if (P.empty())
            return createStringError("%s: \"db.path\" is empty",
                                     Config.c_str());
          return Absolute(P, sys::path::parent_path(Config));
        }
      } catch (const json::exception &E) {
        return createStringError("%s: cannot read \"db\": %s", Config.c_str(),
                                 E.what());
      }
    }
  }
  if (!BuildDir.empty()) {
    SmallString<256> P(Absolute(BuildDir, WorkingDir));
    sys::path::append(P, "clang-optiml.db");
    return std::string(P);
  }
  SmallString<256> P(Absolute(".optiml", WorkingDir));
  sys::path::append(P, "clang-optiml.db");
  return std::string(P);
}

} // namespace db
} // namespace optiml
