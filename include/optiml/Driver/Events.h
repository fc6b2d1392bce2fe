//===- Events.h - A session's events as JSON lines --------------*- C++ -*-===//
//
// `optimize --progress=json` tells its session as one JSON object per line
// on stderr; the editor runs optimize as a child and follows these lines
// (docs/editor.md lists the fields). The writer and the reader are here, so
// the two sides cannot drift.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_DRIVER_EVENTS_H
#define OPTIML_DRIVER_EVENTS_H

#include "optiml/Driver/Optimize.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <optional>
#include <string>

namespace optiml {

/// "45s", "3m05s", "1h02m"; "?" for a negative (unknown) duration.
std::string formatDuration(double Seconds);

/// The progress line both the command line and the editor show:
/// "[3/30] best 2.10x  eta 1m20s  shared-tiling on k".
std::string progressLine(const SearchProgress &P);

/// Writes every event as one line `{"event": KIND, ...}` on a stream, each
/// line in one write (a pipe shared with other writers never sees half of
/// one). Kinds: message, warning, note, result (with "text"), started,
/// progress, error (a failed search of a target), outcome.
class JsonEventWriter : public SessionObserver {
public:
  explicit JsonEventWriter(llvm::raw_ostream &OS) : OS(OS) {}
  void message(llvm::StringRef Text) override;
  void warning(llvm::StringRef Text) override;
  void note(llvm::StringRef Text) override;
  void result(llvm::StringRef Text) override;
  void started(const SessionStart &S) override;
  void progress(const SearchProgress &P) override;
  void searchFailed(llvm::Error E) override;
  /// The session's end (not an observer event: the caller has it).
  void outcome(const SessionOutcome &O);

private:
  void text(llvm::StringRef Kind, llvm::StringRef Text);
  llvm::raw_ostream &OS;
};

/// One line read back. Kind is the event's kind; Text is set for the text
/// kinds and error, Start for started, Progress for progress, Outcome for
/// outcome.
struct SessionEvent {
  std::string Kind;
  std::string Text;
  SessionStart Start;
  SearchProgress Progress;
  SessionOutcome Outcome;
};

/// \p Line as an event; none when it is not one (any other line on the
/// stream, such as an error the tool printed as text). Fields of the wrong
/// type read as absent.
std::optional<SessionEvent> parseSessionEvent(llvm::StringRef Line);

} // namespace optiml

#endif
