//===- DbTestUtil.h - Helpers of the database tests -------------*- C++ -*-===//
#ifndef OPTIML_UNITTESTS_DB_DBTESTUTIL_H
#define OPTIML_UNITTESTS_DB_DBTESTUTIL_H

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

namespace optiml {
namespace db {

class TempDir {
public:
  TempDir() { llvm::sys::fs::createUniqueDirectory("optiml-dbtest", Path); }
  ~TempDir() { llvm::sys::fs::remove_directories(Path); }
  std::string path(const llvm::Twine &Name) const {
    llvm::SmallString<256> P(Path);
    llvm::sys::path::append(P, Name);
    return std::string(P);
  }

private:
  llvm::SmallString<256> Path;
};

inline void writeText(const std::string &Path, llvm::StringRef Text) {
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC);
  OS << Text;
}

} // namespace db
} // namespace optiml

#endif
