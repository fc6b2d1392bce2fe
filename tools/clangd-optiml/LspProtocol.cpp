//===- LspProtocol.cpp - Framing and positions ----------------------------===//
//
// LSP messages framed with Content-Length headers, and positions as the
// protocol counts them (lines and UTF-16 code units, or UTF-8 if negotiated).
//
//===----------------------------------------------------------------------===//

#include "ClangdOptimlInternal.h"
#include "KernelActions.h"
#include "optiml/Edit/EditJSON.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

using namespace llvm;
using json = nlohmann::json;

namespace optiml {
namespace lsp {

namespace {

bool fill(ReadBuffer &B) {
  char Chunk[65536];
  while (true) {
    ssize_t R = ::read(B.Fd, Chunk, sizeof(Chunk));
    if (R < 0 && errno == EINTR)
      continue;
    if (R <= 0)
      return false;
    B.Data.erase(0, B.Pos);
    B.Pos = 0;
    B.Data.append(Chunk, size_t(R));
    return true;
  }
}

bool readAll(ReadBuffer &B, char *Buf, size_t N) {
  while (N) {
    if (B.Pos == B.Data.size() && !fill(B))
      return false;
    size_t Take = std::min(N, B.Data.size() - B.Pos);
    std::copy_n(B.Data.data() + B.Pos, Take, Buf);
    B.Pos += Take;
    Buf += Take;
    N -= Take;
  }
  return true;
}

} // namespace

bool writeAll(int Fd, StringRef S) {
  const char *P = S.data();
  size_t N = S.size();
  while (N) {
    ssize_t W = ::write(Fd, P, N);
    if (W < 0 && errno == EINTR)
      continue;
    if (W <= 0)
      return false;
    P += W;
    N -= size_t(W);
  }
  return true;
}

/// One message body (Content-Length framing); false at end of input.
bool readMessage(ReadBuffer &Fd, std::string &Body) {
  std::string Header;
  size_t Length = 0;
  bool HaveLength = false;
  while (true) {
    char C;
    if (!readAll(Fd, &C, 1))
      return false;
    Header += C;
    if (Header.size() > 64 * 1024)
      return false; // not LSP
    if (!StringRef(Header).ends_with("\r\n"))
      continue;
    StringRef Line = StringRef(Header).drop_back(2);
    if (Line.empty()) {
      if (HaveLength)
        break;
      Header.clear();
      continue;
    }
    if (Line.consume_front_insensitive("content-length:")) {
      HaveLength = !Line.trim().getAsInteger(10, Length);
    }
    Header.clear();
  }
  Body.resize(Length);
  return readAll(Fd, Body.data(), Length);
}

std::string frame(StringRef Body) {
  return "Content-Length: " + std::to_string(Body.size()) + "\r\n\r\n" +
         Body.str();
}

//===----------------------------------------------------------------------===//
// Positions (LSP lines and UTF-16 code units, or UTF-8 if negotiated)
//===----------------------------------------------------------------------===//

bool Utf8Positions = false;

size_t unitsOf(StringRef LineText) {
  if (Utf8Positions)
    return LineText.size();
  size_t Units = 0;
  for (size_t I = 0; I < LineText.size(); ++I) {
    unsigned char C = LineText[I];
    if ((C & 0xC0) == 0x80)
      continue; // continuation byte
    Units += (C >= 0xF0) ? 2 : 1;
  }
  return Units;
}

size_t offsetOf(StringRef Text, const json &Pos) {
  int64_t Line = Pos.value("line", 0), Char = Pos.value("character", 0);
  size_t Off = 0;
  for (int64_t L = 0; L < Line; ++L) {
    size_t NL = Text.find('\n', Off);
    if (NL == StringRef::npos)
      return Text.size();
    Off = NL + 1;
  }
  size_t End = Text.find('\n', Off);
  if (End == StringRef::npos)
    End = Text.size();
  size_t Units = 0, I = Off;
  while (I < End && Units < size_t(std::max<int64_t>(Char, 0))) {
    unsigned char C = Text[I];
    size_t Len = C < 0x80    ? 1
                 : C >= 0xF0 ? 4
                 : C >= 0xE0 ? 3
                 : C >= 0xC0 ? 2
                             : 1;
    Units += (!Utf8Positions && Len == 4) ? 2 : Utf8Positions ? Len : 1;
    I += Len;
  }
  return std::min(I, End);
}

json positionOf(StringRef Text, size_t Offset) {
  Offset = std::min(Offset, Text.size());
  StringRef Before = Text.take_front(Offset);
  size_t LineStart = Before.rfind('\n');
  LineStart = LineStart == StringRef::npos ? 0 : LineStart + 1;
  return {{"line", Before.count('\n')},
          {"character", unitsOf(Before.drop_front(LineStart))}};
}

json rangeOf(StringRef Text, size_t Begin, size_t End) {
  return {{"start", positionOf(Text, Begin)}, {"end", positionOf(Text, End)}};
}

std::string pathOfUri(StringRef Uri) {
  if (!Uri.consume_front("file://"))
    return "";
  std::string Out;
  for (size_t I = 0; I < Uri.size(); ++I) {
    if (Uri[I] == '%' && I + 2 < Uri.size()) {
      unsigned V;
      if (!Uri.substr(I + 1, 2).getAsInteger(16, V)) {
        Out += char(V);
        I += 2;
        continue;
      }
    }
    Out += Uri[I];
  }
  return Out;
}

} // namespace lsp
} // namespace optiml
