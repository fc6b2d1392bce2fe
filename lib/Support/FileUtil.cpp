//===- FileUtil.cpp -------------------------------------------------------===//

#include "optiml/Support/FileUtil.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace optiml {

static std::error_code lastError() {
  return std::error_code(errno, std::generic_category());
}

namespace {
/// Where and how writeFileAtomically writes.
struct WritePlan {
  /// Write \p Path itself with open+write (a device, a FIFO, /proc/...).
  bool InPlace = false;
  /// The file to replace: \p Path with every symbolic link resolved.
  std::string Target;
  /// The target's status, when it exists.
  std::optional<struct stat> Existing;
};
} // namespace

/// Follows symbolic links from \p Path to the file they end at, which need
/// not exist (a dangling link is written through, as a shell's `>` does).
static Expected<std::string> resolveLinks(StringRef Path) {
  SmallString<256> Cur(Path);
  for (unsigned Hops = 0;; ++Hops) {
    struct stat St;
    if (::lstat(Cur.c_str(), &St) != 0) {
      if (errno == ENOENT)
        return std::string(Cur);
      return createStringError(lastError(), "cannot write '%s': %s",
                               Path.str().c_str(), strerror(errno));
    }
    if (!S_ISLNK(St.st_mode))
      return std::string(Cur);
    if (Hops == 40)
      return createStringError(
          std::make_error_code(std::errc::too_many_symbolic_link_levels),
          "cannot write '%s': too many levels of symbolic links",
          Path.str().c_str());
    char Buf[PATH_MAX];
    ssize_t N = ::readlink(Cur.c_str(), Buf, sizeof(Buf));
    if (N < 0 || size_t(N) >= sizeof(Buf))
      return createStringError(
          N < 0 ? lastError()
                : std::make_error_code(std::errc::filename_too_long),
          "cannot write '%s': cannot read the link "
          "'%s'",
          Path.str().c_str(), Cur.c_str());
    StringRef Link(Buf, size_t(N));
    if (sys::path::is_absolute(Link)) {
      Cur = Link;
      continue;
    }
    SmallString<256> Next(sys::path::parent_path(Cur));
    sys::path::append(Next, Link);
    Cur = Next;
  }
}

static Expected<WritePlan> planWrite(StringRef Path) {
  WritePlan Plan;
  SmallString<256> P(Path);
  struct stat St;
  bool Exists = ::stat(P.c_str(), &St) == 0;
  if (Exists && S_ISDIR(St.st_mode))
    return createStringError(std::make_error_code(std::errc::is_a_directory),
                             "cannot write '%s': it is a directory",
                             Path.str().c_str());
  // A device, a FIFO or a socket (`-o /dev/null`, `-o /dev/stdout`) is
  // written in place: renaming a temporary over it would replace the
  // special file with a regular one. The same goes for anything under /dev
  // and /proc: /dev/stdout redirected to a file resolves to that file,
  // which the shell holds open.
  if ((Exists && !S_ISREG(St.st_mode)) || Path.starts_with("/dev/") ||
      Path.starts_with("/proc/")) {
    Plan.InPlace = true;
    Plan.Target = Path.str();
    return Plan;
  }
  auto Target = resolveLinks(Path);
  if (!Target)
    return Target.takeError();
  Plan.Target = std::move(*Target);
  if (Exists) {
    // Refused even where we could replace it (as root, or as the owner of
    // the directory): a file without write permission says "do not change".
    if (!(St.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) ||
        ::access(Plan.Target.c_str(), W_OK) != 0) {
      std::string Via = Plan.Target == Path
                            ? std::string()
                            : " (a link to '" + Plan.Target + "')";
      return createStringError(
          std::make_error_code(std::errc::permission_denied),
          "cannot write '%s'%s: it is read-only; it is left unchanged",
          Path.str().c_str(), Via.c_str());
    }
    Plan.Existing = St;
  }
  return Plan;
}

