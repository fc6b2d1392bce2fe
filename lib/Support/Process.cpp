//===- Process.cpp - Run a child process under limits ---------------------===//
//
// The one place that forks and execs (POSIX). The child is prepared entirely
// before fork() (argv, envp, paths), so that between fork and exec it calls
// only async-signal-safe functions: runProcess may be called from several
// threads at once (parallel builds).
//
//===----------------------------------------------------------------------===//

#include "optiml/Support/Process.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace llvm;

namespace optiml {

std::vector<std::string>
childEnvironment(const std::map<std::string, std::string> &Set,
                 ArrayRef<std::string> Unset) {
  // An allow-list: a variable nobody thought of (a key under a name of the
  // user's choosing) stays out.
  std::vector<std::string> Env;
  for (char **E = environ; E && *E; ++E) {
    StringRef Entry(*E);
    if (!Entry.contains('='))
      continue; // a slot scrubEnvironmentAtStartup wiped
    StringRef Name = Entry.split('=').first;
    if (!isChildEnvAllowed(Name) || Set.count(Name.str()) ||
        llvm::is_contained(Unset, Name))
      continue;
    Env.push_back(Entry.str());
  }
  for (const auto &[Name, Value] : Set)
    if (!isSecretEnvName(Name) && !isCapturedSecretName(Name))
      Env.push_back(Name + "=" + Value);
  return Env;
}

std::string findProgram(StringRef Name, ArrayRef<std::string> ExtraDirs) {
  if (Name.contains('/'))
    return sys::fs::can_execute(Name) ? Name.str() : std::string();
  SmallVector<StringRef, 4> Dirs(ExtraDirs.begin(), ExtraDirs.end());
  if (!Dirs.empty())
    if (auto P = sys::findProgramByName(Name, Dirs))
      return *P;
  if (auto P = sys::findProgramByName(Name))
    return *P;
  return "";
}

std::string lastLines(StringRef Text, unsigned MaxLines) {
  SmallVector<StringRef, 64> Lines;
  Text.split(Lines, '\n', -1, /*KeepEmpty=*/false);
  SmallVector<StringRef, 16> Kept;
  for (auto It = Lines.rbegin(); It != Lines.rend() && Kept.size() < MaxLines;
       ++It)
    if (!It->trim().empty())
      Kept.push_back(It->rtrim());
  std::string Out;
  for (auto It = Kept.rbegin(); It != Kept.rend(); ++It) {
    Out += It->str();
    Out += '\n';
  }
  return Out;
}

static const char *signalName(int Sig) {
  switch (Sig) {
  case SIGSEGV:
    return "SIGSEGV";
  case SIGABRT:
    return "SIGABRT";
  case SIGKILL:
    return "SIGKILL";
  case SIGBUS:
    return "SIGBUS";
  case SIGFPE:
    return "SIGFPE";
  case SIGILL:
    return "SIGILL";
  case SIGTERM:
    return "SIGTERM";
  case SIGINT:
    return "SIGINT";
  case SIGPIPE:
    return "SIGPIPE";
  case SIGTRAP:
    return "SIGTRAP";
  default:
    return nullptr;
  }
}

std::string ProcessResult::describe() const {
  std::string S;
  raw_string_ostream OS(S);
  if (TimedOut) {
    OS << "timed out after " << format("%.1f", WallSeconds)
       << " s (process group killed)";
  } else if (Signal) {
    OS << "killed by signal " << Signal;
    if (const char *N = signalName(Signal))
      OS << " (" << N << ")";
  } else if (ExitCode) {
    OS << "exited with status " << *ExitCode;
  } else {
    OS << "ended in an unknown way";
  }
  return S;
}

namespace {

/// Keeps the tail of a stream and hashes all of it.
struct StreamSink {
  explicit StreamSink(size_t Limit) : Limit(Limit) {}
  size_t Limit;
  std::string Tail;
  uint64_t Total = 0;
  SHA256 Hash;
  bool Hashing = false;

  void append(const char *Data, size_t N) {
    Total += N;
    if (Hashing)
      Hash.update(
          ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(Data), N));
    if (Limit == 0)
      return;
    Tail.append(Data, N);
    if (Tail.size() > 2 * Limit)
      Tail.erase(0, Tail.size() - Limit);
  }
  void finish() {
    if (Tail.size() > Limit)
      Tail.erase(0, Tail.size() - Limit);
  }
};

struct FdCloser {
  explicit FdCloser(int &FD) : FD(FD) {}
  int &FD;
  ~FdCloser() {
    if (FD >= 0)
      ::close(FD);
    FD = -1;
  }
};

} // namespace

