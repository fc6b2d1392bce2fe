#include "optiml/Support/FileUtil.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

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

TEST(FileUtilTest, ReadMissingNamesFile) {
  auto Text = readFile("/nonexistent/optiml.cu");
  ASSERT_FALSE(bool(Text));
  EXPECT_NE(toString(Text.takeError()).find("/nonexistent/optiml.cu"),
            std::string::npos);
}

} // namespace