static Error writeInPlace(StringRef Path, StringRef Contents) {
  std::error_code EC;
  raw_fd_ostream OS(Path, EC, sys::fs::OF_None);
  if (EC)
    return createStringError(EC, "cannot write '%s': %s", Path.str().c_str(),
                             EC.message().c_str());
  OS << Contents;
  OS.flush();
  if (OS.has_error()) {
    EC = OS.error();
    OS.clear_error();
    return createStringError(EC, "cannot write '%s': %s", Path.str().c_str(),
                             EC.message().c_str());
  }
  return Error::success();
}

static std::error_code writeAll(int FD, StringRef Data) {
  const char *P = Data.data();
  size_t Left = Data.size();
  while (Left) {
    ssize_t N = ::write(FD, P, Left);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return lastError();
    P += N;
    Left -= size_t(N);
  }
  return {};
}

/// Makes a rename in \p Dir durable. Best effort: some file systems refuse
/// to sync a directory, and the new file is in place either way.
static void syncDirectory(StringRef Dir) {
  SmallString<256> D(Dir.empty() ? StringRef(".") : Dir);
  int FD = ::open(D.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (FD < 0)
    return;
  (void)::fsync(FD);
  ::close(FD);
}

Error writeFileAtomically(StringRef Path, StringRef Contents) {
  auto Plan = planWrite(Path);
  if (!Plan)
    return Plan.takeError();
  if (Plan->InPlace)
    return writeInPlace(Path, Contents);

  StringRef Target = Plan->Target;
  int FD = -1;
  SmallString<256> Temp;
  if (std::error_code EC =
          sys::fs::createUniqueFile(Target + ".tmp-%%%%%%", FD, Temp)) {
    StringRef Dir = sys::path::parent_path(Target);
    return createStringError(EC,
                             "cannot write '%s': cannot create a file in "
                             "'%s': %s",
                             Path.str().c_str(),
                             Dir.empty() ? "." : Dir.str().c_str(),
                             EC.message().c_str());
  }
  // Removed on a fatal signal too (Ctrl-C mid-write leaves nothing).
  sys::RemoveFileOnSignal(Temp);
  auto Fail = [&](std::error_code EC, StringRef What) -> Error {
    if (FD >= 0)
      ::close(FD);
    (void)sys::fs::remove(Temp);
    sys::DontRemoveFileOnSignal(Temp);
    return createStringError(EC, "cannot write '%s': %s: %s",
                             Path.str().c_str(), What.str().c_str(),
                             EC.message().c_str());
  };
  if (std::error_code EC = writeAll(FD, Contents))
    return Fail(EC, "write failed");
  if (Plan->Existing) {
    const struct stat &St = *Plan->Existing;
    if (::fchmod(FD, St.st_mode & 07777) != 0)
      return Fail(lastError(), "cannot keep its permissions");
    // Keeps the owner where allowed (as root); otherwise the file is ours,
    // as after any editor's save.
    if (St.st_uid != ::geteuid() || St.st_gid != ::getegid())
      (void)!::fchown(FD, St.st_uid, St.st_gid);
  }
  // The data must be on disk before the rename makes it the file: after a
  // crash the name holds either the old text or the new, never an empty or
  // partial file.
  if (::fsync(FD) != 0)
    return Fail(lastError(), "cannot sync it to disk");
  int Closed = ::close(FD);
  FD = -1;
  if (Closed != 0)
    return Fail(lastError(), "write failed");
  if (::rename(Temp.c_str(), Plan->Target.c_str()) != 0)
    return Fail(lastError(), "cannot replace it");
  sys::DontRemoveFileOnSignal(Temp);
  syncDirectory(sys::path::parent_path(Target));
  return Error::success();
}

Error checkOutputFile(StringRef Path) {
  auto Plan = planWrite(Path);
  if (!Plan)
    return Plan.takeError();
  if (Plan->InPlace)
    return Error::success();
  SmallString<256> Dir(sys::path::parent_path(Plan->Target));
  if (Dir.empty())
    Dir = ".";
  // A directory that does not exist yet may be made before the write (the
  // run directory, say); the write itself reports it if not.
  if (::access(Dir.c_str(), W_OK | X_OK) != 0 && errno != ENOENT)
    return createStringError(lastError(),
                             "cannot write '%s': cannot create a file in "
                             "'%s': %s",
                             Path.str().c_str(), Dir.c_str(), strerror(errno));
  return Error::success();
}

Expected<std::string> readFile(StringRef Path) {
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf)
    return createStringError(Buf.getError(), "cannot read '%s': %s",
                             Path.str().c_str(),
                             Buf.getError().message().c_str());
  return (*Buf)->getBuffer().str();
}

