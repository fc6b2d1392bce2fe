//===- Worker.cpp - Analyses, hints and code actions ----------------------===//
//
// The worker thread: each document analyzed after it changes, its hints
// merged into clangd's diagnostics, code actions answered from the
// analysis, and the chosen edit applied (with every check) on the text of
// the moment.
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
    return {
        {"documentChanges",
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

} // namespace lsp
} // namespace optiml
