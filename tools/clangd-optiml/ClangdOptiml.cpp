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
cl::list<std::string> OptimizeArgs(
    "optimize-arg",
    cl::desc("An argument added to 'optimize this kernel''s clang-optiml "
             "optimize command line (repeat for several), e.g. "
             "--optimize-arg=--budget=8"),
    cl::value_desc("arg"), cl::cat(Category));
cl::list<std::string> ClangdArgs(cl::Sink, cl::desc("<clangd arguments>"));

const char *const ApplyCommand = "clang-optiml.apply";
const char *const OptimizeCommand = "clang-optiml.optimize";

//===----------------------------------------------------------------------===//
// Framing
//===----------------------------------------------------------------------===//

/// Buffered reads per descriptor (one reader thread each): a message's
/// headers and body usually come in one read.
struct ReadBuffer {
  int Fd = -1;
  std::string Data;
  size_t Pos = 0;
};

bool fill(ReadBuffer &B) {
  char Chunk[65536];
  while (true) {
    ssize_t R = ::read(B.Fd, Chunk, sizeof(Chunk));
    if (R < 0 && errno == EINTR)
      continue;
    if (R <= 0)
      return false;
    B.Data.erase(0, B.Pos);
    B.Pos = 0;
    B.Data.append(Chunk, size_t(R));
    return true;
  }
}

bool readAll(ReadBuffer &B, char *Buf, size_t N) {
  while (N) {
    if (B.Pos == B.Data.size() && !fill(B))
      return false;
    size_t Take = std::min(N, B.Data.size() - B.Pos);
    memcpy(Buf, B.Data.data() + B.Pos, Take);
    B.Pos += Take;
    Buf += Take;
    N -= Take;
  }
  return true;
}

bool writeAll(int Fd, StringRef S) {
  const char *P = S.data();
  size_t N = S.size();
  while (N) {
    ssize_t W = ::write(Fd, P, N);
    if (W < 0 && errno == EINTR)
      continue;
    if (W <= 0)
      return false;
    P += W;
    N -= size_t(W);
  }
  return true;
}

/// One message body (Content-Length framing); false at end of input.
bool readMessage(ReadBuffer &Fd, std::string &Body) {
  std::string Header;
  size_t Length = 0;
  bool HaveLength = false;
  while (true) {
    char C;
    if (!readAll(Fd, &C, 1))
      return false;
    Header += C;
    if (Header.size() > 64 * 1024)
      return false; // not LSP
    if (!StringRef(Header).ends_with("\r\n"))
      continue;
    StringRef Line = StringRef(Header).drop_back(2);
    if (Line.empty()) {
      if (HaveLength)
        break;
      Header.clear();
      continue;
    }
    if (Line.consume_front_insensitive("content-length:")) {
      HaveLength = !Line.trim().getAsInteger(10, Length);
    }
    Header.clear();
  }
  Body.resize(Length);
  return readAll(Fd, Body.data(), Length);
}

std::string frame(StringRef Body) {
  return "Content-Length: " + std::to_string(Body.size()) + "\r\n\r\n" +
         Body.str();
}

//===----------------------------------------------------------------------===//
// Positions (LSP lines and UTF-16 code units, or UTF-8 if negotiated)
//===----------------------------------------------------------------------===//

bool Utf8Positions = false;

size_t unitsOf(StringRef LineText) {
  if (Utf8Positions)
    return LineText.size();
  size_t Units = 0;
  for (size_t I = 0; I < LineText.size(); ++I) {
    unsigned char C = LineText[I];
    if ((C & 0xC0) == 0x80)
      continue; // continuation byte
    Units += (C >= 0xF0) ? 2 : 1;
  }
  return Units;
}

