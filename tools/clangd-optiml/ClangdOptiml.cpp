//===- ClangdOptiml.cpp - clangd with clang-optiml's code actions ---------===//
//
// A Language Server Protocol proxy: the editor talks to this program, which
// starts the real clangd and forwards every message both ways unchanged,
// adding only its own: code actions on kernels and launches (merged into
// clangd's textDocument/codeAction answers), hint diagnostics (merged into
// clangd's publishDiagnostics), and the commands those actions run. Its own
// work runs on a worker thread, so clangd's traffic never waits for it; if
// clangd dies it is started again and the open documents replayed.
//
// Threads: the editor reader (main), the clangd reader, the worker, and one
// per running "optimize this kernel". Everything shared is under State::Mu;
// every write to the editor goes through sendToEditor (one lock).
//
//===----------------------------------------------------------------------===//

#include "ClangdOptimlInternal.h"
#include "KernelActions.h"
#include "optiml/Edit/EditJSON.h"
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

cl::OptionCategory Category("clangd-optiml options");
cl::opt<std::string> ClangdPath("clangd",
                                cl::desc("The clangd to run (default: "
                                         "clangd-22, then clangd, on PATH)"),
                                cl::value_desc("path"), cl::cat(Category));
cl::opt<std::string>
    OptimlPath("clang-optiml",
               cl::desc("clang-optiml for 'optimize this kernel' (default: "
                        "beside this program, then on PATH)"),
               cl::value_desc("path"), cl::cat(Category));
} // namespace

cl::list<std::string> OptimizeArgs(
    "optimize-arg",
    cl::desc("An argument added to 'optimize this kernel''s clang-optiml "
             "optimize command line (repeat for several), e.g. "
             "--optimize-arg=--budget=8"),
    cl::value_desc("arg"), cl::cat(Category));
namespace {

cl::list<std::string> ClangdArgs(cl::Sink, cl::desc("<clangd arguments>"));

} // namespace

State S;
std::mutex WriteMu;

void sendToEditor(const json &Msg) {
  std::string Body = Msg.dump(-1, ' ', false, json::error_handler_t::replace);
  std::lock_guard<std::mutex> L(WriteMu);
  writeAll(STDOUT_FILENO, frame(Body));
}

void sendRawToEditor(StringRef Body) {
  std::lock_guard<std::mutex> L(WriteMu);
  writeAll(STDOUT_FILENO, frame(Body));
}

std::mutex ClangdWriteMu;
void sendRawToClangd(StringRef Body) {
  std::lock_guard<std::mutex> L(ClangdWriteMu);
  int Fd;
  {
    std::lock_guard<std::mutex> G(S.Mu);
    Fd = S.ClangdIn;
  }
  if (Fd >= 0)
    writeAll(Fd, frame(Body)); // a dead clangd: its reader restarts it
}

void log(const Twine &Msg) {
  std::lock_guard<std::mutex> L(WriteMu);
  errs() << "clangd-optiml: " << Msg << "\n";
}

std::string newId() {
  std::lock_guard<std::mutex> L(S.Mu);
  return "clang-optiml:" + std::to_string(++S.NextId);
}

void showMessage(int Type, const std::string &Text) {
  sendToEditor({{"jsonrpc", "2.0"},
                {"method", "window/showMessage"},
                {"params", {{"type", Type}, {"message", Text}}}});
}

