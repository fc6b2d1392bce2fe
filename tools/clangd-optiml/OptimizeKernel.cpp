//===- OptimizeKernel.cpp - "Optimize this kernel" ------------------------===//
//
// A child clang-optiml optimize per request (a search runs the user's
// program and nvcc many times: in a child, a cancel stops it at once and
// nothing it does can take the editor's server down), followed through the
// session's events (optimize --progress=json, optiml/Driver/Events.h),
// reported with $/progress, and the optimized file offered as an edit.
//
//===----------------------------------------------------------------------===//

#include "ClangdOptimlInternal.h"
#include "KernelActions.h"
#include "optiml/Driver/Events.h"
#include "optiml/Edit/EditJSON.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

using namespace llvm;
using json = nlohmann::json;

namespace optiml {
namespace lsp {

namespace {

/// Spawns \p Argv in \p Dir with stdin and stdout on /dev/null and stderr
/// (where the events and any error go) to a pipe.
pid_t spawnPiped(const std::vector<std::string> &Argv, const std::string &Dir,
                 int &OutFd) {
  int P[2];
  if (pipe(P))
    return -1;
  posix_spawn_file_actions_t FA;
  posix_spawn_file_actions_init(&FA);
  posix_spawn_file_actions_addopen(&FA, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&FA, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&FA, P[1], 2);
  posix_spawn_file_actions_addclose(&FA, P[0]);
  posix_spawn_file_actions_addclose(&FA, P[1]);
  posix_spawn_file_actions_addchdir_np(&FA, Dir.c_str());
  std::vector<char *> Args;
  for (const std::string &A : Argv)
    Args.push_back(const_cast<char *>(A.c_str()));
  Args.push_back(nullptr);
  pid_t Pid = -1;
  int RC =
      posix_spawn(&Pid, Argv[0].c_str(), &FA, nullptr, Args.data(), environ);
  posix_spawn_file_actions_destroy(&FA);
  close(P[1]);
  if (RC) {
    close(P[0]);
    return -1;
  }
  OutFd = P[0];
  return Pid;
}

void progress(const std::string &Token, json Value) {
  sendToEditor({{"jsonrpc", "2.0"},
                {"method", "$/progress"},
                {"params", {{"token", Token}, {"value", Value}}}});
}

/// Moves \p From to \p To (across file systems too); false if it could not.
bool moveFile(const Twine &From, const Twine &To) {
  if (!sys::fs::rename(From, To))
    return true;
  if (sys::fs::copy_file(From, To))
    return false;
  (void)sys::fs::remove(From);
  return true;
}

} // namespace

/// clang-optiml.optimize: runs `clang-optiml optimize FILE --kernel K` in the
/// file's directory (so the run directory is the project's .optiml/, as
/// when the user types it), streams its lines as $/progress, and offers the
/// verified best as an edit, with the report in the run directory.
void runOptimize(const json &Args) {
  std::string Uri = Args.at("uri").get<std::string>();
  std::string Kernel = Args.at("kernel").get<std::string>();
  std::string Path, Text, Exe;
  int64_t Version;
  std::vector<std::string> Extra;
  {
    std::lock_guard<std::mutex> L(S.Mu);
    auto It = S.Docs.find(Uri);
    if (It == S.Docs.end())
      return showMessage(1, "clang-optiml: the document is not open");
    Path = It->second.Path;
    Text = It->second.Text;
    Version = It->second.Version;
    Exe = S.OptimlExe;
    Extra.assign(OptimizeArgs.begin(), OptimizeArgs.end());
  }
  auto Disk = MemoryBuffer::getFile(Path);
  if (!Disk || (*Disk)->getBuffer() != Text)
    return showMessage(2, "clang-optiml: save the file first: the search "
                          "builds and runs the program from disk");
  if (Exe.empty())
    return showMessage(1, "clang-optiml: clang-optiml not found (beside "
                          "clangd-optiml or on PATH; --clang-optiml=PATH)");
  SmallString<128> Report;
  if (std::error_code EC =
          sys::fs::createTemporaryFile("optiml-report", "html", Report))
    return showMessage(1, "clang-optiml: cannot create a temporary file for "
                          "the report: " +
                              EC.message());
  std::string Token = newId();
  sendToEditor({{"jsonrpc", "2.0"},
                {"id", newId()},
                {"method", "window/workDoneProgress/create"},
                {"params", {{"token", Token}}}});
  progress(Token, {{"kind", "begin"},
                   {"title", "clang-optiml: optimizing " + Kernel},
                   {"cancellable", true},
                   {"message", "starting"}});
  std::vector<std::string> Argv = {Exe,
                                   "optimize",
                                   Path,
                                   "--kernel",
                                   Kernel,
                                   "--report",
                                   std::string(Report),
                                   "--progress=json"};
  Argv.insert(Argv.end(), Extra.begin(), Extra.end());
  int Fd = -1;
  pid_t Pid = spawnPiped(Argv, std::string(sys::path::parent_path(Path)), Fd);
  if (Pid < 0) {
    progress(Token, {{"kind", "end"}, {"message", "could not start"}});
    (void)sys::fs::remove(Report);
    return showMessage(1, "clang-optiml: cannot run " + Exe);
  }
  {
    std::lock_guard<std::mutex> L(S.Mu);
    S.Optimizing[Token] = Pid;
  }
  // Events become progress reports; any other line (an error the tool
  // printed as text) is reported too and kept for the closing message.
  std::string All, Line;
  std::optional<SessionStart> Start;
  std::optional<SessionOutcome> Outcome;
  auto Take = [&](StringRef L) {
    auto E = parseSessionEvent(L);
    if (!E) {
      if (!L.trim().empty()) {
        All += L.str() + "\n";
        progress(Token, {{"kind", "report"}, {"message", L.trim().str()}});
      }
      return;
    }
    if (E->Kind == "started") {
      Start = E->Start;
    } else if (E->Kind == "outcome") {
      Outcome = E->Outcome;
    } else if (E->Kind == "progress") {
      json Value = {{"kind", "report"}, {"message", progressLine(E->Progress)}};
      if (E->Progress.Budget)
        Value["percentage"] =
            std::min(100u, 100 * E->Progress.Done / E->Progress.Budget);
      progress(Token, Value);
    } else if (E->Kind != "result" && !StringRef(E->Text).trim().empty()) {
      progress(Token, {{"kind", "report"},
                       {"message", StringRef(E->Text).trim().str()}});
      if (E->Kind == "warning" || E->Kind == "error")
        All += E->Text + "\n";
    }
  };
  char Buf[4096];
  ssize_t N;
  while ((N = read(Fd, Buf, sizeof(Buf))) > 0 || (N < 0 && errno == EINTR)) {
    for (ssize_t I = 0; I < N; ++I) {
      if (Buf[I] == '\n') {
        Take(Line);
        Line.clear();
      } else {
        Line += Buf[I];
      }
    }
  }
  Take(Line);
  close(Fd);
  int Status = 0;
  waitpid(Pid, &Status, 0);
  bool Cancelled;
  {
    std::lock_guard<std::mutex> L(S.Mu);
    Cancelled = !S.Optimizing.count(Token);
    S.Optimizing.erase(Token);
  }
  int RC = WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
  progress(Token, {{"kind", "end"},
                   {"message", Cancelled ? "cancelled"
                               : RC == 0 ? "done"
                                         : "finished without a result"}});
  std::string RunDir = Start ? Start->RunDir : std::string();
  // The report lives with the search's journal, where a user finds it again.
  std::string ReportPath = std::string(Report);
  if (!RunDir.empty() && sys::fs::exists(Report) &&
      moveFile(Report, RunDir + "/report.html"))
    ReportPath = RunDir + "/report.html";
  else if (!sys::fs::exists(Report) || RC != 0)
    (void)sys::fs::remove(Report);

  if (Cancelled)
    return showMessage(3,
                       "clang-optiml: optimizing " + Kernel + " was cancelled");
  if (RC == 0 && Outcome && Outcome->Improved) {
    std::string BestPath = Outcome->BestPath;
    auto Best = BestPath.empty() ? nullptr : MemoryBuffer::getFile(BestPath);
    if (!Best)
      return showMessage(1, "clang-optiml: optimize finished but its best "
                            "variant was not found (" +
                                BestPath + ")");
    std::string Verdict = Path + ": " + Outcome->Conclusion;
    std::string Flags =
        Outcome->ExtraFlags.empty()
            ? ""
            : "; the best variant is built with extra nvcc flags: " +
                  join(Outcome->ExtraFlags, " ");
    bool Changed;
    {
      std::lock_guard<std::mutex> L(S.Mu);
      auto It = S.Docs.find(Uri);
      Changed = It == S.Docs.end() || It->second.Text != Text;
    }
    // Offered only against the text it was made from; an editor that
    // takes versioned edits also refuses it if the buffer moved on.
    if (Changed)
      return showMessage(2, "clang-optiml: " + Verdict +
                                "; the file changed "
                                "while optimizing, so the best variant is not "
                                "offered as an edit: it is in " +
                                BestPath + Flags + "; report: file://" +
                                ReportPath);
    requestApplyEdit("clang-optiml: " + Verdict,
                     workspaceEdit(Uri, Version, Text,
                                   lineChanges(Text, (*Best)->getBuffer())));
    return showMessage(3, "clang-optiml: " + Verdict + "; offered as an edit" +
                              Flags + "; report: file://" + ReportPath);
  }
  if (StringRef(All).contains("GPU is needed") ||
      StringRef(All).contains("no CUDA GPU") ||
      StringRef(All).contains("no GPU"))
    return showMessage(2, "clang-optiml: no CUDA GPU on this machine: "
                          "optimize searches by running the program, so it "
                          "needs one (the code actions work without)");
  if (RC == 3)
    return showMessage(3,
                       "clang-optiml: nothing verified faster than " + Kernel +
                           " was found; the file is left alone" +
                           (RunDir.empty() ? std::string()
                                           : "; report: file://" + ReportPath));
  StringRef Tail = StringRef(All).trim();
  if (Tail.size() > 600)
    Tail = Tail.take_back(600);
  showMessage(1, "clang-optiml optimize failed: " + Tail.str());
}

} // namespace lsp
} // namespace optiml
