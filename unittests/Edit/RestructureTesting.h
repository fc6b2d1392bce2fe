//===- RestructureTesting.h - File-based tests of restructuring edits -*- C++
//-*-===//
//
// The restructuring transforms are tested on whole input files kept in
// test/Inputs/edit/restructure/<family>.cases, one file per transform (the
// family is the case name up to its first '-': atomics, tiling, transpose,
// warp), in split-file's format. Each `<case>.cu` part is parsed against the
// hermetic mock header, the edit is applied, and the result must equal the
// `<case>.expected.cu` part byte for byte and re-parse without errors. The
// lit suite (test/edit/restructure-cases.test) splits the same files and
// compiles the expected outputs with nvcc, so every output the tests accept
// also builds for sm_90.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_UNITTESTS_EDIT_RESTRUCTURETESTING_H
#define OPTIML_UNITTESTS_EDIT_RESTRUCTURETESTING_H

#include "CatalogInternal.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "optiml/Frontend/Parse.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#ifndef OPTIML_TEST_INPUTS
#define OPTIML_TEST_INPUTS OPTIML_TEST_INPUTS_DIR
#endif

namespace optiml {
namespace restructure_testing {

inline std::string inputsDir() { return OPTIML_TEST_INPUTS; }
inline std::string caseDir() { return inputsDir() + "/edit/restructure"; }
/// The source tree (test/Inputs is two levels below it).
inline std::string sourceDir() { return inputsDir() + "/../.."; }

inline ParseConfig makeConfig(bool Hermetic) {
  ParseConfig C;
  ToolchainOptions O;
  O.ResourceDir = OPTIML_TEST_RESOURCE_DIR;
  auto T = discoverToolchain(O);
  if (!T) {
    llvm::consumeError(T.takeError());
    C.Tools.CudaPath = "/usr/local/cuda";
    C.Tools.GpuArch = "sm_90";
    C.Tools.ResourceDir = OPTIML_TEST_RESOURCE_DIR;
  } else {
    C.Tools = *T;
  }
  if (Hermetic)
    C.ExtraArgs = {"-nocudainc", "-nocudalib", "-I" + inputsDir()};
  return C;
}

inline const ParseConfig &hermeticConfig() {
  static ParseConfig C = makeConfig(true);
  return C;
}
/// The real CUDA headers (for the benchmark programs).
inline const ParseConfig &sdkConfig() {
  static ParseConfig C = makeConfig(false);
  return C;
}

inline std::string readFile(const std::string &Path) {
  auto B = llvm::MemoryBuffer::getFile(Path);
  if (!B) {
    ADD_FAILURE() << "cannot read " << Path;
    return "";
  }
  return (*B)->getBuffer().str();
}

/// The grouped file that holds the parts of \p Case: `<family>.cases`.
inline std::string casesFile(llvm::StringRef Case) {
  return caseDir() + "/" + Case.split('-').first.str() + ".cases";
}

/// One part of a split-file input: its name and the offsets of its text.
struct CasePart {
  std::string Name;
  size_t Begin = 0, End = 0;
};

/// The parts of \p Text by split-file's rules: a line that is `//--- NAME`,
/// or any one character followed by `--- NAME`, starts the part NAME; the
/// part is the lines after it up to the next such line or the end of the
/// file (no blank lines are added: split-file's default). Text before the
/// first marker belongs to no part.
inline std::vector<CasePart> splitParts(llvm::StringRef Text) {
  std::vector<CasePart> Parts;
  size_t Pos = 0;
  while (Pos < Text.size()) {
    size_t EOL = Text.find('\n', Pos);
    size_t Next = EOL == llvm::StringRef::npos ? Text.size() : EOL + 1;
    llvm::StringRef Line = Text.slice(Pos, Next).rtrim("\r\n");
    size_t MarkerLen = Line.starts_with("//") ? 6 : 5;
    if (Line.size() >= MarkerLen &&
        Line.substr(MarkerLen - 4).starts_with("--- ")) {
      if (!Parts.empty())
        Parts.back().End = Pos;
      Parts.push_back({Line.substr(MarkerLen).str(), Next, Text.size()});
    }
    Pos = Next;
  }
  return Parts;
}

/// The part \p Name of \p Parts, or nullptr (a test failure when the name
/// occurs twice).
inline const CasePart *findPart(const std::vector<CasePart> &Parts,
                                llvm::StringRef Name) {
  const CasePart *Found = nullptr;
  for (const CasePart &P : Parts)
    if (P.Name == Name) {
      if (Found)
        ADD_FAILURE() << "part '" << Name.str() << "' occurs more than once";
      Found = &P;
    }
  return Found;
}

/// The text of the part \p Name (`<case>.cu` or `<case>.expected.cu`) of
/// its family's .cases file; a test failure when there is none.
inline std::string readCase(const std::string &Name) {
  std::string File = casesFile(Name);
  std::string Text = readFile(File);
  const CasePart *P = findPart(splitParts(Text), Name);
  if (!P) {
    ADD_FAILURE() << "no part '" << Name << "' in " << File;
    return "";
  }
  return Text.substr(P->Begin, P->End - P->Begin);
}

/// Replaces the text of the part \p Name in its .cases file with \p Text
/// (a new part is added after `<case>.cu`, or at the end, when there is none).
inline void writeCase(const std::string &Name, const std::string &Text) {
  if (!Text.empty() && Text.back() != '\n') {
    ADD_FAILURE() << Name << " does not end in a newline, which a part of a "
                  << ".cases file must (the next marker starts a line)";
    return;
  }
  std::string File = casesFile(Name);
  std::string Old = readFile(File);
  std::vector<CasePart> Parts = splitParts(Old);
  std::string New;
  if (const CasePart *P = findPart(Parts, Name)) {
    New = Old.substr(0, P->Begin) + Text + Old.substr(P->End);
  } else {
    llvm::StringRef Case = llvm::StringRef(Name).rsplit(".expected.cu").first;
    const CasePart *Before = findPart(Parts, (Case + ".cu").str());
    size_t At = Before ? Before->End : Old.size();
    std::string Head = Old.substr(0, At);
    if (!Head.empty() && Head.back() != '\n')
      Head += '\n';
    New = Head + "//--- " + Name + "\n" + Text + Old.substr(At);
  }
  std::error_code EC;
  llvm::raw_fd_ostream OS(File, EC);
  if (EC)
    ADD_FAILURE() << "cannot write " << File << ": " << EC.message();
  OS << New;
}

/// The name a case is parsed under: `<caseDir>/<case>.cu`, where the file
/// used to be (it is not on disk; the text comes from the .cases file).
inline std::string casePath(const std::string &Case) {
  return caseDir() + "/" + Case + ".cu";
}

/// A parsed file with its model, ready for prepare()/apply().
struct Input {
  std::string Code;
  std::string FileName;
  ParsedTU TU;
  KernelModel Model;
  std::unique_ptr<EditContext> Ctx;