size_t offsetOf(StringRef Text, const json &Pos) {
  int64_t Line = Pos.value("line", 0), Char = Pos.value("character", 0);
  size_t Off = 0;
  for (int64_t L = 0; L < Line; ++L) {
    size_t NL = Text.find('\n', Off);
    if (NL == StringRef::npos)
      return Text.size();
    Off = NL + 1;
  }
  size_t End = Text.find('\n', Off);
  if (End == StringRef::npos)
    End = Text.size();
  size_t Units = 0, I = Off;
  while (I < End && Units < size_t(std::max<int64_t>(Char, 0))) {
    unsigned char C = Text[I];
    size_t Len = C < 0x80    ? 1
                 : C >= 0xF0 ? 4
                 : C >= 0xE0 ? 3
                 : C >= 0xC0 ? 2
                             : 1;
    Units += (!Utf8Positions && Len == 4) ? 2 : Utf8Positions ? Len : 1;
    I += Len;
  }
  return std::min(I, End);
}

json positionOf(StringRef Text, size_t Offset) {
  Offset = std::min(Offset, Text.size());
  StringRef Before = Text.take_front(Offset);
  size_t LineStart = Before.rfind('\n');
  LineStart = LineStart == StringRef::npos ? 0 : LineStart + 1;
  return {{"line", Before.count('\n')},
          {"character", unitsOf(Before.drop_front(LineStart))}};
}

json rangeOf(StringRef Text, size_t Begin, size_t End) {
  return {{"start", positionOf(Text, Begin)}, {"end", positionOf(Text, End)}};
}

std::string pathOfUri(StringRef Uri) {
  if (!Uri.consume_front("file://"))
    return "";
  std::string Out;
  for (size_t I = 0; I < Uri.size(); ++I) {
    if (Uri[I] == '%' && I + 2 < Uri.size()) {
      unsigned V;
      if (!Uri.substr(I + 1, 2).getAsInteger(16, V)) {
        Out += char(V);
        I += 2;
        continue;
      }
    }
    Out += Uri[I];
  }
  return Out;
}

//===----------------------------------------------------------------------===//
// State
//===----------------------------------------------------------------------===//

struct Document {
  std::string Uri, Path, Text, LanguageId;
  int64_t Version = 0;
  /// The analysis of AnalyzedText, the text at AnalyzedVersion (-1: none
  /// yet). Code actions are answered from it at once, even when the buffer
  /// has changed since: targets are stable ids (a kernel's name, a loop's
  /// id) that survive unrelated edits, and the edit itself is made on the
  /// text of the moment it is chosen, with every check.
  int64_t AnalyzedVersion = -1;
  std::string AnalyzedText;
  BufferAnalysis Analysis;
  json ClangdDiagnostics = json::array();
  bool HaveClangdDiagnostics = false;
};

struct PendingAction {
  json Request;               ///< the editor's codeAction request
  std::optional<json> Clangd; ///< clangd's answer, once in
  std::optional<json> Ours;   ///< our actions, once computed
};

struct State {
  std::mutex Mu;
  std::map<std::string, Document> Docs;
  /// Editor requests forwarded to clangd, by id (dumped), with the method.
  std::map<std::string, std::string> Forwarded;
  std::map<std::string, PendingAction> Actions;
  std::string InitializeId; ///< the editor's initialize request id
  json InitializeParams;
  bool ShuttingDown = false;
  bool Restarting = false;
  std::vector<std::string> Held; ///< editor messages held during a restart
  int ClangdIn = -1, ClangdOut = -1;
  pid_t ClangdPid = -1;
  unsigned Restarts = 0;
  unsigned NextId = 0;
  /// Running optimize commands, by progress token.
  std::map<std::string, pid_t> Optimizing;
  AnalyzeOptions Opts;
  std::string OptimlExe;
};

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

//===----------------------------------------------------------------------===//
// The worker
//===----------------------------------------------------------------------===//

std::mutex WorkMu;
std::condition_variable WorkCv;
std::deque<std::function<void()>> Work;
std::set<std::string> AnalysisQueued;
bool WorkDone = false;

void post(std::function<void()> F) {
  {
    std::lock_guard<std::mutex> L(WorkMu);
    Work.push_back(std::move(F));
  }
  WorkCv.notify_one();
}

void workerLoop() {
  // Parsing is the heavy part; the threads that forward clangd's traffic
  // go first (a per-thread nice value on Linux).
  setpriority(PRIO_PROCESS, gettid(), 10);
  while (true) {
    std::function<void()> F;
    {
      std::unique_lock<std::mutex> L(WorkMu);
      WorkCv.wait(L, [] { return WorkDone || !Work.empty(); });
      if (Work.empty())
        return;
      F = std::move(Work.front());
      Work.pop_front();
    }
    try {
      F();
    } catch (const std::exception &E) {
      log(Twine("internal error: ") + E.what());
    }
  }
}

