//===- Preamble.h - Reuse the parse of a file's leading #includes -*- C++
//-*-===//
//
// Most of a CUDA parse is the headers: the CUDA runtime, clang's wrappers and
// the file's own #includes (a ~1 s parse of a 60-line kernel file). Edits
// never touch them, so the checks of an edit parse the same headers again and
// again. A preamble is that leading part of the file (everything before the
// first declaration) compiled once into a precompiled header that later
// parses load instead of reading the headers, as clangd does.
//
// Preambles are kept in the process and on disk (under the user's cache
// directory), keyed by everything that decides how the preamble compiles:
// clang's version, the command line, the preamble's text and the implicit
// header. One read from disk is used only when every file the preamble read
// has the size and modification time it had when it was built, and the
// precompiled header the checksum written with it. A preamble whose build
// produced any diagnostic is never used: the whole file is parsed, so every
// diagnostic is reported as before.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_FRONTEND_PREAMBLE_H
#define OPTIML_FRONTEND_PREAMBLE_H

#include "optiml/Frontend/Parse.h"
#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class CompilerInvocation;
class DiagnosticsEngine;
} // namespace clang
namespace llvm::vfs {
class FileSystem;
class InMemoryFileSystem;
class OverlayFileSystem;
} // namespace llvm::vfs

namespace optiml {

/// A precompiled preamble: the header's bytes and where the preamble ends.
struct PreambleData {
  std::unique_ptr<llvm::MemoryBuffer> PCH;
  unsigned Size = 0; ///< bytes of the main file the preamble covers
  bool EndsAtStartOfLine = false;
  /// Whether it may hold the user's code (a project header, a declaration
  /// in the main file): false when every declaration it holds is in a
  /// system header.
  bool UserCode = true;
  std::string Key; ///< hex; also the name it is stored under
};

/// A parse's compiler invocation, from its command line (parseArguments),
/// over the real file system with the implicit header in memory.
struct PreparedInvocation {
  std::vector<std::string> Args;
  std::shared_ptr<clang::CompilerInvocation> CI;
  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> Memory;
  llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> VFS;
};

/// The invocation that parses \p MainName under \p Config; nullopt when the
/// driver finds an error in the command line (a whole parse reports it).
std::optional<PreparedInvocation> prepareInvocation(llvm::StringRef MainName,
                                                    const ParseConfig &Config,
                                                    CudaSide Side);

/// Where a lookup found its preamble.
enum class PreambleOrigin { None, Built, Memory, Disk };

/// The preamble for parsing \p Text as the main file of \p Invocation (whose
/// command line is \p Args), built or found; null when none can be used
/// (no preamble in the file, a diagnostic while building it, a build
/// failure). \p VFS must hold the in-memory files the parse sees.
std::shared_ptr<const PreambleData>
findPreamble(const clang::CompilerInvocation &Invocation,
             llvm::ArrayRef<std::string> Args, llvm::StringRef Text,
             llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> VFS,
             PreambleOrigin &From);

/// Whether \p A and \p B, as main files of \p Invocation, have the same
/// preamble (bounds and text).
bool samePreamble(const clang::CompilerInvocation &Invocation,
                  llvm::StringRef A, llvm::StringRef B);

/// Points \p Invocation at \p P (added to \p Memory, which must be part of
/// the parse's file system): the main file's first P.Size bytes are read
/// from the precompiled header.
void usePreamble(clang::CompilerInvocation &Invocation,
                 llvm::vfs::InMemoryFileSystem &Memory, const PreambleData &P);

/// Whether \p Ctx may read declarations of the user's code from a
/// precompiled preamble: false when it has none, or only one whose
/// declarations are all in system headers (PreambleData::UserCode).
bool mayReadUserCodeFromPreamble(const clang::ASTContext &Ctx);

/// Forgets \p P in this process and on disk (a parse with it failed).
void dropPreamble(const PreambleData &P);

/// Forgets the preambles kept in this process (those on disk stay): what a
/// new process would see.
void forgetPreamblesInMemory();

/// The directory preambles are stored in: $OPTIML_PREAMBLE_DIR, else
/// clang-optiml/preambles under $XDG_CACHE_HOME or the user's cache
/// directory. Empty when $OPTIML_PREAMBLE_DIR is "off" (no preambles).
std::string preambleDirectory();

} // namespace optiml

#endif