/// The forked child: stdin from /dev/null (or closed), stdout and stderr into
/// the pipes, its own process group, then exec. On failure errno goes down
/// \p ExecFD. Async-signal-safe calls only.
[[noreturn]] static void execChild(int DevNull, int OutFD, int ErrFD,
                                   int ExecFD, const char *WorkDir,
                                   const char *Program, char *const *Argv,
                                   char *const *Envp) {
  ::setpgid(0, 0);
  if (DevNull >= 0)
    ::dup2(DevNull, 0);
  else
    ::close(0);
  ::dup2(OutFD, 1);
  ::dup2(ErrFD, 2);
  // Default signal dispositions for the program.
  ::signal(SIGPIPE, SIG_DFL);
  // Run as root, the child could still read this process's memory (the
  // keys) through /proc/<ppid>/mem: non-dumpable only stops those
  // without CAP_SYS_PTRACE. Fails harmlessly without CAP_SETPCAP.
  ::prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0);
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_SYS_PTRACE, 0, 0);
  int Err = 0;
  if (::chdir(WorkDir) != 0)
    Err = errno;
  else {
    ::execve(Program, Argv, Envp);
    Err = errno;
  }
  ssize_t Ignored = ::write(ExecFD, &Err, sizeof(Err));
  (void)Ignored;
  ::_exit(127);
}