json severityOf(const Hint &H) { return H.IsInformation ? 3 : 4; }

json hintDiagnostic(StringRef Text, const Hint &H) {
  return {{"range", rangeOf(Text, H.Begin, H.End)},
          {"severity", severityOf(H)},
          {"source", "clang-optiml"},
          {"code", H.Code},
          {"message", H.Message}};
}

/// clangd's diagnostics for the document plus ours. Called with S.Mu held.
json mergedDiagnostics(const Document &D) {
  json Params = {{"uri", D.Uri}, {"diagnostics", D.ClangdDiagnostics}};
  if (D.AnalyzedVersion == D.Version)
    for (const Hint &H : D.Analysis.Hints)
      Params["diagnostics"].push_back(hintDiagnostic(D.AnalyzedText, H));
  Params["version"] = D.Version;
  return {{"jsonrpc", "2.0"},
          {"method", "textDocument/publishDiagnostics"},
          {"params", Params}};
}

/// Brings the analysis of \p Uri up to date (on the worker).
void analyzeNow(const std::string &Uri) {
  std::string Path, Text;
  int64_t Version;
  AnalyzeOptions Opts;
  {
    std::lock_guard<std::mutex> L(S.Mu);
    auto It = S.Docs.find(Uri);
    if (It == S.Docs.end() || It->second.AnalyzedVersion == It->second.Version)
      return;
    Path = It->second.Path;
    Text = It->second.Text;
    Version = It->second.Version;
    Opts = S.Opts;
  }
  BufferAnalysis A = analyzeBuffer(Path, Text, Opts);
  std::optional<json> Publish;
  {
    std::lock_guard<std::mutex> L(S.Mu);
    auto It = S.Docs.find(Uri);
    if (It == S.Docs.end() || It->second.Version != Version)
      return; // changed meanwhile: a newer analysis is queued
    It->second.Analysis = std::move(A);
    It->second.AnalyzedVersion = Version;
    It->second.AnalyzedText = Text;
    // Published with clangd's once clangd has said something for the file,
    // so ours never replace clangd's with an empty list.
    if (It->second.HaveClangdDiagnostics || !It->second.Analysis.Hints.empty())
      Publish = mergedDiagnostics(It->second);
  }
  if (Publish)
    sendToEditor(*Publish);
}

void queueAnalysis(const std::string &Uri) {
  {
    std::lock_guard<std::mutex> L(WorkMu);
    if (!AnalysisQueued.insert(Uri).second)
      return;
  }
  post([Uri] {
    {
      std::lock_guard<std::mutex> L(WorkMu);
      AnalysisQueued.erase(Uri);
    }
    analyzeNow(Uri);
  });
}

bool overlaps(size_t B1, size_t E1, size_t B2, size_t E2) {
  return B1 <= E2 && B2 <= E1;
}

/// \p X, an offset in \p Now, as an offset in \p Then (the text an analysis
/// was made on): shifted past the changed blocks before it; inside a changed
/// block, the block's start.
size_t offsetThen(StringRef Then, StringRef Now, size_t X) {
  if (Then == Now)
    return X;
  int64_t Delta = 0;
  for (const TextChange &C : lineChanges(Then, Now)) {
    int64_t NewBegin = int64_t(C.Offset) + Delta;
    if (int64_t(X) < NewBegin)
      break;
    if (int64_t(X) < NewBegin + int64_t(C.Text.size()))
      return C.Offset;
    Delta += int64_t(C.Text.size()) - int64_t(C.Length);
  }
  return size_t(std::max<int64_t>(0, int64_t(X) - Delta));
}

