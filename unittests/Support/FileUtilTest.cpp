#include "optiml/Support/FileUtil.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <csignal>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace llvm;
using namespace optiml;

namespace {

class TempDir {
public:
  TempDir() { sys::fs::createUniqueDirectory("optiml-test", Path); }
  ~TempDir() { sys::fs::remove_directories(Path); }
  std::string file(StringRef Name) const {
    SmallString<128> P(Path);
    sys::path::append(P, Name);
    return std::string(P);
  }
  SmallString<128> Path;
};

TEST(FileUtilTest, WritesAndReadsBack) {
  TempDir D;
  std::string F = D.file("a.cu");
  ASSERT_FALSE(errorToBool(writeFileAtomically(F, "first")));
  ASSERT_FALSE(errorToBool(writeFileAtomically(F, "second")));
  auto Text = readFile(F);
  ASSERT_TRUE(bool(Text));
  EXPECT_EQ(*Text, "second");
}

TEST(FileUtilTest, KeepsPermissions) {
  TempDir D;
  std::string F = D.file("a.cu");
  ASSERT_FALSE(errorToBool(writeFileAtomically(F, "x")));
  sys::fs::setPermissions(F, sys::fs::perms(0640));
  ASSERT_FALSE(errorToBool(writeFileAtomically(F, "y")));
  sys::fs::file_status St;
  ASSERT_FALSE(sys::fs::status(F, St));
  EXPECT_EQ(St.permissions(), sys::fs::perms(0640));
}

TEST(FileUtilTest, FailureLeavesNoTrace) {
  TempDir D;
  std::string Missing = D.file("no/such/dir/a.cu");
  Error E = writeFileAtomically(Missing, "x");
  ASSERT_TRUE(errorToBool(std::move(E)));
  EXPECT_FALSE(sys::fs::exists(Missing));
  std::error_code EC;
  unsigned Entries = 0;
  for (sys::fs::directory_iterator It(D.Path, EC), End; It != End && !EC;
       It.increment(EC))
    ++Entries;
  EXPECT_EQ(Entries, 0u);
}

// A special file is written in place, not replaced by a regular file (as
// root, a rename over /dev/null would succeed and break the machine). A FIFO
// stands in for the device: it is still a FIFO afterwards and its reader
// received the text.
TEST(FileUtilTest, SpecialFileIsWrittenInPlace) {
  TempDir D;
  std::string F = D.file("pipe");
  ASSERT_EQ(::mkfifo(F.c_str(), 0600), 0);
  std::string Got;
  // Non-blocking, with a deadline: if the FIFO were replaced, the reader
  // must not wait forever for a writer.
  std::thread Reader([&] {
    int FD = ::open(F.c_str(), O_RDONLY | O_NONBLOCK);
    if (FD < 0)
      return;
    char Buf[64];
    for (int Tries = 0; Tries < 500; ++Tries) {
      ssize_t N = ::read(FD, Buf, sizeof(Buf));
      if (N > 0) {
        Got.append(Buf, size_t(N));
        continue;
      }
      if (N == 0 && !Got.empty())
        break; // the writer closed after writing
      ::usleep(10000);
    }
    ::close(FD);
  });
  Error E = writeFileAtomically(F, "through the pipe");
  Reader.join();
  ASSERT_FALSE(errorToBool(std::move(E)));
  EXPECT_EQ(Got, "through the pipe");
  sys::fs::file_status St;
  ASSERT_FALSE(sys::fs::status(F, St));
  EXPECT_EQ(St.type(), sys::fs::file_type::fifo_file);
}

TEST(FileUtilTest, DirectoryIsAnError) {
  TempDir D;
  Error E = writeFileAtomically(D.Path, "x");
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("is a directory"), std::string::npos);
  EXPECT_TRUE(sys::fs::is_directory(D.Path));
}