/// "pid 4242 on host gpu7, started 2026-12-01T23:45:00Z" from the lines a
/// holder wrote ("pid 4242", "host gpu7", "started ...").
static std::string describeHolder(StringRef Record) {
  StringRef Pid, Host, Started;
  SmallVector<StringRef, 4> Lines;
  Record.split(Lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef L : Lines) {
    auto [Key, Value] = L.split(' ');
    if (Key == "pid")
      Pid = Value.trim();
    else if (Key == "host")
      Host = Value.trim();
    else if (Key == "started")
      Started = Value.trim();
  }
  if (Pid.empty())
    return "a process that has not recorded its name yet";
  std::string S = ("pid " + Pid).str();
  if (!Host.empty())
    S += (" on host " + Host).str();
  if (!Started.empty())
    S += (", started " + Started).str();
  return S;
}

static std::string holderRecord() {
  char Host[256] = "unknown";
  if (::gethostname(Host, sizeof(Host) - 1) != 0)
    std::strcpy(Host, "unknown");
  Host[sizeof(Host) - 1] = 0;
  std::time_t Now = std::time(nullptr);
  struct tm UTC;
  char Stamp[32] = "";
  if (::gmtime_r(&Now, &UTC))
    std::strftime(Stamp, sizeof(Stamp), "%Y-%m-%dT%H:%M:%SZ", &UTC);
  return formatv("pid {0}\nhost {1}\nstarted {2}\n", ::getpid(), Host, Stamp)
      .str();
}

Expected<std::optional<FileLock>> FileLock::tryAcquire(StringRef Path,
                                                       std::string *Holder) {
  SmallString<256> P(Path);
  int FD = ::open(P.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (FD < 0)
    return createStringError(lastError(), "cannot open lock file '%s': %s",
                             P.c_str(), strerror(errno));
  while (::flock(FD, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR)
      continue;
    if (errno != EWOULDBLOCK) {
      std::error_code EC = lastError();
      ::close(FD);
      return createStringError(EC, "cannot lock '%s': %s", P.c_str(),
                               EC.message().c_str());
    }
    if (Holder) {
      char Buf[512];
      ssize_t N = ::pread(FD, Buf, sizeof(Buf), 0);
      *Holder = describeHolder(StringRef(Buf, N > 0 ? size_t(N) : 0));
    }
    ::close(FD);
    return std::nullopt;
  }
  // Who holds it, for the message another process shows; best effort, the
  // lock itself is what counts.
  std::string Rec = holderRecord();
  if (::ftruncate(FD, 0) == 0)
    (void)!::pwrite(FD, Rec.data(), Rec.size(), 0);
  return std::optional<FileLock>(FileLock(FD));
}

FileLock &FileLock::operator=(FileLock &&Other) {
  if (this != &Other) {
    release();
    FD = Other.FD;
    Other.FD = -1;
  }
  return *this;
}

FileLock::~FileLock() { release(); }

void FileLock::release() {
  if (FD < 0)
    return;
  // No stale name for whoever reads the file next.
  (void)!::ftruncate(FD, 0);
  ::close(FD); // releases the lock
  FD = -1;
}

std::string userCacheDirectory(StringRef Name) {
  SmallString<256> P;
  if (auto X = sys::Process::GetEnv("XDG_CACHE_HOME"); X && !X->empty())
    P = *X;
  else if (!sys::path::cache_directory(P))
    sys::path::system_temp_directory(/*ErasedOnReboot=*/true, P);
  sys::path::append(P, "clang-optiml", Name);
  return std::string(P);
}

} // namespace optiml