/// Our code actions for a codeAction request, from the last analysis of the
/// document (no parsing here: the answer never waits for the worker).
/// Called with S.Mu held.
json actionsFor(const json &Req) {
  json Out = json::array();
  const json &P = Req.at("params");
  std::string Uri = P.at("textDocument").at("uri").get<std::string>();
  auto It = S.Docs.find(Uri);
  if (It == S.Docs.end() || It->second.AnalyzedVersion < 0)
    return Out;
  const Document &D = It->second;
  size_t B = offsetThen(D.AnalyzedText, D.Text,
                        offsetOf(D.Text, P.at("range").at("start")));
  size_t E = offsetThen(D.AnalyzedText, D.Text,
                        offsetOf(D.Text, P.at("range").at("end")));
  for (const Offer &O : D.Analysis.Offers) {
    if (none_of(O.Ranges, [&](const std::pair<size_t, size_t> &R) {
          return overlaps(B, E, R.first, R.second);
        }))
      continue;
    json Args = {{"uri", Uri},
                 {"version", D.Version},
                 {"edit", json::parse(editToJSON(O.E))}};
    json Action = {{"title", O.Title},
                   {"kind", "refactor.rewrite"},
                   {"command",
                    {{"title", O.Title},
                     {"command", ApplyCommand},
                     {"arguments", json::array({Args})}}}};
    json Diags = json::array();
    for (const Hint &H : D.Analysis.Hints)
      if (H.Kernel == O.Kernel && is_contained(O.Addresses, H.Code))
        Diags.push_back(hintDiagnostic(D.AnalyzedText, H));
    if (!Diags.empty())
      Action["diagnostics"] = Diags;
    Out.push_back(Action);
  }
  for (const OptimizeOffer &O : D.Analysis.Optimize) {
    if (!overlaps(B, E, O.Begin, O.End))
      continue;
    std::string Title =
        "clang-optiml: optimize " + O.Kernel + " (search on the GPU)";
    json Args = {{"uri", Uri}, {"kernel", O.Kernel}};
    json Cmd = {{"title", Title},
                {"command", OptimizeCommand},
                {"arguments", json::array({Args})}};
    Out.push_back({{"title", Title}, {"kind", "refactor"}, {"command", Cmd}});
  }
  return Out;
}

/// Sends a codeAction answer once both halves are in. Called with S.Mu held;
/// returns the message to send.
std::optional<json> completeAction(const std::string &Key) {
  auto It = S.Actions.find(Key);
  if (It == S.Actions.end() || !It->second.Clangd || !It->second.Ours)
    return std::nullopt;
  json Answer = *It->second.Clangd;
  json Ours = *It->second.Ours;
  S.Actions.erase(It);
  if (Answer.contains("error"))
    return Answer; // clangd's failure stands as it is
  if (!Answer.contains("result") || Answer["result"].is_null())
    Answer["result"] = json::array();
  for (json &A : Ours)
    Answer["result"].push_back(std::move(A));
  return Answer;
}

/// Whether the editor said it takes versioned edits (documentChanges).
bool editorTakesDocumentChanges() {
  std::lock_guard<std::mutex> L(S.Mu);
  const json &P = S.InitializeParams;
  if (!P.is_object())
    return false;
  auto Caps = P.find("capabilities");
  if (Caps == P.end() || !Caps->is_object())
    return false;
  auto WS = Caps->find("workspace");
  if (WS == Caps->end() || !WS->is_object())
    return false;
  auto WE = WS->find("workspaceEdit");
  if (WE == WS->end() || !WE->is_object())
    return false;
  auto DC = WE->find("documentChanges");
  return DC != WE->end() && DC->is_boolean() && DC->get<bool>();
}

/// The edit for the editor: versioned (documentChanges, so the editor
/// refuses it if the buffer is no longer at \p Version) when the editor
/// takes those, else plain changes.
json workspaceEdit(const std::string &Uri, int64_t Version, StringRef Old,
                   const std::vector<TextChange> &Changes) {
  json Edits = json::array();
  for (const TextChange &C : Changes)
    Edits.push_back({{"range", rangeOf(Old, C.Offset, C.Offset + C.Length)},
                     {"newText", C.Text}});
  if (editorTakesDocumentChanges())
    return {{"documentChanges",
             json::array({{{"textDocument", {{"uri", Uri}, {"version", Version}}},
                           {"edits", Edits}}})}};
  return {{"changes", {{Uri, Edits}}}};
}