unsigned entries(StringRef Dir) {
  std::error_code EC;
  unsigned N = 0;
  for (sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    ++N;
  return N;
}

bool isSymlink(StringRef Path) {
  sys::fs::file_status St;
  return !sys::fs::status(Path, St, /*Follow=*/false) &&
         St.type() == sys::fs::file_type::symlink_file;
}

std::string text(StringRef Path) {
  auto T = readFile(Path);
  if (!T) {
    consumeError(T.takeError());
    return "<unreadable>";
  }
  return *T;
}

// -o or -i onto a link writes the file it points to; the link stays a link
// (a rename over the link's own name replaced it by a plain file).
TEST(FileUtilTest, SymlinkIsWrittenThrough) {
  TempDir D;
  ASSERT_FALSE(sys::fs::create_directory(D.file("real")));
  std::string Target = D.file("real/a.cu"), Link = D.file("link.cu");
  ASSERT_FALSE(errorToBool(writeFileAtomically(Target, "old")));
  ASSERT_FALSE(sys::fs::create_link("real/a.cu", Link)); // relative
  ASSERT_FALSE(errorToBool(writeFileAtomically(Link, "new")));
  EXPECT_TRUE(isSymlink(Link));
  EXPECT_EQ(text(Target), "new");
  EXPECT_EQ(entries(D.file("real")), 1u) << "a temporary was left";
  EXPECT_EQ(entries(D.Path), 2u);
}

TEST(FileUtilTest, SymlinkChainAndDanglingLink) {
  TempDir D;
  std::string Target = D.file("t.cu"), L1 = D.file("l1"), L2 = D.file("l2");
  ASSERT_FALSE(sys::fs::create_link(Target, L1)); // absolute, dangling
  ASSERT_FALSE(sys::fs::create_link("l1", L2));
  ASSERT_FALSE(errorToBool(writeFileAtomically(L2, "made")));
  EXPECT_TRUE(isSymlink(L1));
  EXPECT_TRUE(isSymlink(L2));
  EXPECT_EQ(text(Target), "made");
  // A loop is an error, not a hang.
  std::string A = D.file("loopa"), B = D.file("loopb");
  ASSERT_FALSE(sys::fs::create_link("loopb", A));
  ASSERT_FALSE(sys::fs::create_link("loopa", B));
  Error E = writeFileAtomically(A, "x");
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("symbolic links"), std::string::npos);
}

// A write that fails midway (here: the file size limit, as a full disk
// would) leaves the old file as it was and no temporary beside it.
TEST(FileUtilTest, FailedWriteLeavesOldFileAndNoTemporary) {
  TempDir D;
  std::string F = D.file("a.cu");
  ASSERT_FALSE(errorToBool(writeFileAtomically(F, "old")));
  pid_t Pid = ::fork();
  ASSERT_GE(Pid, 0);
  if (Pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit Lim = {16, 16};
    ::setrlimit(RLIMIT_FSIZE, &Lim);
    Error E = writeFileAtomically(F, std::string(4096, 'x'));
    bool Failed = bool(E);
    consumeError(std::move(E));
    ::_exit(Failed ? 0 : 1);
  }
  int Status = 0;
  ASSERT_EQ(::waitpid(Pid, &Status, 0), Pid);
  ASSERT_TRUE(WIFEXITED(Status));
  EXPECT_EQ(WEXITSTATUS(Status), 0) << "the oversized write succeeded";
  EXPECT_EQ(text(F), "old");
  EXPECT_EQ(entries(D.Path), 1u) << "a temporary was left";
}

// A file without write permission is refused, even where the directory
// would allow replacing it (and even as root).
TEST(FileUtilTest, ReadOnlyFileIsRefused) {
  TempDir D;
  std::string F = D.file("a.cu"), Link = D.file("l.cu");
  ASSERT_FALSE(errorToBool(writeFileAtomically(F, "keep me")));
  ASSERT_FALSE(sys::fs::setPermissions(F, sys::fs::perms(0444)));
  Error E = writeFileAtomically(F, "x");
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("it is read-only"), std::string::npos);
  EXPECT_EQ(text(F), "keep me");
  ASSERT_FALSE(sys::fs::create_link("a.cu", Link));
  E = writeFileAtomically(Link, "x");
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("(a link to '"), std::string::npos);
  EXPECT_EQ(text(F), "keep me");
  EXPECT_EQ(entries(D.Path), 2u);
  E = checkOutputFile(F);
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("read-only"), std::string::npos);
}

