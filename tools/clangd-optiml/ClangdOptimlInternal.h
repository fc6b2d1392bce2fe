//===- ClangdOptimlInternal.h - clangd-optiml's shared pieces ---*- C++ -*-===//
//
// Private to clangd-optiml: the proxy's state and how its parts reach each
// other. ClangdOptiml.cpp owns the state, clangd and the editor's traffic;
// LspProtocol.cpp frames messages and converts positions; Worker.cpp runs
// the analyses, hints and code actions; OptimizeKernel.cpp runs "optimize
// this kernel".
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_TOOLS_CLANGD_OPTIML_CLANGDOPTIMLINTERNAL_H
#define OPTIML_TOOLS_CLANGD_OPTIML_CLANGDOPTIMLINTERNAL_H

#include "KernelActions.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"
#include <nlohmann/json.hpp>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace optiml {
namespace lsp {

using json = nlohmann::json;

extern llvm::cl::list<std::string> OptimizeArgs;

const char *const ApplyCommand = "clang-optiml.apply";
const char *const OptimizeCommand = "clang-optiml.optimize";

// Framing and positions (LspProtocol.cpp).

/// Buffered reads per descriptor (one reader thread each): a message's
/// headers and body usually come in one read.
struct ReadBuffer {
  int Fd = -1;
  std::string Data;
  size_t Pos = 0;
};

bool readMessage(ReadBuffer &Fd, std::string &Body);
bool writeAll(int Fd, llvm::StringRef S);
std::string frame(llvm::StringRef Body);
/// Positions count UTF-8 bytes (negotiated) instead of UTF-16 code units.
extern bool Utf8Positions;
size_t offsetOf(llvm::StringRef Text, const json &Pos);
json positionOf(llvm::StringRef Text, size_t Offset);
json rangeOf(llvm::StringRef Text, size_t Begin, size_t End);
std::string pathOfUri(llvm::StringRef Uri);

// State (ClangdOptiml.cpp).
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

extern State S;
void sendToEditor(const json &Msg);
void sendRawToEditor(llvm::StringRef Body);
void sendRawToClangd(llvm::StringRef Body);
void log(const llvm::Twine &Msg);
std::string newId();
void showMessage(int Type, const std::string &Text);

// The worker (Worker.cpp).
extern std::mutex WorkMu;
extern std::condition_variable WorkCv;
extern std::deque<std::function<void()>> Work;
extern bool WorkDone;
void post(std::function<void()> F);
void workerLoop();
json mergedDiagnostics(const Document &D);
void queueAnalysis(const std::string &Uri);
json actionsFor(const json &Req);
std::optional<json> completeAction(const std::string &Key);
json workspaceEdit(const std::string &Uri, int64_t Version, llvm::StringRef Old,
                   const std::vector<TextChange> &Changes);
void requestApplyEdit(const std::string &Label, const json &Edit);
void runApply(const json &Args);

// Optimize this kernel (OptimizeKernel.cpp).
void runOptimize(const json &Args);

} // namespace lsp
} // namespace optiml

#endif // OPTIML_TOOLS_CLANGD_OPTIML_CLANGDOPTIMLINTERNAL_H