void requestApplyEdit(const std::string &Label, const json &Edit) {
  sendToEditor({{"jsonrpc", "2.0"},
                {"id", newId()},
                {"method", "workspace/applyEdit"},
                {"params", {{"label", Label}, {"edit", Edit}}}});
}

/// clang-optiml.apply (on the worker).
void runApply(const json &Args) {
  std::string Uri = Args.at("uri").get<std::string>();
  int64_t Version = Args.value("version", int64_t(-1));
  auto EditOr = parseEdit(Args.at("edit").dump());
  if (!EditOr) {
    showMessage(1, "clang-optiml: " + toString(EditOr.takeError()));
    return;
  }
  std::string Path, Text;
  int64_t DocVersion = 0;
  AnalyzeOptions Opts;
  {
    std::lock_guard<std::mutex> L(S.Mu);
    auto It = S.Docs.find(Uri);
    if (It == S.Docs.end()) {
      showMessage(1, "clang-optiml: the document is not open");
      return;
    }
    if (Version >= 0 && It->second.Version != Version) {
      showMessage(2, "clang-optiml: the file changed since the action was "
                     "offered; ask for code actions again");
      return;
    }
    Path = It->second.Path;
    Text = It->second.Text;
    DocVersion = It->second.Version;
    Opts = S.Opts;
  }
  auto R = applyToBuffer(Path, Text, *EditOr, Opts);
  if (!R) {
    showMessage(1, "clang-optiml: the edit was not applied: " +
                       toString(R.takeError()));
    return;
  }
  requestApplyEdit("clang-optiml: " + R->Summary,
                   workspaceEdit(Uri, DocVersion, Text, R->Changes));
}

//===----------------------------------------------------------------------===//
// Optimize this kernel (a child clang-optiml, with $/progress)
//===----------------------------------------------------------------------===//

