#include "optiml/Support/FileUtil.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <fcntl.h>
#include <sys/stat.h>
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

TEST(FileUtilTest, ReadMissingNamesFile) {
  auto Text = readFile("/nonexistent/optiml.cu");
  ASSERT_FALSE(bool(Text));
  EXPECT_NE(toString(Text.takeError()).find("/nonexistent/optiml.cu"),
            std::string::npos);
}

} // namespace