Expected<ProcessResult> runProcess(const ProcessOptions &Opts) {
  if (Opts.Args.empty())
    return createStringError(inconvertibleErrorCode(),
                             "no program to run was given");
  std::string Program = findProgram(Opts.Args[0]);
  if (Program.empty())
    return createStringError(inconvertibleErrorCode(),
                             "cannot run '%s': not found or not executable",
                             Opts.Args[0].c_str());

  ProcessResult R;
  std::string WorkDir = Opts.WorkDir;
  bool OwnTemp = false;
  std::map<std::string, std::string> Set = Opts.Env;
  if (WorkDir.empty()) {
    SmallString<128> Dir;
    if (std::error_code EC = sys::fs::createUniqueDirectory("optiml-run", Dir))
      return createStringError(EC, "cannot create a temporary directory: %s",
                               EC.message().c_str());
    WorkDir = std::string(Dir);
    OwnTemp = true;
    Set["TMPDIR"] = WorkDir;
  }
  auto RemoveTemp = [&] {
    if (OwnTemp && !Opts.KeepTempDir)
      (void)sys::fs::remove_directories(WorkDir, /*IgnoreErrors=*/true);
  };

  // Everything the child needs, built before fork().
  std::vector<std::string> EnvStrings = childEnvironment(Set, Opts.UnsetEnv);
  std::vector<char *> Argv, Envp;
  for (const std::string &A : Opts.Args)
    Argv.push_back(const_cast<char *>(A.c_str()));
  Argv.push_back(nullptr);
  for (std::string &E : EnvStrings)
    Envp.push_back(E.data());
  Envp.push_back(nullptr);

  int OutPipe[2] = {-1, -1}, ErrPipe[2] = {-1, -1}, ExecPipe[2] = {-1, -1};
  if (::pipe2(OutPipe, O_CLOEXEC) || ::pipe2(ErrPipe, O_CLOEXEC) ||
      ::pipe2(ExecPipe, O_CLOEXEC)) {
    int E = errno;
    for (int FD : {OutPipe[0], OutPipe[1], ErrPipe[0], ErrPipe[1], ExecPipe[0],
                   ExecPipe[1]})
      if (FD >= 0)
        ::close(FD);
    RemoveTemp();
    return createStringError(std::error_code(E, std::generic_category()),
                             "cannot create pipes: %s", std::strerror(E));
  }
  int DevNull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);

  auto Start = std::chrono::steady_clock::now();
  pid_t Pid = ::fork();
  if (Pid == 0)
    execChild(DevNull, OutPipe[1], ErrPipe[1], ExecPipe[1], WorkDir.c_str(),
              Program.c_str(), Argv.data(), Envp.data());
  int ForkErr = errno;
  ::close(OutPipe[1]);
  ::close(ErrPipe[1]);
  ::close(ExecPipe[1]);
  if (DevNull >= 0)
    ::close(DevNull);
  int OutFD = OutPipe[0], ErrFD = ErrPipe[0], ExecFD = ExecPipe[0];
  FdCloser C1(OutFD), C2(ErrFD), C3(ExecFD);
  if (Pid < 0) {
    RemoveTemp();
    return createStringError(std::error_code(ForkErr, std::generic_category()),
                             "cannot start '%s': %s", Program.c_str(),
                             std::strerror(ForkErr));
  }
  ::setpgid(Pid, Pid); // also in the parent: no race with an early kill

  // Did exec succeed? The pipe closes on exec (EOF) or carries errno.
  int ExecErr = 0;
  ssize_t N;
  do
    N = ::read(ExecFD, &ExecErr, sizeof(ExecErr));
  while (N < 0 && errno == EINTR);
  if (N == sizeof(ExecErr)) {
    int St;
    while (::waitpid(Pid, &St, 0) < 0 && errno == EINTR)
      ;
    RemoveTemp();
    return createStringError(std::error_code(ExecErr, std::generic_category()),
                             "cannot run '%s' in '%s': %s", Program.c_str(),
                             WorkDir.c_str(), std::strerror(ExecErr));
  }

  StreamSink Out(Opts.OutputLimit), Err(Opts.OutputLimit);
  Out.Hashing = true;
  using Clock = std::chrono::steady_clock;
  auto Deadline =
      Opts.TimeoutSeconds > 0
          ? Start + std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(Opts.TimeoutSeconds))
          : Clock::time_point::max();
  bool Reaped = false;
  int Status = 0;
  Clock::time_point DrainDeadline = Clock::time_point::max();
  char Buf[65536];
  while (true) {
    if (!Reaped) {
      pid_t W = ::waitpid(Pid, &Status, WNOHANG);
      if (W == Pid) {
        Reaped = true;
        R.WallSeconds =
            std::chrono::duration<double>(Clock::now() - Start).count();
        // Leftovers of the group (background children) go with it; give the
        // pipes a moment to drain.
        ::kill(-Pid, SIGKILL);
        DrainDeadline = Clock::now() + std::chrono::seconds(2);
      }
    }
    if (Reaped && OutFD < 0 && ErrFD < 0)
      break;
    auto Now = Clock::now();
    if (!Reaped && !R.TimedOut && Now >= Deadline) {
      R.TimedOut = true;
      ::kill(-Pid, SIGKILL);
    }
    if (Reaped && Now >= DrainDeadline)
      break;

    struct pollfd P[2];
    int NP = 0;
    if (OutFD >= 0)
      P[NP++] = {OutFD, POLLIN, 0};
    if (ErrFD >= 0)
      P[NP++] = {ErrFD, POLLIN, 0};
    if (NP == 0) {
      ::usleep(2000);
      continue;
    }
    int Rc = ::poll(P, NP, 20);
    if (Rc <= 0)
      continue;
    for (int I = 0; I < NP; ++I) {
      if (!(P[I].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      ssize_t Got = ::read(P[I].fd, Buf, sizeof(Buf));
      if (Got < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      StreamSink &S = P[I].fd == OutFD ? Out : Err;
      if (Got <= 0) {
        int &FD = P[I].fd == OutFD ? OutFD : ErrFD;
        ::close(FD);
        FD = -1;
        continue;
      }
      S.append(Buf, static_cast<size_t>(Got));
    }
  }
  if (!Reaped) {
    while (::waitpid(Pid, &Status, 0) < 0 && errno == EINTR)
      ;
    R.WallSeconds = std::chrono::duration<double>(Clock::now() - Start).count();
  }

  if (WIFEXITED(Status) && !R.TimedOut)
    R.ExitCode = WEXITSTATUS(Status);
  else if (WIFSIGNALED(Status) && !R.TimedOut)
    R.Signal = WTERMSIG(Status);
  Out.finish();
  Err.finish();
  R.Stdout = std::move(Out.Tail);
  R.Stderr = std::move(Err.Tail);
  R.StdoutBytes = Out.Total;
  R.StderrBytes = Err.Total;
  auto Digest = Out.Hash.final();
  R.StdoutHash = toHex(ArrayRef<uint8_t>(Digest.data(), Digest.size()),
                       /*LowerCase=*/true);
  if (OwnTemp && Opts.KeepTempDir)
    R.TempDir = WorkDir;
  RemoveTemp();
  return R;
}

} // namespace optiml