/// Spawns \p Argv in \p Dir with stdin from /dev/null and stdout/stderr to
/// one pipe.
pid_t spawnPiped(const std::vector<std::string> &Argv, const std::string &Dir,
                 int &OutFd) {
  int P[2];
  if (pipe(P))
    return -1;
  posix_spawn_file_actions_t FA;
  posix_spawn_file_actions_init(&FA);
  posix_spawn_file_actions_addopen(&FA, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&FA, P[1], 1);
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

/// What the editor is told of a finished search, taken from the lines
/// clang-optiml optimize printed.
struct OptimizeOutcome {
  std::string RunDir;   ///< from "...; journal: DIR/journal.jsonl"
  std::string Verdict;  ///< "k.cu: 2.10x faster than the original (verified)..."
  std::string ExtraFlags; ///< "note: the best variant is built with ..."
};

OptimizeOutcome readOutcome(StringRef All) {
  OptimizeOutcome O;
  SmallVector<StringRef, 64> Lines;
  All.split(Lines, '\n');
  for (StringRef L : Lines) {
    L = L.trim();
    size_t J = L.find("journal: ");
    if (L.starts_with("clang-optiml: optimizing ") && J != StringRef::npos) {
      StringRef Journal = L.substr(J + 9).split(';').first.trim();
      if (Journal.consume_back("/journal.jsonl"))
        O.RunDir = Journal.str();
    } else if (L.contains(" faster than the original (verified")) {
      O.Verdict = L.str();
    } else if (L.starts_with("note: the best variant is built with")) {
      O.ExtraFlags = L.drop_front(6).str();
    }
  }
  return O;
}

/// Moves \p From to \p To (across file systems too); false if it could not.
bool moveFile(const Twine &From, const Twine &To) {
  if (!sys::fs::rename(From, To))
    return true;
  if (sys::fs::copy_file(From, To))
    return false;
  sys::fs::remove(From);
  return true;
}

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
  sys::fs::createTemporaryFile("optiml-report", "html", Report);
  std::string Token = newId();
  sendToEditor({{"jsonrpc", "2.0"},
                {"id", newId()},
                {"method", "window/workDoneProgress/create"},
                {"params", {{"token", Token}}}});
  progress(Token, {{"kind", "begin"},
                   {"title", "clang-optiml: optimizing " + Kernel},
                   {"cancellable", true},
                   {"message", "starting"}});
  std::vector<std::string> Argv = {Exe,        "optimize", Path, "--kernel",
                                   Kernel,     "--report", std::string(Report)};
  Argv.insert(Argv.end(), Extra.begin(), Extra.end());
  int Fd = -1;
  pid_t Pid = spawnPiped(Argv, std::string(sys::path::parent_path(Path)), Fd);
  if (Pid < 0) {
    progress(Token, {{"kind", "end"}, {"message", "could not start"}});
    sys::fs::remove(Report);
    return showMessage(1, "clang-optiml: cannot run " + Exe);
  }
  {
    std::lock_guard<std::mutex> L(S.Mu);
    S.Optimizing[Token] = Pid;
  }
  std::string All, Line;
  char Buf[4096];
  ssize_t N;
  while ((N = read(Fd, Buf, sizeof(Buf))) > 0 || (N < 0 && errno == EINTR)) {
    for (ssize_t I = 0; I < N; ++I) {
      All += Buf[I];
      if (Buf[I] == '\n' || Buf[I] == '\r') {
        if (!StringRef(Line).trim().empty())
          progress(Token, {{"kind", "report"},
                           {"message", StringRef(Line).trim().str()}});
        Line.clear();
      } else {
        Line += Buf[I];
      }
    }
  }
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
  OptimizeOutcome O = readOutcome(All);
  // The report lives with the search's journal, where a user finds it again.
  std::string ReportPath = std::string(Report);
  if (!O.RunDir.empty() && sys::fs::exists(Report) &&
      moveFile(Report, O.RunDir + "/report.html"))
    ReportPath = O.RunDir + "/report.html";
  else if (!sys::fs::exists(Report) || RC != 0)
    sys::fs::remove(Report);

  if (Cancelled)
    return showMessage(3, "clang-optiml: optimizing " + Kernel +
                              " was cancelled");
  if (RC == 0) {
    std::string BestPath = O.RunDir + "/best.cu";
    auto Best = O.RunDir.empty() ? nullptr : MemoryBuffer::getFile(BestPath);
    if (!Best)
      return showMessage(1, "clang-optiml: optimize finished but its best "
                            "variant was not found (" + BestPath + ")");
    std::string Verdict = O.Verdict.empty()
                              ? "the verified best variant of " + Kernel
                              : O.Verdict;
    std::string Flags = O.ExtraFlags.empty() ? "" : "; " + O.ExtraFlags;
    bool Changed;
    {
      std::lock_guard<std::mutex> L(S.Mu);
      auto It = S.Docs.find(Uri);
      Changed = It == S.Docs.end() || It->second.Text != Text;
    }
    // Offered only against the text it was made from; an editor that
    // takes versioned edits also refuses it if the buffer moved on.
    if (Changed)
      return showMessage(2, "clang-optiml: " + Verdict + "; the file changed "
                            "while optimizing, so the best variant is not "
                            "offered as an edit: it is in " + BestPath +
                            Flags + "; report: file://" + ReportPath);
    requestApplyEdit("clang-optiml: " + Verdict,
                     workspaceEdit(Uri, Version, Text,
                                   lineChanges(Text, (*Best)->getBuffer())));
    return showMessage(3, "clang-optiml: " + Verdict +
                              "; offered as an edit" + Flags +
                              "; report: file://" + ReportPath);
  }
  if (StringRef(All).contains("GPU is needed") ||
      StringRef(All).contains("no CUDA GPU") ||
      StringRef(All).contains("no GPU"))
    return showMessage(2, "clang-optiml: no CUDA GPU on this machine: "
                          "optimize searches by running the program, so it "
                          "needs one (the code actions work without)");
  if (RC == 3)
    return showMessage(3, "clang-optiml: nothing verified faster than " +
                              Kernel + " was found; the file is left alone" +
                              (O.RunDir.empty()
                                   ? std::string()
                                   : "; report: file://" + ReportPath));
  StringRef Tail = StringRef(All).trim();
  if (Tail.size() > 600)
    Tail = Tail.take_back(600);
  showMessage(1, "clang-optiml optimize failed: " + Tail.str());
}

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
      json A = Args[0];
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