  /// The file at \p Path.
  Input(const std::string &Path, const ParseConfig &Config)
      : Input(readFile(Path), Path, Config) {}

  /// \p Text under the name \p Name.
  Input(std::string Text, std::string Name, const ParseConfig &Config)
      : Code(std::move(Text)), FileName(std::move(Name)) {
    auto P = parseCuda(Code, FileName, Config, CudaSide::Host);
    if (!P) {
      ADD_FAILURE() << llvm::toString(P.takeError());
      return;
    }
    TU = std::move(*P);
    for (const Diagnostic &D : TU.Diags)
      if (D.isError())
        ADD_FAILURE() << "input does not parse: " << D.str();
    Model = buildKernelModel(TU.AST->getASTContext());
    Ctx.reset(new EditContext{FileName, Code, Model, TU.AST->getASTContext(),
                              Config});
  }
};

inline std::string parseErrors(const std::string &Code,
                               const std::string &FileName,
                               const ParseConfig &Config) {
  std::string Out;
  for (CudaSide Side : {CudaSide::Host, CudaSide::Device}) {
    auto P = parseCuda(Code, FileName, Config, Side);
    if (!P)
      return llvm::toString(P.takeError());
    for (const Diagnostic &D : P->Diags)
      if (D.isError())
        Out += D.str() + "\n";
  }
  return Out;
}

inline Edit makeEdit(llvm::StringRef Kind, llvm::StringRef Target,
                     std::map<std::string, ParamValue> Params = {}) {
  Edit E;
  E.Kind = Kind.str();
  E.Target = Target.str();
  E.Params = std::move(Params);
  return E;
}

/// The transformed text of \p In, or "error: <message>" when apply()
/// refused. Fails the test when the result does not parse.
inline std::string applyTo(const Transform &T, Input &In, const Edit &E,
                           const ParseConfig &Config) {
  if (!In.Ctx)
    return "error: no input";
  auto R = T.apply(*In.Ctx, E);
  if (!R)
    return "error: " + llvm::toString(R.takeError());
  auto Out = clang::tooling::applyAllReplacements(In.Code, *R);
  if (!Out)
    return "error: " + llvm::toString(Out.takeError());
  EXPECT_EQ(parseErrors(*Out, In.FileName, Config), "") << *Out;
  return *Out;
}

/// The transformed text of the file at \p Path (see applyTo).
inline std::string applyToFile(const Transform &T, const std::string &Path,
                               const Edit &E,
                               const ParseConfig &Config = hermeticConfig()) {
  Input In(Path, Config);
  return applyTo(T, In, E, Config);
}

/// The part `<Case>.cu`, parsed against the mock header.
inline Input caseInput(const std::string &Case) {
  return Input(readCase(Case + ".cu"), casePath(Case), hermeticConfig());
}

/// Applies \p E to `<Case>.cu` and compares with `<Case>.expected.cu`.
inline void expectRewrite(const Transform &T, const std::string &Case,
                          const Edit &E) {
  Input In = caseInput(Case);
  std::string Got = applyTo(T, In, E, hermeticConfig());
  std::string WantName = Case + ".expected.cu";
  // Regenerating expected outputs is a deliberate act, reviewed in the diff:
  // the part is rewritten in place in the .cases file.
  if (getenv("OPTIML_UPDATE_EXPECTED"))
    writeCase(WantName, Got);
  std::string Want = readCase(WantName);
  EXPECT_EQ(Got, Want) << "case " << Case;
}

/// prepare() on `<Case>.cu`.
inline Applicability prepareOn(const Transform &T, const std::string &Case,
                               llvm::StringRef Target) {
  Input In = caseInput(Case);
  if (!In.Ctx)
    return {};
  return T.prepare(*In.Ctx, Target);
}

/// apply() must refuse with a message containing \p Reason.
inline void expectRefusal(const Transform &T, const std::string &Case,
                          const Edit &E, llvm::StringRef Reason) {
  Input In = caseInput(Case);
  ASSERT_TRUE(In.Ctx);
  auto R = T.apply(*In.Ctx, E);
  ASSERT_FALSE(bool(R)) << "case " << Case << " was rewritten";
  std::string Msg = rejectionReason(R.takeError());
  EXPECT_NE(Msg.find(Reason.str()), std::string::npos)
      << "case " << Case << ": " << Msg;
  // prepare() looks at the target only; bad parameters are apply()'s.
  if (!E.Params.empty())
    return;
  Applicability A = T.prepare(*In.Ctx, E.Target);
  EXPECT_FALSE(A.Applies) << "case " << Case;
  EXPECT_EQ(A.Reason, Msg);
}

} // namespace restructure_testing
} // namespace optiml

#endif
