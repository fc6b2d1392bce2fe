//===- PtxasInfo.cpp ------------------------------------------------------===//

#include "optiml/Eval/PtxasInfo.h"
#include "optiml/Eval/ProbeProtocol.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/Support/Regex.h"

using namespace llvm;

namespace optiml {

/// Strips the trailing "(params)" of a demangled function name, minding
/// parentheses inside template arguments.
static std::string stripParams(StringRef Demangled) {
  if (!Demangled.ends_with(")"))
    return Demangled.str();
  int Depth = 0;
  for (size_t I = Demangled.size(); I-- > 0;) {
    char C = Demangled[I];
    if (C == ')')
      ++Depth;
    else if (C == '(' && --Depth == 0)
      return Demangled.take_front(I).rtrim().str();
  }
  return Demangled.str();
}

std::string kernelNameWithoutParams(StringRef Name) {
  Name = Name.trim();
  if (Name.starts_with("_Z")) {
    std::string D = demangle(Name);
    if (D != Name)
      return kernelBaseName(D); // also drops a template's return type
  }
  return stripParams(Name);
}

static bool resourceNameMatches(StringRef Name, StringRef Wanted) {
  Name = Name.trim();
  Wanted = Wanted.trim();
  if (Wanted.empty())
    return false;
  if (Name == Wanted)
    return true;
  // Template name without arguments.
  if (Name.starts_with(Wanted) &&
      Name.drop_front(Wanted.size()).starts_with("<"))
    return true;
  // Unqualified: compare with the last component of the (template) name.
  if (!Wanted.contains("::")) {
    StringRef Base = Name.take_until([](char C) { return C == '<'; });
    size_t Colon = Base.rfind("::");
    if (Colon != StringRef::npos) {
      StringRef Last = Name.drop_front(Colon + 2);
      return resourceNameMatches(Last, Wanted);
    }
  }
  return false;
}

std::vector<KernelResources> parsePtxasInfo(StringRef Log) {
  static const Regex Entry("Compiling entry function '([^']+)' for '([^']+)'");
  static const Regex Props("Function properties for ([^ \t]+)");
  static const Regex Frame("([0-9]+) bytes stack frame, ([0-9]+) bytes spill "
                           "stores, ([0-9]+) bytes spill loads");
  static const Regex Used("Used ([0-9]+) registers");
  static const Regex Barriers("used ([0-9]+) barriers");
  static const Regex Smem("([0-9]+) bytes smem");
  static const Regex Cmem("([0-9]+) bytes cmem\\[0\\]");

  std::vector<KernelResources> Out;
  // Index of the entry that the next "Used N registers" belongs to, and of
  // the entry whose "Function properties" header was seen last (-1: a
  // device function, whose properties are not kept).
  int Current = -1, PropsOf = -1;
  SmallVector<StringRef, 64> Lines;
  Log.split(Lines, '\n');
  for (StringRef L : Lines) {
    SmallVector<StringRef, 4> M;
    if (Entry.match(L, &M)) {
      KernelResources K;
      K.Mangled = M[1].str();
      K.Name = kernelNameWithoutParams(K.Mangled);
      K.Arch = M[2].str();
      Out.push_back(std::move(K));
      Current = static_cast<int>(Out.size()) - 1;
      PropsOf = -1;
      continue;
    }
    if (Props.match(L, &M)) {
      PropsOf = -1;
      if (Current >= 0 && Out[Current].Mangled == M[1])
        PropsOf = Current;
      continue;
    }
    if (Frame.match(L, &M)) {
      if (PropsOf >= 0) {
        KernelResources &K = Out[PropsOf];
        M[1].getAsInteger(10, K.StackBytes);
        M[2].getAsInteger(10, K.SpillStoreBytes);
        M[3].getAsInteger(10, K.SpillLoadBytes);
      }
      PropsOf = -1;
      continue;
    }
    if (Current >= 0 && Used.match(L, &M)) {
      KernelResources &K = Out[Current];
      M[1].getAsInteger(10, K.Registers);
      if (Barriers.match(L, &M))
        M[1].getAsInteger(10, K.Barriers);
      if (Smem.match(L, &M))
        M[1].getAsInteger(10, K.SharedBytes);
      if (Cmem.match(L, &M))
        M[1].getAsInteger(10, K.ConstBytes);
    }
  }
  return Out;
}

std::vector<const KernelResources *>
findResources(ArrayRef<KernelResources> All, StringRef Kernel, StringRef Arch) {
  std::vector<const KernelResources *> Out;
  for (const KernelResources &K : All)
    if ((Arch.empty() || K.Arch == Arch) &&
        (resourceNameMatches(K.Name, Kernel) || K.Mangled == Kernel))
      Out.push_back(&K);
  return Out;
}

static bool looksLikeError(StringRef L) {
  return L.contains(": error") || L.contains("error:") ||
         L.contains("fatal error") || L.contains("undefined reference") ||
         L.contains("ptxas fatal") || L.starts_with("nvcc fatal") ||
         L.contains("error #") || L.contains("ld returned");
}

std::string summarizeCompileErrors(StringRef Log, unsigned MaxLines) {
  SmallVector<StringRef, 64> Lines;
  Log.split(Lines, '\n', -1, /*KeepEmpty=*/false);
  std::string Out;
  unsigned N = 0;
  for (StringRef L : Lines) {
    if (N == MaxLines)
      break;
    if (!looksLikeError(L))
      continue;
    Out += L.rtrim().str();
    Out += '\n';
    ++N;
  }
  if (N)
    return Out;
  // Nothing recognizable: the tail says most.
  for (size_t I = Lines.size() > MaxLines ? Lines.size() - MaxLines : 0;
       I < Lines.size(); ++I) {
    Out += Lines[I].rtrim().str();
    Out += '\n';
  }
  return Out;
}

} // namespace optiml
