//===- FileUtil.h - Files written safely -----------------------*- C++ -*-===//
#ifndef OPTIML_SUPPORT_FILEUTIL_H
#define OPTIML_SUPPORT_FILEUTIL_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>

namespace optiml {

/// Replaces \p Path with \p Contents atomically: the text goes to a temporary
/// file in the same directory as the file finally written, is synced to
/// disk, and is renamed over it only once complete (the directory is synced
/// after). On any failure nothing is changed and no temporary is left.
/// - A symbolic link is written through: the file it resolves to is
///   replaced, the link stays a link.
/// - A read-only file (no write permission bit, or not writable by us) is
///   refused, never replaced.
/// - An existing file keeps its permission bits (and its owner, where we
///   may set it).
/// - A device, FIFO or socket (`/dev/null`, `/dev/stdout`), and any path
///   under /dev or /proc, is written in place, never replaced.
/// - A directory is an error.
llvm::Error writeFileAtomically(llvm::StringRef Path, llvm::StringRef Contents);

/// Whether writeFileAtomically(\p Path, ...) can be expected to succeed:
/// the same refusals (read-only, a directory, an existing directory we
/// cannot write in), made before a long computation whose result would go
/// there. A directory that does not exist yet passes. Writes nothing.
llvm::Error checkOutputFile(llvm::StringRef Path);

/// Where clang-optiml keeps a cache named \p Name: clang-optiml/<Name> under
/// $XDG_CACHE_HOME, else the user's cache directory (~/.cache), else the
/// temporary directory.
std::string userCacheDirectory(llvm::StringRef Name);

/// Reads a whole file; the error names the file.
llvm::Expected<std::string> readFile(llvm::StringRef Path);

/// An exclusive lock (flock) on a file, held until this object is
/// destroyed. The kernel releases it when the process ends, however it ends
/// (SIGKILL included), so a lock file left behind blocks nobody. Children
/// started with exec do not inherit it.
class FileLock {
public:
  /// Tries once, without waiting, to lock \p Path (created if missing).
  /// Locked: the process's pid, host and start time are written into the
  /// file. Held by another: std::nullopt, and \p Holder (if given) receives
  /// what that process wrote, e.g. "pid 4242 on host gpu7, started
  /// 2026-12-01T23:45:00Z". Errors: the file cannot be opened or locked.
  static llvm::Expected<std::optional<FileLock>>
  tryAcquire(llvm::StringRef Path, std::string *Holder = nullptr);

  FileLock(FileLock &&Other) : FD(Other.FD) { Other.FD = -1; }
  FileLock &operator=(FileLock &&Other);
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;
  ~FileLock();

private:
  explicit FileLock(int FD) : FD(FD) {}
  void release();
  int FD = -1;
};

} // namespace optiml

#endif