TEST(FileUtilTest, CheckOutputFile) {
  TempDir D;
  EXPECT_FALSE(errorToBool(checkOutputFile(D.file("new.cu"))));
  EXPECT_FALSE(sys::fs::exists(D.file("new.cu")));
  EXPECT_TRUE(errorToBool(checkOutputFile(D.Path)));
  // Made later, perhaps: the write itself says if not.
  EXPECT_FALSE(errorToBool(checkOutputFile(D.file("no/such/dir/a.cu"))));
  EXPECT_FALSE(errorToBool(checkOutputFile("/dev/null")));
}

// /dev/stdout redirected to a file resolves to that file through /proc; the
// file the shell holds open is written, not replaced by another.
TEST(FileUtilTest, ProcFdIsWrittenInPlace) {
  TempDir D;
  std::string F = D.file("out.txt");
  int FD = ::open(F.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(FD, 0);
  sys::fs::UniqueID Before, After;
  ASSERT_FALSE(sys::fs::getUniqueID(F, Before));
  std::string Proc = "/proc/self/fd/" + std::to_string(FD);
  ASSERT_FALSE(errorToBool(writeFileAtomically(Proc, "via the fd")));
  ASSERT_FALSE(sys::fs::getUniqueID(F, After));
  EXPECT_EQ(Before, After);
  EXPECT_EQ(text(F), "via the fd");
  ::close(FD);
}

// The lock: one holder at a time; the other is told who holds it.
TEST(FileLockTest, SecondAttemptFailsAndNamesTheHolder) {
  TempDir D;
  std::string P = D.file("lock");
  auto First = FileLock::tryAcquire(P);
  ASSERT_TRUE(bool(First));
  ASSERT_TRUE(First->has_value());
  std::string Holder;
  auto Second = FileLock::tryAcquire(P, &Holder);
  ASSERT_TRUE(bool(Second));
  EXPECT_FALSE(Second->has_value());
  EXPECT_EQ(Holder.find("pid " + std::to_string(::getpid()) + " on host "), 0u)
      << Holder;
  EXPECT_NE(Holder.find(", started 20"), std::string::npos) << Holder;
  *First = std::nullopt; // released
  auto Third = FileLock::tryAcquire(P);
  ASSERT_TRUE(bool(Third));
  EXPECT_TRUE(Third->has_value());
}

// A holder killed with SIGKILL leaves its lock file behind, which must not
// block anyone: the kernel drops the lock with the process.
TEST(FileLockTest, KilledHolderDoesNotBlock) {
  TempDir D;
  std::string P = D.file("lock");
  int Pipe[2];
  ASSERT_EQ(::pipe(Pipe), 0);
  pid_t Pid = ::fork();
  ASSERT_GE(Pid, 0);
  if (Pid == 0) {
    auto L = FileLock::tryAcquire(P);
    char C = L && *L ? 'y' : 'n';
    (void)!::write(Pipe[1], &C, 1);
    for (;;)
      ::pause();
  }
  char C = 0;
  ASSERT_EQ(::read(Pipe[0], &C, 1), 1);
  ASSERT_EQ(C, 'y');
  std::string Holder;
  auto While = FileLock::tryAcquire(P, &Holder);
  ASSERT_TRUE(bool(While));
  EXPECT_FALSE(While->has_value());
  EXPECT_EQ(Holder.find("pid " + std::to_string(Pid) + " "), 0u) << Holder;
  ASSERT_EQ(::kill(Pid, SIGKILL), 0);
  int Status = 0;
  ASSERT_EQ(::waitpid(Pid, &Status, 0), Pid);
  EXPECT_TRUE(sys::fs::exists(P));
  auto After = FileLock::tryAcquire(P);
  ASSERT_TRUE(bool(After));
  EXPECT_TRUE(After->has_value());
  ::close(Pipe[0]);
  ::close(Pipe[1]);
}

TEST(FileUtilTest, ReadMissingNamesFile) {
  auto Text = readFile("/nonexistent/optiml.cu");
  ASSERT_FALSE(bool(Text));
  EXPECT_NE(toString(Text.takeError()).find("/nonexistent/optiml.cu"),
            std::string::npos);
}

} // namespace
