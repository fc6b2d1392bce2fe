//===- RestructureTesting.h - File-based tests of restructuring edits -*- C++
//-*-===//
//
// The restructuring transforms are tested on whole input files under
// test/Inputs/edit/restructure/: each `<case>.cu` is parsed against the
// hermetic mock header, the edit is applied, and the result must equal
// `<case>.expected.cu` byte for byte and re-parse without errors. The lit
// suite (test/edit/restructure-*.cu) compiles the same expected files with
// nvcc, so every output the tests accept also builds for sm_90.
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
#include <string>

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

/// A parsed file with its model, ready for prepare()/apply().
struct Input {
  std::string Code;
  std::string FileName;
  ParsedTU TU;
  KernelModel Model;
  std::unique_ptr<EditContext> Ctx;

  Input(std::string Path, const ParseConfig &Config)
      : Code(readFile(Path)), FileName(std::move(Path)) {
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

/// The transformed text of \p Path, or "error: <message>" when apply()
/// refused. Fails the test when the result does not parse.
inline std::string applyToFile(const Transform &T, const std::string &Path,
                               const Edit &E,
                               const ParseConfig &Config = hermeticConfig()) {
  Input In(Path, Config);
  if (!In.Ctx)
    return "error: no input";
  auto R = T.apply(*In.Ctx, E);
  if (!R)
    return "error: " + llvm::toString(R.takeError());
  auto Out = clang::tooling::applyAllReplacements(In.Code, *R);
  if (!Out)
    return "error: " + llvm::toString(Out.takeError());
  EXPECT_EQ(parseErrors(*Out, Path, Config), "") << *Out;
  return *Out;
}

/// Applies \p E to `<Case>.cu` and compares with `<Case>.expected.cu`.
inline void expectRewrite(const Transform &T, const std::string &Case,
                          const Edit &E) {
  std::string Got = applyToFile(T, caseDir() + "/" + Case + ".cu", E);
  std::string WantPath = caseDir() + "/" + Case + ".expected.cu";
  // Regenerating expected files is a deliberate act, reviewed in the diff.
  if (getenv("OPTIML_UPDATE_EXPECTED")) {
    std::error_code EC;
    llvm::raw_fd_ostream OS(WantPath, EC);
    OS << Got;
  }
  std::string Want = readFile(WantPath);
  EXPECT_EQ(Got, Want) << "case " << Case;
}

/// prepare() on `<Case>.cu`.
inline Applicability prepareOn(const Transform &T, const std::string &Case,
                               llvm::StringRef Target) {
  Input In(caseDir() + "/" + Case + ".cu", hermeticConfig());
  if (!In.Ctx)
    return {};
  return T.prepare(*In.Ctx, Target);
}

/// apply() must refuse with a message containing \p Reason.
inline void expectRefusal(const Transform &T, const std::string &Case,
                          const Edit &E, llvm::StringRef Reason) {
  Input In(caseDir() + "/" + Case + ".cu", hermeticConfig());
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