namespace {

//===----------------------------------------------------------------------===//
// clangd
//===----------------------------------------------------------------------===//

std::string ClangdExe;

bool startClangd() {
  int In[2], Out[2];
  if (pipe(In) || pipe(Out))
    return false;
  posix_spawn_file_actions_t FA;
  posix_spawn_file_actions_init(&FA);
  posix_spawn_file_actions_adddup2(&FA, In[0], 0);
  posix_spawn_file_actions_adddup2(&FA, Out[1], 1);
  for (int Fd : {In[0], In[1], Out[0], Out[1]})
    posix_spawn_file_actions_addclose(&FA, Fd);
  std::vector<std::string> Argv = {ClangdExe};
  Argv.insert(Argv.end(), ClangdArgs.begin(), ClangdArgs.end());
  std::vector<char *> Args;
  for (const std::string &A : Argv)
    Args.push_back(const_cast<char *>(A.c_str()));
  Args.push_back(nullptr);
  pid_t Pid;
  int RC =
      posix_spawn(&Pid, ClangdExe.c_str(), &FA, nullptr, Args.data(), environ);
  posix_spawn_file_actions_destroy(&FA);
  close(In[0]);
  close(Out[1]);
  if (RC) {
    close(In[1]);
    close(Out[0]);
    return false;
  }
  fcntl(In[1], F_SETFD, FD_CLOEXEC);
  fcntl(Out[0], F_SETFD, FD_CLOEXEC);
  std::lock_guard<std::mutex> L(S.Mu);
  S.ClangdIn = In[1];
  S.ClangdOut = Out[0];
  S.ClangdPid = Pid;
  return true;
}

const char *const ReinitializeId = "clang-optiml:reinitialize";

/// clangd is gone: answers what it owed, starts it again and re-initializes
/// it (the documents are replayed when it answers).
bool restartClangd() {
  std::vector<json> Owed;
  {
    std::lock_guard<std::mutex> L(S.Mu);
    close(S.ClangdIn);
    close(S.ClangdOut);
    S.ClangdIn = S.ClangdOut = -1;
    waitpid(S.ClangdPid, nullptr, 0);
    if (S.ShuttingDown || S.InitializeParams.is_null() || ++S.Restarts > 20)
      return false;
    for (auto &[Id, Method] : S.Forwarded)
      Owed.push_back(
          {{"jsonrpc", "2.0"},
           {"id", json::parse(Id)},
           {"error",
            {{"code", -32801}, {"message", "clangd restarted; ask again"}}}});
    S.Forwarded.clear();
    S.Actions.clear();
    S.Restarting = true;
  }
  for (const json &M : Owed)
    sendToEditor(M);
  log("clangd exited; starting it again");
  if (!startClangd())
    return false;
  json Init;
  {
    std::lock_guard<std::mutex> L(S.Mu);
    Init = {{"jsonrpc", "2.0"},
            {"id", ReinitializeId},
            {"method", "initialize"},
            {"params", S.InitializeParams}};
  }
  sendRawToClangd(Init.dump());
  return true;
}

/// clangd answered the re-initialize: replay the open documents, then
/// what the editor sent meanwhile.
void finishRestart() {
  std::vector<std::string> Msgs;
  Msgs.push_back(json({{"jsonrpc", "2.0"},
                       {"method", "initialized"},
                       {"params", json::object()}})
                     .dump());
  {
    std::lock_guard<std::mutex> L(S.Mu);
    for (auto &[Uri, D] : S.Docs)
      Msgs.push_back(json({{"jsonrpc", "2.0"},
                           {"method", "textDocument/didOpen"},
                           {"params",
                            {{"textDocument",
                              {{"uri", D.Uri},
                               {"languageId", D.LanguageId},
                               {"version", D.Version},
                               {"text", D.Text}}}}}})
                         .dump(-1, ' ', false, json::error_handler_t::replace));
    S.Restarting = false;
    append_range(Msgs, S.Held);
    S.Held.clear();
  }
  for (const std::string &M : Msgs)
    sendRawToClangd(M);
}

void fromClangd(const std::string &Body) {
  json Msg;
  try {
    Msg = json::parse(Body);
  } catch (const json::exception &) {
    sendRawToEditor(Body); // not ours to judge
    return;
  }
  if (!Msg.is_object()) {
    sendRawToEditor(Body);
    return;
  }
  if (Msg.contains("id") && !Msg.contains("method")) { // a response
    std::string Key = Msg["id"].dump();
    if (Msg["id"] == ReinitializeId) {
      finishRestart();
      return;
    }
    std::optional<json> Send;
    bool IsInit = false;
    {
      std::lock_guard<std::mutex> L(S.Mu);
      S.Forwarded.erase(Key);
      IsInit = Key == S.InitializeId;
      auto It = S.Actions.find(Key);
      if (It != S.Actions.end()) {
        It->second.Clangd = Msg;
        Send = completeAction(Key);
        if (!Send)
          return; // ours are still being computed
      }
    }
    if (Send) {
      sendToEditor(*Send);
      return;
    }
    if (IsInit && Msg.contains("result") && Msg["result"].is_object()) {
      json &Caps = Msg["result"]["capabilities"];
      json &Cmds = Caps["executeCommandProvider"]["commands"];
      if (!Cmds.is_array())
        Cmds = json::array();
      Cmds.push_back(ApplyCommand);
      Cmds.push_back(OptimizeCommand);
      std::string Enc = Caps.value("positionEncoding", "");
      if (Enc.empty() && Msg["result"].contains("offsetEncoding"))
        Enc = Msg["result"].value("offsetEncoding", "");
      Utf8Positions = Enc == "utf-8";
      sendToEditor(Msg);
      return;
    }
    sendRawToEditor(Body);
    return;
  }
  if (Msg.value("method", "") == "textDocument/publishDiagnostics" &&
      Msg.contains("params") && Msg["params"].is_object()) {
    std::optional<json> Merged;
    {
      std::lock_guard<std::mutex> L(S.Mu);
      auto It = S.Docs.find(Msg["params"].value("uri", ""));
      if (It != S.Docs.end() && It->second.AnalyzedVersion >= 0 &&
          Msg["params"]["diagnostics"].is_array()) {
        It->second.ClangdDiagnostics = Msg["params"]["diagnostics"];
        It->second.HaveClangdDiagnostics = true;
        Merged = mergedDiagnostics(It->second);
        if (Msg["params"].contains("version"))
          (*Merged)["params"]["version"] = Msg["params"]["version"];
      } else if (It != S.Docs.end()) {
        It->second.ClangdDiagnostics = Msg["params"]["diagnostics"];
        It->second.HaveClangdDiagnostics = true;
      }
    }
    if (Merged) {
      sendToEditor(*Merged);
      return;
    }
  }
  sendRawToEditor(Body);
}

void clangdReaderLoop() {
  while (true) {
    int Fd;
    {
      std::lock_guard<std::mutex> L(S.Mu);
      Fd = S.ClangdOut;
    }
    std::string Body;
    ReadBuffer B;
    B.Fd = Fd;
    while (Fd >= 0 && readMessage(B, Body))
      fromClangd(Body);
    if (!restartClangd())
      return;
  }
}

//===----------------------------------------------------------------------===//
// The editor
//===----------------------------------------------------------------------===//

void updateDocument(const std::string &Method, const json &P) {
  const json &TD = P.at("textDocument");
  std::string Uri = TD.at("uri").get<std::string>();
  std::lock_guard<std::mutex> L(S.Mu);
  if (Method == "textDocument/didOpen") {
    Document &D = S.Docs[Uri];
    D = Document();
    D.Uri = Uri;
    D.Path = pathOfUri(Uri);
    D.Text = TD.value("text", "");
    D.Version = TD.value("version", int64_t(0));
    D.LanguageId = TD.value("languageId", "cuda");
    return;
  }
  auto It = S.Docs.find(Uri);
  if (It == S.Docs.end())
    return;
  if (Method == "textDocument/didClose") {
    S.Docs.erase(It);
    return;
  }
  Document &D = It->second;
  D.Version = TD.value("version", D.Version + 1);
  for (const json &C : P.at("contentChanges")) {
    std::string New = C.value("text", "");
    if (!C.contains("range")) {
      D.Text = New;
      continue;
    }
    size_t B = offsetOf(D.Text, C["range"]["start"]);
    size_t E = offsetOf(D.Text, C["range"]["end"]);
    if (E < B)
      std::swap(B, E);
    D.Text.replace(B, E - B, New);
  }
}

bool isOurs(const json &Msg) {
  return Msg.contains("id") && Msg["id"].is_string() &&
         StringRef(Msg["id"].get<std::string>()).starts_with("clang-optiml:");
}

/// One message from the editor. False after `exit`.
bool fromEditor(const std::string &Body) {
  json Msg;
  try {
    Msg = json::parse(Body);
  } catch (const json::exception &) {
    sendRawToClangd(Body); // clangd answers malformed input its own way
    return true;
  }
  if (!Msg.is_object()) {
    sendRawToClangd(Body);
    return true;
  }
  std::string Method = Msg.value("method", "");
  bool IsRequest = Msg.contains("id") && !Method.empty();
  if (!Msg.contains("method") && isOurs(Msg))
    return true; // the editor's answer to our applyEdit or progress

  if (Method == "workspace/executeCommand" && Msg.contains("params")) {
    std::string Cmd = Msg["params"].value("command", "");
    if (Cmd == ApplyCommand || Cmd == OptimizeCommand) {
      json Args = Msg["params"].value("arguments", json::array());
      sendToEditor(
          {{"jsonrpc", "2.0"}, {"id", Msg["id"]}, {"result", nullptr}});
      if (!Args.is_array() || Args.empty() || !Args[0].is_object())
        return true;
      const json &A = Args[0];
      if (Cmd == ApplyCommand)
        post([A] { runApply(A); });
      else
        std::thread([A] {
          try {
            runOptimize(A);
          } catch (const std::exception &E) {
            log(Twine("internal error: ") + E.what());
          }
        }).detach();
      return true;
    }
  }
  if (Method == "window/workDoneProgress/cancel" && Msg.contains("params")) {
    std::string Token = Msg["params"].value("token", "");
    std::lock_guard<std::mutex> L(S.Mu);
    auto It = S.Optimizing.find(Token);
    if (It != S.Optimizing.end()) {
      kill(It->second, SIGTERM);
      S.Optimizing.erase(It);
      return true;
    }
  }

  if (Method == "textDocument/didOpen" || Method == "textDocument/didChange" ||
      Method == "textDocument/didClose") {
    if (Msg.contains("params")) {
      updateDocument(Method, Msg["params"]);
      if (Method != "textDocument/didClose")
        queueAnalysis(Msg["params"]["textDocument"].value("uri", ""));
    }
  }
  if (IsRequest) {
    std::lock_guard<std::mutex> L(S.Mu);
    std::string Key = Msg["id"].dump();
    S.Forwarded[Key] = Method;
    if (Method == "initialize") {
      S.InitializeId = Key;
      S.InitializeParams = Msg.value("params", json::object());
    }
    if (Method == "shutdown")
      S.ShuttingDown = true;
    if (Method == "textDocument/codeAction" && Msg.contains("params")) {
      PendingAction &PA = S.Actions[Key];
      PA.Request = Msg;
      try {
        PA.Ours = actionsFor(Msg);
      } catch (const json::exception &) {
        PA.Ours = json::array();
      }
    }
  }
  {
    std::lock_guard<std::mutex> L(S.Mu);
    if (S.Restarting) {
      S.Held.push_back(Body);
      return Method != "exit";
    }
  }
  sendRawToClangd(Body);
  return Method != "exit";
}

std::string findClangd() {
  if (!ClangdPath.empty())
    return ClangdPath;
  for (const char *Name : {"clangd-22", "clangd"})
    if (auto P = sys::findProgramByName(Name))
      return *P;
  return "";
}

std::string findOptiml(const char *Argv0) {
  if (!OptimlPath.empty())
    return OptimlPath;
  std::string Self =
      sys::fs::getMainExecutable(Argv0, reinterpret_cast<void *>(&findClangd));
  SmallString<256> Beside(sys::path::parent_path(Self));
  sys::path::append(Beside, "clang-optiml");
  if (sys::fs::can_execute(Beside))
    return std::string(Beside);
  if (auto P = sys::findProgramByName("clang-optiml"))
    return *P;
  return "";
}

} // namespace
} // namespace lsp
} // namespace optiml

