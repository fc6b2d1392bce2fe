//===- DeviceCode.cpp - cuobjdump as a process, its output normalized -----===//

#include "optiml/Eval/DeviceCode.h"
#include "optiml/Support/Process.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <set>

using namespace llvm;

namespace optiml {

std::string findCuobjdump(StringRef NvccPath) {
  if (!NvccPath.empty()) {
    SmallString<256> P(sys::path::parent_path(NvccPath));
    sys::path::append(P, "cuobjdump");
    if (sys::fs::can_execute(P))
      return std::string(P);
  }
  return findProgram("cuobjdump");
}

/// The name of the section whose dump \p Line starts (".text.k",
/// ".section .symtab", ".section .rela.k\tRELA"), one of \p Names (the
/// section table's); empty for any other line. A dumped section's own text
/// (the PTX of .nv_debug_ptx_txt: ".version 9.0", ".section\t.debug_str")
/// starts no section.
static StringRef sectionStart(StringRef Line,
                              const std::set<std::string> &Names) {
  if (!Line.starts_with("."))
    return "";
  Line.consume_front(".section ");
  StringRef Name =
      Line.take_until([](char C) { return C == ' ' || C == '\t'; });
  return Names.count(Name.str()) ? Name : StringRef();
}

std::string normalizeDeviceDump(StringRef Dump) {
  std::string Out;
  SmallVector<StringRef, 0> Lines;
  Dump.split(Lines, '\n');
  std::set<std::string> Names; // the current ELF's sections
  bool InTable = false, SkipSection = false, SkipAttribute = false;
  for (StringRef Raw : Lines) {
    StringRef Line = Raw.rtrim(" \t\r");
    StringRef Trimmed = Line.ltrim(" \t");
    if (Trimmed.empty()) {
      InTable = SkipAttribute = false;
      continue;
    }
    // The section table: offsets and sizes move with the notes' lengths;
    // only the names are kept, to find where each section's dump starts.
    if (InTable) {
      if (!Trimmed.starts_with("Index "))
        Names.insert(Trimmed.rsplit(' ').second.str());
      continue;
    }
    bool Entry = Line.starts_with("Fatbin ") || Line.contains("-bit ELF:");
    if (Entry)
      Names.clear();
    StringRef Name = sectionStart(Line, Names);
    if (Entry || !Name.empty()) {
      // Notes name the tools and their command lines, debug sections the
      // source files; neither is code.
      SkipSection = Name.starts_with(".note") || Name.contains("debug");
      SkipAttribute = false;
    }
    if (SkipSection)
      continue;
    if (Line == "Sections:") {
      InTable = true;
      continue;
    }
    // The fatbin's header: the source's name, ptxas's options.
    if (Trimmed.starts_with("identifier =") ||
        Trimmed.starts_with("ptxasOptions ="))
      continue;
    // Attribute ordinals shift when an attribute is left out.
    if (Trimmed.starts_with("<0x") && Trimmed.ends_with(">")) {
      SkipAttribute = false;
      continue;
    }
    if (Trimmed.starts_with("Attribute:")) {
      StringRef Attr = Trimmed.drop_front(strlen("Attribute:")).trim();
      SkipAttribute =
          Attr == "EIATTR_MAX_THREADS" || Attr == "EIATTR_MAXREG_COUNT";
    }
    if (SkipAttribute)
      continue;
    Out += Trimmed;
    Out += '\n';
  }
  return Out;
}

Expected<std::string> deviceCode(StringRef Cuobjdump, StringRef Binary,
                                 double TimeoutSeconds) {
  ProcessOptions PO;
  PO.Args = {Cuobjdump.str(), "-elf", Binary.str()};
  PO.TimeoutSeconds = TimeoutSeconds;
  PO.OutputLimit = size_t(256) << 20;
  auto P = runProcess(PO);
  if (!P)
    return P.takeError();
  if (!P->succeeded())
    return createStringError(inconvertibleErrorCode(), "'%s -elf %s' %s: %s",
                             Cuobjdump.str().c_str(), Binary.str().c_str(),
                             P->describe().c_str(),
                             lastLines(P->Stderr, 3).c_str());
  if (P->stdoutTruncated())
    return createStringError(inconvertibleErrorCode(),
                             "the device code of '%s' is too large to compare",
                             Binary.str().c_str());
  std::string Code = normalizeDeviceDump(P->Stdout);
  if (StringRef(Code).find("\n.text.") == StringRef::npos &&
      !StringRef(Code).starts_with(".text."))
    return createStringError(inconvertibleErrorCode(),
                             "'%s' holds no device code that cuobjdump shows",
                             Binary.str().c_str());
  return Code;
}

} // namespace optiml
