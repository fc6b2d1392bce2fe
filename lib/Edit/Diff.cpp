//===- Diff.cpp - Unified diffs -------------------------------------------===//
//
// Line-based: common prefix and suffix are trimmed first (edits are local),
// then the middle is aligned by a longest-common-subsequence table. A middle
// too large for the table is shown as one replaced block.
//
//===----------------------------------------------------------------------===//

#include "optiml/Edit/Diff.h"
#include "clang/Tooling/Core/Diagnostic.h"
#include "clang/Tooling/DiagnosticsYaml.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <vector>

using namespace llvm;

namespace optiml {

static std::vector<StringRef> splitLines(StringRef Text) {
  std::vector<StringRef> Lines;
  while (!Text.empty()) {
    size_t NL = Text.find('\n');
    if (NL == StringRef::npos) {
      Lines.push_back(Text);
      break;
    }
    Lines.push_back(Text.substr(0, NL + 1));
    Text = Text.substr(NL + 1);
  }
  return Lines;
}

namespace {
struct Op {
  char Tag; // ' ', '-', '+'
  StringRef Line;
};
} // namespace

static std::vector<Op> diffLines(const std::vector<StringRef> &A,
                                 const std::vector<StringRef> &B) {
  size_t Pre = 0;
  while (Pre < A.size() && Pre < B.size() && A[Pre] == B[Pre])
    ++Pre;
  size_t Suf = 0;
  while (Suf < A.size() - Pre && Suf < B.size() - Pre &&
         A[A.size() - 1 - Suf] == B[B.size() - 1 - Suf])
    ++Suf;
  std::vector<Op> Ops;
  for (size_t I = 0; I < Pre; ++I)
    Ops.push_back({' ', A[I]});
  size_t N = A.size() - Pre - Suf, M = B.size() - Pre - Suf;
  if (N * M > 16u * 1024 * 1024) {
    for (size_t I = 0; I < N; ++I)
      Ops.push_back({'-', A[Pre + I]});
    for (size_t J = 0; J < M; ++J)
      Ops.push_back({'+', B[Pre + J]});
  } else {
    // L[i][j]: LCS length of A[Pre+i..] and B[Pre+j..].
    std::vector<uint32_t> L((N + 1) * (M + 1), 0);
    auto At = [&](size_t I, size_t J) -> uint32_t & {
      return L[I * (M + 1) + J];
    };
    for (size_t I = N; I-- > 0;)
      for (size_t J = M; J-- > 0;)
        At(I, J) = A[Pre + I] == B[Pre + J]
                       ? At(I + 1, J + 1) + 1
                       : std::max(At(I + 1, J), At(I, J + 1));
    size_t I = 0, J = 0;
    while (I < N || J < M) {
      if (I < N && J < M && A[Pre + I] == B[Pre + J]) {
        Ops.push_back({' ', A[Pre + I]});
        ++I, ++J;
      } else if (J < M && (I == N || At(I, J + 1) >= At(I + 1, J))) {
        Ops.push_back({'+', B[Pre + J]});
        ++J;
      } else {
        Ops.push_back({'-', A[Pre + I]});
        ++I;
      }
    }
    // Show deletions before insertions inside each changed block.
    for (size_t K = 0; K < Ops.size();) {
      if (Ops[K].Tag == ' ') {
        ++K;
        continue;
      }
      size_t End = K;
      while (End < Ops.size() && Ops[End].Tag != ' ')
        ++End;
      // A stable partition by hand (std::stable_partition warns, see
      // Support/Sort.h): deletions first, each side in its order.
      std::vector<Op> Block;
      Block.reserve(End - K);
      for (size_t I = K; I < End; ++I)
        if (Ops[I].Tag == '-')
          Block.push_back(Ops[I]);
      for (size_t I = K; I < End; ++I)
        if (Ops[I].Tag != '-')
          Block.push_back(Ops[I]);
      std::move(Block.begin(), Block.end(), Ops.begin() + K);
      K = End;
    }
  }
  for (size_t I = A.size() - Suf; I < A.size(); ++I)
    Ops.push_back({' ', A[I]});
  return Ops;
}

std::string unifiedDiff(StringRef Old, StringRef New, StringRef OldName,
                        StringRef NewName, unsigned Context) {
  if (Old == New)
    return "";
  std::vector<StringRef> A = splitLines(Old), B = splitLines(New);
  std::vector<Op> Ops = diffLines(A, B);
  std::string Out;
  raw_string_ostream OS(Out);
  OS << "--- " << OldName << "\n+++ " << NewName << "\n";
  size_t K = 0;
  while (K < Ops.size()) {
    // Find the next change.
    size_t First = K;
    while (First < Ops.size() && Ops[First].Tag == ' ')
      ++First;
    if (First == Ops.size())
      break;
    size_t Start = First >= Context ? First - Context : 0;
    Start = std::max(Start, K == 0 ? size_t(0) : K);
    // Extend while changes are within 2*Context lines of each other.
    size_t End = First;
    while (true) {
      while (End < Ops.size() && Ops[End].Tag != ' ')
        ++End;
      size_t Next = End;
      while (Next < Ops.size() && Ops[Next].Tag == ' ')
        ++Next;
      if (Next < Ops.size() && Next - End <= 2 * Context) {
        End = Next;
        continue;
      }
      End = std::min(Ops.size(), End + Context);
      break;
    }
    // Line numbers of Start in both files.
    size_t OldLine = 1, NewLine = 1;
    for (size_t I = 0; I < Start; ++I) {
      OldLine += Ops[I].Tag != '+';
      NewLine += Ops[I].Tag != '-';
    }
    size_t OldCount = 0, NewCount = 0;
    for (size_t I = Start; I < End; ++I) {
      OldCount += Ops[I].Tag != '+';
      NewCount += Ops[I].Tag != '-';
    }
    OS << "@@ -" << (OldCount ? OldLine : OldLine - 1);
    if (OldCount != 1)
      OS << "," << OldCount;
    OS << " +" << (NewCount ? NewLine : NewLine - 1);
    if (NewCount != 1)
      OS << "," << NewCount;
    OS << " @@\n";
    for (size_t I = Start; I < End; ++I) {
      OS << Ops[I].Tag << Ops[I].Line;
      if (!Ops[I].Line.ends_with("\n"))
        OS << "\n\\ No newline at end of file\n";
    }
    K = End;
  }
  return Out;
}

std::vector<TextChange> lineChanges(StringRef Old, StringRef New) {
  std::vector<TextChange> Out;
  if (Old == New)
    return Out;
  std::vector<Op> Ops = diffLines(splitLines(Old), splitLines(New));
  size_t Offset = 0;
  for (size_t K = 0; K < Ops.size();) {
    if (Ops[K].Tag == ' ') {
      Offset += Ops[K++].Line.size();
      continue;
    }
    TextChange C;
    C.Offset = Offset;
    for (; K < Ops.size() && Ops[K].Tag != ' '; ++K) {
      if (Ops[K].Tag == '-')
        C.Length += Ops[K].Line.size();
      else
        C.Text += Ops[K].Line;
    }
    Offset += C.Length;
    Out.push_back(std::move(C));
  }
  return Out;
}

Expected<std::string> fixesYAML(StringRef FilePath, StringRef Old,
                                StringRef New, StringRef DiagnosticName,
                                StringRef Message) {
  clang::tooling::Replacements Repls;
  for (const TextChange &C : lineChanges(Old, New))
    if (Error E = Repls.add(
            clang::tooling::Replacement(FilePath, C.Offset, C.Length, C.Text)))
      return std::move(E);
  clang::tooling::TranslationUnitDiagnostics TUD;
  TUD.MainSourceFile = FilePath.str();
  clang::tooling::DiagnosticMessage Msg;
  Msg.Message = Message.str();
  Msg.FilePath = FilePath.str();
  Msg.FileOffset = Repls.empty() ? 0 : Repls.begin()->getOffset();
  Msg.Fix[FilePath] = Repls;
  TUD.Diagnostics.emplace_back(DiagnosticName.str(), Msg,
                               SmallVector<clang::tooling::DiagnosticMessage>{},
                               clang::tooling::Diagnostic::Warning,
                               /*BuildDirectory=*/"");
  std::string Out;
  {
    raw_string_ostream OS(Out);
    yaml::Output YAML(OS);
    YAML << TUD;
  }

  // Read it back as clang-apply-replacements will: the text must survive
  // YAML's quoting (control characters, bytes that are not UTF-8).
  clang::tooling::TranslationUnitDiagnostics Back;
  yaml::Input In(Out);
  In >> Back;
  auto Bad = [&](StringRef Why) {
    return createStringError(inconvertibleErrorCode(),
                             "cannot export the fixes for '%s' as YAML: %s",
                             FilePath.str().c_str(), Why.str().c_str());
  };
  if (In.error() || Back.Diagnostics.size() != 1)
    return Bad("the document does not read back");
  const auto &Fix = Back.Diagnostics.front().Message.Fix;
  auto It = Fix.find(FilePath);
  clang::tooling::Replacements BackRepls;
  if (It != Fix.end())
    BackRepls = It->second;
  auto Applied = clang::tooling::applyAllReplacements(Old, BackRepls);
  if (!Applied)
    return Bad(toString(Applied.takeError()));
  if (*Applied != New)
    return Bad("the replacement text does not survive YAML quoting");
  return Out;
}

} // namespace optiml
