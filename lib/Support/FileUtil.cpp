//===- FileUtil.cpp -------------------------------------------------------===//

#include "optiml/Support/FileUtil.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace optiml {

Error writeFileAtomically(StringRef Path, StringRef Contents) {
  // A device, a FIFO or a socket (`-o /dev/null`, `-o /dev/stdout`) is
  // written in place: renaming a temporary over it would replace the
  // special file with a regular one.
  sys::fs::file_status Existing;
  if (!sys::fs::status(Path, Existing) &&
      sys::fs::exists(Existing) && !sys::fs::is_regular_file(Existing)) {
    if (sys::fs::is_directory(Existing))
      return createStringError(std::make_error_code(std::errc::is_a_directory),
                               "cannot write '%s': it is a directory",
                               Path.str().c_str());
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
  SmallString<256> Model(Path);
  Model += ".tmp-%%%%%%";
  int FD = -1;
  SmallString<256> Temp;
  if (std::error_code EC = sys::fs::createUniqueFile(Model, FD, Temp))
    return createStringError(EC, "cannot write next to '%s': %s",
                             Path.str().c_str(), EC.message().c_str());
  {
    raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Contents;
    OS.flush();
    if (OS.has_error()) {
      std::error_code EC = OS.error();
      OS.clear_error();
      sys::fs::remove(Temp);
      return createStringError(EC, "cannot write '%s': %s", Temp.c_str(),
                               EC.message().c_str());
    }
  }
  sys::fs::file_status St;
  if (!sys::fs::status(Path, St))
    sys::fs::setPermissions(Temp, St.permissions());
  if (std::error_code EC = sys::fs::rename(Temp, Path)) {
    sys::fs::remove(Temp);
    return createStringError(EC, "cannot replace '%s': %s", Path.str().c_str(),
                             EC.message().c_str());
  }
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

} // namespace optiml