int main(int argc, char **argv) {
  using namespace optiml::lsp;
  InitLLVM X(argc, argv);
  // Editors learn clangd's version from `--version` (VS Code's clangd
  // extension reads "clangd version N"): answer with the real clangd's.
  for (int I = 1; I < argc; ++I)
    if (StringRef(argv[I]) == "--version" || StringRef(argv[I]) == "-version") {
      for (int J = 1; J < argc; ++J)
        if (StringRef(argv[J]).starts_with("--clangd="))
          ClangdPath = StringRef(argv[J]).drop_front(9).str();
      std::string Exe = findClangd();
      outs() << "clangd-optiml: clang-optiml's code actions around:\n";
      outs().flush();
      if (Exe.empty()) {
        errs() << "clangd-optiml: error: no clangd found\n";
        return 1;
      }
      char *Args[] = {const_cast<char *>(Exe.c_str()),
                      const_cast<char *>("--version"), nullptr};
      execv(Exe.c_str(), Args);
      errs() << "clangd-optiml: error: cannot run '" << Exe << "'\n";
      return 1;
    }
  cl::HideUnrelatedOptions(Category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "clangd-optiml: clangd with clang-optiml's code actions and hints.\n\n"
      "Point the editor's clangd at this program; it runs clangd-22 (or\n"
      "--clangd=PATH) with the arguments after '--' and forwards every\n"
      "message. docs/editor.md has the editor configurations.\n\n"
      "  clangd-optiml -- --background-index\n");
  signal(SIGPIPE, SIG_IGN);
  ClangdExe = findClangd();
  if (ClangdExe.empty()) {
    errs() << "clangd-optiml: error: no clangd found (clangd-22 or clangd on "
              "PATH); name one with --clangd=PATH\n";
    return 1;
  }
  S.OptimlExe = findOptiml(argv[0]);
  S.Opts.Tools.Argv0 = argv[0];
  if (!startClangd()) {
    errs() << "clangd-optiml: error: cannot start '" << ClangdExe << "'\n";
    return 1;
  }
  std::thread Worker(workerLoop);
  std::thread Reader(clangdReaderLoop);
  std::string Body;
  ReadBuffer In;
  In.Fd = STDIN_FILENO;
  while (readMessage(In, Body))
    if (!fromEditor(Body))
      break;
  {
    std::lock_guard<std::mutex> L(S.Mu);
    S.ShuttingDown = true;
  }
  // After `exit` (or the editor closing its end) clangd exits as it does;
  // its reader then returns.
  {
    std::lock_guard<std::mutex> L(S.Mu);
    if (S.ClangdIn >= 0) {
      close(S.ClangdIn);
      S.ClangdIn = -1;
    }
  }
  Reader.join();
  {
    std::lock_guard<std::mutex> L(WorkMu);
    WorkDone = true;
    Work.clear();
  }
  WorkCv.notify_all();
  Worker.join();
  return 0;
}
